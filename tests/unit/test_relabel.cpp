// SPDX-License-Identifier: BSD-3-Clause
// Process relabeling: communication graph volumes, assignment solvers and the relabeling claims of the
// COSTA paper (Sections 4 and 7.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "redist/error.hpp"
#include "redist/layout/builders.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"
#include "test_seed.hpp"

namespace {

using namespace redist;
using namespace redist::relabel;
using redist::testing::test_seed;

// ---- helpers -----------------------------------------------------------------------------------------

bool is_permutation_of_n(const std::vector<int>& p, int n) {
  if (p.size() != static_cast<size_t>(n)) return false;
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int k = 0; k < n; ++k)
    if (sorted[k] != k) return false;
  return true;
}

// Weight matrix of the complete bipartite graph (duplicates add up, unlisted pairs 0).
std::vector<double> weight_matrix(int n, const std::vector<weighted_edge>& edges) {
  std::vector<double> w(static_cast<size_t>(n) * n, 0.0);
  for (const auto& e : edges) w[static_cast<size_t>(e.left) * n + e.right] += e.weight;
  return w;
}

double matrix_weight(int n, const std::vector<double>& w, const std::vector<int>& right_of) {
  double total = 0;
  for (int l = 0; l < n; ++l) total += w[static_cast<size_t>(l) * n + right_of[l]];
  return total;
}

double brute_force_max(int n, const std::vector<double>& w) {
  std::vector<int> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  double best = -1e300;
  do best = std::max(best, matrix_weight(n, w, perm));
  while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

enum class weight_kind { non_negative_integer, with_negative, fractional, huge_integer };

std::vector<weighted_edge> random_edges(std::mt19937_64& rng, int n, weight_kind kind) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double density = 0.2 + 0.8 * unit(rng);
  std::vector<weighted_edge> edges;
  for (int l = 0; l < n; ++l)
    for (int r = 0; r < n; ++r) {
      if (unit(rng) > density) continue;
      double w = 0;
      switch (kind) {
        case weight_kind::non_negative_integer:
          w = static_cast<double>(rng() % 6);
          break;  // includes zeros
        case weight_kind::with_negative:
          w = static_cast<double>(static_cast<int>(rng() % 11) - 5);
          break;
        case weight_kind::fractional:
          w = unit(rng) * 3.0;
          break;
        case weight_kind::huge_integer:
          w = 1e12 + static_cast<double>(rng() % 5);
          break;
      }
      edges.push_back({l, r, w});
      if (rng() % 10 == 0) edges.push_back({l, r, static_cast<double>(rng() % 3)});  // a duplicate pair
    }
  return edges;
}

// Element-by-element volumes: owner of every element of A and of the matching element of op(B).
std::map<std::pair<int, int>, std::int64_t> naive_volumes(const grid_layout& a, const grid_layout& b, op o,
                                                          std::int64_t elem) {
  auto owner_of = [](const grid_layout& l, std::int64_t i, std::int64_t j) {
    const auto& rs = l.row_splits();
    const auto& cs = l.col_splits();
    const auto bi = std::upper_bound(rs.begin(), rs.end(), i) - rs.begin() - 1;
    const auto bj = std::upper_bound(cs.begin(), cs.end(), j) - cs.begin() - 1;
    return l.owner({bi, bj});
  };
  std::map<std::pair<int, int>, std::int64_t> vol;
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t j = 0; j < a.cols(); ++j) {
      const int dst = owner_of(a, i, j);
      const int src = o == op::identity ? owner_of(b, i, j) : owner_of(b, j, i);
      vol[{src, dst}] += elem;
    }
  return vol;
}

std::map<std::pair<int, int>, std::int64_t> as_map(const comm_graph& g) {
  std::map<std::pair<int, int>, std::int64_t> vol;
  for (const auto& e : g.edges) vol[{e.src, e.dst}] += e.volume;
  return vol;
}

