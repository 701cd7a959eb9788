#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots one or more gemm_bench JSON files (e.g. 4 and 8 ranks): per shape, redist's speedup over ScaLAPACK's
pdgemm (left) and the I/O per rank of redist's schedule (inputs as loaded plus output, the paper's count)
relative to the Eq. 33 lower bound (right).

    python3 bench/gemm_plot.py out4.json [out8.json ...] --out gemm.png
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def finish_axis(axis, ticks, names, target, target_label, ylabel, title) -> None:
    axis.axhline(1.0, color="black", linewidth=0.5)
    axis.axhline(target, color="grey", linestyle="--", linewidth=1, label=target_label)
    axis.set_xticks(ticks)
    axis.set_xticklabels(names)
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs = [json.loads(path.read_text()) for path in args.results]
    target = args.out or args.results[0].with_suffix(".png")
    names = [s["name"] for s in runs[0]["shapes"]]
    width = 0.8 / len(runs)
    figure, (speed, volume) = plt.subplots(1, 2, figsize=(12, 4.2))
    for index, run in enumerate(runs):
        by_name = {s["name"]: s for s in run["shapes"]}
        xs = [x + index * width for x in range(len(names))]
        speed.bar(xs, [by_name[n]["speedup"] if n in by_name else 0 for n in names], width,
                  label=f"{run['ranks']} ranks")
        redist_ratio = [by_name[n]["ratio_to_lower_bound"] if n in by_name else 0 for n in names]
        volume.bar(xs, redist_ratio, width, label=f"redist, {run['ranks']} ranks")
    speed.set_yscale("log")
    ticks = [x + 0.4 - width / 2 for x in range(len(names))]
    finish_axis(speed, ticks, names, 3.0, "3x target (square)", "speedup (pdgemm time / redist time)",
                "redist_pdgemm vs ScaLAPACK pdgemm, block-cyclic inputs")
    finish_axis(volume, ticks, names, 1.1, "10% above the bound", "I/O per rank / Eq. 33 lower bound",
                "communication of redist's schedule relative to the lower bound")
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    print(target)


if __name__ == "__main__":
    main()
