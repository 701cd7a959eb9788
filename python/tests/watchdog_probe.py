# SPDX-License-Identifier: BSD-3-Clause
"""The watchdog seen from Python (scripts/run.sh runs this at 2 ranks under REDIST_TIMEOUT=2 and
REDIST_TIMEOUT_ACTION=abort): rank 1 passes comm=None, which Python refuses before any communicator is known, so
rank 0 waits alone in the package's argument agreement until the watchdog says so and ends the job. Exit 2 when
make_transform_plan completed on rank 0 (it cannot)."""
import sys
import time

import numpy as np
from mpi4py import MPI

import redist

comm = MPI.COMM_WORLD
b_layout = redist.block_cyclic(40, 30, 4, 4, (comm.size, 1), comm.rank)
a_layout = redist.block_cyclic(30, 40, 4, 4, (1, comm.size), comm.rank)
try:
    redist.make_transform_plan(None if comm.rank == 1 else comm, a_layout, b_layout, op="T", dtype=np.float64)
except TypeError:
    time.sleep(100)  # goes on elsewhere; the watchdog's abort on rank 0 ends it
print(f"rank {comm.rank}: make_transform_plan completed although rank 1 took no part", file=sys.stderr)
sys.exit(2)
