// SPDX-License-Identifier: BSD-3-Clause
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

/// Load of every directed link, in messages (fractions where a routing model spreads a message over paths).
class link_loads {
 public:
  /// Every link of t unloaded. Throws nothing.
  explicit link_loads(const topology& t);
  const topology& network() const noexcept { return topology_; }
  /// The link leaving `node` along dim in direction +1 (dir = 0) or -1 (dir = 1). Throws nothing.
  /// @pre 0 <= node < network().nodes(), 0 <= dim <= 2, dir 0 or 1; not checked
  double at(int node, int dim, int dir) const { return load_[index(node, dim, dir)]; }
  /// Adds `weight` messages from source to destination routed by the hardware model.
  /// @throws invalid_argument source or destination is not a node of network(), or validate(hardware) fails
  void add_message(int source, int destination, hardware_routing hardware, double weight = 1.0);
  /// Adds every route (both legs of the routed ones). Checks hardware and every route before it adds any.
  /// @throws invalid_argument validate(hardware) fails, or a route's source, destination or intermediate is not a node
  /// of network(), or its intermediate is one of its ends
  void add(const routed_permutation& p, hardware_routing hardware, double weight = 1.0);

  struct summary {
    std::array<double, 3> mean{};  ///< per dimension: mean over its existing directed links (0 when it has none)
    std::array<double, 3> max{};   ///< per dimension: the most loaded link
  };
  summary summarize() const;  ///< per dimension, the mean and the most loaded link. Throws nothing.

 private:
  std::size_t index(int node, int dim, int dir) const {
    return (static_cast<std::size_t>(node) * 3 + static_cast<std::size_t>(dim)) * 2 + static_cast<std::size_t>(dir);
  }
  topology topology_;
  std::vector<double> load_;
};

/// What one routed permutation costs under the time model.
struct permutation_cost {
  link_loads::summary loads;
  double completion_time = 0;  ///< s
  double link_time = 0;        ///< the busiest link's bytes / link bandwidth
  double node_time = 0;        ///< the busiest node's injection, ejection or forwarding work
  double latency_time = 0;     ///< the longest route's start-up (latencies, hops, first chunk through its intermediate)
};
/// The links' loads of p routed on t under the hardware model, and its completion time under the time model.
/// @throws invalid_argument validate(model) fails, p.beta below 1 while some route has an intermediate, or
/// link_loads::add rejects hardware or a route
permutation_cost simulate(const topology& t, const routed_permutation& p, hardware_routing hardware,
                          const time_model& model);

}  // namespace redist::torus