// A random block-cyclic layout of an m x n matrix (random blocks, first blocks, sources, grid, numbering,
// sub-matrix placement inside a larger matrix) on at most max_ranks ranks.
grid_layout random_block_cyclic(std::mt19937_64& rng, std::int64_t m, std::int64_t n, int max_ranks) {
  block_cyclic_params p;
  p.proc_rows = 1 + static_cast<int>(rng() % 3);
  p.proc_cols = 1 + static_cast<int>(rng() % 3);
  p.proc_rows = std::min(p.proc_rows, max_ranks);
  while (p.proc_rows * p.proc_cols > max_ranks) --p.proc_cols;
  const std::int64_t extra_rows = static_cast<std::int64_t>(rng() % 4),
                     extra_cols = static_cast<std::int64_t>(rng() % 4);
  p.m = m + extra_rows;
  p.n = n + extra_cols;
  p.sub_row = static_cast<std::int64_t>(rng() % (extra_rows + 1));
  p.sub_col = static_cast<std::int64_t>(rng() % (extra_cols + 1));
  p.sub_m = m;
  p.sub_n = n;
  p.mb = 1 + static_cast<std::int64_t>(rng() % 5);
  p.nb = 1 + static_cast<std::int64_t>(rng() % 5);
  if (rng() % 2) p.first_mb = 1 + static_cast<std::int64_t>(rng() % 4);
  if (rng() % 2) p.first_nb = 1 + static_cast<std::int64_t>(rng() % 4);
  p.rsrc = static_cast<int>(rng() % p.proc_rows);
  p.csrc = static_cast<int>(rng() % p.proc_cols);
  p.ordering = rng() % 2 ? grid_order::row_major : grid_order::col_major;
  if (rng() % 3 == 0) {  // explicit rank numbering, possibly with a rank on several positions
    p.grid_ranks.resize(static_cast<size_t>(p.proc_rows) * p.proc_cols);
    for (int& r : p.grid_ranks) r = static_cast<int>(rng() % max_ranks);
  }
  return block_cyclic(p, -1);
}

std::vector<std::int64_t> random_splits(std::mt19937_64& rng, std::int64_t extent) {
  std::vector<std::int64_t> s{0};
  while (s.back() < extent)
    s.push_back(std::min(extent, s.back() + static_cast<std::int64_t>(rng() % 6)));  // empty blocks too
  return s;
}

grid_layout random_custom(std::mt19937_64& rng, std::int64_t m, std::int64_t n, int max_ranks) {
  auto rows = random_splits(rng, m), cols = random_splits(rng, n);
  std::vector<int> owners((rows.size() - 1) * (cols.size() - 1));
  for (int& o : owners) o = static_cast<int>(rng() % max_ranks);
  return custom(std::move(rows), std::move(cols), std::move(owners), {}, -1);
}

grid_layout random_layout(std::mt19937_64& rng, std::int64_t m, std::int64_t n, int max_ranks) {
  return rng() % 2 ? random_block_cyclic(rng, m, n, max_ranks) : random_custom(rng, m, n, max_ranks);
}

grid_layout bc(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, int pr, int pc, grid_order order) {
  block_cyclic_params p;
  p.m = m;
  p.n = n;
  p.mb = mb;
  p.nb = nb;
  p.proc_rows = pr;
  p.proc_cols = pc;
  p.ordering = order;
  return block_cyclic(p, -1);
}

// ---- assignment solvers ------------------------------------------------------------------------------

TEST(Assignment, ExactMatchesBruteForceOnSmallRandomGraphs) {
  std::mt19937_64 rng(test_seed(12345));
  for (weight_kind kind : {weight_kind::non_negative_integer, weight_kind::with_negative, weight_kind::fractional,
                           weight_kind::huge_integer}) {
    for (int trial = 0; trial < 150; ++trial) {
      const int n = 1 + static_cast<int>(rng() % 7);
      const auto edges = random_edges(rng, n, kind);
      const auto w = weight_matrix(n, edges);
      const auto exact = max_weight_assignment(n, edges);
      ASSERT_TRUE(is_permutation_of_n(exact, n));
      const double best = brute_force_max(n, w);
      const double tolerance = kind == weight_kind::fractional ? 1e-9 : 0.0;
      ASSERT_NEAR(matrix_weight(n, w, exact), best, tolerance) << "kind " << static_cast<int>(kind) << " n " << n;
      EXPECT_DOUBLE_EQ(assignment_weight(edges, exact), matrix_weight(n, w, exact));

      const auto greedy = greedy_assignment(n, edges);
      ASSERT_TRUE(is_permutation_of_n(greedy, n));
      EXPECT_LE(matrix_weight(n, w, greedy), best + tolerance);
      if (kind != weight_kind::with_negative) {
        // Heaviest-edge-first is a 1/2-approximation for non-negative weights.
        EXPECT_GE(2 * matrix_weight(n, w, greedy) + 1e-9, best);
      }
    }
  }
}

TEST(Assignment, DenseMinCostMatchesBruteForce) {
  std::mt19937_64 rng(test_seed(777));
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 7);
    std::vector<double> cost(static_cast<size_t>(n) * n);
    for (double& c : cost)
      c = trial % 2 ? static_cast<double>(static_cast<int>(rng() % 21) - 10) : (rng() % 1000) / 7.0;
    std::vector<double> negated(cost.size());
    for (size_t k = 0; k < cost.size(); ++k) negated[k] = -cost[k];
    const auto col = min_cost_assignment_dense(n, cost);
    ASSERT_TRUE(is_permutation_of_n(col, n));
    EXPECT_NEAR(-matrix_weight(n, cost, col), brute_force_max(n, negated), 1e-9);
  }
}

