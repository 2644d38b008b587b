#!/usr/bin/env python3
"""Set-up and refresh keys for a calibration file, fitted on kspmv_perf CSVs.

A format's conversion from a device CSR (kspmv_perf's convert_ms) is fitted
as setup_us + setup_ns_per_nnz x nnz by least squares over the matrices
(both terms kept >= 0), and its refresh as refresh_spmvs, the median of
refresh_us / time_us. Prints `key = value` lines to append to a calibration
file (kspmv::read_calibration reads them; they override the model's
defaults, kspmv/model/model.hpp setup_defaults).

  fit_setup.py [--skip NAME]... [--min-points K] run.csv [more.csv ...]

Fit on matrices that auto is not then judged on
(perf_tests/suites/setup-fit.txt); the first line of that suite only loads
the kernels and is skipped with --skip warm-up.
"""
import argparse
import csv
import statistics
import sys


def fit(points):
    """Least squares y = a + b x with a, b >= 0."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx > 0 else 0.0
    a = my - b * mx
    if b < 0:  # no growth with size: the median
        return statistics.median(y for _, y in points), 0.0
    if a < 0:  # through the origin
        return 0.0, sum(x * y for x, y in points) / sum(x * x for x, _ in points)
    return a, b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--skip", action="append", default=[], metavar="NAME", help="a matrix left out (the warm-up line); repeat for more")
    ap.add_argument("--min-points", type=int, default=3, help="fewest matrices a format needs to be fitted")
    args = ap.parse_args()
    setup, refresh = {}, {}
    for path in args.csv:
        for r in csv.DictReader(open(path, newline="")):
            # A format's own key: plain kspmv runners (no options after
            # ':', not auto, not the peers) in double, mode N, as
            # model_replay.py reads them and calibrate_model fits in.
            if (r["status"] != "ok" or r["matrix"] in args.skip or r["peer"] == "1" or ":" in r["runner"]
                    or r["runner"] == "auto" or r["precision"] != "double" or r.get("mode", "N") not in ("N", "")):
                continue
            f = r["runner"]
            nnz, ms, us = float(r["nnz"]), float(r["convert_ms"]), float(r["time_us"])
            setup.setdefault(f, []).append((nnz, ms * 1e3))
            if float(r["refresh_us"]) > 0 and us > 0:
                refresh.setdefault(f, []).append(float(r["refresh_us"]) / us)
    if not setup:
        sys.exit("fit_setup: no kspmv format rows with status ok")
    print("# set-up and refresh, fitted by perf_tests/fit_setup.py on " + ", ".join(args.csv))
    for f in sorted(setup):
        pts = setup[f]
        if len(pts) < args.min_points:
            print(f"# {f}: {len(pts)} matrices, not fitted")
            continue
        a, b = fit(pts)
        worst = max(abs(a + b * x - y) / y for x, y in pts)
        print(f"# {f}: {len(pts)} matrices, worst fit {worst:.0%}")
        print(f"setup_us.{f} = {a:.1f}")
        print(f"setup_ns_per_nnz.{f} = {b * 1e3:.4f}")
        if len(refresh.get(f, [])) >= args.min_points:
            print(f"refresh_spmvs.{f} = {statistics.median(refresh[f]):.3f}")


if __name__ == "__main__":
    main()
