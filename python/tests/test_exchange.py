# SPDX-License-Identifier: BSD-3-Clause
"""Irregular exchanges through the Python interface: in-place alltoallv against mpi4py's out-of-place
Alltoallv, neighborhood alltoallv plans against what every edge must deliver."""
import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import DTYPES
from seeds import seeded_rng

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank


def values(dtype, tags):
    """Distinct, exactly representable values of dtype for integer tags."""
    tags = np.asarray(tags, dtype=np.int64)
    if np.issubdtype(dtype, np.complexfloating):
        return (tags + 1j * (tags % 7)).astype(dtype)
    return tags.astype(dtype)


def random_count_matrix(rng, high):
    """counts[i][j]: elements rank i sends to rank j (zeros included), the same on every rank."""
    counts = rng.integers(0, high, size=(P, P))
    counts[rng.random((P, P)) < 0.2] = 0
    return counts


def mpi_alltoallv(send, counts):
    """The reference: mpi4py's out-of-place Alltoallv of this rank's row of counts."""
    sendcounts, recvcounts = counts[RANK], counts[:, RANK]
    recv = np.empty(int(recvcounts.sum()), dtype=send.dtype)
    sdispls = np.concatenate([[0], np.cumsum(sendcounts)[:-1]])
    rdispls = np.concatenate([[0], np.cumsum(recvcounts)[:-1]])
    comm.Alltoallv([send, (sendcounts, sdispls)], [recv, (recvcounts, rdispls)])
    return recv


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["auto", "chunked", "pairwise", "bitonic"])
def test_alltoallv_inplace_matches_mpi_alltoallv(dtype, algorithm):
    rng = seeded_rng(7 + DTYPES.index(dtype))
    for trial in range(3):
        counts = random_count_matrix(rng, 40)
        if algorithm == "chunked":  # chunked needs room beyond the totals unless the counts are symmetric
            counts = np.triu(counts) + np.triu(counts, 1).T
        sendcounts = counts[RANK]
        # bitonic needs every capacity to reach the largest total over the ranks
        capacity = int(max(counts.sum(axis=0).max(), counts.sum(axis=1).max()))
        send = values(dtype, 1000 * RANK + np.arange(sendcounts.sum()))
        expected = mpi_alltoallv(send, counts)
        buf = np.zeros(capacity, dtype=dtype)
        buf[:send.size] = send
        given_recvcounts = counts[:, RANK] if trial == 1 else None
        report = redist.alltoallv_inplace(comm, buf, sendcounts, given_recvcounts, algorithm=algorithm,
                                          work_bytes=64 << 10)
        assert report["received_elements"] == expected.size
        assert np.array_equal(report["recvcounts"], counts[:, RANK])
        assert np.array_equal(buf[:expected.size], expected), f"trial {trial}, counts {counts.tolist()}"
        if algorithm != "auto":
            assert report["algorithm"] == algorithm
        assert report["work_bytes"] <= 64 << 10
        assert report["bytes_sent"] >= 0 and report["messages_sent"] >= 0


