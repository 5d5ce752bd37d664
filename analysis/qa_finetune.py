#!/usr/bin/env python3
"""Runs the QA fine-tuning comparison of docs/qa.md and prints its table (markdown).

    python3 analysis/qa_finetune.py --dtsim build/dtsim --out out/qa_finetune [--seeds 3] [--jobs 2]

First it pre-trains the base (scenarios/qa_pretrain.ini, seed 1) unless OUT/pretrain/model.bin exists, then it
fine-tunes that base in every setting of SETTINGS (one shipped scenario each), for run.seed = 1..seeds on the first
network of NETWORKS and for seed 1 on the second (the numerics of these strategies do not depend on simulated
time, so the second network's run must reproduce the first's exact match; the script checks it). A run whose
summary.json says "completed" is not run again, so an interrupted table resumes.

Columns: exact match and token F1 on the 2,000 held-out questions (mean ± sample standard deviation over the
seeds, and the per-domain exact match), the values that train and travel, the bytes every worker sent, and the
simulated time and GPU cost (CNY, Beijing mid price) of the fine-tuning on each network. The "base" row is the
step-0 evaluation of the every-step LoRA runs (LoRA's B = 0, so the adapted model is the base), and the NF4 row's
step 0 is the quantised base before any fine-tuning.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import statistics
import subprocess
import sys

# Each setting is a shipped scenario (and the value it varies): the same budget for all, 500 steps of a global
# batch of 32 (2 epochs of 8,000 questions); FedAvg's 100 rounds of 5 local steps give each client the same 500.
SETTINGS = [
    ("full", "full fine-tuning, every step", "qa_full_finetune", []),
    ("lora", "LoRA r=8 (q,v), every step", "qa_lora", []),
    ("lora-h2", "LoRA, local SGD H = 2", "qa_lora_local", ["local.local_steps=2"]),
    ("lora-h3", "LoRA, local SGD H = 3", "qa_lora_local", ["local.local_steps=3"]),
    ("lora-h5", "LoRA, local SGD H = 5", "qa_lora_local", ["local.local_steps=5"]),
    ("qlora", "QLoRA-style (NF4 base), every step", "qa_qlora", []),
    ("cross-site", "cross-site LoRA, one domain per site, every step", "qa_cross_site", []),
    ("cross-site-fedavg", "cross-site LoRA, FedAvg (5 local steps, SGD lr 0.05)", "qa_cross_site_fedavg", []),
]
NETWORKS = ["ib-hdr-200", "eth-10g-tcp"]


def run(dtsim, scenario, out, sets):
    """Runs dtsim unless `out` already holds a completed run; returns its summary.json."""
    summary = os.path.join(out, "summary.json")
    if os.path.exists(summary):
        with open(summary) as f:
            s = json.load(f)
        if s.get("status") == "completed":
            return s
    command = [dtsim, "run", scenario, "--out", out, "--quiet"]
    for s in sets:
        command += ["--set", s]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit(f"qa_finetune: {' '.join(command)} failed ({result.returncode}):\n{result.stdout}")
    with open(summary) as f:
        return json.load(f)


def step0_accuracy(out):
    with open(os.path.join(out, "metrics.csv")) as f:
        first = next(csv.DictReader(f))
    return float(first["test_accuracy"])


def mean_std(values, scale=100.0):
    values = [scale * v for v in values]
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtsim", default="build/dtsim")
    parser.add_argument("--out", default="out/qa_finetune")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    pretrain = os.path.join(args.out, "pretrain")
    base = os.path.abspath(os.path.join(pretrain, "model.bin"))
    if not os.path.exists(base):
        print("pre-training the base (scenarios/qa_pretrain.ini) ...", file=sys.stderr)
        run(args.dtsim, "scenarios/qa_pretrain.ini", pretrain, [])

    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for slug, _, scenario, sets in SETTINGS:
            for network in NETWORKS:
                for seed in range(1, args.seeds + 1) if network == NETWORKS[0] else [1]:
                    out = os.path.join(args.out, slug, network, f"seed-{seed}")
                    all_sets = [f"transformer.base={base}", f"run.seed={seed}", f"fabric.profile={network}"] + sets
                    jobs[(slug, network, seed)] = pool.submit(run, args.dtsim, f"scenarios/{scenario}.ini", out,
                                                              all_sets)
        results = {key: job.result() for key, job in jobs.items()}

    seeds = range(1, args.seeds + 1)
    a, b = NETWORKS
    print(f"| setting | trained values | exact match % | F1 % | medical EM % | finance EM % | bytes sent per worker "
          f"| time on {a} | cost on {a} | time on {b} | cost on {b} |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    lora_dirs = [os.path.join(args.out, "lora", a, f"seed-{s}") for s in seeds]
    base_em = [step0_accuracy(d) for d in lora_dirs]
    print(f"| pre-trained base (step 0) | - | {mean_std(base_em)} | | | | | | | | |")
    mismatches = []
    for slug, label, _, _ in SETTINGS:
        runs = [results[(slug, a, s)] for s in seeds]
        other = results[(slug, b, 1)]
        qa = [r["qa"] for r in runs]
        if other["qa"]["test"]["exact_match"] != qa[0]["test"]["exact_match"]:
            mismatches.append(slug)
        workers = runs[0]["workers"]
        per_worker = runs[0]["bytes_sent"] / workers
        print(f"| {label} | {qa[0]['trained_parameters']:,} "
              f"| {mean_std([q['test']['exact_match'] for q in qa])} | {mean_std([q['test']['f1'] for q in qa])} "
              f"| {mean_std([q['medical']['exact_match'] for q in qa])} "
              f"| {mean_std([q['finance']['exact_match'] for q in qa])} | {per_worker / 1e6:.2f} MB "
              f"| {runs[0]['simulated_time_s'] * 1e3:.2f} ms | {runs[0]['cost']['mid']:.2e} "
              f"| {other['simulated_time_s'] * 1e3:.2f} ms | {other['cost']['mid']:.2e} |")
    nf4 = [step0_accuracy(os.path.join(args.out, "qlora", a, f"seed-{s}")) for s in seeds]
    print(f"\nNF4 base before fine-tuning (step 0 of the QLoRA runs): {mean_std(nf4)} % exact match")
    every = [results[("lora", a, s)]["qa"]["test"]["exact_match"] for s in seeds]
    for h in (2, 3, 5):
        local = [results[(f"lora-h{h}", a, s)]["qa"]["test"]["exact_match"] for s in seeds]
        gap = 100 * (statistics.mean(local) - statistics.mean(every))
        print(f"H = {h}: {gap:+.2f} points of exact match against every-step sync (goal: within 1 point)")
    if mismatches:
        print(f"\nwarning: the second network changed the exact match of {', '.join(mismatches)}")
        return 1
    print(f"\nthe runs on {b} reproduce the exact match of seed 1 on {a} in every setting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
