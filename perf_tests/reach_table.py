#!/usr/bin/env python3
"""Markdown table of GFLOP/s, % of copy and speed-up for chosen runners.

  reach_table.py --runners=dia,ell,kk-crs,cusparse-sell run1.csv [run2.csv ...]

A row per matrix (in file order), a column per runner: "GFLOP/s (% of
copy) x best-cuSPARSE" -- the speed-up over the fastest cuSPARSE algorithm
measured for that matrix in the same run; "x" alone for the peers.
"""
import csv
import sys


def main():
    runners, files = None, []
    for a in sys.argv[1:]:
        if a.startswith("--runners="):
            runners = a.split("=", 1)[1].split(",")
        else:
            files.append(a)
    if not runners or not files:
        raise SystemExit(__doc__)
    rows = [r for f in files for r in csv.DictReader(open(f, newline=""))]
    mats = list(dict.fromkeys(r["matrix"] for r in rows))
    print("| matrix | nnz | " + " | ".join(runners) + " |")
    print("|---|---:|" + "---:|" * len(runners))
    for m in mats:
        sel = {r["runner"]: r for r in rows if r["matrix"] == m and r["status"] == "ok"}
        if not sel:
            continue
        cus = [float(r["time_us"]) for k, r in sel.items() if k.startswith("cusparse")]
        best = min(cus) if cus else None
        nnz = next(iter(sel.values()))["nnz"]
        cells = []
        for k in runners:
            r = sel.get(k)
            if r is None:
                cells.append("refused" if any(x["matrix"] == m and x["runner"] == k for x in rows) else "")
                continue
            t = float(r["time_us"])
            cell = f"{float(r['gflops']):.0f} ({100 * float(r['frac_copy']):.0f}%)"
            if best and not k.startswith("cusparse"):
                cell += f" {best / t:.2f}x"
            cells.append(cell)
        print(f"| {m} | {int(nnz):,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
