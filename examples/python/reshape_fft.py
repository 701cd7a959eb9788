# SPDX-License-Identifier: BSD-3-Clause
"""The reshapes of a distributed 3-D FFT from Python: bricks -> x-pencils -> y-pencils -> z-pencils -> bricks on
NumPy arrays, each pencil stored with its own axis contiguous, checked against NumPy
(run: mpiexec -n 4 python examples/python/reshape_fft.py)."""
import numpy as np
from mpi4py import MPI

import redist

comm = MPI.COMM_WORLD
shape = (32, 24, 20)
bricks_grid = MPI.Compute_dims(comm.size, 3)
pencils_grid = MPI.Compute_dims(comm.size, 2)

# One box per rank; order lists the axes from the fastest-varying ((0, 2, 1): x contiguous).
bricks = redist.box_layout(redist.brick_boxes(shape, bricks_grid), comm.rank)
x = redist.box_layout(redist.pencil_boxes(shape, 0, pencils_grid), comm.rank, order=(0, 2, 1))
y = redist.box_layout(redist.pencil_boxes(shape, 1, pencils_grid), comm.rank, order=(1, 2, 0))
z = redist.box_layout(redist.pencil_boxes(shape, 2, pencils_grid), comm.rank)

# This rank's brick of a global array (its box from the same list the layout was built from).
everything = np.arange(np.prod(shape), dtype=np.complex128).reshape(shape) * (1 - 1j)
lo, hi = redist.brick_boxes(shape, bricks_grid)[comm.rank]
b = bricks.empty(np.complex128)
b[...] = everything[tuple(slice(l, h) for l, h in zip(lo, hi))]

plans = [redist.make_reshape_plan(comm, to, frm, dtype=np.complex128)  # collective, reusable
         for to, frm in ((x, bricks), (y, x), (z, y), (bricks, z))]
steps = [b]
for plan, layout in zip(plans, (x, y, z, bricks)):
    out = layout.empty(np.complex128)   # strided as stored: out[i, j, k] is element (i, j, k) of the box
    plan.execute(out, steps[-1])
    steps.append(out)                    # (the FFTs along the pencil's axis would run here)

lo_x, hi_x = redist.pencil_boxes(shape, 0, pencils_grid)[comm.rank]
ok = np.array_equal(steps[1], everything[tuple(slice(l, h) for l, h in zip(lo_x, hi_x))])
ok = comm.allreduce(ok and np.array_equal(steps[-1], b), op=MPI.LAND)
if comm.rank == 0:
    print(f"bricks {bricks_grid} -> pencils {pencils_grid} and back: {'exact' if ok else 'WRONG'}")
raise SystemExit(0 if ok else 1)
