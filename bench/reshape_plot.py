#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots reshape_bench JSON files, one file per run (e.g. 2, 4, 8, 16 ranks): one panel per case (the 3-D FFT
reshapes), the median time of redist, MPI_Alltoallw with subarray types and pack + MPI_Alltoallv + unpack
against the number of ranks (log-log), with each rank's memcpy floor dotted. Runs of different N are drawn as
separate lines (one line style per N). With --table it also prints the ratio, storage-order, relabeling and
node-buffer tables of bench/results/reshape.md (Markdown) for the same files.

    python3 bench/reshape_plot.py np2.json np4.json np8.json --out bench/results/reshape_bench.png [--table]
"""
import argparse
import json
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = ["brick_to_x_pencil", "x_to_y_pencil", "x_to_y_pencil_contiguous", "y_to_z_pencil", "z_pencil_to_brick"]
METHODS = [("redist", "redist", "C0"), ("alltoallw", "MPI_Alltoallw (subarrays)", "C1"),
           ("alltoallv", "pack + MPI_Alltoallv + unpack", "C2")]
LINE_STYLES = ["-", "--", "-.", ":"]


def print_table(header, rows):
    """One Markdown table: the header cells, then one row of cells per entry."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    print()


def print_tables(runs):
    """Ratios are baseline median / redist median (> 1: redist faster); the floor ratio is redist / memcpy."""
    runs = sorted(runs, key=lambda run: (run["n"], run["ranks"]))
    cases = [(run, c) for run in runs for c in run["cases"]]
    print_table(["N", "ranks", "case", "redist s", "alltoallw / redist", "alltoallv / redist",
                 "redist / memcpy floor", "bytes off rank", "messages"],
                [[run["n"], run["ranks"], c["case"], f"{c['redist_seconds']:.4f}", f"{c['alltoallw_over_redist']:.2f}",
                  f"{c['alltoallv_over_redist']:.2f}", f"{c['redist_seconds'] / c['memcpy_seconds']:.2f}",
                  f"{c['bytes_off_rank'] >> 20} MiB", c["messages"]] for run, c in cases])
    print_table(["N", "ranks", "storage-order change / plain reshape: redist", "MPI_Alltoallw", "pack + alltoallv"],
                [[run["n"], run["ranks"], f"{cost['redist']:.2f}", f"{cost['alltoallw']:.2f}",
                  f"{cost['alltoallv']:.2f}"] for run in runs for cost in [run.get("storage_order_cost")] if cost])
    print_table(["N", "ranks", "case", "bytes off rank, fixed output boxes", "with redist_relabel = exact",
                 "time fixed / relabeled"],
                [[run["n"], run["ranks"], c["case"], f"{c['bytes_off_rank'] >> 20} MiB ({c['messages']} messages)",
                  f"{c['relabeled_bytes_off_rank'] >> 20} MiB ({c['relabeled_messages']})",
                  f"{c['redist_seconds'] / c['relabeled_redist_seconds']:.2f}"]
                 for run, c in cases if "relabeled_redist_seconds" in c])
    print_table(["N", "ranks", "case", "redist s, input private", "input in a node buffer",
                 "alltoallw / redist (node buffer)", "alltoallv / redist (node buffer)"],
                [[run["n"], run["ranks"], c["case"], f"{c['redist_seconds']:.4f}",
                  f"{c['redist_node_buffer_seconds']:.4f}", f"{c['alltoallw_over_redist_node_buffer']:.2f}",
                  f"{c['alltoallv_over_redist_node_buffer']:.2f}"]
                 for run, c in cases if "redist_node_buffer_seconds" in c])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json_paths", nargs="+", help="reshape_bench JSON outputs, one per run")
    parser.add_argument("--out", default=None, help="PNG path (default: the first JSON path with .png)")
    parser.add_argument("--table", action="store_true", help="print the Markdown tables too")
    args = parser.parse_args()
    runs = [json.loads(Path(p).read_text()) for p in args.json_paths]
    if args.table:
        print_tables(runs)
    sizes = sorted({run["n"] for run in runs})
    present = [c for c in CASES if any(case["case"] == c for run in runs for case in run["cases"])]
    fig, axes = plt.subplots(1, len(present), figsize=(4.2 * len(present), 4.2), squeeze=False)
    for axis, name in zip(axes[0], present):
        for s, n in enumerate(sizes):
            points = sorted((run["ranks"], case) for run in runs if run["n"] == n
                            for case in run["cases"] if case["case"] == name)
            if not points:
                continue
            ranks = [r for r, _ in points]
            style = LINE_STYLES[s % len(LINE_STYLES)]
            suffix = f" N={n}" if len(sizes) > 1 else ""
            for key, label, color in METHODS:
                axis.plot(ranks, [c[key + "_seconds"] for _, c in points], style, marker="o", color=color,
                          label=label + suffix)
            axis.plot(ranks, [c["memcpy_seconds"] for _, c in points], ":", color="0.5",
                      label="memcpy floor" + suffix)
        axis.set_xscale("log", base=2)
        all_ranks = sorted({run["ranks"] for run in runs})
        axis.set_xticks(all_ranks)
        axis.set_xticklabels([str(r) for r in all_ranks])
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_yscale("log")
        axis.set_xlabel("MPI ranks")
        axis.set_title(name, fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("median seconds per reshape (slowest rank)")
    axes[0][0].legend(fontsize=7)
    n_text = ", ".join(str(n) for n in sizes)
    fig.suptitle(f"3-D FFT reshapes of N^3 complex doubles (N = {n_text}): redist vs MPI baselines")
    fig.tight_layout()
    out = args.out or args.json_paths[0].rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
