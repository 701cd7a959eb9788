# SPDX-License-Identifier: BSD-3-Clause
"""Type stubs of redist's compiled core (python/src/*.cpp)."""
from typing import Any, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

DTypeLike = Union[npt.DTypeLike, None]
Region = Optional[Tuple[str, int]]

class Error(RuntimeError):
    """Base of redist's errors (C++ redist::error); the message says what was wrong and what was expected."""

class InvalidArgument(Error):
    """An argument outside its domain; also raised on the ranks whose own arguments were fine when another
    rank's were not (the message names that rank)."""

class InvalidTopology(InvalidArgument):
    """The communicator lacks the topology a call needs (e.g. not a distributed-graph communicator)."""

class InvalidCount(InvalidArgument):
    """A count, or a size computed from counts, outside its domain."""

class InvalidBuffer(InvalidArgument):
    """A buffer that cannot be right (None or null where data must be)."""

class InvalidDatatype(InvalidArgument):
    """An MPI datatype the call cannot use (its extent, bounds or size)."""

class InvalidLayout(Error): ...
class DimensionMismatch(Error): ...
class InconsistentRanks(Error): ...
class Overflow(Error, OverflowError):
    """A count or size past what the call can represent (redist::overflow_error)."""
class InsufficientMemory(Error): ...
class MPIError(Error): ...

def set_argument_agreement(enabled: bool) -> bool:
    """Per-call agreement on argument errors over the ranks (default on); returns the previous setting. Off
    saves one allreduce per call, but a rank-local argument error then leaves the other ranks waiting."""
def get_argument_agreement() -> bool: ...
def set_timeout(seconds: float, action: str = "warn") -> float:
    """After how many seconds a wait inside redist is reported on stderr (0: never), and then 'warn' (wait on) or
    'abort' (end the job); returns the previous seconds. REDIST_TIMEOUT / REDIST_TIMEOUT_ACTION: the same."""
def get_timeout() -> float: ...

class Layout:
    """A distributed matrix layout seen from one rank: global block grid and owners, and this rank's storage."""
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def blocks(self) -> Tuple[int, int]: ...
    @property
    def row_splits(self) -> list[int]: ...
    @property
    def col_splits(self) -> list[int]: ...
    @property
    def grid(self) -> Tuple[int, int]: ...
    @property
    def rank(self) -> int: ...
    @property
    def order(self) -> str:
        """'F' (column-major) or 'C' (row-major) local storage."""
    @property
    def local_elements(self) -> int: ...
    @property
    def local_shape(self) -> Tuple[int, ...]:
        """(lld, local columns) for 'F', (local rows, lld) for 'C', (local_elements,) for custom layouts."""
    def owner(self, block_row: int, block_col: int) -> int: ...
    def empty(self, dtype: DTypeLike = None) -> np.ndarray:
        """A zero-filled local array of local_shape and the layout's order (float64 unless dtype is given)."""
    def local_blocks(self) -> list[Tuple[int, int, int, int]]:
        """This rank's blocks as (first row, first column, rows, columns)."""
    def local_views(self, array: np.ndarray) -> list[Tuple[int, int, np.ndarray]]:
        """(first row, first column, writable view) for each of this rank's blocks in `array` (no copies)."""
    def transposed(self) -> "Layout": ...
    def relabeled(self, new_rank_of: Sequence[int]) -> "Layout": ...
    def __eq__(self, other: object) -> bool: ...

def block_cyclic(m: int, n: int, mb: int, nb: int, grid: Tuple[int, int], rank: int, *,
                 src: Tuple[int, int] = (0, 0), first_block: Optional[Tuple[int, int]] = None,
                 grid_order: str = "row", grid_ranks: Optional[npt.ArrayLike] = None, lld: int = 0,
                 order: str = "F", submatrix: Optional[Tuple[int, int, int, int]] = None) -> Layout:
    """ScaLAPACK-style block-cyclic layout of an m x n matrix in mb x nb blocks on a P x Q grid."""

def blocked(row_splits: Sequence[int], col_splits: Sequence[int], ranks: npt.ArrayLike, rank: int, *,
            lld: int = 0, order: str = "F") -> Layout:
    """Block (i, j) = rows row_splits[i]:row_splits[i+1] x columns col_splits[j]:col_splits[j+1], owned by
    ranks[i][j]; each rank stores its block as one local array."""

def custom(row_splits: Sequence[int], col_splits: Sequence[int], owners: npt.ArrayLike,
           my_blocks: Sequence[Tuple[int, int, int, int, str]], rank: int, *, packing_order: str = "F") -> Layout:
    """Any owner per block; my_blocks = (block_row, block_col, offset, ld, order) of this rank's blocks in one
    1-D local array."""