TEST(Assignment, SparseAgreesWithDenseOnMediumGraphs) {
  std::mt19937_64 rng(test_seed(99));
  for (int trial = 0; trial < 12; ++trial) {
    // Wide integer weights, heavy ties (1..3), fractional weights; some rows and columns left empty.
    const int n = 150 + static_cast<int>(rng() % 100);
    std::vector<weighted_edge> edges;
    for (int l = 0; l < n; ++l)
      for (int k = 0; k < 4; ++k) {
        if (rng() % 5 == 0) continue;
        const int right = static_cast<int>(rng() % (n - n / 10));
        const double w = trial % 3 == 0   ? static_cast<double>(1 + rng() % 1000000)
                         : trial % 3 == 1 ? static_cast<double>(1 + rng() % 3)
                                          : (1 + rng() % 1000) / 8.0;
        edges.push_back({l, right, w});
      }
    const auto w = weight_matrix(n, edges);
    std::vector<double> cost(w.size());
    for (size_t k = 0; k < w.size(); ++k) cost[k] = -w[k];
    const auto sparse = max_weight_assignment(n, edges);
    const auto dense = min_cost_assignment_dense(n, cost);
    ASSERT_TRUE(is_permutation_of_n(sparse, n));
    EXPECT_NEAR(matrix_weight(n, w, sparse), matrix_weight(n, w, dense), 1e-9 * matrix_weight(n, w, dense));
    EXPECT_LE(matrix_weight(n, w, greedy_assignment(n, edges)), matrix_weight(n, w, sparse));
  }
}

TEST(Assignment, GreedyIsSuboptimalWhereExactIsNot) {
  // Greedy takes the heaviest pair (0, 0) = 10 and is left with (1, 1) = 0; the optimum crosses: 9 + 9.
  const std::vector<weighted_edge> edges{{0, 0, 10}, {0, 1, 9}, {1, 0, 9}};
  EXPECT_EQ(max_weight_assignment(2, edges), (std::vector<int>{1, 0}));
  EXPECT_EQ(greedy_assignment(2, edges), (std::vector<int>{0, 1}));
}

TEST(Assignment, LargeVolumesStayExact) {
  // Weights around 1e12 that differ by 1 byte: doubles of the sums would still be exact here, but the
  // solver must not lose the difference in its potentials either.
  const double big = 1e12;
  const std::vector<weighted_edge> edges{{0, 0, big}, {0, 1, big + 1}, {1, 0, big + 1}, {1, 1, big + 1}};
  const auto exact = max_weight_assignment(2, edges);
  EXPECT_EQ(exact, (std::vector<int>{1, 0}));
}

TEST(Assignment, UntouchedVerticesKeepTheirIndex) {
  const std::vector<weighted_edge> edges{{2, 3, 5.0}, {0, 0, 0.0}};
  const auto exact = max_weight_assignment(5, edges);
  EXPECT_EQ(exact, (std::vector<int>{0, 1, 3, 2, 4}));
}

TEST(Assignment, RejectsBadInput) {
  EXPECT_THROW(max_weight_assignment(-1, {}), invalid_argument);
  EXPECT_THROW(max_weight_assignment(2, {{0, 2, 1.0}}), invalid_argument);
  EXPECT_THROW(greedy_assignment(2, {{-1, 0, 1.0}}), invalid_argument);
  EXPECT_THROW(max_weight_assignment(2, {{0, 1, std::nan("")}}), invalid_argument);
  EXPECT_THROW(min_cost_assignment_dense(2, {1.0, 2.0, 3.0}), invalid_argument);
  try {
    max_weight_assignment(dense_assignment_limit + 1, {{0, 1, -1.0}});
    FAIL() << "expected invalid_argument";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(dense_assignment_limit)), std::string::npos) << e.what();
  }
  EXPECT_TRUE(max_weight_assignment(0, {}).empty());
}

// ---- communication graph -----------------------------------------------------------------------------

TEST(CommGraph, VolumesMatchElementCountOnRandomLayouts) {
  std::mt19937_64 rng(test_seed(2024));
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % 23), n = 1 + static_cast<std::int64_t>(rng() % 23);
    const int max_ranks = 1 + static_cast<int>(rng() % 9);
    const op o = trial % 3 == 0 ? op::identity : (trial % 3 == 1 ? op::transpose : op::conj_transpose);
    const grid_layout a = random_layout(rng, m, n, max_ranks);
    const grid_layout b = o == op::identity ? random_layout(rng, m, n, max_ranks) : random_layout(rng, n, m, max_ranks);
    const std::int64_t elem = trial % 2 ? 8 : 16;
    const int nranks = std::max(a.ranks_needed(), b.ranks_needed());
    const comm_graph g = communication_graph({{&a, &b, o, static_cast<size_t>(elem)}}, nranks);
    ASSERT_EQ(as_map(g), naive_volumes(a, b, o, elem))
        << "trial " << trial << ": " << a.describe() << " <- " << b.describe();
    EXPECT_EQ(g.total_volume(), m * n * elem);
    for (size_t k = 1; k < g.edges.size(); ++k)
      ASSERT_TRUE(std::make_pair(g.edges[k - 1].src, g.edges[k - 1].dst) <
                  std::make_pair(g.edges[k].src, g.edges[k].dst));
  }
}

