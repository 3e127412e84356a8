#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""scripts/plot-bench.py — PNG charts from the benchmarks' `name key=value ... ratio=...` lines.

Usage: scripts/plot-bench.py [FILE...] [-o OUTDIR]   (no FILE: reads stdin; the shebang is
Debian's /usr/bin/python3, where python3-matplotlib lives: any python3 with matplotlib works)

Reads the stdout of bench/* (several runs may be concatenated: each bar is the median of
the values seen, with the range over runs as an error bar) and writes, into OUTDIR
(default: the current directory), one chart per benchmark found:
  ldlt_vs_peers.png  per matrix, stardiff's factor time / each peer's (log scale; < 1:
                     stardiff faster), and stardiff's analysis time / cholmod_analyze's
  pf_vs_peers.png    per case, each phase's time / the analytic Jacobian's, and the
                     Newton solve against the published ExaPF and MATPOWER times
  NAME.png           any other benchmark: its ratio= values, one bar per line
Prints the paths it wrote. Exit 0 when at least one chart was written, 1 when the input
held no benchmark line, 2 on bad usage. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import os
import shlex
import statistics
import sys
from collections import OrderedDict, defaultdict


def parse_line(line):
    """('name', [positional words], {key: value}) or None for a line that is not a benchmark's."""
    try:
        toks = shlex.split(line)
    except ValueError:
        toks = line.split()
    if len(toks) < 2 or "=" in toks[0]:
        return None
    words, kv = [], {}
    for t in toks[1:]:
        if "=" in t:
            k, v = t.split("=", 1)
            kv[k] = v
        else:
            words.append(t)
    if not kv:
        return None
    return toks[0], words, kv


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if x == x and x not in (float("inf"), float("-inf")) else None


class Series:
    """values[group][bar] -> list of floats, groups and bars in first-seen order."""

    def __init__(self):
        self.values = OrderedDict()
        self.bars = []

    def add(self, group, bar, value):
        if value is None:
            return
        self.values.setdefault(group, OrderedDict()).setdefault(bar, []).append(value)
        if bar not in self.bars:
            self.bars.append(bar)

    def __bool__(self):
        return bool(self.values)


def plt_colors(b, nb):
    """Bar colour b of nb: matplotlib's default cycle, tab20 beyond its 10 colours."""
    import matplotlib

    return matplotlib.colormaps["tab20"](b % 20) if nb > 10 else f"C{b}"


def grouped_bars(ax, series, ylabel, title, log=True, ref=1.0):
    import numpy as np

    groups = list(series.values)
    nb = max(1, len(series.bars))
    width = 0.8 / nb
    x = np.arange(len(groups))
    for b, bar in enumerate(series.bars):
        med, lo, hi, xs = [], [], [], []
        for g, group in enumerate(groups):
            vals = series.values[group].get(bar)
            if not vals:
                continue
            m = statistics.median(vals)
            xs.append(x[g] - 0.4 + width * (b + 0.5))
            med.append(m)
            lo.append(m - min(vals))
            hi.append(max(vals) - m)
        if med:
            color = plt_colors(b, nb)
            ax.bar(xs, med, width, yerr=[lo, hi] if any(lo) or any(hi) else None, label=bar, capsize=2, color=color)
    if ref is not None:
        ax.axhline(ref, color="black", linewidth=0.8)
    if log:
        ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series.bars) > 1:
        ax.legend(fontsize=7)


def save(fig, outdir, name, written):
    path = os.path.join(outdir, name + ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    written.append(path)


def plot_ldlt(records, outdir, written, plt):
    times = defaultdict(lambda: defaultdict(list))  # matrix -> solver -> factor_s
    analyze = Series()
    for words, kv in records:
        if words == ["solver"] and kv.get("status") == "ok":
            t = num(kv.get("factor_s"))
            if t is not None and t > 0:
                times[kv["matrix"]][kv["solver"]].append(t)
        elif not words and "matrix" in kv and "analyze_ratio" in kv:
            analyze.add(kv["matrix"], "stardiff / cholmod_analyze", num(kv["analyze_ratio"]))
    factor = Series()
    for matrix, by_solver in times.items():
        if "stardiff" not in by_solver:
            continue
        sd = statistics.median(by_solver["stardiff"])
        for solver, ts in by_solver.items():
            if solver != "stardiff":
                for t in ts:
                    factor.add(matrix, solver, sd / t)
    if not factor and not analyze:
        return
    panels = [p for p in (factor, analyze) if p]
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(6, 0.9 * len(times) + 3), 3.6 * len(panels)),
                             squeeze=False)
    k = 0
    if factor:
        grouped_bars(axes[k][0], factor, "stardiff time / peer time",
                     "ldlt_vs_peers: numeric factorization (< 1: stardiff faster)")
        k += 1
    if analyze:
        grouped_bars(axes[k][0], analyze, "stardiff / cholmod_analyze", "ldlt_vs_peers: analysis")
    save(fig, outdir, "ldlt_vs_peers", written)
    plt.close(fig)


def plot_pf(records, outdir, written, plt):
    phases = Series()
    newton = Series()
    for words, kv in records:
        case, what = kv.get("case"), kv.get("what")
        if not case or not what or what == "agreement":
            continue
        phases.add(case, what, num(kv.get("ratio")))
        if what == "newton_starpu" and "exapf_s" in kv:
            newton.add(case, "stardiff", num(kv.get("median_s")))
            newton.add(case, "ExaPF (published)", num(kv.get("exapf_s")))
            newton.add(case, "MATPOWER (published)", num(kv.get("matpower_s")))
    if not phases:
        return
    panels = [p for p in (phases, newton) if p]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.8 * len(panels)), squeeze=False)
    grouped_bars(axes[0][0], phases, "time / analytic Jacobian", "pf_vs_peers: phases per case")
    if newton:
        grouped_bars(axes[1][0], newton, "seconds", "pf_vs_peers: full Newton solve", ref=None)
    save(fig, outdir, "pf_vs_peers", written)
    plt.close(fig)


def plot_generic(name, records, outdir, written, plt):
    s = Series()
    for words, kv in records:
        r = num(kv.get("ratio"))
        if r is None:
            continue
        label = " ".join(words + [f"{k}={v}" for k, v in kv.items() if k in ("case", "matrix", "what", "n", "sched")])
        s.add(label or name, "ratio", r)
    if not s:
        return
    fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(s.values) + 3), 3.6))
    grouped_bars(ax, s, "ratio", f"{name}: ratio", log=False)
    save(fig, outdir, name, written)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description="PNG charts from benchmark key=value lines")
    ap.add_argument("files", nargs="*", help="benchmark output files (default: stdin)")
    ap.add_argument("-o", "--outdir", default=".", help="where the PNGs go (default: .)")
    a = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot-bench: matplotlib is missing (Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 2
    by_name = OrderedDict()
    streams = [open(f, encoding="utf-8", errors="replace") for f in a.files] if a.files else [sys.stdin]
    for st in streams:
        for line in st:
            p = parse_line(line.strip())
            if p:
                by_name.setdefault(p[0], []).append((p[1], p[2]))
    os.makedirs(a.outdir, exist_ok=True)
    written = []
    for name, records in by_name.items():
        if name == "ldlt_vs_peers":
            plot_ldlt(records, a.outdir, written, plt)
        elif name == "pf_vs_peers":
            plot_pf(records, a.outdir, written, plt)
        else:
            plot_generic(name, records, a.outdir, written, plt)
    for w in written:
        print(w)
    if not written:
        print("plot-bench: no benchmark lines with values to plot", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
