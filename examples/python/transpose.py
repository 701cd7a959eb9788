# SPDX-License-Identifier: BSD-3-Clause
"""Transpose a block-cyclic matrix into another block-cyclic layout with redist from Python, check it against
NumPy, and reuse the plan (run: mpiexec -n 4 python examples/python/transpose.py)."""
import numpy as np
from mpi4py import MPI

import redist

comm = MPI.COMM_WORLD
rows, cols = 1000, 600
grid = (2, comm.size // 2) if comm.size % 2 == 0 else (1, comm.size)

# B: 1000 x 600 in 32 x 32 blocks; A = B^T: 600 x 1000 in 64 x 16 blocks, row-major local storage.
b_layout = redist.block_cyclic(rows, cols, 32, 32, grid, comm.rank)
a_layout = redist.block_cyclic(cols, rows, 64, 16, grid, comm.rank, order="C")

# Fill this rank's part of B from a global formula through views into its local array (no copies).
global_b = np.fromfunction(lambda i, j: i * 1000.0 + j, (rows, cols))
b = b_layout.empty(np.float64)
for r0, c0, block in b_layout.local_views(b):
    block[...] = global_b[r0:r0 + block.shape[0], c0:c0 + block.shape[1]]

a = a_layout.empty(np.float64)
plan = redist.make_transform_plan(comm, a_layout, b_layout, op="T", dtype=np.float64)  # collective, reusable
plan.execute(a, b, alpha=2.0)                                                # A = 2 B^T

ok = all(np.array_equal(block, 2.0 * global_b.T[r0:r0 + block.shape[0], c0:c0 + block.shape[1]])
         for r0, c0, block in a_layout.local_views(a))
stats = plan.statistics()
ok = comm.allreduce(ok, op=MPI.LAND)
sent = comm.allreduce(stats["bytes_sent"])
if comm.rank == 0:
    print(f"A = 2 B^T on {comm.size} ranks ({plan.strategy}): {'correct' if ok else 'WRONG'}, "
          f"{sent} bytes between ranks")
raise SystemExit(0 if ok else 1)
