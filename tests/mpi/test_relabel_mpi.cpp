// SPDX-License-Identifier: BSD-3-Clause
// redist-test-ranks: 1 2 3 4
// redist-test-labels: fast
// node_aware_cost: the node map found through MPI_Comm_split_type is the same on every rank, dense,
// and agrees with the shared-memory communicator; relabeling with it is identical on every rank.
// relabel_targets / relabel_reshape_targets, solved on rank 0 from the ranks' own packages, give exactly what
// find_relabeling gives on the whole graph; the gather by rounds reassembles the graph whatever the round size.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/layout/builders.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"
#include "redist/transform/relabel_targets.hpp"
#include "relabel/gathered.hpp"
#include "test_seed.hpp"

namespace {

using namespace redist;
using namespace redist::relabel;
using redist::testing::all_ranks;
using redist::testing::world_rank;
using redist::testing::world_size;

// FNV-1a over the values, so ranks can compare vectors with two reductions.
std::int64_t fingerprint(const std::vector<int>& values) {
  std::uint64_t h = 1469598103934665603ull;
  for (int v : values) {
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(v));
    h *= 1099511628211ull;
  }
  return static_cast<std::int64_t>(h >> 1);
}

bool same_on_all_ranks(std::int64_t value) {
  return redist::testing::global_max(value) == -redist::testing::global_max(-value);
}

TEST(NodeAwareCost, NodeMapIsConsistentAndDense) {
  const relabel_cost model = node_aware_cost(MPI_COMM_WORLD);
  const int size = world_size(), rank = world_rank();
  bool ok = model.model == relabel_cost::kind::latency_bandwidth && model.node_of.size() == static_cast<size_t>(size);
  ok = ok && !model.pair_cost;
  if (ok) {
    // Dense ids in order of first appearance: rank 0 is on node 0, and ids grow by at most one.
    ok = model.node_of[0] == 0;
    int highest = 0;
    for (int r = 0; r < size && ok; ++r) {
      ok = model.node_of[r] >= 0 && model.node_of[r] <= highest + 1;
      highest = std::max(highest, model.node_of[r]);
    }
  }
  // Ranks that share memory with this one are exactly the ranks with this rank's node id.
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int shared_size = 0;
  MPI_Comm_size(shared, &shared_size);
  MPI_Comm_free(&shared);
  if (ok) ok = std::count(model.node_of.begin(), model.node_of.end(), model.node_of[rank]) == shared_size;
  EXPECT_TRUE(all_ranks(ok));
  EXPECT_TRUE(all_ranks(ok && same_on_all_ranks(fingerprint(model.node_of))));
}

TEST(NodeAwareCost, RelabelingIsIdenticalOnAllRanks) {
  const relabel_cost model = node_aware_cost(MPI_COMM_WORLD);
  const int size = world_size();
  // Same blocks on a 1 x P grid, target owners reversed: the optimum makes everything local.
  std::vector<int> reversed(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) reversed[r] = size - 1 - r;
  const grid_layout b = blocked(
      even_splits(40, 1), even_splits(40 * size, size),
      [&] {
        std::vector<int> plain(static_cast<size_t>(size));
        for (int r = 0; r < size; ++r) plain[r] = r;
        return plain;
      }(),
      -1);
  const grid_layout a = blocked(even_splits(40, 1), even_splits(40 * size, size), reversed, -1);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, size);
  const relabeling r = find_relabeling(g, model);
  bool ok = r.remote_volume_after == 0 && r.cost_after <= r.cost_before;
  for (int x = 0; x < size && ok; ++x) ok = r.new_rank_of[x] == size - 1 - x;
  EXPECT_TRUE(all_ranks(ok));
  EXPECT_TRUE(all_ranks(same_on_all_ranks(fingerprint(r.new_rank_of))));
}

// A random block-cyclic layout of m x n on `size` ranks: random blocks, grid, numbering (ranks may repeat
// or be left out), the same on every rank (the seed is).
grid_layout random_layout(std::mt19937_64& rng, std::int64_t m, std::int64_t n, int size) {
  block_cyclic_params p;
  p.m = m;
  p.n = n;
  p.proc_rows = 1 + static_cast<int>(rng() % std::min(size, 3));
  p.proc_cols = std::max(1, std::min(size / p.proc_rows, 1 + static_cast<int>(rng() % 3)));
  p.mb = 1 + static_cast<std::int64_t>(rng() % 6);
  p.nb = 1 + static_cast<std::int64_t>(rng() % 6);
  p.ordering = rng() % 2 ? grid_order::row_major : grid_order::col_major;
  if (rng() % 2) {
    p.grid_ranks.resize(static_cast<size_t>(p.proc_rows) * p.proc_cols);
    for (int& r : p.grid_ranks) r = static_cast<int>(rng() % size);
  }
  return block_cyclic(p, world_rank());
}

