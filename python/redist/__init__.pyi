# SPDX-License-Identifier: BSD-3-Clause
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from mpi4py import MPI

from ._redist import (
    DimensionMismatch as DimensionMismatch,
    Error as Error,
    GemmPlan as GemmPlan,
    InconsistentRanks as InconsistentRanks,
    InsufficientMemory as InsufficientMemory,
    InvalidArgument as InvalidArgument,
    InvalidLayout as InvalidLayout,
    Job as Job,
    Layout as Layout,
    InvalidTopology as InvalidTopology,
    InvalidCount as InvalidCount,
    InvalidBuffer as InvalidBuffer,
    InvalidDatatype as InvalidDatatype,
    MPIError as MPIError,
    NdLayout as NdLayout,
    NeighborPlan as NeighborPlan,
    NodeBuffer as NodeBuffer,
    Overflow as Overflow,
    ReshapeJob as ReshapeJob,
    TransformPlan as TransformPlan,
    alltoall_inplace as alltoall_inplace,
    alltoallv_inplace as alltoallv_inplace,
    alltoallv_inplace_symmetric as alltoallv_inplace_symmetric,
    block_cyclic as block_cyclic,
    block_cyclic_nd as block_cyclic_nd,
    blocked as blocked,
    box_layout as box_layout,
    brick_boxes as brick_boxes,
    calibrate_cost_model as calibrate_cost_model,
    custom as custom,
    even_splits as even_splits,
    get_argument_agreement as get_argument_agreement,
    get_timeout as get_timeout,
    get_trace_mode as get_trace_mode,
    make_batch_transform_plan as make_batch_transform_plan,
    make_batch_reshape_plan as make_batch_reshape_plan,
    make_gemm_plan as make_gemm_plan,
    make_transform_plan as make_transform_plan,
    make_reshape_plan as make_reshape_plan,
    make_neighbor_plan as make_neighbor_plan,
    neighbor_alltoallv_init as neighbor_alltoallv_init,
    node_buffer as node_buffer,
    pencil_boxes as pencil_boxes,
    relabel_reshape_targets as relabel_reshape_targets,
    relabel_targets as relabel_targets,
    set_argument_agreement as set_argument_agreement,
    set_timeout as set_timeout,
    set_trace_mode as set_trace_mode,
    slab_boxes as slab_boxes,
    trace_reset as trace_reset,
    trace_summary as trace_summary,
    trace_totals as trace_totals,
)

__version__: str

class trace:
    comm: MPI.Comm
    mode: str
    print_summary: bool
    summary: str
    totals: list[dict[str, Any]]
    def __init__(self, comm: MPI.Comm, mode: str = "summary", *, print_summary: bool = False) -> None: ...
    def __enter__(self) -> "trace": ...
    def __exit__(self, *exc: Any) -> bool: ...

def transform(comm: MPI.Comm, a_layout: Layout, a: np.ndarray, b_layout: Layout, b: np.ndarray, op: str = "N",
              alpha: complex = 1.0, beta: complex = 0.0, *, region: Optional[Tuple[str, int]] = None,
              strategy: str = "auto", stores: str = "auto") -> np.ndarray: ...

def reshape(comm: MPI.Comm, a_layout: NdLayout, a: np.ndarray, b_layout: NdLayout, b: np.ndarray,
            axes: Optional[Sequence[int]] = None, alpha: complex = 1.0, beta: complex = 0.0, *,
            conjugate: bool = False, strategy: str = "auto", stores: str = "auto") -> np.ndarray: ...

def gemm(comm: MPI.Comm, a_layout: Layout, a: np.ndarray, b_layout: Layout, b: np.ndarray, c_layout: Layout,
         c: np.ndarray, alpha: complex = 1.0, beta: complex = 0.0, op_a: str = "N", op_b: str = "N",
         **options: Any) -> np.ndarray: ...