TEST(CommGraph, BatchAddsPairsAndStatisticsAreConsistent) {
  std::mt19937_64 rng(test_seed(5));
  const grid_layout a1 = random_layout(rng, 10, 12, 4), b1 = random_layout(rng, 10, 12, 4);
  const grid_layout a2 = random_layout(rng, 7, 5, 4), b2 = random_layout(rng, 5, 7, 4);
  const comm_graph g = communication_graph({{&a1, &b1, op::identity, 8}, {&a2, &b2, op::transpose, 4}}, 4);
  auto expected = naive_volumes(a1, b1, op::identity, 8);
  for (const auto& [key, v] : naive_volumes(a2, b2, op::transpose, 4)) expected[key] += v;
  EXPECT_EQ(as_map(g), expected);

  std::int64_t remote = 0, messages = 0;
  std::vector<std::int64_t> sent(4, 0), received(4, 0);
  for (const auto& [key, v] : expected)
    if (key.first != key.second) {
      remote += v;
      ++messages;
      sent[key.first] += v;
      received[key.second] += v;
    }
  EXPECT_EQ(g.remote_volume(), remote);
  EXPECT_EQ(g.remote_messages(), messages);
  EXPECT_EQ(g.max_rank_volume(),
            std::max(*std::max_element(sent.begin(), sent.end()), *std::max_element(received.begin(), received.end())));
}

TEST(CommGraph, RejectsMismatchedShapesAndRanks) {
  const grid_layout a = bc(10, 8, 2, 2, 2, 2, grid_order::row_major);
  const grid_layout b = bc(10, 8, 3, 3, 2, 2, grid_order::row_major);
  EXPECT_THROW(communication_graph({{&a, &b, op::transpose, 8}}, 4), dimension_mismatch);
  EXPECT_THROW(communication_graph({{&a, &b, op::identity, 8}}, 3), invalid_layout);
  EXPECT_THROW(communication_graph({{&a, nullptr, op::identity, 8}}, 4), invalid_argument);
  EXPECT_THROW(communication_graph({{&a, &b, op::identity, 0}}, 4), invalid_argument);
}

TEST(CommGraph, LargeBlockCyclicCaseIsComputedWithoutElements) {
  // 1e5 x 1e5 with 1x1 blocks against 1e4 x 1e4 blocks on 10x10 grids: every pair of ranks exchanges data.
  const grid_layout b = bc(100000, 100000, 1, 1, 10, 10, grid_order::row_major);
  const grid_layout a = bc(100000, 100000, 10000, 10000, 10, 10, grid_order::col_major);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, 100);
  EXPECT_EQ(g.edges.size(), 100u * 100u);
  EXPECT_EQ(g.total_volume(), std::int64_t{100000} * 100000 * 8);
  for (const auto& e : g.edges) ASSERT_EQ(e.volume, std::int64_t{100000} * 100000 * 8 / 10000);
}

TEST(CommGraph, RelabelGraphMovesTargets) {
  comm_graph g;
  g.nranks = 3;
  g.edges = {{0, 1, 5}, {1, 2, 7}, {2, 0, 3}};
  const comm_graph r = relabel_graph(g, {2, 0, 1});  // label 0 -> rank 2, 1 -> 0, 2 -> 1
  EXPECT_EQ(as_map(r), (std::map<std::pair<int, int>, std::int64_t>{{{0, 0}, 5}, {{1, 1}, 7}, {{2, 2}, 3}}));
  EXPECT_EQ(r.remote_volume(), 0);
  EXPECT_THROW(relabel_graph(g, {0, 0, 1}), invalid_argument);
  EXPECT_THROW(relabel_graph(g, {0, 1}), invalid_argument);
}

// ---- relabeling: paper claims --------------------------------------------------------------------------

TEST(Relabel, SameBlocksDifferentGridNumberingIsFullyLocal) {
  // Fig. 3's red dot: same blocks, row-major vs column-major grid: the layouts differ by a permutation.
  const grid_layout b = bc(1000, 900, 100, 90, 4, 5, grid_order::row_major);
  const grid_layout a = bc(1000, 900, 100, 90, 4, 5, grid_order::col_major);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, 20);
  ASSERT_GT(g.remote_volume(), 0);
  for (solver s : {solver::exact, solver::greedy}) {
    const relabeling r = find_relabeling(g, {}, s);
    EXPECT_EQ(r.remote_volume_after, 0) << to_string(s);
    EXPECT_EQ(r.messages_after, 0);
    EXPECT_EQ(r.max_rank_volume_after, 0);
    EXPECT_DOUBLE_EQ(r.reduction_percent(), 100.0);
    EXPECT_EQ(r.remote_volume_before, g.remote_volume());
    EXPECT_EQ(r.messages_before, g.remote_messages());
    EXPECT_EQ(r.max_rank_volume_before, g.max_rank_volume());
    EXPECT_DOUBLE_EQ(r.cost_before, static_cast<double>(g.remote_volume()));
    EXPECT_DOUBLE_EQ(r.cost_after, 0.0);
  }
}