def even_splits(n: int, parts: int) -> list[int]: ...

Box = Tuple[Tuple[int, ...], Tuple[int, ...]]
# order=: None or 'C' (last axis fastest), 'F' (first axis fastest), or the axes fastest first.
AxisOrder = Union[str, Sequence[int], None]

class NdLayout:
    """A distributed N-d array layout seen from one rank: blocks per axis, their owners, this rank's storage."""
    @property
    def ndim(self) -> int: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def blocks(self) -> Tuple[int, ...]: ...
    def splits(self, axis: int) -> list[int]: ...
    @property
    def grid(self) -> Tuple[int, ...]: ...
    @property
    def rank(self) -> int: ...
    @property
    def order(self) -> Tuple[int, ...]:
        """The storage order: axes from the fastest-varying to the slowest."""
    @property
    def local_elements(self) -> int: ...
    @property
    def local_shape(self) -> Tuple[int, ...]:
        """One extent per axis (strided in the layout's order), or (local_elements,) for several boxes apart."""
    def owner(self, block: Sequence[int]) -> int: ...
    def empty(self, dtype: DTypeLike = None) -> np.ndarray:
        """A zero-filled local array of local_shape, strided as the layout stores it (float64 unless dtype)."""
    def local_view(self, array: np.ndarray) -> np.ndarray:
        """The local array (local_shape, the layout's strides) over `array`'s memory (no copy)."""
    def local_blocks(self) -> list[Box]:
        """This rank's blocks as (lo, hi) boxes of global indices."""
    def local_views(self, array: np.ndarray) -> list[Tuple[Tuple[int, ...], np.ndarray]]:
        """(lo, writable view) for each of this rank's blocks in `array` (no copies)."""
    def permuted(self, axes: Sequence[int]) -> "NdLayout": ...
    def relabeled(self, new_rank_of: Sequence[int]) -> "NdLayout": ...
    def __eq__(self, other: object) -> bool: ...

def block_cyclic_nd(shape: Sequence[int], block: Sequence[int], grid: Sequence[int], rank: int, *,
                    order: AxisOrder = None, grid_ranks: Optional[npt.ArrayLike] = None) -> NdLayout:
    """Block-cyclic on a d-dimensional process grid; grid_ranks: the rank at each grid position (C order)."""

def box_layout(boxes: Sequence[Union[Box, Sequence[Box]]], rank: int, *, order: AxisOrder = None,
               packing_order: AxisOrder = None) -> NdLayout:
    """boxes[r]: rank r's box (lo, hi) or list of boxes; together they cover the index space exactly."""

def brick_boxes(shape: Sequence[int], grid: Sequence[int]) -> list[Box]: ...
def pencil_boxes(shape: Sequence[int], axis: int, grid: Sequence[int]) -> list[Box]: ...
def slab_boxes(shape: Sequence[int], split_axis: int, nranks: int) -> list[Box]: ...

class Job:
    """One transform of a batch: A = alpha * op(B) + beta * A."""
    def __init__(self, a: Layout, b: Layout, op: str = "N", dtype: DTypeLike = None, region: Region = None) -> None: ...
    @property
    def a(self) -> Layout: ...
    @property
    def b(self) -> Layout: ...
    @property
    def op(self) -> str: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...

class ReshapeJob:
    """One N-d transform of a batch: A = alpha * permute(B, axes) + beta * A."""
    def __init__(self, a: NdLayout, b: NdLayout, axes: Optional[Sequence[int]] = None, dtype: DTypeLike = None, *,
                 conjugate: bool = False, region: Region = None) -> None: ...
    @property
    def a(self) -> NdLayout: ...
    @property
    def b(self) -> NdLayout: ...
    @property
    def axes(self) -> list[int]: ...
    @property
    def conjugate(self) -> bool: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...

