#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots a scalapack_sweep JSON: redist's speedup over ScaLAPACK against N, one line per source block size,
one panel per routine, with the 3x target drawn in.

    python3 bench/scalapack_sweep_plot.py sweep.json [out.png]    (default: sweep.png next to the JSON)
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    source = Path(sys.argv[1])
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    result = json.loads(source.read_text())
    routines = sorted({p["routine"] for p in result["points"]})
    figure, axes = plt.subplots(1, len(routines), figsize=(5.5 * len(routines), 4), squeeze=False)
    for axis, routine in zip(axes[0], routines):
        points = [p for p in result["points"] if p["routine"] == routine]
        for block in sorted({p["source_block"] for p in points}):
            line = sorted((p["n"], p["speedup"]) for p in points if p["source_block"] == block)
            axis.plot([n for n, _ in line], [s for _, s in line], marker="o", label=f"{block}x{block} -> 128x128")
        axis.axhline(3.0, color="grey", linestyle="--", linewidth=1, label="3x target")
        axis.axhline(1.0, color="black", linewidth=0.5)
        axis.set_title(f"{routine}: redist vs ScaLAPACK ({result['ranks']} ranks, {result['grid']})", fontsize=9)
        axis.set_xlabel("N (N x N doubles)")
        axis.set_ylabel("speedup (ScaLAPACK time / redist time)")
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    print(target)


if __name__ == "__main__":
    main()
