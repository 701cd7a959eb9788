# SPDX-License-Identifier: BSD-3-Clause
"""The seeds of the randomized tests, as in the C++ tests (tests/support/test_seed.hpp): one base seed per run,
REDIST_TEST_SEED (an unsigned integer) when set, else time-based, so that the random cases change from run to
run; rank 0's on every rank, so that all ranks draw the same cases. conftest.py prints it in pytest's header
and with every failed test."""
import os
import time

import numpy as np
from mpi4py import MPI


def _seed_from_environment():
    """(seed, None), or (None, why) when REDIST_TEST_SEED is not an unsigned 64-bit decimal integer."""
    text = os.environ.get("REDIST_TEST_SEED", "")
    if not text:
        return (time.time_ns() ^ int.from_bytes(os.urandom(8), "little")) % 2**64, None
    if not (text.isascii() and text.isdigit()) or int(text) >= 2**64:
        return None, f"REDIST_TEST_SEED={text} is not an unsigned 64-bit decimal integer"
    return int(text), None


# Decided on rank 0 and raised on every rank alike, so that no rank waits for the others.
BASE_SEED, _error = MPI.COMM_WORLD.bcast(_seed_from_environment() if MPI.COMM_WORLD.rank == 0 else None)
if _error:
    raise ValueError(_error)


def seeded_rng(salt):
    """The generator of one random stream: the base seed mixed with the caller's own constant, so that each
    test draws differently and one REDIST_TEST_SEED reproduces them all."""
    return np.random.default_rng([BASE_SEED, salt])


def seed_for(salt):
    """An integer seed (unsigned 64-bit) for the library's own random choices, mixed like seeded_rng's."""
    return int(np.random.SeedSequence([BASE_SEED, salt]).generate_state(1, np.uint64)[0])
