#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""3-D FFT pencil transfers from Python: redist's reshape plans against mpi4py-fft's pencil Transfer (MPI_Alltoallw
with subarray datatypes), on the same NumPy arrays, in the same run, interleaved.

    mpiexec -n 4 python bench/reshape_python.py [--n 128] [--reps 5] [--json out.json]

mpi4py-fft (PyPI; needs FFTW) decomposes an n^3 complex128 array into pencils on a 2-D Cartesian subcommunicator;
the cases are its transfers between pencils aligned in axis 2 (z), 1 (y) and 0 (x): z -> y, y -> x, and back.
redist plans each with box_layout over the very boxes mpi4py-fft gives every rank (Pencil.substart/subshape, C
order) and executes into the arrays mpi4py-fft allocates; `redist_node_buffer` runs the same plan with the input in
a redist.node_buffer (node peers read it in place: one copy per element). Every method's result is checked against the global
index function once before timing. Times are the slowest rank's, median over repetitions; ratio = mpi4py-fft's
time over redist's. Prints JSON (stdout or --json FILE) and one SUMMARY line.
"""
import argparse
import statistics

import numpy as np
from mpi4py import MPI
from mpi4py_fft.pencil import Pencil, Subcomm

import redist
from bench_report import emit_json

comm = MPI.COMM_WORLD


def boxes_of(pencil):
    """Every rank's (lo, hi) box of a mpi4py-fft pencil."""
    lo = tuple(int(s) for s in pencil.substart)
    hi = tuple(int(s + n) for s, n in zip(pencil.substart, pencil.subshape))
    return comm.allgather((lo, hi))


def global_values(shape, lo, sub):
    """Element (i, j, k) of the global array: i*n1*n2 + j*n2 + k (as real and negated imaginary part)."""
    idx = np.indices(sub, dtype=np.float64)
    lin = ((idx[0] + lo[0]) * shape[1] + (idx[1] + lo[1])) * shape[2] + (idx[2] + lo[2])
    return lin - 1j * lin


def slowest(seconds):
    return comm.allreduce(seconds, op=MPI.MAX)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    n = args.n
    shape = (n, n, n)
    subcomm = Subcomm(comm, [0, 0, 1])  # a 2-D process grid over axes 0 and 1; pencils start aligned in z
    z = Pencil(subcomm, shape, axis=2)
    y = z.pencil(1)
    x = y.pencil(0)
    layouts = {name: redist.box_layout(boxes_of(p), comm.rank) for name, p in (("z", z), ("y", y), ("x", x))}
    pencils = {"z": z, "y": y, "x": x}
    cases = []
    for src, dst in (("z", "y"), ("y", "x"), ("x", "y"), ("y", "z")):
        p_in, p_out = pencils[src], pencils[dst]
        a_in = global_values(shape, p_in.substart, p_in.subshape).astype(np.complex128)
        a_out = np.zeros(p_out.subshape, dtype=np.complex128)
        expected = global_values(shape, p_out.substart, p_out.subshape)
        transfer = p_in.transfer(p_out, np.complex128)
        start = MPI.Wtime()
        plan = redist.make_reshape_plan(comm, layouts[dst], layouts[src], dtype=np.complex128)
        plan_seconds = slowest(MPI.Wtime() - start)
        buffer = redist.node_buffer(comm, a_in.nbytes)
        shared_in = layouts[src].local_view(buffer.array(np.complex128, a_in.size))
        shared_in[...] = a_in

        def run_redist():
            plan.execute(a_out, a_in)

        def run_redist_node_buffer():
            plan.execute(a_out, shared_in)

        def run_mpi4py_fft():
            transfer.forward(a_in, a_out)

        methods = {"redist": run_redist, "redist_node_buffer": run_redist_node_buffer, "mpi4py_fft": run_mpi4py_fft}
        verified = True
        for name, run in methods.items():
            a_out[...] = 0
            run()
            verified = verified and comm.allreduce(bool(np.array_equal(a_out, expected)), op=MPI.LAND)
        times = {name: [] for name in methods}
        for rep in range(args.reps):
            order = list(methods)[rep % len(methods):] + list(methods)[:rep % len(methods)]
            for name in order:
                comm.Barrier()
                start = MPI.Wtime()
                methods[name]()
                times[name].append(slowest(MPI.Wtime() - start))
        stats = plan.statistics()
        case = {
            "case": f"{src}_to_{dst}_pencil",
            "redist_plan_seconds": plan_seconds,
            "redist_seconds": statistics.median(times["redist"]),
            "mpi4py_fft_seconds": statistics.median(times["mpi4py_fft"]),
            "redist_node_buffer_seconds": statistics.median(times["redist_node_buffer"]),
            "redist_seconds_per_rep": times["redist"],
            "redist_node_buffer_seconds_per_rep": times["redist_node_buffer"],
            "mpi4py_fft_seconds_per_rep": times["mpi4py_fft"],
            "bytes_sent": comm.allreduce(stats["bytes_sent"]),
            "messages_sent": comm.allreduce(stats["messages_sent"]),
            "verified": verified,
        }
        case["mpi4py_fft_over_redist"] = case["mpi4py_fft_seconds"] / case["redist_seconds"]
        case["mpi4py_fft_over_redist_node_buffer"] = case["mpi4py_fft_seconds"] / case["redist_node_buffer_seconds"]
        cases.append(case)
        del methods, run_redist_node_buffer, shared_in  # the arrays over the node buffer, then the buffer
        buffer.free()
    result = {"benchmark": "reshape_python", "n": n, "ranks": comm.size, "reps": args.reps,
              "process_grid": [c.Get_size() for c in subcomm],
              "cases": cases, "verified": all(c["verified"] for c in cases)}
    if comm.rank == 0:
        emit_json(result, args.json)
        print(f"SUMMARY reshape_python N={n} ranks={comm.size} (mpi4py-fft/redist): " +
              ", ".join(f"{c['case']} {c['mpi4py_fft_over_redist']:.2f}x" for c in cases) +
              "; input in a node buffer: " +
              ", ".join(f"{c['case']} {c['mpi4py_fft_over_redist_node_buffer']:.2f}x" for c in cases) +
              f"; verified {'yes' if result['verified'] else 'NO'}")


if __name__ == "__main__":
    main()
