#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Draws the medians of bench/side_by_side.sh runs against issue 27's targets: one row per run directory, with
the first calls (redist's time over ScaLAPACK's and COSTA's; targets 0.5 and 1), the local copy (each library's
time over memcpy's; target 1.2 for redist) and pdgemm (redist's speedup over ScaLAPACK and COSMA; targets 1 and
1.1 on square and tall-skinny). The numbers are those of bench/side_by_side_table.py.

    python3 bench/side_by_side_plot.py OUT_DIR[+GEMM_DIR][=LABEL] [...] --out plot.png

+GEMM_DIR takes that row's pdgemm rounds from another directory's gemm.jsonl (a later GEMM-only run).
"""
import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

from side_by_side_table import first_call_rows, gemm_rows, load, local_copy_rows  # noqa: E402

SCALAPACK, PEER, REDIST = "#8c8c8c", "#e08a2c", "#2c6fb0"


def bars(ax, labels, series, log=False):
    """Grouped bars: series = [(name, colour, values)], values aligned with labels (None: no bar)."""
    width = 0.8 / len(series)
    for k, (name, colour, values) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(labels))]
        shown = [(x, v) for x, v in zip(xs, values) if v is not None]
        if not shown:
            continue
        rects = ax.bar([x for x, _ in shown], [v for _, v in shown], width, color=colour, label=name)
        ax.bar_label(rects, labels=[f"{v:.2f}" for _, v in shown], fontsize=7, padding=1)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8, rotation=20)
    top = max((v for _, _, values in series for v in values if v is not None), default=1.0)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(top=top * 2.5)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    else:
        ax.set_ylim(top=max(top, 1.2) * 1.15)


def target(ax, value, text, colour):
    ax.axhline(value, color=colour, linestyle="--", linewidth=1)
    ax.annotate(text, (1.0, value), xycoords=("axes fraction", "data"), fontsize=7, color=colour,
                ha="right", va="bottom")


def draw_row(axes, label, sweep, transform, gemm):
    first_ax, copy_ax, gemm_ax = axes
    if sweep:
        rows = first_call_rows(sweep)
        bars(first_ax, [f"{r['routine']} {r['n']}" for r in rows],
             [("redist / ScaLAPACK", SCALAPACK, [r["to_scalapack"] for r in rows]),
              ("redist / COSTA", PEER, [r["to_costa"] for r in rows])])
        target(first_ax, 0.5, "target vs ScaLAPACK", SCALAPACK)
        target(first_ax, 1.0, "target vs COSTA", PEER)
        first_ax.legend(fontsize=7, loc="upper left")
    first_ax.set_title("first call (plan + one execution): time ratio, lower is better", fontsize=9)
    first_ax.set_ylabel(label, fontsize=9, fontweight="bold")
    if transform:
        rows = local_copy_rows(transform)
        bars(copy_ax, [f"N={r['n']}" for r in rows],
             [("redist / memcpy", REDIST, [r["to_memcpy"] for r in rows]),
              ("COSTA / memcpy", PEER,
               [None if r["costa"] is None else r["costa"] / r["memcpy"] for r in rows])])
        target(copy_ax, 1.2, "target for redist", REDIST)
        copy_ax.legend(fontsize=7, loc="upper left")
    copy_ax.set_title("local copy (same layouts): time over memcpy's, lower is better", fontsize=9)
    if gemm:
        rows = gemm_rows(gemm)
        bars(gemm_ax, [r["shape"] for r in rows],
             [("redist vs ScaLAPACK", SCALAPACK, [r["vs_scalapack"] for r in rows]),
              ("redist vs COSMA", PEER, [r["vs_cosma"] for r in rows])], log=True)
        target(gemm_ax, 1.0, "target vs ScaLAPACK", SCALAPACK)
        target(gemm_ax, 1.1, "target vs COSMA", PEER)
        gemm_ax.legend(fontsize=7, loc="upper left")
    gemm_ax.set_title("pdgemm: speedup, higher is better", fontsize=9)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="OUT_DIR[+GEMM_DIR][=LABEL]")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    fig, axes = plt.subplots(len(args.runs), 3, figsize=(16, 4.2 * len(args.runs)), squeeze=False)
    for row, run in zip(axes, args.runs):
        directories, _, label = run.partition("=")
        directory, _, gemm_directory = directories.partition("+")
        results = load(directory)
        if gemm_directory:
            results = results[:2] + load(gemm_directory)[2:]
        if not any(results):
            parser.error(f"{directory}: no sweep.jsonl, transform.jsonl or gemm.jsonl with results")
        draw_row(row, label or Path(directory).name, *results)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
