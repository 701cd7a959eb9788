# SPDX-License-Identifier: BSD-3-Clause
"""Hostile arguments: an error anywhere is an error everywhere.

Every public collective entry point of the package (make_transform_plan, TransformPlan.execute,
TransformPlan.start, TransformPlan.inverse, make_batch_transform_plan,
Plan.execute_batch, relabel_targets, transform, the N-d make_reshape_plan and its box form (each rank's own
boxes), reshape, make_batch_reshape_plan,
relabel_reshape_targets, node_buffer, NodeBuffer.free, make_gemm_plan, GemmPlan.execute, GemmPlan.start, gemm,
neighbor_alltoallv_init, NeighborPlan.start/wait, alltoallv_inplace, alltoall_inplace,
alltoallv_inplace_symmetric) gets each of its arguments made invalid, in two modes: on every rank ("all") and
on one rank only ("one": the rank is drawn from seeds.seeded_rng, so it changes from run to run). Arguments
that are valid alone but must agree over the ranks (a strategy, a block size, an option) are made to differ on
one rank only ("one"). One test id per (entry point, argument, mode). For every case, on every rank:

- the call raised, on every rank;
- the ranks agree on the error: (type, message) is the same everywhere (gathered with allgather); in the
  one-rank mode the documented form of a rank-local argument error (docs/python.md) is accepted as well: the
  rank with the bad argument raises its own TypeError/ValueError/redist error, every other rank
  redist.InvalidArgument with the message "rank <that rank>: <its message>";
- the exception on the rank(s) with the bad argument is of the expected kind;
- every array passed (outputs and inputs) is untouched, and so are guard elements around it: each array is a
  view into a larger backing array whose guards hold a sentinel pattern, and the whole backing array is
  compared byte for byte;
- the same call with valid arguments then succeeds on every rank, gives the right result and writes nothing
  outside its views.

A case that hangs fails instead of blocking: signal.alarm(ALARM_SECONDS) raises in Python code, and a
faulthandler watchdog (15 s later) dumps every thread's stack and ends the process when a rank is stuck
inside MPI, where no Python signal handler can run (mpiexec then ends the other ranks).

The layouts give every rank local arrays of the same shape, so that an error on every rank has the same message
everywhere. Not in the one-rank mode: a communicator that is not one (no rank can agree with a rank that has
none), and NeighborPlan.start/wait, which take no arguments and never agree (docs/python.md): their misuse is
tested on every rank.

A call refused on one rank by nanobind's argument conversion (a wrong type, an unknown keyword, a read-only
output) is agreed like any other argument error: the package's wrappers (redist/__init__.py) make that rank join
the agreement the others are waiting in. A case that leaves ranks waiting is a hang, and fails through the alarm
and the watchdog below. The library's calls run on a duplicate of COMM_WORLD, this file's own gathers on
another, so that a call left behind cannot be matched with a gather.
"""
import collections
import faulthandler
import signal
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pytest
from mpi4py import MPI

import redist
from seeds import seeded_rng

WORLD = MPI.COMM_WORLD
P, RANK = WORLD.size, WORLD.rank
WORK = WORLD.Dup()   # the communicator every case passes to the library
CHECK = WORLD.Dup()  # this file's gathers, apart from the library's traffic
ALARM_SECONDS = 60
GUARD = 5            # guard elements before and after every array passed


# ---- alarms ----------------------------------------------------------------------------------------------

class Hang(BaseException):
    """Raised by the alarm; a BaseException, so that the cases' `except Exception` does not take it for the
    call's error."""


def _on_alarm(signum, frame):
    raise Hang(f"the case ran past {ALARM_SECONDS} s: a hang")


@pytest.fixture(autouse=True)
def alarm():
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(ALARM_SECONDS)
    faulthandler.dump_traceback_later(ALARM_SECONDS + 15, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


# ---- guarded arrays --------------------------------------------------------------------------------------

def pattern(dtype, n, base):
    k = np.arange(n)
    values = base + (k % 97)
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        values = values + 1j * (k % 5)
    return values.astype(dtype)


class Guarded:
    """A view (the array passed) into a larger backing array; the guards and, for a strided view, the elements
    it skips hold a sentinel pattern."""

    def __init__(self, name, shape, dtype, order, fill, strided, readonly):
        self.name = name
        shape = tuple(int(s) for s in shape)
        n = int(np.prod(shape))
        span = 2 * n if strided else n
        total = GUARD + span + GUARD
        self.backing = pattern(dtype, total, -9000)
        self.view = self._carve(self.backing, shape, order, strided)
        inside = self._carve(np.arange(total), shape, order, strided)
        self.inside = np.zeros(total, dtype=bool)
        self.inside[inside.ravel()] = True
        assert np.shares_memory(self.view, self.backing)
        if callable(fill):
            fill(self.view)
        elif fill is not None:
            self.view[...] = fill
        else:
            self.view[...] = pattern(dtype, n, -500).reshape(shape, order=order)
        if readonly:
            self.view.setflags(write=False)
        self.snapshot = self.backing.copy()

    @staticmethod
    def _carve(a, shape, order, strided):
        inner = a[GUARD:a.size - GUARD]
        if not strided:
            return inner.reshape(shape, order=order)
        return inner.reshape((2 * shape[0],) + shape[1:], order=order)[::2]

    def take_snapshot(self):
        self.snapshot = self.backing.copy()

    def changed(self):
        return self.backing.tobytes() != self.snapshot.tobytes()

    def guards_changed(self):
        return self.backing[~self.inside].tobytes() != self.snapshot[~self.inside].tobytes()


class Ctx:
    """One case's arguments (args, by name) and every guarded array made for it."""

    def __init__(self):
        self.args = {}
        self.extra = {}
        self.arrays = []
        self.spec = {}

    def new(self, shape, dtype=np.float64, order="F", fill=None, strided=False, readonly=False, key=None,
            name=None):
        g = Guarded(name or key or "bad argument", shape, dtype, order, fill, strided, readonly)
        self.arrays.append(g)
        if key is not None:
            self.spec[key] = (tuple(shape), dtype, order, fill)
        return g.view

    def take_snapshots(self):
        for g in self.arrays:
            g.take_snapshot()

    def changed(self):
        return [g.name for g in self.arrays if g.changed()]

    def guards_changed(self):
        return [g.name for g in self.arrays if g.guards_changed()]


# ---- spoilers: what a case does to the arguments on the rank(s) with the bad argument -----------------------

def put(name, value):
    return lambda a, ctx: a.__setitem__(name, value)


def put_fn(name, make):
    return lambda a, ctx: a.__setitem__(name, make(ctx, a))


def array_like(name, dtype=None, shape=None, order=None, strided=False, readonly=False, keep_fill=True):
    """The argument `name` replaced by a new guarded array like the valid one, with what is given changed."""
    def spoil(a, ctx):
        s, d, o, _ = ctx.spec[name]
        same_kind = dtype is None and shape is None and order is None
        values = np.array(a[name]) if (keep_fill and same_kind) else None  # the valid array's contents
        a[name] = ctx.new(shape if shape is not None else s, dtype if dtype is not None else d,
                          order if order is not None else o, values, strided=strided, readonly=readonly,
                          name=f"bad {name}")
    return spoil


def array_short(name):
    """A 1-D array of one element fewer than the valid one."""
    def spoil(a, ctx):
        s, d, _, _ = ctx.spec[name]
        a[name] = ctx.new((int(np.prod(s)) - 1,), d, name=f"bad {name}")
    return spoil


def array_as_list(name):
    return lambda a, ctx: a.__setitem__(name, np.asarray(a[name]).tolist())


# ---- layouts and expected values ---------------------------------------------------------------------------

def global_matrix(rows, cols):
    return (np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) % 1000) + 1


def small_integers(rows, cols, salt):
    i, j = np.indices((rows, cols))
    return (((3 * i + 5 * j + salt) % 7) - 3).astype(np.float64)


def fill_from(layout, values):
    def fill(view):
        for r0, c0, v in layout.local_views(view):
            v[...] = values[r0:r0 + v.shape[0], c0:c0 + v.shape[1]]
    return fill


def mismatch(layout, array, expected, what):
    for r0, c0, v in layout.local_views(array):
        want = expected[r0:r0 + v.shape[0], c0:c0 + v.shape[1]]
        if not np.array_equal(v, want.astype(v.dtype)):
            return f"{what}: wrong values in the block at ({r0}, {c0})"
    return ""


def t_layouts():
    """A transpose A = op(B) whose local arrays have the same shape on every rank (so that the messages of an
    error on every rank are the same): B 4P x 6 in 2 x 3 blocks on P x 1, A 6 x 4P in 3 x 2 blocks on 1 x P."""
    b = redist.block_cyclic(4 * P, 6, 2, 3, (P, 1), RANK)
    a = redist.block_cyclic(6, 4 * P, 3, 2, (1, P), RANK)
    return a, b


def other_rank_layout(ctx, a):
    return redist.block_cyclic(6, 4 * P, 3, 2, (1, P), (RANK + 1) % P)


def torus_layout():
    return redist.block_cyclic(4 * P, 4 * P, 2, 2, (P, 1), RANK)


def g_layouts():
    """C = A * B, all 2P x 2P; A and C in 2 x 2P blocks on P x 1, B in 2P x 2 blocks on 1 x P."""
    n = 2 * P
    a = redist.block_cyclic(n, n, 2, n, (P, 1), RANK)
    b = redist.block_cyclic(n, n, n, 2, (1, P), RANK)
    c = redist.block_cyclic(n, n, 2, n, (P, 1), RANK)
    return a, b, c


