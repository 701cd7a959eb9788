// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Communication-optimal process relabeling (COSTA paper, Section 4): choose a permutation sigma of
// the target layout's owners so that the cost of the movement is minimal. With gains
// delta(x, y) = cost of label x's incoming data at x - its cost at y, the optimal sigma is a maximum
// weight perfect matching (a linear assignment problem), solved exactly on the sparse graph.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "redist/cost_model.hpp"
#include "redist/relabel/graph.hpp"

namespace redist::relabel {

enum class solver : std::uint8_t {
  none = 0,    ///< identity
  exact = 1,   ///< optimal assignment (sparse shortest augmenting paths with potentials)
  greedy = 2,  ///< heaviest-edge-first matching (a 1/2-approximation) for very large P
};
const char* to_string(solver s);  ///< "?" for a value outside the enum; throws nothing

/// What the relabeling minimises: the cost of sending a package of V bytes from rank i to rank j.
struct relabel_cost {
  enum class kind : std::uint8_t {
    locally_free_volume = 0,  ///< w = V for i != j, 0 for i == j (paper Eq. 1)
    latency_bandwidth = 1,    ///< w = latency(i,j) + V * seconds_per_byte(i,j) for i != j, 0 for i == j
  };
  kind model = kind::locally_free_volume;

  /// latency_bandwidth: the intra_/inter_latency and intra_/inter_seconds_per_byte of the machine's prices (the
  /// one cost model type of redist/cost_model.hpp; its other figures are the neighbor exchange's). Node-aware
  /// form: node_of[rank] says which ranks pay the intra-region price; empty node_of = every rank on its own node
  /// (all packages between distinct ranks pay the inter-node price). The relabeling gains are taken relative to a
  /// rank on a node with no sender, so only ranks on nodes holding a sender of a label get a non-zero gain and the
  /// assignment stays sparse.
  cost_model prices;
  std::vector<int> node_of;

  /// latency_bandwidth, user-supplied form (overrides node_of when set): any per-pair cost of a package
  /// of V bytes between distinct ranks. Solved densely: meant for P up to a few thousand.
  std::function<double(int src, int dst, std::int64_t bytes)> pair_cost;

  /// Whether the movement transforms (op != identity): then every package, local or not, also pays
  /// prices.transform_seconds_per_byte. Every byte is transformed exactly once wherever it lands, so this term
  /// does not change the optimal relabeling; it is part of the reported cost.
  bool transformed = false;

