// SPDX-License-Identifier: BSD-3-Clause
// Communication-optimal process relabeling (COSTA paper, Section 4).
//
// A relabeling sigma moves target label x to rank sigma(x): the packages S_ix then go from i to
// sigma(x). The gain of putting label x on rank y is
//   delta(x, y) = sum_i [w(i, x, S_ix) - w(i, y, S_ix)]
// and the best sigma maximises sum_x delta(x, sigma(x)), a linear assignment problem. Any term that
// does not depend on y can be dropped from delta(x, .) without changing the optimum; the gains below
// are chosen so that most pairs (x, y) weigh 0 and the assignment problem stays sparse.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gathered.hpp"
#include "machine/host.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "redist/relabel/relabel.hpp"

namespace redist::relabel {

namespace {

void check_graph(const comm_graph& g) {
  if (g.nranks < 0) throw invalid_argument("find_relabeling: nranks must be >= 0, got " + std::to_string(g.nranks));
  for (const auto& e : g.edges)
    if (e.src < 0 || e.src >= g.nranks || e.dst < 0 || e.dst >= g.nranks || e.volume < 0)
      throw invalid_argument("find_relabeling: edge (" + std::to_string(e.src) + " -> " + std::to_string(e.dst) + ", " +
                             std::to_string(e.volume) + " bytes) is outside [0, " + std::to_string(g.nranks) +
                             ") or has a negative volume");
}

double graph_cost(const comm_graph& g, const relabel_cost& cost) {
  double total = 0;
  for (const auto& e : g.edges) total += cost.package_cost(e.src, e.dst, e.volume);
  return total;
}

// Locally-free volume (Eq. 1): delta(x, y) = V(S_yx) - V(S_xx); the second term does not depend on y,
// so the gain of y for x is simply the volume y already holds of x's data.
// Returned sorted by (label, rank), the order the solvers work in, by a counting sort of the graph's
// (src, dst) order.
std::vector<weighted_edge> locally_free_gains(const comm_graph& g) {
  std::vector<size_t> label_start(static_cast<size_t>(g.nranks) + 1, 0);
  for (const auto& e : g.edges)
    if (e.volume > 0) ++label_start[static_cast<size_t>(e.dst) + 1];
  for (size_t x = 0; x < static_cast<size_t>(g.nranks); ++x) label_start[x + 1] += label_start[x];
  std::vector<weighted_edge> gains(label_start.back());
  for (const auto& e : g.edges)
    if (e.volume > 0) gains[label_start[e.dst]++] = {e.dst, e.src, static_cast<double>(e.volume)};
  return gains;
}

// Node-aware latency/bandwidth: gains relative to a hypothetical "far" rank that shares a node with no
// sender of x (every package to it costs the inter-node price). For a sender i of x and a candidate y:
//   other node than y:       w(i, y) = far price       -> contributes 0
//   i == y:                  w(i, y) = 0               -> contributes the far price
//   same node as y, i != y:  intra-node price          -> contributes far - intra
// so only ranks on nodes that hold a sender of x get a non-zero gain.
std::vector<weighted_edge> node_aware_gains(const comm_graph& g, const relabel_cost& cost) {
  const int n = g.nranks;
  std::vector<int> node_of = cost.node_of;
  if (node_of.empty()) {  // no node information: every rank on its own node
    node_of.resize(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) node_of[r] = r;
  }
  // Dense node ids and the ranks of each node (ascending).
  std::vector<int> node_ids = node_of;
  std::sort(node_ids.begin(), node_ids.end());
  node_ids.erase(std::unique(node_ids.begin(), node_ids.end()), node_ids.end());
  std::vector<int> node(static_cast<size_t>(n));
  std::vector<std::vector<int>> ranks_on_node(node_ids.size());
  for (int r = 0; r < n; ++r) {
    node[r] = static_cast<int>(std::lower_bound(node_ids.begin(), node_ids.end(), node_of[r]) - node_ids.begin());
    ranks_on_node[node[r]].push_back(r);
  }

  const double far_latency = cost.prices.inter_latency, far_per_byte = cost.prices.inter_seconds_per_byte;
  const double saved_latency = cost.prices.inter_latency - cost.prices.intra_latency;
  const double saved_per_byte = cost.prices.inter_seconds_per_byte - cost.prices.intra_seconds_per_byte;

  // Senders of each label x (edges sorted by (src, dst): bucket them by dst).
  std::vector<std::vector<const edge*>> senders(static_cast<size_t>(n));
  for (const auto& e : g.edges)
    if (e.volume > 0) senders[e.dst].push_back(&e);

  std::vector<weighted_edge> gains;
  std::vector<double> node_base(node_ids.size(), 0.0), own_bonus(static_cast<size_t>(n), 0.0);
  std::vector<char> node_touched(node_ids.size(), 0);
  std::vector<int> touched_nodes;
  for (int x = 0; x < n; ++x) {
    touched_nodes.clear();
    for (const edge* e : senders[x]) {
      const int nd = node[e->src];
      if (!node_touched[nd]) {
        node_touched[nd] = 1;
        touched_nodes.push_back(nd);
      }
      const double intra_gain = saved_latency + static_cast<double>(e->volume) * saved_per_byte;
      const double far = far_latency + static_cast<double>(e->volume) * far_per_byte;
      node_base[nd] += intra_gain;
      own_bonus[e->src] += far - intra_gain;
    }
    std::sort(touched_nodes.begin(), touched_nodes.end());
    for (int nd : touched_nodes) {
      for (int y : ranks_on_node[nd]) {
        const double gain = node_base[nd] + own_bonus[y];
        if (gain != 0) gains.push_back({x, y, gain});
      }
      node_base[nd] = 0;
      node_touched[nd] = 0;
    }
    for (const edge* e : senders[x]) own_bonus[e->src] = 0;
  }
  return gains;
}

// User-supplied pair costs: cost of putting label x on rank y, C[x][y] = sum_i w(i, y, S_ix), dense.
std::vector<double> dense_label_costs(const comm_graph& g, const relabel_cost& cost) {
  const int n = g.nranks;
  if (n > dense_assignment_limit)
    throw invalid_argument("find_relabeling: a relabel_cost with pair_cost is solved densely and is limited to " +
                           std::to_string(dense_assignment_limit) + " ranks, got " + std::to_string(n) +
                           "; use the node-aware or locally-free-volume model");
  std::vector<double> costs(static_cast<size_t>(n) * n, 0.0);
  for (const auto& e : g.edges) {
    if (e.volume == 0) continue;
    double* row = costs.data() + static_cast<size_t>(e.dst) * n;
    for (int y = 0; y < n; ++y)
      if (y != e.src) row[y] += cost.pair_cost(e.src, y, e.volume);
  }
  return costs;
}

std::vector<int> identity_permutation(int n) {
  std::vector<int> id(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) id[r] = r;
  return id;
}

std::vector<int> solve(const comm_graph& g, const relabel_cost& cost, solver s) {
  const int n = g.nranks;
  if (s == solver::none) return identity_permutation(n);
  check_request(cost, s, n);
  if (cost.model == relabel_cost::kind::locally_free_volume) {
    // The exact solver reads the gains (the volumes) from the graph by label, without a gains list.
    if (s == solver::exact) return max_volume_assignment(to_label_graph(g));
    return greedy_assignment(n, locally_free_gains(g));
  }
  if (!cost.pair_cost) {
    const auto gains = node_aware_gains(g, cost);
    return s == solver::exact ? max_weight_assignment(n, gains) : greedy_assignment(n, gains);
  }
  const std::vector<double> costs = dense_label_costs(g, cost);
  if (s == solver::exact) return min_cost_assignment_dense(n, costs);
  // Greedy on the gains relative to the identity: C[x][x] - C[x][y], positive ones only.
  std::vector<weighted_edge> gains;
  for (int x = 0; x < n; ++x)
    for (int y = 0; y < n; ++y) {
      const double gain = costs[static_cast<size_t>(x) * n + x] - costs[static_cast<size_t>(x) * n + y];
      if (gain > 0) gains.push_back({x, y, gain});
    }
  return greedy_assignment(n, gains);
}

// Remote volume, messages and the busiest rank's remote bytes of a graph by label, with label x on rank x
// (before) and on rank new_rank_of[x] (after), in one pass; sums in int64, so they do not depend on the order
// of the packages.
struct placement_figures {
  std::int64_t remote_volume = 0, messages = 0, max_rank_volume = 0;
};

void figures_of(const label_graph& g, const std::vector<int>& new_rank_of, placement_figures& before,
                placement_figures& after) {
  const auto n = static_cast<size_t>(g.nranks);
  // Per rank: remote bytes sent and received before, then after.
  std::vector<std::int64_t> traffic(4 * n, 0);
  std::int64_t* sent_before = traffic.data();
  std::int64_t* received_before = sent_before + n;
  std::int64_t* sent_after = received_before + n;
  std::int64_t* received_after = sent_after + n;
  for (size_t x = 0; x < n; ++x) {
    const auto moved_to = static_cast<size_t>(new_rank_of[x]);
    for (std::int64_t k = g.label_start[x]; k < g.label_start[x + 1]; ++k) {
      const auto src = static_cast<size_t>(g.src[static_cast<size_t>(k)]);
      const std::int64_t volume = g.volume[static_cast<size_t>(k)];
      if (src != x) {
        before.remote_volume += volume;
        ++before.messages;
        sent_before[src] += volume;
        received_before[x] += volume;
      }
      if (src != moved_to) {
        after.remote_volume += volume;
        ++after.messages;
        sent_after[src] += volume;
        received_after[moved_to] += volume;
      }
    }
  }
  for (size_t r = 0; r < n; ++r) {
    before.max_rank_volume = std::max({before.max_rank_volume, sent_before[r], received_before[r]});
    after.max_rank_volume = std::max({after.max_rank_volume, sent_after[r], received_after[r]});
  }
}

void check_label_graph(const label_graph& g) {
  if (g.nranks < 0) throw invalid_argument("find_relabeling: nranks must be >= 0, got " + std::to_string(g.nranks));
  if (g.first_label != 0 || g.label_count() != g.nranks || g.label_start.front() != 0 ||
      g.src.size() != static_cast<size_t>(g.package_count()) || g.volume.size() != g.src.size())
    throw invalid_argument("find_relabeling: the graph by label holds labels [" + std::to_string(g.first_label) + ", " +
                           std::to_string(g.first_label + g.label_count()) + ") and " + std::to_string(g.src.size()) +
                           " packages for " + std::to_string(g.package_count()) + " offsets; expected all of [0, " +
                           std::to_string(g.nranks) + ") and one sender and volume per package");
  for (size_t x = 0; x + 1 < g.label_start.size(); ++x)
    if (g.label_start[x + 1] < g.label_start[x])
      throw invalid_argument("find_relabeling: the package offsets of the graph by label decrease at label " +
                             std::to_string(x) + "; expected non-decreasing offsets");
  for (size_t k = 0; k < g.src.size(); ++k)
    if (g.src[k] < 0 || g.src[k] >= g.nranks || g.volume[k] < 0)
      throw invalid_argument("find_relabeling: package " + std::to_string(k) + " (from " + std::to_string(g.src[k]) +
                             ", " + std::to_string(g.volume[k]) + " bytes) has a sender outside [0, " +
                             std::to_string(g.nranks) + ") or a negative volume");
}

}  // namespace

void check_request(const relabel_cost& cost, solver s, int nranks) {
  if (s == solver::none) return;  // the identity: nothing else is looked at
  if (s != solver::exact && s != solver::greedy)
    throw invalid_argument("find_relabeling: unknown solver " + std::to_string(static_cast<int>(s)) +
                           "; expected none, exact or greedy");
  if (cost.model == relabel_cost::kind::locally_free_volume) return;
  if (cost.model != relabel_cost::kind::latency_bandwidth)
    throw invalid_argument("find_relabeling: unknown cost model " + std::to_string(static_cast<int>(cost.model)));
  if (!cost.pair_cost && !cost.node_of.empty() && cost.node_of.size() != static_cast<size_t>(nranks))
    throw invalid_argument("find_relabeling: relabel_cost::node_of has " + std::to_string(cost.node_of.size()) +
                           " entries, expected one per rank (" + std::to_string(nranks) + ")");
}

double relabel_cost::package_cost(int src, int dst, std::int64_t bytes) const {
  if (bytes <= 0) return 0.0;  // w(i, j, empty) = 0
  const double volume = static_cast<double>(bytes);
  const double transform = transformed ? prices.transform_seconds_per_byte * volume : 0.0;
  if (src == dst) return transform;
  if (model == kind::locally_free_volume) return volume + transform;
  if (pair_cost) return pair_cost(src, dst, bytes) + transform;
  bool same_node = false;
  if (!node_of.empty()) {
    if (src < 0 || dst < 0 || static_cast<size_t>(src) >= node_of.size() || static_cast<size_t>(dst) >= node_of.size())
      throw invalid_argument("relabel_cost::package_cost: rank " + std::to_string(std::max(src, dst)) +
                             " has no entry in node_of (" + std::to_string(node_of.size()) + " entries)");
    same_node = node_of[src] == node_of[dst];
  }
  return same_node ? prices.intra_latency + volume * prices.intra_seconds_per_byte + transform
                   : prices.inter_latency + volume * prices.inter_seconds_per_byte + transform;
}

relabel_cost node_aware_cost(MPI_Comm comm) {
  // A node is named by the lowest rank of comm on it, so every rank derives the same numbering. The leaders are
  // found in an agreed collective step: a rank whose split fails fails every rank, and none keeps cached leaders
  // the others will gather again.
  std::vector<int> leader_of;
  {
    mpi::agreement agreed(comm);
    agreed.collective([&] { leader_of = machine::node_leaders(comm); });
    agreed.on_failure([comm] { machine::forget_node_leaders(comm); });
    agreed.conclude();
  }
  relabel_cost model;
  model.model = relabel_cost::kind::latency_bandwidth;
  // Dense node ids in the order of the leaders: node 0 holds rank 0.
  std::vector<int> leaders = leader_of;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  model.node_of.resize(leader_of.size());
  for (size_t r = 0; r < leader_of.size(); ++r)
    model.node_of[r] =
        static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), leader_of[r]) - leaders.begin());
  return model;
}