GA, GB = small_integers(2 * P, 2 * P, 1), small_integers(2 * P, 2 * P, 4)

_plans = {}


def cached(key, make):
    """Plans shared by the cases (built collectively by the first case that needs one, on every rank)."""
    if key not in _plans:
        _plans[key] = make()
    return _plans[key]


def transform_plan():
    a, b = t_layouts()
    return cached("transform", lambda: redist.make_transform_plan(WORK, a, b, "T", np.float64))


def check_transform_plan(plan, ctx, a_layout, b_layout, op="T"):
    """Executes a freshly made plan on guarded arrays (collective) and checks A = 2 op(B)."""
    g = global_matrix(*b_layout.shape)
    a = ctx.new(a_layout.local_shape, key="check_a")
    b = ctx.new(b_layout.local_shape, fill=fill_from(b_layout, g), key="check_b")
    plan.execute(a, b, 2.0)
    return mismatch(a_layout, a, 2 * (g.T if op == "T" else g), "A")


# ---- entry points ------------------------------------------------------------------------------------------

class Entry:
    name = ""
    modes = ("all", "one")

    def setup(self):
        raise NotImplementedError

    def call(self, x):
        raise NotImplementedError

    def verify(self, ctx, result):
        """After the valid call (on every rank): "" or what is wrong; may be collective."""
        return ""


class MakePlan(Entry):
    name = "make_transform_plan"

    def setup(self):
        ctx = Ctx()
        a, b = t_layouts()
        ctx.args = dict(comm=WORK, a=a, b=b, op="T", dtype=np.float64, region=None, strategy="auto", stores="auto",
                        check_consistency=True, num_threads=0, torus=None)
        return ctx

    def call(self, x):
        return redist.make_transform_plan(x["comm"], x["a"], x["b"], x["op"], x["dtype"], region=x["region"],
                                strategy=x["strategy"], stores=x["stores"], check_consistency=x["check_consistency"],
                                num_threads=x["num_threads"], torus=x["torus"])

    def verify(self, ctx, plan):
        return check_transform_plan(plan, ctx, ctx.args["a"], ctx.args["b"])


def torus_base(a, ctx):
    layout = torus_layout()
    a.update(a=layout, b=layout, strategy="torus_routed", torus={"shape": str(P), "mode": "sdr"})


def torus_with(**changes):
    return lambda a, ctx: a.__setitem__("torus", {**a["torus"], **changes})


class PlanExecute(Entry):
    name = "TransformPlan.execute"

    def setup(self):
        ctx = Ctx()
        a_l, b_l = t_layouts()
        ctx.extra.update(a_layout=a_l, b_layout=b_l)
        ctx.args = dict(plan=transform_plan(), a=ctx.new(a_l.local_shape, key="a"),
                        b=ctx.new(b_l.local_shape, fill=fill_from(b_l, global_matrix(*b_l.shape)), key="b"),
                        alpha=2.0, beta=0.0)
        return ctx

    def call(self, x):
        return x["plan"].execute(x["a"], x["b"], x["alpha"], x["beta"])

    def verify(self, ctx, _):
        b_l = ctx.extra["b_layout"]
        return mismatch(ctx.extra["a_layout"], ctx.args["a"], 2 * global_matrix(*b_l.shape).T, "A")


class PlanStart(PlanExecute):
    """start() agrees on the same checks as execute(); wait() then completes the valid call."""
    name = "TransformPlan.start"

    def call(self, x):
        x["plan"].start(x["a"], x["b"], x["alpha"], x["beta"])
        x["plan"].wait()


class PlanInverse(Entry):
    name = "TransformPlan.inverse"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(plan=transform_plan(), extra=())
        return ctx

    def call(self, x):
        return x["plan"].inverse(*x["extra"])

    def verify(self, ctx, inverse):
        a_l, b_l = t_layouts()
        g = global_matrix(*b_l.shape)
        b = ctx.new(b_l.local_shape, key="check_b")
        inverse.execute(b, ctx.new(a_l.local_shape, fill=fill_from(a_l, g.T), key="check_a"))
        return mismatch(b_l, b, g, "B")


def batch_jobs():
    a, b = t_layouts()
    a2 = redist.block_cyclic(4 * P, 6, 4, 6, (P, 1), RANK)  # local (4, 6) on every rank
    return [redist.Job(a, b, "T", np.float64), redist.Job(a2, b, "N", np.float32)]


def batch_plan():
    jobs = batch_jobs()
    return cached("batch", lambda: redist.make_batch_transform_plan(WORK, jobs))


def batch_arrays(ctx):
    (a, b), (a2, _) = [(j.a, j.b) for j in batch_jobs()]
    g = global_matrix(*b.shape)
    a0 = ctx.new(a.local_shape, key="a0")
    b0 = ctx.new(b.local_shape, fill=fill_from(b, g), key="b0")
    a1 = ctx.new(a2.local_shape, np.float32, key="a1")
    b1 = ctx.new(b.local_shape, np.float32, fill=fill_from(b, g), key="b1")
    return a0, b0, a1, b1


def check_batch(ctx, a0, a1):
    (a, b), (a2, _) = [(j.a, j.b) for j in batch_jobs()]
    g = global_matrix(*b.shape)
    return mismatch(a, a0, 2 * g.T, "job 0: A") or mismatch(a2, a1, g, "job 1: A")


class MakeBatchPlan(Entry):
    name = "make_batch_transform_plan"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, jobs=batch_jobs(), strategy="auto", check_consistency=True, num_threads=0,
                        torus=None)
        return ctx

    def call(self, x):
        return redist.make_batch_transform_plan(x["comm"], x["jobs"], strategy=x["strategy"],
                                      check_consistency=x["check_consistency"], num_threads=x["num_threads"],
                                      torus=x["torus"])

    def verify(self, ctx, plan):
        a0, b0, a1, b1 = batch_arrays(ctx)
        plan.execute_batch([(a0, b0, 2.0), (a1, b1)])
        return check_batch(ctx, a0, a1)


class ExecuteBatch(Entry):
    name = "TransformPlan.execute_batch"

    def setup(self):
        ctx = Ctx()
        a0, b0, a1, b1 = batch_arrays(ctx)
        ctx.args = dict(plan=batch_plan(), jobs=[(a0, b0, 2.0), (a1, b1)])
        return ctx

    def call(self, x):
        return x["plan"].execute_batch(x["jobs"])

    def verify(self, ctx, _):
        return check_batch(ctx, ctx.args["jobs"][0][0], ctx.args["jobs"][1][0])


def job(k, make):
    """Job k's tuple of execute_batch replaced by make(ctx, tuple)."""
    def spoil(a, ctx):
        jobs = list(a["jobs"])
        jobs[k] = make(ctx, jobs[k])
        a["jobs"] = jobs
    return spoil


def relabel_problem(name, result):
    """A relabeling of one job: a permutation of the ranks and one layout."""
    layouts, new_rank_of, _ = result
    if sorted(new_rank_of) != list(range(P)) or len(layouts) != 1:
        return f"{name} returned {new_rank_of}, {len(layouts)} layouts"
    return ""


class RelabelTargets(Entry):
    name = "relabel_targets"

    def setup(self):
        ctx = Ctx()
        a, b = t_layouts()
        ctx.args = dict(comm=WORK, jobs=[redist.Job(a, b, "T", np.float64)], solver="exact")
        return ctx

    def call(self, x):
        return redist.relabel_targets(x["comm"], x["jobs"], x["solver"])

    def verify(self, ctx, result):
        return relabel_problem(self.name, result)


class Transform(Entry):
    name = "transform"

    def setup(self):
        ctx = Ctx()
        a_l, b_l = t_layouts()
        ctx.args = dict(comm=WORK, a_layout=a_l, a=ctx.new(a_l.local_shape, key="a"), b_layout=b_l,
                        b=ctx.new(b_l.local_shape, fill=fill_from(b_l, global_matrix(*b_l.shape)), key="b"),
                        op="T", alpha=2.0, beta=0.0, region=None, strategy="auto")
        return ctx

    def call(self, x):
        return redist.transform(x["comm"], x["a_layout"], x["a"], x["b_layout"], x["b"], x["op"], x["alpha"],
                                x["beta"], region=x["region"], strategy=x["strategy"])

    def verify(self, ctx, _):
        b_l = ctx.args["b_layout"]
        return mismatch(ctx.args["a_layout"], ctx.args["a"], 2 * global_matrix(*b_l.shape).T, "A")



# ---- N-d reshapes and node buffers ---------------------------------------------------------------------------------

def nd_layouts():
    """A = permute(B, (2, 1, 0)) with the same local shapes on every rank: B (4P, 6, 5) in (4, 6, 5) bricks on
    P x 1 x 1, stored in Fortran order; A (5, 6, 4P) in (5, 6, 4) bricks on 1 x 1 x P, C order."""
    b = redist.block_cyclic_nd((4 * P, 6, 5), (4, 6, 5), (P, 1, 1), RANK, order="F")
    a = redist.block_cyclic_nd((5, 6, 4 * P), (5, 6, 4), (1, 1, P), RANK)
    return a, b


ND_AXES = [2, 1, 0]


def global_nd(shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 1000) + 1


def fill_nd(layout, values):
    def fill(view):
        for lo, v in layout.local_views(view):
            v[...] = values[tuple(slice(l, l + n) for l, n in zip(lo, v.shape))]
    return fill


def mismatch_nd(layout, array, expected, what):
    for lo, v in layout.local_views(array):
        if not np.array_equal(v, expected[tuple(slice(l, l + n) for l, n in zip(lo, v.shape))].astype(v.dtype)):
            return f"{what}: wrong values in the block at {tuple(lo)}"
    return ""


