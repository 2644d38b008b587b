#!/usr/bin/env python3
"""Markdown tables of the formats' own reports from a kspmv_perf JSON run.

  format_tables.py run.json [run2.json ...] > tables.md

- EVC-HYB: the paper's Table 3 columns (Isplit, NNZ_ELL, %, NNZ_vCSR, %,
  % padding) with the time in caller and in internal order beside the best
  peer (the paper's Figure 3: with and without reordering).
- EHYB: parts, window, extra rows, long rows, preprocessing
  (partitioning + reordering, as a multiple of one SpMV), time vs peers.
Double precision only; peers are kk-crs and cuSPARSE.
"""
import json
import sys
from collections import OrderedDict

PEERS = ("kk-crs", "cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo", "cusparse-sell")


def load(paths):
    runs = OrderedDict()
    for p in paths:
        for b in json.load(open(p))["benchmarks"]:
            if b.get("error_occurred"):
                continue
            matrix, runner, prec = b["name"].split("/")[:3]
            if prec != "double":
                continue
            runs.setdefault(matrix, {})[runner] = b
    return runs


def us(b):
    return b["real_time"] if b["time_unit"] == "us" else b["real_time"] * 1e-3


def main():
    runs = load(sys.argv[1:])
    print("#### EVC-HYB: the paper's Table 3 columns, and time with and without reordering (double)\n")
    print("| matrix | nnz | split | Isplit | NNZ_ELL | % ELL | NNZ_vCSR | % vCSR | % padding |"
          " evc-hyb us (caller order) | internal order us | best CSR peer us | best peer us | x best CSR peer (caller / internal) | x best peer |")
    print("|" + " --- |" * 15)
    for m, r in runs.items():
        e = r.get("evc-hyb")
        if not e:
            continue
        i = r.get("evc-hyb:order=internal")
        ell, vcsr, nnz = e["nnz_ell"], e["nnz_vcsr"], e["nnz"]
        tot = ell + vcsr
        csr_peers = [us(r[p]) for p in ("kk-crs", "cusparse-csr-alg1", "cusparse-csr-alg2") if p in r]
        peers = [us(r[p]) for p in PEERS if p in r]
        bc, bp = min(csr_peers), min(peers)
        te, ti = us(e), us(i) if i else float("nan")
        rows = int(e.get("isplit", 0))
        print(f"| {m} | {int(nnz)} | {int(e['split'])} | {rows} | {int(ell)} | {100 * ell / tot:.2f} | {int(vcsr)} |"
              f" {100 * vcsr / tot:.2f} | {100 * (tot - nnz) / nnz:.2f} | {te:.2f} | {ti:.2f} | {bc:.2f} | {bp:.2f} |"
              f" {bc / te:.2f} / {bc / ti:.2f} | {bp / te:.2f} |")
    print("\n#### EHYB: partition, cached share and time (double)\n")
    print("| matrix | runner | parts | window rows | extra rows | long rows | partition s | reorder s |"
          " preprocessing / SpMV | time us | best peer us | x best peer |")
    print("|" + " --- |" * 12)
    for m, r in runs.items():
        peers = [us(r[p]) for p in PEERS if p in r]
        for name, b in r.items():
            if not name.startswith("ehyb"):
                continue
            nnz = b["nnz"]
            t = us(b)
            pre = b.get("partition_seconds", 0) + b.get("reorder_seconds", 0)
            print(f"| {m} | {name} | {int(b.get('parts', 0))} | {int(b.get('window_rows', 0))} |"
                  f" {int(b.get('er_rows', 0))} | {int(b.get('long_rows', 0))} | {b.get('partition_seconds', 0):.2f} |"
                  f" {b.get('reorder_seconds', 0):.2f} | {pre / (t * 1e-6):.0f} | {t:.2f} | {min(peers):.2f} |"
                  f" {min(peers) / t:.2f} |")


if __name__ == "__main__":
    main()
