#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Medians of a bench/before_after.sh run: first, second and steady calls of the drop-in (and ScaLAPACK's, pooled
over both variants' runs), the GEMM's first call and planning, the window creation, the reshapes, neighbor
exchanges and in-place alltoallv (the MPI baselines pooled over both variants' runs).

    python3 bench/before_after_table.py OUT_DIR

Files missing from OUT_DIR (a program that did not run) leave their table out."""
import json
import os
import statistics
import sys


def load(directory, name):
    path = os.path.join(directory, name + ".jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def span(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def column(runs, list_key, index, key, sub=None):
    values = [run[list_key][index][key] for run in runs]
    return [v[sub] for v in values] if sub else values


def sweep_table(before, after):
    costa = "costa_first_call_seconds" in before[0]["points"][0]
    print("| routine | N | first before | first after | second before | second after | ScaLAPACK first | "
          "ScaLAPACK second | " + ("COSTA first | " if costa else "") + "steady before | steady after | ScaLAPACK steady |" +
          (" COSTA steady |" if costa else "") + " steady after/before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if costa else ""))
    for i, p in enumerate(before[0]["points"]):
        col = lambda runs, key: column(runs, "points", i, key)
        pooled = lambda key: statistics.median(col(before, key) + col(after, key))
        print(f"| {p['routine']} | {p['n']} | {span(col(before, 'first_call_seconds'))} | "
              f"{span(col(after, 'first_call_seconds'))} | {span(col(before, 'second_call_seconds'))} | "
              f"{span(col(after, 'second_call_seconds'))} | {pooled('scalapack_first_call_seconds'):.3f} | "
              f"{pooled('scalapack_second_call_seconds'):.3f} | " +
              (f"{pooled('costa_first_call_seconds'):.3f} | " if costa else "") +
              f"{statistics.median(col(before, 'redist_seconds')):.3f} | "
              f"{statistics.median(col(after, 'redist_seconds')):.3f} | {pooled('scalapack_seconds'):.3f} |" +
              (f" {pooled('costa_seconds'):.3f} |" if costa else "") +
              f" {ratio(col(before, 'redist_seconds'), col(after, 'redist_seconds'), 'sweep')} |")


def gemm_table(before, after):
    # COSMA's first call (pooled over both variants' runs) where the runs had --cosma.
    cosma = "cosma_first_call_seconds" in before[0]["shapes"][0]
    print("| shape | first call before | first call after |" + (" COSMA's first call |" if cosma else "") +
          " planning before | planning after | steady before | steady after | steady after/before |")
    print("|---|---|---|" + ("---|" if cosma else "") + "---|---|---|---|---|")
    for i, p in enumerate(before[0]["shapes"]):
        col = lambda runs, key, sub=None: column(runs, "shapes", i, key, sub)
        cosma_first = (f" {statistics.median(col(before + after, 'cosma_first_call_seconds')):.3f} |" if cosma else "")
        print(f"| {p['name']} | {span(col(before, 'first_call_seconds'))} | {span(col(after, 'first_call_seconds'))} |"
              f"{cosma_first} {statistics.median(col(before, 'redist_planning_seconds', 'total')):.3f} | "
              f"{statistics.median(col(after, 'redist_planning_seconds', 'total')):.3f} | "
              f"{statistics.median(col(before, 'redist_seconds')):.3f} | "
              f"{statistics.median(col(after, 'redist_seconds')):.3f} | "
              f"{ratio(col(before, 'redist_seconds'), col(after, 'redist_seconds'), 'gemm')} |")
    # The shapes' first calls one after another in one process, as a program with several multiplies makes them.
    in_a_row = lambda runs, key: [sum(s[key] for s in run["shapes"]) for run in runs]
    cells = ["all in a row", span(in_a_row(before, "first_call_seconds")), span(in_a_row(after, "first_call_seconds"))]
    if cosma:
        cells.append(f"{statistics.median(in_a_row(before + after, 'cosma_first_call_seconds')):.3f}")
    print("| " + " | ".join(cells + [""] * 5) + " |")


def window_table(before, after):
    print("| MiB per rank | MPI_Win_allocate_shared as applications call it | node_buffer before | node_buffer after |")
    print("|---|---|---|---|")
    for i, p in enumerate(before[0]["points"]):
        col = lambda runs, key: column(runs, "points", i, key)
        print(f"| {p['mib_per_rank']} | "
              f"{statistics.median(col(before, 'application_median_seconds') + col(after, 'application_median_seconds')):.3f} | "
              f"{statistics.median(col(before, 'redist_median_seconds')):.3f} | "
              f"{statistics.median(col(after, 'redist_median_seconds')):.3f} |")


# Every after/before ratio a table printed, by program: their geometric mean goes to the SUMMARY line.
ratios = {}


def ratio(before_values, after_values, program):
    """after/before of the medians (above 1: the change is slower), remembered for the program's summary."""
    r = statistics.median(after_values) / statistics.median(before_values)
    ratios.setdefault(program, []).append(r)
    return f"{r:.2f}x"


def reshape_table(before, after):
    print("| reshape (N = %d) | redist before (s) | redist after (s) | after/before | MPI_Alltoallw (s) | "
          "node buffer before | node buffer after |" % before[0]["n"])
    print("|---|---|---|---|---|---|---|")
    for i, c in enumerate(before[0]["cases"]):
        col = lambda runs, key: column(runs, "cases", i, key)
        print(f"| {c['case']} | {span(col(before, 'redist_seconds'))} | {span(col(after, 'redist_seconds'))} | "
              f"{ratio(col(before, 'redist_seconds'), col(after, 'redist_seconds'), 'reshape')} | "
              f"{statistics.median(col(before, 'alltoallw_seconds') + col(after, 'alltoallw_seconds')):.4f} | "
              f"{statistics.median(col(before, 'redist_node_buffer_seconds')):.4f} | "
              f"{statistics.median(col(after, 'redist_node_buffer_seconds')):.4f} |")


def exchange_table(before, after):
    # One row per matrix and strategy: microseconds per exchange (each run's best round), MPI's pooled.
    print("| pattern | strategy | before (us) | after (us) | after/before | MPI_Neighbor_alltoallv (us) |")
    print("|---|---|---|---|---|---|")
    for i, p in enumerate(before[0]["patterns"]):
        for j, v in enumerate(p["variants"]):
            if v["name"] == "mpi":
                continue
            values = lambda runs, key: [run["patterns"][i]["variants"][j][key] * 1e6 for run in runs]
            mpi = [run["patterns"][i]["variants"][0]["best_seconds_per_exchange"] * 1e6 for run in before + after]
            b, a = values(before, "best_seconds_per_exchange"), values(after, "best_seconds_per_exchange")
            print(f"| {p['name']} | {v['name']} | {statistics.median(b):.1f} | {statistics.median(a):.1f} | "
                  f"{ratio(b, a, 'exchange')} | {statistics.median(mpi):.1f} |")


def inplace_table(before, after):
    print("| size | case | method | before (s) | after (s) | after/before | MPI_Alltoallv (s) |")
    print("|---|---|---|---|---|---|---|")
    for i, c in enumerate(before[0]["cases"]):
        names = [m["name"] for m in c["methods"]]
        mpi_index = names.index("mpi_alltoallv") if "mpi_alltoallv" in names else None
        for j, m in enumerate(c["methods"]):
            if m["name"].startswith("mpi") or not m.get("ran", True):  # MPI's own, a baseline
                continue
            values = lambda runs: [run["cases"][i]["methods"][j]["best_seconds"] for run in runs]
            mpi = ([run["cases"][i]["methods"][mpi_index]["best_seconds"] for run in before + after]
                   if mpi_index is not None else [float("nan")])
            print(f"| {c['size']} | {c['case']} | {m['name']} | {statistics.median(values(before)):.4f} | "
                  f"{statistics.median(values(after)):.4f} | {ratio(values(before), values(after), 'inplace')} | "
                  f"{statistics.median(mpi):.4f} |")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: before_after_table.py OUT_DIR")
    directory = sys.argv[1]
    rounds = {}
    for name, table in (("sweep", sweep_table), ("gemm", gemm_table), ("window", window_table),
                        ("reshape", reshape_table), ("exchange", exchange_table), ("inplace", inplace_table)):
        before, after = load(directory, name + "_before"), load(directory, name + "_after")
        rounds[name] = min(len(before), len(after))
        if before and after:
            table(before, after)
            print()
    means = ", ".join(f"{k} {statistics.geometric_mean(v):.2f}x over {len(v)}" for k, v in ratios.items())
    print("SUMMARY before_after: rounds " + ", ".join(f"{k} {v}" for k, v in rounds.items()) +
          (f"; after/before geometric mean: {means}" if means else ""))


if __name__ == "__main__":
    main()