class TransformPlan:
    """An immutable, reusable transform plan."""
    def execute(self, a: np.ndarray, b: np.ndarray, alpha: complex = 1.0, beta: complex = 0.0) -> None: ...
    def execute_batch(self, jobs: Sequence[tuple]) -> None: ...
    def start(self, a: np.ndarray, b: np.ndarray, alpha: complex = 1.0, beta: complex = 0.0) -> None:
        """Split phase: posts the exchange and returns; wait() completes it. Collective."""
    def start_batch(self, jobs: Sequence[tuple]) -> None: ...
    def wait(self) -> None: ...
    @property
    def in_progress(self) -> bool: ...
    def inverse(self) -> "TransformPlan": ...
    @property
    def jobs(self) -> list[Job]:
        """The matrix jobs (empty for plans of N-d jobs)."""
    @property
    def reshape_jobs(self) -> list[ReshapeJob]:
        """Every job in N-d form (a matrix job is the case d = 2)."""
    @property
    def strategy(self) -> str: ...
    @property
    def output_boxes_held(self) -> list[Box]:
        """A plan from make_reshape_plan(comm, my_input_boxes, my_output_boxes, ...): this rank's output boxes, as
        passed (another rank's when relabeled); other plans: []."""
    @property
    def output_boxes_passed_by(self) -> int:
        """The rank that passed output_boxes_held (this rank unless relabeled)."""
    def statistics(self) -> dict[str, Union[int, bool, float, str]]:
        """Per rank and execution: bytes and messages, the planning profile (seconds) and reason (why the strategy)."""

def make_transform_plan(comm: MPI.Comm, a: Layout, b: Layout, op: str = "N", dtype: DTypeLike = None, *,
              region: Region = None, strategy: str = "auto", stores: str = "auto", check_consistency: bool = True,
              num_threads: int = 0, torus: Optional[dict[str, Any]] = None, one_shot: bool = False,
              timeout_seconds: Optional[float] = None) -> TransformPlan:
    """strategy 'torus_routed' needs torus={'shape': '4x2', ...} (mesh, mapping, mode, alpha, beta, gamma,
    delta, choice, hardware; docs/torus.md). one_shot: the plan runs once ('auto' weighs set-up against one
    execution). stores: 'auto', 'cached' or 'streaming' (non-temporal stores; docs/transform.md).
    timeout_seconds: this plan's own watchdog timeout (its making and executions), in place of the process's
    (set_timeout); None: the process's; 0: never (docs/errors.md). Every plan-making function takes it."""
def make_batch_transform_plan(comm: MPI.Comm, jobs: Sequence[Job], *, strategy: str = "auto", stores: str = "auto",
                    check_consistency: bool = True, num_threads: int = 0,
                    torus: Optional[dict[str, Any]] = None, one_shot: bool = False,
                    timeout_seconds: Optional[float] = None) -> TransformPlan: ...
def relabel_targets(comm: MPI.Comm, jobs: Sequence[Job], solver: str = "exact"
                    ) -> Tuple[list[Layout], list[int], dict[str, Union[int, float]]]: ...

@overload
def make_reshape_plan(comm: MPI.Comm, a: NdLayout, b: NdLayout, axes: Optional[Sequence[int]] = None,
                      dtype: DTypeLike = None, *, conjugate: bool = False, region: Region = None,
                      strategy: str = "auto", stores: str = "auto", check_consistency: bool = True,
                      num_threads: int = 0, torus: Optional[dict[str, Any]] = None,
                      one_shot: bool = False, timeout_seconds: Optional[float] = None) -> TransformPlan:
    """A = alpha * permute(B, axes) + beta * A: axis i of A is axis axes[i] of B; options as for make_transform_plan."""
@overload
def make_reshape_plan(comm: MPI.Comm, my_input_boxes: Union[Box, Sequence[Box]],
                      my_output_boxes: Union[Box, Sequence[Box]], dtype: DTypeLike, *,
                      axes: Optional[Sequence[int]] = None, input_order: AxisOrder = None,
                      output_order: AxisOrder = None, conjugate: bool = False, relabel: bool = False,
                      strategy: str = "auto", stores: str = "auto", check_consistency: bool = True,
                      num_threads: int = 0, torus: Optional[dict[str, Any]] = None, one_shot: bool = False,
                      timeout_seconds: Optional[float] = None) -> TransformPlan:
    """The reshape from each rank's own boxes (FFT libraries' calling model): this rank's boxes of B and of A in
    global coordinates of any origin; the input boxes tile one index space, the output boxes that space permuted
    by axes. relabel=True: this rank may hold another rank's output boxes (TransformPlan.output_boxes_held)."""
def make_batch_reshape_plan(comm: MPI.Comm, jobs: Sequence[ReshapeJob], *, strategy: str = "auto",
                            stores: str = "auto", check_consistency: bool = True, num_threads: int = 0,
                            torus: Optional[dict[str, Any]] = None, one_shot: bool = False,
                            timeout_seconds: Optional[float] = None) -> TransformPlan: ...
def relabel_reshape_targets(comm: MPI.Comm, jobs: Sequence[ReshapeJob], solver: str = "exact"
                            ) -> Tuple[list[NdLayout], list[int], dict[str, Union[int, float]]]: ...

