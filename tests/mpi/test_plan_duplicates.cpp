// SPDX-License-Identifier: BSD-3-Clause
// A transform, GEMM, neighbor-exchange or torus-routed plan keeps a private duplicate of its communicator for its
// life; a plan made after another was dropped on every rank takes the duplicate that one gave back (no new
// MPI_Comm_dup), plans alive together never share one, and a duplicate is reused only once every rank has given it
// back. Results stay exact throughout.
// redist-test-ranks: 1 2 3 4
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.hpp"

using namespace redist;

// Duplicates made, counted through MPI's profiling interface (the library's calls bind to these definitions).
namespace {
int duplicates_made = 0;
}
extern "C" int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* dup) {
  ++duplicates_made;
  return PMPI_Comm_dup(comm, dup);
}
#if MPI_VERSION >= 3
extern "C" int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* dup, MPI_Request* request) {
  ++duplicates_made;
  return PMPI_Comm_idup(comm, dup, request);
}
#endif

namespace {

// f(global row, global column, local offset) for every element of l on this rank (regular storage).
template <class F>
void for_each_local(const grid_layout& l, F&& f) {
  for (const auto pos : l.my_positions())
    for (std::int64_t bi = 0; bi < l.block_rows(); ++bi)
      for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
        if (l.row_proc()[bi] != pos.row || l.col_proc()[bj] != pos.col) continue;
        for (std::int64_t j = l.col_splits()[bj]; j < l.col_splits()[bj + 1]; ++j)
          for (std::int64_t i = l.row_splits()[bi]; i < l.row_splits()[bi + 1]; ++i)
            f(i, j,
              l.local_row_start()[bi] + i - l.row_splits()[bi] +
                  (l.local_col_start()[bj] + j - l.col_splits()[bj]) * l.local_ld());
      }
}

struct transpose_case {
  grid_layout a, b;
  std::vector<double> bv, av;
  transpose_case(MPI_Comm comm, std::int64_t n) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    block_cyclic_params pb{n, n, 3, 3};
    pb.proc_rows = size;
    block_cyclic_params pa{n, n, 5, 5};
    pa.proc_cols = size;
    b = block_cyclic(pb, rank);
    a = block_cyclic(pa, rank);
    bv.resize(static_cast<size_t>(b.local_elements()));
    // B(i, j) = i + n j: its transpose is known everywhere.
    for_each_local(b, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      bv[static_cast<size_t>(at)] = static_cast<double>(i + n * j);
    });
    av.assign(static_cast<size_t>(a.local_elements()), -1.0);
  }
  transform_plan plan(MPI_Comm comm) const { return make_transform_plan(comm, a, b, op::transpose, element_type::f64); }
  // Executes and checks A = B^T.
  void run(const transform_plan& p) {
    p.execute(av.data(), bv.data());
    const std::int64_t n = a.rows();
    for_each_local(a, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      ASSERT_EQ(av[static_cast<size_t>(at)], static_cast<double>(j + n * i)) << "A(" << i << ", " << j << ")";
    });
  }
};

// Marks a plan's communicator, to recognise it later: a freed communicator's handle may come back as a new one's,
// but a new communicator has no attributes.
int mark_keyval() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, nullptr);
    return k;
  }();
  return keyval;
}
int marker = 0;
void mark(MPI_Comm c) { MPI_Comm_set_attr(c, mark_keyval(), &marker); }
bool marked(MPI_Comm c) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(c, mark_keyval(), &value, &found);
  return found != 0 && value == &marker;
}

TEST(PlanDuplicates, DroppedPlansGiveTheirDuplicateToTheNext) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);  // a pool of its own
  transpose_case t(comm, 23);
  {
    const transform_plan p = t.plan(comm);
    mark(p.communicator());
    t.run(p);
  }
  const transform_plan again = t.plan(comm);
  EXPECT_TRUE(marked(again.communicator())) << "the second plan made a new duplicate";
  t.run(again);
  // Alive together: another duplicate.
  const transform_plan other = t.plan(comm);
  EXPECT_FALSE(marked(other.communicator()));
  t.run(other);
  t.run(again);
  MPI_Comm_free(&comm);  // the pool goes with it; plans alive keep their duplicates
  t.run(other);
}

