"""redist for mpi4py + NumPy: distributed matrix layouts, transforms A = alpha*op(B) + beta*A between them
(reusable plans, batches, relabeling), with the C++ library's speed and no copies of your arrays.

    from mpi4py import MPI
    import numpy as np
    import redist

    comm = MPI.COMM_WORLD
    b_layout = redist.block_cyclic(1000, 800, 32, 32, (2, 2), comm.rank)
    a_layout = redist.block_cyclic(800, 1000, 64, 64, (2, 2), comm.rank)
    b = b_layout.empty(np.float64)          # this rank's local part, Fortran order
    a = a_layout.empty(np.float64)
    redist.transform(comm, a_layout, a, b_layout, b, op="T")   # A = B^T
"""
from mpi4py import MPI  # noqa: F401  (initialises MPI before the extension uses it)

from ._redist import (  # noqa: F401
    DimensionMismatch,
    Error,
    InconsistentRanks,
    InsufficientMemory,
    InvalidArgument,
    InvalidLayout,
    Job,
    Layout,
    MPIError,
    OverflowError,
    Plan,
    block_cyclic,
    blocked,
    custom,
    even_splits,
    make_batch_plan,
    make_plan,
    relabel_targets,
)

__version__ = "0.1.0"


def transform(comm, a_layout, a, b_layout, b, op="N", alpha=1.0, beta=0.0, *, region=None, strategy="auto"):
    """A = alpha * op(B) + beta * A in one call (plans, executes, discards the plan).

    a and b are this rank's local arrays of a_layout and b_layout (their dtype sets the element type); for
    repeated transforms keep the plan from make_plan instead.
    """
    plan = make_plan(comm, a_layout, b_layout, op, a.dtype, region=region, strategy=strategy)
    plan.execute(a, b, alpha, beta)
    return a