bool same_relabeling(const relabeling& a, const relabeling& b) {
  return a.new_rank_of == b.new_rank_of && a.cost_before == b.cost_before && a.cost_after == b.cost_after &&
         a.remote_volume_before == b.remote_volume_before && a.remote_volume_after == b.remote_volume_after &&
         a.messages_before == b.messages_before && a.messages_after == b.messages_after &&
         a.max_rank_volume_before == b.max_rank_volume_before && a.max_rank_volume_after == b.max_rank_volume_after;
}

TEST(RelabelTargets, SolvedOnRankZeroEqualsTheWholeGraphSolve) {
  const int size = world_size();
  std::mt19937_64 rng(redist::testing::test_seed(4242));
  relabel_cost node_aware;
  node_aware.model = relabel_cost::kind::latency_bandwidth;
  bool ok = true;
  for (int trial = 0; trial < 40 && ok; ++trial) {
    const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % 40), n = 1 + static_cast<std::int64_t>(rng() % 40);
    const op o = trial % 2 ? op::transpose : op::identity;
    std::vector<job_description> jobs;
    jobs.push_back({random_layout(rng, m, n, size),
                    o == op::identity ? random_layout(rng, m, n, size) : random_layout(rng, n, m, size),
                    o,
                    element_type::f64,
                    {}});
    if (trial % 3 == 0)
      jobs.push_back(
          {random_layout(rng, n, m, size), random_layout(rng, n, m, size), op::identity, element_type::f32, {}});
    std::vector<layout_pair> pairs;
    for (const auto& j : jobs) pairs.push_back({&j.a, &j.b, j.operation, j.type == element_type::f64 ? 8u : 4u});
    const comm_graph whole = communication_graph(pairs, size);
    const relabel_cost& cost = trial % 4 == 3 ? node_aware : relabel_cost{};
    const relabeled_targets found = relabel_targets(MPI_COMM_WORLD, jobs, cost);
    ok = same_relabeling(found.result, find_relabeling(whole, cost));

    // The same movement as an N-d job.
    std::vector<reshape_job> nd_jobs;
    for (const auto& j : jobs)
      nd_jobs.push_back({to_nd_layout(j.a),
                         to_nd_layout(j.b),
                         j.operation == op::identity ? std::vector<int>{} : std::vector<int>{1, 0},
                         false,
                         j.type,
                         {}});
    ok = ok &&
         same_relabeling(relabel_reshape_targets(MPI_COMM_WORLD, nd_jobs, cost).result, find_relabeling(whole, cost));
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(RelabelTargets, GatherByRoundsReassemblesTheGraph) {
  const int size = world_size(), rank = world_rank();
  // Every rank draws every label's packages (same seed), keeps its own label as its share.
  std::mt19937_64 rng(redist::testing::test_seed(99));
  label_graph expected;
  expected.nranks = size;
  label_graph mine;
  mine.nranks = size;
  mine.first_label = rank;
  std::int64_t largest = 0;
  for (int x = 0; x < size; ++x) {
    const int count = static_cast<int>(rng() % 9);  // some labels receive nothing
    std::vector<int> senders;
    for (int s = 0; s < size && static_cast<int>(senders.size()) < count; ++s)
      if (rng() % 2) senders.push_back(s);
    for (int s : senders) {
      const auto volume = 1 + static_cast<std::int64_t>(rng() % 1000);
      expected.src.push_back(s);
      expected.volume.push_back(volume);
      if (x == rank) {
        mine.src.push_back(s);
        mine.volume.push_back(volume);
      }
    }
    expected.label_start.push_back(static_cast<std::int64_t>(expected.src.size()));
    largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(senders.size()));
  }
  mine.label_start.push_back(static_cast<std::int64_t>(mine.src.size()));
  bool ok = true;
  for (std::int64_t stage : {std::int64_t{1}, std::int64_t{3}, std::int64_t{7}, gather_stage_packages}) {
    const label_graph all = gather_label_graph(mine, largest, 0, MPI_COMM_WORLD, stage);
    if (rank == 0)
      ok = ok && all.nranks == size && all.label_start == expected.label_start && all.src == expected.src &&
           all.volume == expected.volume;
  }
  EXPECT_TRUE(all_ranks(ok));
}

}  // namespace