TEST(PlanDuplicates, ReusedOnlyWhereEveryRankGaveItBack) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int rank = redist::testing::world_rank(), size = redist::testing::world_size();
  transpose_case t(comm, 17);
  auto held = std::make_unique<transform_plan>(t.plan(comm));
  mark(held->communicator());
  if (rank == 0) held.reset();  // rank 0 alone gives it back
  const transform_plan next = t.plan(comm);
  // Every rank but rank 0 still holds it, so nobody may take it (with one rank, everybody gave it back).
  EXPECT_EQ(marked(next.communicator()), size == 1);
  t.run(next);
  held.reset();  // (not executed: rank 0 no longer has it)
  const transform_plan last = t.plan(comm);
  EXPECT_EQ(marked(last.communicator()), size > 1);  // with one rank, `next` holds it
  t.run(last);
  MPI_Comm_free(&comm);
}

// A ring exchange on the light path: each rank sends `count` values to the next rank and receives from the previous.
struct ring_case {
  int rank = 0, size = 1, count = 5;
  std::vector<int> sources, destinations, sendcounts, sdispls, recvcounts, rdispls;
  std::vector<double> send, recv;
  explicit ring_case(MPI_Comm comm) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    sources = {(rank + size - 1) % size};
    destinations = {(rank + 1) % size};
    sendcounts = recvcounts = {count};
    sdispls = rdispls = {0};
    for (int k = 0; k < count; ++k) send.push_back(rank * 100 + k);
    recv.assign(static_cast<size_t>(count), -1.0);
  }
  exchange::neighbor_plan plan(MPI_Comm comm, exchange::neighbor_strategy strategy) {
    exchange::exchange_options options;
    options.strategy = strategy;
    return exchange::neighbor_alltoallv_init(sources, destinations, send, sendcounts, sdispls, recv, recvcounts,
                                             rdispls, comm, options);
  }
  void run(exchange::neighbor_plan& p) {
    recv.assign(recv.size(), -1.0);
    p.start();
    p.wait();
    for (int k = 0; k < count; ++k) ASSERT_EQ(recv[static_cast<size_t>(k)], sources[0] * 100 + k) << "element " << k;
  }
};

TEST(PlanDuplicates, NeighborPlansTakeTheDuplicateADroppedOneGaveBack) {
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);  // a pool of its own
    ring_case ring(comm);
    {
      auto first = ring.plan(comm, strategy);
      ring.run(first);
    }
    const int before = duplicates_made;
    {
      auto again = ring.plan(comm, strategy);
      ring.run(again);
      ring.run(again);
    }
    EXPECT_EQ(duplicates_made, before) << to_string(strategy) << ": a plan made again duplicated the communicator";
    {
      // Alive together: the second needs a duplicate of its own.
      auto held = ring.plan(comm, strategy);
      auto other = ring.plan(comm, strategy);
      EXPECT_EQ(duplicates_made, before + 1) << to_string(strategy);
      ring.run(other);
      ring.run(held);
    }
    MPI_Comm_free(&comm);
  }
}

TEST(PlanDuplicates, NeighborPlanDroppedDuringAnExchangeKeepsItsDuplicate) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  ring_case abandoned(comm), ring(comm);  // the abandoned plan's messages may still reach its buffers
  {
    auto first = abandoned.plan(comm, exchange::neighbor_strategy::standard);
    abandoned.run(first);
    first.start();  // dropped with messages in flight
  }
  const int before = duplicates_made;
  auto next = ring.plan(comm, exchange::neighbor_strategy::standard);
  EXPECT_EQ(duplicates_made, before + 1) << "a plan took the duplicate of a plan dropped during an exchange";
  ring.run(next);
  MPI_Comm_free(&comm);
}

