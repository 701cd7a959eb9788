# SPDX-License-Identifier: BSD-3-Clause
"""redist.node_buffer: a reshape's input in node-shared memory (read in place by node peers) gives the same result
as from a private array; free() is collective and agreed; arrays over a segment keep it from being freed."""
import gc

import numpy as np
import pytest
from mpi4py import MPI

import redist
from seeds import seeded_rng

comm = MPI.COMM_WORLD


def bricks_and_pencils(rng, dims):
    shape = tuple(int(rng.integers(3, 12)) for _ in range(3))
    brick_grid = MPI.Compute_dims(comm.size, 3)
    pencil_axis = int(rng.integers(3))
    bricks = redist.box_layout(redist.brick_boxes(shape, brick_grid), comm.rank, order=dims["in"])
    pencils = redist.box_layout(redist.pencil_boxes(shape, pencil_axis, MPI.Compute_dims(comm.size, 2)), comm.rank,
                                order=dims["out"])
    return shape, bricks, pencils


def fill(layout, local, values):
    for lo, view in layout.local_views(local):
        view[...] = values[tuple(slice(l, l + n) for l, n in zip(lo, view.shape))]


def check(layout, local, expected, what):
    for lo, view in layout.local_views(local):
        assert np.array_equal(view, expected[tuple(slice(l, l + n) for l, n in zip(lo, view.shape))]), what


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_reshape_reads_its_input_from_a_node_buffer(dtype):
    rng = seeded_rng(9101)
    for case in range(3):
        orders = {"in": ["C", "F"][int(rng.integers(2))], "out": ["C", "F"][int(rng.integers(2))]}
        shape, bricks, pencils = bricks_and_pencils(rng, orders)
        values = (np.arange(np.prod(shape)).reshape(shape) + 1).astype(dtype)
        with redist.node_buffer(comm, bricks.local_elements * np.dtype(dtype).itemsize) as buffer:
            b = bricks.local_view(buffer.array(dtype, bricks.local_elements))
            fill(bricks, b, values)
            private_b = bricks.empty(dtype)
            fill(bricks, private_b, values)
            plan = redist.make_reshape_plan(comm, pencils, bricks, None, dtype, strategy="shared_memory")
            a, a_private = pencils.empty(dtype), pencils.empty(dtype)
            for repetition in range(2):
                plan.execute(a, b, 2.0, 0.0)
                plan.execute(a_private, private_b, 2.0, 0.0)
                check(pencils, a, 2 * values, f"case {case} shape {shape} orders {orders} repetition {repetition}")
                assert np.array_equal(a, a_private)
            del b  # the last array over the segment: free() (the with block's end) is allowed now
        assert buffer.freed and buffer.nbytes == 0


def test_free_is_refused_everywhere_while_one_rank_holds_an_array():
    buffer = redist.node_buffer(comm, 64 * (comm.rank + 1))
    kept = buffer.array(np.float64) if comm.rank == 0 else None
    if comm.rank == 0:
        assert kept.shape == (8,)
    expected = ValueError if comm.rank == 0 else redist.InvalidArgument
    with pytest.raises(expected, match="still alive" if comm.rank == 0 else "rank 0"):
        buffer.free()
    assert not buffer.freed
    if comm.rank == 0:
        kept[...] = 1.5  # still this rank's memory: nothing was freed
    del kept
    gc.collect()
    buffer.free()
    assert buffer.freed
    with pytest.raises(ValueError, match="freed"):
        buffer.free()  # a second free fails on the calling rank alone (no collective: none waits)
    with pytest.raises(ValueError, match="freed"):
        buffer.array()


def test_array_counts_and_empty_segments():
    nbytes = 0 if comm.rank % 2 else 40
    with redist.node_buffer(comm, nbytes) as buffer:
        assert buffer.nbytes == nbytes
        assert buffer.array(np.complex128).shape == ((nbytes // 16),)
        assert buffer.array(np.int32, 0).shape == (0,)
        with pytest.raises(ValueError, match="does not fit"):
            buffer.array(np.float64, nbytes // 8 + 1)
        with pytest.raises(TypeError):
            buffer.array(np.int16)
        gc.collect()


def test_a_size_below_zero_on_one_rank_fails_every_rank():
    bad = comm.size - 1
    expected = ValueError if comm.rank == bad else redist.InvalidArgument
    with pytest.raises(expected, match="size must be >= 0"):
        redist.node_buffer(comm, -8 if comm.rank == bad else 8)


def test_a_size_of_the_wrong_type_on_one_rank_fails_every_rank():
    bad = comm.size - 1
    expected = TypeError if comm.rank == bad else redist.InvalidArgument
    with pytest.raises(expected):
        redist.node_buffer(comm, "8" if comm.rank == bad else 8)


def test_a_buffer_collected_unfreed_warns_and_frees_nothing_collectively():
    buffer = redist.node_buffer(comm, 8)
    with pytest.warns(ResourceWarning, match="without free"):
        del buffer
        gc.collect()