def test_alltoallv_inplace_accepts_any_contiguous_shape():
    counts = np.full((P, P), 6)
    buf = values(np.float64, 100 * RANK + np.arange(6 * P)).reshape(2 * P, 3, order="F")
    expected = mpi_alltoallv(buf.ravel(order="K").copy(), counts)
    redist.alltoallv_inplace(comm, buf, counts[RANK])
    assert np.array_equal(buf.ravel(order="K"), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
def test_alltoall_inplace_matches_mpi_alltoall(dtype):
    count = 5
    buf = values(dtype, 100 * RANK + np.arange(count * P))
    expected = np.empty_like(buf)
    comm.Alltoall(buf.copy(), expected)
    report = redist.alltoall_inplace(comm, buf, count)
    assert np.array_equal(buf, expected)
    assert np.array_equal(report["recvcounts"], np.full(P, count))


def test_alltoallv_inplace_symmetric_swaps_blocks_and_leaves_gaps():
    rng = seeded_rng(11)
    upper = rng.integers(0, 6, size=(P, P))
    counts = np.triu(upper) + np.triu(upper, 1).T  # symmetric: what i sends j equals what j sends i
    my_counts = counts[RANK]
    gap = 2
    displs = np.concatenate([[gap], np.cumsum(my_counts + gap)[:-1] + gap])
    buf = np.full(int(displs[-1] + my_counts[-1] + gap), -1, dtype=np.int32)
    for j in range(P):
        buf[displs[j]:displs[j] + my_counts[j]] = 1000 * RANK + 10 * j + np.arange(my_counts[j])
    redist.alltoallv_inplace_symmetric(comm, buf, my_counts, displs)
    outside = np.ones(buf.size, dtype=bool)
    for j in range(P):
        block = buf[displs[j]:displs[j] + my_counts[j]]
        assert np.array_equal(block, 1000 * j + 10 * RANK + np.arange(my_counts[j])), f"block from rank {j}"
        outside[displs[j]:displs[j] + my_counts[j]] = False
    assert (buf[outside] == -1).all(), "elements outside the blocks were touched"


STATISTICS = ("bytes_sent", "bytes_received", "messages_sent", "messages_received", "bytes_local")


@pytest.mark.parametrize("algorithm", ["auto", "chunked", "pairwise", "bitonic"])
def test_inplace_plan_repeats_and_matches_mpi_and_the_one_call(algorithm):
    rng = seeded_rng(41 + ["auto", "chunked", "pairwise", "bitonic"].index(algorithm))
    counts = random_count_matrix(rng, 40)
    if algorithm == "chunked":  # chunked needs room beyond the totals unless the counts are symmetric
        counts = np.triu(counts) + np.triu(counts, 1).T
    sendcounts = counts[RANK]
    capacity = int(max(counts.sum(axis=0).max(), counts.sum(axis=1).max())) + 2
    options = dict(algorithm=algorithm, work_bytes=64 << 10, pairwise_guard=1e30)
    plan = redist.make_inplace_plan(comm, np.zeros(capacity, dtype=np.float64), sendcounts, **options)
    assert plan.size == capacity and plan.dtype == np.float64
    assert np.array_equal(plan.report["recvcounts"], counts[:, RANK])
    assert all(plan.report[key] == 0 for key in STATISTICS), "the plan's report has no counters"
    first = None
    for execution in range(3):
        send = values(np.float64, 1000 * RANK + 10**6 * execution + rng.permutation(int(sendcounts.sum())))
        expected = mpi_alltoallv(send, counts)
        buf = np.full(capacity, -1.0)  # a new array each time: another address
        buf[:send.size] = send
        once = buf.copy()
        report = plan.execute(buf)
        one_call = redist.alltoallv_inplace(comm, once, sendcounts, **options)
        assert np.array_equal(buf[:expected.size], expected), f"execution {execution}, counts {counts.tolist()}"
        assert np.array_equal(buf[:expected.size], once[:expected.size])
        assert report["algorithm"] == one_call["algorithm"] == plan.report["algorithm"]
        if algorithm != "auto":
            assert report["algorithm"] == algorithm
        for key in ("bytes_sent", "bytes_received", "bytes_local"):
            assert report[key] == one_call[key], key
        assert "bytes_moved_locally" not in report  # renamed bytes_local (docs/names.md)
        assert comm.allreduce(report["bytes_sent"]) == comm.allreduce(report["bytes_received"])
        assert comm.allreduce(report["messages_sent"]) == comm.allreduce(report["messages_received"])
        if first is None:
            first = report
        assert all(report[key] == first[key] for key in STATISTICS), "every execution moves the same"


def test_inplace_plan_checks_the_array_on_this_rank_only():
    plan = redist.make_alltoall_inplace_plan(comm, np.zeros(3 * P, dtype=np.int32), 3)
    with pytest.raises(ValueError, match="plan was made for int32"):
        plan.execute(np.zeros(3 * P, dtype=np.int64))
    with pytest.raises(ValueError, match="elements; the plan was made for"):
        plan.execute(np.zeros(3 * P + 1, dtype=np.int32))
    with pytest.raises(ValueError, match="not contiguous"):
        plan.execute(np.zeros((3 * P, 2), dtype=np.int32)[:, 0])
    buf = values(np.int32, 100 * RANK + np.arange(3 * P))  # the plan still works after the refusals
    expected = np.empty_like(buf)
    comm.Alltoall(buf.copy(), expected)
    plan.execute(buf)
    assert np.array_equal(buf, expected)


def test_inplace_plan_has_the_plan_shape():
    """start() runs the exchange, wait() returns, statistics() is the latest execution's report; a second start and
    a wait without a start raise on this rank."""
    plan = redist.make_alltoall_inplace_plan(comm, np.zeros(2 * P, dtype=np.int64), 2)
    assert plan.statistics()["bytes_sent"] == 0  # before the first execution: the plan's report
    buf = values(np.int64, 100 * RANK + np.arange(2 * P))
    expected = np.empty_like(buf)
    comm.Alltoall(buf.copy(), expected)
    with pytest.raises(redist.InvalidArgument, match="without a start"):
        plan.wait()
    plan.start(buf)
    assert plan.in_progress
    with pytest.raises(redist.InvalidArgument, match="still in progress"):
        plan.start(buf)
    plan.wait()
    assert not plan.in_progress and np.array_equal(buf, expected)
    stats = plan.statistics()
    assert comm.allreduce(stats["bytes_sent"]) == comm.allreduce(stats["bytes_received"])
    executed = plan.execute(buf)  # the same counters as the started execution's
    assert all(stats[key] == executed[key] for key in STATISTICS)


def test_symmetric_inplace_plan_repeats_and_leaves_gaps():
    rng = seeded_rng(47)
    upper = rng.integers(0, 6, size=(P, P))
    counts = (np.triu(upper) + np.triu(upper, 1).T)[RANK]
    displs = np.concatenate([[2], np.cumsum(counts + 2)[:-1] + 2])
    size = int(displs[-1] + counts[-1] + 2)
    plan = redist.make_inplace_plan_symmetric(comm, np.zeros(size, dtype=np.int64), counts, displs)
    for execution in range(2):
        buf = np.full(size, -7, dtype=np.int64)
        for j in range(P):
            buf[displs[j]:displs[j] + counts[j]] = 10**6 * execution + 1000 * RANK + 10 * j + np.arange(counts[j])
        plan.execute(buf)
        outside = np.ones(size, dtype=bool)
        for j in range(P):
            block = buf[displs[j]:displs[j] + counts[j]]
            assert np.array_equal(block, 10**6 * execution + 1000 * j + 10 * RANK + np.arange(counts[j]))
            outside[displs[j]:displs[j] + counts[j]] = False
        assert np.all(buf[outside] == -7)


@pytest.mark.skipif(P == 1, reason="needs a second rank")
def test_inplace_plan_bad_input_on_one_rank_raises_on_every_rank():
    last = P - 1
    counts = [1] * P
    if RANK == last:
        counts[0] = -1
    with pytest.raises(redist.InvalidArgument, match=f"rank {last}"):
        redist.make_inplace_plan(comm, np.zeros(2 * P), counts)


def random_graph(rng, edge_probability=0.6):
    """adjacency[i][j]: rank i sends to rank j (self edges included), counts per edge, the same on every rank."""
    adjacency = rng.random((P, P)) < edge_probability
    counts = rng.integers(0, 7, size=(P, P)) * adjacency
    return adjacency, counts


def edge_values(dtype, source, destination, count):
    return values(dtype, 10000 * source + 100 * destination + np.arange(count))


def graph_buffers(adjacency, counts, dtype, round_offset=0):
    """This rank's send and receive sides: edge lists, counts, displacements with gaps, filled send array."""
    destinations = [int(j) for j in np.flatnonzero(adjacency[RANK])]
    sources = [int(i) for i in np.flatnonzero(adjacency[:, RANK])]
    sendcounts = [int(counts[RANK, j]) for j in destinations]
    recvcounts = [int(counts[i, RANK]) for i in sources]
    sdispls = list(np.cumsum([0] + [c + 1 for c in sendcounts])[:-1])  # one unused element between edges
    rdispls = list(np.cumsum([0] + [c + 2 for c in recvcounts])[:-1])
    send = np.zeros(sum(sendcounts) + len(sendcounts), dtype=dtype)
    for j, c, d in zip(destinations, sendcounts, sdispls):
        send[d:d + c] = edge_values(dtype, RANK, j, c) + values(dtype, round_offset)
    recv = np.zeros(sum(recvcounts) + 2 * len(recvcounts), dtype=dtype)
    return sources, destinations, send, sendcounts, sdispls, recv, recvcounts, rdispls


def check_received(recv, sources, recvcounts, rdispls, dtype, round_offset=0):
    for i, c, d in zip(sources, recvcounts, rdispls):
        expected = edge_values(dtype, i, RANK, c) + values(dtype, round_offset)
        assert np.array_equal(recv[d:d + c], expected), f"edge from rank {i}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strategy", ["auto", "standard", "aggregate"])
