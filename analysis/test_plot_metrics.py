#!/usr/bin/python3
"""Checks that plot_metrics.py draws a PNG from dtsim's metrics.csv layout and rejects bad input."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_metrics  # noqa: E402

HEADER = "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent\n"


class PlotMetricsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run_dir = os.path.join(self.tmp.name, "run")
        os.makedirs(self.run_dir)
        with open(os.path.join(self.run_dir, "metrics.csv"), "w") as f:
            f.write(HEADER)
            f.write("0,0.0000,0,0.05,,2.3,0.1,0\n")
            f.write("10,0.5000,0.001,0.05,0.9,0.8,0.7,1000\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_writes_a_png(self):
        out = os.path.join(self.tmp.name, "plot.png")
        self.assertEqual(plot_metrics.main([self.run_dir, self.run_dir, "-o", out]), 0)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_missing_run_is_an_error(self):
        out = os.path.join(self.tmp.name, "plot.png")
        self.assertEqual(plot_metrics.main([os.path.join(self.tmp.name, "absent"), "-o", out]), 2)
        self.assertFalse(os.path.exists(out))

    def test_a_file_that_is_not_metrics_or_a_sweep_folder_is_named(self):
        links = os.path.join(self.run_dir, "links.csv")
        with open(links, "w") as f:
            f.write("link,sharing,bandwidth_Bps\nnic-worker0_DOWN,shared,1e9\n")
        with self.assertRaisesRegex(ValueError, "links.csv: not a dtsim metrics.csv"):
            plot_metrics.load_run(links)
        with open(os.path.join(self.tmp.name, "sweep.json"), "w") as f:
            f.write("{}")
        with self.assertRaisesRegex(ValueError, "plot it with analysis/plot_sweep.py"):
            plot_metrics.load_run(self.tmp.name)
        out = os.path.join(self.tmp.name, "absent", "p.png")
        self.assertEqual(plot_metrics.main([self.run_dir, "-o", out]), 2)

    def test_empty_metrics_is_an_error(self):
        with open(os.path.join(self.run_dir, "metrics.csv"), "w") as f:
            f.write(HEADER)
        self.assertEqual(plot_metrics.main([self.run_dir, "-o", os.path.join(self.tmp.name, "p.png")]), 2)

    def test_a_partial_run_with_flagged_cells_is_plotted_and_labelled(self):
        os.remove(os.path.join(self.run_dir, "metrics.csv"))
        with open(os.path.join(self.run_dir, "metrics.partial.csv"), "w") as f:
            f.write(HEADER.rstrip("\n") + ",nonfinite\n")
            f.write("0,0.0000,0,0.05,,2.3,0.1,0,\n")
            f.write("10,0.5000,0.001,0.05,,,0.1,1000,train_loss|test_loss\n")
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            f.write('{"status": "interrupted", "scenario": {"run": {"name": "r"}}}')
        label, rows = plot_metrics.load_run(self.run_dir)
        self.assertEqual(label, "r (interrupted)")
        self.assertEqual(len(rows), 2)
        self.assertNotIn("nonfinite", rows[1])
        self.assertNotEqual(rows[1]["test_loss"], rows[1]["test_loss"])  # NaN: a gap in the plot
        out = os.path.join(self.tmp.name, "plot.png")
        self.assertEqual(plot_metrics.main([self.run_dir, "-o", out]), 0)

    def test_a_diverged_run_ends_where_it_diverged(self):
        # Only the untrained model's row: the cross goes at the divergence's time, not at 0.
        with open(os.path.join(self.run_dir, "metrics.csv"), "w") as f:
            f.write(HEADER + "0,0.0000,0,0.05,,2.3,0.1,0\n")
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            f.write('{"status": "diverged", "divergence": {"step": 2, "simulated_time_s": 0.0004}}')
        self.assertAlmostEqual(plot_metrics.divergence_time(self.run_dir), 0.0004)
        self.assertAlmostEqual(plot_metrics.divergence_time(os.path.join(self.run_dir, "metrics.csv")), 0.0004)
        self.assertIsNone(plot_metrics.divergence_time(self.tmp.name))
        out = os.path.join(self.tmp.name, "plot.png")
        self.assertEqual(plot_metrics.main([self.run_dir, "-o", out]), 0)


if __name__ == "__main__":
    unittest.main()
