#!/usr/bin/python3
"""Checks that plot_sweep.py draws a PNG for a sweep folder with numerics and for one of timing-only runs,
marks diverged runs, computes mean and sample std as their closed forms, and rejects a folder that is not a
sweep."""
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_sweep  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
METRICS = "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,nonfinite\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class PlotSweepTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "sweep")

    def tearDown(self):
        self.tmp.cleanup()

    def make_sweep(self, timing_only=False):
        vary = [{"key": "fabric.profile", "values": ["a", "b"], "flag": "--vary"},
                {"key": "run.seed", "values": ["1", "2"], "flag": "--seeds"}]
        write(os.path.join(self.dir, "sweep.json"), json.dumps({"format": "dtsim-sweep-1", "scenario": "s.ini",
                                                                "sets": [], "vary": vary}))
        header = "run,fabric.profile,run.seed,status,"
        header += "step_s,exposed_communication_s_per_step,cost_per_unit_low,cost_per_unit_high\n" if timing_only \
            else "final_test_accuracy,simulated_time_s,cost_low,cost_mid,cost_high\n"
        rows = []
        for fabric, scale in (("a", 1.0), ("b", 30.0)):
            for seed in ("1", "2"):
                run = f"fabric.profile={fabric},run.seed={seed}"
                status = "diverged" if (fabric, seed) == ("b", "2") else "completed"
                if timing_only:
                    rows.append(f"\"{run}\",{fabric},{seed},{status},{0.1 * scale},0.01,1,2")
                else:
                    rows.append(f"\"{run}\",{fabric},{seed},{status},0.8,{scale},1,2,3")
                    loss = "1e6" if status == "diverged" else "0.5"
                    write(os.path.join(self.dir, run, "metrics.csv"),
                          METRICS + f"0,0,0,0.1,,2.3,0.1,0,\n10,1,{scale},0.1,0.6,{loss},0.8,{int(1e9 * scale)},\n")
                    write(os.path.join(self.dir, run, "summary.json"), '{"cost": {"currency": "CNY"}}')
        write(os.path.join(self.dir, "results.csv"), header + "\n".join(rows) + "\n")

    def test_draws_a_sweep_with_numerics(self):
        self.make_sweep()
        self.assertEqual(plot_sweep.main([self.dir]), 0)
        path = os.path.join(self.dir, "sweep.png")
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), PNG)
        self.assertGreater(os.path.getsize(path), 20000)

    def test_draws_a_sweep_of_timing_only_runs(self):
        self.make_sweep(timing_only=True)
        out = os.path.join(self.tmp.name, "t.png")
        self.assertEqual(plot_sweep.main([self.dir, "-o", out]), 0)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), PNG)

    def test_groups_ignore_the_seed(self):
        self.make_sweep()
        manifest, groups = plot_sweep.load_sweep(self.dir)
        self.assertEqual([label for label, _ in groups], ["profile=a", "profile=b [1 diverged]"])
        self.assertEqual([len(rows) for _, rows in groups], [2, 2])

    def test_an_interrupted_run_is_left_out_and_its_group_says_so(self):
        self.make_sweep()
        path = os.path.join(self.dir, "results.csv")
        with open(path) as f:
            text = f.read()
        # Seed 2 of fabric a was interrupted: its partial numbers (rerun when the sweep resumes) are not a result.
        text = text.replace('"fabric.profile=a,run.seed=2",a,2,completed,0.8', '"fabric.profile=a,run.seed=2",a,2,interrupted,0.1')
        with open(path, "w") as f:
            f.write(text)
        _, groups = plot_sweep.load_sweep(self.dir)
        self.assertEqual([label for label, _ in groups], ["profile=a [1 interrupted]", "profile=b [1 diverged]"])
        self.assertEqual([r["run"] for r in groups[0][1]], ["fabric.profile=a,run.seed=1"])
        self.assertEqual(len(groups[1][1]), 2, "a diverged run is a result")

    def test_costs_in_different_currencies_are_labelled_each(self):
        labels, axis = plot_sweep.cost_axis(["a", "b"], ["CNY", "USD"])
        self.assertEqual(labels, ["a (CNY)", "b (USD)"])
        self.assertEqual(axis, "each bar in its own currency")
        self.assertEqual(plot_sweep.cost_axis(["a", "b"], ["CNY", None]), (["a", "b"], "CNY"))

    def test_an_unwritable_output_is_one_line(self):
        self.make_sweep()
        self.assertEqual(plot_sweep.main([self.dir, "-o", os.path.join(self.tmp.name, "absent", "x.png")]), 2)

    def test_mean_and_sample_std(self):
        mean, std = plot_sweep.mean_std([1.0, 2.0, 4.0])
        self.assertAlmostEqual(mean, 7.0 / 3.0, places=14)
        self.assertAlmostEqual(std, math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2), places=14)
        self.assertEqual(plot_sweep.mean_std([5.0]), (5.0, 0.0))
        self.assertEqual(plot_sweep.mean_std([float("nan"), 3.0]), (3.0, 0.0))

    def test_not_a_sweep_is_an_error(self):
        out = os.path.join(self.tmp.name, "p.png")
        self.assertEqual(plot_sweep.main([os.path.join(self.tmp.name, "absent"), "-o", out]), 2)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
