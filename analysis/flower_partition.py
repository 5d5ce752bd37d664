#!/usr/bin/env python3
"""Write the split that Flower's NIID-Bench baseline draws (#C = k, or Dirichlet), for data.partition = file.

Flower's baseline (github.com/adap/flower, baselines/niid_bench, dataset_preparation.py) follows NIID-Bench:
client i holds label i mod classes, then further labels are drawn one at a time from numpy's
Generator(PCG64) seeded with 42 until it holds k distinct ones (a draw it already holds is thrown away); then,
label by label, that label's training indices are shuffled with the same generator and cut into as many
near-equal consecutive pieces as the label has holders (numpy's array_split: the first pieces get one more),
dealt to its holders in client order. Because the draws go through the same numpy calls in the same order,
the split is Flower's to the sample, provided numpy's Generator streams for integers and shuffle are those of
the numpy the baseline ran with (they have been stable since numpy 1.17).

With --dirichlet ALPHA it writes the baseline's Dirichlet split instead (dataset_preparation.py,
partition_data_dirichlet): from numpy's Generator(PCG64) seeded with 42, label by label, that label's training
indices are shuffled, the proportions for the clients are one draw of Dirichlet(ALPHA, ..., ALPHA), a client that
already holds at least an even share (samples / clients) gets proportion 0, the rest are renormalised, and
the label's indices are cut at floor(cumulative proportion x count). The whole draw is repeated, the generator
running on, until every client holds at least 10 samples.

Indices count in the order of Fashion-MNIST's train-labels-idx1-ubyte, which is both torchvision's order and
dtsim's. The output is {"shards": [[...], ...], "source": ..., "seed": ..., "labels_per_client": ...} (with
"dirichlet_alpha" and "draws" in place of the labels for a Dirichlet split).

    analysis/flower_partition.py --labels-per-client 2 --out flower_c2.json
    analysis/flower_partition.py --dirichlet 0.5 --out flower_dir05.json
    dtsim run scenarios/noniid_benchmark.ini --set data.partition=file --set data.partition_file=flower_c2.json

Bad input (a missing or malformed label file, impossible k or alpha, both splits asked for) is one line on
stderr and exit status 2.
"""

import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


class InputProblem(Exception):
    pass


def read_idx_labels(path):
    """Labels of an IDX1 file (gzip or plain): magic 0x00000801, count, then one byte per label."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputProblem(f"{path}: cannot read the label file ({e.strerror or e})")
    if len(raw) < 8:
        raise InputProblem(f"{path}: too short for an IDX header")
    magic, count = struct.unpack(">II", raw[:8])
    if magic != 0x801:
        raise InputProblem(f"{path}: magic {magic:#010x} is not an IDX label file's 0x00000801")
    if len(raw) != 8 + count:
        raise InputProblem(f"{path}: header promises {count} labels but the file holds {len(raw) - 8}")
    return np.frombuffer(raw, dtype=np.uint8, offset=8).astype(np.int64)


def label_quantity_split(labels, clients, k, seed):
    """Flower's NIID-Bench #C = k split: one list of training indices per client."""
    classes = int(labels.max()) + 1
    if not 1 <= k <= classes:
        raise InputProblem(f"--labels-per-client {k} must lie in 1..{classes}")
    if clients < 1:
        raise InputProblem("--clients must be at least 1")
    rng = np.random.default_rng(seed)
    held = []
    holders = [0] * classes
    for client in range(clients):
        mine = [client % classes]
        holders[client % classes] += 1
        while len(mine) < k:
            label = rng.choice(classes, 1)[0]
            if label not in mine:
                mine.append(label)
                holders[label] += 1
        held.append(mine)
    shards = [[] for _ in range(clients)]
    for label in range(classes):
        members = np.where(labels == label)[0]
        rng.shuffle(members)
        if holders[label] == 0:
            continue  # nobody holds it (possible when clients < classes): its samples are dropped
        pieces = np.array_split(members, holders[label])
        taken = 0
        for client in range(clients):
            if label in held[client]:
                shards[client].extend(int(i) for i in pieces[taken])
                taken += 1
    return shards, held