TEST(Relabel, CyclicShiftOfOwnersIsFullyLocal) {
  // Rank r's data goes to rank r + 1 (mod P). The optimum is one P-cycle; a relabeling built from
  // pairwise swaps (an involution) can make at most half of the ranks local.
  const int P = 12;
  std::vector<int> source_ranks(P), target_ranks(P);
  for (int r = 0; r < P; ++r) {
    source_ranks[r] = r;
    target_ranks[r] = (r + 1) % P;
  }
  block_cyclic_params p;
  p.m = 60;
  p.n = 48;
  p.mb = 5;
  p.nb = 4;
  p.proc_rows = 3;
  p.proc_cols = 4;
  p.grid_ranks = source_ranks;
  const grid_layout b = block_cyclic(p, -1);
  p.grid_ranks = target_ranks;
  const grid_layout a = block_cyclic(p, -1);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, P);
  EXPECT_EQ(g.remote_volume(), g.total_volume());
  const relabeling r = find_relabeling(g);
  EXPECT_EQ(r.remote_volume_after, 0);
  EXPECT_DOUBLE_EQ(r.reduction_percent(), 100.0);
  // Label x = r + 1 must move to rank r: a single cycle through all ranks, not a product of swaps.
  for (int x = 0; x < P; ++x) EXPECT_EQ(r.new_rank_of[x], (x + P - 1) % P);
  // The best relabeling made only of disjoint swaps keeps at most every other package local.
  std::vector<int> swaps(P);
  for (int x = 0; x < P; x += 2) {
    swaps[x] = x + 1;
    swaps[x + 1] = x;
  }
  EXPECT_EQ(relabel_graph(g, swaps).remote_volume(), g.total_volume() / 2);
  EXPECT_EQ(find_relabeling(g, {}, solver::greedy).remote_volume_after, 0);
}

TEST(Relabel, RelabeledLayoutsGiveTheRelabeledGraph) {
  std::mt19937_64 rng(test_seed(31));
  for (int trial = 0; trial < 40; ++trial) {
    const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % 30), n = 1 + static_cast<std::int64_t>(rng() % 30);
    const int max_ranks = 2 + static_cast<int>(rng() % 8);
    const op o = trial % 2 ? op::transpose : op::identity;
    const grid_layout a = random_layout(rng, m, n, max_ranks);
    const grid_layout b = o == op::identity ? random_layout(rng, m, n, max_ranks) : random_layout(rng, n, m, max_ranks);
    const int nranks = max_ranks;
    const comm_graph g = communication_graph({{&a, &b, o, 8}}, nranks);
    const relabeling r = find_relabeling(g);
    ASSERT_TRUE(is_permutation_of_n(r.new_rank_of, nranks));
    const grid_layout a_relabeled = a.relabeled(r.new_rank_of);
    const comm_graph direct = communication_graph({{&a_relabeled, &b, o, 8}}, nranks);
    const comm_graph mapped = relabel_graph(g, r.new_rank_of);
    EXPECT_EQ(as_map(direct), as_map(mapped));
    EXPECT_EQ(direct.remote_volume(), r.remote_volume_after);
    EXPECT_LE(r.remote_volume_after, r.remote_volume_before);

    // Exact is optimal: no better than brute force over all relabelings for small rank counts.
    if (nranks <= 7) {
      std::vector<int> perm(static_cast<size_t>(nranks));
      std::iota(perm.begin(), perm.end(), 0);
      std::int64_t best = g.remote_volume();
      do best = std::min(best, relabel_graph(g, perm).remote_volume());
      while (std::next_permutation(perm.begin(), perm.end()));
      EXPECT_EQ(r.remote_volume_after, best) << "trial " << trial;
      EXPECT_GE(find_relabeling(g, {}, solver::greedy).remote_volume_after, best);
    }
  }
}

TEST(Relabel, NoneAndDeterminism) {
  const grid_layout b = bc(500, 500, 7, 11, 3, 4, grid_order::row_major);
  const grid_layout a = bc(500, 500, 50, 40, 4, 3, grid_order::col_major);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, 12);
  const relabeling none = find_relabeling(g, {}, solver::none);
  EXPECT_EQ(none.remote_volume_after, none.remote_volume_before);
  for (int x = 0; x < 12; ++x) EXPECT_EQ(none.new_rank_of[x], x);
  EXPECT_EQ(find_relabeling(g).new_rank_of, find_relabeling(g).new_rank_of);
  EXPECT_STREQ(to_string(solver::exact), "exact");
  EXPECT_STREQ(to_string(solver::greedy), "greedy");
  EXPECT_STREQ(to_string(solver::none), "none");
}

