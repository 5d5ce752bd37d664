#!/usr/bin/python3
"""Every scenario key either changes a run or is reported: no key is silently ignored.

For each key that `dtsim keys` lists, a short run of a base scenario is made with the key set to another value
(the other boolean, another choice, twice a number or a quantity). The key passes when dtsim names it on stderr
(a warning that it has no effect, or an error) or when the run's outputs differ from the base run's: metrics.csv,
links.csv and summary.json, less the wall time, the echo of the scenario and the list of ignored keys. A key that
does neither is a key the run read and did nothing with, which the project's rule forbids.

String-valued keys (profiles, lists, event grammars) have no generic other value and are not tried here; their
own tests cover them.

The other value is taken from the value the base run resolved (summary.json's echo of the scenario), so that a
key is never "changed" to what the base scenario or its profile already says. Some keys are read by every run
but act only past a threshold that a short base run does not reach, or on traffic or hardware it does not have;
THRESHOLD lists them, with the reason, and they are not counted as silent.

  keys_without_effect.py DTSIM SOURCE_DIR BASE...     BASE: sync, local, async-ps, federated
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHORT_FASHION = ["--set", "training.max_steps=12", "--set", "data.train_samples=2048", "--set", "data.test_samples=500"]
BASES = {
    "sync": ["scenarios/quickstart.ini"] + SHORT_FASHION,
    "local": ["scenarios/quickstart.ini", "--set", "training.strategy=local"] + SHORT_FASHION,
    "async-ps": ["scenarios/sync_vs_async.ini", "--set", "training.strategy=async-ps"] + SHORT_FASHION,
    "federated": ["scenarios/fedprox_synthetic.ini", "--set", "fl.rounds=3"],
}
# Read, but acting only past a threshold or on what the base runs lack (per base, or "*" for all of them).
THRESHOLD = {
    "eval.stop_on_divergence": ("*", "acts when a run diverges; the base runs do not"),
    "eval.divergence_factor": ("*", "acts when a run diverges; the base runs do not"),
    "gpu.memory": ("*", "a capacity check, which a small model passes at any of these sizes"),
    "fabric.protocol": ("*", "nvlink and rdma differ only inside a node (which traffic a GPU's port carries)"),
    "network.model": ("*", "SimGrid's IB model differs from CM02 only for hosts with several flows at once"),
    "network.crosstraffic": ("federated", "the clients' uploads and downloads never overlap on a link"),
    "fabric.tcp_window": ("federated", "caps a flow at window / round-trip time, far above 10 GbE here"),
    "compute.math": ("federated", "the V100 profile's TF32 peak is its FP32 peak (it has no TF32)"),
    "collective.fidelity": ("*", "aggregated and analytic agree with stepwise where no flows contend, by design"),
    "training.epochs": ("*", "the base runs' training.max_steps ends them first"),
    "training.decay": ("*", "step decay acts every decay_every_epochs (30), past the base runs' length"),
    "eval.per_epoch": ("async-ps local", "async-ps: the short base run ends before a second evaluation; local: an "
                       "evaluation waits for the next averaging step, every 4 steps either way"),
}
OTHER_QUANTITY = {"size": "3MiB", "bandwidth": "7Gbps", "time": "3ms"}
BASE_UNIT = {"size": "B", "bandwidth": "B/s", "time": "s"}
KEY_ROW = re.compile(r"^\| `([a-z_]+\.[a-z_0-9]+)` \| (\w+) \| [^|]*\| ([^|]*)\| ([^|]*)\|")


def keys(dtsim):
    text = subprocess.run([dtsim, "keys", "--format", "markdown"], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        m = KEY_ROW.match(line)
        if m:
            yield m.group(1), m.group(2), m.group(3).strip(), m.group(4).strip()


def other_values(kind, value, choices):
    """Values other than `value`, the base run's resolved one (None where the echo has none)."""
    if kind == "bool":
        return ["false" if value in (True, "true") else "true"]
    if kind == "choice":
        return [c.strip() for c in choices.split(",") if c.strip() != value][:2]
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    if kind == "int":
        return [str(int(number) * 2 if number > 0 else 2)]
    if kind == "real":
        return [repr(number / 2 if number > 0 else 0.1)]
    if kind in OTHER_QUANTITY:
        return [f"{number * 2:.17g}{BASE_UNIT[kind]}" if number > 0 else OTHER_QUANTITY[kind]]
    return []


def resolved(summary, key):
    section, name = key.split(".", 1)
    return summary.get("scenario", {}).get(section, {}).get(name)


def digest(folder):
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.startswith("."):  # the run folder's lock, which names the process
            continue
        path = os.path.join(folder, name)
        if name == "summary.json":
            with open(path) as f:
                summary = json.load(f)
            for echo in ("wall_time_s", "ignored_keys", "scenario"):
                summary.pop(echo, None)
            h.update(json.dumps(summary, sort_keys=True).encode())
        else:
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def with_sets(args, extra):
    """The base's arguments with `extra`'s --set values in place of the base's for the same keys, so that each
    key is set once and the command line reads as the run it is."""
    keys = {extra[i + 1].split("=", 1)[0] for i in range(0, len(extra), 2) if extra[i] == "--set"}
    out = []
    i = 0
    while i < len(args):
        if args[i] == "--set" and args[i + 1].split("=", 1)[0] in keys:
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out + extra


def run(dtsim, source, base, extra, out):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([dtsim, "run"] + with_sets(BASES[base], extra) + ["--quiet", "--out", out], cwd=source,
                       capture_output=True, text=True, timeout=600)
    done = p.returncode == 0 and os.path.exists(os.path.join(out, "summary.json"))
    summary = None
    if done:
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
    return (digest(out) if done else None), p.stderr, p.returncode, summary


def main():
    if len(sys.argv) < 4 or any(b not in BASES for b in sys.argv[3:]):
        sys.exit(f"usage: {sys.argv[0]} DTSIM SOURCE_DIR BASE... (BASE: {', '.join(BASES)})")
    dtsim, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    silent = []
    with tempfile.TemporaryDirectory(prefix="dtsim_keys_") as tmp:
        out = os.path.join(tmp, "run")
        for base in sys.argv[3:]:
            reference, err, rc, summary = run(dtsim, source, base, [], out)
            if reference is None:
                sys.exit(f"the {base} base run failed (status {rc}): {err.strip()}")
            tried = 0
            for key, kind, _default, choices in keys(dtsim):
                where, _why = THRESHOLD.get(key, ("", ""))
                if where == "*" or base in where.split():
                    continue
                for value in other_values(kind, resolved(summary, key), choices):
                    tried += 1
                    result, err, _, _ = run(dtsim, source, base, ["--set", f"{key}={value}"], out)
                    # Refused (an error, whichever key it names), or warned about by name: reported.
                    if result is None or f": {key}: " in err:
                        continue
                    if result == reference:
                        silent.append(f"{base}: {key}={value}")
            print(f"{base}: {tried} settings tried", flush=True)
    for s in silent:
        print(f"SILENT {s}: neither reported nor changing the run")
    sys.exit(1 if silent else 0)


if __name__ == "__main__":
    main()
