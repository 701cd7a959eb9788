# SPDX-License-Identifier: BSD-3-Clause
"""Error paths raise clear Python exceptions on every rank, before anything moves."""
import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import scatter

comm = MPI.COMM_WORLD


@pytest.fixture
def layouts():
    b_layout = redist.block_cyclic(20, 12, 3, 4, (comm.size, 1), comm.rank)
    a_layout = redist.block_cyclic(12, 20, 4, 3, (1, comm.size), comm.rank)
    return a_layout, b_layout


def test_wrong_dtype_raises_type_error(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    a = a_layout.empty(np.float64)
    with pytest.raises(TypeError, match="float32 does not match the transform's float64"):
        plan.execute(a, b_layout.empty(np.float32))
    with pytest.raises(TypeError, match="not supported"):
        redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float16)


def test_non_contiguous_array_is_refused_not_copied(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    b = b_layout.empty()
    wide = np.zeros((a_layout.local_shape[0], 2 * a_layout.local_shape[1]), order="F")
    with pytest.raises(ValueError, match="not contiguous"):
        plan.execute(wide[:, ::2], b)


def test_mismatched_shapes_and_orders(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    b = b_layout.empty()
    rows, cols = a_layout.local_shape
    with pytest.raises(ValueError, match="elements, the layout stores|does not match the layout"):
        plan.execute(np.zeros((rows + 1, cols + 1), order="C"), b)
    if rows * cols > 0:
        # The layout's order and leading dimension, one row or column more: another layout's array.
        order = a_layout.order
        longer = (rows + 1, cols) if order == "C" else (rows, cols + 1)
        with pytest.raises(ValueError, match="does not match the layout's local storage"):
            plan.execute(np.zeros(longer, order=order), b)
    if rows * cols > 0:
        with pytest.raises(ValueError, match="elements, the layout stores"):
            plan.execute(np.zeros(rows * cols - 1), b)
    with pytest.raises(redist.DimensionMismatch):
        redist.make_transform_plan(comm, a_layout, a_layout, "T", np.float64)


def test_read_only_target_is_refused(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    a = a_layout.empty()
    a.setflags(write=False)
    with pytest.raises(TypeError):
        plan.execute(a, b_layout.empty())


def test_bad_argument_on_one_rank_fails_everywhere(layouts):
    a_layout, b_layout = layouts
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    b = b_layout.empty(np.float32 if comm.rank == 0 else np.float64)
    if comm.rank == 0:
        with pytest.raises(TypeError):
            plan.execute(a_layout.empty(), b)
    else:
        with pytest.raises(redist.InvalidArgument, match="rank 0: B: dtype float32"):
            plan.execute(a_layout.empty(), b)
    op = "X" if comm.rank == comm.size - 1 else "T"
    expected = ValueError if comm.rank == comm.size - 1 else redist.InvalidArgument
    with pytest.raises(expected, match="op 'X'"):
        redist.make_transform_plan(comm, a_layout, b_layout, op, np.float64)


def test_bad_options_and_layouts():
    with pytest.raises(ValueError, match="order 'Z'"):
        redist.block_cyclic(4, 4, 2, 2, (1, comm.size), comm.rank, order="Z")
    with pytest.raises(ValueError, match="grid_order"):
        redist.block_cyclic(4, 4, 2, 2, (1, comm.size), comm.rank, grid_order="diagonal")
    with pytest.raises(ValueError, match="table of ranks"):
        redist.blocked([0, 2, 4], [0, 4], [[0, 0, 0]], comm.rank)
    with pytest.raises(redist.Error):
        redist.block_cyclic(4, 4, 0, 2, (1, comm.size), comm.rank)
    layout = redist.block_cyclic(4, 4, 2, 2, (1, comm.size), comm.rank)
    with pytest.raises(ValueError, match="strategy 'fastest'"):
        redist.make_transform_plan(comm, layout, layout, "N", np.float64, strategy="fastest")
    with pytest.raises(TypeError, match="mpi4py.MPI.Comm"):
        redist.make_transform_plan("MPI_COMM_WORLD", layout, layout)
    with pytest.raises(TypeError, match="complex alpha"):
        plan = redist.make_transform_plan(comm, layout, layout, "N", np.float64)
        plan.execute(layout.empty(), layout.empty(), alpha=1j)


def test_option_names_are_the_librarys_and_earlier_spellings_are_refused():
    # One spelling per value (docs/names.md): the message lists them all; the 0.1 development line's "automatic"
    # (CHANGELOG.md) is an unknown spelling like any other.
    layout = redist.block_cyclic(4, 4, 2, 2, (1, comm.size), comm.rank)
    for spelling in ("Auto", "automatic"):
        with pytest.raises(ValueError, match=f"'{spelling}': expected 'auto', 'point_to_point', 'alltoallv', "
                                             "'shared_memory' or 'torus_routed'"):
            redist.make_transform_plan(comm, layout, layout, "N", np.float64, strategy=spelling)
    plan = redist.make_transform_plan(comm, layout, layout, "N", np.float64, strategy="auto")
    source, target = layout.empty(), layout.empty()
    source[...] = 1.0
    plan.execute(target, source)  # A = op(B): the target first
    assert np.all(target == 1.0)
    with pytest.raises(ValueError, match="'automatic': expected 'auto'"):
        redist.alltoallv_inplace(comm, np.zeros(comm.size, dtype=np.int64), [1] * comm.size, algorithm="automatic")


def test_overflow_does_not_shadow_the_builtin_and_earlier_names_are_gone():
    namespace = {}
    exec("from redist import *", namespace)
    assert namespace.get("OverflowError", OverflowError) is OverflowError
    assert issubclass(redist.Overflow, redist.Error) and issubclass(redist.Overflow, OverflowError)
    for earlier in ("OverflowError", "Plan"):  # the 0.1 development line's names of Overflow and TransformPlan
        assert not hasattr(redist, earlier)


def test_layout_views_cover_the_local_array():
    layout = redist.block_cyclic(9, 7, 2, 3, (comm.size, 1), comm.rank, order="C")
    local = scatter(layout, np.arange(63, dtype=np.int64).reshape(9, 7))
    assert local.flags.c_contiguous and local.shape == layout.local_shape
    assert sum(v.size for _, _, v in layout.local_views(local)) == local.size


def test_timeout_is_set_and_checked():
    before = redist.get_timeout()
    try:
        assert redist.set_timeout(2.5, "abort") == before
        assert redist.get_timeout() == 2.5
        with pytest.raises(redist.InvalidArgument, match="expected a number >= 0"):
            redist.set_timeout(-1)
        with pytest.raises(redist.InvalidArgument, match="expected 'warn' or 'abort'"):
            redist.set_timeout(1, "later")
        assert redist.get_timeout() == 2.5  # a refused setting changes nothing
    finally:
        redist.set_timeout(before)
    assert redist.get_timeout() == before


def test_plans_take_their_own_timeout_checked_on_every_rank():
    layout = redist.block_cyclic(8, 8, 2, 2, (1, comm.size), comm.rank)
    plan = redist.make_transform_plan(comm, layout, layout, "N", np.float64, timeout_seconds=30.0)
    plan.execute(layout.empty(), layout.empty())
    redist.make_gemm_plan(comm, layout, layout, layout, timeout_seconds=0.0)
    buf = np.zeros(2 * comm.size)
    redist.make_alltoall_inplace_plan(comm, buf, 2, timeout_seconds=None).execute(buf)
    redist.alltoall_inplace(comm, buf, 2, timeout_seconds=1e9)
    # A value that is no timeout, on the last rank only: refused there and, through the agreement, everywhere.
    wrong = -1.0 if comm.rank == comm.size - 1 else 5.0
    expected = ValueError if comm.rank == comm.size - 1 else redist.InvalidArgument
    for make in (lambda: redist.make_transform_plan(comm, layout, layout, "N", np.float64, timeout_seconds=wrong),
                 lambda: redist.make_gemm_plan(comm, layout, layout, layout, timeout_seconds=wrong),
                 lambda: redist.make_inplace_plan(comm, buf, [2] * comm.size, timeout_seconds=wrong),
                 lambda: redist.alltoall_inplace(comm, buf, 2, timeout_seconds=float("nan") if wrong < 0 else wrong)):
        with pytest.raises(expected, match="timeout_seconds"):
            make()


def test_argument_agreement_can_be_switched_off_and_on():
    layout = redist.block_cyclic(6, 6, 2, 2, (1, comm.size), comm.rank)
    plan = redist.make_transform_plan(comm, layout, layout, "T", np.float64)
    assert redist.get_argument_agreement() is True
    try:
        assert redist.set_argument_agreement(False) is True
        assert redist.get_argument_agreement() is False
        a, b = layout.empty(), layout.empty()
        b[...] = 1.0
        plan.execute(a, b)  # calls work unagreed
        assert (a == 1.0).all()
        with pytest.raises(TypeError, match="does not match"):  # an error on every rank still raises locally
            plan.execute(a, b.astype(np.float32))
    finally:
        assert redist.set_argument_agreement(True) is False
    assert redist.get_argument_agreement() is True