TEST(Relabel, NodeAwareCostPrefersSameNode) {
  // Label 0 receives 100 bytes from rank 1 and 1 byte from rank 2; ranks {0, 1} and {2, 3} are nodes.
  // On rank 1 it pays one inter-node package (1 byte), on rank 2 one inter-node package of 100 bytes,
  // on rank 0 an intra-node and an inter-node package: rank 1 is cheapest.
  comm_graph g;
  g.nranks = 4;
  g.edges = {{1, 0, 100}, {2, 0, 1}, {3, 3, 10}};
  relabel_cost node_aware;
  node_aware.model = relabel_cost::kind::latency_bandwidth;
  node_aware.node_of = {0, 0, 1, 1};
  const relabeling r = find_relabeling(g, node_aware);
  EXPECT_EQ(r.new_rank_of[0], 1);
  EXPECT_LT(r.cost_after, r.cost_before);

  // The gains found by the sparse node-aware construction equal the dense ones of the same model.
  std::mt19937_64 rng(test_seed(8));
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 6);
    comm_graph h;
    h.nranks = n;
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d)
        if (rng() % 3 == 0) h.edges.push_back({s, d, static_cast<std::int64_t>(1 + rng() % 100000)});
    relabel_cost sparse_model;
    sparse_model.model = relabel_cost::kind::latency_bandwidth;
    sparse_model.node_of.resize(static_cast<size_t>(n));
    for (int& nd : sparse_model.node_of) nd = static_cast<int>(rng() % 3);
    relabel_cost dense_model = sparse_model;
    dense_model.pair_cost = [&](int s, int d, std::int64_t bytes) { return sparse_model.package_cost(s, d, bytes); };
    const relabeling sparse = find_relabeling(h, sparse_model);
    const relabeling dense = find_relabeling(h, dense_model);
    EXPECT_NEAR(sparse.cost_after, dense.cost_after, 1e-12 * std::max(1.0, dense.cost_before));
    // Brute force over all relabelings.
    std::vector<int> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    double best = 1e300;
    do {
      double c = 0;
      for (const auto& e : relabel_graph(h, perm).edges) c += sparse_model.package_cost(e.src, e.dst, e.volume);
      best = std::min(best, c);
    } while (std::next_permutation(perm.begin(), perm.end()));
    EXPECT_NEAR(sparse.cost_after, best, 1e-12 * std::max(1.0, best));
    EXPECT_GE(find_relabeling(h, sparse_model, solver::greedy).cost_after, best - 1e-12 * std::max(1.0, best));
  }
}

TEST(Relabel, PackageCost) {
  relabel_cost volume;
  EXPECT_EQ(volume.package_cost(0, 0, 100), 0.0);
  EXPECT_EQ(volume.package_cost(0, 1, 100), 100.0);
  EXPECT_EQ(volume.package_cost(0, 1, 0), 0.0);
  relabel_cost lb;
  lb.model = relabel_cost::kind::latency_bandwidth;
  lb.node_of = {0, 0, 1};
  EXPECT_DOUBLE_EQ(lb.package_cost(0, 1, 1000), lb.prices.intra_latency + 1000 * lb.prices.intra_seconds_per_byte);
  EXPECT_DOUBLE_EQ(lb.package_cost(0, 2, 1000), lb.prices.inter_latency + 1000 * lb.prices.inter_seconds_per_byte);
  lb.transformed = true;
  lb.prices.transform_seconds_per_byte = 1e-9;
  EXPECT_DOUBLE_EQ(lb.package_cost(2, 2, 1000), 1e-6);
  EXPECT_THROW(lb.package_cost(0, 5, 10), invalid_argument);
}

TEST(Relabel, TenThousandRanksPermutationHasKnownOptimum) {
  // 100x100 grid, same blocks, row-major vs column-major numbering: a permutation graph whose optimum
  // makes everything local.
  const grid_layout b = bc(100000, 100000, 1000, 1000, 100, 100, grid_order::row_major);
  const grid_layout a = bc(100000, 100000, 1000, 1000, 100, 100, grid_order::col_major);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, 10000);
  const relabeling r = find_relabeling(g);
  EXPECT_EQ(r.remote_volume_after, 0);
  EXPECT_DOUBLE_EQ(r.reduction_percent(), 100.0);

  // A random permutation of owners on top of a random blocked layout: optimum is the inverse permutation.
  std::mt19937_64 rng(test_seed(10000));
  std::vector<int> shuffled(10000);
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::vector<int> plain(10000);
  std::iota(plain.begin(), plain.end(), 0);
  const grid_layout src = blocked(even_splits(5000, 100), even_splits(4000, 100), plain, -1);
  const grid_layout dst = blocked(even_splits(5000, 100), even_splits(4000, 100), shuffled, -1);
  const comm_graph h = communication_graph({{&dst, &src, op::identity, 8}}, 10000);
  const relabeling rh = find_relabeling(h);
  EXPECT_EQ(rh.remote_volume_after, 0);
  for (int k = 0; k < 10000; ++k) EXPECT_EQ(rh.new_rank_of[shuffled[k]], k);
}

