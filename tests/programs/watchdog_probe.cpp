// SPDX-License-Identifier: BSD-3-Clause
// The watchdog of redist's waits (src/mpi/watchdog.hpp), one case per run; tests/tools/check_watchdog.sh runs it
// under the environment of each case and checks what it prints and how it ends.
// usage: watchdog_probe late_rank | late_exchange | plan_timeout | other_communicator | skipped_call | set_timeout |
//        skipped_execute | skipped_alltoallv | skipped_one_sided
//   late_rank     every rank makes the same redist_pdgemm (all-ones operands); the last rank makes it 3 s late:
//                 the others wait in the argument agreement. Exit 0 when every element of C is K.
//   late_exchange every rank makes a neighbor exchange plan on a ring (standard strategy: messages after the
//                 plan's agreement) and runs it; the last rank starts it 3 s late: the others wait for its message.
//                 Exit 0 when every rank received its left neighbour's rank.
//   plan_timeout  late_exchange with the plan's own timeout (exchange_options::timeout_seconds = 1).
//   other_communicator  the C exchange's init (redist_neighbor_alltoallv_init) on a ring graph, rank 0 passing
//                 MPI_COMM_WORLD instead: every rank waits in an agreement the others never join, until the
//                 watchdog ends the job (abort).
//   skipped_call  the last rank passes descriptors of context -1 (as a process outside the grid does), so it
//                 takes no part and sleeps; the others wait until the watchdog ends the job (abort).
//   set_timeout   skipped_call, with redist::set_timeout(1, abort) instead of the environment.
//   skipped_execute  every rank makes a transform plan (24 x 24, 4 x 4 blocks on a column of processes to 3 x 3
//                 blocks on a row); the last rank does not execute it and sleeps: the others wait in the
//                 execution's agreement, on the plan's private duplicate, where the watchdog's roll call names
//                 the last rank, until the watchdog ends the job (abort).
//   skipped_alltoallv  skipped_execute with the alltoallv strategy (MPI's blocking MPI_Alltoallv) and
//                 check_consistency off (no execution agreement): the others wait in the watched barrier before it.
//   skipped_one_sided  a multiply plan (gemm_communication::one_sided, the transforms' check_consistency off) that
//                 the last rank does not execute: the others wait in the watched barrier of their grid lines that
//                 opens an execution's rounds.
// Exit 2 when the call completed where it cannot (the skipping cases) or C is wrong; 3 for a usage error.
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "redist/exchange/neighbor.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/layout/builders.hpp"
#include "redist/redist.h"
#include "redist/timeout.hpp"
#include "redist/transform/plan.hpp"
#include "scalapack_cases.hpp"

