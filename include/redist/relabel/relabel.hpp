#pragma once
// Communication-optimal process relabeling (COSTA paper, Section 4): choose a permutation sigma of
// the target layout's owners so that the cost of the movement is minimal. With gains
// delta(x, y) = cost of label x's incoming data at x - its cost at y, the optimal sigma is a maximum
// weight perfect matching (a linear assignment problem), solved exactly on the sparse graph.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "redist/relabel/graph.hpp"

namespace redist::relabel {

enum class solver : std::uint8_t {
  none = 0,    // identity
  exact = 1,   // optimal assignment (sparse shortest augmenting paths with potentials)
  greedy = 2,  // heaviest-edge-first matching (a 1/2-approximation) for very large P
};
const char* to_string(solver s);

// Cost of sending a package of V bytes from rank i to rank j.
struct cost_model {
  enum class kind : std::uint8_t {
    locally_free_volume = 0,  // w = V for i != j, 0 for i == j (paper Eq. 1)
    latency_bandwidth = 1,    // w = latency(i,j) + V * seconds_per_byte(i,j) for i != j, 0 for i == j
  };
  kind model = kind::locally_free_volume;

  // latency_bandwidth, node-aware form: node_of[rank]; intra-node and inter-node parameters.
  std::vector<int> node_of;
  double latency_intra = 0.5e-6, latency_inter = 2e-6;
  double seconds_per_byte_intra = 1.0 / 10e9, seconds_per_byte_inter = 1.0 / 5e9;

  // latency_bandwidth, user-supplied form (overrides node_of when set): any per-pair cost of a package
  // of V bytes between distinct ranks. Solved densely: meant for P up to a few thousand.
  std::function<double(int src, int dst, std::int64_t bytes)> pair_cost;

  // Per-byte cost of transforming data on receipt (e.g. a transpose costs more than a copy). Every
  // byte is transformed exactly once wherever it lands, so this term does not change the optimal
  // relabeling; it is part of the reported cost.
  double transform_seconds_per_byte = 0.0;
  bool transformed = false;  // whether the movement transforms (op != identity)

  double package_cost(int src, int dst, std::int64_t bytes) const;
};

// A node-aware latency/bandwidth model for the ranks of comm (nodes found with
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). Collective.
cost_model node_aware_cost(MPI_Comm comm);

struct relabeling {
  std::vector<int> new_rank_of;  // target label x is held by rank new_rank_of[x] after relabeling
  double cost_before = 0, cost_after = 0;
  std::int64_t remote_volume_before = 0, remote_volume_after = 0;
  std::int64_t messages_before = 0, messages_after = 0;
  std::int64_t max_rank_volume_before = 0, max_rank_volume_after = 0;
  double solve_seconds = 0;
  double reduction_percent() const;  // of remote volume
};

// Finds the relabeling of the graph's target labels. Deterministic (same input, same answer on every
// rank), so ranks can run it redundantly without communication.
relabeling find_relabeling(const comm_graph& g, const cost_model& cost = {}, solver s = solver::exact);

// ---- assignment solvers (exposed for tests and other capabilities) ----
struct weighted_edge {
  int left = 0;
  int right = 0;
  double weight = 0;
};
// Largest n the dense O(n^3) solvers accept (negative weights, user-supplied pair costs).
inline constexpr int dense_assignment_limit = 5000;

// Maximum-weight perfect matching of the complete bipartite graph on n + n vertices where the listed
// edges have their weights and every other pair has weight 0. Returns right[left]. Exact.
// Listed duplicates of a (left, right) pair add up. Non-negative weights are solved on the sparse graph
// (shortest augmenting paths with potentials, integer arithmetic when all weights are integral); any
// negative weight switches to the dense Hungarian method (n <= dense_assignment_limit).
// Lefts and rights that no positive edge touches are paired with each other, a left x with right x
// when both are left over, so that such ranks keep their labels.
// Throws redist::invalid_argument for n < 0, an index outside [0, n) or a non-finite weight.
std::vector<int> max_weight_assignment(int n, const std::vector<weighted_edge>& edges);
// Greedy counterpart: positive edges heaviest first (ties by left, then right), taken when both ends are
// free; then the same completion as above. At least half the optimum for non-negative weights.
std::vector<int> greedy_assignment(int n, const std::vector<weighted_edge>& edges);
// Minimum-cost perfect matching of a dense n x n matrix (row-major, cost[row * n + col]); returns col[row].
// O(n^3), n <= dense_assignment_limit.
std::vector<int> min_cost_assignment_dense(int n, const std::vector<double>& cost);
// Total weight of an assignment right_of[left] under the listed edges (unlisted pairs weigh 0).
double assignment_weight(const std::vector<weighted_edge>& edges, const std::vector<int>& right_of);

}  // namespace redist::relabel
