#!/usr/bin/python3
"""Checks flower_partition.py's split against the rule it implements (on a small label file written here) and
its errors on bad input."""
import contextlib
import gzip
import io
import json
import os
import struct
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flower_partition  # noqa: E402


def write_labels(folder, labels, gz=True):
    raw = struct.pack(">II", 0x801, len(labels)) + bytes(labels)
    name = "train-labels-idx1-ubyte" + (".gz" if gz else "")
    opener = gzip.open if gz else open
    with opener(os.path.join(folder, name), "wb") as f:
        f.write(raw)


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = flower_partition.main(argv)
    return rc, out.getvalue(), err.getvalue()


class FlowerPartitionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # 5 classes of 23 samples each, interleaved: sample j has label j mod 5.
        self.labels = [j % 5 for j in range(115)]
        write_labels(self.tmp.name, self.labels)
        self.out = os.path.join(self.tmp.name, "split.json")

    def tearDown(self):
        self.tmp.cleanup()

    def written(self, clients, seed, mode):
        """Runs the tool with --clients, --seed and the mode's flags; returns the JSON it wrote."""
        rc, _, err = run(["--data", self.tmp.name, "--clients", str(clients), "--seed", str(seed),
                          "--out", self.out] + mode)
        self.assertEqual(rc, 0, err)
        with open(self.out) as f:
            return json.load(f)

    def split(self, clients, k, seed=42):
        return self.written(clients, seed, ["--labels-per-client", str(k)])

    def test_every_client_holds_its_own_label_and_k_distinct_ones(self):
        doc = self.split(clients=7, k=3)
        self.assertEqual(len(doc["labels"]), 7)
        for i, held in enumerate(doc["labels"]):
            self.assertEqual(held[0], i % 5)
            self.assertEqual(len(set(held)), 3)
        for i, shard in enumerate(doc["shards"]):
            self.assertEqual({self.labels[s] for s in shard}, set(doc["labels"][i]))

    def test_each_label_is_cut_evenly_among_its_holders_in_client_order(self):
        doc = self.split(clients=7, k=2)
        labels = np.array(self.labels)
        seen = []
        for label in range(5):
            holders = [i for i, held in enumerate(doc["labels"]) if label in held]
            pieces = [[s for s in doc["shards"][i] if labels[s] == label] for i in holders]
            sizes = [len(p) for p in pieces]
            # array_split of 23 into h pieces: the first 23 mod h pieces get one more
            h = len(holders)
            self.assertEqual(sizes, [23 // h + (1 if j < 23 % h else 0) for j in range(h)])
            for p in pieces:
                seen.extend(p)
        self.assertEqual(sorted(seen), list(range(115)), "every sample of a held label is dealt exactly once")

    def test_the_seed_fixes_the_split(self):
        a = self.split(clients=7, k=2, seed=42)["shards"]
        b = self.split(clients=7, k=2, seed=42)["shards"]
        c = self.split(clients=7, k=2, seed=43)["shards"]
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_the_draws_are_numpys_in_the_baselines_order(self):
        # Rebuilt here call by call: the label draws first, then one shuffle per label.
        doc = self.split(clients=6, k=2, seed=7)
        rng = np.random.default_rng(7)
        held = []
        for client in range(6):
            mine = [client % 5]
            while len(mine) < 2:
                x = int(rng.choice(5, 1)[0])
                if x not in mine:
                    mine.append(x)
            held.append(mine)
        self.assertEqual(doc["labels"], held)
        first = np.where(np.array(self.labels) == 0)[0]
        rng.shuffle(first)
        holders0 = [i for i, m in enumerate(held) if 0 in m]
        piece = np.array_split(first, len(holders0))[0]
        self.assertEqual(sorted(int(s) for s in piece),
                         sorted(s for s in doc["shards"][holders0[0]] if self.labels[s] == 0))

    def dirichlet(self, clients, alpha, seed=42):
        return self.written(clients, seed, ["--dirichlet", str(alpha)])

    def test_dirichlet_deals_every_sample_once_and_gives_each_client_ten(self):
        doc = self.dirichlet(clients=4, alpha=0.5)
        self.assertEqual(doc["dirichlet_alpha"], 0.5)
        self.assertEqual(sorted(i for shard in doc["shards"] for i in shard), list(range(115)))
        self.assertGreaterEqual(min(len(shard) for shard in doc["shards"]), 10)

    def test_dirichlet_gives_nothing_of_a_label_to_a_client_past_its_even_share(self):
        # Labels are dealt in order 0, 1, ...; a client holding 115 / 4 = 28.75 samples or more before a
        # label is dealt gets none of it. Check it on several seeds, where such clients occur. The last client's
        # piece runs to the end of the label, so when the renormalised cumulative sum before it rounds to just
        # under 1 it keeps one sample (as in the baseline's code).
        labels = np.array(self.labels)
        capped = 0
        for seed in range(1, 9):
            doc = self.dirichlet(clients=4, alpha=0.3, seed=seed)
            held = np.zeros(4, dtype=int)
            for label in range(5):
                got = [int(np.sum(labels[np.array(shard, dtype=int)] == label)) for shard in doc["shards"]]
                for client in range(4):
                    if held[client] >= 115 / 4:
                        self.assertLessEqual(got[client], 1 if client == 3 else 0, (seed, label, client))
                        capped += 1
                held += np.array(got)
        self.assertGreater(capped, 0, "some client reached its even share before the last label")

    def test_dirichlet_draws_are_numpys_in_the_baselines_order(self):
        # The first label of the first draw, rebuilt call by call: shuffle, then the proportions.
        doc = self.dirichlet(clients=4, alpha=0.5, seed=11)
        self.assertEqual(doc["draws"], 1, "seed 11 gives every client 10 samples at the first draw")
        rng = np.random.default_rng(11)
        first = np.where(np.array(self.labels) == 0)[0]
        rng.shuffle(first)
        p = rng.dirichlet(np.repeat(0.5, 4))
        cuts = (np.cumsum(p) * len(first)).astype(int)[:-1]
        for client, piece in enumerate(np.split(first, cuts)):
            self.assertEqual(sorted(int(s) for s in piece),
                             sorted(s for s in doc["shards"][client] if self.labels[s] == 0))

    def test_dirichlet_seed_fixes_the_split(self):
        a = self.dirichlet(clients=4, alpha=0.5, seed=3)["shards"]
        self.assertEqual(a, self.dirichlet(clients=4, alpha=0.5, seed=3)["shards"])
        self.assertNotEqual(a, self.dirichlet(clients=4, alpha=0.5, seed=4)["shards"])

    def test_bad_input_is_one_line_and_status_2(self):
        for argv in (["--labels-per-client", "6"], ["--labels-per-client", "0"], ["--clients", "0"],
                     ["--dirichlet", "0"], ["--dirichlet", "-1"], ["--dirichlet", "0.5", "--clients", "12"],
                     ["--dirichlet", "0.5", "--labels-per-client", "2"]):
            rc, _, err = run(["--data", self.tmp.name, "--out", self.out] + argv)
            self.assertEqual(rc, 2, argv)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        rc, _, err = run(["--data", os.path.join(self.tmp.name, "missing"), "--out", self.out])
        self.assertEqual(rc, 2)
        self.assertIn("cannot read the label file", err)
        with gzip.open(os.path.join(self.tmp.name, "train-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">II", 0x803, 3) + bytes([0, 1, 2]))
        rc, _, err = run(["--data", self.tmp.name, "--out", self.out])
        self.assertEqual(rc, 2)
        self.assertIn("magic", err)
        self.assertFalse(os.path.exists(self.out), "nothing is written on bad input")


if __name__ == "__main__":
    unittest.main()