double relabeling::reduction_percent() const {
  if (remote_volume_before <= 0) return 0.0;
  return 100.0 * static_cast<double>(remote_volume_before - remote_volume_after) /
         static_cast<double>(remote_volume_before);
}

relabeling find_relabeling(const comm_graph& g, const relabel_cost& cost, solver s) {
  check_graph(g);
  relabeling out;
  const auto started = std::chrono::steady_clock::now();
  std::vector<int> new_rank_of = solve(g, cost, s);
  out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  out.cost_before = graph_cost(g, cost);
  out.remote_volume_before = g.remote_volume();
  out.messages_before = g.remote_messages();
  out.max_rank_volume_before = g.max_rank_volume();

  comm_graph after = relabel_graph(g, new_rank_of);
  double cost_after = graph_cost(after, cost);
  // Relabel only when it pays: an optimum that merely ties with the identity (or a greedy answer that is
  // worse) would move labels for nothing.
  if (!(cost_after < out.cost_before)) {
    new_rank_of = identity_permutation(g.nranks);
    after = g;
    cost_after = out.cost_before;
  }
  out.new_rank_of = std::move(new_rank_of);
  out.cost_after = cost_after;
  out.remote_volume_after = after.remote_volume();
  out.messages_after = after.remote_messages();
  out.max_rank_volume_after = after.max_rank_volume();
  return out;
}

