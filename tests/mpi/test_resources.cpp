// SPDX-License-Identifier: BSD-3-Clause
// Long runs in constant resources: 100 000 calls of each ScaLAPACK routine (redist's twins, with the plan
// cache hitting) and 10 000 create/free cycles of each plan kind. After a warm-up, the resident memory may
// not grow by more than a small allowance, and the open file descriptors (shared-memory segments, among
// them) and live MPI communicators must come back to where they were.
// redist-test-ranks: 2
// redist-test-labels: large
// redist-test-needs: scalapack
#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "scalapack_cases.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

std::int64_t resident_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  std::int64_t kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::atoll(line + 6);
  std::fclose(f);
  return kib;
}

int open_descriptors() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

// Communicators alive: MPICH hands out context ids from a fixed pool; a leak shows as a duplicate taking
// a context id that keeps rising. A probe: dup and free, and read the handle value (an int in MPICH).
// Portable fallback when MPI_Comm is not an integer: the count is not checked.
long comm_probe() {
  MPI_Comm probe;
  MPI_Comm_dup(MPI_COMM_SELF, &probe);
  long value = -1;
  if constexpr (sizeof(MPI_Comm) == sizeof(int)) {
    int handle = 0;
    std::memcpy(&handle, &probe, sizeof handle);
    value = handle;
  }
  MPI_Comm_free(&probe);
  return value;
}

// Runs `step` `warmup` times, measures, runs it `count` times more, measures again.
void expect_constant(const std::string& what, int warmup, int count, const std::function<void()>& step) {
  for (int i = 0; i < warmup; ++i) step();
  const std::int64_t rss_before = resident_kib();
  const int fds_before = open_descriptors();
  const long comm_before = comm_probe();
  for (int i = 0; i < count; ++i) step();
  const std::int64_t grown = resident_kib() - rss_before;
  // A few MiB of allocator and MPI-internal slack; a leak of even 64 bytes per call would exceed it.
  EXPECT_LT(grown, 4096) << what << ": resident memory grew by " << grown << " KiB over " << count << " calls";
  EXPECT_EQ(open_descriptors(), fds_before) << what << ": open file descriptors changed";
  EXPECT_EQ(comm_probe(), comm_before) << what << ": a communicator outlived its plan";
  if (world_rank() == 0)
    std::printf("[resources] %s: %d calls, resident memory %+lld KiB\n", what.c_str(), count,
                static_cast<long long>(grown));
}

}  // namespace

TEST(Resources, ScalapackRoutinesHundredThousandCalls) {
  const int p = world_size();
  std::vector<int> ranks(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) ranks[static_cast<std::size_t>(r)] = r;
  blacs_context grid(1, p, ranks);
  matrix_case c;
  c.M = c.N = 6;
  c.mb = c.nb = c.imb = c.inb = 2;
  const std::vector<int> desc = make_descriptor(c, grid);
  const std::vector<double> a = make_local<double>(c, grid, desc, 0);
  std::vector<double> b = make_local<double>(c, grid, desc, 1), cc = b;
  const int one = 1, m = 6, n = 6, k = 6;
  const double alpha = 1.0, beta = 0.0;
  const char uplo = 'U', diag = 'N', trans = 'N';
  constexpr int calls = 100000;
  expect_constant("p?gemr2d", 1000, calls, [&] {
    redist_Cpdgemr2d(m, n, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  });
  expect_constant("p?trmr2d", 1000, calls, [&] {
    redist_Cpdtrmr2d(&uplo, &diag, m, n, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  });
  expect_constant("p?tran", 1000, calls, [&] {
    redist_pdtran(&m, &n, &alpha, a.data(), &one, &one, desc.data(), &beta, b.data(), &one, &one, desc.data());
  });
  expect_constant("p?gemm", 1000, calls / 10, [&] {
    redist_pdgemm(&trans, &trans, &m, &n, &k, &alpha, a.data(), &one, &one, desc.data(), b.data(), &one, &one,
                  desc.data(), &beta, cc.data(), &one, &one, desc.data());
  });
}

TEST(Resources, PlanCreateFreeTenThousandCycles) {
  const int me = world_rank(), p = world_size();
  block_cyclic_params bp;
  bp.m = bp.n = 8;
  bp.mb = bp.nb = 2;
  bp.proc_rows = p;
  const grid_layout a = block_cyclic(bp, me);
  bp.proc_rows = 1;
  bp.proc_cols = p;
  const grid_layout b = block_cyclic(bp, me);
  std::vector<double> A(static_cast<std::size_t>(a.local_elements()), 0.0),
      B(static_cast<std::size_t>(b.local_elements()), 1.0);
  constexpr int cycles = 10000;
  expect_constant("transform plan", 200, cycles, [&] {
    const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64);
    plan.execute(A.data(), B.data());
  });
  transform_options shared;
  shared.strategy = exchange_strategy::shared_memory;
  expect_constant("transform plan, shared memory", 200, cycles, [&] {
    const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64, shared);
    plan.execute(A.data(), B.data());
  });
  expect_constant("gemm plan", 100, cycles / 10, [&] {
    make_gemm_plan(MPI_COMM_WORLD, gemm_description{a, b, a, op::identity, op::identity, element_type::f64});
  });
  std::vector<int> peers(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) peers[static_cast<std::size_t>(r)] = r;
  std::vector<int> counts(static_cast<std::size_t>(p), 1), displs(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) displs[static_cast<std::size_t>(r)] = r;
  std::vector<double> send(static_cast<std::size_t>(p), 1.0), recv(static_cast<std::size_t>(p), 0.0);
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate}) {
    exchange::exchange_options options;
    options.strategy = strategy;
    options.region_size = 1;
    expect_constant(std::string("neighbor plan ") + exchange::to_string(strategy), 200, cycles, [&] {
      exchange::neighbor_plan plan = exchange::neighbor_alltoallv_init(
          peers, peers,
          exchange::neighbor_buffers{send.data(), counts.data(), displs.data(), MPI_DOUBLE, recv.data(), counts.data(),
                                     displs.data(), MPI_DOUBLE},
          MPI_COMM_WORLD, options);
      plan.start();
      plan.wait();
    });
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "standard");
  expect_constant("C neighbor request", 200, cycles, [&] {
    redist_request request = REDIST_REQUEST_NULL;
    redist_neighbor_alltoallv_init_lists(p, peers.data(), p, peers.data(), send.data(), counts.data(), displs.data(),
                                         MPI_DOUBLE, recv.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                         MPI_COMM_WORLD, info, &request);
    redist_start(&request);
    redist_wait(&request);
    redist_request_free(&request);
  });
  MPI_Info_free(&info);
  std::vector<double> buf(static_cast<std::size_t>(p), 1.0);
  expect_constant("in-place alltoall", 200, cycles,
                  [&] { exchange::alltoall_inplace(buf.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD); });
  expect_constant("node_buffer", 200, cycles, [&] { node_buffer nb(MPI_COMM_WORLD, 4096); });
}
