# SPDX-License-Identifier: BSD-3-Clause
"""N-d reshapes A = alpha * permute(B, axes) + beta * A through the Python interface, against NumPy on the gathered
arrays (np.transpose(B, axes), then each rank's blocks)."""
import gc

import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import DTYPES, random_splits
from seeds import seeded_rng

comm = MPI.COMM_WORLD
MAX_EXTENT = {1: 40, 2: 12, 3: 7, 4: 5, 5: 4}  # a few thousand elements at most


def global_array(shape, dtype, salt):
    rng = seeded_rng(salt)
    values = rng.integers(-1000, 1000, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.integers(-1000, 1000, size=shape)
    return values.astype(dtype)


def scatter(layout, global_values):
    """This rank's local array of `layout` holding its part of global_values."""
    local = layout.empty(global_values.dtype)
    for lo, view in layout.local_views(local):
        view[...] = global_values[tuple(slice(l, l + n) for l, n in zip(lo, view.shape))]
    return local


def gather(layout, local):
    """The whole array from every rank's local array (each element from its owner, exactly once)."""
    pieces = [(lo, view.copy()) for lo, view in layout.local_views(local)]
    out = np.zeros(layout.shape, dtype=local.dtype)
    seen = np.zeros(layout.shape, dtype=np.int64)
    for rank_pieces in comm.allgather(pieces):
        for lo, block in rank_pieces:
            where = tuple(slice(l, l + n) for l, n in zip(lo, block.shape))
            out[where] = block
            seen[where] += 1
    assert (seen == 1).all(), "the layout's blocks do not cover the array exactly once"
    return out


def random_order(rng, d):
    kind = rng.integers(4)
    return [None, "C", "F", [int(a) for a in rng.permutation(d)]][kind]


def factorizations(n, d):
    """Every grid of d factors whose product is n."""
    if d == 1:
        return [(n,)]
    return [(p, *rest) for p in range(1, n + 1) if n % p == 0 for rest in factorizations(n // p, d - 1)]


def random_boxes(rng, shape):
    """Boxes per rank: random cuts of every axis, a random owner per cell (so a rank may hold none, one or several
    boxes), and here and there an empty box; a rank's single box given bare or in a list."""
    splits = [random_splits(rng, n, int(rng.integers(1, min(n, 3) + 1))) for n in shape]
    cells = np.array(np.meshgrid(*[np.arange(len(s) - 1) for s in splits], indexing="ij")).reshape(len(shape), -1).T
    if len(cells) <= comm.size and rng.integers(2):  # at most one box per rank: regular storage
        owners = rng.permutation(comm.size)[:len(cells)]
    else:
        owners = rng.integers(0, comm.size, size=len(cells))
    boxes = [[] for _ in range(comm.size)]
    for cell, owner in zip(cells, owners):
        boxes[owner].append((tuple(int(s[c]) for s, c in zip(splits, cell)),
                             tuple(int(s[c + 1]) for s, c in zip(splits, cell))))
    for rank_boxes in boxes:
        if rng.integers(4) == 0:
            corner = tuple(int(rng.integers(0, n + 1)) for n in shape)
            rank_boxes.append((corner, corner))
    return [b[0] if len(b) == 1 and rng.integers(2) else b for b in boxes]


def random_layout(rng, shape):
    """A random N-d layout of `shape` over comm: block-cyclic (any grid of at most comm.size positions, random
    blocks, numbering and storage order) or boxes (half the time stored in an order per rank). rng must be seeded
    alike on every rank."""
    d = len(shape)
    order = random_order(rng, d)
    if rng.integers(2):
        grids = [g for n in range(1, comm.size + 1) for g in factorizations(n, d)]
        grid = grids[rng.integers(len(grids))]
        block = [int(rng.integers(1, n + 1)) for n in shape]
        ranks = rng.permutation(comm.size)[:int(np.prod(grid))].reshape(grid)
        return redist.block_cyclic_nd(shape, block, grid, comm.rank, order=order, grid_ranks=ranks)
    boxes = random_boxes(rng, shape)
    if rng.integers(2):  # every rank stores in an order of its own; blocks travel in `order`
        storage = [random_order(rng, d) for _ in range(comm.size)]
        return redist.box_layout(boxes, comm.rank, order=storage[comm.rank], packing_order=order or "C")
    return redist.box_layout(boxes, comm.rank, order=order)


def scalars(rng, dtype):
    if np.issubdtype(dtype, np.integer):
        return 1, 0
    pairs = [(1, 0), (2.5, -0.5), (0, 1.5), (-1, 1), (3, 0)]
    alpha, beta = pairs[rng.integers(len(pairs))]
    if np.issubdtype(dtype, np.complexfloating):
        return alpha + 2j * (alpha != 0), beta - 1j * (beta != 0)
    return alpha, beta


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_reshapes_match_numpy(dtype, d):
    rng = seeded_rng(2000 + 10 * DTYPES.index(dtype) + d)
    for trial in range(4):
        b_shape = tuple(int(rng.integers(1, MAX_EXTENT[d] + 1)) for _ in range(d))
        axes = [int(a) for a in rng.permutation(d)]
        a_shape = tuple(b_shape[a] for a in axes)
        b_layout, a_layout = random_layout(rng, b_shape), random_layout(rng, a_shape)
        conjugate = bool(np.issubdtype(dtype, np.complexfloating) and rng.integers(2))
        alpha, beta = scalars(rng, dtype)
        b_global = global_array(b_shape, dtype, salt=trial)
        a_global = global_array(a_shape, dtype, salt=trial + 100)
        b, a = scatter(b_layout, b_global), scatter(a_layout, a_global)
        b_before = b.copy()
        stores = ("auto", "cached", "streaming")[rng.integers(3)]
        plan = redist.make_reshape_plan(comm, a_layout, b_layout, axes if rng.integers(4) else tuple(axes), dtype,
                                        conjugate=conjugate, stores=stores)
        plan.execute(a, b, alpha, beta)
        moved = np.transpose(b_global, axes)
        expected = (alpha * (moved.conj() if conjugate else moved) + beta * a_global).astype(dtype)
        assert np.array_equal(gather(a_layout, a), expected), \
            f"trial {trial}: {a_layout} <- permute({b_layout}, {axes}), conjugate {conjugate}, {alpha}, {beta}, " \
            f"stores {stores}"
        assert np.array_equal(b, b_before), "B was modified"


def test_local_arrays_are_strided_as_stored():
    shape = (5, 6, 7)
    for order, axes, strides in [(None, (2, 1, 0), (42, 7, 1)), ("C", (2, 1, 0), (42, 7, 1)),
                                 ("F", (0, 1, 2), (1, 5, 30)), ([1, 2, 0], (1, 2, 0), (42, 1, 6))]:
        layout = redist.box_layout([(((0, 0, 0), shape))] + [[] for _ in range(comm.size - 1)], comm.rank,
                                   order=order)
        local = layout.empty(np.float32)
        if comm.rank == 0:
            assert layout.local_shape == shape and local.shape == shape
            assert tuple(s // 4 for s in local.strides) == strides
            assert layout.local_blocks() == [((0, 0, 0), shape)]
        else:
            assert layout.local_elements == 0 and local.size == 0
        flat = np.arange(layout.local_elements, dtype=np.float32)
        view = layout.local_view(flat)
        assert view.shape == local.shape and view.strides == local.strides
        assert np.shares_memory(view, flat) or flat.size == 0
        assert layout.order == axes
        # the permuted layout sees the same memory
        permuted = layout.permuted([2, 0, 1])
        assert permuted.shape == (7, 5, 6)
        assert np.array_equal(permuted.local_view(flat), np.transpose(view, [2, 0, 1]))


def test_layout_properties():
    layout = redist.block_cyclic_nd((10, 9, 4), (3, 2, 4), (comm.size, 1, 1), comm.rank, order="F")
    assert layout.ndim == 3 and layout.shape == (10, 9, 4) and layout.blocks == (4, 5, 1)
    assert layout.splits(0) == [0, 3, 6, 9, 10] and layout.grid == (comm.size, 1, 1)
    assert layout.rank == comm.rank and layout.order == (0, 1, 2)
    assert [layout.owner((i, 0, 0)) for i in range(4)] == [i % comm.size for i in range(4)]
    assert layout.local_elements == layout.empty().size
    assert layout == redist.block_cyclic_nd((10, 9, 4), (3, 2, 4), (comm.size, 1, 1), comm.rank, order="F")
    assert layout != layout.permuted([1, 0, 2])
    rotated = layout.relabeled([(r + 1) % comm.size for r in range(comm.size)])
    assert rotated.owner((0, 0, 0)) == 1 % comm.size
    assert "NdLayout" in repr(layout)
    assert redist.slab_boxes((4, 3, 2), 0, 2) == [((0, 0, 0), (2, 3, 2)), ((2, 0, 0), (4, 3, 2))]
    assert len(redist.brick_boxes((4, 4, 4), (2, 1, 2))) == 4
    assert redist.pencil_boxes((4, 6, 8), 1, (2, 1))[1] == ((2, 0, 0), (4, 6, 8))


def test_plan_is_reusable_and_inverse_goes_back():
    b_layout = redist.block_cyclic_nd((9, 7, 5), (2, 3, 2), (1, comm.size, 1), comm.rank, order=[1, 0, 2])
    a_layout = redist.block_cyclic_nd((5, 9, 7), (5, 1, 4), (comm.size, 1, 1), comm.rank, order="F")
    plan = redist.make_reshape_plan(comm, a_layout, b_layout, [2, 0, 1], np.complex64)
    assert [job.axes for job in plan.reshape_jobs] == [[2, 0, 1]] and plan.jobs == []
    b_global = global_array((9, 7, 5), np.complex64, salt=3)
    b = scatter(b_layout, b_global)
    a = a_layout.empty(np.complex64)
    for _ in range(3):
        plan.execute(a, b)
        assert np.array_equal(gather(a_layout, a), np.transpose(b_global, [2, 0, 1]))
    back = b_layout.empty(np.complex64)
    plan.inverse().execute(back, a)
    assert np.array_equal(back, b)
    stats = plan.statistics()
    assert comm.allreduce(stats["bytes_sent"]) + comm.allreduce(stats["bytes_local"]) == 9 * 7 * 5 * 8


def test_one_shot_reshape_and_batch():
    b_layout = redist.box_layout(redist.slab_boxes((6, 8, 3), 1, comm.size), comm.rank)
    a_layout = redist.box_layout(redist.slab_boxes((3, 6, 8), 0, comm.size), comm.rank, order="F")
    b_global = global_array((6, 8, 3), np.float64, salt=5)
    b = scatter(b_layout, b_global)
    a = a_layout.empty()
    assert redist.reshape(comm, a_layout, a, b_layout, b, (2, 0, 1), alpha=2.0) is a
    assert np.array_equal(gather(a_layout, a), 2.0 * np.transpose(b_global, (2, 0, 1)))
    jobs = [redist.ReshapeJob(a_layout, b_layout, [2, 0, 1], np.float64),
            redist.ReshapeJob(b_layout, b_layout, dtype=np.complex128, conjugate=True)]
    assert jobs[1].axes == [0, 1, 2] and jobs[1].conjugate and jobs[1].dtype == np.complex128
    c_global = global_array((6, 8, 3), np.complex128, salt=6)
    c = b_layout.empty(np.complex128)
    plan = redist.make_batch_reshape_plan(comm, jobs)
    plan.execute_batch([(a, b, 1.0, 1.0), (c, scatter(b_layout, c_global))])
    assert np.array_equal(gather(a_layout, a), 3.0 * np.transpose(b_global, (2, 0, 1)))
    assert np.array_equal(gather(b_layout, c), c_global.conj())


@pytest.mark.parametrize("strategy", ["auto", "point_to_point", "alltoallv", "shared_memory"])
def test_split_phase_pipeline_matches_blocking(strategy):
    """start() of batch k+1 while batch k is worked on, then wait(): the results of blocking executions; the arrays
    given to start() live until wait() even where the caller dropped them."""
    shape = (7, 6, 5)
    bricks = redist.box_layout(redist.brick_boxes(shape, MPI.Compute_dims(comm.size, 3)), comm.rank)
    x = redist.box_layout(redist.pencil_boxes(shape, 0, MPI.Compute_dims(comm.size, 2)), comm.rank, order=(0, 2, 1))
    plan = redist.make_reshape_plan(comm, x, bricks, dtype=np.complex128, strategy=strategy)
    inputs = [scatter(bricks, global_array(shape, np.complex128, salt=20 + k)) for k in range(3)]
    blocking, pipelined = [], [x.empty(np.complex128) for _ in inputs]
    for k, b in enumerate(inputs):
        a = x.empty(np.complex128)
        plan.execute(a, b, 2.0)
        blocking.append(a * (k + 1))
    plan.start(pipelined[0], inputs[0], 2.0)
    assert plan.in_progress
    plan.wait()
    for k in range(len(inputs)):
        if k + 1 < len(inputs):
            plan.start(pipelined[k + 1], inputs[k + 1].copy(), 2.0)  # the copy's only reference is the plan's
            gc.collect()
        pipelined[k] *= k + 1
        if k + 1 < len(inputs):
            plan.wait()
    assert not plan.in_progress
    assert all(np.array_equal(p, e) for p, e in zip(pipelined, blocking))
    assert plan.statistics()["start_overlaps"] == (plan.strategy == "point_to_point")
    batch = x.empty(np.complex128)
    plan.start_batch([(batch, inputs[0], 2.0)])
    plan.wait()
    assert np.array_equal(batch, blocking[0])


def test_split_phase_misuse_raises_on_every_rank():
    shape = (6, 4, 5)
    bricks = redist.box_layout(redist.brick_boxes(shape, MPI.Compute_dims(comm.size, 3)), comm.rank)
    x = redist.box_layout(redist.pencil_boxes(shape, 0, MPI.Compute_dims(comm.size, 2)), comm.rank)
    plan = redist.make_reshape_plan(comm, x, bricks)
    b = scatter(bricks, global_array(shape, np.float64, salt=31))
    a, other = x.empty(), x.empty()
    with pytest.raises(redist.InvalidArgument, match="without a start"):
        plan.wait()
    plan.start(a, b)
    with pytest.raises(redist.InvalidArgument, match="still in progress"):
        plan.start(other, b)
    with pytest.raises(redist.InvalidArgument, match="still in progress"):
        plan.execute(other, b)
    plan.wait()
    expected = x.empty()
    plan.execute(expected, b)
    assert np.array_equal(a, expected)
    with pytest.raises(TypeError, match="dtype float32"):
        plan.start(a, b.astype(np.float32))
    assert not plan.in_progress


def test_store_policy_is_an_option():
    """stores= picks the kernels' store instructions: the statistics say which, the result is the same, and an
    unknown policy is refused on every rank."""
    b_layout = redist.box_layout(redist.pencil_boxes((8, 8, 16), 2, (comm.size, 1)), comm.rank)
    a_layout = redist.box_layout(redist.pencil_boxes((16, 8, 8), 0, (1, comm.size)), comm.rank)
    b_global = global_array((8, 8, 16), np.complex128, salt=9)
    expected = np.transpose(b_global, (2, 1, 0))
    for stores in ("cached", "streaming"):
        plan = redist.make_reshape_plan(comm, a_layout, b_layout, (2, 1, 0), np.complex128, stores=stores)
        assert plan.statistics()["streaming_stores"] == (stores == "streaming")
        a = a_layout.empty(np.complex128)
        plan.execute(a, scatter(b_layout, b_global))
        assert np.array_equal(gather(a_layout, a), expected), stores
        a = a_layout.empty(np.complex128)
        redist.reshape(comm, a_layout, a, b_layout, scatter(b_layout, b_global), (2, 1, 0), stores=stores)
        assert np.array_equal(gather(a_layout, a), expected), stores
    with pytest.raises(ValueError, match="stores 'nontemporal': expected 'auto', 'cached' or 'streaming'"):
        redist.make_reshape_plan(comm, a_layout, b_layout, (2, 1, 0), stores="nontemporal")


def test_fft_cycle_returns_the_input_exactly():
    shape = (9, 10, 11)
    rng = seeded_rng(77)
    bricks3 = factorizations(comm.size, 3)
    grids2 = factorizations(comm.size, 2)
    brick = redist.box_layout(redist.brick_boxes(shape, bricks3[rng.integers(len(bricks3))]), comm.rank)
    # each pencil stored with its whole axis fastest, as an FFT along it wants
    pencils = [redist.box_layout(redist.pencil_boxes(shape, axis, grids2[rng.integers(len(grids2))]), comm.rank,
                                 order=[axis] + [k for k in (2, 1, 0) if k != axis]) for axis in range(3)]
    x_global = global_array(shape, np.complex128, salt=8)
    start = scatter(brick, x_global)
    current, layout = start, brick
    for target in pencils + [brick]:
        moved = target.empty(np.complex128)
        redist.make_reshape_plan(comm, target, layout, dtype=np.complex128).execute(moved, current)
        assert np.array_equal(gather(target, moved), x_global)
        current, layout = moved, target
    assert np.array_equal(current, start)


def test_relabel_reshape_targets_undoes_a_rotation():
    boxes = redist.slab_boxes((4 * comm.size, 3, 5), 0, comm.size)
    b_layout = redist.box_layout(boxes, comm.rank)
    a_layout = redist.box_layout(boxes[1:] + boxes[:1], comm.rank)
    layouts, new_rank_of, stats = redist.relabel_reshape_targets(comm, [redist.ReshapeJob(a_layout, b_layout)])
    assert sorted(new_rank_of) == list(range(comm.size))
    assert stats["remote_volume_after"] == 0 <= stats["remote_volume_before"]
    b_global = global_array(b_layout.shape, np.float64, salt=11)
    a = layouts[0].empty()
    redist.reshape(comm, layouts[0], a, b_layout, scatter(b_layout, b_global))
    assert np.array_equal(gather(layouts[0], a), b_global)


def _stored(global_values, boxes, origin, order):
    """A rank's boxes of global_values (indices from `origin`) one after another, each dense in `order` (axes
    fastest first; None: C order), as one flat array: the storage the box plans promise, written with NumPy."""
    parts = [np.zeros(0, global_values.dtype)]
    for lo, hi in boxes:
        block = global_values[tuple(slice(l - o, h - o) for l, h, o in zip(lo, hi, origin))]
        fastest_first = order or list(reversed(range(block.ndim)))
        parts.append(np.transpose(block, fastest_first[::-1]).ravel())
    return np.concatenate(parts)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32])
def test_plans_from_each_ranks_boxes_match_numpy(dtype):
    rng = seeded_rng(7000 + DTYPES.index(dtype))
    for trial in range(6):
        d = int(rng.integers(1, 4))
        b_shape = tuple(int(rng.integers(1, MAX_EXTENT[d] + 1)) for _ in range(d))
        axes = [int(a) for a in rng.permutation(d)]
        a_shape = tuple(b_shape[a] for a in axes)
        origin = [int(rng.integers(-4, 5)) for _ in range(d)]  # boxes in global coordinates of any origin
        a_origin = [origin[a] for a in axes]
        moved = lambda boxes, o: [(tuple(l + x for l, x in zip(lo, o)), tuple(h + x for h, x in zip(hi, o)))
                                  for lo, hi in (boxes if isinstance(boxes, list) else [boxes])]
        b_boxes = [moved(b, origin) for b in random_boxes(rng, b_shape)]
        a_boxes = [moved(b, a_origin) for b in random_boxes(rng, a_shape)]
        orders = [[random_order(rng, d) for _ in range(comm.size)] for _ in range(2)]
        as_list = lambda order: [int(a) for a in (order if isinstance(order, list) else
                                                 {None: range(d - 1, -1, -1), "C": range(d - 1, -1, -1),
                                                  "F": range(d)}[order])]
        relabel = bool(rng.integers(2))
        plan = redist.make_reshape_plan(comm, b_boxes[comm.rank], a_boxes[comm.rank], dtype, axes=axes,
                                        input_order=orders[0][comm.rank], output_order=orders[1][comm.rank],
                                        relabel=relabel)
        held = plan.output_boxes_held
        assert held == [(tuple(lo), tuple(hi)) for lo, hi in a_boxes[plan.output_boxes_passed_by]]
        assert relabel or plan.output_boxes_passed_by == comm.rank
        b_global = global_array(b_shape, dtype, salt=trial)
        b = _stored(b_global, b_boxes[comm.rank], origin, as_list(orders[0][comm.rank]))
        a = np.full(sum(int(np.prod(np.subtract(hi, lo))) for lo, hi in held), 7, dtype)
        plan.execute(a, b)
        expected = _stored(np.transpose(b_global, axes), held, a_origin, as_list(orders[1][comm.rank]))
        assert np.array_equal(a, expected), f"trial {trial}: axes {axes}, origin {origin}, relabel {relabel}"


def test_plans_from_boxes_refuse_bad_boxes_on_every_rank():
    mine = ((4 * comm.rank, 0), (4 * comm.rank + 4, 3))
    with pytest.raises(TypeError, match="my_input_boxes: expected a box"):
        redist.make_reshape_plan(comm, "brick", mine, np.float64)
    overlapping = ((0, 0), (4 * comm.size, 3)) if comm.rank == 0 else mine
    with pytest.raises(redist.InvalidLayout, match="input boxes: "):
        redist.make_reshape_plan(comm, overlapping, mine, np.float64) if comm.size > 1 else \
            redist.make_reshape_plan(comm, [mine, mine], mine, np.float64)
    with pytest.raises(redist.InvalidArgument, match="expected the input's space"):
        redist.make_reshape_plan(comm, mine, mine, np.float64, axes=[1, 0])


@pytest.fixture
def layouts():
    # every rank holds a 4 x 6 x 5 brick, so that every rank sees the same errors
    b_layout = redist.block_cyclic_nd((4 * comm.size, 6, 5), (4, 6, 5), (comm.size, 1, 1), comm.rank, order="F")
    a_layout = redist.block_cyclic_nd((5, 6, 4 * comm.size), (5, 6, 4), (1, 1, comm.size), comm.rank)
    return a_layout, b_layout


def test_bad_arrays_raise_on_every_rank(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_reshape_plan(comm, a_layout, b_layout, [2, 1, 0])
    a, b = a_layout.empty(), b_layout.empty()
    with pytest.raises(TypeError, match="B: dtype float32 does not match the transform's float64"):
        plan.execute(a, b_layout.empty(np.float32))
    with pytest.raises(ValueError, match=r"B: an array of shape \(4, 6, 5\) and strides \(30, 5, 1\) \(elements\) "
                                         r"is not the layout's local storage"):
        plan.execute(a, np.zeros((4, 6, 5)))  # C order, the layout stores Fortran order
    with pytest.raises(ValueError, match="A: the array has 119 elements, the layout stores 120"):
        plan.execute(np.zeros(119), b)
    with pytest.raises(ValueError, match="not contiguous"):
        plan.execute(np.zeros((120, 2))[:, 0], b)
    with pytest.raises(TypeError, match="complex alpha or beta"):
        plan.execute(a, b, 1j)
    plan.execute(np.zeros(120), np.zeros((4, 30), order="F"))  # flat buffers of the local elements are the storage
    with pytest.raises(ValueError, match="use execute_batch"):
        redist.make_batch_reshape_plan(comm, [redist.ReshapeJob(a_layout, b_layout, [2, 1, 0])] * 2).execute(a, b)


def test_bad_plans_and_one_bad_rank(layouts):
    a_layout, b_layout = layouts
    with pytest.raises(redist.InvalidArgument, match=r"axes are \{0, 0, 1\}; expected a permutation"):
        redist.make_reshape_plan(comm, a_layout, b_layout, [0, 0, 1])
    with pytest.raises(redist.DimensionMismatch, match="must have A's shape"):
        redist.make_reshape_plan(comm, a_layout, b_layout)
    with pytest.raises(TypeError, match="dtype float16 is not supported"):
        redist.make_reshape_plan(comm, a_layout, b_layout, [2, 1, 0], np.float16)
    plan = redist.make_reshape_plan(comm, a_layout, b_layout, [2, 1, 0])
    b = b_layout.empty(np.float32 if comm.rank == 0 else np.float64)
    expected = TypeError if comm.rank == 0 else redist.InvalidArgument
    with pytest.raises(expected, match="B: dtype float32"):
        plan.execute(a_layout.empty(), b)
    # refused by nanobind on one rank (axes of the wrong type): agreed all the same
    axes = "zyx" if comm.rank == comm.size - 1 else [2, 1, 0]
    expected = TypeError if comm.rank == comm.size - 1 else redist.InvalidArgument
    with pytest.raises(expected):
        redist.make_reshape_plan(comm, a_layout, b_layout, axes)


def test_bad_layouts():
    with pytest.raises(ValueError, match="order 'Z'"):
        redist.block_cyclic_nd((4, 4), (2, 2), (1, 1), comm.rank, order="Z")
    with pytest.raises(redist.Error):
        redist.block_cyclic_nd((4, 4), (0, 2), (1, 1), 0)
    with pytest.raises(redist.InvalidLayout, match="overlap"):
        redist.box_layout([[((0, 0), (2, 2)), ((1, 1), (3, 3))]], 0)
    with pytest.raises(redist.InvalidLayout, match="in no box"):
        redist.box_layout([((0, 0), (2, 2)), ((2, 0), (3, 1))], 0)
    with pytest.raises(TypeError, match=r"boxes\[1\]: expected a box \(lo, hi\) or a list of boxes"):
        redist.box_layout([((0,), (2,)), 7], 0)
    layout = redist.box_layout([((0, 0), (2, 2))], 0)
    with pytest.raises(IndexError):
        layout.owner((0, 1))
    with pytest.raises(IndexError):
        layout.owner((0,))
    with pytest.raises(redist.InvalidArgument):
        layout.permuted([0, 0])
