// SPDX-License-Identifier: BSD-3-Clause
// Every wait of a plan's set-up and execution yields the core and is watched (issue 58): no MPI call whose wait
// spins inside MPI (a blocking collective, a blocking send, receive or wait, a communicator split or creation) once a
// communicator's cached parts exist. With more processes than cores such a wait lasts a scheduler tick per round
// (a plain MPI_Barrier took 28 ms with 7 processes on 2 cores, a yielding one 0.03 ms), and the watchdog cannot see
// it. Counted through MPI's profiling interface around the library's calls only; a window's creation and freeing,
// which have no nonblocking form, are not counted here (fences are: the one-sided multiply completes its rounds
// with flushes and watched barriers).
// redist-test-ranks: 2 3 4
// redist-test-needs: scalapack
// redist-test-labels: fast
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
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
bool counting = false;
std::map<std::string, int> spinning;  // calls made while counting, by MPI function
void saw(const char* name) {
  if (counting) ++spinning[name];
}
}  // namespace

extern "C" {
int MPI_Barrier(MPI_Comm c) {
  saw("MPI_Barrier");
  return PMPI_Barrier(c);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  saw("MPI_Bcast");
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  saw("MPI_Allreduce");
  return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  saw("MPI_Allgather");
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Allgatherv(const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* d, MPI_Datatype rt,
                   MPI_Comm c) {
  saw("MPI_Allgatherv");
  return PMPI_Allgatherv(s, sc, st, r, rc, d, rt, c);
}
int MPI_Alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  saw("MPI_Alltoall");
  return PMPI_Alltoall(s, sc, st, r, rc, rt, c);
}
int MPI_Alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r, const int* rc, const int* rd,
                  MPI_Datatype rt, MPI_Comm c) {
  saw("MPI_Alltoallv");
  return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
}
int MPI_Alltoallw(const void* s, const int* sc, const int* sd, const MPI_Datatype* st, void* r, const int* rc,
                  const int* rd, const MPI_Datatype* rt, MPI_Comm c) {
  saw("MPI_Alltoallw");
  return PMPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, c);
}
#if MPI_VERSION >= 4
int MPI_Alltoallv_c(const void* s, const MPI_Count* sc, const MPI_Aint* sd, MPI_Datatype st, void* r,
                    const MPI_Count* rc, const MPI_Aint* rd, MPI_Datatype rt, MPI_Comm c) {
  saw("MPI_Alltoallv_c");
  return PMPI_Alltoallv_c(s, sc, sd, st, r, rc, rd, rt, c);
}
#endif
int MPI_Send(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
  saw("MPI_Send");
  return PMPI_Send(b, n, t, d, tag, c);
}
int MPI_Ssend(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
  saw("MPI_Ssend");
  return PMPI_Ssend(b, n, t, d, tag, c);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status* st) {
  saw("MPI_Recv");
  return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Probe(int s, int tag, MPI_Comm c, MPI_Status* st) {
  saw("MPI_Probe");
  return PMPI_Probe(s, tag, c, st);
}
int MPI_Wait(MPI_Request* r, MPI_Status* s) {
  saw("MPI_Wait");
  return PMPI_Wait(r, s);
}
int MPI_Waitall(int n, MPI_Request* r, MPI_Status* s) {
  saw("MPI_Waitall");
  return PMPI_Waitall(n, r, s);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  saw("MPI_Comm_dup");
  return PMPI_Comm_dup(c, out);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  saw("MPI_Comm_split");
  return PMPI_Comm_split(c, color, key, out);
}
int MPI_Comm_create_group(MPI_Comm c, MPI_Group group, int tag, MPI_Comm* out) {
  saw("MPI_Comm_create_group");
  return PMPI_Comm_create_group(c, group, tag, out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out) {
  saw("MPI_Comm_split_type");
  return PMPI_Comm_split_type(c, type, key, info, out);
}
int MPI_Win_fence(int assertions, MPI_Win w) {
  saw("MPI_Win_fence");
  return PMPI_Win_fence(assertions, w);
}
}

namespace {

// Runs `step` once to make what a communicator caches (its node communicator, private duplicates, grid lines),
// then again counting: the second run must make no spinning call.
void expect_only_yielding_waits(const std::string& what, const std::function<void()>& step) {
  step();
  spinning.clear();
  counting = true;
  step();
  counting = false;
  std::string seen;
  for (const auto& [name, calls] : spinning) seen += " " + name + " x" + std::to_string(calls);
  EXPECT_TRUE(seen.empty()) << what << " on rank " << world_rank() << " waited inside MPI in:" << seen;
}

std::vector<int> all_ranks_list() {
  std::vector<int> ranks(static_cast<std::size_t>(world_size()));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

}  // namespace

TEST(YieldingWaits, TransformPlanMadeAndExecuted) {
  const int me = world_rank(), p = world_size();
  block_cyclic_params bp;
  bp.m = 12;
  bp.n = 10;
  bp.mb = bp.nb = 2;
  bp.proc_rows = p;
  const grid_layout a = block_cyclic(bp, me);
  bp.mb = bp.nb = 3;
  bp.proc_rows = 1;
  bp.proc_cols = p;
  const grid_layout b = block_cyclic(bp, me);
  std::vector<double> A(static_cast<std::size_t>(a.local_elements()), 0.0),
      B(static_cast<std::size_t>(b.local_elements()), 1.0);
  expect_only_yielding_waits("a transform plan", [&] {
    const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64);
    plan.execute(A.data(), B.data());
  });
}

TEST(YieldingWaits, GemmPlanMadeAndExecuted) {
  const int me = world_rank(), p = world_size();
  block_cyclic_params bp;
  bp.m = bp.n = 16;
  bp.mb = bp.nb = 4;
  bp.proc_rows = p;
  const grid_layout a = block_cyclic(bp, me);
  bp.proc_rows = 1;
  bp.proc_cols = p;
  const grid_layout b = block_cyclic(bp, me);
  std::vector<double> A(static_cast<std::size_t>(a.local_elements()), 1.0),
      B(static_cast<std::size_t>(b.local_elements()), 2.0), C(static_cast<std::size_t>(a.local_elements()), 0.0);
  // The grid lines are made once (cached per placement); the panels' windows are made, not counted.
  for (const gemm_communication way :
       {gemm_communication::automatic, gemm_communication::two_sided, gemm_communication::one_sided}) {
    gemm_options options;
    options.communication = way;
    std::fill(C.begin(), C.end(), 0.0);
    expect_only_yielding_waits(std::string("a gemm plan, ") + to_string(way), [&] {
      const gemm_plan plan = make_gemm_plan(MPI_COMM_WORLD, gemm_description{a, b, a}, options);
      // Twice: the second execution's first round overwrites panels the first one read.
      plan.execute(C.data(), A.data(), B.data(), 1.0, 0.0);
      plan.execute(C.data(), A.data(), B.data(), 1.0, 0.0);
    });
    for (double x : C) EXPECT_EQ(x, 2.0 * 16) << to_string(way);
  }
}

TEST(YieldingWaits, NeighborPlansOfEveryStrategy) {
  const int me = world_rank(), p = world_size();
  // A ring both ways, two elements per edge, each element's id the sender's rank and its place.
  const std::vector<int> destinations{(me + 1) % p, (me + p - 1) % p};
  const std::vector<int> counts{2, 2}, displs{0, 2};
  std::vector<double> send(4, me), recv(4, -1);
  std::vector<std::int64_t> send_ids(4), recv_ids(4);
  for (int k = 0; k < 4; ++k) send_ids[k] = me * 4 + k;
  // Edge 0 receives from the previous rank, whose edge 0 (displacements 0, 1) sends here; edge 1 from the next,
  // whose edge 1 (displacements 2, 3) does (with 2 ranks both are the other rank's, in that order).
  const int next = (me + 1) % p, previous = (me + p - 1) % p;
  recv_ids = {previous * 4 + 0, previous * 4 + 1, next * 4 + 2, next * 4 + 3};
  const std::vector<int> sources{previous, next};
  const exchange::neighbor_buffers plain{send.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                         recv.data(), counts.data(), displs.data(), MPI_DOUBLE};
  cost_model model;  // given, so that auto measures nothing (a calibration times blocking round trips)
  model.source = "test";
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                        exchange::neighbor_strategy::dedup, exchange::neighbor_strategy::automatic}) {
    exchange::exchange_options options;
    options.strategy = strategy;
    options.region_size = 2;
    options.model = model;
    expect_only_yielding_waits(std::string("a neighbor plan, ") + exchange::to_string(strategy), [&] {
      exchange::neighbor_plan plan = exchange::neighbor_alltoallv_init(
          sources, destinations, exchange::with_global_ids(plain, send_ids, recv_ids), MPI_COMM_WORLD, options);
      plan.start();
      plan.wait();
    });
    EXPECT_EQ(recv[0], previous);
    EXPECT_EQ(recv[3], next);
  }
}

