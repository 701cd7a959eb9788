// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Studies of routed permutations on a torus, as `redist-torus simulate` and bench_torus_fig3 run them: traffic
// patterns, rank mappings and samples around the link-load simulator of redist/torus/simulator.hpp. Part of the
// redist_tools library (tools, benchmarks, tests; not installed).
#include <array>
#include <cstdint>
#include <string>

#include "redist/torus/routing.hpp"
#include "redist/torus/simulator.hpp"
#include "redist/torus/topology.hpp"

namespace redist::torus {

// A whole study, as `redist-torus simulate` runs it.
enum class traffic_pattern : std::uint8_t {
  random = 0,     // a uniformly random permutation per sample (the HPCC transpose's traffic)
  transpose = 1,  // the multi-phase transpose of a P x Q grid, phases one after another
};
enum class mapping_kind : std::uint8_t { default_order = 0, random = 1 };
const char* to_string(traffic_pattern p);
const char* to_string(mapping_kind m);

struct study {
  topology network{std::vector<int>{1}};
  traffic_pattern pattern = traffic_pattern::random;
  int grid_rows = 0, grid_cols = 0;  // transpose: P x Q = nodes (0, 0: the squarest grid with P <= Q)
  mapping_kind mapping = mapping_kind::default_order;
  std::string mapping_order = "XYZ";  // default mapping: slowest to fastest dimension
  routing_options routing{};          // mode direct, sdr or automatic
  hardware_routing hardware = hardware_routing::uniform_shortest;
  time_model model{};
  int samples = 1;  // random pattern or random mapping: independent draws
  std::uint64_t seed = 1;
};
struct study_result {
  std::array<double, 3> mean_load{};  // per dimension, averaged over phases and samples
  std::array<double, 3> max_load{};   // per dimension, the busiest link, averaged over phases and samples
  double completion_time = 0;         // s, per sample (phases summed), averaged over samples
  double direct_completion_time = 0;  // the same traffic sent directly (Base), for the gain
  double mean_alpha = 0;              // the alpha used, averaged over phases and samples
  int phases = 1;                     // permutations per sample
  std::int64_t routed_pairs = 0;      // per sample, summed over phases, averaged (rounded down)
  std::int64_t pairs = 0;             // communicating pairs per sample, summed over phases
};
// Throws redist::invalid_argument for a grid that does not match the node count, samples < 1, bad options.
study_result run_study(const study& s);

}  // namespace redist::torus
