#!/usr/bin/env python3
"""The pictures and tables of docs/PERFORMANCE.md, from the raw kspmv_perf CSVs.

  scripts/plot_perf.py              redraw docs/perf/h100-{default,fem}-{speedup,bandwidth}.svg
  scripts/plot_perf.py --tables     print every table of docs/PERFORMANCE.md (Markdown)
  scripts/plot_perf.py --name NAME --out DIR run.csv [run.csv ...]
                                    the two pictures of any kspmv_perf --csv run

Pictures, per suite: (a) NAME-speedup.svg, the speed-up of `auto` and of the
fastest kspmv format over the fastest peer (Kokkos Kernels, cuSPARSE) per
matrix; (b) NAME-bandwidth.svg, the effective bandwidth of the fastest
peer, `auto` and the fastest format as a percentage of the copy bandwidth
measured in the same run (CSR-equivalent bytes, so above 100% is possible).
"Fastest kspmv format" is over the plain formats (caller's order, no
options). Each matrix is compared within its own run. The pictures need
matplotlib (Debian: python3-matplotlib); --tables needs nothing.
"""
import argparse
import csv
import math
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERF = os.path.join(ROOT, "docs", "perf")


def path(name):
    return os.path.join(PERF, name)


# The raw files behind docs/PERFORMANCE.md, by suite.
PART1 = path("h100-default-part1-2026-11-23.csv")        # commit 952d874, every runner
PART2_ALL = path("h100-default-part2-2026-11-23.csv")    # same run, part 2
PART2 = path("h100-default-part2-2026-11-24.csv")        # commit 1b51eb5, with set-up
FEM = path("h100-fem-2026-11-24.csv")                    # commit 1b51eb5, with set-up
AB = [path(f"h100-ab-2026-11-24-{w}.csv") for w in ("old-1", "old-2", "new-1", "new-2")]
PELLR = path("h100-pellr-2026-11-22.csv")                # commit dd29880
VECTORS = path("h100-vectors8-auto-03e8d30-2026-11-24.csv")  # --vectors 8

PICTURES = {"default": [PART1, PART2], "fem": [FEM]}

PEERS = ["kk-crs", "cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo", "cusparse-sell"]
FORMATS = ["csr", "csr-scalar", "csr-vector", "csr-adaptive", "coo", "dia", "ell", "ellr", "hyb", "pellr",
           "jad", "pkt", "evc-hyb", "ehyb"]
VARIANTS = ["hyb:hyb_k=auto", "evc-hyb:order=internal", "ehyb:order=internal"]
LABEL = {"hyb:hyb_k=auto": "hyb, model's K", "evc-hyb:order=internal": "evc-hyb, internal order",
         "ehyb:order=internal": "ehyb, internal order", "pellr:order=internal": "pellr, internal order",
         "ehyb:ehyb_min_parts_per_sm=2:order=internal": "ehyb, 2 parts per SM, internal order",
         "cusparse-csr-alg1": "cuSPARSE CSR ALG1",
         "cusparse-csr-alg2": "cuSPARSE CSR ALG2", "cusparse-coo": "cuSPARSE COO",
         "cusparse-sell": "cuSPARSE SELL", "kk-crs": "Kokkos Kernels"}
SHORT = {"laplace-3pt": "lap 3pt", "laplace-5pt": "lap 5pt", "laplace-7pt": "lap 7pt", "laplace-9pt": "lap 9pt",
         "laplace-27pt": "lap 27pt", "FEM_3D_thermal1": "FEM_3D", "delaunay_n16": "delaunay",
         "fem-cube-p1-scrambled": "cube P1 scr.", "fem-cube-p1-rcm": "cube P1 RCM",
         "fem-bracket-p1-scrambled": "bracket P1 scr.", "fem-bracket-p1-rcm": "bracket P1 RCM",
         "fem-pipe-p2-scrambled": "pipe P2 scr.", "fem-pipe-p2-rcm": "pipe P2 RCM"}


