// redist-test-ranks: 1 2 4
// redist-test-labels: fast
// node_aware_cost: the node map found through MPI_Comm_split_type is the same on every rank, dense,
// and agrees with the shared-memory communicator; relabeling with it is identical on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/layout/builders.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"

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
  const grid_layout b = blocked(even_splits(40, 1), even_splits(40 * size, size), [&] {
    std::vector<int> plain(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) plain[r] = r;
    return plain;
  }(), -1);
  const grid_layout a = blocked(even_splits(40, 1), even_splits(40 * size, size), reversed, -1);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, size);
  const relabeling r = find_relabeling(g, model);
  bool ok = r.remote_volume_after == 0 && r.cost_after <= r.cost_before;
  for (int x = 0; x < size && ok; ++x) ok = r.new_rank_of[x] == size - 1 - x;
  EXPECT_TRUE(all_ranks(ok));
  EXPECT_TRUE(all_ranks(same_on_all_ranks(fingerprint(r.new_rank_of))));
}

}  // namespace
