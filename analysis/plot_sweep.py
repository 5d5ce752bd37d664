#!/usr/bin/python3
"""Plot a dtsim sweep: one curve per group of runs (the varied values other than run.seed), the mean over
seeds with a band of one sample standard deviation.

    analysis/plot_sweep.py out/lr-by-fabric                 # writes out/lr-by-fabric/sweep.png
    analysis/plot_sweep.py out/lr-by-fabric -o figure.png

Panels for runs with numerics: test accuracy against simulated time (a log axis when the groups' run times
span more than a factor of 10) and against epochs, test loss against simulated time (log scale; a diverged
run's last point is marked with a cross), bytes sent against simulated time, and bars of simulated time (and
time to the target accuracy) and of cost (the mid price, its range as error bars). A sweep of timing-only
runs gets bars of step time, exposed communication and cost per unit. Reads DIR/sweep.json, DIR/results.csv
and each run's metrics.csv; uses the Python standard library and Debian's python3-matplotlib only.
"""
import argparse
import csv
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError:
    sys.exit("plot_sweep: error: needs matplotlib (Debian's python3-matplotlib; run the script with /usr/bin/python3)")

# Statuses of runs that have a result; an interrupted run (rerun when the sweep resumes) has none.
RESULTS = ("completed", "diverged", "failed")


class SweepError(Exception):
    pass


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    return float(text) if text not in ("", None) else float("nan")


def load_sweep(folder):
    """Returns (manifest, groups): groups is a list of (label, [result rows]) in the sweep's order. Only runs
    with a result are in a group's rows (an interrupted run's numbers are those of a run cut short); a group
    whose runs did not all complete says so in its label ("[1 interrupted]", "[2 failed]")."""
    try:
        with open(os.path.join(folder, "sweep.json")) as f:
            manifest = json.load(f)
        results = read_csv(os.path.join(folder, "results.csv"))
    except OSError as e:
        raise SweepError(f"{folder}: not a sweep folder with results ({e.strerror}: {e.filename})")
    except json.JSONDecodeError as e:
        raise SweepError(f"{folder}/sweep.json: {e}")
    keys = [v["key"] for v in manifest.get("vary", []) if v["key"] != "run.seed"]
    groups, statuses = {}, {}
    for row in results:
        label = ", ".join(f"{k.split('.', 1)[1]}={row[k]}" for k in keys) or "all runs"
        groups.setdefault(label, [])
        if row.get("status") in RESULTS:
            groups[label].append(row)
        status = row.get("status") or "missing"
        if status != "completed":
            statuses.setdefault(label, {}).setdefault(status, 0)
            statuses[label][status] += 1
    if not groups:
        raise SweepError(f"{folder}/results.csv: no runs")

    def marked(label):
        notes = statuses.get(label)
        return label if not notes else label + " [" + ", ".join(f"{n} {s}" for s, n in sorted(notes.items())) + "]"

    return manifest, [(marked(label), rows) for label, rows in groups.items()]


def load_metrics(folder, run):
    """A run's evaluation rows (metrics.csv, or metrics.partial.csv for a run that did not finish)."""
    for name in ("metrics.csv", "metrics.partial.csv"):
        path = os.path.join(folder, run, name)
        if os.path.exists(path):
            return [{k: number(v) for k, v in r.items() if k != "nonfinite"} for r in read_csv(path)]
    return []


def mean_std(values):
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return float("nan"), float("nan")
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def curve(runs_rows, x_column, y_column):
    """Mean x and mean ± std y at each evaluation index that every run of the group reached."""
    length = min(len(rows) for rows in runs_rows)
    xs, ys, sds = [], [], []
    for i in range(length):
        xs.append(mean_std([rows[i][x_column] for rows in runs_rows])[0])
        m, s = mean_std([rows[i][y_column] for rows in runs_rows])
        ys.append(m)
        sds.append(s)
    return xs, ys, sds


def draw_curve(ax, xs, ys, sds, label, scale=1.0):
    line, = ax.plot(xs, [scale * y for y in ys], marker=".", label=label)
    low = [scale * (y - s) for y, s in zip(ys, sds)]
    high = [scale * (y + s) for y, s in zip(ys, sds)]
    ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def bars(ax, labels, column_rows, column, title, ylabel, low=None, high=None):
    means, errs = [], [[], []]
    for rows in column_rows:
        m, s = mean_std([number(r.get(column, "")) for r in rows])
        means.append(m)
        if low and high:
            lo = mean_std([number(r.get(low, "")) for r in rows])[0]
            hi = mean_std([number(r.get(high, "")) for r in rows])[0]
            errs[0].append(max(0.0, m - lo) if not math.isnan(lo) else 0.0)
            errs[1].append(max(0.0, hi - m) if not math.isnan(hi) else 0.0)
        else:
            errs[0].append(s if not math.isnan(s) else 0.0)
            errs[1].append(s if not math.isnan(s) else 0.0)
    positions = range(len(labels))
    ax.bar(positions, [0 if math.isnan(m) else m for m in means], yerr=errs, capsize=4, color="tab:blue", alpha=0.8)
    ax.set_xticks(list(positions))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set(title=title, ylabel=ylabel)
    for p, m in zip(positions, means):
        if math.isnan(m):
            ax.annotate("n/a", (p, 0), ha="center", va="bottom", fontsize=8)