def nd_order(layout):
    return "F" if layout.order[0] == 0 else "C"


def nd_arrays(ctx, dtype=np.float64):
    a_l, b_l = nd_layouts()
    a = ctx.new(a_l.local_shape, dtype, nd_order(a_l), key="a")
    b = ctx.new(b_l.local_shape, dtype, nd_order(b_l), fill=fill_nd(b_l, global_nd(b_l.shape)), key="b")
    return a, b


def nd_expected(scale=2.0):
    _, b_l = nd_layouts()
    return scale * np.transpose(global_nd(b_l.shape), ND_AXES)


def reshape_plan():
    a, b = nd_layouts()
    return cached("reshape", lambda: redist.make_reshape_plan(WORK, a, b, ND_AXES, np.float64))


def other_rank_nd_layout(ctx, a):
    return redist.block_cyclic_nd((5, 6, 4 * P), (5, 6, 4), (1, 1, P), (RANK + 1) % P)


class MakeReshapePlan(Entry):
    name = "make_reshape_plan"

    def setup(self):
        ctx = Ctx()
        a, b = nd_layouts()
        ctx.args = dict(comm=WORK, a=a, b=b, axes=ND_AXES, dtype=np.float64, conjugate=False, strategy="auto",
                        stores="auto", check_consistency=True, num_threads=0, one_shot=False)
        return ctx

    def call(self, x):
        return redist.make_reshape_plan(x["comm"], x["a"], x["b"], x["axes"], x["dtype"], conjugate=x["conjugate"],
                                        strategy=x["strategy"], stores=x["stores"],
                                        check_consistency=x["check_consistency"], num_threads=x["num_threads"],
                                        one_shot=x["one_shot"])

    def verify(self, ctx, plan):
        a_l, _ = nd_layouts()
        a, b = nd_arrays(ctx)
        plan.execute(a, b, 2.0)
        return mismatch_nd(a_l, a, nd_expected(), "A")


def my_input_box():
    """This rank's box of B (4P, 6, 5) in the box form of make_reshape_plan: a slab along axis 0."""
    return (4 * RANK, 0, 0), (4 * RANK + 4, 6, 5)


def my_output_box():
    """This rank's box of A = permute(B, ND_AXES), (5, 6, 4P): a slab along axis 2."""
    return (0, 0, 4 * RANK), (5, 6, 4 * RANK + 4)


def box_values(values, box):
    lo, hi = box
    return values[tuple(slice(l, h) for l, h in zip(lo, hi))].ravel()  # dense in C order, the default


def identity_boxes(a, ctx):
    """Base: no axes (the identity), the output boxes those of the input."""
    a.update(axes=None, outputs=my_input_box())


class MakeReshapePlanBoxes(Entry):
    """The box form, make_reshape_plan(comm, my_input_boxes, my_output_boxes, dtype, *, axes=, input_order=, ...):
    the same boxes' shapes on every rank (slabs of 4 x 6 x 5 elements), so that an error on every rank has the
    same message everywhere."""
    name = "make_reshape_plan (boxes)"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, inputs=my_input_box(), outputs=my_output_box(), dtype=np.float64, axes=ND_AXES,
                        input_order=None, output_order=None, conjugate=False, relabel=False, strategy="auto",
                        stores="auto", check_consistency=True, num_threads=0, one_shot=False)
        return ctx

    def call(self, x):
        return redist.make_reshape_plan(x["comm"], x["inputs"], x["outputs"], x["dtype"], axes=x["axes"],
                                        input_order=x["input_order"], output_order=x["output_order"],
                                        conjugate=x["conjugate"], relabel=x["relabel"], strategy=x["strategy"],
                                        stores=x["stores"], check_consistency=x["check_consistency"],
                                        num_threads=x["num_threads"], one_shot=x["one_shot"])

    def verify(self, ctx, plan):
        x = ctx.args
        held = [tuple(tuple(int(v) for v in c) for c in box) for box in plan.output_boxes_held]
        if held != [x["outputs"]] or plan.output_boxes_passed_by != RANK:
            return f"output_boxes_held {held} passed by {plan.output_boxes_passed_by}, expected [{x['outputs']}]"
        g = global_nd((4 * P, 6, 5))
        b = ctx.new((120,), order="C", fill=box_values(g, x["inputs"]), key="check_b")
        a = ctx.new((120,), order="C", key="check_a")
        plan.execute(a, b, 2.0)
        expected = 2 * box_values(np.transpose(g, x["axes"] or [0, 1, 2]), x["outputs"])
        return "" if np.array_equal(a, expected) else "A: wrong values in this rank's output box"


class ReshapeExecute(Entry):
    name = "TransformPlan.execute (reshape)"

    def setup(self):
        ctx = Ctx()
        a, b = nd_arrays(ctx)
        ctx.args = dict(plan=reshape_plan(), a=a, b=b, alpha=2.0, beta=0.0)
        return ctx

    def call(self, x):
        return x["plan"].execute(x["a"], x["b"], x["alpha"], x["beta"])

    def verify(self, ctx, _):
        return mismatch_nd(nd_layouts()[0], ctx.args["a"], nd_expected(), "A")


class Reshape(Entry):
    name = "reshape"

    def setup(self):
        ctx = Ctx()
        a_l, b_l = nd_layouts()
        a, b = nd_arrays(ctx)
        ctx.args = dict(comm=WORK, a_layout=a_l, a=a, b_layout=b_l, b=b, axes=ND_AXES, alpha=2.0, beta=0.0,
                        conjugate=False, strategy="auto")
        return ctx

    def call(self, x):
        return redist.reshape(x["comm"], x["a_layout"], x["a"], x["b_layout"], x["b"], x["axes"], x["alpha"],
                              x["beta"], conjugate=x["conjugate"], strategy=x["strategy"])

    def verify(self, ctx, _):
        return mismatch_nd(ctx.args["a_layout"], ctx.args["a"], nd_expected(), "A")


def reshape_jobs():
    a, b = nd_layouts()
    return [redist.ReshapeJob(a, b, ND_AXES, np.float64), redist.ReshapeJob(b, b, None, np.float32)]


class MakeBatchReshapePlan(Entry):
    name = "make_batch_reshape_plan"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, jobs=reshape_jobs(), strategy="auto", num_threads=0)
        return ctx

    def call(self, x):
        return redist.make_batch_reshape_plan(x["comm"], x["jobs"], strategy=x["strategy"],
                                              num_threads=x["num_threads"])

    def verify(self, ctx, plan):
        a_l, b_l = nd_layouts()
        a0, b0 = nd_arrays(ctx)
        g = global_nd(b_l.shape)
        a1 = ctx.new(b_l.local_shape, np.float32, "F", key="a1")
        b1 = ctx.new(b_l.local_shape, np.float32, "F", fill=fill_nd(b_l, g), key="b1")
        plan.execute_batch([(a0, b0, 2.0), (a1, b1)])
        return mismatch_nd(a_l, a0, nd_expected(), "job 0: A") or mismatch_nd(b_l, a1, g, "job 1: A")


class RelabelReshapeTargets(Entry):
    name = "relabel_reshape_targets"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, jobs=reshape_jobs()[:1], solver="exact")
        return ctx

    def call(self, x):
        return redist.relabel_reshape_targets(x["comm"], x["jobs"], x["solver"])

    def verify(self, ctx, result):
        return relabel_problem(self.name, result)


NODE_BYTES = 8 * (RANK + 1)  # a count of its own on every rank: counts may differ


class NodeBufferCreate(Entry):
    name = "node_buffer"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, nbytes=NODE_BYTES)
        return ctx

    def call(self, x):
        return redist.node_buffer(x["comm"], x["nbytes"])

    def verify(self, ctx, buffer):
        with buffer:
            view = buffer.array(np.float64)
            size = view.size
            view = None
        return "" if size == NODE_BYTES // 8 else f"the buffer's array has {size} elements, expected {NODE_BYTES // 8}"


class NodeBufferFree(Entry):
    """free() agrees before it frees: a rank that still holds an array over its segment fails every rank, and the
    buffer stays usable (freed by the valid call afterwards, once the array is gone)."""
    name = "NodeBuffer.free"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(buffer=redist.node_buffer(WORK, NODE_BYTES), hold=None)
        return ctx

    def call(self, x):
        return x["buffer"].free()

    def verify(self, ctx, _):
        buffer = ctx.args["buffer"]
        return "" if buffer.freed else "the buffer is not freed"

def gemm_plan():
    a, b, c = g_layouts()
    return cached("gemm", lambda: redist.make_gemm_plan(WORK, a, b, c, dtype=np.float64))


def gemm_arrays(ctx):
    a_l, b_l, c_l = g_layouts()
    return (ctx.new(a_l.local_shape, fill=fill_from(a_l, GA), key="a"),
            ctx.new(b_l.local_shape, fill=fill_from(b_l, GB), key="b"),
            ctx.new(c_l.local_shape, key="c"))


def check_product(c):
    return mismatch(g_layouts()[2], c, GA @ GB, "C")