class Run:
    """One kspmv_perf --csv file (double precision): rows by (matrix, runner)."""

    def __init__(self, *files):
        self.rows, self.matrices, self.runners = {}, [], []
        for f in files:
            with open(f, newline="") as fh:
                for r in csv.DictReader(fh):
                    if r["precision"] != "double":
                        continue
                    for k in ("time_us", "frac_copy", "convert_ms", "model_us", "refresh_us", "loop_ms",
                              "copy_gbs", "block_us", "vectors"):
                        r[k] = float(r[k]) if r.get(k) not in (None, "") else None
                    r["file"] = f
                    self.rows[(r["matrix"], r["runner"])] = r
                    if r["matrix"] not in self.matrices:
                        self.matrices.append(r["matrix"])
                    if r["runner"] not in self.runners:
                        self.runners.append(r["runner"])

    def ok(self, m, k):
        r = self.rows.get((m, k))
        return r if r and r["status"] == "ok" else None

    def t(self, m, k):
        r = self.ok(m, k)
        return r["time_us"] if r else None

    def best(self, m, names):
        c = [(self.t(m, k), k) for k in names if self.t(m, k)]
        return min(c) if c else (None, None)

    def best_peer(self, m):
        return self.best(m, [k for k in self.runners if self.rows.get((m, k), {}).get("peer") == "1"])

    def best_format(self, m):
        return self.best(m, [k for k in self.runners if ":" not in k and k != "auto"
                             and self.rows.get((m, k), {}).get("peer") == "0"])

    def pick(self, m):
        """auto's pick: the plain format with the least estimate (kk-crs, the baseline,
        is not picked); None where auto's own estimate does not match it."""
        est = {k: self.ok(m, k)["model_us"] for k in self.runners
               if ":" not in k and k not in ("auto", "kk-crs") and self.ok(m, k)
               and self.rows[(m, k)]["peer"] == "0" and (self.ok(m, k)["model_us"] or 0) > 0}
        a = self.ok(m, "auto")
        if not est or not a:
            return None
        k = min(est, key=est.get)
        return k if abs(est[k] - a["model_us"]) <= 1e-6 * max(1.0, est[k]) else None


def us(t):
    if t is None:
        return "—"
    return f"{t:.2f}" if t < 10 else f"{t:.1f}" if t < 1000 else f"{t:,.0f}"


def pct(r):
    return f"{100 * r['frac_copy']:.0f}%"


def md(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def cell(run, m, k, bold_best, with_pct):
    r = run.rows.get((m, k))
    if r is None:
        return ""
    if r["status"] != "ok":
        return "—"
    s = us(r["time_us"]) + (f" ({pct(r)})" if with_pct else "")
    return f"**{s}**" if r["time_us"] == bold_best else s


def summary_rows(run, mats, with_pct):
    has_auto = all(run.ok(m, "auto") for m in mats)
    pick, fmt, xfmt, xauto, bw = ["auto's pick"], ["fastest format (caller's order)"], \
        ["fastest format × best peer"], \
        ["auto × best peer"], ["% of copy: fastest format / best peer"]
    for m in mats:
        tp, kp = run.best_peer(m)
        tf, kf = run.best_format(m)
        fmt.append(kf)
        xfmt.append(f"{tp / tf:.2f}")
        bw.append(f"{pct(run.ok(m, kf))} / {pct(run.ok(m, kp))}")
        if has_auto:
            pick.append(run.pick(m) or "not in this run")
            xauto.append(f"{tp / run.t(m, 'auto'):.2f}")
    return ([pick] if has_auto else []) + [fmt, xfmt] + ([xauto] if has_auto else []) + ([] if with_pct else [bw])


def suite_table(run, mats, runners, with_pct, extra_cols=None, extra_run=None, extra_runners=(), summary=True):
    """Rows: runners; columns: matrices (time us, % of copy), then extra_cols(run, runner)."""
    header = ["runner"] + [SHORT.get(m, m) for m in mats] + [h for h, _ in (extra_cols or [])]
    best = {m: min(t for t in (run.t(m, k) for k in runners) if t) for m in mats}
    rows = []
    for k in runners:
        rows.append([LABEL.get(k, k)] + [cell(run, m, k, best[m], with_pct) for m in mats]
                    + [f(run, k) for _, f in (extra_cols or [])])
    for k in extra_runners:
        rows.append([LABEL.get(k, k) + " †"] + [cell(extra_run, m, k, None, with_pct) for m in mats]
                    + ["" for _ in (extra_cols or [])])
    for s in summary_rows(run, mats, with_pct) if summary else []:
        rows.append([f"*{s[0]}*"] + s[1:] + ["" for _ in (extra_cols or [])])
    return md(header, rows)


def spmvs(run, m, k, key):
    r = run.ok(m, k)
    if not r or r[key] is None or r[key] <= 0:
        return None
    return (r[key] * 1000 if key == "convert_ms" else r[key]) / r["time_us"]


def n(x):
    return "—" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:.0f}" if x >= 10 else f"{x:.2f}" if x < 1 \
        else f"{x:.1f}"


