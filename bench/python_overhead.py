#!/usr/bin/env python3
"""Overhead of redist's Python call path: the same transform plan executed from Python (Plan.execute: argument
checks, their agreement over the ranks, the GIL released around the C++ call) and from C++ directly
(_redist._execute_repeatedly, a loop around transform_plan::execute), in the same run on the same buffers.

    mpiexec -n 4 python bench/python_overhead.py [--sizes 64,512,4096] [--reps 50] [--json out.json]

For each n: an n x n float64 matrix block-cyclic in 32 x 32 blocks on one grid, transposed into 64 x 64 blocks.
Times are the slowest rank's mean per execution; ratio = Python / C++. Prints JSON (stdout or --json FILE)
and one SUMMARY line.
"""
import argparse
import json

import numpy as np
from mpi4py import MPI

import redist
from redist import _redist


def grid_of(size):
    p = int(np.sqrt(size))
    while size % p:
        p -= 1
    return p, size // p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,512,4096")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    grid = grid_of(comm.size)
    rows = []
    for n in map(int, args.sizes.split(",")):
        b_layout = redist.block_cyclic(n, n, 32, 32, grid, comm.rank)
        a_layout = redist.block_cyclic(n, n, 64, 64, grid, comm.rank)
        b = b_layout.empty(np.float64)
        b[...] = comm.rank
        a = a_layout.empty(np.float64)
        plan = redist.make_plan(comm, a_layout, b_layout, "T", np.float64)
        reps = max(3, args.reps if n <= 1024 else args.reps // 10)
        plan.execute(a, b)  # warm-up
        best_py, best_cpp = float("inf"), float("inf")
        for _ in range(3):  # alternate, keep the best of three rounds of each
            comm.Barrier()
            start = MPI.Wtime()
            for _ in range(reps):
                plan.execute(a, b)
            best_py = min(best_py, comm.allreduce((MPI.Wtime() - start) / reps, op=MPI.MAX))
            comm.Barrier()
            best_cpp = min(best_cpp, comm.allreduce(_redist._execute_repeatedly(plan, a, b, reps), op=MPI.MAX))
        rows.append({"n": n, "reps": reps, "python_seconds": best_py, "cpp_seconds": best_cpp,
                     "ratio": best_py / best_cpp, "overhead_seconds": best_py - best_cpp,
                     "bytes_sent_total": comm.allreduce(plan.statistics()["bytes_sent"])})
    if comm.rank == 0:
        out = {"benchmark": "python_overhead", "ranks": comm.size, "grid": list(grid), "rows": rows}
        text = json.dumps(out, indent=2)
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
            for r in rows:
                print(f"n={r['n']:6d}  python {r['python_seconds'] * 1e6:10.1f} us  C++ {r['cpp_seconds'] * 1e6:10.1f} us"
                      f"  ratio {r['ratio']:.3f}")
        else:
            print(text)
        print("SUMMARY python_overhead: Python / C++ time per execution " +
              ", ".join(f"n={r['n']}: {r['ratio']:.3f}x (+{r['overhead_seconds'] * 1e6:.1f} us)" for r in rows) +
              f" on {comm.size} ranks")


if __name__ == "__main__":
    main()