class MakeGemmPlan(Entry):
    name = "make_gemm_plan"

    def setup(self):
        ctx = Ctx()
        a, b, c = g_layouts()
        ctx.args = dict(comm=WORK, a=a, b=b, c=c, op_a="N", op_b="N", dtype=np.float64, memory_limit_bytes=0,
                        rounds=0, communication="auto", overlap=True, relabel=True, native_order="auto",
                        max_idle_fraction=0.03, strategy="auto")
        return ctx

    def call(self, x):
        return redist.make_gemm_plan(x["comm"], x["a"], x["b"], x["c"], x["op_a"], x["op_b"], x["dtype"],
                                     memory_limit_bytes=x["memory_limit_bytes"], rounds=x["rounds"],
                                     communication=x["communication"], overlap=x["overlap"],
                                     relabel=x["relabel"], native_order=x["native_order"],
                                     max_idle_fraction=x["max_idle_fraction"], strategy=x["strategy"])

    def verify(self, ctx, plan):
        a, b, c = gemm_arrays(ctx)
        plan.execute(c, a, b)
        return check_product(c)


class GemmExecute(Entry):
    name = "GemmPlan.execute"

    def setup(self):
        ctx = Ctx()
        a, b, c = gemm_arrays(ctx)
        ctx.args = dict(plan=gemm_plan(), c=c, a=a, b=b, alpha=1.0, beta=0.0)
        return ctx

    def call(self, x):
        return x["plan"].execute(x["c"], x["a"], x["b"], x["alpha"], x["beta"])

    def verify(self, ctx, _):
        return check_product(ctx.args["c"])


class GemmStart(GemmExecute):
    """start() agrees on the same checks as execute(); wait() then completes the valid call."""
    name = "GemmPlan.start"

    def call(self, x):
        x["plan"].start(x["c"], x["a"], x["b"], x["alpha"], x["beta"])
        x["plan"].wait()


class Gemm(Entry):
    name = "gemm"

    def setup(self):
        ctx = Ctx()
        a_l, b_l, c_l = g_layouts()
        a, b, c = gemm_arrays(ctx)
        ctx.args = dict(comm=WORK, a_layout=a_l, a=a, b_layout=b_l, b=b, c_layout=c_l, c=c, alpha=1.0, beta=0.0,
                        op_a="N", op_b="N", options={})
        return ctx

    def call(self, x):
        return redist.gemm(x["comm"], x["a_layout"], x["a"], x["b_layout"], x["b"], x["c_layout"], x["c"],
                           x["alpha"], x["beta"], x["op_a"], x["op_b"], **x["options"])

    def verify(self, ctx, _):
        return check_product(ctx.args["c"])


def ring():
    """Edges to the next rank and to this rank itself, three elements each (the same counts on every rank)."""
    return [(RANK - 1) % P, RANK], [(RANK + 1) % P, RANK]


SDISPLS, RDISPLS, EDGE = [0, 4], [0, 5], 3


def neighbor_args(ctx):
    sources, destinations = ring()
    send = np.full(8, -1.0)
    for i, d in enumerate(SDISPLS):
        send[d:d + EDGE] = 1000 * RANK + 10 * i + np.arange(EDGE)
    return dict(comm=WORK, send=ctx.new((8,), fill=send, key="send"), sendcounts=[EDGE, EDGE], sdispls=SDISPLS,
                recv=ctx.new((10,), key="recv"), recvcounts=[EDGE, EDGE], rdispls=RDISPLS, sources=sources,
                destinations=destinations, send_ids=None, recv_ids=None, strategy="standard", region_size=0,
                region_id=None, cost_model=None)


def neighbor_init(x):
    return redist.neighbor_alltoallv_init(x["comm"], x["send"], x["sendcounts"], x["sdispls"], x["recv"],
                                          x["recvcounts"], x["rdispls"], sources=x["sources"],
                                          destinations=x["destinations"], send_ids=x["send_ids"],
                                          recv_ids=x["recv_ids"], strategy=x["strategy"],
                                          region_size=x["region_size"], region_id=x["region_id"],
                                          cost_model=x["cost_model"])


def received_problem(recv):
    """Each receive edge holds its source's elements; the gaps between edges keep their pattern."""
    sources, _ = ring()
    expected = pattern(np.float64, recv.size, -500)
    for j, (s, d) in enumerate(zip(sources, RDISPLS)):
        expected[d:d + EDGE] = 1000 * s + 10 * j + np.arange(EDGE)
    return "" if np.array_equal(recv, expected) else f"recv holds {recv.tolist()}, expected {expected.tolist()}"


class NeighborInit(Entry):
    name = "neighbor_alltoallv_init"

    def setup(self):
        ctx = Ctx()
        ctx.args = neighbor_args(ctx)
        return ctx

    def call(self, x):
        return neighbor_init(x)

    def verify(self, ctx, plan):
        plan.execute()
        return received_problem(ctx.args["recv"])


class NeighborStartWait(Entry):
    """start()/wait() take no arguments and never agree (docs/python.md): only their misuse on every rank."""
    name = "NeighborPlan.start/wait"
    modes = ("all",)

    def setup(self):
        ctx = Ctx()
        x = neighbor_args(ctx)
        ctx.extra["recv"] = x["recv"]
        ctx.args = dict(plan=neighbor_init(x), action="run")
        return ctx

    def call(self, x):
        plan, action = x["plan"], x["action"]
        if action == "run":
            plan.start()
            plan.wait()
        elif action == "wait_unstarted":
            plan.wait()
        elif action == "start_twice":
            plan.start()
            try:
                plan.start()
            finally:
                plan.wait()
        elif action == "wait_twice":
            plan.start()
            plan.wait()
            plan.wait()

    def verify(self, ctx, _):
        return received_problem(ctx.extra["recv"])


def inplace_buffer(ctx, gap):
    """Two elements for every rank (100 * rank + 10 * destination + k), `gap` elements after each block."""
    buf = np.full((2 + gap) * P, -1.0)
    for j in range(P):
        buf[(2 + gap) * j:(2 + gap) * j + 2] = 100 * RANK + 10 * j + np.arange(2)
    return ctx.new(buf.shape, fill=buf, key="buf")


def inplace_problem(buf, gap, report):
    expected = np.full((2 + gap) * P, -1.0)
    for i in range(P):
        expected[(2 + gap) * i:(2 + gap) * i + 2] = 100 * i + 10 * RANK + np.arange(2)
    if not np.array_equal(buf, expected):
        return f"buf holds {buf.tolist()}, expected {expected.tolist()}"
    if list(report["recvcounts"]) != [2] * P:
        return f"report recvcounts {list(report['recvcounts'])}"
    return ""


class AlltoallvInplace(Entry):
    name = "alltoallv_inplace"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, buf=inplace_buffer(ctx, 0), sendcounts=[2] * P, recvcounts=None,
                        algorithm="auto", work_bytes=1 << 16, pairwise_guard=4.0)
        return ctx

    def call(self, x):
        return redist.alltoallv_inplace(x["comm"], x["buf"], x["sendcounts"], x["recvcounts"],
                                        algorithm=x["algorithm"], work_bytes=x["work_bytes"],
                                        pairwise_guard=x["pairwise_guard"])

    def verify(self, ctx, report):
        return inplace_problem(ctx.args["buf"], 0, report)


class AlltoallInplace(Entry):
    name = "alltoall_inplace"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, buf=inplace_buffer(ctx, 0), count=2, algorithm="auto", work_bytes=1 << 16,
                        pairwise_guard=4.0)
        return ctx

    def call(self, x):
        return redist.alltoall_inplace(x["comm"], x["buf"], x["count"], algorithm=x["algorithm"],
                                       work_bytes=x["work_bytes"], pairwise_guard=x["pairwise_guard"])

    def verify(self, ctx, report):
        return inplace_problem(ctx.args["buf"], 0, report)


class AlltoallvInplaceSymmetric(Entry):
    name = "alltoallv_inplace_symmetric"

    def setup(self):
        ctx = Ctx()
        ctx.args = dict(comm=WORK, buf=inplace_buffer(ctx, 1), counts=[2] * P, displs=[3 * j for j in range(P)],
                        work_bytes=1 << 16)
        return ctx

    def call(self, x):
        return redist.alltoallv_inplace_symmetric(x["comm"], x["buf"], x["counts"], x["displs"],
                                                  work_bytes=x["work_bytes"])

    def verify(self, ctx, report):
        return inplace_problem(ctx.args["buf"], 1, report)


# ---- the cases -----------------------------------------------------------------------------------------------

ANY = (TypeError, ValueError, redist.Error)


@dataclass
class Case:
    name: str
    spoil: Callable
    expect: tuple = ANY               # the exception on the rank(s) with the bad argument
    modes: tuple = ("all", "one")
    base: Optional[Callable] = None   # applied on every rank first (and kept for the valid call)
    needs_two: bool = False           # meaningless on one rank
    written_ok: bool = False          # the output may hold the correct result after the failure


def agree(name, spoil, expect=ANY, **kw):
    """An argument that is valid alone but must be the same on every rank: one-rank mode only."""
    return Case(name, spoil, expect, modes=("one",), needs_two=True, **kw)


def bad_comm():
    return Case("comm_not_a_comm", put("comm", "MPI_COMM_WORLD"), (TypeError,), modes=("all",))


def refused(name, spoil, **kw):
    """An argument of the wrong type (or an unknown keyword): refused by nanobind's argument conversion."""
    return Case(name, spoil, (TypeError,), **kw)


