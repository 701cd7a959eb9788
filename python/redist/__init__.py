"""redist for mpi4py + NumPy: distributed matrix layouts, transforms A = alpha*op(B) + beta*A between them
(reusable plans, batches, relabeling), distributed GEMM, persistent neighborhood alltoallv and in-place
alltoallv, with the C++ library's speed and no copies of your arrays.

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
    GemmPlan,
    InconsistentRanks,
    InsufficientMemory,
    InvalidArgument,
    InvalidBuffer,
    InvalidCount,
    InvalidDatatype,
    InvalidLayout,
    InvalidTopology,
    Job,
    Layout,
    MPIError,
    NeighborPlan,
    OverflowError,
    Plan,
    alltoall_inplace,
    alltoallv_inplace,
    alltoallv_inplace_symmetric,
    block_cyclic,
    blocked,
    calibrate_cost_model,
    custom,
    even_splits,
    get_argument_agreement,
    make_batch_plan,
    make_gemm_plan,
    make_plan,
    neighbor_alltoallv_init,
    relabel_targets,
    set_argument_agreement,
)

__version__ = "0.1.0"


def _dtype_of(array, name):
    """The array's dtype; for anything else a value that make_plan refuses inside its agreed argument check
    (reading .dtype here would fail on this rank alone and leave the others waiting in that check)."""
    return getattr(array, "dtype", f"of {name}, a {type(array).__name__} (not a NumPy array)")


def transform(comm, a_layout, a, b_layout, b, op="N", alpha=1.0, beta=0.0, *, region=None, strategy="auto"):
    """A = alpha * op(B) + beta * A in one call (plans, executes, discards the plan).

    a and b are this rank's local arrays of a_layout and b_layout (their dtype sets the element type); for
    repeated transforms keep the plan from make_plan instead.
    """
    plan = make_plan(comm, a_layout, b_layout, op, _dtype_of(a, "a"), region=region, strategy=strategy)
    plan.execute(a, b, alpha, beta)
    return a


def gemm(comm, a_layout, a, b_layout, b, c_layout, c, alpha=1.0, beta=0.0, op_a="N", op_b="N", **options):
    """C = alpha * op(A) * op(B) + beta * C in one call (plans, executes, discards the plan).

    a, b, c are this rank's local arrays of the three layouts (their dtype sets the element type); options are
    make_gemm_plan's keywords. For repeated multiplies keep the plan from make_gemm_plan instead.
    """
    plan = make_gemm_plan(comm, a_layout, b_layout, c_layout, op_a, op_b, _dtype_of(c, "c"), **options)
    plan.execute(c, a, b, alpha, beta)
    return c