def test_neighbor_alltoallv_delivers_every_edge_and_is_reusable(dtype, strategy):
    rng = seeded_rng(21 + DTYPES.index(dtype))
    adjacency, counts = random_graph(rng)
    sources, destinations, send, sendcounts, sdispls, recv, recvcounts, rdispls = graph_buffers(
        adjacency, counts, dtype)
    plan = redist.neighbor_alltoallv_init(comm, send, sendcounts, sdispls, recv, recvcounts, rdispls,
                                          sources=sources, destinations=destinations, strategy=strategy,
                                          region_size=2)
    assert plan.send is send and plan.recv is recv
    plan.start()
    assert plan.active
    plan.wait()
    assert not plan.active
    check_received(recv, sources, recvcounts, rdispls, dtype)
    # new contents, same arrays: the plan runs again
    for d, c in zip(sdispls, sendcounts):
        send[d:d + c] += values(dtype, 3)
    plan.execute()
    check_received(recv, sources, recvcounts, rdispls, dtype, round_offset=3)
    stats = plan.statistics()
    assert stats["strategy"] in ("standard", "aggregate")
    if strategy != "auto":
        assert stats["strategy"] == strategy
    elif stats["estimates"]:  # automatic with more than one candidate: the cheapest predicted one
        assert set(stats["estimates"]) == {"standard", "aggregate"}
        assert stats["estimates"][stats["strategy"]] == min(stats["estimates"].values())
    else:
        assert "automatic" in stats["reason"]
    assert stats["regions"] == (P + 1) // 2
    itemsize = np.dtype(dtype).itemsize
    if stats["strategy"] == "standard":
        remote = [(j, c) for j, c in zip(destinations, sendcounts) if j != RANK and c > 0]
        assert stats["inter_region_messages"] + stats["intra_region_messages"] == len(remote)
        assert stats["inter_region_bytes"] + stats["intra_region_bytes"] == itemsize * sum(c for _, c in remote)
    # The statistics vocabulary (docs/names.md): what is sent is received somewhere; sends split by locality.
    assert stats["bytes_sent"] == stats["inter_region_bytes"] + stats["intra_region_bytes"]
    for key in ("bytes", "messages"):
        assert comm.allreduce(stats[key + "_sent"]) == comm.allreduce(stats[key + "_received"])
    if stats["strategy"] == "standard":
        local = sum(c for j, c in zip(destinations, sendcounts) if j == RANK)
        assert stats["bytes_local"] == itemsize * local


