#!/usr/bin/python3
"""Write one self-contained HTML report for a dtsim run or sweep folder.

    analysis/report.py out/quickstart          # writes out/quickstart/report.html
    analysis/report.py out/lr-by-fabric        # a sweep folder (it holds sweep.json)

The report holds the scenario, the headline numbers (a run's summary.json, or a sweep's summary.csv), the
plots embedded as PNG data (no file beside it is needed) and the command that reproduces the folder. Uses the
Python standard library and Debian's python3-matplotlib only.
"""
import argparse
import base64
import contextlib
import csv
import html
import io
import json
import os
import shlex
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_metrics  # noqa: E402
import plot_run  # noqa: E402
import plot_sweep  # noqa: E402

STYLE = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}code,pre{background:#f6f6f6;padding:2px 4px}
img{max-width:100%}.bad{color:#b00;font-weight:bold}"""


def png_data(draw):
    """Runs draw(path) into a temporary PNG and returns it as a data: URI."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plot.png")
        with contextlib.redirect_stdout(io.StringIO()):  # the plotting scripts' own "wrote ..." lines
            draw(path)
        with open(path, "rb") as f:
            return "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")


def table(header, rows):
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
    return "\n".join(out) + "</table>"


def short(value):
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return value


def run_section(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        s = json.load(f)
    name = s.get("scenario", {}).get("run", {}).get("name") or os.path.basename(os.path.normpath(folder))
    status = s.get("status", "?")
    headline = [("status", status), ("why", s.get("status_reason", ""))]
    for key in ("final_test_accuracy", "best_test_accuracy", "simulated_time_s", "steps", "epochs", "bytes_sent",
                "mean_staleness", "wall_time_s"):
        if key in s:
            headline.append((key, short(s[key])))
    if "cost" in s and s["cost"].get("mid") is not None:
        c = s["cost"]
        headline.append(("cost", f"{short(c['mid'])} {c.get('currency', '')} (range {short(c['low'])} to {short(c['high'])})"))
    if "target" in s:
        t = s["target"]
        headline.append(("target accuracy", f"{t['accuracy']}: " + (f"reached at {short(t['simulated_time_s'])} s"
                                                                   if t.get("reached") else "not reached")))
    if "simulation" in s:
        for key in ("step_s", "scaling_efficiency", "tokens_per_second", "samples_per_second"):
            if key in s["simulation"]:
                headline.append((key, short(s["simulation"][key])))
    scenario_file = s.get("scenario_file") or s.get("scenario", "")
    if isinstance(scenario_file, dict):
        scenario_file = ""
    parts = [f"<h1>dtsim run: {html.escape(name)}</h1>"]
    if status != "completed":
        parts.append(f"<p class='bad'>This run did not complete: {html.escape(status)}.</p>")
    parts.append(f"<p>{html.escape(s.get('platform', ''))}</p>")
    parts.append(table(["what", "value"], headline))
    has_metrics = any(os.path.exists(os.path.join(folder, n)) for n in ("metrics.csv", "metrics.partial.csv"))
    if has_metrics and "final_test_accuracy" in s:
        uri = png_data(lambda p: plot_metrics.main([folder, "-o", p]))
        parts.append(f"<h2>Accuracy and loss</h2><img alt='accuracy and loss' src='{uri}'>")
    uri = png_data(lambda p: plot_run.draw(folder, p))
    parts.append("<h2>Where the time and the bytes went</h2><p>Per worker: compute, communication and idle time; "
                 "bytes against time; the busiest links (links.csv); staleness (asynchronous runs); the learning "
                 f"rate.</p><img alt='time, bytes, links and staleness' src='{uri}'>")
    links_path = os.path.join(folder, "links.csv")
    if os.path.exists(links_path):
        with open(links_path, newline="") as f:
            links = [r for r in csv.DictReader(f) if r.get("mean_utilisation", "") != ""]
        links.sort(key=lambda r: (-float(r["mean_utilisation"]), r["link"]))
        rows = [(r["link"], short(float(r["bytes"]) / 1e6), f"{100 * float(r['mean_utilisation']):.1f}",
                 f"{100 * float(r['peak_utilisation']):.1f}") for r in links[:8]]
        parts.append("<h2>Busiest links</h2><p>From links.csv (every link is there); the peak is the busiest "
                     f"window of {short(float(links[0]['peak_window_s']) * 1e6) if links else '?'} µs.</p>")
        parts.append(table(["link", "MB carried", "mean utilisation (%)", "peak utilisation (%)"], rows))
    command = "dtsim run " + (scenario_file or "SCENARIO.ini")
    sets = s.get("sets")
    for item in sets or []:
        command += " --set " + shlex.quote(item)
    command += " --out " + shlex.quote(folder)
    parts.append("<h2>Reproduce</h2><pre>" + html.escape(command) + "</pre>")
    if sets is None:  # a summary written before dtsim recorded its --set keys
        parts.append("<p>This run's summary.json does not list the keys given with <code>--set</code>, so they are "
                     "not in this command: the resolved scenario, every key with its value, is in summary.json "
                     "under <code>scenario</code>.</p>")
    return name, "\n".join(parts)


def sweep_section(folder):
    with open(os.path.join(folder, "sweep.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(folder, "summary.csv"), newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    # The table keeps each number's mean and std; min and max stay in summary.csv.
    keep = [i for i, h in enumerate(header) if not h.endswith(("_min", "_max"))]
    parts = [f"<h1>dtsim sweep: {html.escape(manifest['scenario'])}</h1>"]
    varied = ", ".join(f"{v['key']} = {', '.join(v['values'])}" for v in manifest.get("vary", []))
    parts.append(f"<p>Varied: {html.escape(varied)}. Every number is the mean (and sample std) over the "
                 f"group's runs; results.csv holds each run.</p>")
    statuses = header.index("statuses")
    bad = [r for r in body if statuses < len(r) and not (r[statuses].startswith("completed:") and " " not in r[statuses])]
    if bad:
        parts.append("<p class='bad'>Some runs did not complete; see the statuses column.</p>")
    # Cost columns carry their currency in the header, or a note where the groups' currencies differ.
    _, groups = plot_sweep.load_sweep(folder)
    named = sorted({c for c in plot_sweep.currencies_of(folder, [rows for _, rows in groups]) if c})
    unit = f" ({named[0]})" if len(named) == 1 else (" (mixed currencies: see each run's summary.json)" if named else "")
    shown = [header[i] + (unit if header[i].startswith("cost") else "") for i in keep]
    parts.append(table(shown, [[short(r[i]) if i < len(r) else "" for i in keep] for r in body]))
    uri = png_data(lambda p: plot_sweep.plot(folder, p))
    parts.append(f"<h2>Plots</h2><img alt='sweep plots' src='{uri}'>")
    command = "dtsim sweep " + shlex.quote(manifest["scenario"])
    for v in manifest.get("vary", []):
        command += (f" --seeds {len(v['values'])}" if v["flag"] == "--seeds"
                    else " --vary " + shlex.quote(f"{v['key']}={','.join(v['values'])}"))
    for s in manifest.get("sets", []):
        command += " --set " + shlex.quote(s)
    command += " --out " + shlex.quote(folder)
    parts.append("<h2>Reproduce</h2><pre>" + html.escape(command) + "</pre>")
    return manifest["scenario"], "\n".join(parts)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a dtsim run folder (summary.json) or sweep folder (sweep.json)")
    parser.add_argument("-o", "--output", help="the HTML file (default FOLDER/report.html)")
    args = parser.parse_args(argv)
    output = args.output or os.path.join(args.folder, "report.html")
    try:
        if os.path.exists(os.path.join(args.folder, "sweep.json")):
            title, body = sweep_section(args.folder)
        else:
            title, body = run_section(args.folder)
    except (OSError, ValueError, KeyError, plot_sweep.SweepError) as e:
        print(f"report: error: {args.folder}: {e}", file=sys.stderr)
        return 2
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")
    tmp = output + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(page)
        os.replace(tmp, output)
    except OSError as e:
        print(f"report: error: cannot write {output}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
