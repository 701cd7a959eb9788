#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots first calls (plan + one execution) of ScaLAPACK, COSTA and redist from bench_scalapack_sweep JSON runs
made with --costa: one bar group per routine and N, medians over the runs, redist before and now side by side
when the file holds both (bench/results/first_call_cache_np4.json: {"before": [runs], "now": [runs]}), with
half of ScaLAPACK's first call (the issue's target) marked.

    python3 bench/first_call_plot.py runs.json [out.png]    (default: runs.png next to the JSON)

runs.json: one sweep result, a list of them, or an object whose "before" / "now" hold lists of them.
"""
import json
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(runs, key):
    """Median over the runs of `key` per (routine, n), in the first run's order."""
    points = [(p["routine"], p["n"]) for p in runs[0]["points"]]
    values = {}
    for index, point in enumerate(points):
        values[point] = statistics.median(run["points"][index][key] for run in runs)
    return points, values


def main() -> None:
    source = Path(sys.argv[1])
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    data = json.loads(source.read_text())
    if isinstance(data, dict) and "now" in data:
        now, before = data["now"], data.get("before")
    else:
        now, before = (data if isinstance(data, list) else [data]), None
    points, scalapack = series(now, "scalapack_first_call_seconds")
    _, costa = series(now, "costa_first_call_seconds")
    _, redist = series(now, "first_call_seconds")
    bars = [("ScaLAPACK", scalapack, "tab:gray"), ("COSTA", costa, "tab:orange")]
    if before:
        bars.append(("redist before", series(before, "first_call_seconds")[1], "tab:cyan"))
    bars.append(("redist", redist, "tab:blue"))
    width = 0.8 / len(bars)
    figure, axis = plt.subplots(figsize=(8, 4))
    for k, (label, values, colour) in enumerate(bars):
        axis.bar([i + (k - (len(bars) - 1) / 2) * width for i in range(len(points))],
                 [values[p] for p in points], width, label=label, color=colour)
    for i, p in enumerate(points):
        axis.hlines(scalapack[p] / 2, i - 0.4, i + 0.4, colors="black", linestyles="--", linewidth=1,
                    label="0.5x ScaLAPACK (target)" if i == 0 else None)
    axis.set_xticks(range(len(points)))
    axis.set_xticklabels([f"{r} N={n}" for r, n in points], fontsize=8)
    axis.set_ylabel("first call, seconds (median)")
    runs = len(now)
    axis.set_title(f"First calls: plan + one execution ({now[0]['ranks']} ranks, medians of {runs} runs)",
                   fontsize=9)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    print(target)


if __name__ == "__main__":
    main()