relabeling find_relabeling(const label_graph& g, const relabel_cost& cost, solver s) {
  check_label_graph(g);
  // In place: locally-free costs are the remote volumes, integers whose double sums are exact below 2^53 in any
  // order, so the figures equal those of the edge list; the senders of each label must be ascending and distinct
  // (the order the edge list's solver sees) with positive volumes.
  bool in_place = cost.model == relabel_cost::kind::locally_free_volume && !cost.transformed &&
                  (s == solver::exact || s == solver::none);
  std::int64_t total = 0;
  for (size_t x = 0; x < static_cast<size_t>(g.nranks) && in_place; ++x)
    for (std::int64_t k = g.label_start[x]; k < g.label_start[x + 1] && in_place; ++k) {
      const auto at = static_cast<size_t>(k);
      const bool ascending = k == g.label_start[x] || g.src[at - 1] < g.src[at];
      in_place = ascending && g.volume[at] > 0 && !__builtin_add_overflow(total, g.volume[at], &total) &&
                 total < (std::int64_t{1} << 53);
    }
  if (!in_place) return find_relabeling(to_comm_graph(g), cost, s);

  relabeling out;
  const auto started = std::chrono::steady_clock::now();
  std::vector<int> new_rank_of = s == solver::exact ? max_volume_assignment(g) : identity_permutation(g.nranks);
  out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  placement_figures before, after;
  figures_of(g, new_rank_of, before, after);
  out.cost_before = static_cast<double>(before.remote_volume);
  // Relabel only when it pays, as for the edge list.
  if (!(after.remote_volume < before.remote_volume)) {
    new_rank_of = identity_permutation(g.nranks);
    after = before;
  }
  out.new_rank_of = std::move(new_rank_of);
  out.cost_after = static_cast<double>(after.remote_volume);
  out.remote_volume_before = before.remote_volume;
  out.remote_volume_after = after.remote_volume;
  out.messages_before = before.messages;
  out.messages_after = after.messages;
  out.max_rank_volume_before = before.max_rank_volume;
  out.max_rank_volume_after = after.max_rank_volume;
  return out;
}

}  // namespace redist::relabel
