# SPDX-License-Identifier: BSD-3-Clause
"""A halo exchange with a persistent neighborhood plan, an in-place alltoallv and a distributed GEMM from
Python, each checked (run: mpiexec -n 4 python examples/python/exchange_and_gemm.py)."""
import numpy as np
from mpi4py import MPI

import redist

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
checks = {}

# 1. Ring halo: every rank sends its last 3 values to its right neighbour and its first 3 to its left one,
#    and receives the left one's last 3 and the right one's first 3; the plan is built once and run every
#    "time step" on the same arrays. (Edges are listed so that, as in MPI, the k-th edge from a rank to
#    another matches the k-th edge the other lists from it: right then left, left then right.)
left, right = (rank - 1) % size, (rank + 1) % size
field = np.arange(100.0) + 1000 * rank
halo = np.zeros(6)
plan = redist.neighbor_alltoallv_init(comm, field, [3, 3], [97, 0], halo, [3, 3], [0, 3],
                                      sources=[left, right], destinations=[right, left])
for step in range(3):
    field += 1.0  # new values, same array
    plan.execute()
checks["halo"] = (np.array_equal(halo[:3], np.arange(97.0, 100.0) + 1000 * left + 3)
                  and np.array_equal(halo[3:], np.arange(3.0) + 1000 * right + 3))

# 2. In-place alltoallv: rank r sends r + j + 1 values to rank j, in the same array it receives into.
sendcounts = np.array([rank + j + 1 for j in range(size)])
capacity = max(sendcounts.sum(), sum(r + rank + 1 for r in range(size)))
buf = np.zeros(capacity, dtype=np.int64)
buf[:sendcounts.sum()] = np.repeat(100 * rank + np.arange(size), sendcounts)
report = redist.alltoallv_inplace(comm, buf, sendcounts)
received = buf[:report["received_elements"]]
checks["alltoallv_inplace"] = np.array_equal(received, np.repeat(100 * np.arange(size) + rank,
                                                                  report["recvcounts"]))

# 3. GEMM: C = A^T B with A, B, C block-cyclic on different grids.
m, n, k = 300, 200, 500
grid = (2, size // 2) if size % 2 == 0 else (1, size)
a_layout = redist.block_cyclic(k, m, 32, 32, grid, rank)
b_layout = redist.block_cyclic(k, n, 64, 16, grid[::-1], rank)
c_layout = redist.block_cyclic(m, n, 16, 16, (size, 1), rank)
rng = np.random.default_rng(0)  # the same global matrices on every rank
a_global, b_global = rng.standard_normal((k, m)), rng.standard_normal((k, n))
a, b, c = a_layout.empty(), b_layout.empty(), c_layout.empty()
for layout, local, global_values in ((a_layout, a, a_global), (b_layout, b, b_global)):
    for r0, c0, block in layout.local_views(local):
        block[...] = global_values[r0:r0 + block.shape[0], c0:c0 + block.shape[1]]
gemm = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, op_a="T")
gemm.execute(c, a, b)
expected = a_global.T @ b_global
checks["gemm"] = all(np.allclose(block, expected[r0:r0 + block.shape[0], c0:c0 + block.shape[1]])
                     for r0, c0, block in c_layout.local_views(c))

ok = {name: comm.allreduce(passed, op=MPI.LAND) for name, passed in checks.items()}
if rank == 0:
    print(f"on {size} ranks: halo ({plan.statistics()['strategy']}) {'correct' if ok['halo'] else 'WRONG'}; "
          f"alltoallv_inplace ({report['algorithm']}) {'correct' if ok['alltoallv_inplace'] else 'WRONG'}; "
          f"gemm (grid {'x'.join(str(gemm.statistics()['schedule'][g]) for g in ('grid_m', 'grid_n', 'grid_k'))}) "
          f"{'correct' if ok['gemm'] else 'WRONG'}")
raise SystemExit(0 if all(ok.values()) else 1)