namespace {
// The last rank takes no part in `call` and goes on elsewhere (sleeps: the watchdog's abort ends it); the others make
// it, which cannot complete. Returns the exit status: 2 where it completed.
int skipped_by_last_rank(int rank, int size, const char* what, const std::function<void()>& call) {
  if (rank == size - 1) {
    sleep(100);
    return 0;
  }
  call();
  std::fprintf(stderr, "rank %d: %s completed although rank %d took no part\n", rank, what, size - 1);
  return 2;
}

// A 24 x 24 matrix in `block` x `block` blocks on a column (over_rows) or a row of all processes.
redist::grid_layout line_layout(int rank, int size, bool over_rows, std::int64_t block) {
  redist::block_cyclic_params p{24, 24, block, block};
  (over_rows ? p.proc_rows : p.proc_cols) = size;
  return redist::block_cyclic(p, rank);
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  const bool late = std::strcmp(mode, "late_rank") == 0, skipped = std::strcmp(mode, "skipped_call") == 0,
             set = std::strcmp(mode, "set_timeout") == 0, plan_timeout = std::strcmp(mode, "plan_timeout") == 0,
             exchange = plan_timeout || std::strcmp(mode, "late_exchange") == 0,
             other_comm = std::strcmp(mode, "other_communicator") == 0,
             skipped_alltoallv = std::strcmp(mode, "skipped_alltoallv") == 0,
             skipped_execute = skipped_alltoallv || std::strcmp(mode, "skipped_execute") == 0,
             skipped_one_sided = std::strcmp(mode, "skipped_one_sided") == 0;
  if (!late && !skipped && !set && !exchange && !other_comm && !skipped_execute && !skipped_one_sided) {
    std::fprintf(stderr,
                 "usage: watchdog_probe late_rank | late_exchange | plan_timeout | other_communicator | skipped_call | "
                 "set_timeout | skipped_execute | skipped_alltoallv | skipped_one_sided\n");
    MPI_Finalize();
    return 3;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool last = rank == size - 1;
  if (other_comm) {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Comm ring = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                   0, &ring);
    double sent = rank, received = -1;
    const int one = 1, zero = 0;
    redist_request request = REDIST_REQUEST_NULL;
    const int code = redist_neighbor_alltoallv_init(&sent, &one, &zero, MPI_DOUBLE, &received, &one, &zero, MPI_DOUBLE,
                                                    rank == 0 ? MPI_COMM_WORLD : ring, MPI_INFO_NULL, &request);
    std::fprintf(stderr,
                 "rank %d: redist_neighbor_alltoallv_init returned %d although the ranks' communicators differ\n", rank,
                 code);
    MPI_Finalize();
    return 2;
  }
  if (skipped_execute) {
    int status = 0;
    {
      const redist::grid_layout target = line_layout(rank, size, true, 4), source = line_layout(rank, size, false, 3);
      redist::transform_options options;
      if (skipped_alltoallv) {
        options.strategy = redist::exchange_strategy::alltoallv;
        options.check_consistency = false;
      }
      const redist::transform_plan plan = redist::make_transform_plan(
          MPI_COMM_WORLD, target, source, redist::op::identity, redist::element_type::f64, options);
      std::vector<double> a(static_cast<size_t>(target.local_elements())),
          b(static_cast<size_t>(source.local_elements()), 1.0);
      status = skipped_by_last_rank(rank, size, "the execution", [&] { plan.execute(a.data(), b.data()); });
    }
    MPI_Finalize();
    return status;
  }
  if (skipped_one_sided) {
    int status = 0;
    {
      // C (24 x 24) = A B, A and C on a column of processes, B on a row: the schedule's grid has lines to gather along.
      const redist::grid_layout a = line_layout(rank, size, true, 4), b = line_layout(rank, size, false, 4);
      redist::gemm_options options;
      options.communication = redist::gemm_communication::one_sided;
      options.transform.check_consistency = false;
      const redist::gemm_plan plan = redist::make_gemm_plan(MPI_COMM_WORLD, redist::gemm_description{a, b, a}, options);
      std::vector<double> as(static_cast<size_t>(a.local_elements()), 1.0),
          bs(static_cast<size_t>(b.local_elements()), 1.0), cs(as.size(), 0.0);
      status = skipped_by_last_rank(rank, size, "the multiply",
                                    [&] { plan.execute(cs.data(), as.data(), bs.data(), 1.0, 0.0); });
    }
    MPI_Finalize();
    return status;
  }
  if (exchange) {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Comm ring = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                   0, &ring);
    int status = 0;
    {
      double sent = rank, received = -1;
      const int one = 1, zero = 0;
      redist::exchange::neighbor_buffers buffers{&sent, &one, &zero, MPI_DOUBLE, &received, &one, &zero, MPI_DOUBLE};
      redist::exchange::exchange_options options;
      options.strategy = redist::exchange::neighbor_strategy::standard;
      if (plan_timeout) options.timeout_seconds = 1;
      redist::exchange::neighbor_plan plan = redist::exchange::neighbor_alltoallv_init(buffers, ring, options);
      if (last) sleep(3);
      plan.start();
      plan.wait();
      if (received != left) {
        std::fprintf(stderr, "rank %d: received %g, expected %d\n", rank, received, left);
        status = 2;
      }
    }
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return status;
  }
  if (set) redist::set_timeout(1, redist::timeout_action::abort);
  int status = 0;
  {
    std::vector<int> everyone(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) everyone[static_cast<size_t>(r)] = r;
    redist::testing::blacs_context grid(size, 1, everyone);
    const redist::testing::matrix_case square{1, 24, 24, 4, 4, 4, 4, 0, 0, 0};
    std::vector<int> desc = redist::testing::make_descriptor(square, grid);
    const auto ones =
        redist::testing::make_local_from<double>(square, grid, desc, [](std::int64_t, std::int64_t) { return 1.0; });
    auto c =
        redist::testing::make_local_from<double>(square, grid, desc, [](std::int64_t, std::int64_t) { return 0.0; });
    if ((skipped || set) && last) desc[1] = -1;  // no part in the call: it returns at once
    if (late && last) sleep(3);
    const int n = 24, one = 1;
    const double alpha = 1.0, beta = 0.0;
    redist_pdgemm("N", "N", &n, &n, &n, &alpha, ones.data(), &one, &one, desc.data(), ones.data(), &one, &one,
                  desc.data(), &beta, c.data(), &one, &one, desc.data());
    if (skipped || set) {
      // The skipping rank goes on elsewhere (here: sleeps) rather than finalize, which could fail the others' wait
      // before the watchdog speaks; the watchdog's abort ends it.
      if (last) sleep(100);
      if (!last) {
        std::fprintf(stderr, "rank %d: the call completed although rank %d took no part\n", rank, size - 1);
        status = 2;
      }
    } else {
      const std::int64_t rows = redist::scalapack::numroc(n, 4, 4, grid.my_row, 0, grid.rows);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < rows; ++i)
          if (c[static_cast<size_t>(i + j * desc[8])] != n) status = 2;
      if (status != 0) std::fprintf(stderr, "rank %d: C is not all %d\n", rank, n);
    }
  }
  MPI_Finalize();
  return status;
}
