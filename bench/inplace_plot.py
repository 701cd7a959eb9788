#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots an inplace_bench JSON file: one row per count pattern (the paper's cases 1-4), the time of every
method (left, log scale) and its peak memory rise per rank (right, VmHWM delta, max over ranks), bars grouped
by the data size per rank. Methods that did not run (chunked refusing an input, MPI_IN_PLACE on asymmetric
counts) leave a gap marked "n/a".

    python3 bench/inplace_plot.py bench/results/inplace_bench_np8.json --out bench/results/inplace_bench.png
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METHODS = ["auto", "chunked", "pairwise", "bitonic", "mpi_in_place", "mpi_alltoallv"]
LABELS = {
    "auto": "in place: auto",
    "chunked": "in place: chunked",
    "pairwise": "in place: pairwise",
    "bitonic": "in place: bitonic",
    "mpi_in_place": "MPI_Alltoallv(MPI_IN_PLACE)",
    "mpi_alltoallv": "MPI_Alltoallv (out of place)",
}
MiB = 1024.0 * 1024.0


# Per-rank statistics renamed to the project's vocabulary (docs/names.md); older result files are read with
# the new names.
RENAMED_FIELDS = {"bytes_moved_locally": "bytes_local"}


def load(path):
    run = json.loads(path.read_text())
    for case in run["cases"]:
        for m in case["methods"]:
            for old, new in RENAMED_FIELDS.items():
                if old in m and new not in m:
                    m[new] = m.pop(old)
    return run


def method(case, name):
    # Results before the one name table called auto "automatic".
    names = {name, "automatic"} if name == "auto" else {name}
    return next((m for m in case["methods"] if m["name"] in names), None)


def bars(axis, cases, value, ylabel, title, log):
    sizes = [c["size"] for c in cases]
    width = 0.8 / len(METHODS)
    for k, name in enumerate(METHODS):
        xs, hs = [], []
        for i, c in enumerate(cases):
            m = method(c, name)
            x = i + (k - (len(METHODS) - 1) / 2) * width
            if m is None or not m["ran"]:
                axis.text(x, 0.02, "n/a", transform=axis.get_xaxis_transform(), rotation=90, ha="center",
                          va="bottom", fontsize=6, color="gray")
                continue
            xs.append(x)
            hs.append(value(m))
        axis.bar(xs, hs, width, label=LABELS[name])
    axis.set_xticks(range(len(sizes)))
    axis.set_xticklabels([f"{s} per rank" for s in sizes])
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=9)
    if log:
        axis.set_yscale("log")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("result", type=Path)
    parser.add_argument("--out", type=Path, default=Path("inplace_bench.png"))
    args = parser.parse_args()
    run = load(args.result)
    numbers = sorted({c["case"] for c in run["cases"]})
    figure, axes = plt.subplots(len(numbers), 2, figsize=(14, 3.6 * len(numbers)), squeeze=False)
    where = f"{run['ranks']} ranks, {run['element_bytes']}-byte elements"
    for row, number in zip(axes, numbers):
        cases = sorted((c for c in run["cases"] if c["case"] == number), key=lambda c: c["size_bytes"])
        bars(row[0], cases, lambda m: m["seconds"], "seconds (median)", f"case {number}: time ({where})", log=True)
        bars(row[1], cases, lambda m: max(m["peak_rise_bytes"], 0) / MiB, "MiB",
             f"case {number}: peak memory rise per rank (VmHWM, max over ranks; "
             f"work buffer {run['work_bytes'] / MiB:.0f} MiB)", log=False)
    axes[0][1].legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
