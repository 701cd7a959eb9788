# SPDX-License-Identifier: BSD-3-Clause
"""Shared test helpers: random layouts, scattering a global matrix into local arrays, gathering it back."""
import numpy as np
import redist

from seeds import seeded_rng

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64]


def global_matrix(rows, cols, dtype, salt):
    rng = seeded_rng(salt)
    values = rng.integers(-1000, 1000, size=(rows, cols))
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.integers(-1000, 1000, size=(rows, cols))
    return values.astype(dtype)


def scatter(layout, global_values, dtype=None):
    """This rank's local array of `layout` holding its part of global_values."""
    local = layout.empty(dtype or global_values.dtype)
    for r0, c0, view in layout.local_views(local):
        view[...] = global_values[r0:r0 + view.shape[0], c0:c0 + view.shape[1]]
    return local


def gather(comm, layout, local):
    """The whole matrix from every rank's local array (each element from its owner)."""
    pieces = [(r0, c0, view.copy()) for r0, c0, view in layout.local_views(local)]
    rows, cols = layout.shape
    out = np.zeros((rows, cols), dtype=local.dtype)
    seen = np.zeros((rows, cols), dtype=np.int64)
    for rank_pieces in comm.allgather(pieces):
        for r0, c0, block in rank_pieces:
            out[r0:r0 + block.shape[0], c0:c0 + block.shape[1]] = block
            seen[r0:r0 + block.shape[0], c0:c0 + block.shape[1]] += 1
    assert (seen == 1).all(), "the layout's blocks do not cover the matrix exactly once"
    return out


def grids(size):
    return [(p, size // p) for p in range(1, size + 1) if size % p == 0]


def random_splits(rng, n, parts):
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False)) if parts > 1 else []
    return [0, *map(int, cuts), n]


def random_layout(rng, comm, rows, cols):
    """A random layout of a rows x cols matrix over comm: block-cyclic (any grid, block sizes, source,
    storage order, grid numbering), blocked (random splits and owners) or custom (random owners, blocks
    stored one after another). rng must be seeded alike on every rank."""
    kind = rng.choice(["block_cyclic", "blocked", "custom"])
    size, rank = comm.size, comm.rank
    if kind == "block_cyclic":
        p, q = grids(size)[rng.integers(len(grids(size)))]
        return redist.block_cyclic(rows, cols, int(rng.integers(1, 6)), int(rng.integers(1, 6)), (p, q), rank,
                                   src=(int(rng.integers(p)), int(rng.integers(q))),
                                   grid_order=str(rng.choice(["row", "col"])), order=str(rng.choice(["F", "C"])))
    if kind == "blocked":  # a blocked layout stores one block per rank: at most `size` blocks
        block_rows = int(rng.integers(1, min(rows, size) + 1))
        block_cols = int(rng.integers(1, min(cols, size // block_rows) + 1))
        owners = rng.permutation(size)[:block_rows * block_cols].reshape(block_rows, block_cols)
        return redist.blocked(random_splits(rng, rows, block_rows), random_splits(rng, cols, block_cols), owners,
                              rank, order=str(rng.choice(["F", "C"])))
    row_splits = random_splits(rng, rows, int(rng.integers(1, min(rows, 4) + 1)))
    col_splits = random_splits(rng, cols, int(rng.integers(1, min(cols, 4) + 1)))
    owners = rng.integers(0, size, size=(len(row_splits) - 1, len(col_splits) - 1))
    my_blocks, offset = [], 0
    for i in range(owners.shape[0]):
        for j in range(owners.shape[1]):
            order = str(rng.choice(["F", "C"]))  # drawn on every rank, so that rng stays in step
            if owners[i, j] == rank:
                h, w = row_splits[i + 1] - row_splits[i], col_splits[j + 1] - col_splits[j]
                my_blocks.append((i, j, offset, h if order == "F" else w, order))
                offset += h * w
    return redist.custom(row_splits, col_splits, owners, my_blocks, rank)
