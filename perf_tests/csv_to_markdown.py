#!/usr/bin/env python3
"""Turns a kspmv_perf --csv file into the Markdown tables of docs/PERFORMANCE.md.

  csv_to_markdown.py results.csv > tables.md

One table per group (L2-resident / large) and precision: a row per matrix,
a column per runner with its time (us) and % of the copy bandwidth; the
fastest runner in bold; then each kspmv format's speedup over the best
peer (Kokkos Kernels, cuSPARSE).
"""
import csv
import sys
from collections import OrderedDict


def main():
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    if not rows:
        raise SystemExit("empty csv")
    copy = float(rows[0]["copy_gbs"])
    print(f"Copy bandwidth measured in the same run: **{copy:.0f} GB/s** (device-to-device, read + write).\n")
    runners = list(OrderedDict.fromkeys(r["runner"] for r in rows))
    peers = list(OrderedDict.fromkeys(r["runner"] for r in rows if r["peer"] == "1"))
    ours = [r for r in runners if r not in peers]
    for group in OrderedDict.fromkeys(r["group"] for r in rows):
        for prec in OrderedDict.fromkeys(r["precision"] for r in rows):
            sel = [r for r in rows if r["group"] == group and r["precision"] == prec]
            if not sel:
                continue
            mats = list(OrderedDict.fromkeys(r["matrix"] for r in sel))
            print(f"\n#### {group} matrices, {prec}: time per SpMV in us (% of copy bandwidth)\n")
            print("| matrix | nnz | " + " | ".join(runners) + " |")
            print("|---|---:|" + "---:|" * len(runners))
            speed = []
            for m in mats:
                by = {r["runner"]: r for r in sel if r["matrix"] == m}
                ok = {k: float(v["time_us"]) for k, v in by.items() if v["status"] == "ok"}
                best = min(ok.values()) if ok else None
                cells = []
                for n in runners:
                    r = by.get(n)
                    if r is None:
                        cells.append("")
                    elif r["status"] != "ok":
                        cells.append(r["status"])
                    else:
                        c = f"{float(r['time_us']):.1f} ({100 * float(r['frac_copy']):.0f}%)"
                        cells.append(f"**{c}**" if float(r["time_us"]) == best else c)
                nnz = next(iter(by.values()))["nnz"]
                print(f"| {m} | {int(nnz):,} | " + " | ".join(cells) + " |")
                bp = min([ok[p] for p in peers if p in ok], default=None)
                if bp:
                    speed.append((m, {n: bp / ok[n] for n in ours if n in ok}))
            if speed:
                print(f"\nSpeedup over the best peer ({', '.join(peers)}), {group}, {prec}:\n")
                print("| matrix | " + " | ".join(ours) + " |")
                print("|---|" + "---:|" * len(ours))
                for m, sp in speed:
                    best = max(sp.values()) if sp else 0
                    cells = []
                    for n in ours:
                        if n not in sp:
                            cells.append("")
                        else:
                            c = f"{sp[n]:.2f}x"
                            cells.append(f"**{c}**" if sp[n] == best else c)
                    print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
