#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A one-shot transform (plan + one execution, as transform() and the ScaLAPACK drop-in's first call of a layout
pair run it) made after an earlier plan left a shared window on the communicator: the automatic choice, which
cuts the one-shot plan's segment from that window, against point_to_point (the choice below
one_shot_window_bytes when no window is cached), in the same process.

    mpiexec -n 4 python bench/one_shot_window_reuse.py [--n 2000,4000] [--rounds 3] [--json out.json]

Case: an n x n float64 matrix block-cyclic in 32 x 32 blocks on the squarest grid, transposed into 128 x 128
blocks (pdtran's case of bench_scalapack_sweep). Per n, a fresh communicator gets a repeated identity plan
(its window); then each round times, on fresh target pages, automatic's one-shot call and point_to_point's.
Round 1's point_to_point call faults in fresh private message buffers (what the first one-shot call of a
process pays); later rounds find the buffers the earlier plans released (REDIST_BUFFER_CACHE). Times are the
slowest rank's (barriers around each step). Prints JSON (stdout or --json FILE) and one SUMMARY line.
"""
import argparse

import numpy as np
from mpi4py import MPI

import redist
from bench_report import emit_json, squarest_grid

comm = MPI.COMM_WORLD


def timed(call):
    comm.Barrier()
    start = MPI.Wtime()
    result = call()
    comm.Barrier()
    return MPI.Wtime() - start, result


def one_shot_call(case_comm, a, b, source, strategy):
    target = np.random.rand(a.local_elements)  # fresh pages, as a new user array
    plan_seconds, plan = timed(lambda: redist.make_transform_plan(case_comm, b, a, "T", np.float64, one_shot=True,
                                                        strategy=strategy))
    execute_seconds, _ = timed(lambda: plan.execute(source, target, 1.0, 0.0))
    stats = plan.statistics()
    return {"strategy": plan.strategy, "window_reused": bool(stats["window_reused"]), "plan_seconds": plan_seconds,
            "execute_seconds": execute_seconds, "first_call_seconds": plan_seconds + execute_seconds,
            "bytes_sent": comm.allreduce(stats["bytes_sent"]) // comm.size}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="2000,4000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    grid = squarest_grid(comm.size)
    cases = []
    for n in (int(x) for x in args.n.split(",")):
        case_comm = comm.Dup()
        b = redist.block_cyclic(n, n, 32, 32, grid, comm.rank)
        a = redist.block_cyclic(n, n, 128, 128, grid, comm.rank)
        source = np.random.rand(b.local_elements)
        earlier = redist.make_transform_plan(case_comm, a, b, "N", np.float64)  # repeated: leaves the window
        earlier.execute(np.zeros(a.local_elements), source)
        rounds = []
        for _ in range(args.rounds):
            rounds.append({"automatic": one_shot_call(case_comm, a, b, source, "auto"),
                           "point_to_point": one_shot_call(case_comm, a, b, source, "point_to_point")})
        del earlier
        case_comm.Free()
        cases.append({"n": n, "bytes_sent_per_rank": rounds[0]["automatic"]["bytes_sent"], "rounds": rounds,
                      "first_round_speedup": rounds[0]["point_to_point"]["first_call_seconds"] /
                      rounds[0]["automatic"]["first_call_seconds"],
                      "later_rounds_speedup": float(np.median(
                          [r["point_to_point"]["first_call_seconds"] / r["automatic"]["first_call_seconds"]
                           for r in rounds[1:]])) if len(rounds) > 1 else None})
    if comm.rank == 0:
        report = {"benchmark": "one_shot_window_reuse", "ranks": comm.size, "grid": list(grid), "cases": cases}
        emit_json(report, args.json)
        items = []
        for c in cases:
            first = c["rounds"][0]
            later = "" if c["later_rounds_speedup"] is None else f", later rounds {c['later_rounds_speedup']:.2f}x"
            items.append(f"N={c['n']} ({first['automatic']['strategy']}, window reused "
                         f"{first['automatic']['window_reused']}) first round "
                         f"{first['automatic']['first_call_seconds']:.4f} s vs point_to_point "
                         f"{first['point_to_point']['first_call_seconds']:.4f} s = {c['first_round_speedup']:.2f}x"
                         f"{later}")
        print("SUMMARY one_shot_window_reuse: " + "; ".join(items), flush=True)


if __name__ == "__main__":
    main()
