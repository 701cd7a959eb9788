#pragma once
// A static link-load simulator for routed permutations on tori and meshes, with a completion-time model on
// top: evaluates routing plans at thousands of nodes without the machine.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "redist/torus/routing.hpp"
#include "redist/torus/topology.hpp"

namespace redist::torus {

// Load of every directed link, in messages (fractions where a routing model spreads a message over paths).
class link_loads {
 public:
  explicit link_loads(const topology& t);
  const topology& network() const noexcept { return topology_; }
  // The link leaving `node` along dim in direction +1 (dir = 0) or -1 (dir = 1).
  double at(int node, int dim, int dir) const { return load_[index(node, dim, dir)]; }
  // Adds `weight` messages from source to destination routed by the hardware model.
  void add_message(int source, int destination, hardware_routing hardware, double weight = 1.0);
  // Adds every route (both legs of the routed ones).
  void add(const routed_permutation& p, hardware_routing hardware, double weight = 1.0);

  struct summary {
    std::array<double, 3> mean{};  // per dimension: mean over its existing directed links (0 when it has none)
    std::array<double, 3> max{};   // per dimension: the most loaded link
  };
  summary summarize() const;

 private:
  std::size_t index(int node, int dim, int dir) const {
    return (static_cast<std::size_t>(node) * 3 + static_cast<std::size_t>(dim)) * 2 + static_cast<std::size_t>(dir);
  }
  topology topology_;
  std::vector<double> load_;
};

// What one routed permutation costs under the time model.
struct permutation_cost {
  link_loads::summary loads;
  double completion_time = 0;  // s
  double link_time = 0;        // the busiest link's bytes / link bandwidth
  double node_time = 0;        // the busiest node's injection, ejection or forwarding work
  double latency_time = 0;     // the longest route's start-up (latencies, hops, first chunk through its intermediate)
};
permutation_cost simulate(const topology& t, const routed_permutation& p, hardware_routing hardware,
                          const time_model& model);

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
  int grid_rows = 0, grid_cols = 0;         // transpose: P x Q = nodes (0, 0: the squarest grid with P <= Q)
  mapping_kind mapping = mapping_kind::default_order;
  std::string mapping_order = "XYZ";        // default mapping: slowest to fastest dimension
  routing_options routing{};                // mode direct, sdr or automatic
  hardware_routing hardware = hardware_routing::uniform_shortest;
  time_model model{};
  int samples = 1;                          // random pattern or random mapping: independent draws
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