TEST(Relabel, TenThousandRanksBlockCyclicExactBeatsGreedy) {
  // bc 32x32 -> bc 128x128 on a 100x100 grid (~16 edges per rank).
  const grid_layout b = bc(100000, 100000, 32, 32, 100, 100, grid_order::row_major);
  const grid_layout a = bc(100000, 100000, 128, 128, 100, 100, grid_order::row_major);
  const comm_graph g = communication_graph({{&a, &b, op::identity, 8}}, 10000);
  const relabeling exact = find_relabeling(g, {}, solver::exact);
  const relabeling greedy = find_relabeling(g, {}, solver::greedy);
  EXPECT_TRUE(is_permutation_of_n(exact.new_rank_of, 10000));
  EXPECT_LE(exact.remote_volume_after, greedy.remote_volume_after);
  EXPECT_LT(exact.remote_volume_after, exact.remote_volume_before);
  // Each label can keep at most its largest incoming package local.
  std::vector<std::int64_t> largest(10000, 0);
  for (const auto& e : g.edges) largest[e.dst] = std::max(largest[e.dst], e.volume);
  std::int64_t bound = g.total_volume();
  for (auto v : largest) bound -= v;
  EXPECT_GE(exact.remote_volume_after, bound);
}

}  // namespace

// ---- graph by label (the solving rank's form) ----------------------------------------------------------

namespace scale {

void expect_same_relabeling(const relabeling& a, const relabeling& b, const std::string& where) {
  EXPECT_EQ(a.new_rank_of, b.new_rank_of) << where;
  EXPECT_EQ(a.cost_before, b.cost_before) << where;
  EXPECT_EQ(a.cost_after, b.cost_after) << where;
  EXPECT_EQ(a.remote_volume_before, b.remote_volume_before) << where;
  EXPECT_EQ(a.remote_volume_after, b.remote_volume_after) << where;
  EXPECT_EQ(a.messages_before, b.messages_before) << where;
  EXPECT_EQ(a.messages_after, b.messages_after) << where;
  EXPECT_EQ(a.max_rank_volume_before, b.max_rank_volume_before) << where;
  EXPECT_EQ(a.max_rank_volume_after, b.max_rank_volume_after) << where;
}

// The label ranges [cut_k, cut_k+1) of random cuts, computed one by one and joined, as the ranks do.
label_graph joined_shares(std::mt19937_64& rng, const std::vector<layout_pair>& pairs, int nranks) {
  label_graph all;
  all.nranks = nranks;
  int first = 0;
  while (first < nranks) {
    const int end = std::min(nranks, first + static_cast<int>(rng() % 3));
    const label_graph share = incoming_packages(pairs, nranks, first, end);
    EXPECT_EQ(share.first_label, first);
    EXPECT_EQ(share.label_count(), end - first);
    const std::int64_t base = all.package_count();
    for (int x = 0; x < share.label_count(); ++x) all.label_start.push_back(base + share.label_start[x + 1]);
    all.src.insert(all.src.end(), share.src.begin(), share.src.end());
    all.volume.insert(all.volume.end(), share.volume.begin(), share.volume.end());
    first = end;
  }
  return all;
}

}  // namespace scale

