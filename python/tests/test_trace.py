# SPDX-License-Identifier: BSD-3-Clause
"""Call tracing from Python (redist.trace, docs/trace.md): the totals count the plans made and executed, the
summary gathers them over the ranks, and the previous mode comes back."""
import numpy as np
import pytest
from mpi4py import MPI

import redist
from helpers import gather, global_matrix, scatter

comm = MPI.COMM_WORLD


def transpose_layouts():
    b_layout = redist.block_cyclic(37, 23, 4, 3, (1, comm.size), comm.rank)
    a_layout = redist.block_cyclic(23, 37, 5, 2, (comm.size, 1), comm.rank, order="C")
    return a_layout, b_layout


def test_trace_counts_plans_and_executions_and_restores_the_mode():
    assert redist.get_trace_mode() == "off"
    a_layout, b_layout = transpose_layouts()
    b_global = global_matrix(37, 23, np.float64, salt=5)
    b = scatter(b_layout, b_global)
    a = a_layout.empty()
    with redist.trace(comm) as traced:
        assert redist.get_trace_mode() == "summary"
        plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
        for _ in range(3):
            plan.execute(a, b)
    assert redist.get_trace_mode() == "off"
    assert np.array_equal(gather(comm, a_layout, a), b_global.T), "tracing changed the result"
    rows = [r for r in traced.totals if r["entry_point"] == "transform_plan"]
    assert len(rows) == 1, traced.totals
    assert rows[0]["calls"] == 3 and rows[0]["plans_made"] == 1, rows
    assert rows[0]["path"] == "redist/" + plan.strategy
    if comm.rank == 0:
        line = [l for l in traced.summary.splitlines() if l.startswith("transform_plan")]
        assert len(line) == 1, traced.summary
        assert line[0].split()[2:4] == [str(comm.size), "3"], line
    else:
        assert traced.summary == ""


def test_nothing_is_recorded_when_off():
    redist.trace_reset()
    a_layout, b_layout = transpose_layouts()
    plan = redist.make_transform_plan(comm, a_layout, b_layout, "T", np.float64)
    plan.execute(a_layout.empty(), scatter(b_layout, global_matrix(37, 23, np.float64, salt=6)))
    assert redist.trace_totals() == []


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="trace mode 'everything': expected 'off', 'summary' or 'calls'"):
        redist.set_trace_mode("everything")
    assert redist.get_trace_mode() == "off"


def test_exchanges_are_traced_as_their_plan_kinds():
    count = 3
    buf = np.repeat(np.arange(comm.size, dtype=np.float64) + 10 * comm.rank, count)
    with redist.trace(comm) as traced:
        redist.alltoall_inplace(comm, buf, count)  # a plan made and executed once
    assert np.array_equal(buf, np.repeat(comm.rank + 10.0 * np.arange(comm.size), count))
    rows = [r for r in traced.totals if r["entry_point"] == "inplace_plan"]
    assert len(rows) == 1, traced.totals
    assert rows[0]["calls"] == 1 and rows[0]["plans_made"] == 1, rows
    assert rows[0]["path"].startswith("redist/"), rows
