# SPDX-License-Identifier: BSD-3-Clause
"""Transforms through the Python interface against NumPy on the gathered matrices."""
import os

import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import DTYPES, gather, global_matrix, random_layout, scatter
from seeds import seed_for, seeded_rng

comm = MPI.COMM_WORLD


def reference(op, b):
    return {"N": b, "T": b.T, "C": b.conj().T}[op]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["N", "T", "C"])
def test_random_layouts_match_numpy(dtype, op):
    rng = seeded_rng(1000 + DTYPES.index(dtype) * 3 + "NTC".index(op))
    integer = np.issubdtype(dtype, np.integer)
    if integer and op == "C":
        pytest.skip("integer transforms are copies and transposes (no conjugate)")
    for trial in range(6):
        rows, cols = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        b_layout = random_layout(rng, comm, rows, cols)
        a_shape = (rows, cols) if op == "N" else (cols, rows)
        a_layout = random_layout(rng, comm, *a_shape)
        b_global = global_matrix(rows, cols, dtype, salt=trial)
        a_global = global_matrix(*a_shape, dtype, salt=trial + 100)
        alpha, beta = (1, 0) if integer else (2.5, -0.5)
        b = scatter(b_layout, b_global)
        a = scatter(a_layout, a_global)
        b_before = b.copy()
        plan = redist.make_transform_plan(comm, a_layout, b_layout, op, dtype)
        plan.execute(a, b, alpha, beta)
        expected = (alpha * reference(op, b_global) + beta * a_global).astype(dtype)
        got = gather(comm, a_layout, a)
        assert np.array_equal(got, expected), f"trial {trial}: {a_layout} <- {op}({b_layout})"
        assert np.array_equal(b, b_before), "B was modified"


def test_plan_is_reusable_and_inverse_goes_back():
    b_layout = redist.block_cyclic(37, 23, 4, 3, (1, comm.size), comm.rank)
    a_layout = redist.block_cyclic(23, 37, 5, 2, (comm.size, 1), comm.rank, order="C")
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    b_global = global_matrix(37, 23, np.float64, salt=3)
    b = scatter(b_layout, b_global)
    a = a_layout.empty()
    for _ in range(3):
        plan.execute(a, b)
        assert np.array_equal(gather(comm, a_layout, a), b_global.T)
        assert plan.statistics()["last_execution_seconds"] > 0
    back = b_layout.empty()
    plan.inverse().execute(back, a)
    assert np.array_equal(gather(comm, b_layout, back), b_global)
    assert plan.strategy in ("point_to_point", "shared_memory", "alltoallv")


def test_transform_function_uses_the_arrays_dtype():
    b_layout = redist.block_cyclic(16, 12, 3, 3, (comm.size, 1), comm.rank)
    a_layout = redist.block_cyclic(12, 16, 2, 5, (1, comm.size), comm.rank)
    b_global = global_matrix(16, 12, np.complex64, salt=5)
    a = a_layout.empty(np.complex64)
    redist.transform(comm, a_layout, a, b_layout, scatter(b_layout, b_global), op="C", alpha=1j)
    assert np.allclose(gather(comm, a_layout, a), 1j * b_global.conj().T)


def test_batch_moves_every_job_in_one_plan():
    rng = seeded_rng(7)
    jobs, arrays, expected = [], [], []
    for k, (dtype, op) in enumerate([(np.float64, "N"), (np.float32, "T"), (np.complex128, "C")]):
        b_layout = random_layout(rng, comm, 11 + k, 9)
        a_layout = random_layout(rng, comm, *((11 + k, 9) if op == "N" else (9, 11 + k)))
        b_global = global_matrix(11 + k, 9, dtype, salt=k)
        jobs.append(redist.Job(a_layout, b_layout, op, dtype))
        arrays.append((a_layout.empty(dtype), scatter(b_layout, b_global), 3.0))
        expected.append(3.0 * reference(op, b_global))
    plan = redist.make_batch_transform_plan(comm, jobs)
    with pytest.raises(TypeError, match="job 1: alpha: expected a number, got 'three'"):
        plan.execute_batch([arrays[0], (*arrays[1][:2], "three"), arrays[2]])
    plan.execute_batch(arrays)
    for job, (a, _, _), want in zip(plan.jobs, arrays, expected):
        assert np.allclose(gather(comm, job.a, a), want)