def per_matrix(key, mats):
    return lambda run, k: " / ".join(n(spmvs(run, m, k, key)) for m in mats)


def median_max(key, mats):
    def f(run, k):
        v = [x for x in (spmvs(run, m, k, key) for m in mats) if x is not None]
        return f"{n(statistics.median(v))} ({n(max(v))})" if v else "—"
    return f


def validation(run):
    """kspmv_perf's own scores: estimates within 20% over the plain runners with an
    estimate (auto aside), picks within 10% of the fastest plain format (kk-crs aside)."""
    per, pairs, within, picks, good, misses = {}, 0, 0, 0, 0, []
    for m in run.matrices:
        for k in run.runners:
            r = run.ok(m, k)
            if ":" in k or k == "auto" or not r or not r["model_us"]:
                continue
            hit = abs(r["model_us"] - r["time_us"]) <= 0.2 * r["time_us"]
            pairs, within = pairs + 1, within + hit
            p = per.setdefault(k, [0, 0])
            p[0], p[1] = p[0] + hit, p[1] + 1
        k = run.pick(m)
        tb, kb = run.best(m, [x for x in run.runners if ":" not in x and x not in ("auto", "kk-crs")
                              and run.rows.get((m, x), {}).get("peer") == "0"])
        if k:
            picks += 1
            regret = run.t(m, k) / tb
            good += regret <= 1.10
            if regret > 1.10:
                misses.append(f"{m}: {k} {us(run.t(m, k))} us, {kb} {us(tb)} us ({regret:.2f}x)")
    return per, pairs, within, picks, good, misses


