#!/usr/bin/python3
"""Where one dtsim run's time and bytes went: a figure of six panels.

    analysis/plot_run.py out/quickstart                 # writes out/quickstart/run.png
    analysis/plot_run.py out/quickstart -o figure.png

- time per worker: compute, communication and idle seconds, stacked (summary.json worker_time_s);
- bytes sent against simulated time (metrics.csv);
- staleness histogram: how many updates behind each applied gradient was (asynchronous parameter server);
- staleness over time: mean and maximum per evaluation interval (metrics.csv);
- the busiest links: mean and peak utilisation (links.csv);
- the learning rate against simulated time (metrics.csv).
A panel whose data the run does not have (a synchronous run has no staleness) says so instead of a plot.
Uses only the Python standard library and Debian's python3-matplotlib.
"""
import argparse
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError:
    sys.exit("plot_run: error: needs matplotlib (Debian's python3-matplotlib; run the script with /usr/bin/python3)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_sweep import number, read_csv as read_rows  # noqa: E402

LINKS_SHOWN = 10


def load(folder):
    """summary.json, the metrics rows and the links rows of a run folder (the last two may be empty)."""
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    metrics = []
    for name in ("metrics.csv", "metrics.partial.csv"):
        if os.path.exists(os.path.join(folder, name)):
            metrics = read_rows(os.path.join(folder, name))
            break
    links_path = os.path.join(folder, "links.csv")
    links = read_rows(links_path) if os.path.exists(links_path) else []
    return summary, metrics, links


def say(ax, title, text):
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes, color="0.35")
    ax.set_xticks([])
    ax.set_yticks([])


def time_panel(ax, summary):
    workers = summary.get("worker_time_s") or []
    labels = [str(r) for r in range(len(workers))]
    if not workers and "time_breakdown_s" in summary:  # an older summary.json: the workers' mean only
        workers, labels = [summary["time_breakdown_s"]], ["mean"]
    if not workers:
        return say(ax, "Time per worker", "no time breakdown in summary.json")
    ranks = list(range(len(workers)))
    bottom = [0.0] * len(workers)
    for part, colour in (("compute", "tab:blue"), ("communication", "tab:orange"), ("idle", "tab:gray")):
        values = [w.get(part, 0.0) for w in workers]
        ax.bar(ranks, values, bottom=bottom, color=colour, label=part)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set(title="Time per worker", xlabel="worker (rank)", ylabel="simulated seconds", ylim=(0, 1.3 * max(bottom)))
    step = max(1, len(ranks) // 16)  # at most about 16 tick labels
    ax.set_xticks(ranks[::step])
    ax.set_xticklabels(labels[::step])
    ax.legend(fontsize=8, ncol=3, loc="upper center")  # in the headroom above the bars


def bytes_panel(ax, metrics):
    if not metrics:
        return say(ax, "Bytes sent", "no metrics rows")
    sent = [number(r["bytes_sent"]) for r in metrics]
    scale, unit = (1e9, "GB") if max(sent) >= 1e10 else (1e6, "MB")
    ax.plot([number(r["sim_time_s"]) for r in metrics], [b / scale for b in sent], marker=".")
    ax.set(title="Bytes sent", xlabel="simulated time (s)", ylabel=f"{unit}, all workers")


def staleness_histogram_panel(ax, summary):
    workers = summary.get("strategy", {}).get("workers", [])
    histograms = [w["staleness_histogram"] for w in workers if isinstance(w, dict) and "staleness_histogram" in w]
    if not histograms:
        return say(ax, "Staleness histogram", "no staleness: every gradient was\napplied to the weights it was\n"
                   "computed from (synchronous)")
    counts = [0] * max(len(h) for h in histograms)
    for h in histograms:
        for s, n in enumerate(h):
            counts[s] += n
    ax.bar(range(len(counts)), counts, color="tab:purple")
    ax.set(title="Staleness histogram", xlabel="updates behind when applied", ylabel="gradients (at every shard)")


def staleness_time_panel(ax, metrics):
    rows = [r for r in metrics if r.get("staleness_mean", "") != ""]
    if not rows:
        return say(ax, "Staleness over time", "no staleness columns filled\n(synchronous run)")
    t = [number(r["sim_time_s"]) for r in rows]
    ax.plot(t, [number(r["staleness_mean"]) for r in rows], marker=".", label="mean")
    ax.plot(t, [number(r["staleness_max"]) for r in rows], marker=".", label="max")
    ax.set(title="Staleness over time", xlabel="simulated time (s)", ylabel="updates behind")
    ax.legend(fontsize=8)


def links_panel(ax, links):
    rows = [r for r in links if r.get("mean_utilisation", "") != ""]
    if not rows:
        return say(ax, "Busiest links", "no links.csv (output.links = false),\nor no link with a utilisation")
    rows.sort(key=lambda r: (-number(r["mean_utilisation"]), r["link"]))
    rows = rows[:LINKS_SHOWN][::-1]  # the busiest at the top
    names = [r["link"] for r in rows]
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], [100 * number(r["peak_utilisation"]) for r in rows], height=0.4, color="tab:red",
            label=f"peak ({number(rows[0]['peak_window_s']) * 1e6:.3g} µs windows)")
    ax.barh([i - 0.2 for i in y], [100 * number(r["mean_utilisation"]) for r in rows], height=0.4, color="tab:green",
            label="mean over the run")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names, fontsize=7)
    ax.set(title="Busiest links", xlabel="utilisation (%)", xlim=(0, 105))
    ax.legend(fontsize=7, loc="lower right")


def lr_panel(ax, metrics):
    rows = [r for r in metrics if r.get("lr", "") != ""]
    if not rows:
        return say(ax, "Learning rate", "no learning rate in metrics.csv (timing-only run)")
    ax.plot([number(r["sim_time_s"]) for r in rows], [number(r["lr"]) for r in rows], marker=".")
    ax.set(title="Learning rate", xlabel="simulated time (s)", ylabel="learning rate")


def draw(folder, output):
    summary, metrics, links = load(folder)
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
    time_panel(axes[0][0], summary)
    bytes_panel(axes[0][1], metrics)
    links_panel(axes[0][2], links)
    staleness_histogram_panel(axes[1][0], summary)
    staleness_time_panel(axes[1][1], metrics)
    lr_panel(axes[1][2], metrics)
    name = summary.get("scenario", {}).get("run", {}).get("name") if isinstance(summary.get("scenario"), dict) else None
    status = summary.get("status", "?")
    fig.suptitle(f"{name or os.path.basename(os.path.normpath(folder))}: {status}"
                 + ("" if status == "completed" else f" ({summary.get('status_reason', '')})"))
    for row in axes:
        for ax in row:
            ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="a run's output folder (summary.json, metrics.csv, links.csv)")
    parser.add_argument("-o", "--output", help="image to write (default RUN/run.png, as plot_sweep.py and report.py "
                        "write into the folder they read)")
    args = parser.parse_args(argv)
    args.output = args.output or os.path.join(args.run, "run.png")
    # The image's folder is checked first, so that an error there is not blamed on the run.
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        print(f"plot_run: error: -o {args.output}: the folder {out_dir} does not exist", file=sys.stderr)
        return 2
    try:
        draw(args.run, args.output)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"plot_run: error: {args.run}: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
