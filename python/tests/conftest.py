# SPDX-License-Identifier: BSD-3-Clause
"""pytest under mpiexec (mpiexec -n 4 python -m pytest python/tests): every rank runs every test, and each
test phase's outcome is agreed over MPI.COMM_WORLD, so a test that fails on any rank fails on all of them
(the others report which ranks failed) and the run's exit status is the worst over the ranks. Ranks that
would get out of step (one rank reaching a different test phase than the others) abort the run rather
than hang. The base seed of the randomized tests (seeds.py) is printed in the header and with every failed
test."""
import pytest
from mpi4py import MPI

from seeds import BASE_SEED


def pytest_report_header(config):
    return f"REDIST_TEST_SEED={BASE_SEED}"


# Also at the end: -q (scripts/run.sh) leaves the header out.
def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"REDIST_TEST_SEED={BASE_SEED}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    comm = MPI.COMM_WORLD
    if comm.size == 1:
        return
    gathered = comm.allgather((item.nodeid, report.when, report.failed))
    if any((nodeid, when) != (item.nodeid, report.when) for nodeid, when, _ in gathered):
        steps = sorted({f"{nodeid} [{when}]" for nodeid, when, _ in gathered})
        print(f"ranks out of step at {steps}; aborting", flush=True)
        comm.Abort(3)
    failed = [rank for rank, (_, _, f) in enumerate(gathered) if f]
    if failed and not report.failed:
        report.outcome = "failed"
        report.longrepr = f"failed on rank(s) {failed} (this is rank {comm.rank})"


# After the agreement above: shown with each failure's details.
def pytest_runtest_logreport(report):
    if report.failed:
        report.sections.append(("seed", f"reproduce with REDIST_TEST_SEED={BASE_SEED}"))


def pytest_sessionfinish(session, exitstatus):
    comm = MPI.COMM_WORLD
    if comm.size > 1:
        session.exitstatus = max(comm.allgather(int(exitstatus)))
