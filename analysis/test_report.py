#!/usr/bin/python3
"""Checks that report.py writes one self-contained HTML page for a run and for a sweep, with the headline
numbers, the plots embedded as PNG data and the command that reproduces the folder, and says so when a run
did not complete."""
import base64
import html
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import test_plot_sweep  # noqa: E402

METRICS = "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent\n0,0,0,0.1,,2.3,0.1,0\n10,1,0.5,0.1,0.6,0.5,0.8,1000\n"


def embedded_pngs(page):
    return [base64.b64decode(m) for m in re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)]


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def make_run(self, summary):
        """A run folder with METRICS and `summary` as summary.json; returns its path."""
        run = os.path.join(self.tmp.name, "run")
        os.makedirs(run)
        with open(os.path.join(run, "metrics.csv"), "w") as f:
            f.write(METRICS)
        with open(os.path.join(run, "summary.json"), "w") as f:
            f.write(summary)
        return run

    def test_a_run(self):
        run = self.make_run('{"status": "interrupted", "status_reason": "SIGINT", "final_test_accuracy": 0.8, '
                            '"scenario_file": "scenarios/x.ini", "platform": "star", '
                            '"cost": {"mid": 2, "low": 1, "high": 3, "currency": "CNY"}}')
        self.assertEqual(report.main([run]), 0)
        with open(os.path.join(run, "report.html")) as f:
            page = f.read()
        pngs = embedded_pngs(page)
        self.assertEqual(len(pngs), 2)  # accuracy and loss; time, bytes, links and staleness
        for png in pngs:
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertNotIn("Busiest links</h2>", page)  # no links.csv in this folder
        self.assertIn("did not complete: interrupted", page)
        self.assertIn("2 CNY (range 1 to 3)", page)
        self.assertIn("dtsim run scenarios/x.ini --out " + run, page)

    def test_the_command_carries_the_runs_sets(self):
        run = self.make_run('{"status": "completed", "final_test_accuracy": 0.8, "scenario_file": "scenarios/x.ini", '
                            '"sets": ["training.lr=50", "run.name=a b"]}')
        self.assertEqual(report.main([run]), 0)
        with open(os.path.join(run, "report.html")) as f:
            page = f.read()
        self.assertIn("dtsim run scenarios/x.ini --set training.lr=50 --set &#x27;run.name=a b&#x27; --out " + run, page)
        self.assertNotIn("not in this command", page)

    def test_a_run_with_links(self):
        run = self.make_run('{"status": "completed", "final_test_accuracy": 0.8}')
        with open(os.path.join(run, "links.csv"), "w") as f:
            f.write("link,sharing,bandwidth_Bps,transfers,bytes,injected_bytes,wire_bytes,mean_utilisation,"
                    "peak_utilisation,peak_window_s\n"
                    "node0.switch,fatpipe,3e+11,4,4000000,0,4000000,,,1e-06\n"
                    "nic-a_UP,shared,1e9,2,2000000,2000000,2000000,0.1,0.5,1e-06\n"
                    "nic-b_DOWN,shared,1e9,2,3000000,0,3000000,0.25,0.75,1e-06\n")
        self.assertEqual(report.main([run]), 0)
        with open(os.path.join(run, "report.html")) as f:
            page = f.read()
        self.assertIn("Busiest links</h2>", page)
        # Busiest first (by mean utilisation), the fatpipe (no utilisation) left out.
        self.assertLess(page.index("<td>nic-b_DOWN</td>"), page.index("<td>nic-a_UP</td>"))
        self.assertNotIn("<td>node0.switch</td>", page)
        self.assertIn("<td>25.0</td><td>75.0</td>", page)

    def test_a_sweep(self):
        case = test_plot_sweep.PlotSweepTest("test_draws_a_sweep_with_numerics")
        case.dir = os.path.join(self.tmp.name, "sweep")
        case.make_sweep()
        with open(os.path.join(case.dir, "summary.csv"), "w") as f:
            f.write("fabric.profile,runs,statuses,final_test_accuracy_mean,final_test_accuracy_std,"
                    "final_test_accuracy_min,final_test_accuracy_max\n"
                    "a,2,completed:2,0.8,0,0.8,0.8\nb,2,completed:1 diverged:1,0.8,0,0.8,0.8\n")
        out = os.path.join(self.tmp.name, "r.html")
        self.assertEqual(report.main([case.dir, "-o", out]), 0)
        with open(out) as f:
            page = f.read()
        self.assertEqual(len(embedded_pngs(page)), 1)
        self.assertIn("<th>final_test_accuracy_mean</th>", page)
        self.assertNotIn("final_test_accuracy_min", page)
        self.assertIn("Some runs did not complete", page)
        self.assertIn("dtsim sweep s.ini --vary fabric.profile=a,b --seeds 2 --out " + case.dir, page)

    def test_a_sweeps_command_is_quoted_for_the_shell(self):
        case = test_plot_sweep.PlotSweepTest("test_draws_a_sweep_with_numerics")
        case.dir = os.path.join(self.tmp.name, "sweep")
        case.make_sweep()
        manifest_path = os.path.join(case.dir, "sweep.json")
        with open(manifest_path) as f:
            manifest = json.load(f)
        manifest["sets"] = ["faults.events=worker 0 down at 1s; worker 1 down at 2s"]
        with open(manifest_path, "w") as f:
            json.dump(manifest, f)
        with open(os.path.join(case.dir, "summary.csv"), "w") as f:
            f.write("fabric.profile,runs,statuses,cost_mid_mean\na,2,completed:2,2\nb,2,completed:2,2\n")
        out = os.path.join(self.tmp.name, "q.html")
        self.assertEqual(report.main([case.dir, "-o", out]), 0)
        with open(out) as f:
            page = f.read()
        self.assertIn(html.escape("--set 'faults.events=worker 0 down at 1s; worker 1 down at 2s'"), page)
        self.assertIn("<th>cost_mid_mean (CNY)</th>", page)

    def test_not_a_run_is_an_error(self):
        self.assertEqual(report.main([os.path.join(self.tmp.name, "absent")]), 2)


if __name__ == "__main__":
    unittest.main()
