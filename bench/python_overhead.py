#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Overhead of redist's Python call path: the same plan or call run from Python and from C++ directly (a loop
inside the extension), in the same run on the same buffers, for each capability the package binds.

    mpiexec -n 4 python bench/python_overhead.py [--ops transform,gemm,neighbor,inplace]
        [--sizes 64,512,4096] [--gemm-sizes 64,256,1024] [--exchange-sizes 16,4096,262144] [--reps 50]
        [--json out.json]

- transform: an n x n float64 matrix block-cyclic in 32 x 32 blocks on the squarest grid, transposed into
  64 x 64 blocks (Plan.execute vs transform_plan::execute).
- gemm: C = A B, n x n x n float64, all three block-cyclic 32 x 32 on the squarest grid (GemmPlan.execute vs
  gemm_plan::execute).
- neighbor: a ring halo, s float64 values to each of the two neighbours (NeighborPlan.execute vs start()/wait()).
- inplace: alltoallv_inplace with s float64 values for every pair of ranks (the Python call builds its report
  dict; the C++ loop calls exchange::alltoallv_inplace).
Times are the slowest rank's mean per call, best of three alternating rounds; ratio = Python / C++, and
ratio_unagreed the same with redist.set_argument_agreement(False) (no allreduce per call). Prints
JSON (stdout or --json FILE) and one SUMMARY line.
"""
import argparse

import numpy as np
from mpi4py import MPI

import redist
from bench_report import emit_json, squarest_grid
from redist import _redist

comm = MPI.COMM_WORLD


def compare(python_call, cpp_loop, reps):
    """Best of three alternating rounds of the Python loop (argument agreement on, then off) and the C++ loop;
    the slowest rank's mean per call."""
    python_call()  # warm-up

    def python_loop(reps):
        start = MPI.Wtime()
        for _ in range(reps):
            python_call()
        return (MPI.Wtime() - start) / reps

    def unagreed_loop(reps):
        redist.set_argument_agreement(False)
        try:
            return python_loop(reps)
        finally:
            redist.set_argument_agreement(True)

    best = [float("inf")] * 3
    for _ in range(3):
        for k, loop in enumerate((python_loop, unagreed_loop, cpp_loop)):
            comm.Barrier()
            best[k] = min(best[k], comm.allreduce(loop(reps), op=MPI.MAX))
    return best


def transform_case(n, grid):
    b_layout = redist.block_cyclic(n, n, 32, 32, grid, comm.rank)
    a_layout = redist.block_cyclic(n, n, 64, 64, grid, comm.rank)
    b, a = b_layout.empty(np.float64), a_layout.empty(np.float64)
    b[...] = comm.rank
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    return (lambda: plan.execute(a, b), lambda reps: _redist._execute_repeatedly(plan, a, b, reps),
            comm.allreduce(plan.statistics()["bytes_sent"]))


def gemm_case(n, grid):
    layouts = [redist.block_cyclic(n, n, 32, 32, grid, comm.rank) for _ in range(3)]
    a, b, c = (layout.empty(np.float64) for layout in layouts)
    a[...], b[...] = 1.0, 2.0
    plan = redist.make_gemm_plan(comm, *layouts, dtype=np.float64)
    return (lambda: plan.execute(c, a, b), lambda reps: _redist._gemm_execute_repeatedly(plan, c, a, b, reps),
            comm.allreduce(plan.statistics()["multiply"]["bytes_sent"]))


def neighbor_case(s, grid):
    left, right = (comm.rank - 1) % comm.size, (comm.rank + 1) % comm.size
    send, recv = np.arange(2.0 * s), np.zeros(2 * s)
    plan = redist.neighbor_alltoallv_init(comm, send, [s, s], [0, s], recv, [s, s], [0, s],
                                          sources=[left, right], destinations=[right, left], strategy="standard")
    stats = plan.statistics()
    return (plan.execute, lambda reps: _redist._run_repeatedly(plan, reps),
            comm.allreduce(stats["bytes_sent"]))


def inplace_case(s, grid):
    counts = [s] * comm.size  # symmetric: every call leaves a valid input for the next
    buf = np.zeros(s * comm.size)
    report = redist.alltoallv_inplace(comm, buf, counts)
    return (lambda: redist.alltoallv_inplace(comm, buf, counts),
            lambda reps: _redist._alltoallv_inplace_repeatedly(comm, buf, counts, reps),
            comm.allreduce(report["bytes_sent"]))


CASES = {"transform": (transform_case, "sizes", 1024 ** 2), "gemm": (gemm_case, "gemm_sizes", 256 ** 2),
         "neighbor": (neighbor_case, "exchange_sizes", 65536), "inplace": (inplace_case, "exchange_sizes", 65536)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="transform,gemm,neighbor,inplace")
    parser.add_argument("--sizes", default="64,512,4096", help="transform: n of the n x n matrix")
    parser.add_argument("--gemm-sizes", default="64,256,1024", help="gemm: n of the n x n x n product")
    parser.add_argument("--exchange-sizes", default="16,4096,262144",
                        help="neighbor and inplace: float64 values per message")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    grid = squarest_grid(comm.size)
    rows = []
    for op in args.ops.split(","):
        if op not in CASES:
            parser.error(f"--ops: unknown operation '{op}'; expected some of {', '.join(CASES)}")
        make_case, size_option, large = CASES[op]
        for n in map(int, getattr(args, size_option).split(",")):
            python_call, cpp_loop, bytes_sent = make_case(n, grid)
            work = n * n if op in ("transform", "gemm") else n
            reps = max(3, args.reps if work <= large else args.reps // 10)
            best_py, best_unagreed, best_cpp = compare(python_call, cpp_loop, reps)
            rows.append({"operation": op, "n": n, "reps": reps, "python_seconds": best_py,
                         "python_unagreed_seconds": best_unagreed, "cpp_seconds": best_cpp,
                         "ratio": best_py / best_cpp, "ratio_unagreed": best_unagreed / best_cpp,
                         "overhead_seconds": best_py - best_cpp, "bytes_sent": bytes_sent})
    if comm.rank == 0:
        out = {"benchmark": "python_overhead", "ranks": comm.size, "grid": list(grid), "rows": rows}
        if emit_json(out, args.json, indent=2):
            for r in rows:
                print(f"{r['operation']:9s} n={r['n']:7d}  python {r['python_seconds'] * 1e6:11.1f} us  "
                      f"unagreed {r['python_unagreed_seconds'] * 1e6:11.1f} us  C++ {r['cpp_seconds'] * 1e6:11.1f} us"
                      f"  ratio {r['ratio']:.3f} (unagreed {r['ratio_unagreed']:.3f})")
        print("SUMMARY python_overhead: Python / C++ time per call " +
              ", ".join(f"{r['operation']} n={r['n']}: {r['ratio']:.3f}x (+{r['overhead_seconds'] * 1e6:.1f} us)"
                        for r in rows) + f" on {comm.size} ranks")


if __name__ == "__main__":
    main()