def dirichlet_split(labels, clients, alpha, seed, min_samples=10):
    """Flower's NIID-Bench Dirichlet(alpha) split: one list of training indices per client, and the number of
    draws it took (the first whose smallest shard holds min_samples or more)."""
    if not alpha > 0:
        raise InputProblem(f"--dirichlet {alpha} must be positive")
    if clients < 1:
        raise InputProblem("--clients must be at least 1")
    classes = int(labels.max()) + 1
    if len(labels) < clients * min_samples:
        raise InputProblem(f"--clients {clients}: {len(labels)} samples cannot give every client {min_samples}")
    rng = np.random.default_rng(seed)
    even_share = len(labels) / clients
    for attempt in range(1, 1001):
        shards = [[] for _ in range(clients)]
        for label in range(classes):
            members = np.where(labels == label)[0]
            rng.shuffle(members)
            p = rng.dirichlet(np.repeat(alpha, clients))
            # A client at or past its even share takes none of this label (the baseline's balancing rule).
            p = np.array([share * (len(shard) < even_share) for share, shard in zip(p, shards)])
            p = p / p.sum()
            cuts = (np.cumsum(p) * len(members)).astype(int)[:-1]
            for shard, piece in zip(shards, np.split(members, cuts)):
                shard.extend(int(i) for i in piece)
        if min(len(s) for s in shards) >= min_samples:
            return shards, attempt
    raise InputProblem(f"--dirichlet {alpha}: no draw in 1000 gave every client {min_samples} samples")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels-per-client", type=int, help="k of #C = k (default 2)")
    parser.add_argument("--dirichlet", type=float, metavar="ALPHA",
                        help="write the Dirichlet(ALPHA) split instead of #C = k")
    parser.add_argument("--clients", type=int, default=10, help="number of clients (default 10)")
    parser.add_argument("--seed", type=int, default=42, help="the baseline's dataset_seed (default 42)")
    parser.add_argument("--data", default=DEFAULT_DATA, help=f"Fashion-MNIST folder (default {DEFAULT_DATA})")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    try:
        path = os.path.join(args.data, "train-labels-idx1-ubyte.gz")
        if not os.path.exists(path):
            path = os.path.join(args.data, "train-labels-idx1-ubyte")
        labels = read_idx_labels(path)
        if args.dirichlet is not None and args.labels_per_client is not None:
            raise InputProblem("--dirichlet and --labels-per-client ask for two different splits: give one")
        if args.dirichlet is not None:
            shards, draws = dirichlet_split(labels, args.clients, args.dirichlet, args.seed)
            doc = {
                "source": f"Flower baselines/niid_bench Dirichlet split, numpy default_rng({args.seed}), "
                          f"numpy {np.__version__}",
                "seed": args.seed,
                "dirichlet_alpha": args.dirichlet,
                "draws": draws,
                "shards": shards,
            }
            note = f"draw {draws}"
        else:
            k = 2 if args.labels_per_client is None else args.labels_per_client
            shards, held = label_quantity_split(labels, args.clients, k, args.seed)
            doc = {
                "source": "Flower baselines/niid_bench label_quantity split (NIID-Bench #C = k), numpy "
                          f"default_rng({args.seed}), numpy {np.__version__}",
                "seed": args.seed,
                "labels_per_client": k,
                "labels": [[int(x) for x in mine] for mine in held],
                "shards": shards,
            }
            note = f"labels {doc['labels']}"
    except InputProblem as e:
        print(f"flower_partition.py: {e}", file=sys.stderr)
        return 2
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.replace(tmp, args.out)
    sizes = ", ".join(str(len(s)) for s in shards)
    print(f"{args.out}: {args.clients} shards of {sizes} samples; {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