class NodeBuffer:
    """This rank's segment of memory that the ranks of its node can read (from node_buffer). Put a reshape's or
    transform's input B there: node peers then read it in place, one copy per element instead of two. Free it
    with free() on every rank (collective) or use it as a with block; B must not change while an execution
    reads it. Collected without free(), it stays allocated (ResourceWarning)."""
    @property
    def nbytes(self) -> int:
        """Bytes of this rank's segment (0 once freed)."""
    @property
    def freed(self) -> bool: ...
    def array(self, dtype: DTypeLike = None, count: Optional[int] = None) -> np.ndarray:
        """A 1-D array of `count` elements of dtype (float64 unless given; default: as many as fit) over this
        rank's segment, no copy; NdLayout.local_view(array) gives the N-d view."""
    def free(self) -> None:
        """Collective: frees the buffer; refused on every rank, nothing freed, while a rank holds an array of it."""
    def __enter__(self) -> NodeBuffer: ...
    def __exit__(self, type: Any, value: Any, traceback: Any) -> None: ...

def node_buffer(comm: MPI.Comm, nbytes: int) -> NodeBuffer:
    """Allocates this rank's nbytes (any count per rank, 0 included) of node-shared memory
    (MPI_Win_allocate_shared). Collective over comm."""

class NeighborPlan:
    """A persistent neighborhood alltoallv bound to its send and receive arrays."""
    def start(self) -> None: ...
    def wait(self) -> None: ...
    def execute(self) -> None:
        """One whole exchange: start() then wait()."""
    @property
    def active(self) -> bool: ...
    @property
    def send(self) -> np.ndarray: ...
    @property
    def recv(self) -> np.ndarray: ...
    def statistics(self) -> dict[str, Any]:
        """strategy, reason, regions, inter/intra_region_messages and _bytes, estimates {strategy: seconds}."""

def make_neighbor_plan(comm: MPI.Comm, send: np.ndarray, sendcounts: Sequence[int], sdispls: Sequence[int],
                       recv: np.ndarray, recvcounts: Sequence[int], rdispls: Sequence[int], *,
                       sources: Optional[Sequence[int]] = None, destinations: Optional[Sequence[int]] = None,
                       send_ids: Optional[np.ndarray] = None, recv_ids: Optional[np.ndarray] = None,
                       strategy: str = "auto", region_size: int = 0, region_id: Optional[int] = None,
                       cost_model: Optional[dict[str, Any]] = None,
                       timeout_seconds: Optional[float] = None) -> NeighborPlan:
    """Persistent neighborhood alltoallv (collective); counts and displacements in elements of the flat arrays.
    comm: a distributed-graph communicator, or any communicator with sources= and destinations=."""

def neighbor_alltoallv_init(comm: MPI.Comm, send: np.ndarray, sendcounts: Sequence[int], sdispls: Sequence[int],
                            recv: np.ndarray, recvcounts: Sequence[int], rdispls: Sequence[int], *,
                            sources: Optional[Sequence[int]] = None, destinations: Optional[Sequence[int]] = None,
                            send_ids: Optional[np.ndarray] = None, recv_ids: Optional[np.ndarray] = None,
                            strategy: str = "auto", region_size: int = 0, region_id: Optional[int] = None,
                            cost_model: Optional[dict[str, Any]] = None,
                            timeout_seconds: Optional[float] = None) -> NeighborPlan:
    """make_neighbor_plan's MPI-shaped alias (MPI_Neighbor_alltoallv_init)."""

def calibrate_cost_model(comm: MPI.Comm, *, region_size: int = 0, region_id: Optional[int] = None
                         ) -> dict[str, Union[float, str]]: ...

# algorithm, reason, recvcounts (int64 array), received_elements, bytes_sent, bytes_received, messages_sent,
# messages_received, bytes_local, work_bytes, metadata_bytes
InplaceReport = dict[str, Any]

def alltoallv_inplace(comm: MPI.Comm, buf: np.ndarray, sendcounts: Sequence[int],
                      recvcounts: Optional[Sequence[int]] = None, *, algorithm: str = "auto",
                      work_bytes: int = 4 << 20, pairwise_guard: float = 4.0,
                      timeout_seconds: Optional[float] = None) -> InplaceReport:
    """Variable-size all-to-all in place: buf holds the blocks for ranks 0..P-1 on entry, the blocks from
    ranks 0..P-1 on exit (report['recvcounts'])."""

def alltoall_inplace(comm: MPI.Comm, buf: np.ndarray, count: int, *, algorithm: str = "auto",
                     work_bytes: int = 4 << 20, pairwise_guard: float = 4.0,
                      timeout_seconds: Optional[float] = None) -> InplaceReport: ...

