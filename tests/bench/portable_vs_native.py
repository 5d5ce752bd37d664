#!/usr/bin/env python3
"""make bench: the portable default build against a native build (-march=native) of the same tree, side by side.

Runs, alternating between the two builds so that both see the same machine load:
  - the compute bench's training steps (MLP, LeNet, CNN; samples per second, Google Benchmark's median over
    repetitions), and
  - the quickstart (`dtsim run scenarios/quickstart.ini`), timed by the CPU seconds it used,
and prints each as the portable build's speed over the native one's: the goal is at least 0.85.

Usage: portable_vs_native.py PORTABLE_BUILD_DIR NATIVE_BUILD_DIR [--rounds N]
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile

GOAL = 0.85


def child_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def numerics_line(build):
    out = subprocess.run([os.path.join(build, "dtsim"), "--version"], capture_output=True, text=True, check=True).stdout
    return next((line for line in out.splitlines() if line.startswith("numerics:")), "numerics: unknown")


def training_step_rates(build):
    """Samples per second of each training-step benchmark (median of three repetitions)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        subprocess.run([os.path.join(build, "tests", "dtsim_compute_bench"), "--benchmark_filter=train_step",
                        "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
                        "--benchmark_out=" + result.name, "--benchmark_out_format=json"],
                       capture_output=True, text=True, check=True)
        report = json.load(open(result.name))
    rates = {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rates[b["run_name"].split("/")[-1]] = b["items_per_second"]
    return rates


def quickstart_cpu_seconds(build, source_dir):
    with tempfile.TemporaryDirectory() as out:
        before = child_cpu_seconds()
        subprocess.run([os.path.join(build, "dtsim"), "run", os.path.join(source_dir, "scenarios", "quickstart.ini"),
                        "--quiet", "--out", os.path.join(out, "q")], check=True)
        return child_cpu_seconds() - before


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("portable")
    parser.add_argument("native")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--names", default="portable,native",
                        help="what to call the two builds (default portable,native; e.g. v2,v3 to compare levels)")
    args = parser.parse_args()
    first, second = args.names.split(",")
    source_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    builds = {first: args.portable, second: args.native}
    for name, build in builds.items():
        print(f"{name:8s} {build}: {numerics_line(build)}")
    rates = {name: {} for name in builds}
    quickstart = {name: [] for name in builds}
    for _ in range(args.rounds):
        for name, build in builds.items():  # alternate, so that a change of load hits both
            for bench, rate in training_step_rates(build).items():
                rates[name].setdefault(bench, []).append(rate)
            quickstart[name].append(quickstart_cpu_seconds(build, source_dir))

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    print(f"\n{first} build's speed / {second} build's (goal >= {GOAL}), medians over {args.rounds} rounds:")
    ratios = []
    for bench in sorted(rates[first]):
        p, n = median(rates[first][bench]), median(rates[second][bench])
        ratios.append(p / n)
        print(f"  training step {bench:6s} {p:10.0f} against {n:10.0f} samples/s   {p / n:.2f}")
    compute = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    q_p, q_n = median(quickstart[first]), median(quickstart[second])
    print(f"  compute bench (geometric mean of the training steps)                {compute:.2f}")
    print(f"  quickstart                 {q_p:8.2f} against {q_n:8.2f} CPU seconds   {q_n / q_p:.2f}")
    worst = min(compute, q_n / q_p)
    print(f"{first} / {second}: {worst:.2f} at worst ({'meets' if worst >= GOAL else 'misses'} the goal of {GOAL})")


if __name__ == "__main__":
    sys.exit(main())