  /// w(src, dst, bytes): 0 for an empty package; the transform term (when `transformed`) for src == dst;
  /// otherwise the model's price plus the transform term. Throws invalid_argument when node_of is set and
  /// does not cover src or dst.
  /// @throws invalid_argument node_of is used (latency_bandwidth, no pair_cost) and src or dst has no entry in it
  ///   (what pair_cost throws passes through)
  double package_cost(int src, int dst, std::int64_t bytes) const;
};

/// A node-aware latency/bandwidth objective for the ranks of comm (nodes found with
/// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). Collective. Node ids are dense and numbered in the order of
/// their lowest rank (rank 0 is on node 0), identical on every rank. Default prices.
/// Throws redist::mpi_error when an MPI call fails.
/// @pre collective: every rank of comm calls it
/// @throws mpi_error an MPI call failed (on every rank: the node discovery is agreed)
relabel_cost node_aware_cost(MPI_Comm comm);

struct relabeling {
  std::vector<int> new_rank_of;            ///< target label x is held by rank new_rank_of[x] after relabeling
  double cost_before = 0, cost_after = 0;  ///< W(G) and W(G_sigma) under the cost model
  std::int64_t remote_volume_before = 0, remote_volume_after = 0;
  std::int64_t messages_before = 0, messages_after = 0;
  std::int64_t max_rank_volume_before = 0, max_rank_volume_after = 0;
  double solve_seconds = 0;          ///< building the gains and solving the assignment (not the statistics)
  double reduction_percent() const;  ///< of remote volume; 0 when nothing was remote; throws nothing
};

/// Finds the relabeling of the graph's target labels. Deterministic (same input, same answer on every
/// rank), so ranks can run it redundantly without communication. When the solver's answer does not lower
/// the cost (a tie with the identity, or a greedy answer that is worse), the identity is returned, so
/// labels only move when it pays. Costs: locally-free volume and node-aware models are solved on the
/// sparse graph (P = 10 000 in well under a second); a user pair_cost is solved densely, P <= 5000.
/// Throws invalid_argument for edges outside [0, nranks), a node_of of the wrong size or a dense problem
/// above the limit.
/// @throws invalid_argument nranks < 0, an edge outside [0, nranks) or with a negative volume, a solver or cost
///   model that is not an enumerator, a node_of of the wrong size, or a pair_cost problem with more than
///   dense_assignment_limit ranks (what pair_cost throws passes through)
relabeling find_relabeling(const comm_graph& g, const relabel_cost& cost = {}, solver s = solver::exact);

/// The same for a graph held by label (all labels, as a solving rank gathers it): the same answer and figures as
/// find_relabeling(to_comm_graph(g), cost, s). The exact locally-free solve (without the transform term) reads
/// the graph in place, so the solving rank holds the graph's 12 bytes per package plus O(nranks); other models
/// and solvers go through the edge list. Throws invalid_argument as above, and for a graph that does not hold
/// all labels.
/// @throws invalid_argument as above; a graph that does not hold all labels [0, nranks), whose offsets decrease or
///   do not match its senders and volumes, or with a sender outside [0, nranks) or a negative volume
relabeling find_relabeling(const label_graph& g, const relabel_cost& cost = {}, solver s = solver::exact);

/// ---- assignment solvers (exposed for tests and other capabilities) ----
struct weighted_edge {
  int left = 0;
  int right = 0;
  double weight = 0;
};
/// Largest n the dense O(n^3) solvers accept (negative weights, user-supplied pair costs).
inline constexpr int dense_assignment_limit = 5000;

/// Maximum-weight perfect matching of the complete bipartite graph on n + n vertices where the listed
/// edges have their weights and every other pair has weight 0. Returns right[left]. Exact.
/// Listed duplicates of a (left, right) pair add up. Non-negative weights are solved on the sparse graph
/// (shortest augmenting paths with potentials, integer arithmetic when all weights are integral); any
/// negative weight switches to the dense Hungarian method (n <= dense_assignment_limit).
/// Lefts and rights that no positive edge touches are paired with each other, a left x with right x
/// when both are left over, so that such ranks keep their labels.
/// Throws redist::invalid_argument for n < 0, an index outside [0, n) or a non-finite weight.
/// @throws invalid_argument n < 0, an index outside [0, n), a non-finite weight, or a negative weight with
///   n > dense_assignment_limit
std::vector<int> max_weight_assignment(int n, const std::vector<weighted_edge>& edges);
/// max_weight_assignment with the gain of rank y for label x being the volume y sends to x (the locally-free
/// gains), read from the graph in place: the same answer as max_weight_assignment on those gains. g must hold
/// all labels with positive volumes, else invalid_argument.
/// @pre label_start non-decreasing, with src and volume holding package_count() entries each
/// @throws invalid_argument nranks < 0, a graph that does not hold all labels, a sender outside [0, nranks) or a
///   volume <= 0
std::vector<int> max_volume_assignment(const label_graph& g);
/// Greedy counterpart: positive edges heaviest first (ties by left, then right), taken when both ends are
/// free; then the same completion as above. At least half the optimum for non-negative weights.
/// @throws invalid_argument n < 0, an index outside [0, n) or a non-finite weight
std::vector<int> greedy_assignment(int n, const std::vector<weighted_edge>& edges);
/// Minimum-cost perfect matching of a dense n x n matrix (row-major, cost[row * n + col]); returns col[row].
/// O(n^3), n <= dense_assignment_limit.
/// @throws invalid_argument n < 0, n > dense_assignment_limit, a matrix of other than n * n entries, or a
///   non-finite cost
std::vector<int> min_cost_assignment_dense(int n, const std::vector<double>& cost);
/// Total weight of an assignment right_of[left] under the listed edges (unlisted pairs weigh 0). Throws nothing;
/// edges whose left is outside right_of count 0.
double assignment_weight(const std::vector<weighted_edge>& edges, const std::vector<int>& right_of);

}  // namespace redist::relabel
