#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bar chart of a transform_bench run: speedup over ScaLAPACK per case, every redist variant.

    python3 bench/transform_plot.py bench/results/transform_bench.json [--out bench/results/transform_bench.png]

One group of bars per (case, N): each exchange strategy with B in private memory, and shared_memory with B in a
redist::node_buffer (one copy). The dashed line is the issue's 3x target; the shaded band is the 1.2x-2.9x that
the best existing library reaches on these cases (COSTA paper, Section 7.1).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def variant_label(strategy):
    name = strategy["strategy"]
    if strategy.get("source_memory") == "node_buffer":
        name += "\n+node_buffer"
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json_path")
    parser.add_argument("--out", default=None, help="PNG path (default: the JSON path with .png)")
    args = parser.parse_args()
    with open(args.json_path) as f:
        run = json.load(f)
    cases = run["cases"]
    labels = [variant_label(s) for s in cases[0]["strategies"]]
    width = 0.8 / len(labels)
    fig, ax = plt.subplots(figsize=(12, 5))
    ax.axhspan(1.2, 2.9, color="0.9", label="best existing library (paper): 1.2x-2.9x")
    for k, label in enumerate(labels):
        xs = [i + (k - (len(labels) - 1) / 2) * width for i in range(len(cases))]
        ys = [c["strategies"][k]["speedup_vs_scalapack"] for c in cases]
        ax.bar(xs, ys, width, label=label.replace("\n", " "))
    ax.axhline(3.0, color="black", linestyle="--", linewidth=1, label="target 3x")
    tallest = max(s["speedup_vs_scalapack"] for c in cases for s in c["strategies"])
    ax.set_ylim(0, max(3.5, tallest) * 1.3)  # room for the legend above the bars
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{c['case']}\nN={c['n']}" for c in cases], fontsize=8)
    ax.set_ylabel("speedup over ScaLAPACK (same run)")
    ax.set_title(f"redist vs ScaLAPACK, {run['ranks']} ranks, {run['omp_threads_per_rank']} thread/rank"
                 + (" (oversubscribed)" if run.get("oversubscribed") else ""))
    ax.legend(fontsize=8, ncol=3, loc="upper left")
    fig.tight_layout()
    out = args.out or args.json_path.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