def tables():
    p1, p2, p2all, fem = Run(PART1), Run(PART2), Run(PART2_ALL), Run(FEM)
    print("<!-- default suite, part 1 -->")
    print(suite_table(p1, p1.matrices, PEERS + FORMATS + VARIANTS + ["auto"], False))
    print("\n<!-- default suite, part 2 -->")
    newer = [k for k in PEERS + FORMATS + ["auto"] if k in p2.runners]
    older = [k for k in PEERS + FORMATS + VARIANTS if k not in p2.runners]
    print(suite_table(p2, p2.matrices, newer, True,
                      [("conversion, SpMVs", per_matrix("convert_ms", p2.matrices)),
                       ("refresh, SpMVs", per_matrix("refresh_us", p2.matrices))], p2all, older))
    print("\n<!-- FEM suite -->")
    print(suite_table(fem, fem.matrices, [k for k in PEERS + FORMATS + ["auto"] if k in fem.runners], True,
                      [("conversion, SpMVs: median (max)", median_max("convert_ms", fem.matrices)),
                       ("refresh, SpMVs: median (max)", median_max("refresh_us", fem.matrices))]))

    both = Run(FEM, PART2)
    print("\n<!-- solve loop: convert + 5 x (refresh + 100 SpMVs), ms -->")
    rows = []
    for m in both.matrices:
        tf, kf = both.best_format(m)
        a, c = both.ok(m, "auto")["loop_ms"], both.ok(m, "cusparse-csr-alg1")["loop_ms"]
        rows.append([m, both.pick(m), f"{a:,.1f}", f"{c:,.1f}", f"{c / a:.2f}",
                     f"{kf}: {both.ok(m, kf)['loop_ms']:,.1f}"])
    print(md(["matrix", "auto's pick", "auto", "cuSPARSE CSR ALG1", "ALG1 / auto", "fastest SpMV format's loop"],
             rows, ["---", "---", "---:", "---:", "---:", "---"]))

    print("\n<!-- old binary (host conversions) against the new (device conversions): SpMV time new / old -->")
    o1, o2, n1, n2 = (Run(f) for f in AB)
    names = {"lap3d:200": "laplace-7pt-8M", "fem:cube-sphere-hole.msh.gz:p1:refine=2:order=scrambled":
             "fem-cube-p1-scrambled"}
    rows = [[names.get(m, m)] + [f"{min(n1.t(m, k), n2.t(m, k)) / min(o1.t(m, k), o2.t(m, k)):.3f}"
                                 if o1.t(m, k) else "—" for k in o1.runners] for m in o1.matrices]
    print(md(["matrix"] + [LABEL.get(k, k) for k in o1.runners], rows))

    print("\n<!-- the model: estimates within 20% and picks within 10%, per format -->")
    runs = [("default suite (952d874)", Run(PART1, PART2_ALL)), ("FEM suite (1b51eb5)", fem),
            ("default part 2 (1b51eb5)", p2)]
    scores = [validation(r) for _, r in runs]
    fmts = [x for x in FORMATS + ["kk-crs"] if any(x in sc[0] for sc in scores)]
    rows = [[name] + [f"{sc[0][k][0]}/{sc[0][k][1]}" if k in sc[0] else "" for k in fmts]
            + [f"{sc[2]}/{sc[1]} ({100 * sc[2] / sc[1]:.0f}%)", f"{sc[4]}/{sc[3]}"]
            for (name, _), sc in zip(runs, scores)]
    print(md(["run"] + [LABEL.get(k, k) for k in fmts] + ["all", "picks"], rows))
    for (name, _), sc in zip(runs, scores):
        for miss in sc[5]:
            print(f"<!-- pick miss, {name}: {miss} -->")

    if os.path.exists(VECTORS):
        print("\n<!-- --vectors 8: Y = A X for 8 columns -->")
        vectors_table(Run(VECTORS))

    print("\n<!-- pellr suite (dd29880): ELLR against PELLR, one line -->")
    pr = Run(PELLR)
    ratio = {m: pr.t(m, "ellr") / pr.t(m, "pellr") for m in pr.matrices}
    spread = [m for m in ("normal-1M-s15", "normal-1M-s25", "uniform-1M", "memplus", "raefsky1") if m in ratio]
    never = [m for m in pr.matrices if pr.t(m, "pellr:pellr_sort=never") < 0.95 * pr.t(m, "pellr")]
    print(f"ELLR / PELLR: {min(ratio[m] for m in spread):.2f}-{max(ratio[m] for m in spread):.2f} where row lengths "
          f"spread ({', '.join(spread)}); {min(ratio.values()):.2f}-{max(ratio.values()):.2f} over all "
          f"{len(ratio)}; never sorting over 5% faster than its choice on: {', '.join(never)}")


def vectors_table(run):
    """--vectors k: per vector, the kspmv format with the least block time against its
    own one SpMV, cuSPARSE's SpMM (best algorithm) and Kokkos Kernels' multivector SpMV."""
    rows, own, vs = [], [], []
    for m in run.matrices:
        blocks = [(r["block_us"] / r["vectors"], k) for (mm, k), r in run.rows.items()
                  if mm == m and r["status"] == "ok" and r["peer"] == "0" and k != "kk-crs" and (r["block_us"] or 0) > 0]
        if not blocks:
            continue
        b, k = min(blocks)
        r = run.ok(m, k)
        c = run.ok(m, "cusparse-csr-alg1")
        cb = c["block_us"] / c["vectors"] if c and c["block_us"] else None
        own.append(b / r["time_us"])
        if cb:
            vs.append(cb / b)
        rows.append([m, f"{k} ({r['block_how']})", us(b), f"{b / r['time_us']:.2f}",
                     f"{us(cb)} ({c['block_how']})" if cb else "—", f"{cb / b:.2f}" if cb else "—"])
    k = int(next(iter(run.rows.values()))["vectors"])
    print(md(["matrix", "fastest kspmv format", "us per vector", "/ its one SpMV", "cuSPARSE SpMM per vector",
              "SpMM / kspmv"], rows, ["---", "---", "---:", "---:", "---", "---:"]))
    g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print(f"\ngeomean over {len(own)} matrices, k = {k}: per vector {g(own):.2f}x one SpMV, "
          f"{g(vs):.2f}x faster than cuSPARSE SpMM per vector")


