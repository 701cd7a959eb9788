# SPDX-License-Identifier: BSD-3-Clause
"""Distributed GEMM through the Python interface against NumPy on the gathered matrices."""
import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import gather, random_layout, scatter
from seeds import seeded_rng

comm = MPI.COMM_WORLD
FLOAT_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def small_integers(rng, shape, dtype):
    """Small integer values: every product and sum is exact in each dtype, so results compare exactly."""
    values = rng.integers(-4, 5, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.integers(-4, 5, size=shape)
    return values.astype(dtype)


def apply_op(op, x):
    return {"N": x, "T": x.T, "C": x.conj().T}[op]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op_a,op_b", [("N", "N"), ("T", "N"), ("N", "C"), ("C", "T")])
def test_random_layouts_match_numpy(dtype, op_a, op_b):
    rng = seeded_rng(300 + FLOAT_DTYPES.index(dtype) * 4 + ["NN", "TN", "NC", "CT"].index(op_a + op_b))
    for trial in range(3):
        m, n, k = (int(x) for x in rng.integers(1, 24, size=3))
        a_shape = (m, k) if op_a == "N" else (k, m)
        b_shape = (k, n) if op_b == "N" else (n, k)
        a_layout = random_layout(rng, comm, *a_shape)
        b_layout = random_layout(rng, comm, *b_shape)
        c_layout = random_layout(rng, comm, m, n)
        a_global = small_integers(rng, a_shape, dtype)
        b_global = small_integers(rng, b_shape, dtype)
        c_global = small_integers(rng, (m, n), dtype)
        alpha, beta = (2, -1) if trial != 2 else (1, 0)
        a, b, c = scatter(a_layout, a_global), scatter(b_layout, b_global), scatter(c_layout, c_global)
        plan = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, op_a, op_b, dtype)
        plan.execute(c, a, b, alpha, beta)
        expected = alpha * apply_op(op_a, a_global) @ apply_op(op_b, b_global) + beta * c_global
        got = gather(comm, c_layout, c)
        assert np.array_equal(got, expected.astype(dtype)), (
            f"trial {trial}: m={m} n={n} k={k}, {c_layout} = {op_a}({a_layout}) * {op_b}({b_layout})")


@pytest.mark.parametrize("options", [
    {"communication": "one_sided"},
    {"communication": "two_sided"},
    {"communication": "shared_memory"},
    {"overlap": False, "relabel": False},
    {"native_order": "contiguous", "rounds": 3},
    {"native_order": "grouped", "strategy": "point_to_point"},
])
def test_options_give_the_same_product(options):
    rng = seeded_rng(17)
    m, n, k = 19, 13, 29
    a_layout = redist.block_cyclic(m, k, 4, 3, (1, comm.size), comm.rank)
    b_layout = redist.block_cyclic(k, n, 2, 5, (comm.size, 1), comm.rank, order="C")
    c_layout = redist.block_cyclic(m, n, 3, 3, (1, comm.size), comm.rank)
    a_global, b_global = small_integers(rng, (m, k), np.float64), small_integers(rng, (k, n), np.float64)
    a, b, c = scatter(a_layout, a_global), scatter(b_layout, b_global), c_layout.empty()
    redist.gemm(comm, a_layout, a, b_layout, b, c_layout, c, **options)
    assert np.array_equal(gather(comm, c_layout, c), a_global @ b_global)