def test_neighbor_alltoallv_on_a_distributed_graph_communicator():
    rng = seeded_rng(5)
    adjacency, counts = random_graph(rng)
    sources, destinations, send, sendcounts, sdispls, recv, recvcounts, rdispls = graph_buffers(
        adjacency, counts, np.float64)
    graph = comm.Create_dist_graph_adjacent(sources, destinations)
    try:
        plan = redist.neighbor_alltoallv_init(graph, send, sendcounts, sdispls, recv, recvcounts, rdispls)
        plan.execute()
        check_received(recv, sources, recvcounts, rdispls, np.float64)
        del plan
    finally:
        graph.Free()


def test_neighbor_alltoallv_dedup_with_global_ids():
    """Every rank sends the same few ids to all ranks: with regions of two ranks, dedup sends each id once per
    region pair and still delivers every element."""
    ids_per_rank = 5
    destinations = sources = list(range(P))
    sendcounts = recvcounts = [ids_per_rank] * P
    sdispls = rdispls = [ids_per_rank * j for j in range(P)]
    send_ids = np.tile(100 * RANK + np.arange(ids_per_rank), P).astype(np.int64)
    recv_ids = np.repeat(100 * np.arange(P), ids_per_rank) + np.tile(np.arange(ids_per_rank), P)
    send = send_ids.astype(np.float64) * 0.5
    recv = np.zeros(P * ids_per_rank)
    plan = redist.neighbor_alltoallv_init(comm, send, sendcounts, sdispls, recv, recvcounts, rdispls,
                                          sources=sources, destinations=destinations, send_ids=send_ids,
                                          recv_ids=recv_ids.astype(np.int64), strategy="dedup", region_size=2)
    plan.execute()
    assert np.array_equal(recv, recv_ids * 0.5)
    stats = plan.statistics()
    assert stats["strategy"] == "dedup"
    assert stats["inter_region_bytes"] <= 8 * ids_per_rank * ((P + 1) // 2), stats


def test_calibrated_cost_model_round_trips():
    model = redist.calibrate_cost_model(comm, region_size=2)
    # figures are fits of timings (clamped at 0 when noise inverts them on an oversubscribed machine)
    assert model["source"] == "calibrated" and all(v >= 0 for k, v in model.items() if k != "source")
    send, recv = np.arange(3.0), np.zeros(3)
    plan = redist.neighbor_alltoallv_init(comm, send, [3], [0], recv, [3], [0], sources=[RANK],
                                          destinations=[RANK], cost_model=model, region_size=2)
    plan.execute()
    assert np.array_equal(recv, send)
    with pytest.raises(TypeError, match=r"cost_model\['intra_latency'\]: expected a float"):
        redist.neighbor_alltoallv_init(comm, send, [3], [0], recv, [3], [0], sources=[RANK], destinations=[RANK],
                                       cost_model={**model, "intra_latency": "fast"})
    with pytest.raises(ValueError, match="unknown figure 'latency'"):
        redist.neighbor_alltoallv_init(comm, send, [3], [0], recv, [3], [0], sources=[RANK], destinations=[RANK],
                                       cost_model={"latency": 1e-6})


def test_exchange_argument_errors_raise_clearly():
    buf = np.zeros((P, 4))
    with pytest.raises(ValueError, match="not contiguous"):
        redist.alltoallv_inplace(comm, buf[:, ::2], [1] * P)
    with pytest.raises(TypeError, match="not supported"):
        redist.alltoallv_inplace(comm, np.zeros(4 * P, dtype=np.float16), [1] * P)
    with pytest.raises(ValueError, match="one per rank"):
        redist.alltoallv_inplace(comm, np.zeros(4 * P), [1] * (P + 1))
    with pytest.raises(ValueError, match="algorithm 'fastest'"):
        redist.alltoallv_inplace(comm, np.zeros(4 * P), [1] * P, algorithm="fastest")
    with pytest.raises(redist.InvalidArgument):  # the library's own check: the capacity is too small
        redist.alltoallv_inplace(comm, np.zeros(P), [2] * P)
    with pytest.raises(ValueError, match="needs"):
        redist.alltoall_inplace(comm, np.zeros(P), 2)
    send, recv = np.zeros(4), np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match="one dtype"):
        redist.neighbor_alltoallv_init(comm, send, [1], [0], recv, [1], [0], sources=[RANK], destinations=[RANK])
    with pytest.raises(ValueError, match="both sources and destinations"):
        redist.neighbor_alltoallv_init(comm, send, [1], [0], send.copy(), [1], [0], sources=[RANK])
    with pytest.raises(ValueError, match="both send_ids and recv_ids"):
        redist.neighbor_alltoallv_init(comm, send, [1], [0], send.copy(), [1], [0], sources=[RANK],
                                       destinations=[RANK], send_ids=np.zeros(4, dtype=np.int64))
    with pytest.raises(TypeError, match="writable"):
        redist.neighbor_alltoallv_init(comm, send, [1], [0], [0.0] * 4, [1], [0], sources=[RANK],
                                       destinations=[RANK])
    with pytest.raises(redist.InvalidTopology, match="distributed-graph"):
        redist.neighbor_alltoallv_init(comm, send, [1], [0], send.copy(), [1], [0])
    plan = redist.neighbor_alltoallv_init(comm, send, [1], [0], send.copy(), [1], [0], sources=[RANK],
                                          destinations=[RANK])
    plan.start()
    with pytest.raises(redist.InvalidArgument, match="not waited for"):
        plan.start()
    plan.wait()


@pytest.mark.skipif(P == 1, reason="needs a second rank")
def test_a_bad_argument_on_one_rank_raises_on_every_rank():
    last = P - 1
    counts = [1] * P if RANK != last else [1] * (P - 1)
    expected = ValueError if RANK == last else redist.InvalidArgument
    with pytest.raises(expected, match=f"rank {last}" if RANK != last else "one per rank"):
        redist.alltoallv_inplace(comm, np.zeros(2 * P), counts)