def suite_points(files):
    run = Run(*files)
    pts = []
    for m in run.matrices:
        tp, kp = run.best_peer(m)
        tf, kf = run.best_format(m)
        a = run.ok(m, "auto")
        if not tp or not tf:
            continue
        pts.append(dict(m=m, peer=kp, tp=tp, fmt=kf, tf=tf, ta=a["time_us"] if a else None, pick=run.pick(m),
                        bp=100 * run.ok(m, kp)["frac_copy"], bf=100 * run.ok(m, kf)["frac_copy"],
                        ba=100 * a["frac_copy"] if a else 0))
    if not pts:
        raise SystemExit("no matrix with both a peer and a kspmv format in " + ", ".join(files))
    return pts


def draw(name, files, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "svg.fonttype": "none", "svg.hashsalt": "kspmv"})
    pts = suite_points(files)[::-1]  # first matrix on top
    src = ", ".join(os.path.relpath(f, ROOT) for f in files)
    ylab = [p["m"] for p in pts]
    y = range(len(pts))
    h = 0.38

    fig, ax = plt.subplots(figsize=(8, 0.42 * len(pts) + 1.6))
    sa = [p["tp"] / p["ta"] if p["ta"] else 0 for p in pts]
    sf = [p["tp"] / p["tf"] for p in pts]
    ax.barh([i + h / 2 for i in y], sf, h, color="#e6842a", label="fastest kspmv format")
    ax.barh([i - h / 2 for i in y], sa, h, color="#3b75af", label="auto (the model's pick)")
    for i, p in enumerate(pts):
        ax.text(sf[i] + 0.02, i + h / 2, f"{sf[i]:.2f}  {p['fmt']}", va="center", fontsize=8)
        if p["ta"]:
            ax.text(sa[i] + 0.02, i - h / 2, f"{sa[i]:.2f}  {p['pick'] or ''}", va="center", fontsize=8)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(list(y), ylab)
    ax.set_xlim(0, max(sf + sa) * 1.3)
    ax.set_xlabel("speed-up over the fastest peer (Kokkos Kernels, cuSPARSE) in the same run")
    ax.set_title(f"{title}: SpMV speed-up over the best peer (H100, double)", fontsize=10, pad=22)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, fontsize=8, frameon=False)
    fig.text(0.01, 0.005, f"data: {src}", fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(os.path.join(out, f"{name}-speedup.svg"), metadata={"Date": None})
    plt.close(fig)

    h = 0.27
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(pts) + 1.6))
    bars = [("bp", "peer", "#9a9a9a", "fastest peer"), ("ba", "pick", "#3b75af", "auto"),
            ("bf", "fmt", "#e6842a", "fastest kspmv format")]
    for j, (key, lab, col, legend) in enumerate(bars):
        off = (1 - j) * h
        ax.barh([i + off for i in y], [p[key] for p in pts], h, color=col, label=legend)
        for i, p in enumerate(pts):
            if p[key]:
                ax.text(p[key] + 1, i + off, f"{p[key]:.0f}%  {p[lab] or ''}", va="center", fontsize=7.5)
    ax.axvline(100, color="black", lw=0.8)
    ax.set_yticks(list(y), ylab)
    ax.set_xlim(0, max(max(p["bp"], p["ba"], p["bf"]) for p in pts) * 1.35)
    ax.set_xlabel("effective bandwidth (CSR-equivalent bytes) as % of the copy bandwidth of the same run")
    ax.set_title(f"{title}: % of copy bandwidth (H100, double)", fontsize=10, pad=22)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, fontsize=8, frameon=False)
    fig.text(0.01, 0.005, f"data: {src}", fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(os.path.join(out, f"{name}-bandwidth.svg"), metadata={"Date": None})
    plt.close(fig)
    print("wrote", os.path.join(out, f"{name}-speedup.svg"), os.path.join(out, f"{name}-bandwidth.svg"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", action="store_true", help="print the tables of docs/PERFORMANCE.md")
    ap.add_argument("--name", help="picture names NAME-speedup.svg, NAME-bandwidth.svg (with CSV files)")
    ap.add_argument("--out", default=".", help="folder for the pictures of CSV files (default .)")
    ap.add_argument("csv", nargs="*", help="kspmv_perf --csv files of one suite")
    a = ap.parse_args()
    if a.tables:
        tables()
    elif a.csv:
        draw(a.name or "results", a.csv, a.out, a.name or "results")
    else:
        draw("h100-default", PICTURES["default"], PERF, "Default suite")
        draw("h100-fem", PICTURES["fem"], PERF, "FEM suite")


if __name__ == "__main__":
    main()
