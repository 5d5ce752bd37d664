#!/usr/bin/python3
"""Plot test accuracy and loss against simulated time (and epochs) for one or more dtsim runs.

    analysis/plot_metrics.py out/quickstart out/other-run -o accuracy.png

Each argument is a run's output folder (holding metrics.csv, and summary.json for its name) or a
metrics.csv file. Uses only the Python standard library and Debian's python3-matplotlib.
"""
import argparse
import csv
import json
import os
import sys


def load_run(path):
    """Returns (label, rows) where rows is a list of dicts of floats from metrics.csv."""
    csv_path = path
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "sweep.json")):
            raise ValueError(f"{path} is a sweep's folder: plot it with analysis/plot_sweep.py, or name its run folders")
        # A run that did not finish (interrupted or failed) leaves metrics.partial.csv instead.
        csv_path = os.path.join(path, "metrics.csv")
        if not os.path.exists(csv_path) and os.path.exists(os.path.join(path, "metrics.partial.csv")):
            csv_path = os.path.join(path, "metrics.partial.csv")
    folder = os.path.dirname(csv_path)
    label = os.path.basename(os.path.normpath(folder)) or csv_path
    summary = os.path.join(folder, "summary.json")
    if os.path.exists(summary):
        with open(summary) as f:
            s = json.load(f)
        label = s.get("scenario", {}).get("run", {}).get("name", label)
        if s.get("status", "completed") != "completed":
            label += f" ({s['status']})"
    rows = []
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("step", "sim_time_s", "test_accuracy", "test_loss") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{csv_path}: not a dtsim metrics.csv (no {', '.join(missing)} column)")
        for row in reader:
            # Empty cells (no value, or a non-finite one named in the nonfinite column) are plotted as gaps.
            try:
                rows.append({k: (float(v) if v != "" else float("nan")) for k, v in row.items() if k != "nonfinite"})
            except (TypeError, ValueError):
                raise ValueError(f"{csv_path}: a row that is not numbers: {row}")
    if not rows:
        raise ValueError(f"{csv_path}: no evaluation rows")
    return label, rows


def divergence_time(path):
    """The simulated time at which the run in `path` diverged (its summary.json), or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    try:
        with open(os.path.join(folder, "summary.json")) as f:
            return float(json.load(f)["divergence"]["simulated_time_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run output folders or metrics.csv files")
    parser.add_argument("-o", "--output", default="metrics.png", help="image to write (default metrics.png)")
    args = parser.parse_args(argv)
    # Imported here: round_summary.py uses load_run without plotting, and without matplotlib.
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_metrics: error: needs matplotlib (Debian's python3-matplotlib; run the script with /usr/bin/python3)",
              file=sys.stderr)
        return 2

    runs = []
    for path in args.runs:
        try:
            runs.append((path,) + load_run(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"plot_metrics: error: {e}", file=sys.stderr)
            return 2
    names = [label for _, label, _ in runs]

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for path, label, rows in runs:
        if names.count(label) > 1:  # the same scenario run twice: tell the curves apart by folder
            label = f"{label} [{path}]"
        t = [r["sim_time_s"] for r in rows]
        line = axes[0].plot(t, [100 * r["test_accuracy"] for r in rows], marker=".", label=label)[0]
        axes[1].plot([r["epoch"] for r in rows], [100 * r["test_accuracy"] for r in rows], marker=".", label=label)
        axes[2].plot(t, [r["test_loss"] for r in rows], marker=".", label=label)
        if "(diverged)" in label:  # where it ended, on every panel
            # On the time axes at the time it diverged (summary.json), which comes after its last evaluation
            # (a run that diverges before its first has only the row of the untrained model), at the last value.
            stop = divergence_time(path)
            end_t = stop if stop is not None and stop >= t[-1] else t[-1]
            for ax, x_end, y in ((axes[0], end_t, "test_accuracy"), (axes[1], rows[-1]["epoch"], "test_accuracy"),
                                 (axes[2], end_t, "test_loss")):
                scale = 100 if y == "test_accuracy" else 1
                ax.plot([x_end], [scale * rows[-1][y]], marker="X", markersize=11, color=line.get_color())
    axes[0].set(xlabel="simulated time (s)", ylabel="test accuracy (%)", title="Accuracy vs simulated time")
    axes[1].set(xlabel="epoch", ylabel="test accuracy (%)", title="Accuracy vs epochs")
    axes[2].set(xlabel="simulated time (s)", ylabel="test loss", title="Test loss vs simulated time")
    # Runs whose lengths differ by orders of magnitude (a fast fabric next to a slow one) get a log time axis,
    # so that the fast one is not squashed against the y-axis; a loss spanning decades (a diverged run) a log
    # loss axis.
    ends = [rows[-1]["sim_time_s"] for _, _, rows in runs if rows[-1]["sim_time_s"] > 0]
    if ends and max(ends) / min(ends) >= 30:
        for ax in (axes[0], axes[2]):
            ax.set_xscale("log")
            ax.set_xlabel("simulated time (s, log scale)")
    losses = [r["test_loss"] for _, _, rows in runs for r in rows if r["test_loss"] == r["test_loss"]]
    if losses and min(losses) > 0 and max(losses) / min(losses) >= 30:
        axes[2].set_yscale("log")
        axes[2].set_ylabel("test loss (log scale)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(args.output, dpi=120)
    except (OSError, ValueError) as e:
        print(f"plot_metrics: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
