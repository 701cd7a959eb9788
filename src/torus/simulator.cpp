// SPDX-License-Identifier: BSD-3-Clause
#include "redist/torus/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "redist/error.hpp"
#include "redist/torus/schedule.hpp"

namespace redist::torus {

namespace {

// How one message (or leg) travels along every dimension once the direction of each is fixed.
struct leg {
  coordinate from{};
  std::array<int, 3> step{};  // +1 or -1 (0 where there are no hops)
  std::array<int, 3> hops{};
};

// Scratch of the path-spreading models: the probability that a message is at each cell of its box of
// shortest paths. Kept per thread and only ever grown, so no message allocates.
std::vector<double>& reach_scratch() {
  thread_local std::vector<double> reach;
  return reach;
}

int moved(const topology& t, int dim, int position, int step) {
  position += step;
  if (position < 0) return position + t.extent(dim);
  if (position >= t.extent(dim)) return position - t.extent(dim);
  return position;
}

void check_node(const topology& t, int node, const char* role) {
  if (node < 0 || node >= t.nodes())
    throw invalid_argument(std::string("torus link loads: ") + role + " node " + std::to_string(node) +
                           " is not a node of the " + t.to_string() + " network, expected 0.." +
                           std::to_string(t.nodes() - 1));
}

// Adds `weight` along the shortest paths of one leg under the hardware model. `load` is indexed
// (node * 3 + dim) * 2 + dir as link_loads' own array.
void spread(const topology& t, std::vector<double>& load, const leg& l, hardware_routing hardware, double weight) {
  const int n_y = t.extent(1), n_z = t.extent(2);
  const auto link = [&](int x, int y, int z, int dim) {
    const std::size_t node = static_cast<std::size_t>((x * n_y + y) * n_z + z);
    return (node * 3 + static_cast<std::size_t>(dim)) * 2 + (l.step[static_cast<size_t>(dim)] > 0 ? 0 : 1);
  };
  const int travelled = (l.hops[0] > 0) + (l.hops[1] > 0) + (l.hops[2] > 0);
  // Along a single dimension every model takes the one straight path.
  if (hardware == hardware_routing::dimension_order || hardware == hardware_routing::simgrid_torus || travelled <= 1) {
    coordinate c = l.from;
    const bool z_first = hardware == hardware_routing::simgrid_torus;
    for (int k = 0; k < 3; ++k) {
      const int dim = z_first ? 2 - k : k;
      for (int h = 0; h < l.hops[static_cast<size_t>(dim)]; ++h) {
        load[link(c[0], c[1], c[2], dim)] += weight;
        c[static_cast<size_t>(dim)] = moved(t, dim, c[static_cast<size_t>(dim)], l.step[static_cast<size_t>(dim)]);
      }
    }
    return;
  }
  // Both adaptive models as one forward pass over the box of cells (i, j, k) = hops done per dimension:
  // reach[cell] is the probability the message passes the cell; from it, each dimension with hops left takes
  // a share. A uniformly random shortest path takes dimension d next with probability (hops left in d) /
  // (hops left), since that is the fraction of the remaining paths starting with d; random_direction gives
  // each dimension with hops left the same share.
  const int a = l.hops[0], b = l.hops[1], c = l.hops[2];
  const std::size_t stride_x = static_cast<std::size_t>(b + 1) * static_cast<std::size_t>(c + 1);
  const std::size_t stride_y = static_cast<std::size_t>(c + 1);
  const std::size_t cells = static_cast<std::size_t>(a + 1) * stride_x;
  std::vector<double>& reach = reach_scratch();
  if (reach.size() < cells) reach.resize(cells);
  std::fill(reach.begin(), reach.begin() + static_cast<std::ptrdiff_t>(cells), 0.0);
  reach[0] = 1.0;
  const bool uniform = hardware == hardware_routing::uniform_shortest;
  int x = l.from[0];
  for (int i = 0; i <= a; ++i, x = moved(t, 0, x, l.step[0])) {
    int y = l.from[1];
    for (int j = 0; j <= b; ++j, y = moved(t, 1, y, l.step[1])) {
      int z = l.from[2];
      std::size_t cell = static_cast<std::size_t>(i) * stride_x + static_cast<std::size_t>(j) * stride_y;
      for (int k = 0; k <= c; ++k, z = moved(t, 2, z, l.step[2]), ++cell) {
        const int left_x = a - i, left_y = b - j, left_z = c - k;
        const int left = left_x + left_y + left_z;
        if (left == 0) continue;
        const double p = reach[cell];
        const double unit = uniform ? p / left : p / ((left_x > 0) + (left_y > 0) + (left_z > 0));
        if (left_x > 0) {
          const double share = uniform ? unit * left_x : unit;
          load[link(x, y, z, 0)] += weight * share;
          reach[cell + stride_x] += share;
        }
        if (left_y > 0) {
          const double share = uniform ? unit * left_y : unit;
          load[link(x, y, z, 1)] += weight * share;
          reach[cell + stride_y] += share;
        }
        if (left_z > 0) {
          const double share = uniform ? unit * left_z : unit;
          load[link(x, y, z, 2)] += weight * share;
          reach[cell + 1] += share;
        }
      }
    }
  }
}

void add_leg(const topology& t, std::vector<double>& load, int source, int destination, hardware_routing hardware,
             double weight) {
  leg l;
  l.from = t.coordinates(source);
  const coordinate to = t.coordinates(destination);
  std::array<int, 3> tied{};  // dimensions where both ways round are shortest
  int ties = 0;
  for (int dim = 0; dim < 3; ++dim) {
    const auto d = static_cast<size_t>(dim);
    const int n = t.extent(dim);
    const int ahead = to[d] - l.from[d];
    if (!t.wraps(dim)) {
      l.step[d] = ahead > 0 ? 1 : -1;
      l.hops[d] = std::abs(ahead);
      continue;
    }
    const int forward = (ahead % n + n) % n, backward = forward == 0 ? 0 : n - forward;
    l.step[d] = forward <= backward ? 1 : -1;
    l.hops[d] = std::min(forward, backward);
    if (forward != 0 && forward == backward) {
      // SimGrid decides a tie from the source's position alone: the - way from N/2, else the + way.
      if (hardware == hardware_routing::simgrid_torus)
        l.step[d] = l.from[d] == n / 2 ? -1 : 1;
      else
        tied[static_cast<size_t>(ties++)] = dim;
    }
  }
  // A tie at exactly N/2 is split evenly: each combination of ways round gets an equal part.
  const int combinations = 1 << ties;
  for (int mask = 0; mask < combinations; ++mask) {
    for (int k = 0; k < ties; ++k) l.step[static_cast<size_t>(tied[static_cast<size_t>(k)])] = (mask >> k) & 1 ? -1 : 1;
    spread(t, load, l, hardware, weight / combinations);
  }
}

void check_route(const topology& t, const route& r) {
  check_node(t, r.source, "source");
  check_node(t, r.destination, "destination");
  if (r.via < 0) return;
  check_node(t, r.via, "intermediate");
  if (r.via == r.source || r.via == r.destination)
    throw invalid_argument("torus route " + std::to_string(r.source) + " -> " + std::to_string(r.destination) +
                           " via " + std::to_string(r.via) +
                           ": the intermediate is an end of the route, expected another node or -1 (direct)");
}

}  // namespace

link_loads::link_loads(const topology& t) : topology_(t), load_(static_cast<std::size_t>(t.nodes()) * 3 * 2, 0.0) {}

void link_loads::add_message(int source, int destination, hardware_routing hardware, double weight) {
  validate(hardware);
  check_node(topology_, source, "source");
  check_node(topology_, destination, "destination");
  add_leg(topology_, load_, source, destination, hardware, weight);
}

void link_loads::add(const routed_permutation& p, hardware_routing hardware, double weight) {
  validate(hardware);
  for (const route& r : p.routes) check_route(topology_, r);
  for (const route& r : p.routes) {
    if (r.via < 0) {
      add_leg(topology_, load_, r.source, r.destination, hardware, weight);
    } else {
      add_leg(topology_, load_, r.source, r.via, hardware, weight);
      add_leg(topology_, load_, r.via, r.destination, hardware, weight);
    }
  }
}

link_loads::summary link_loads::summarize() const {
  summary s;
  // Links a mesh lacks never carry load, so summing over every slot sums over the existing links.
  for (int dim = 0; dim < 3; ++dim) {
    const std::int64_t links = topology_.links(dim);
    if (links == 0) continue;
    double total = 0, most = 0;
    for (int node = 0; node < topology_.nodes(); ++node) {
      for (int dir = 0; dir < 2; ++dir) {
        const double l = at(node, dim, dir);
        total += l;
        most = std::max(most, l);
      }
    }
    s.mean[static_cast<size_t>(dim)] = total / static_cast<double>(links);
    s.max[static_cast<size_t>(dim)] = most;
  }
  return s;
}

// The time model (docs/torus.md, "Time model"), with m = message_bytes and c = m / beta the chunk size:
//   link_time    = (most loaded link, in messages) * m / link_bandwidth
//   node_time    = max over nodes of max(injected / injection_bandwidth, ejected / injection_bandwidth,
//                                        chunks forwarded * forwarding_cost + messages sent * message_latency)
//                  a node injects its own message and what it forwards, ejects what it receives and what it
//                  forwards; a routed message is beta messages (chunks) from its source and beta again from
//                  its intermediate, a direct one is one message
//   latency_time = max over routes of: direct  message_latency + hops * hop_latency
//                                      routed  2 message_latency + forwarding_cost + (hops1 + hops2) hop_latency
//                                              + c / link_bandwidth (the first chunk stored at the intermediate)
//   completion   = max(link_time, node_time) + latency_time
// Links and nodes work concurrently, so the busier of the two bounds the streaming part; the start-up of the
// slowest route comes on top.
permutation_cost simulate(const topology& t, const routed_permutation& p, hardware_routing hardware,
                          const time_model& model) {
  validate(model);
  const bool any_routed = std::any_of(p.routes.begin(), p.routes.end(), [](const route& r) { return r.via >= 0; });
  if (any_routed && p.beta < 1)
    throw invalid_argument("torus simulation: beta = " + std::to_string(p.beta) +
                           " chunks per routed message, expected >= 1");
  link_loads loads(t);
  loads.add(p, hardware);

  permutation_cost cost;
  cost.loads = loads.summarize();
  const double m = static_cast<double>(model.message_bytes);
  const double chunks = static_cast<double>(p.beta);
  cost.link_time = *std::max_element(cost.loads.max.begin(), cost.loads.max.end()) * m / model.link_bandwidth;

  const std::size_t nodes = static_cast<std::size_t>(t.nodes());
  std::vector<double> injected(nodes, 0.0), ejected(nodes, 0.0), forwarded(nodes, 0.0), sent(nodes, 0.0);
  for (const route& r : p.routes) {
    const auto source = static_cast<size_t>(r.source), destination = static_cast<size_t>(r.destination);
    injected[source] += m;
    ejected[destination] += m;
    if (r.via < 0) {
      sent[source] += 1;
      cost.latency_time =
          std::max(cost.latency_time, model.message_latency + t.distance(r.source, r.destination) * model.hop_latency);
    } else {
      const auto via = static_cast<size_t>(r.via);
      ejected[via] += m;
      injected[via] += m;
      forwarded[via] += chunks;
      sent[source] += chunks;
      sent[via] += chunks;
      const int hops = t.distance(r.source, r.via) + t.distance(r.via, r.destination);
      cost.latency_time = std::max(cost.latency_time, 2 * model.message_latency + model.forwarding_cost +
                                                          hops * model.hop_latency + m / chunks / model.link_bandwidth);
    }
  }
  for (std::size_t n = 0; n < nodes; ++n) {
    const double streaming = std::max(injected[n], ejected[n]) / model.injection_bandwidth;
    const double work = forwarded[n] * model.forwarding_cost + sent[n] * model.message_latency;
    cost.node_time = std::max({cost.node_time, streaming, work});
  }
  cost.completion_time = std::max(cost.link_time, cost.node_time) + cost.latency_time;
  return cost;
}

}  // namespace redist::torus
