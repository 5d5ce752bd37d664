#!/usr/bin/python3
"""Checks round_summary.py's statistics against values worked out by hand, and its errors on bad input."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round_summary  # noqa: E402

HEADER = "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,nonfinite\n"


def write_run(folder, accuracies, name="metrics.csv"):
    """Round 0 at 10 %, then one row per round with the given accuracies (fractions)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(HEADER)
        f.write("0,0,0,0.01,,2.3,0.1,0,\n")
        for i, a in enumerate(accuracies, start=1):
            f.write(f"{i},{i},{i * 0.1},0.01,0.5,0.9,{a},{i * 1000},\n")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = round_summary.main(argv)
    return rc, out.getvalue(), err.getvalue()


class RoundSummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.a = os.path.join(self.tmp.name, "a")
        self.b = os.path.join(self.tmp.name, "b")
        # a: 50, 70, 60, 80 %; b: 40, 60, 90, 70 %.
        write_run(self.a, [0.5, 0.7, 0.6, 0.8])
        write_run(self.b, [0.4, 0.6, 0.9, 0.7])

    def tearDown(self):
        self.tmp.cleanup()

    def test_one_run_by_hand(self):
        from plot_metrics import load_run
        s = round_summary.summarise(load_run(self.a)[1], last=2)
        self.assertEqual(s["evaluations"], 4)  # round 0 is not counted
        self.assertAlmostEqual(s["final"], 80.0)
        self.assertAlmostEqual(s["window_mean"], 70.0)  # (60 + 80) / 2
        self.assertAlmostEqual(s["best"], 80.0)
        self.assertEqual(s["best_at"], 4)
        # Changes 70 -> 60 -> 80 inside the window and the one before it: 10 and 20.
        self.assertAlmostEqual(s["median_change"], 15.0)
        self.assertAlmostEqual(s["largest_change"], 20.0)

    def test_a_window_longer_than_the_run_takes_every_round(self):
        from plot_metrics import load_run
        s = round_summary.summarise(load_run(self.b)[1], last=10)
        self.assertAlmostEqual(s["window_mean"], 65.0)
        self.assertAlmostEqual(s["largest_change"], 30.0)

    def test_mean_and_sample_sd_over_runs(self):
        rc, out, _ = run([self.a, self.b, "--last", "2"])
        self.assertEqual(rc, 0)
        last = out.strip().splitlines()[-1]
        # Finals 80 and 70: mean 75, sample sd 7.07; windows 70 and 80: 75, 7.07; bests 80 and 90: 85, 7.07.
        self.assertIn("75.00 ± 7.07 %", last)
        self.assertIn("85.00 ± 7.07 %", last)
        self.assertIn("over 2", last)

    def test_a_partial_run_is_read_and_labelled(self):
        c = os.path.join(self.tmp.name, "c")
        write_run(c, [0.3, 0.35], name="metrics.partial.csv")
        with open(os.path.join(c, "summary.json"), "w") as f:
            f.write('{"status": "interrupted", "scenario": {"run": {"name": "c"}}}')
        rc, out, _ = run([c])
        self.assertEqual(rc, 0)
        self.assertIn("c (interrupted)", out)

    def test_bad_input_is_one_line_and_exit_2(self):
        rc, out, err = run([os.path.join(self.tmp.name, "absent")])
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("absent", err)
        rc, _, err = run([self.a, "--last", "0"])
        self.assertEqual(rc, 2)
        self.assertIn("--last 0", err)

    def test_a_run_with_only_round_zero_is_a_row_left_out_of_the_means(self):
        # A seed that diverged before its first evaluation: the others still make a table.
        d = os.path.join(self.tmp.name, "d")
        write_run(d, [])
        with open(os.path.join(d, "summary.json"), "w") as f:
            f.write('{"status": "diverged", "scenario": {"run": {"name": "d"}}}')
        rc, out, err = run([self.a, d, "--last", "2"])
        self.assertEqual(rc, 0, err)
        self.assertIn("d (diverged) | 0 | no evaluation after training started", out)
        last = out.strip().splitlines()[-1]
        self.assertIn("over 1 of 2", last)
        self.assertIn("| value (no spread from one run) over 1 of 2 | | 80.00 % |", last)  # a's final alone

    def test_a_run_given_twice_is_refused(self):
        rc, out, err = run([self.a, self.b, self.a + "/"])
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertIn("would count twice", err)

    def test_runs_are_named_by_folder_and_best_by_step(self):
        # Two runs of one scenario share a run name: the rows tell them apart by folder. Evaluations every
        # 5 steps: the best is named by its step, not its index.
        for folder in (self.a, self.b):
            with open(os.path.join(folder, "summary.json"), "w") as f:
                f.write('{"status": "completed", "scenario": {"run": {"name": "same"}}}')
        e = os.path.join(self.tmp.name, "e")
        os.makedirs(e)
        with open(os.path.join(e, "metrics.csv"), "w") as f:
            f.write(HEADER + "0,0,0,0.01,,2.3,0.1,0,\n5,1,0.5,0.01,0.5,0.9,0.7,1000,\n10,2,1,0.01,0.5,0.9,0.6,2000,\n")
        rc, out, _ = run([self.a, self.b, e])
        self.assertEqual(rc, 0)
        self.assertIn("| " + os.path.normpath(self.a) + " |", out)
        self.assertIn("| " + os.path.normpath(self.b) + " |", out)
        self.assertIn("70.00 % (5)", out)


class RestartRowsTest(unittest.TestCase):
    def test_a_step_evaluated_twice_counts_once_with_its_later_row(self):
        rows = [{"step": 0.0, "test_accuracy": 0.1}, {"step": 4.0, "test_accuracy": 0.5},
                {"step": 8.0, "test_accuracy": 0.6}, {"step": 8.0, "test_accuracy": 0.62},
                {"step": 12.0, "test_accuracy": 0.7}]
        s = round_summary.summarise(rows, 3)
        self.assertEqual(s["evaluations"], 3)
        self.assertAlmostEqual(s["window_mean"], (50 + 62 + 70) / 3, places=9)


if __name__ == "__main__":
    unittest.main()
