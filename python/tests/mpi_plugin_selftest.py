# SPDX-License-Identifier: BSD-3-Clause
"""Run explicitly (mpiexec -n 2 python -m pytest python/tests/mpi_plugin_selftest.py): the test fails on the
last rank only, and the conftest's agreement must make the whole run fail on every rank."""
from mpi4py import MPI


def test_fails_on_the_last_rank_only():
    assert MPI.COMM_WORLD.rank != MPI.COMM_WORLD.size - 1
