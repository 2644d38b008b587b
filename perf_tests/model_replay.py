#!/usr/bin/env python3
"""Replay the performance model against a suite run's measured times.

  model_replay.py --calibration=FILE [--kspmv=build/apps/kspmv] [-jN]
                  [--show=FORMAT,...] run-part1.csv [run-part2.csv ...]

For every matrix of the CSVs (kspmv_perf --csv, double precision), asks
`kspmv info SPEC --predict --calibration FILE --json` for the model's
estimates and pick, and scores them against the measured times exactly as
kspmv_perf's own validation does: estimates within 20% over the plain
kspmv runners (no options, not `auto`, not the peers), and the pick within
10% of the fastest of them (kk-crs, the baseline, is not ours to pick).
HYB's K comparison needs a measurement per K and is not replayed.

The matrix names are resolved through perf_tests/suites/*.txt (a name in
none of them is a spec itself, as kspmv_perf --matrices=SPEC,... names
it); shared: files from $KSPMV_SHARED_MATRICES, else ../shared/matrices.
A replay lets a model change be judged on earlier runs without the
device; a claim about a model still comes from a run on the device
(docs/PERFORMANCE.md).
"""
import concurrent.futures
import csv
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def suite_specs():
    specs = {}
    for path in glob.glob(os.path.join(HERE, "suites", "*.txt")):
        for line in open(path):
            words = line.split("#", 1)[0].split()
            if len(words) >= 2:
                specs.setdefault(words[0], words[1])
    return specs


def resolve(spec):
    if spec.startswith("shared:"):
        root = os.environ.get("KSPMV_SHARED_MATRICES", os.path.join(HERE, "..", "..", "shared", "matrices"))
        return os.path.join(root, spec[len("shared:"):])
    return spec


def predict(kspmv, cal, spec):
    """The model's estimate of every format (seconds) and its pick, as
    `kspmv info SPEC --predict --calibration FILE --json` gives them."""
    out = subprocess.run([kspmv, "info", resolve(spec), "--predict", "--calibration", cal, "--json"],
                         check=True, capture_output=True, text=True).stdout
    p = json.loads(out)["predict"]
    # null: no finite estimate; NaN then fails every comparison, a miss.
    est = {e["format"]: float("nan") if e["estimate_us"] is None else e["estimate_us"] * 1e-6
           for e in p["estimates"]}
    return est, p["pick"]


def main():
    cal, kspmv, jobs, show, files = None, os.path.join("build", "apps", "kspmv"), 2, set(), []
    for a in sys.argv[1:]:
        if a.startswith("--calibration="):
            cal = a.split("=", 1)[1]
        elif a.startswith("--kspmv="):
            kspmv = a.split("=", 1)[1]
        elif a.startswith("--show="):
            show = set(a.split("=", 1)[1].split(","))
        elif re.fullmatch(r"-j\d+", a):
            jobs = int(a[2:])
        else:
            files.append(a)
    if not cal or not files:
        raise SystemExit(__doc__)
    rows = [r for f in files for r in csv.DictReader(open(f, newline=""))
            if r["precision"] == "double" and r["status"] == "ok"]
    mats = list(dict.fromkeys(r["matrix"] for r in rows))
    specs = suite_specs()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        preds = dict(zip(mats, pool.map(lambda m: predict(kspmv, cal, specs.get(m, m)), mats)))
    pairs = within = picks = picks_ok = 0
    per_format = {}
    for m in mats:
        est, pick = preds[m]
        measured = {r["runner"]: float(r["time_us"]) * 1e-6 for r in rows if r["matrix"] == m}
        plain = {k: v for k, v in measured.items() if ":" not in k and k != "auto" and k in est}
        best = min((v, k) for k, v in plain.items() if k != "kk-crs")
        for k, v in plain.items():
            d = (est[k] - v) / v
            ok = abs(d) <= 0.2
            pairs += 1
            within += ok
            f = per_format.setdefault(k, [0, 0])
            f[0] += ok
            f[1] += 1
            if k in show:
                print(f"  {m:18s} {k:13s} measured {v * 1e6:9.2f} model {est[k] * 1e6:9.2f} {d:+6.0%}")
        if pick in plain:
            picks += 1
            regret = plain[pick] / best[0]
            picks_ok += regret <= 1.10
            flag = "" if regret <= 1.10 else "   <-- miss"
            print(f"{m:18s} pick {pick:13s} {plain[pick] * 1e6:8.2f} us (model {est[pick] * 1e6:7.2f}), "
                  f"best {best[1]:13s} {best[0] * 1e6:8.2f} (model {est[best[1]] * 1e6:7.2f}): "
                  f"regret {regret:.3f}{flag}")
    print("per format: " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(per_format.items())))
    print(f"estimates within 20%: {within} of {pairs} ({100 * within / max(pairs, 1):.1f}%)")
    print(f"picks within 10% of the best: {picks_ok} of {picks} ({100 * picks_ok / max(picks, 1):.1f}%)")


if __name__ == "__main__":
    main()
