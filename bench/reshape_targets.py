#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks issue 26's targets on the JSONs bench/reshape_sweep.sh writes (standard library only, so that it runs
where the benchmark ran): every case at least 2x faster than MPI_Alltoallw and 1.3x faster than pack +
MPI_Alltoallv, and the storage-order change at most 1.2x the plain reshape. Several DIRs (separate runs of the
sweep) are judged together: a case's ratio is the median over the runs' medians, the storage-order rounds of all
runs are pooled. Prints Markdown tables and one SUMMARY line; exits 1 when a target is missed, 2 when there is
nothing to check.

    python3 bench/reshape_targets.py DIR [DIR...]        # e.g. bench/results bench/results/reshape_run2
"""
import glob
import json
import os
import re
import statistics
import sys

ALLTOALLW_TARGET, ALLTOALLV_TARGET, STORAGE_ORDER_TARGET = 2.0, 1.3, 1.2
SIZES = (256, 512)  # the sizes; other runs are shown but not judged


def load(pattern):
    runs = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            runs.append((path, json.load(f)))
    return runs


def main():
    directories = sys.argv[1:]
    if not directories:
        sys.exit(__doc__)
    misses, checked = [], 0
    ratios = {}  # (n, ranks, case) -> [(alltoallw, alltoallv, memcpy ratio), one per run]
    oversubscribed = {}
    for directory in directories:
        for _, run in load(os.path.join(directory, "reshape_bench_n*_np*.json")):
            oversubscribed[run["n"], run["ranks"]] = run.get("oversubscribed", "?")
            for c in run["cases"]:
                ratios.setdefault((run["n"], run["ranks"], c["case"]), []).append(
                    (c["alltoallw_over_redist"], c["alltoallv_over_redist"], c["memcpy_over_redist"]))
    if ratios:
        print("| N | ranks | oversubscribed | case | runs | Alltoallw / redist | Alltoallv / redist | memcpy / redist |")
        print("|---|---|---|---|---|---|---|---|")
    for (n, p, case), values in sorted(ratios.items()):
        w, v, m = (statistics.median(x[i] for x in values) for i in range(3))
        each = " (" + ", ".join(f"{x[0]:.2f}" for x in values) + ")" if len(values) > 1 else ""
        print(f"| {n} | {p} | {oversubscribed[n, p]} | {case} | {len(values)} | {w:.2f}{each} | {v:.2f} | {m:.2f} |")
        if n not in SIZES:
            continue
        checked += 1
        if w < ALLTOALLW_TARGET:
            misses.append(f"N={n} P={p} {case}: Alltoallw {w:.2f}x")
        if v < ALLTOALLV_TARGET:
            misses.append(f"N={n} P={p} {case}: Alltoallv {v:.2f}x")
    rounds = {}
    for directory in directories:
        for path, run in load(os.path.join(directory, "storage_order", "reshape_bench_n*_np*_round*.json")):
            n, p = map(int, re.search(r"_n(\d+)_np(\d+)_round", path).groups())
            rounds.setdefault((n, p), []).append(run["storage_order_cost"]["redist"])
    if rounds:
        print()
        print("| N | ranks | rounds | storage-order change / plain, per round | median |")
        print("|---|---|---|---|---|")
    for (n, p), costs in sorted(rounds.items()):
        median = statistics.median(costs)
        print(f"| {n} | {p} | {len(costs)} | {' '.join(f'{x:.2f}' for x in costs)} | **{median:.2f}** |")
        if n in SIZES:
            checked += 1
            if median > STORAGE_ORDER_TARGET:
                misses.append(f"N={n} P={p}: storage-order change {median:.2f}x")
    if checked == 0:
        print("SUMMARY reshape_targets: nothing to check in " + " ".join(directories))
        sys.exit(2)
    print()
    print(f"SUMMARY reshape_targets: {len(directories)} run(s), {checked} checks, {len(misses)} missed" +
          (": " + "; ".join(misses) if misses else " (Alltoallw >= 2x, Alltoallv >= 1.3x, storage order <= 1.2x)"))
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