TEST(YieldingWaits, InPlaceExchanges) {
  const int p = world_size();
  std::vector<double> buf(static_cast<std::size_t>(4 * p), 1.0);
  expect_only_yielding_waits("an in-place alltoall",
                             [&] { exchange::alltoall_inplace(buf.data(), 4, MPI_DOUBLE, MPI_COMM_WORLD); });
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) counts[static_cast<std::size_t>(r)] = 1 + (r + world_rank()) % 3;
  std::vector<double> area(static_cast<std::size_t>(4 * p), 2.0);
  for (auto algorithm : {exchange::inplace_algorithm::chunked, exchange::inplace_algorithm::pairwise,
                         exchange::inplace_algorithm::bitonic}) {
    exchange::inplace_options options;
    options.algorithm = algorithm;
    expect_only_yielding_waits(std::string("an in-place alltoallv, ") + exchange::to_string(algorithm), [&] {
      exchange::alltoallv_inplace(area.data(), static_cast<std::int64_t>(area.size()), counts.data(), counts.data(),
                                  MPI_DOUBLE, MPI_COMM_WORLD, options);
    });
  }
}

TEST(YieldingWaits, NodeBuffers) {
  // The node communicator is split once per communicator; each buffer after that duplicates it.
  expect_only_yielding_waits("a node buffer", [] { node_buffer buffer(MPI_COMM_WORLD, 4096); });
}

