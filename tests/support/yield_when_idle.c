// SPDX-License-Identifier: BSD-3-Clause
/* The tests run more ranks than this machine has cores (up to 8 on 2). MPICH's ch4:ucx device polls UCX without
 * ever giving up the core, so in a blocking MPI call (a communicator's creation, a collective) a rank spins
 * through its time slice while the rank it waits for is not running: at 3 ranks on 2 cores the fault-injection
 * test took 220 s instead of 2. Linked into the test programs, this definition comes before libucp's: it polls
 * as before and yields the core when the poll found nothing, which is what the oversubscribed ranks need and a
 * no-op where they are not. It changes no result; with another MPI (no UCX underneath) nothing calls it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

typedef unsigned (*redist_test_ucp_progress)(void*);

/* libucp's own function: the next definition after this one, or, where libucp came in through a dlopen with
 * RTLD_LOCAL (Python loading mpi4py), from libucp itself, which is loaded when anything calls this. */
static redist_test_ucp_progress ucp_progress(void) {
  redist_test_ucp_progress next = (redist_test_ucp_progress)dlsym(RTLD_NEXT, "ucp_worker_progress");
  if (next == 0) {
    void* ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (ucp != 0) next = (redist_test_ucp_progress)dlsym(ucp, "ucp_worker_progress");
  }
  if (next == 0) { /* never poll nothing in silence: the MPI would wait forever */
    static const char text[] = "yield_when_idle: ucp_worker_progress called, but libucp's was not found\n";
    if (write(2, text, sizeof text - 1) < 0) _exit(3);
    abort();
  }
  return next;
}

unsigned ucp_worker_progress(void* worker) {
  static redist_test_ucp_progress next = 0;
  if (next == 0) next = ucp_progress();
  const unsigned events = next(worker);
  if (events == 0) sched_yield();
  return events;
}
