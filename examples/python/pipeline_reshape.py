# SPDX-License-Identifier: BSD-3-Clause
"""Split-phase reshapes from Python: batches of 3-D fields move from bricks to x-pencils; while batch k+1 travels
(plan.start) batch k is transformed locally (where an FFT along x would run), then plan.wait(). The results equal
blocking executions' exactly (run: mpiexec -n 4 python examples/python/pipeline_reshape.py)."""
import numpy as np
from mpi4py import MPI

import redist

comm = MPI.COMM_WORLD
shape = (32, 24, 20)
bricks = redist.box_layout(redist.brick_boxes(shape, MPI.Compute_dims(comm.size, 3)), comm.rank)
x = redist.box_layout(redist.pencil_boxes(shape, 0, MPI.Compute_dims(comm.size, 2)), comm.rank, order=(0, 2, 1))
to_x = redist.make_reshape_plan(comm, x, bricks, dtype=np.complex128)  # collective, reusable


def local_stage(pencil, k):
    pencil *= 1.0 + k - 0.5j  # the FFTs along x would run here


batches = 4
inputs = []
for k in range(batches):
    b = bricks.empty(np.complex128)
    b[...] = (comm.rank + k) * 1000 + np.arange(b.size).reshape(b.shape)
    inputs.append(b)
outputs = [x.empty(np.complex128) for _ in range(batches)]

to_x.start(outputs[0], inputs[0])
to_x.wait()
for k in range(batches):
    if k + 1 < batches:
        to_x.start(outputs[k + 1], inputs[k + 1])  # batch k+1 travels ...
    local_stage(outputs[k], k)                     # ... while batch k is worked on
    if k + 1 < batches:
        to_x.wait()

ok = True
for k in range(batches):  # the same, blocking
    expected = x.empty(np.complex128)
    to_x.execute(expected, inputs[k])
    local_stage(expected, k)
    ok = ok and np.array_equal(expected, outputs[k])
ok = comm.allreduce(ok, op=MPI.LAND)
if comm.rank == 0:
    print(f"{batches} batches bricks -> x-pencils, start/wait around local work: "
          f"{'same as blocking' if ok else 'WRONG'}")
raise SystemExit(0 if ok else 1)
