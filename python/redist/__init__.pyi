from typing import Optional, Tuple

import numpy as np
from mpi4py import MPI

from ._redist import (
    DimensionMismatch as DimensionMismatch,
    Error as Error,
    InconsistentRanks as InconsistentRanks,
    InsufficientMemory as InsufficientMemory,
    InvalidArgument as InvalidArgument,
    InvalidLayout as InvalidLayout,
    Job as Job,
    Layout as Layout,
    MPIError as MPIError,
    OverflowError as OverflowError,
    Plan as Plan,
    block_cyclic as block_cyclic,
    blocked as blocked,
    custom as custom,
    even_splits as even_splits,
    make_batch_plan as make_batch_plan,
    make_plan as make_plan,
    relabel_targets as relabel_targets,
)

__version__: str

def transform(comm: MPI.Comm, a_layout: Layout, a: np.ndarray, b_layout: Layout, b: np.ndarray, op: str = "N",
              alpha: complex = 1.0, beta: complex = 0.0, *, region: Optional[Tuple[str, int]] = None,
              strategy: str = "auto") -> np.ndarray: ...