def alltoallv_inplace_symmetric(comm: MPI.Comm, buf: np.ndarray, counts: Sequence[int], displs: Sequence[int], *,
                                work_bytes: int = 4 << 20) -> InplaceReport:
    """MPI_Alltoallv(MPI_IN_PLACE, ...) semantics (symmetric counts, blocks at displs)."""

class InplacePlan:
    """An in-place alltoallv checked, agreed and set up once; execute(buf) only moves data."""
    def execute(self, buf: np.ndarray) -> InplaceReport:
        """Collective; buf must have the plan's dtype and size (else ValueError, on this rank only)."""
    def start(self, buf: np.ndarray) -> None:
        """Runs the whole exchange (the algorithms step through rounds); wait() only returns."""
    def wait(self) -> None: ...
    @property
    def in_progress(self) -> bool: ...
    def statistics(self) -> InplaceReport:
        """The latest execution's report with its counters (before the first: report)."""
    @property
    def report(self) -> InplaceReport:
        """What execute() does (algorithm, reason, recvcounts, ...); the counters are per execution (0 here)."""
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def size(self) -> int: ...

def make_inplace_plan(comm: MPI.Comm, buf: np.ndarray, sendcounts: Sequence[int],
                      recvcounts: Optional[Sequence[int]] = None, *, algorithm: str = "auto",
                      work_bytes: int = 4 << 20, pairwise_guard: float = 4.0,
                      timeout_seconds: Optional[float] = None) -> InplacePlan:
    """Plans alltoallv_inplace once (collective): buf gives the dtype and the capacity (its size); not kept."""

def make_alltoall_inplace_plan(comm: MPI.Comm, buf: np.ndarray, count: int, *, algorithm: str = "auto",
                               work_bytes: int = 4 << 20, pairwise_guard: float = 4.0,
                      timeout_seconds: Optional[float] = None) -> InplacePlan: ...

def make_inplace_plan_symmetric(comm: MPI.Comm, buf: np.ndarray, counts: Sequence[int], displs: Sequence[int], *,
                                work_bytes: int = 4 << 20) -> InplacePlan: ...

class GemmPlan:
    """An immutable, reusable plan of C = alpha * op(A) * op(B) + beta * C."""
    def execute(self, c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: complex = 1.0,
                beta: complex = 0.0) -> None: ...
    def start(self, c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: complex = 1.0,
              beta: complex = 0.0) -> None:
        """Split phase: the multiply, then C's redistribution started; wait() completes it. Collective."""
    def wait(self) -> None: ...
    @property
    def in_progress(self) -> bool: ...
    @property
    def a(self) -> Layout: ...
    @property
    def b(self) -> Layout: ...
    @property
    def c(self) -> Layout: ...
    @property
    def op_a(self) -> str: ...
    @property
    def op_b(self) -> str: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    def statistics(self) -> dict[str, Any]:
        """schedule (dict), schedule_summary, idle, position, multiply (bytes_sent, bytes_received,
        messages_sent, messages_received, bytes_local), transform_in, transform_out (TransformPlan.statistics
        dicts), c_in_place, c_elements_in_place, native_window_reused, grid_lines_reused, communication (how panels travel,
        "auto" resolved), relabel_volume_before, relabel_volume_after, planning (seconds of make_gemm_plan:
        agreement, placement, transforms, storage, grid_lines, rounds, total), last_execution (seconds)."""

def make_gemm_plan(comm: MPI.Comm, a: Layout, b: Layout, c: Layout, op_a: str = "N", op_b: str = "N",
                   dtype: DTypeLike = None, *, memory_limit_bytes: int = 0, rounds: int = 0,
                   communication: str = "auto", overlap: bool = True, relabel: bool = True,
                   native_order: str = "auto", max_idle_fraction: float = 0.03, strategy: str = "auto",
                   timeout_seconds: Optional[float] = None) -> GemmPlan: ...

def get_trace_mode() -> str:
    """This process's trace mode: 'off', 'summary' or 'calls' (REDIST_TRACE when the library was loaded)."""

def set_trace_mode(mode: str) -> str:
    """Sets this process's trace mode ('off', 'summary' or 'calls'; every rank alike); returns the previous one."""

def trace_totals() -> list[dict[str, Any]]:
    """This process's traced calls since the start or the last trace_reset, one dict per entry point and path."""

def trace_reset() -> None:
    """Forgets this process's traced totals."""

def trace_summary(comm: MPI.Comm) -> str:
    """The summary table over the ranks of comm (collective): the text on comm's rank 0, '' elsewhere."""