def currencies_of(folder, group_rows):
    """Each group's currency (its runs' summary.json), None where it has no priced run."""
    out = []
    for rows in group_rows:
        found = None
        for r in rows:
            try:
                with open(os.path.join(folder, r["run"], "summary.json")) as f:
                    s = json.load(f)
            except (OSError, json.JSONDecodeError):
                continue
            found = s.get("cost", {}).get("currency") or s.get("simulation", {}).get("currency") or found
            if found:
                break
        out.append(found)
    return out


def cost_axis(labels, currencies):
    """The cost bars' labels and axis title: one currency on the axis, or each group's under its bar (prices in
    different currencies share no scale, which the title says)."""
    named = sorted({c for c in currencies if c})
    if len(named) <= 1:
        return labels, named[0] if named else "currency"
    return [f"{label} ({c or 'no price'})" for label, c in zip(labels, currencies)], "each bar in its own currency"


def plot(folder, output):
    manifest, groups = load_sweep(folder)
    labels = [label for label, _ in groups]
    group_rows = [rows for _, rows in groups]
    timing_only = all(r.get("step_s", "") != "" for rows in group_rows for r in rows)
    cost_labels, currency = cost_axis(labels, currencies_of(folder, group_rows))
    if timing_only:
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
        bars(axes[0], labels, group_rows, "step_s", "Step time", "seconds per step")
        bars(axes[1], labels, group_rows, "exposed_communication_s_per_step", "Exposed communication per step", "seconds")
        bars(axes[2], cost_labels, group_rows, "cost_per_unit_low", "Cost per unit (low to high price)", f"{currency} per unit",
             "cost_per_unit_low", "cost_per_unit_high")
    else:
        fig, axes = plt.subplots(2, 3, figsize=(16, 9))
        axes = [a for row in axes for a in row]
        # Each group's curves first: whether the time axes turn logarithmic depends on all of them.
        drawn = []
        for label, rows in groups:
            metrics = [load_metrics(folder, r["run"]) for r in rows]
            pairs = [(r, m) for r, m in zip(rows, metrics) if m]
            if pairs:
                drawn.append((label, pairs))
        finals = [max(curve([m for _, m in pairs], "sim_time_s", "test_accuracy")[0]) for _, pairs in drawn]
        positive = [f for f in finals if f > 0]
        log_time = bool(positive) and max(positive) > 10 * min(positive)

        def timed(xs, ys, sds):
            # A log axis cannot show t = 0 (the evaluation before training): leave that point out.
            if not log_time:
                return xs, ys, sds
            keep = [i for i, x in enumerate(xs) if x > 0]
            return [xs[i] for i in keep], [ys[i] for i in keep], [sds[i] for i in keep]

        for label, pairs in drawn:
            metrics = [m for _, m in pairs]
            draw_curve(axes[0], *timed(*curve(metrics, "sim_time_s", "test_accuracy")), label, 100)
            draw_curve(axes[1], *curve(metrics, "epoch", "test_accuracy"), label, 100)
            line = draw_curve(axes[2], *timed(*curve(metrics, "sim_time_s", "test_loss")), label)
            for r, m in pairs:
                if r["status"] == "diverged":
                    last = [p for p in m if not math.isnan(p["test_loss"])][-1]
                    axes[2].plot([last["sim_time_s"]], [last["test_loss"]], "x", color=line.get_color(), markersize=10)
            draw_curve(axes[3], *timed(*curve(metrics, "sim_time_s", "bytes_sent")), label, 1e-9)
        time_label = "simulated time (s, log; t = 0 not shown)" if log_time else "simulated time (s)"
        if log_time:
            for ax in (axes[0], axes[2], axes[3]):
                ax.set_xscale("log")
        axes[2].set_yscale("log")
        axes[0].set(xlabel=time_label, ylabel="test accuracy (%)", title="Accuracy vs simulated time")
        axes[1].set(xlabel="epoch", ylabel="test accuracy (%)", title="Accuracy vs epochs")
        axes[2].set(xlabel=time_label, ylabel="test loss (log)", title="Test loss (x: a diverged run's last point)")
        axes[3].set(xlabel=time_label, ylabel="GB sent, all workers", title="Bytes vs simulated time")
        for ax in axes[:4]:
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        has_target = any(r.get("time_to_target_s", "") != "" for rows in group_rows for r in rows)
        if has_target:
            bars(axes[4], labels, group_rows, "time_to_target_s", "Time to target accuracy", "simulated seconds")
        else:
            bars(axes[4], labels, group_rows, "simulated_time_s", "Simulated time of the run", "simulated seconds")
        cost = "cost_to_target" if has_target else "cost_mid"
        bars(axes[5], cost_labels, group_rows, cost, "Cost" + (" to target" if has_target else " of the run") +
             " (mid price, range of regions)", currency, None if has_target else "cost_low",
             None if has_target else "cost_high")
    seeds = next((len(v["values"]) for v in manifest.get("vary", []) if v["key"] == "run.seed"), 0)
    fig.suptitle(f"{manifest.get('scenario', folder)}: {sum(len(r) for r in group_rows)} runs with a result"
                 + (f", mean ± std over up to {seeds} seeds" if seeds > 1 else ""))
    fig.tight_layout()
    try:
        fig.savefig(output, dpi=110)
    except (OSError, ValueError) as e:
        raise SweepError(f"cannot write {output}: {e}")
    finally:
        plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="a folder written by dtsim sweep")
    parser.add_argument("-o", "--output", help="image to write (default SWEEP/sweep.png)")
    args = parser.parse_args(argv)
    output = args.output or os.path.join(args.sweep, "sweep.png")
    try:
        plot(args.sweep, output)
    except (SweepError, KeyError, ValueError) as e:
        print(f"plot_sweep: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
