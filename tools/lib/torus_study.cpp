// SPDX-License-Identifier: BSD-3-Clause
// Studies of routed permutations (redist_tools/torus_study.hpp): the traffic of a study, routed and simulated
// sample by sample; the names of its options.
#include "redist_tools/torus_study.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../../src/names_table.hpp"
#include "redist/error.hpp"
#include "redist/torus/schedule.hpp"

namespace redist {
namespace names_detail {

template <>
struct table<torus::traffic_pattern> {
  using E = torus::traffic_pattern;
  static constexpr const char* option = "traffic pattern";
  static constexpr std::array<spelling<E>, 2> current{{{E::random, "random"}, {E::transpose, "transpose"}}};
};

template <>
struct table<torus::mapping_kind> {
  using E = torus::mapping_kind;
  static constexpr const char* option = "rank mapping";
  static constexpr std::array<spelling<E>, 2> current{{{E::default_order, "default_order"}, {E::random, "random"}}};
};

}  // namespace names_detail

REDIST_NAMED_ENUM(torus::traffic_pattern)
REDIST_NAMED_ENUM(torus::mapping_kind)
#undef REDIST_NAMED_ENUM

namespace torus {

const char* to_string(traffic_pattern p) { return names_detail::name_in_table(p); }
const char* to_string(mapping_kind m) { return names_detail::name_in_table(m); }

namespace {

// The squarest P x Q = nodes with P <= Q.
std::array<int, 2> squarest_grid(int nodes) {
  int rows = 1;
  for (int p = 1; static_cast<std::int64_t>(p) * p <= nodes; ++p)
    if (nodes % p == 0) rows = p;
  return {rows, nodes / rows};
}

// A uniformly random permutation of the nodes for one sample: Fisher-Yates with its own index draws from a
// generator seeded by (seed, sample), so that every platform draws the same permutations.
std::vector<int> random_permutation(int nodes, std::uint64_t seed, int sample) {
  std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(sample)};
  std::mt19937_64 gen(seeds);
  std::vector<int> destination(static_cast<size_t>(nodes));
  std::iota(destination.begin(), destination.end(), 0);
  for (std::size_t i = destination.size(); i > 1; --i) std::swap(destination[i - 1], destination[gen() % i]);
  return destination;
}

// The default mapping's order restricted to the dimensions the network has ("XYZ" on a 2D torus: "XY").
std::string existing_dimensions(const topology& t, const std::string& order) {
  std::string kept;
  for (const char letter : order) {
    const bool missing = (letter == 'Y' && t.dimensions() < 2) || (letter == 'Z' && t.dimensions() < 3);
    if (!missing) kept += letter;
  }
  return kept;
}

}  // namespace

study_result run_study(const study& s) {
  if (s.samples < 1) throw invalid_argument("torus study: samples = " + std::to_string(s.samples) + ", expected >= 1");
  validate(s.routing);
  const topology& t = s.network;
  const int nodes = t.nodes();

  transpose_schedule schedule;
  if (s.pattern == traffic_pattern::transpose) {
    std::array<int, 2> grid{s.grid_rows, s.grid_cols};
    if (s.grid_rows == 0 && s.grid_cols == 0) grid = squarest_grid(nodes);
    if (grid[0] < 1 || grid[1] < 1 || static_cast<std::int64_t>(grid[0]) * grid[1] != nodes)
      throw invalid_argument("torus study: transpose grid " + std::to_string(s.grid_rows) + " x " +
                             std::to_string(s.grid_cols) + " on the " + std::to_string(nodes) + " nodes of " +
                             t.to_string() + ", expected P x Q = " + std::to_string(nodes) +
                             " (or 0 x 0 for the squarest grid)");
    schedule = multiphase_transpose_schedule(grid[0], grid[1]);
  }
  const std::string order = existing_dimensions(t, s.mapping_order);
  // With the default mapping the transpose is the same every sample: one draw says it all.
  const bool drawn = s.pattern == traffic_pattern::random || s.mapping == mapping_kind::random;
  const int draws = drawn ? s.samples : 1;

  // The automatic mode tunes with the model the study simulates.
  routing_options routing = s.routing;
  routing.hardware = s.hardware;
  routing.model = s.model;
  routing_options direct = routing;
  direct.mode = routing_mode::direct;

  study_result result;
  result.phases = s.pattern == traffic_pattern::transpose ? schedule.phases() : 1;
  std::int64_t routed_total = 0, pairs_total = 0;
  std::vector<int> destination(static_cast<size_t>(nodes));
  for (int sample = 0; sample < draws; ++sample) {
    std::vector<std::vector<int>> permutations;
    if (s.pattern == traffic_pattern::random) {
      permutations.push_back(random_permutation(nodes, s.seed, sample));
    } else {
      const rank_mapping mapping = s.mapping == mapping_kind::random
                                       ? rank_mapping::random(t, s.seed + static_cast<std::uint64_t>(sample))
                                       : rank_mapping::dimension_ordered(t, order);
      for (const std::vector<int>& send_to : schedule.send_to) {
        for (int r = 0; r < nodes; ++r)
          destination[static_cast<size_t>(mapping.node_of_rank(r))] =
              mapping.node_of_rank(send_to[static_cast<size_t>(r)]);
        permutations.push_back(destination);
      }
    }
    for (const std::vector<int>& permutation : permutations) {
      const routed_permutation routed = route_permutation(t, permutation, routing);
      const permutation_cost cost = simulate(t, routed, s.hardware, s.model);
      for (std::size_t d = 0; d < 3; ++d) {
        result.mean_load[d] += cost.loads.mean[d];
        result.max_load[d] += cost.loads.max[d];
      }
      result.completion_time += cost.completion_time;
      result.direct_completion_time +=
          routing.mode == routing_mode::direct
              ? cost.completion_time
              : simulate(t, route_permutation(t, permutation, direct), s.hardware, s.model).completion_time;
      result.mean_alpha += routed.alpha;
      routed_total += routed.routed();
      pairs_total += static_cast<std::int64_t>(routed.routes.size());
    }
  }
  const double permutations = static_cast<double>(draws) * result.phases;
  for (std::size_t d = 0; d < 3; ++d) {
    result.mean_load[d] /= permutations;
    result.max_load[d] /= permutations;
  }
  result.completion_time /= draws;
  result.direct_completion_time /= draws;
  result.mean_alpha /= permutations;
  result.routed_pairs = routed_total / draws;
  result.pairs = pairs_total / draws;
  return result;
}

}  // namespace torus
}  // namespace redist
