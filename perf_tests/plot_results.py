#!/usr/bin/env python3
"""Plots a kspmv_perf --csv file as two SVG pictures (no dependencies).

  plot_results.py results.csv [--out-prefix PREFIX]

PREFIX-roofline.svg: per matrix, bars of each format's effective bandwidth
as a percentage of the copy bandwidth measured in the same run.
PREFIX-speedup.svg: each kspmv format's speedup over the best peer
(kk-crs, cuSPARSE) against the matrix's mean row length (log scale).
"""
import argparse
import csv
import math
from collections import OrderedDict

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def load(path):
    rows = []
    with open(path, newline="") as f:  # csv reads quoted line breaks itself
        for r in csv.DictReader(f):
            if r["status"] != "ok":
                continue
            for k in ("time_us", "gflops", "eff_gbs", "frac_copy", "rows", "nnz"):
                r[k] = float(r[k])
            r["peer"] = r["peer"] == "1"
            rows.append(r)
    return rows


def roofline_svg(rows, path):
    keys = list(OrderedDict.fromkeys((r["matrix"], r["precision"]) for r in rows))
    runners = list(OrderedDict.fromkeys(r["runner"] for r in rows))
    color = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(runners)}
    bar, gap, left, top, height = 7, 18, 60, 40, 260
    group_w = bar * len(runners) + gap
    width = left + group_w * len(keys) + 220
    ymax = max(120.0, max(100 * r["frac_copy"] for r in rows) * 1.05)
    y = lambda v: top + height - height * v / ymax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 150}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="14">Effective bandwidth (CSR 32-bit minimum bytes) as % of the '
           f'measured copy bandwidth</text>']
    for v in range(0, int(ymax) + 1, 20):
        out.append(f'<line x1="{left}" x2="{left + group_w * len(keys)}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="{"#000" if v == 100 else "#ddd"}"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}%</text>')
    for gi, (m, p) in enumerate(keys):
        x0 = left + gi * group_w
        for ri, n in enumerate(runners):
            match = [r for r in rows if r["matrix"] == m and r["precision"] == p and r["runner"] == n]
            if not match:
                continue
            v = 100 * match[0]["frac_copy"]
            out.append(f'<rect x="{x0 + ri * bar}" y="{y(v):.1f}" width="{bar - 1}" height="{y(0) - y(v):.1f}" '
                       f'fill="{color[n]}"><title>{esc(m)} {esc(n)}: {v:.1f}%</title></rect>')
        label = esc(m if p == "double" else f"{m} ({p})")
        cx = x0 + bar * len(runners) / 2
        out.append(f'<text transform="translate({cx:.1f},{top + height + 10}) rotate(45)">{label}</text>')
    for ri, n in enumerate(runners):
        ly = top + 14 * ri
        lx = left + group_w * len(keys) + 20
        out.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{color[n]}"/>')
        out.append(f'<text x="{lx + 14}" y="{ly + 9}">{esc(n)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def speedup_svg(rows, path):
    best_peer = {}
    for r in rows:
        if r["peer"]:
            k = (r["matrix"], r["precision"])
            best_peer[k] = min(best_peer.get(k, 1e30), r["time_us"])
    pts = [(r["nnz"] / max(r["rows"], 1), best_peer[(r["matrix"], r["precision"])] / r["time_us"], r)
           for r in rows if not r["peer"] and (r["matrix"], r["precision"]) in best_peer]
    if not pts:
        return
    runners = list(OrderedDict.fromkeys(p[2]["runner"] for p in pts))
    color = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(runners)}
    left, top, w, h = 70, 40, 620, 360
    xs = [math.log10(max(p[0], 0.5)) for p in pts]
    xlo, xhi = math.floor(min(xs)), math.ceil(max(xs) + 1e-9)
    smax = max(2.0, max(p[1] for p in pts) * 1.1)
    X = lambda v: left + w * (math.log10(max(v, 0.5)) - xlo) / max(xhi - xlo, 1)
    Y = lambda s: top + h - h * s / smax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + w + 200}" height="{top + h + 60}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="14">Speedup over the best peer (Kokkos Kernels, cuSPARSE) vs. '
           f'mean row length</text>',
           f'<line x1="{left}" x2="{left + w}" y1="{Y(1):.1f}" y2="{Y(1):.1f}" stroke="#000"/>']
    for e in range(xlo, xhi + 1):
        out.append(f'<text x="{X(10 ** e):.1f}" y="{top + h + 16}" text-anchor="middle">{10 ** e:g}</text>')
    s = 0.0
    while s <= smax:
        out.append(f'<text x="{left - 6}" y="{Y(s) + 4:.1f}" text-anchor="end">{s:.1f}x</text>')
        s += 0.5
    out.append(f'<text x="{left + w / 2}" y="{top + h + 36}" text-anchor="middle">nonzeros per row (mean)</text>')
    for mean, sp, r in pts:
        out.append(f'<circle cx="{X(mean):.1f}" cy="{Y(sp):.1f}" r="4" fill="{color[r["runner"]]}" '
                   f'fill-opacity="0.8"><title>{esc(r["matrix"])} {esc(r["runner"])}: {sp:.2f}x</title></circle>')
    for i, n in enumerate(runners):
        out.append(f'<circle cx="{left + w + 30}" cy="{top + 14 * i + 5}" r="4" fill="{color[n]}"/>')
        out.append(f'<text x="{left + w + 40}" y="{top + 14 * i + 9}">{esc(n)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out-prefix", default="kspmv_perf")
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        raise SystemExit("no successful results in " + a.csv)
    roofline_svg(rows, a.out_prefix + "-roofline.svg")
    speedup_svg(rows, a.out_prefix + "-speedup.svg")
    print("wrote", a.out_prefix + "-roofline.svg", a.out_prefix + "-speedup.svg")


if __name__ == "__main__":
    main()