def test_upper_region_leaves_the_rest_untouched():
    n = 14
    b_layout = redist.block_cyclic(n, n, 3, 3, (1, comm.size), comm.rank)
    a_layout = redist.block_cyclic(n, n, 4, 2, (comm.size, 1), comm.rank)
    b_global = global_matrix(n, n, np.float64, salt=9)
    a = scatter(a_layout, np.full((n, n), -7.0))
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "N", np.float64, region=("upper", 1))
    plan.execute(a, scatter(b_layout, b_global))
    i, j = np.indices((n, n))
    assert np.array_equal(gather(comm, a_layout, a), np.where(j - i >= 1, b_global, -7.0))


def test_statistics_account_for_every_byte():
    b_layout = redist.block_cyclic(40, 30, 5, 5, (comm.size, 1), comm.rank)
    a_layout = redist.block_cyclic(40, 30, 5, 5, (1, comm.size), comm.rank)
    stats = redist.make_transform_plan(comm, a_layout, b_layout, "N", np.float64).statistics()
    assert set(stats) >= {"bytes_sent", "bytes_received", "bytes_local", "messages_sent", "messages_received"}
    total_sent = comm.allreduce(stats["bytes_sent"])
    assert total_sent == comm.allreduce(stats["bytes_received"])
    assert total_sent + comm.allreduce(stats["bytes_local"]) == 40 * 30 * 8
    if comm.size == 1:
        assert stats["messages_sent"] == 0
    # The planning profile, as in C++: each phase inside the whole.
    phases = ["plan_agreement_seconds", "plan_tiles_seconds", "plan_messages_seconds", "plan_exchange_seconds",
              "plan_buffers_seconds"]
    assert all(stats[p] >= 0 for p in phases)
    # Disjoint phases of the whole, each converted to seconds on its own: their sum may round above it.
    assert 0 < sum(stats[p] for p in phases) <= stats["plan_seconds"] * (1 + 1e-12)
    # The OpenMP team: never more than the CPUs of this host per rank on it (at least 1).
    ranks_on_host = comm.allgather(MPI.Get_processor_name()).count(MPI.Get_processor_name())
    assert 1 <= stats["threads"] <= max(1, os.cpu_count() // ranks_on_host)
    assert stats["last_execution_seconds"] == 0


def test_one_shot_auto_weighs_set_up_against_one_execution():
    # 1024 x 1024 doubles from row blocks to column blocks: every rank sends (P - 1) / P of its 8 / P MiB, at
    # least 1 MiB per rank up to 4 ranks; a repeated plan then streams through a window, a one-shot one not as
    # long as no window is cached on the communicator (a fresh duplicate), and through the cached one after.
    n = 1024
    # A one-shot plan's threshold is higher where some host runs more ranks than it has CPUs.
    hosts = comm.allgather((MPI.Get_processor_name(), os.cpu_count()))
    oversubscribed = any(sum(h == name for h, _ in hosts) > cpus for name, cpus in hosts)
    b_layout = redist.block_cyclic(n, n, n // comm.size, n, (comm.size, 1), comm.rank)
    a_layout = redist.block_cyclic(n, n, n, n // comm.size, (1, comm.size), comm.rank)
    fresh = comm.Dup()
    try:
        for one_shot, window_cached in ((True, False), (False, False), (True, True)):
            plan = redist.make_transform_plan(fresh, a_layout, b_layout, "N", np.float64, one_shot=one_shot)
            per_rank = comm.allreduce(plan.statistics()["bytes_sent"]) // comm.size
            shared_from = (32 << 20 if oversubscribed else 12 << 20) if one_shot and not window_cached else 1 << 20
            expected = "shared_memory" if comm.size > 1 and per_rank >= shared_from else "point_to_point"
            assert plan.strategy == expected, (one_shot, window_cached, per_rank)
            if plan.strategy == "shared_memory":
                assert plan.statistics()["window_reused"] == window_cached
            b_global = global_matrix(n, n, np.float64, salt=7)
            a = a_layout.empty()
            plan.execute(a, scatter(b_layout, b_global))
            assert np.array_equal(gather(comm, a_layout, a), b_global)
            del plan
    finally:
        fresh.Free()


def test_relabel_targets_returns_a_permutation_and_usable_layouts():
    b_layout = redist.block_cyclic(24, 24, 4, 4, (1, comm.size), comm.rank)
    # A's owners are B's rotated by one rank: relabeling can undo the rotation entirely
    a_ranks = [[(r + 1) % comm.size for r in range(comm.size)]]
    a_layout = redist.block_cyclic(24, 24, 4, 4, (1, comm.size), comm.rank, grid_ranks=a_ranks)
    layouts, new_rank_of, stats = redist.relabel_targets(comm, [redist.Job(a_layout, b_layout)])
    assert sorted(new_rank_of) == list(range(comm.size))
    assert stats["remote_volume_after"] == 0
    assert stats["remote_volume_after"] <= stats["remote_volume_before"]
    b_global = global_matrix(24, 24, np.float64, salt=11)
    a = layouts[0].empty()
    redist.transform(comm, layouts[0], a, b_layout, scatter(b_layout, b_global))
    assert np.array_equal(gather(comm, layouts[0], a), b_global)


def torus_shapes(size):
    shapes = [str(size)]
    if size >= 4 and size % 2 == 0:
        shapes.append(f"{size // 2}x2")
    return shapes


@pytest.mark.parametrize("mapping", [None, 7])  # dimension-ordered, or random from a seed of salt 7
def test_torus_routed_transpose_matches_numpy(mapping):
    mapping = None if mapping is None else seed_for(mapping)
    size, rank = comm.size, comm.rank
    rows, cols = 41, 29
    b_global = global_matrix(rows, cols, np.float64, salt=5)
    for shape in torus_shapes(size):
        for p, q in [(size, 1), (1, size)] + ([(size // 2, 2)] if size % 2 == 0 and size > 2 else []):
            b_layout = redist.block_cyclic(rows, cols, 3, 3, (p, q), rank)
            a_layout = redist.block_cyclic(cols, rows, 3, 3, (p, q), rank)
            # Phases one after another with a dimension-ordered mapping, all at once with a random one.
            torus = {"shape": shape, "mapping": mapping, "mode": "sdr", "alpha": 1.0, "gamma": 0, "delta": -1,
                     "beta": 4, "phases": "sequential" if mapping is None else "concurrent"}
            plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64, strategy="torus_routed",
                                    torus=torus)
            assert plan.strategy == "torus_routed"
            a = a_layout.empty()
            plan.execute(a, scatter(b_layout, b_global), 2.0)
            assert np.array_equal(gather(comm, a_layout, a), 2.0 * b_global.T), f"torus {shape}, grid {p}x{q}"
            back = b_layout.empty()
            plan.inverse().execute(back, a)
            assert np.array_equal(gather(comm, b_layout, back), 2.0 * b_global)


def test_torus_options_are_checked():
    layout = redist.block_cyclic(8, 8, 2, 2, (comm.size, 1), comm.rank)
    with pytest.raises(ValueError, match="unknown key 'size'"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed", torus={"size": "4"})
    with pytest.raises(ValueError, match="'shape' is required"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed", torus={"mode": "sdr"})
    with pytest.raises(ValueError, match="torus phases 'parallel'"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                                   torus={"shape": "2", "phases": "parallel"})
    with pytest.raises(ValueError, match="torus mode 'fast'"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                                   torus={"shape": "2", "mode": "fast"})
    with pytest.raises(redist.InvalidArgument, match="alpha"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                         torus={"shape": str(comm.size), "alpha": 2.0})
    with pytest.raises(TypeError, match=r"torus\['alpha'\]: expected a float, got 'half'"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                         torus={"shape": str(comm.size), "alpha": "half"})
    with pytest.raises(TypeError, match=r"torus\['mapping'\]"):
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                         torus={"shape": str(comm.size), "mapping": 1.5})
    with pytest.raises(redist.Error, match="nodes"):  # one node per rank
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed",
                                   torus={"shape": str(comm.size + 1)})
    with pytest.raises(redist.Error, match="torus"):  # the strategy needs the torus described
        redist.make_transform_plan(comm, layout, layout, "T", strategy="torus_routed")
