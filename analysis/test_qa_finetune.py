#!/usr/bin/python3
"""Checks qa_finetune.py's table against a stand-in dtsim whose exact match is a known function of the seed and of
H: the means and standard deviations, the base row from step 0, the H gaps, the resume, and the check that the
second network reproduces the first."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qa_finetune.py")

# Exact match 0.5 + 0.01·seed + 0.001·H (H = 0 without local steps), step 0 at 0.6 + 0.01·seed; with FAKE_MISMATCH
# set, the 10 GbE runs score 0.1 more. Every call is logged to FAKE_LOG.
FAKE_DTSIM = r'''#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--out") + 1]
sets = dict(a.split("=", 1) for a in (args[i + 1] for i, x in enumerate(args) if x == "--set"))
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
seed = int(sets.get("run.seed", "1"))
h = int(sets.get("local.local_steps", "0"))
em = 0.5 + 0.01 * seed + 0.001 * h
if os.environ.get("FAKE_MISMATCH") and sets.get("fabric.profile") == "eth-10g-tcp":
    em += 0.1
os.makedirs(out, exist_ok=True)
if "qa_pretrain" in args[1]:
    open(os.path.join(out, "model.bin"), "wb").write(b"base")
part = {"exact_match": em, "f1": em + 0.01, "examples": 1000}
summary = {"status": "completed", "workers": 4, "bytes_sent": 4e6, "simulated_time_s": 0.25,
           "cost": {"mid": 0.004}, "qa": {"test": part, "medical": part, "finance": part,
                                          "trained_parameters": 4096}}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"))
open(os.path.join(out, "metrics.csv"), "w").write(
    "step,test_accuracy\n0,%s\n500,%s\n" % (0.6 + 0.01 * seed, em))
'''


class QaFinetuneTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.tmp.name, "dtsim")
        with open(self.fake, "w") as f:
            f.write(FAKE_DTSIM)
        os.chmod(self.fake, 0o755)
        self.log = os.path.join(self.tmp.name, "calls.log")
        self.out = os.path.join(self.tmp.name, "table")

    def tearDown(self):
        self.tmp.cleanup()

    def table(self, mismatch=False):
        env = dict(os.environ, FAKE_LOG=self.log)
        if mismatch:
            env["FAKE_MISMATCH"] = "1"
        return subprocess.run([sys.executable, SCRIPT, "--dtsim", self.fake, "--out", self.out, "--seeds", "3",
                               "--jobs", "2"], capture_output=True, text=True, env=env)

    def calls(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def test_means_gaps_and_base_row(self):
        r = self.table()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = {line.split("|")[1].strip(): line for line in r.stdout.splitlines() if line.startswith("| ")}
        # Step 0 over seeds 1..3: 61, 62, 63 % → 62.00 ± 1.00.
        self.assertIn("| 62.00 ± 1.00 |", rows["pre-trained base (step 0)"])
        # Every-step LoRA: 51, 52, 53 %; H = 5 adds half a point.
        self.assertIn("| 52.00 ± 1.00 | 53.00 ± 1.00 |", rows["LoRA r=8 (q,v), every step"])
        self.assertIn("| 52.50 ± 1.00 |", rows["LoRA, local SGD H = 5"])
        self.assertIn("| 1.00 MB |", rows["LoRA, local SGD H = 5"])  # 4 MB sent by 4 workers
        self.assertIn("H = 2: +0.20 points", r.stdout)
        self.assertIn("H = 5: +0.50 points", r.stdout)
        self.assertIn("reproduce the exact match", r.stdout)
        # 1 pre-training and, per setting, 3 seeds on the first network and 1 on the second.
        self.assertEqual(len(self.calls()), 1 + 8 * 4)
        # Each setting runs its own scenario with the base the pre-training wrote.
        base = os.path.join(self.out, "pretrain", "model.bin")
        self.assertTrue(all("transformer.base=" + base in c for c in self.calls()[1:]))
        self.assertEqual(sum("scenarios/qa_cross_site_fedavg.ini" in c for c in self.calls()), 4)

    def test_a_rerun_runs_nothing_again(self):
        self.assertEqual(self.table().returncode, 0)
        first = len(self.calls())
        again = self.table()
        self.assertEqual(again.returncode, 0)
        self.assertEqual(len(self.calls()), first)

    def test_a_network_that_changes_the_numerics_is_reported(self):
        r = self.table(mismatch=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("warning: the second network changed the exact match of full, lora", r.stdout)


if __name__ == "__main__":
    unittest.main()