def test_plan_is_reusable_and_reports_its_schedule():
    rng = seeded_rng(4)
    m, n, k = 24, 16, 40
    a_layout = redist.block_cyclic(m, k, 4, 4, (1, comm.size), comm.rank)
    b_layout = redist.block_cyclic(k, n, 4, 4, (1, comm.size), comm.rank)
    c_layout = redist.block_cyclic(m, n, 4, 4, (comm.size, 1), comm.rank)
    plan = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, dtype=np.complex128)
    assert plan.dtype == np.complex128 and plan.op_a == "identity" and plan.c == c_layout
    c = c_layout.empty(np.complex128)
    for trial in range(2):
        a_global = small_integers(rng, (m, k), np.complex128)
        b_global = small_integers(rng, (k, n), np.complex128)
        plan.execute(c, scatter(a_layout, a_global), scatter(b_layout, b_global), 1j, 0)
        assert np.array_equal(gather(comm, c_layout, c), 1j * (a_global @ b_global))
    stats = plan.statistics()
    schedule = stats["schedule"]
    assert (schedule["m"], schedule["n"], schedule["k"]) == (m, n, k)
    assert schedule["ranks"] == comm.size and "grid" in stats["schedule_summary"]
    assert stats["idle"] == (stats["position"] == (-1, -1, -1))
    assert stats["transform_in"]["bytes_sent"] >= 0 and stats["multiply"]["bytes_received"] >= 0
    for key in ("bytes", "messages"):  # every byte and message the multiply sends is received somewhere
        assert (comm.allreduce(stats["multiply"][key + "_sent"]) ==
                comm.allreduce(stats["multiply"][key + "_received"]))
    assert stats["relabel_volume_after"] <= stats["relabel_volume_before"]
    # C's elements written in place, at most all of this rank's; all of them when c_in_place.
    assert 0 <= stats["c_elements_in_place"] <= c.size
    assert not stats["c_in_place"] or stats["c_elements_in_place"] == c.size
    # 'auto' resolved: panels read in place on one node (these tests run on one), else two-sided messages.
    assert stats["communication"] in ("shared_memory", "two_sided")
    last = stats["last_execution"]
    parts = ("transform_in", "multiply", "panel_wait", "reduction", "transform_out")
    assert all(last[p] >= 0 for p in parts) and last["total"] > 0
    assert sum(last[p] for p in parts) <= last["total"] * (1 + 1e-9)
    planning = stats["planning"]
    steps = ("agreement", "placement", "transforms", "storage", "grid_lines", "rounds")
    assert all(planning[s] >= 0 for s in steps) and planning["agreement"] > 0
    assert sum(planning[s] for s in steps) <= planning["total"] * (1 + 1e-9)
    # The same problem again on the same communicator places the grid alike: its lines are not split again.
    again = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, dtype=np.complex128)
    assert again.statistics()["grid_lines_reused"] is True
    assert isinstance(again.statistics()["native_window_reused"], bool)


def test_start_and_wait_give_execute_s_product():
    """start() (the multiply, C's redistribution started), local work, wait(): execute()'s C; a second start is
    refused on every rank."""
    rng = seeded_rng(12)
    m, n, k = 20, 12, 16
    a_layout = redist.block_cyclic(m, k, 4, 4, (1, comm.size), comm.rank)
    b_layout = redist.block_cyclic(k, n, 4, 4, (1, comm.size), comm.rank)
    c_layout = redist.block_cyclic(m, n, 3, 5, (comm.size, 1), comm.rank)
    plan = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout)
    a = scatter(a_layout, small_integers(rng, (m, k), np.float64))
    b = scatter(b_layout, small_integers(rng, (k, n), np.float64))
    expected, got = c_layout.empty(), c_layout.empty()
    plan.execute(expected, a, b, 2.0)
    plan.start(got, a, b, 2.0)
    assert plan.in_progress
    with pytest.raises(redist.InvalidArgument, match="still in progress"):
        plan.start(c_layout.empty(), a, b)
    plan.wait()
    assert not plan.in_progress and np.array_equal(got, expected)


def test_gemm_errors_raise_clearly():
    rank = comm.rank
    a_layout = redist.block_cyclic(8, 6, 2, 2, (1, comm.size), rank)
    b_layout = redist.block_cyclic(6, 5, 2, 2, (1, comm.size), rank)
    # C's rows are spread so that every rank holds part of C: the array checks below fail on every rank
    c_layout = redist.block_cyclic(8, 5, 1, 2, (comm.size, 1), rank)
    with pytest.raises(redist.DimensionMismatch):
        redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, "T", "N")
    with pytest.raises(redist.InvalidArgument, match="int64"):
        redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, dtype=np.int64)
    with pytest.raises(ValueError, match="communication 'mpi'"):
        redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, communication="mpi")
    with pytest.raises(redist.InsufficientMemory):
        redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, memory_limit_bytes=64)
    plan = redist.make_gemm_plan(comm, a_layout, b_layout, c_layout, dtype=np.float32)
    a, b, c = a_layout.empty(np.float32), b_layout.empty(np.float32), c_layout.empty(np.float32)
    with pytest.raises(TypeError, match="does not match"):
        plan.execute(c, a.astype(np.float64), b)
    with pytest.raises(TypeError, match="complex alpha"):
        plan.execute(c, a, b, 1j)
    with pytest.raises(ValueError, match="not contiguous"):
        plan.execute(np.zeros((2 * c.shape[0], c.shape[1]), np.float32, order="F")[::2], a, b)
    with pytest.raises(ValueError, match="C: a 2-D array of shape"):
        plan.execute(np.zeros((c.shape[0] + 1, c.shape[1]), np.float32, order="F"), a, b)
    plan.execute(c, a, b)  # the plan still works after refused calls