// C = A * B on a 1 x P grid, n x n, with small integers: exact in double.
struct gemm_case {
  std::int64_t n = 11;
  grid_layout a, b, c;
  std::vector<double> av, bv, cv;
  explicit gemm_case(MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    block_cyclic_params p{n, n, 2, 3};
    p.proc_cols = size;
    a = b = c = block_cyclic(p, rank);
    av.resize(static_cast<size_t>(a.local_elements()));
    bv.resize(static_cast<size_t>(b.local_elements()));
    for_each_local(a, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      av[static_cast<size_t>(at)] = double((i + 2 * j) % 5);
    });
    for_each_local(b, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      bv[static_cast<size_t>(at)] = double((2 * i + j) % 3);
    });
  }
  gemm_plan plan(MPI_Comm comm, gemm_communication communication) const {
    gemm_options o;
    o.communication = communication;
    return make_gemm_plan(comm, gemm_description{a, b, c}, o);
  }
  void run(const gemm_plan& p) {
    cv.assign(static_cast<size_t>(c.local_elements()), -1.0);
    p.execute(cv.data(), av.data(), bv.data(), 1.0, 0.0);
    for_each_local(c, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      double expected = 0;
      for (std::int64_t k = 0; k < n; ++k) expected += double((i + 2 * k) % 5) * double((2 * k + j) % 3);
      ASSERT_EQ(cv[static_cast<size_t>(at)], expected) << "C(" << i << ", " << j << ")";
    });
  }
};

TEST(PlanDuplicates, GemmPlansTakeTheDuplicatesADroppedOneGaveBack) {
  for (auto communication : {gemm_communication::automatic, gemm_communication::two_sided}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);  // a pool of its own
    gemm_case g(comm);
    {
      const gemm_plan first = g.plan(comm, communication);
      g.run(first);
    }
    const int before = duplicates_made;
    {
      const gemm_plan again = g.plan(comm, communication);  // its own, its transforms' in and out: all given back
      g.run(again);
      g.run(again);
    }
    EXPECT_EQ(duplicates_made, before) << to_string(communication) << ": a plan made again duplicated the communicator";
    {
      const gemm_plan held = g.plan(comm, communication);
      const gemm_plan other = g.plan(comm, communication);  // alive together: duplicates of its own
      EXPECT_GT(duplicates_made, before) << to_string(communication);
      g.run(other);
      g.run(held);
    }
    MPI_Comm_free(&comm);
  }
}

// A routed permutation on a ring torus of all ranks: each rank sends to the next, exactly.
TEST(PlanDuplicates, TorusPlansTakeTheDuplicateADroppedOneGaveBack) {
  const int rank = redist::testing::world_rank(), size = redist::testing::world_size();
  const torus::topology t = torus::topology::parse(std::to_string(size));
  const torus::machine m{t, torus::rank_mapping::dimension_ordered(t, "X")};
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  const std::int64_t bytes = 1000 + rank;
  const auto run = [&](const torus::routed_permutation_plan& plan) {
    std::vector<unsigned char> send(static_cast<size_t>(bytes)), recv(static_cast<size_t>(plan.receive_bytes()), 0);
    for (std::int64_t i = 0; i < bytes; ++i) send[static_cast<size_t>(i)] = static_cast<unsigned char>(rank + i);
    plan.execute(recv.data(), send.data());
    ASSERT_EQ(recv.size(), static_cast<size_t>(1000 + from));
    for (std::size_t i = 0; i < recv.size(); ++i)
      ASSERT_EQ(recv[i], static_cast<unsigned char>(from + static_cast<int>(i))) << "byte " << i;
  };
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);  // a pool of its own
  torus::routing_options o;
  {
    const auto first = torus::make_routed_permutation_plan(comm, m, to, bytes, o);
    run(first);
  }
  const int before = duplicates_made;
  {
    const auto again = torus::make_routed_permutation_plan(comm, m, to, bytes, o);
    run(again);
    run(again);
  }
  EXPECT_EQ(duplicates_made, before) << "a routed plan made again duplicated the communicator";
  {
    const auto held = torus::make_routed_permutation_plan(comm, m, to, bytes, o);
    const auto other = torus::make_routed_permutation_plan(comm, m, to, bytes, o);  // alive together: its own
    EXPECT_EQ(duplicates_made, before + 1);
    run(other);
    run(held);
  }
  MPI_Comm_free(&comm);
}

}  // namespace
