#!/usr/bin/python3
"""Checks that plot_run.py draws its six panels from a run folder, synchronous or asynchronous, with or
without links.csv, reads the staleness histograms and the busiest links it should, and rejects a folder
without summary.json."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_run  # noqa: E402

HEADER = ("step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,compression_error,"
          "wire_bytes_per_worker,compression_ratio,staleness_mean,staleness_max,nonfinite\n")
LINKS = ("link,sharing,bandwidth_Bps,transfers,bytes,injected_bytes,wire_bytes,mean_utilisation,peak_utilisation,"
         "peak_window_s\n")
PNG = b"\x89PNG\r\n\x1a\n"


class PlotRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = os.path.join(self.tmp.name, "run")
        os.makedirs(self.run)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.run, name), "w") as f:
            f.write(text)

    def draw(self):
        out = os.path.join(self.tmp.name, "run.png")
        self.assertEqual(plot_run.main([self.run, "-o", out]), 0)
        with open(out, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], PNG)
        self.assertGreater(len(data), 10000)

    def test_an_asynchronous_run_with_links(self):
        workers = [{"rank": r, "staleness_histogram": [1, 2, r]} for r in range(3)]
        self.write("summary.json", json.dumps({
            "status": "completed", "time_breakdown_s": {"compute": 1, "communication": 1, "idle": 0},
            "worker_time_s": [{"compute": 1, "communication": 0.5, "idle": 0.1}] * 3,
            "strategy": {"workers": workers}}))
        self.write("metrics.csv", HEADER + "0,0,0,0.1,,2.3,0.1,0,,,,,,\n10,1,0.5,0.1,0.6,0.5,0.8,1000,,,,1.5,3,\n")
        self.write("links.csv", LINKS + "s,fatpipe,1e9,1,10,0,10,,,1e-06\n"
                   + "".join(f"l{i},shared,1e9,1,10,10,10,0.0{i},0.{i},1e-06\n" for i in range(12)))
        self.draw()
        summary, metrics, links = plot_run.load(self.run)
        self.assertEqual(len(links), 13)
        self.assertEqual(len(metrics), 2)

    def test_a_synchronous_run_without_links_or_worker_times(self):
        self.write("summary.json", json.dumps({"status": "diverged", "status_reason": "loss",
                                               "time_breakdown_s": {"compute": 1, "communication": 1, "idle": 0}}))
        self.write("metrics.partial.csv", HEADER + "0,0,0,0.1,,2.3,0.1,0,,,,,,\n")
        self.draw()

    def test_the_image_goes_into_the_run_folder_by_default(self):
        self.write("summary.json", json.dumps({"status": "completed",
                                               "time_breakdown_s": {"compute": 1, "communication": 1, "idle": 0}}))
        self.write("metrics.csv", HEADER + "0,0,0,0.1,,2.3,0.1,0,,,,,,\n")
        elsewhere = os.path.join(self.tmp.name, "elsewhere")
        os.makedirs(elsewhere)
        before = os.getcwd()
        os.chdir(elsewhere)  # the image must not land in the current folder (it did until issue 57)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(plot_run.main([self.run]), 0)
        finally:
            os.chdir(before)
        self.assertEqual(os.listdir(elsewhere), [])
        with open(os.path.join(self.run, "run.png"), "rb") as f:
            self.assertEqual(f.read(8), PNG)

    def test_without_summary_is_an_error(self):
        self.write("metrics.csv", HEADER)
        self.assertEqual(plot_run.main([self.run, "-o", os.path.join(self.tmp.name, "x.png")]), 2)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x.png")))

    def test_an_image_in_a_missing_folder_is_blamed_on_the_image(self):
        self.write("summary.json", json.dumps({"status": "completed"}))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = plot_run.main([self.run, "-o", os.path.join(self.tmp.name, "nodir", "x.png")])
        self.assertEqual(rc, 2)
        self.assertIn("-o ", err.getvalue())
        self.assertIn("does not exist", err.getvalue())


if __name__ == "__main__":
    unittest.main()
