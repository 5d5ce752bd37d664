#!/usr/bin/python3
"""Summarise the test accuracy of several dtsim runs of one configuration (typically seeds) as one table.

    analysis/round_summary.py out/fedavg-s1 out/fedavg-s2 out/fedavg-s3 --last 10

For each run: its final accuracy, the mean over its last K evaluations, its best evaluation, and the median
and largest change between consecutive evaluations over those K. Then the mean and sample standard deviation
of the first three over the runs. Federated runs evaluate once a round, so with --last 10 on a 50-round run
the window is rounds 41-50. A single round of a swinging curve is a noisy reading; the window's mean is not.

Each argument is a run's output folder (metrics.csv, or metrics.partial.csv for a run that did not finish) or
a metrics.csv file, named in the table as given; a run given twice is refused (it would count twice). A run
with no evaluation after training started (one that diverged before its first) has a row that says so and is
left out of the means, which say over how many runs they are. Uses the Python standard library only.
"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_metrics  # noqa: E402  (its loader reads metrics.csv and the run's status)


def latest_per_step(rows):
    """The rows with each step once: a restart from a checkpoint evaluates its redone steps again, and the later
    row (the model that went on) replaces the earlier."""
    kept = []
    for r in rows:
        kept = [k for k in kept if k.get("step") != r.get("step")] + [r]
    return kept


def summarise(rows, last):
    """Returns a dict of percentages for one run's evaluation rows (round 0, before training, is skipped)."""
    rows = latest_per_step(rows)
    acc = [100.0 * r["test_accuracy"] for r in rows if r.get("step", 1.0) > 0 and not math.isnan(r["test_accuracy"])]
    if not acc:
        raise ValueError("no evaluation after training started")
    window = acc[-last:]
    # Changes between consecutive evaluations inside the window (its first against the one before it).
    tail = acc[-(last + 1):]
    changes = [abs(b - a) for a, b in zip(tail, tail[1:])]
    best = max(acc)
    trained = [r for r in rows if r.get("step", 1.0) > 0 and not math.isnan(r["test_accuracy"])]
    return {
        "evaluations": len(acc),
        "final": acc[-1],
        "window_mean": statistics.fmean(window),
        "best": best,
        "best_at": int(trained[acc.index(best)].get("step", acc.index(best) + 1)),
        "median_change": statistics.median(changes) if changes else 0.0,
        "largest_change": max(changes) if changes else 0.0,
    }


def mean_sd(values):
    """Mean and sample standard deviation (0 for one value)."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run output folders or metrics.csv files")
    parser.add_argument("--last", type=int, default=10, help="evaluations in the closing window (default 10)")
    args = parser.parse_args(argv)
    if args.last < 1:
        print(f"round_summary: error: --last {args.last}: must be at least 1", file=sys.stderr)
        return 2

    table = []
    seen = {}
    for path in args.runs:
        where = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        if where in seen:
            print(f"round_summary: error: {path}: the same run as {seen[where]}; a run given twice would count twice",
                  file=sys.stderr)
            return 2
        seen[where] = path
        try:
            label, rows = plot_metrics.load_run(path)
            if "test_accuracy" not in rows[0]:
                raise ValueError("no test_accuracy column")
            status = label[label.rfind(" ("):] if label.endswith(")") else ""
            name = os.path.normpath(path) + status
            try:
                table.append((name, summarise(rows, args.last)))
            except ValueError as e:  # e.g. diverged before its first evaluation: a row, not the end of the table
                table.append((name, str(e)))
        except (OSError, ValueError, KeyError) as e:
            print(f"round_summary: error: {path}: {e}", file=sys.stderr)
            return 2

    # The window is what the runs have: "last 10" of a run with 5 evaluations is its 5.
    longest = max((s["evaluations"] for _, s in table if not isinstance(s, str)), default=args.last)
    k = min(args.last, longest)
    print(f"| run | evaluations | final | mean of last {k} | best (at step) | median / largest change over last {k} |")
    print("|---|---|---|---|---|---|")
    for label, s in table:
        if isinstance(s, str):
            print(f"| {label} | 0 | {s} | | | |")
            continue
        print(f"| {label} | {s['evaluations']} | {s['final']:.2f} % | {s['window_mean']:.2f} % | "
              f"{s['best']:.2f} % ({s['best_at']}) | {s['median_change']:.2f} / {s['largest_change']:.2f} |")
    summaries = [s for _, s in table if not isinstance(s, str)]
    if not summaries:
        print(f"| no run with an evaluation after training started | | | | | |")
        return 0
    cells = []
    for key in ("final", "window_mean", "best"):
        m, sd = mean_sd([s[key] for s in summaries])
        # A sample standard deviation needs two runs: one run's row gives its value alone.
        cells.append(f"{m:.2f} ± {sd:.2f} %" if len(summaries) > 1 else f"{m:.2f} %")
    over = f"{len(summaries)}" if len(summaries) == len(table) else f"{len(summaries)} of {len(table)}"
    what = "mean ± sd" if len(summaries) > 1 else "value (no spread from one run)"
    print(f"| {what} over {over} | | {cells[0]} | {cells[1]} | {cells[2]} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