TEST(LabelGraph, SharesOfLabelRangesJoinToTheWholeGraph) {
  std::mt19937_64 rng(test_seed(77));
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % 23), n = 1 + static_cast<std::int64_t>(rng() % 23);
    const int max_ranks = 1 + static_cast<int>(rng() % 9);
    const op o = trial % 2 == 0 ? op::identity : op::transpose;
    const grid_layout a = random_layout(rng, m, n, max_ranks);
    const grid_layout b = o == op::identity ? random_layout(rng, m, n, max_ranks) : random_layout(rng, n, m, max_ranks);
    const grid_layout a2 = random_layout(rng, n, m, max_ranks), b2 = random_layout(rng, n, m, max_ranks);
    const int nranks = std::max({a.ranks_needed(), b.ranks_needed(), a2.ranks_needed(), b2.ranks_needed()});
    const std::vector<layout_pair> pairs = {{&a, &b, o, 8}, {&a2, &b2, op::identity, 4}};
    const label_graph expected = to_label_graph(communication_graph(pairs, nranks));
    const label_graph joined = scale::joined_shares(rng, pairs, nranks);
    ASSERT_EQ(joined.label_start, expected.label_start) << "trial " << trial;
    ASSERT_EQ(joined.src, expected.src) << "trial " << trial;
    ASSERT_EQ(joined.volume, expected.volume) << "trial " << trial;
    const comm_graph back = to_comm_graph(joined);
    EXPECT_EQ(as_map(back), as_map(communication_graph(pairs, nranks)));
  }
  // The N-d form: a matrix pair as 2-d layouts, the source permuted (axes {1, 0}).
  const grid_layout a = bc(30, 20, 4, 3, 2, 3, grid_order::row_major);
  const grid_layout b = bc(20, 30, 5, 2, 3, 2, grid_order::col_major);
  const nd_layout na = to_nd_layout(a), nb = to_nd_layout(b);
  const std::vector<nd_layout_pair> nd_pairs = {{&na, &nb, {1, 0}, 8}};
  const label_graph whole = incoming_packages(nd_pairs, 6, 0, 6);
  const label_graph expected = to_label_graph(communication_graph(nd_pairs, 6));
  EXPECT_EQ(whole.label_start, expected.label_start);
  EXPECT_EQ(whole.src, expected.src);
  EXPECT_EQ(whole.volume, expected.volume);
  EXPECT_THROW(incoming_packages(nd_pairs, 6, 4, 7), invalid_argument);
  EXPECT_THROW(incoming_packages(nd_pairs, 6, 3, 2), invalid_argument);
}

TEST(LabelGraph, UnsortedAndRepeatedEdgesAreMerged) {
  comm_graph g;
  g.nranks = 3;
  g.edges = {{2, 0, 4}, {1, 0, 5}, {2, 0, 1}, {0, 2, 0}, {1, 1, 7}};
  const label_graph l = to_label_graph(g);
  EXPECT_EQ(l.label_start, (std::vector<std::int64_t>{0, 2, 3, 3}));
  EXPECT_EQ(l.src, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(l.volume, (std::vector<std::int64_t>{5, 5, 7}));
  g.edges.push_back({3, 0, 1});
  EXPECT_THROW(to_label_graph(g), invalid_argument);
}

TEST(LabelGraph, FindRelabelingMatchesTheEdgeList) {
  std::mt19937_64 rng(test_seed(91));
  relabel_cost node_aware;
  node_aware.model = relabel_cost::kind::latency_bandwidth;
  relabel_cost transformed;
  transformed.transformed = true;
  for (int trial = 0; trial < 200; ++trial) {
    const int nranks = 1 + static_cast<int>(rng() % 40);
    comm_graph g;
    g.nranks = nranks;
    const int edges = static_cast<int>(rng() % (4 * nranks + 1));
    for (int k = 0; k < edges; ++k)
      g.edges.push_back({static_cast<int>(rng() % nranks), static_cast<int>(rng() % nranks),
                         1 + static_cast<std::int64_t>(rng() % (trial % 2 ? 4 : 1000))});  // ties when small
    std::sort(g.edges.begin(), g.edges.end(),
              [](const edge& a, const edge& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
    g.edges.erase(std::unique(g.edges.begin(), g.edges.end(),
                              [](const edge& a, const edge& b) { return a.src == b.src && a.dst == b.dst; }),
                  g.edges.end());
    const label_graph l = to_label_graph(g);
    const std::string where = "trial " + std::to_string(trial);
    for (solver s : {solver::exact, solver::none, solver::greedy})
      scale::expect_same_relabeling(find_relabeling(l, {}, s), find_relabeling(g, {}, s), where);
    scale::expect_same_relabeling(find_relabeling(l, node_aware), find_relabeling(g, node_aware), where);
    scale::expect_same_relabeling(find_relabeling(l, transformed), find_relabeling(g, transformed), where);
    // The in-place solve gives the answer of the weighted_edge solver on the same gains.
    std::vector<weighted_edge> gains;
    for (int x = 0; x < nranks; ++x)
      for (std::int64_t k = l.label_start[x]; k < l.label_start[x + 1]; ++k)
        gains.push_back({x, l.src[k], static_cast<double>(l.volume[k])});
    EXPECT_EQ(max_volume_assignment(l), max_weight_assignment(nranks, gains)) << where;
  }
  label_graph partial;
  partial.nranks = 2;
  partial.label_start = {0, 0};
  EXPECT_THROW(find_relabeling(partial), invalid_argument);
  EXPECT_THROW(max_volume_assignment(partial), invalid_argument);
  label_graph bad_sender;
  bad_sender.nranks = 1;
  bad_sender.label_start = {0, 1};
  bad_sender.src = {1};
  bad_sender.volume = {5};
  EXPECT_THROW(find_relabeling(bad_sender), invalid_argument);
}
