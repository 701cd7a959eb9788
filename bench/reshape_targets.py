#!/usr/bin/env python3
"""Checks issue 26's targets on the JSONs bench/reshape_sweep.sh writes (standard library only, so that it runs
where the benchmark ran): every case at least 2x faster than MPI_Alltoallw and 1.3x faster than pack +
MPI_Alltoallv (medians of one run per size and rank count), and the storage-order change at most 1.2x the plain
reshape (median over the rounds in DIR/storage_order/). Prints Markdown tables and one SUMMARY line; exits 1
when a target is missed, 2 when there is nothing to check.

    python3 bench/reshape_targets.py DIR        # e.g. bench/results
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
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    misses, checked = [], 0
    runs = sorted(load(os.path.join(directory, "reshape_bench_n*_np*.json")), key=lambda r: (r[1]["n"], r[1]["ranks"]))
    if runs:
        print("| N | ranks | oversubscribed | case | Alltoallw / redist | Alltoallv / redist | memcpy / redist |")
        print("|---|---|---|---|---|---|---|")
    for _, run in runs:
        for c in run["cases"]:
            w, v = c["alltoallw_over_redist"], c["alltoallv_over_redist"]
            print(f"| {run['n']} | {run['ranks']} | {run.get('oversubscribed', '?')} | {c['case']} | {w:.2f} | "
                  f"{v:.2f} | {c['memcpy_over_redist']:.2f} |")
            if run["n"] not in SIZES:
                continue
            checked += 1
            if w < ALLTOALLW_TARGET:
                misses.append(f"N={run['n']} P={run['ranks']} {c['case']}: Alltoallw {w:.2f}x")
            if v < ALLTOALLV_TARGET:
                misses.append(f"N={run['n']} P={run['ranks']} {c['case']}: Alltoallv {v:.2f}x")
    rounds = {}
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
        print("SUMMARY reshape_targets: nothing to check in " + directory)
        sys.exit(2)
    print()
    print(f"SUMMARY reshape_targets: {checked} checks, {len(misses)} missed" +
          (": " + "; ".join(misses) if misses else " (Alltoallw >= 2x, Alltoallv >= 1.3x, storage order <= 1.2x)"))
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