TEST(YieldingWaits, DropInRedistributions) {
  const int p = world_size();
  blacs_context rows(p, 1, all_ranks_list());
  std::vector<int> reversed = all_ranks_list();
  std::reverse(reversed.begin(), reversed.end());
  blacs_context cols(1, p, reversed);
  matrix_case ca;
  ca.M = 13;
  ca.N = 11;
  ca.mb = ca.nb = ca.imb = ca.inb = 2;
  const std::vector<int> desc_a = make_descriptor(ca, rows);
  const std::vector<double> a = make_local<double>(ca, rows, desc_a, 0);
  matrix_case cb = ca;
  cb.mb = cb.nb = cb.imb = cb.inb = 3;
  const std::vector<int> desc_b = make_descriptor(cb, cols);
  std::vector<double> b = make_local<double>(cb, cols, desc_b, 1);
  expect_only_yielding_waits("p?gemr2d", [&] {
    redist_Cpdgemr2d(13, 11, a.data(), 1, 1, desc_a.data(), b.data(), 1, 1, desc_b.data(), rows.context);
  });
  EXPECT_EQ(b, make_local<double>(cb, cols, desc_b, 0)) << "p?gemr2d: B is not A";
  // C = A^T on A's grid (the redist_ twin runs redist's transpose, never ScaLAPACK's).
  matrix_case cc = ca;
  cc.M = 11;
  cc.N = 13;
  const std::vector<int> desc_c = make_descriptor(cc, rows);
  std::vector<double> c = make_local<double>(cc, rows, desc_c, 2);
  const int m = 11, n = 13, one = 1;
  const double alpha = 1.0, beta = 0.0;
  expect_only_yielding_waits("p?tran", [&] {
    redist_pdtran(&m, &n, &alpha, a.data(), &one, &one, desc_a.data(), &beta, c.data(), &one, &one, desc_c.data());
  });
  EXPECT_EQ(c, make_local_from<double>(cc, rows, desc_c,
                                       [](std::int64_t i, std::int64_t j) { return value_of<double>(j, i, 0); }))
      << "p?tran: C is not A^T";
}