CASES = {
    MakePlan: [
        bad_comm(),
        Case("comm_null", put("comm", MPI.COMM_NULL), (ValueError,), modes=("all",)),
        Case("a_layout_of_another_rank", put_fn("a", other_rank_layout), (redist.InvalidArgument,), needs_two=True),
        Case("dimensions_mismatch", put("op", "N"), (redist.DimensionMismatch,)),
        Case("op_unknown", put("op", "X"), (ValueError,)),
        refused("op_wrong_type", put("op", 1)),
        Case("dtype_unsupported", put("dtype", np.float16), (TypeError,)),
        Case("dtype_not_a_dtype", put("dtype", "matrix"), (TypeError,)),
        Case("region_unknown", put("region", ("diagonal", 0)), (ValueError,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        refused("strategy_wrong_type", put("strategy", 5)),
        Case("stores_unknown", put("stores", "nontemporal"), (ValueError,)),
        refused("stores_wrong_type", put("stores", True)),
        Case("num_threads_negative", put("num_threads", -1), (ValueError,)),
        refused("torus_wrong_type", put("torus", ["4x2"]), base=torus_base),
        Case("torus_unknown_key", torus_with(size=4), (ValueError,), base=torus_base),
        Case("torus_mode_unknown", torus_with(mode="fast"), (ValueError,), base=torus_base),
        Case("torus_alpha_wrong_type", torus_with(alpha="half"), (TypeError,), base=torus_base),
        Case("torus_shape_wrong_size", torus_with(shape=str(P + 1)), (redist.Error,), base=torus_base),
        agree("strategy_differs", put("strategy", "alltoallv"), (redist.InconsistentRanks,)),
        agree("dtype_differs", put("dtype", np.float32), (redist.InconsistentRanks,)),
        agree("b_block_size_differs", put_fn("b", lambda c, a: redist.block_cyclic(4 * P, 6, 1, 3, (P, 1), RANK)),
              (redist.InconsistentRanks,)),
        agree("region_differs", put("region", ("upper", 0)), (redist.InconsistentRanks,)),
        agree("check_consistency_differs", put("check_consistency", False), (redist.InconsistentRanks,)),
        agree("torus_mapping_differs", torus_with(mapping=12345), base=torus_base),
        agree("torus_mode_differs", torus_with(mode="direct"), base=torus_base),
    ],
    PlanExecute: [
        Case("a_wrong_dtype", array_like("a", dtype=np.float32), (TypeError,)),
        Case("a_wrong_shape", put_fn("a", lambda c, a: c.new((7, 4))), (ValueError,)),
        Case("a_too_few_elements", array_short("a"), (ValueError,)),
        Case("a_wrong_order", array_like("a", order="C"), (ValueError,)),
        Case("a_non_contiguous", array_like("a", strided=True), (ValueError,)),
        refused("a_read_only", array_like("a", readonly=True)),
        Case("b_wrong_dtype", array_like("b", dtype=np.float32), (TypeError,)),
        Case("b_too_few_elements", array_short("b"), (ValueError,)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
        refused("alpha_wrong_type", put("alpha", "two")),
    ],
    PlanStart: [
        Case("a_wrong_dtype", array_like("a", dtype=np.float32), (TypeError,)),
        Case("a_too_few_elements", array_short("a"), (ValueError,)),
        refused("a_read_only", array_like("a", readonly=True)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
    ],
    PlanInverse: [
        refused("unexpected_argument", put("extra", (1,))),
    ],
    MakeBatchPlan: [
        bad_comm(),
        refused("jobs_not_a_list", put("jobs", None)),
        refused("job_not_a_job", put_fn("jobs", lambda c, a: [a["jobs"][0], "job"])),
        Case("job_dimensions_mismatch",
             put_fn("jobs", lambda c, a: [a["jobs"][0], redist.Job(a["jobs"][0].a, a["jobs"][0].b, "N", np.float32)]),
             (redist.DimensionMismatch,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        refused("strategy_wrong_type", put("strategy", 5)),
        Case("num_threads_negative", put("num_threads", -1), (ValueError,)),
        agree("job_count_differs", put_fn("jobs", lambda c, a: a["jobs"][:1]), (redist.InconsistentRanks,)),
        agree("job_dtype_differs",
              put_fn("jobs", lambda c, a: [a["jobs"][0], redist.Job(a["jobs"][1].a, a["jobs"][1].b, "N", np.float64)]),
              (redist.InconsistentRanks,)),
        agree("strategy_differs", put("strategy", "point_to_point"), (redist.InconsistentRanks,)),
    ],
    ExecuteBatch: [
        refused("jobs_not_a_list", put("jobs", None)),
        refused("job_not_a_tuple", put_fn("jobs", lambda c, a: [list(a["jobs"][0]), a["jobs"][1]])),
        Case("too_few_jobs", put_fn("jobs", lambda c, a: a["jobs"][:1]), (ValueError,)),
        Case("tuple_too_short", job(0, lambda c, t: t[:1]), (ValueError,)),
        Case("a_wrong_dtype", job(1, lambda c, t: (c.new(c.spec["a1"][0], np.float64), t[1])), (TypeError,)),
        Case("a_read_only", job(0, lambda c, t: (c.new(c.spec["a0"][0], readonly=True), *t[1:])), (TypeError,)),
        Case("a_not_an_array", job(0, lambda c, t: (np.asarray(t[0]).tolist(), *t[1:])), (TypeError,)),
        Case("b_non_contiguous",
             job(1, lambda c, t: (t[0], c.new(c.spec["b1"][0], np.float32, fill=np.array(t[1]), strided=True))),
             (ValueError,)),
        Case("b_too_few_elements", job(0, lambda c, t: (t[0], c.new((int(np.prod(c.spec["b0"][0])) - 1,)), 2.0)),
             (ValueError,)),
        Case("alpha_not_a_number", job(0, lambda c, t: (t[0], t[1], "two")), (TypeError,)),
        Case("alpha_complex_for_float32", job(1, lambda c, t: (t[0], t[1], 1j)), (TypeError,)),
    ],
    RelabelTargets: [
        bad_comm(),
        refused("jobs_not_a_list", put("jobs", None)),
        refused("job_not_a_job", put("jobs", ["job"])),
        Case("solver_unknown", put("solver", "fastest"), (ValueError,)),
        refused("solver_wrong_type", put("solver", 1)),
        Case("job_with_region",
             put_fn("jobs", lambda c, a: [redist.Job(a["jobs"][0].a, a["jobs"][0].b, "T", np.float64,
                                                     ("upper", 0))]),
             (redist.InvalidArgument,)),
        agree("job_layout_differs",
              put_fn("jobs", lambda c, a: [redist.Job(redist.block_cyclic(6, 4 * P, 1, 2, (1, P), RANK),
                                                      a["jobs"][0].b, "T", np.float64)]),
              (redist.InconsistentRanks,)),
        agree("job_count_differs", put_fn("jobs", lambda c, a: a["jobs"] * 2), (redist.InconsistentRanks,)),
    ],
    MakeReshapePlan: [
        bad_comm(),
        Case("comm_null", put("comm", MPI.COMM_NULL), (ValueError,), modes=("all",)),
        Case("a_layout_of_another_rank", put_fn("a", other_rank_nd_layout), (redist.InvalidArgument,),
             needs_two=True),
        refused("a_is_a_matrix_layout", put_fn("a", lambda c, a: t_layouts()[0])),
        Case("axes_not_a_permutation", put("axes", [0, 0, 1]), (redist.InvalidArgument,)),
        Case("axes_too_short", put("axes", [1, 0]), (redist.InvalidArgument,)),
        Case("axes_out_of_range", put("axes", [3, 1, 0]), (redist.InvalidArgument,)),
        Case("axes_negative", put("axes", [2, 1, -1]), (redist.InvalidArgument,)),
        Case("axes_identity_shapes_differ", put("axes", None), (redist.DimensionMismatch,)),
        refused("axes_wrong_type", put("axes", "zyx")),
        Case("dtype_unsupported", put("dtype", np.float16), (TypeError,)),
        Case("dtype_not_a_dtype", put("dtype", "tensor"), (TypeError,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        refused("strategy_wrong_type", put("strategy", 5)),
        Case("stores_unknown", put("stores", "nontemporal"), (ValueError,)),
        Case("num_threads_negative", put("num_threads", -1), (ValueError,)),
        agree("strategy_differs", put("strategy", "point_to_point"), (redist.InconsistentRanks,)),
        agree("dtype_differs", put("dtype", np.float32), (redist.InconsistentRanks,)),
        agree("one_shot_differs", put("one_shot", True), (redist.InconsistentRanks,)),
        agree("b_grid_ranks_differ",
              put_fn("b", lambda c, a: redist.block_cyclic_nd((4 * P, 6, 5), (4, 6, 5), (P, 1, 1), RANK, order="F",
                                                               grid_ranks=np.arange(P)[::-1].reshape(P, 1, 1))),
              (redist.InconsistentRanks,)),
        agree("b_storage_order_differs",
              put_fn("b", lambda c, a: redist.block_cyclic_nd((4 * P, 6, 5), (4, 6, 5), (P, 1, 1), RANK, order="C")),
              (redist.InconsistentRanks,)),
    ],
    MakeReshapePlanBoxes: [
        bad_comm(),
        Case("comm_null", put("comm", MPI.COMM_NULL), (ValueError,), modes=("all",)),
        Case("input_boxes_not_boxes", put("inputs", "brick"), (TypeError,)),
        refused("input_boxes_none", put("inputs", None)),
        Case("input_box_not_integers", put("inputs", ((0.5, 0, 0), (4, 6, 5))), (TypeError,)),
        Case("input_box_not_a_pair", put("inputs", ((0, 0, 0), (4, 6, 5), (1, 1, 1))), (TypeError,)),
        Case("input_box_lo_above_hi", put("inputs", ((0, 6, 0), (4, 0, 5))), (redist.InvalidArgument,)),
        Case("input_box_lo_hi_lengths_differ", put("inputs", ((0, 0), (4, 6, 5))), (redist.InvalidArgument,)),
        Case("input_box_fewer_axes_than_output", put("inputs", ((0, 0), (4, 6))), (redist.InvalidArgument,)),
        Case("input_boxes_overlap", put_fn("inputs", lambda c, a: [my_input_box(), my_input_box()]),
             (redist.InvalidLayout,)),
        # On every rank: no input at all; on one rank: a gap, or (the first or last rank) a smaller input space.
        Case("input_boxes_empty", put("inputs", []), (redist.InvalidArgument, redist.InvalidLayout)),
        Case("output_box_lo_above_hi", put("outputs", ((5, 0, 0), (0, 6, 4))), (redist.InvalidArgument,)),
        Case("output_box_fewer_axes", put("outputs", ((0, 0), (5, 6))), (redist.InvalidArgument,)),
        Case("output_boxes_gap",
             put_fn("outputs", lambda c, a: [((0, 0, 4 * RANK), (5, 2, 4 * RANK + 4)),
                                             ((0, 3, 4 * RANK), (5, 6, 4 * RANK + 4))]),
             (redist.InvalidLayout,)),
        # On every rank (or the last): the output space is smaller than the input's; on another rank: a gap.
        Case("output_box_short", put_fn("outputs", lambda c, a: ((0, 0, 4 * RANK), (5, 6, 4 * RANK + 3))),
             (redist.InvalidArgument, redist.InvalidLayout)),
        Case("axes_not_a_permutation", put("axes", [0, 0, 1]), (redist.InvalidArgument,)),
        Case("axes_too_short", put("axes", [1, 0]), (redist.InvalidArgument,)),
        Case("axes_out_of_range", put("axes", [3, 1, 0]), (redist.InvalidArgument,)),
        Case("axes_negative", put("axes", [2, 1, -1]), (redist.InvalidArgument,)),
        # On every rank: the output space is not the input's; on one rank: axes differ.
        Case("axes_identity_spaces_differ", put("axes", None), (redist.InvalidArgument, redist.InconsistentRanks)),
        refused("axes_wrong_type", put("axes", "zyx")),
        Case("input_order_not_a_permutation", put("input_order", [0, 0, 1]), (redist.InvalidArgument,)),
        Case("input_order_too_short", put("input_order", [1, 0]), (redist.InvalidArgument,)),
        Case("input_order_unknown", put("input_order", "Z"), (ValueError,)),
        Case("input_order_wrong_type", put("input_order", 3), (TypeError,)),
        Case("output_order_not_a_permutation", put("output_order", [2, 2, 0]), (redist.InvalidArgument,)),
        Case("output_order_out_of_range", put("output_order", [0, 1, 3]), (redist.InvalidArgument,)),
        Case("output_order_unknown", put("output_order", "X"), (ValueError,)),
        Case("dtype_unsupported", put("dtype", np.float16), (TypeError,)),
        Case("dtype_not_a_dtype", put("dtype", "tensor"), (TypeError,)),
        refused("dtype_none", put("dtype", None)),
        refused("conjugate_wrong_type", put("conjugate", "yes")),
        refused("relabel_wrong_type", put("relabel", "yes")),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        refused("strategy_wrong_type", put("strategy", 5)),
        Case("stores_unknown", put("stores", "nontemporal"), (ValueError,)),
        Case("num_threads_negative", put("num_threads", -1), (ValueError,)),
        # Valid on one rank alone, wrong with the others' (on every rank the boxes would just be relabeled): an
        # overlap and a gap, or (the last rank) a smaller input space.
        agree("input_box_of_another_rank",
              put_fn("inputs", lambda c, a: ((4 * ((RANK + 1) % P), 0, 0), (4 * ((RANK + 1) % P) + 4, 6, 5))),
              (redist.InvalidArgument, redist.InvalidLayout)),
        agree("boxes_of_fewer_axes",
              lambda a, c: a.update(inputs=((4 * RANK, 0), (4 * RANK + 4, 6)),
                                    outputs=((4 * RANK, 0), (4 * RANK + 4, 6))),
              (redist.InvalidArgument,), base=identity_boxes),
        agree("dtype_differs", put("dtype", np.float32), (redist.InconsistentRanks,)),
        agree("axes_differ", put("axes", [2, 0, 1]), (redist.InconsistentRanks,)),
        agree("conjugate_differs", put("conjugate", True), (redist.InconsistentRanks,)),
        agree("relabel_differs", put("relabel", True), (redist.InconsistentRanks,)),
        agree("strategy_differs", put("strategy", "point_to_point"), (redist.InconsistentRanks,)),
        agree("one_shot_differs", put("one_shot", True), (redist.InconsistentRanks,)),
    ],
    ReshapeExecute: [
        Case("a_wrong_dtype", array_like("a", dtype=np.float32), (TypeError,)),
        Case("a_wrong_shape", put_fn("a", lambda c, a: c.new((4, 6, 5), order="C")), (ValueError,)),
        Case("a_too_few_elements", array_short("a"), (ValueError,)),
        Case("a_wrong_order", array_like("a", order="F"), (ValueError,)),
        Case("a_non_contiguous", array_like("a", strided=True), (ValueError,)),
        refused("a_read_only", array_like("a", readonly=True)),
        Case("a_not_an_array", array_as_list("a"), (TypeError,)),
        Case("b_wrong_dtype", array_like("b", dtype=np.complex128), (TypeError,)),
        Case("b_too_few_elements", array_short("b"), (ValueError,)),
        Case("b_wrong_order", array_like("b", order="C"), (ValueError,)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
        Case("beta_complex_for_float64", put("beta", 2j), (TypeError,)),
        refused("alpha_wrong_type", put("alpha", "two")),
    ],
    Reshape: [
        bad_comm(),
        Case("a_not_an_array", array_as_list("a"), (TypeError,)),
        Case("a_unsupported_dtype", array_like("a", dtype=np.float16), (TypeError,)),
        Case("b_wrong_dtype", array_like("b", dtype=np.float32), (TypeError,)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("axes_not_a_permutation", put("axes", [2, 2, 0]), (redist.InvalidArgument,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        agree("strategy_differs", put("strategy", "alltoallv"), (redist.InconsistentRanks,)),
    ],
    MakeBatchReshapePlan: [
        bad_comm(),
        refused("jobs_not_a_list", put("jobs", None)),
        refused("job_not_a_reshape_job", put_fn("jobs", lambda c, a: [a["jobs"][0], redist.Job(*t_layouts())])),
        Case("job_shapes_differ",
             put_fn("jobs", lambda c, a: [a["jobs"][0], redist.ReshapeJob(a["jobs"][0].a, a["jobs"][0].b)]),
             (redist.DimensionMismatch,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        Case("num_threads_negative", put("num_threads", -1), (ValueError,)),
        agree("job_count_differs", put_fn("jobs", lambda c, a: a["jobs"][:1]), (redist.InconsistentRanks,)),
        agree("job_dtype_differs",
              put_fn("jobs", lambda c, a: [a["jobs"][0], redist.ReshapeJob(a["jobs"][1].a, a["jobs"][1].b, None,
                                                                           np.float64)]),
              (redist.InconsistentRanks,)),
    ],
    RelabelReshapeTargets: [
        bad_comm(),
        refused("jobs_not_a_list", put("jobs", None)),
        refused("job_not_a_reshape_job", put("jobs", ["job"])),
        Case("solver_unknown", put("solver", "fastest"), (ValueError,)),
        agree("job_axes_differ",
              put_fn("jobs", lambda c, a: [redist.ReshapeJob(nd_layouts()[1], nd_layouts()[1], None, np.float64)]),
              (redist.InconsistentRanks,)),
        agree("job_count_differs", put_fn("jobs", lambda c, a: a["jobs"] * 2), (redist.InconsistentRanks,)),
    ],
    NodeBufferCreate: [
        bad_comm(),
        Case("comm_null", put("comm", MPI.COMM_NULL), (ValueError,), modes=("all",)),
        Case("nbytes_negative", put("nbytes", -8), (ValueError,)),
        refused("nbytes_wrong_type", put("nbytes", "64")),
        Case("nbytes_beyond_memory", put("nbytes", 2 ** 62), (redist.InsufficientMemory,)),
    ],
    NodeBufferFree: [
        Case("array_held", put_fn("hold", lambda c, a: a["buffer"].array(np.float64)), (ValueError,)),
    ],
    Transform: [
        bad_comm(),
        Case("a_not_an_array", array_as_list("a"), (TypeError,)),
        Case("a_unsupported_dtype", array_like("a", dtype=np.float16), (TypeError,)),
        Case("a_wrong_shape", put_fn("a", lambda c, a: c.new((7, 4))), (ValueError,)),
        refused("a_read_only", array_like("a", readonly=True)),
        Case("b_wrong_dtype", array_like("b", dtype=np.float32), (TypeError,)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("op_unknown", put("op", "X"), (ValueError,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
        refused("alpha_wrong_type", put("alpha", "two")),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        agree("dtype_differs", lambda a, c: a.update(a=c.new(c.spec["a"][0], np.float32),
                                                     b=c.new(c.spec["b"][0], np.float32, fill=c.spec["b"][3])),
              (redist.InconsistentRanks,)),
        agree("strategy_differs", put("strategy", "alltoallv"), (redist.InconsistentRanks,)),
    ],
    MakeGemmPlan: [
        bad_comm(),
        Case("c_dimensions_mismatch",
             put_fn("c", lambda x, a: redist.block_cyclic(2 * P, 2 * P + 1, 2, 2 * P + 1, (P, 1), RANK)),
             (redist.DimensionMismatch,)),
        Case("a_layout_of_another_rank",
             put_fn("a", lambda x, a: redist.block_cyclic(2 * P, 2 * P, 2, 2 * P, (P, 1), (RANK + 1) % P)),
             needs_two=True),
        Case("op_a_unknown", put("op_a", "X"), (ValueError,)),
        refused("op_a_wrong_type", put("op_a", 0)),
        Case("dtype_integer", put("dtype", np.int64), (redist.InvalidArgument,)),
        Case("dtype_unsupported", put("dtype", np.float16), (TypeError,)),
        Case("memory_limit_too_small", put("memory_limit_bytes", 64), (redist.InsufficientMemory,)),
        Case("memory_limit_negative", put("memory_limit_bytes", -1), (redist.InvalidArgument,)),
        Case("rounds_negative", put("rounds", -1), (redist.InvalidArgument,)),
        Case("communication_unknown", put("communication", "mpi"), (ValueError,)),
        refused("overlap_wrong_type", put("overlap", "yes")),
        Case("max_idle_fraction_out_of_range", put("max_idle_fraction", 1.5), (redist.InvalidArgument,)),
        agree("op_a_differs", put("op_a", "T"), (redist.InconsistentRanks,)),
        agree("dtype_differs", put("dtype", np.float32), (redist.InconsistentRanks,)),
        agree("rounds_differs", put("rounds", 1), (redist.InconsistentRanks,)),
        agree("memory_limit_differs", put("memory_limit_bytes", 1 << 30), (redist.InconsistentRanks,)),
        agree("communication_differs", put("communication", "one_sided"), (redist.InconsistentRanks,)),
        agree("overlap_differs", put("overlap", False), (redist.InconsistentRanks,)),
        agree("relabel_differs", put("relabel", False), (redist.InconsistentRanks,)),
        agree("native_order_differs", put("native_order", "contiguous"), (redist.InconsistentRanks,)),
        agree("max_idle_fraction_differs", put("max_idle_fraction", 0.5), (redist.InconsistentRanks,)),
        agree("strategy_differs", put("strategy", "alltoallv")),
        agree("a_block_size_differs",
              put_fn("a", lambda x, a: redist.block_cyclic(2 * P, 2 * P, 1, 2 * P, (P, 1), RANK))),
    ],
    GemmExecute: [
        Case("c_wrong_dtype", array_like("c", dtype=np.float32), (TypeError,)),
        Case("c_wrong_shape", put_fn("c", lambda x, a: x.new((3, 2 * P))), (ValueError,)),
        Case("c_non_contiguous", array_like("c", strided=True), (ValueError,)),
        refused("c_read_only", array_like("c", readonly=True)),
        Case("a_wrong_dtype", array_like("a", dtype=np.float32), (TypeError,)),
        Case("a_too_few_elements", array_short("a"), (ValueError,)),
        Case("b_non_contiguous", array_like("b", strided=True), (ValueError,)),
        Case("b_unsupported_dtype", array_like("b", dtype=np.float16), (TypeError,)),
        Case("alpha_complex_for_float64", put("alpha", 1j), (TypeError,)),
        refused("alpha_wrong_type", put("alpha", "one")),
    ],
    GemmStart: [
        Case("c_wrong_dtype", array_like("c", dtype=np.float32), (TypeError,)),
        refused("c_read_only", array_like("c", readonly=True)),
        Case("a_too_few_elements", array_short("a"), (ValueError,)),
        Case("b_unsupported_dtype", array_like("b", dtype=np.float16), (TypeError,)),
        refused("alpha_wrong_type", put("alpha", "one")),
    ],
    Gemm: [
        bad_comm(),
        Case("c_not_an_array", array_as_list("c"), (TypeError,)),
        Case("c_unsupported_dtype", array_like("c", dtype=np.float16), (TypeError,)),
        refused("c_read_only", array_like("c", readonly=True)),
        Case("a_wrong_dtype", array_like("a", dtype=np.float32), (TypeError,)),
        refused("unknown_option", put("options", {"fancy": 1})),
        refused("option_wrong_type", put("options", {"rounds": "many"})),
        agree("c_dtype_differs", lambda a, x: a.update(c=x.new(x.spec["c"][0], np.float32),
                                                       a=x.new(x.spec["a"][0], np.float32, fill=x.spec["a"][3]),
                                                       b=x.new(x.spec["b"][0], np.float32, fill=x.spec["b"][3])),
              (redist.InconsistentRanks,)),
        agree("option_differs", put("options", {"rounds": 1}), (redist.InconsistentRanks,)),
    ],
    NeighborInit: [
        bad_comm(),
        Case("send_wrong_dtype", array_like("send", dtype=np.float32), (TypeError,)),
        Case("send_not_an_array", array_as_list("send"), (TypeError,)),
        Case("recv_read_only", array_like("recv", readonly=True), (TypeError,)),
        Case("recv_non_contiguous", array_like("recv", strided=True), (ValueError,)),
        Case("recv_too_small", put_fn("recv", lambda x, a: x.new((6,))), (redist.InvalidBuffer,)),
        Case("sendcounts_negative", put("sendcounts", [-1, EDGE]), (redist.InvalidCount,)),
        Case("sendcounts_wrong_length", put("sendcounts", [EDGE]), (redist.InvalidArgument,)),
        refused("sendcounts_wrong_type", put("sendcounts", ["3", EDGE])),
        # 64-bit counts are taken (MPI-4's large-count form); this one runs past the send buffer.
        Case("sendcounts_beyond_buffer_64_bit", put("sendcounts", [2 ** 40, EDGE]), (redist.InvalidBuffer,)),
        Case("sdispls_out_of_range", put("sdispls", [0, 6]), (redist.InvalidBuffer,)),
        Case("destination_out_of_range", put_fn("destinations", lambda x, a: [P, RANK]), (redist.InvalidArgument,)),
        Case("recvcounts_mismatch", put("recvcounts", [EDGE + 1, EDGE]), (redist.InvalidTopology,)),
        Case("sources_mismatch", put_fn("sources", lambda x, a: [RANK, RANK]), (redist.InvalidTopology,),
             needs_two=True),
        Case("destinations_missing", put("destinations", None), (ValueError,)),
        Case("neighbor_lists_missing", lambda a, x: a.update(sources=None, destinations=None),
             (redist.InvalidTopology,)),
        Case("send_ids_without_recv_ids", put_fn("send_ids", lambda x, a: np.arange(8, dtype=np.int64)),
             (ValueError,)),
        Case("ids_wrong_dtype", lambda a, x: a.update(send_ids=np.zeros(8), recv_ids=np.zeros(10)), (TypeError,)),
        Case("strategy_unknown", put("strategy", "fastest"), (ValueError,)),
        refused("strategy_wrong_type", put("strategy", 2)),
        Case("dedup_without_ids", put("strategy", "dedup"), (redist.InvalidArgument,)),
        Case("region_size_negative", put("region_size", -1), (ValueError,)),
        refused("region_id_wrong_type", put("region_id", "node")),
        Case("cost_model_unknown_key", put("cost_model", {"latency": 1e-6}), (ValueError,)),
        agree("strategy_differs", put("strategy", "aggregate"), (redist.InconsistentRanks,)),
        agree("region_size_differs", put("region_size", 1), (redist.InconsistentRanks,)),
        agree("region_id_on_one_rank", put("region_id", 0), (redist.InconsistentRanks,)),
    ],
    NeighborStartWait: [
        Case("wait_without_start", put("action", "wait_unstarted"), (redist.InvalidArgument,), modes=("all",)),
        Case("start_twice", put("action", "start_twice"), (redist.InvalidArgument,), modes=("all",),
             written_ok=True),
        Case("wait_twice", put("action", "wait_twice"), (redist.InvalidArgument,), modes=("all",), written_ok=True),
    ],
    AlltoallvInplace: [
        bad_comm(),
        Case("buf_unsupported_dtype", array_like("buf", dtype=np.float16), (TypeError,)),
        Case("buf_non_contiguous", array_like("buf", strided=True), (ValueError,)),
        refused("buf_read_only", array_like("buf", readonly=True)),
        Case("buf_too_small", array_short("buf"), (redist.InvalidCount,)),
        Case("sendcounts_wrong_length", put("sendcounts", [2] * (P + 1)), (ValueError,)),
        Case("sendcounts_negative", put("sendcounts", [-1] + [2] * (P - 1)), (redist.InvalidCount,)),
        refused("sendcounts_wrong_type", put("sendcounts", ["2"] * P)),
        Case("sendcounts_too_large", put("sendcounts", [2 ** 40] * P), (redist.InvalidCount,)),
        Case("recvcounts_mismatch", put("recvcounts", [3] * P), (redist.InvalidCount,)),
        Case("recvcounts_wrong_length", put("recvcounts", [2] * (P + 1)), (ValueError,)),
        Case("algorithm_unknown", put("algorithm", "fastest"), (ValueError,)),
        Case("work_bytes_out_of_range", put("work_bytes", 0), (redist.InvalidArgument,)),
        refused("work_bytes_wrong_type", put("work_bytes", "big")),
        Case("pairwise_guard_negative", put("pairwise_guard", -1.0), (redist.InvalidArgument,)),
        agree("algorithm_differs", put("algorithm", "pairwise"), (redist.InconsistentRanks,)),
        agree("work_bytes_differs", put("work_bytes", 1 << 17), (redist.InconsistentRanks,)),
        agree("pairwise_guard_differs", put("pairwise_guard", 2.0), (redist.InconsistentRanks,)),
    ],
    AlltoallInplace: [
        bad_comm(),
        Case("count_negative", put("count", -1), (ValueError,)),
        Case("count_too_large", put("count", 3), (ValueError,)),
        refused("count_wrong_type", put("count", "2")),
        Case("buf_unsupported_dtype", array_like("buf", dtype=np.float16), (TypeError,)),
        Case("buf_non_contiguous", array_like("buf", strided=True), (ValueError,)),
        refused("buf_read_only", array_like("buf", readonly=True)),
        Case("algorithm_unknown", put("algorithm", "fastest"), (ValueError,)),
        agree("count_differs", put("count", 1), (redist.InvalidCount,)),
        agree("algorithm_differs", put("algorithm", "pairwise"), (redist.InconsistentRanks,)),
    ],
    AlltoallvInplaceSymmetric: [
        bad_comm(),
        Case("buf_unsupported_dtype", array_like("buf", dtype=np.float16), (TypeError,)),
        Case("buf_non_contiguous", array_like("buf", strided=True), (ValueError,)),
        refused("buf_read_only", array_like("buf", readonly=True)),
        Case("buf_too_small", put_fn("buf", lambda x, a: x.new((3 * P - 2,))), (ValueError,)),
        Case("counts_wrong_length", put("counts", [2] * (P + 1)), (ValueError,)),
        Case("displs_wrong_length", put_fn("displs", lambda x, a: a["displs"][:-1]), (ValueError,)),
        Case("counts_negative", put("counts", [-1] + [2] * (P - 1)), (redist.InvalidCount,)),
        Case("displs_negative", put_fn("displs", lambda x, a: [-3] + a["displs"][1:]), (ValueError,)),
        refused("counts_wrong_type", put("counts", ["2"] * P)),
        Case("counts_beyond_int", put("counts", [2 ** 40] * P), (ValueError,)),
        Case("areas_overlap", put("displs", [0] * P), (redist.InvalidBuffer,), needs_two=True),
        Case("work_bytes_out_of_range", put("work_bytes", 0), (redist.InvalidArgument,)),
        agree("counts_not_symmetric", put_fn("counts", lambda x, a: [2 if j == RANK else 1 for j in range(P)]),
              (redist.InvalidCount,)),
        # work_bytes may differ here: it is each rank's own staging memory (the receiver tells the sender
        # its piece size), unlike alltoallv_inplace's, whose schedules depend on it.
    ],
}

ENTRIES = {cls.name: cls() for cls in CASES}


def params():
    out = []
    for cls, cases in CASES.items():
        entry = ENTRIES[cls.name]
        for case in cases:
            for mode in case.modes:
                if mode not in entry.modes:
                    continue
                marks = []
                if case.needs_two and P == 1:
                    marks.append(pytest.mark.skip(reason="needs two ranks"))
                elif mode == "one" and P == 1:
                    marks.append(pytest.mark.skip(reason="on one rank the one-rank mode is the all-ranks mode"))
                out.append(pytest.param(entry, case, mode, id=f"{entry.name}-{case.name}-{mode}", marks=marks))
    return out


PARAMS = params()
COUNTS = collections.Counter(p.values[0].name for p in PARAMS)
MODE_COUNTS = collections.Counter((p.values[0].name, p.values[2]) for p in PARAMS)


@pytest.fixture(scope="module", autouse=True)
def print_case_counts(request):
    if RANK == 0:
        capture = request.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            skipped = sum(1 for p in PARAMS if any(m.name == "skip" for m in p.marks))
            print(f"\ntest_hostile.py on {P} rank(s): {len(PARAMS)} cases ({skipped} skipped on this rank count): " +
                  ", ".join(f"{name} {n} (all {MODE_COUNTS[name, 'all']}, one {MODE_COUNTS[name, 'one']})"
                            for name, n in COUNTS.items()), flush=True)
    yield


# ---- running one case ------------------------------------------------------------------------------------------

def qualified(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


INVALID_ARGUMENT = qualified(redist.InvalidArgument)


def attempt(call, args):
    try:
        return call(args), None
    except Exception as e:  # noqa: BLE001 (the call's error, whatever it is)
        return None, e


def run_case(entry, case, mode, bad_ranks):
    """Runs the bad call and then the valid one on this rank, gathers what every rank saw of them (one
    allgather) and checks the valid call's result here. Returns (every rank's record, this rank's problems with
    the valid call); no plan, array or exception survives, so that everything the calls made dies here."""
    record = dict(raised=False, kind="", message="", right_type=True, touched=[], after_error="",
                  valid_error="")
    ctx = entry.setup()
    if case.base:
        case.base(ctx.args, ctx)
    args = dict(ctx.args)
    bad_here = RANK in bad_ranks
    if bad_here:
        case.spoil(args, ctx)
    ctx.take_snapshots()
    result, exc = attempt(entry.call, args)
    result = None
    if exc is not None:
        record.update(raised=True, kind=qualified(type(exc)), message=str(exc))
        if bad_here:
            record["right_type"] = isinstance(exc, case.expect)
        exc.__traceback__ = None
        exc = None
    if case.written_ok:
        record["touched"] = ctx.guards_changed()
        record["after_error"] = entry.verify(ctx, None) if not record["touched"] else ""
    else:
        record["touched"] = ctx.changed()
    del args

    # The same call with valid arguments; its result is checked (maybe collectively) once every rank succeeded.
    ctx.take_snapshots()
    result, exc = attempt(entry.call, ctx.args)
    if exc is not None:
        record["valid_error"] = f"{type(exc).__name__}: {exc}"
        exc.__traceback__ = None
        exc = None
    records = CHECK.allgather(record)
    problems = []
    if all(not r["valid_error"] for r in records):
        try:
            problem = entry.verify(ctx, result)
        except Exception as e:  # noqa: BLE001
            problem = f"checking its result raised {type(e).__name__}: {e}"
        if problem:
            problems.append(f"rank {RANK}: the call with valid arguments afterwards: {problem}")
    result = None
    guards = ctx.guards_changed()
    if guards:
        problems.append(f"rank {RANK}: the valid call wrote outside its views: {guards}")
    return records, problems


def judge(records, mode, bad_ranks):
    """What is wrong, computed alike on every rank from every rank's record."""
    def errors(ranks):
        return "; ".join(f"rank {r}: " + (f"{records[r]['kind']}: {records[r]['message'][:300]}"
                                           if records[r]["raised"] else "returned normally") for r in ranks)

    problems = []
    ranks = range(len(records))
    returned = [r for r in ranks if not records[r]["raised"]]
    if len(returned) == len(records):
        problems.append("no rank raised: every rank returned normally")
    elif returned:
        problems.append(f"rank(s) {returned} returned normally while others raised: {errors(ranks)}")
    else:
        kinds = {(rec["kind"], rec["message"]) for rec in records}
        if len(kinds) > 1:
            b = min(bad_ranks)
            documented = mode == "one" and all(
                (rec["kind"], rec["message"]) == (INVALID_ARGUMENT, f"rank {b}: {records[b]['message']}")
                for r, rec in enumerate(records) if r != b)
            if not documented:
                problems.append(f"the ranks raised different errors: {errors(ranks)}")
    for r in ranks:
        if not records[r]["right_type"]:
            problems.append(f"rank {r} (bad argument) raised an unexpected kind of error: {errors([r])}")
        if records[r]["touched"]:
            problems.append(f"rank {r}: the failed call wrote to {records[r]['touched']} (view or guards)")
        if records[r]["after_error"]:
            problems.append(f"rank {r}: after the failed call: {records[r]['after_error']}")
        if records[r]["valid_error"]:
            problems.append(f"rank {r}: the call with valid arguments afterwards: {records[r]['valid_error']}")
    return problems


@pytest.mark.parametrize("entry,case,mode", PARAMS)
def test_hostile(entry, case, mode, request):
    if mode == "all":
        bad_ranks = set(range(P))
    else:
        bad_ranks = {int(seeded_rng(zlib.crc32(request.node.nodeid.encode())).integers(P))}
    records, local_problems = run_case(entry, case, mode, bad_ranks)
    # The judgement is the same on every rank; a problem of the valid call seen on some ranks only fails the
    # test on every rank through conftest.py's agreement.
    problems = judge(records, mode, bad_ranks) + local_problems
    assert not problems, f"bad argument on rank(s) {sorted(bad_ranks)}:\n  " + "\n  ".join(problems)


def test_every_collective_entry_point_is_covered():
    """Each public collective of the package has cases in every mode it supports."""
    collectives = {"make_transform_plan", "make_batch_transform_plan", "relabel_targets", "transform",
                   "make_reshape_plan", "make_batch_reshape_plan", "relabel_reshape_targets", "reshape", "node_buffer",
                   "make_gemm_plan", "gemm", "neighbor_alltoallv_init", "alltoallv_inplace", "alltoall_inplace",
                   "alltoallv_inplace_symmetric"}
    assert all(callable(getattr(redist, name)) for name in collectives)
    methods = {"TransformPlan.execute", "TransformPlan.start", "TransformPlan.execute (reshape)",
               "TransformPlan.execute_batch", "TransformPlan.inverse", "GemmPlan.execute", "GemmPlan.start",
               "NeighborPlan.start/wait", "NodeBuffer.free"}
    overloads = {"make_reshape_plan (boxes)"}  # a second form of a collective above, with an entry of its own
    assert set(COUNTS) == collectives | methods | overloads, set(COUNTS) ^ (collectives | methods | overloads)
    for entry in ENTRIES.values():
        modes = {p.values[2] for p in PARAMS if p.values[0] is entry}
        assert modes == set(entry.modes), f"{entry.name}: modes {modes}"
