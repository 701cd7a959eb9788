#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots exchange_bench JSON files (e.g. 8 and 16 ranks), one row each: per pattern, the time per exchange of
every strategy relative to MPICH's MPI_Neighbor_alltoallv_init (left; below 1 is faster), the inter-region
messages of the busiest rank (middle) and the total inter-region bytes (right) of standard, aggregate, dedup.

    python3 bench/exchange_plot.py np8.json np16.json --out exchange_bench.png
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIMED = ["standard", "aggregate", "dedup", "auto"]
COUNTED = ["standard", "aggregate", "dedup"]


def bars(axis, patterns, names, value, ylabel, title, log=False) -> None:
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        heights = [value(p, name) for p in patterns]
        axis.bar([i + (k - (len(names) - 1) / 2) * width for i in range(len(patterns))], heights, width, label=name)
    axis.set_xticks(range(len(patterns)))
    axis.set_xticklabels([p["name"].replace(".mtx", "") for p in patterns], rotation=60, ha="right", fontsize=7)
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=9)
    if log:
        axis.set_yscale("log")
    axis.legend(fontsize=7)


def variant(pattern, name):
    return next(v for v in pattern["variants"] if v["name"] == name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("exchange_bench.png"))
    args = parser.parse_args()
    runs = [json.loads(path.read_text()) for path in args.results]
    figure, axes = plt.subplots(len(runs), 3, figsize=(16, 4.2 * len(runs)), squeeze=False)
    for row, run in zip(axes, runs):
        patterns = run["patterns"]
        where = f"{run['ranks']} ranks"
        mpi = {p["name"]: variant(p, "mpi")["seconds_per_exchange"] for p in patterns}
        bars(row[0], patterns, TIMED, lambda p, n: variant(p, n)["seconds_per_exchange"] / mpi[p["name"]],
             "time / MPI's", f"{where}: time per exchange relative to MPI_Neighbor_alltoallv_init")
        row[0].axhline(1.0, color="black", linewidth=0.5)
        bars(row[1], patterns, COUNTED, lambda p, n: variant(p, n)["inter_region_messages"]["max"],
             "messages", f"{where}: inter-region messages, busiest rank")
        bars(row[2], patterns, COUNTED, lambda p, n: variant(p, n)["inter_region_bytes"]["total"],
             "bytes", f"{where}: inter-region bytes, all ranks", log=True)
    figure.tight_layout()
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
