// SPDX-License-Identifier: BSD-3-Clause
#include "redist/torus/routing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "redist/error.hpp"
#include "redist/names.hpp"
#include "redist/torus/simulator.hpp"

namespace redist::torus {

void validate(hardware_routing h) {
  if (h != hardware_routing::dimension_order && h != hardware_routing::uniform_shortest &&
      h != hardware_routing::random_direction && h != hardware_routing::simgrid_torus)
    throw invalid_argument("torus hardware routing " + std::to_string(static_cast<int>(h)) + " unknown, expected " +
                           spelled_choices<hardware_routing>());
}

void validate(const time_model& m) {
  // Finite as well as in range: an infinite bandwidth or latency passes the comparisons but turns every time the
  // simulator computes into inf or NaN.
  const auto require = [](bool ok, const char* field, double value, const char* expected) {
    if (!ok)
      throw invalid_argument(std::string("torus time model: ") + field + " = " + std::to_string(value) + ", expected " +
                             expected);
  };
  require(std::isfinite(m.link_bandwidth) && m.link_bandwidth > 0, "link_bandwidth", m.link_bandwidth,
          "a finite number of bytes/s > 0");
  require(std::isfinite(m.injection_bandwidth) && m.injection_bandwidth > 0, "injection_bandwidth",
          m.injection_bandwidth, "a finite number of bytes/s > 0");
  require(std::isfinite(m.message_latency) && m.message_latency >= 0, "message_latency", m.message_latency,
          "a finite number of seconds >= 0");
  require(std::isfinite(m.hop_latency) && m.hop_latency >= 0, "hop_latency", m.hop_latency,
          "a finite number of seconds >= 0");
  require(std::isfinite(m.forwarding_cost) && m.forwarding_cost >= 0, "forwarding_cost", m.forwarding_cost,
          "a finite number of seconds >= 0");
  require(m.message_bytes >= 0, "message_bytes", static_cast<double>(m.message_bytes), ">= 0");
}

void validate(const routing_options& o) {
  auto fail = [](const std::string& what) { throw invalid_argument("torus routing options: " + what); };
  if (o.mode != routing_mode::direct && o.mode != routing_mode::sdr && o.mode != routing_mode::automatic)
    fail("mode " + std::to_string(static_cast<int>(o.mode)) + " unknown, expected " + spelled_choices<routing_mode>());
  if (!(o.alpha >= 0.0 && o.alpha <= 1.0)) fail("alpha = " + std::to_string(o.alpha) + ", expected 0 <= alpha <= 1");
  if (o.beta < 1) fail("beta = " + std::to_string(o.beta) + ", expected >= 1 chunks per routed message");
  if (o.gamma < 0) fail("gamma = " + std::to_string(o.gamma) + ", expected >= 0");
  if (o.delta < -1) fail("delta = " + std::to_string(o.delta) + ", expected >= 0, or -1 for no limit");
  if (o.choice != intermediate_choice::automatic && o.choice != intermediate_choice::shortest &&
      o.choice != intermediate_choice::all_but_longest)
    fail("intermediate choice " + std::to_string(static_cast<int>(o.choice)) + " unknown, expected " +
         spelled_choices<intermediate_choice>());
  validate(o.hardware);
  if (o.phases != phase_schedule::sequential && o.phases != phase_schedule::concurrent)
    fail("phase schedule " + std::to_string(static_cast<int>(o.phases)) + " unknown, expected " +
         spelled_choices<phase_schedule>());
  validate(o.model);
}

std::int64_t routed_permutation::routed() const noexcept {
  return std::count_if(routes.begin(), routes.end(), [](const route& r) { return r.via >= 0; });
}

namespace {

// The dimensions longer than 1, longest first.
std::vector<int> real_dimensions(const topology& t) {
  std::vector<int> real;
  for (int d : t.by_length())
    if (t.extent(d) > 1) real.push_back(d);
  return real;
}

void check_permutation(const topology& t, const std::vector<int>& destination) {
  if (static_cast<int>(destination.size()) != t.nodes())
    throw invalid_argument("route_permutation: " + std::to_string(destination.size()) + " destinations for a " +
                           t.to_string() + " torus, expected one per node (" + std::to_string(t.nodes()) + ")");
  std::vector<char> hit(destination.size(), 0);
  for (std::size_t n = 0; n < destination.size(); ++n) {
    const int d = destination[n];
    if (d == -1) continue;
    if (d < -1 || d >= t.nodes() || hit[static_cast<size_t>(d)])
      throw invalid_argument("route_permutation: node " + std::to_string(n) + " sends to " + std::to_string(d) +
                             ", expected a (partial) permutation of the nodes 0.." + std::to_string(t.nodes() - 1) +
                             " or -1 for no message" +
                             (d >= 0 && d < t.nodes() ? " (node " + std::to_string(d) + " receives twice)" : ""));
    hit[static_cast<size_t>(d)] = 1;
  }
}

routed_permutation route_directly(const std::vector<int>& destination) {
  routed_permutation p;
  for (std::size_t n = 0; n < destination.size(); ++n)
    if (destination[n] >= 0 && destination[n] != static_cast<int>(n))
      p.routes.push_back({static_cast<int>(n), destination[n], -1});
  return p;
}

// SDR with a fixed alpha and a resolved intermediate choice.
routed_permutation route_sdr(const topology& t, const std::vector<int>& destination, const routing_options& o,
                             double alpha, intermediate_choice choice) {
  routed_permutation p = route_directly(destination);
  p.mode = routing_mode::sdr;
  p.alpha = alpha;
  p.choice = choice;
  p.beta = o.beta;
  const std::vector<int> real = real_dimensions(t);
  if (real.size() < 2) return p;  // a ring or a line has no short dimension to detour through

  // The dimensions the intermediate changes (towards "opposite" the destination) and those it keeps.
  std::vector<int> changed = choice == intermediate_choice::shortest ? std::vector<int>{real.back()}
                                                                     : std::vector<int>(real.begin() + 1, real.end());
  std::vector<int> kept;
  for (int d : real)
    if (std::find(changed.begin(), changed.end(), d) == changed.end()) kept.push_back(d);

  struct candidate {
    std::size_t route_index;
    int long_distance;
    int intermediate;
  };
  std::vector<candidate> eligible;
  for (std::size_t i = 0; i < p.routes.size(); ++i) {
    const route& r = p.routes[i];
    const coordinate s = t.coordinates(r.source), d = t.coordinates(r.destination);
    int long_distance = 0;
    for (int k : kept) long_distance += t.distance(k, s[static_cast<size_t>(k)], d[static_cast<size_t>(k)]);
    if (long_distance < o.gamma) continue;
    coordinate via = s;
    for (int c : changed) {
      const int n = t.extent(c);
      via[static_cast<size_t>(c)] = (d[static_cast<size_t>(c)] + n / 2) % n;
    }
    const int via_node = t.node(via);
    if (via_node == r.source || via_node == r.destination) continue;  // no detour to take
    eligible.push_back({i, long_distance, via_node});
  }
  // Section 4.2: the pairs with the smallest long-dimension distance are routed first (the imbalance a
  // pair causes is inversely proportional to it). Ties stay in source order, so that every rank computing
  // the plan gets the same routes.
  std::stable_sort(eligible.begin(), eligible.end(),
                   [](const candidate& a, const candidate& b) { return a.long_distance < b.long_distance; });
  const auto count = static_cast<std::size_t>(std::floor(alpha * static_cast<double>(eligible.size()) + 0.5));

  // Nearby alternatives for a taken intermediate: offsets along the changed dimensions at distance
  // 1..delta-1, nearest first (ties in a fixed order, so that every rank gets the same routes).
  std::vector<std::array<int, 3>> offsets;
  if (o.delta > 1) {
    std::array<int, 3> reach{0, 0, 0};
    for (int c : changed) reach[static_cast<size_t>(c)] = std::min(o.delta - 1, t.extent(c) - 1);
    for (int a = -reach[0]; a <= reach[0]; ++a)
      for (int b = -reach[1]; b <= reach[1]; ++b)
        for (int e = -reach[2]; e <= reach[2]; ++e) {
          const int norm = std::abs(a) + std::abs(b) + std::abs(e);
          if (norm >= 1 && norm < o.delta) offsets.push_back({a, b, e});
        }
    std::stable_sort(offsets.begin(), offsets.end(), [](const auto& x, const auto& y) {
      return std::abs(x[0]) + std::abs(x[1]) + std::abs(x[2]) < std::abs(y[0]) + std::abs(y[1]) + std::abs(y[2]);
    });
  }

  std::vector<char> taken(static_cast<size_t>(t.nodes()), 0);
  for (std::size_t k = 0; k < count; ++k) {
    const candidate& c = eligible[k];
    route& r = p.routes[c.route_index];
    int chosen = -1;
    if (o.delta < 0 || !taken[static_cast<size_t>(c.intermediate)]) {
      chosen = c.intermediate;
    } else {
      const coordinate base = t.coordinates(c.intermediate);
      for (const auto& offset : offsets) {
        coordinate alt = base;
        bool inside = true;
        for (int dim = 0; dim < 3; ++dim) {
          const int n = t.extent(dim);
          int& x = alt[static_cast<size_t>(dim)];
          x += offset[static_cast<size_t>(dim)];
          if (t.wraps(dim)) {
            x = ((x % n) + n) % n;
          } else if (x < 0 || x >= n) {
            inside = false;
          }
        }
        if (!inside) continue;
        const int node = t.node(alt);
        // On a short ring an offset can wrap onto a nearer node (already tried) or the intermediate itself.
        const int dist = t.distance(node, c.intermediate);
        if (dist == 0 || dist >= o.delta) continue;
        if (node == r.source || node == r.destination || taken[static_cast<size_t>(node)]) continue;
        chosen = node;
        break;
      }
    }
    if (chosen < 0) continue;  // every nearby intermediate is busy: direct
    r.via = chosen;
    taken[static_cast<size_t>(chosen)] = 1;
  }
  return p;
}

}  // namespace

intermediate_choice paper_choice(const topology& t) {
  const std::vector<int> real = real_dimensions(t);
  if (real.size() < 3) return intermediate_choice::shortest;
  // Y close to X (N_X = N_Y = 2 N_Z): detour along Z only; both shorter (N_X = 2 N_Y = 2 N_Z): along Y and Z.
  return 4 * t.extent(real[1]) >= 3 * t.extent(real[0]) ? intermediate_choice::shortest
                                                        : intermediate_choice::all_but_longest;
}

routed_permutation route_permutation(const topology& t, const std::vector<int>& destination,
                                     const routing_options& options) {
  validate(options);
  check_permutation(t, destination);
  if (options.mode == routing_mode::direct) {
    routed_permutation p = route_directly(destination);
    p.mode = routing_mode::direct;
    return p;
  }
  if (options.mode == routing_mode::sdr) {
    const intermediate_choice choice =
        options.choice == intermediate_choice::automatic ? paper_choice(t) : options.choice;
    return route_sdr(t, destination, options, options.alpha, choice);
  }

  // automatic: alpha on a grid of eighths (and both 3D choices unless one is asked for), the lowest simulated
  // completion time wins; ties keep the smaller alpha (fewer detours).
  std::vector<intermediate_choice> choices;
  if (options.choice != intermediate_choice::automatic) {
    choices = {options.choice};
  } else if (real_dimensions(t).size() >= 3) {
    choices = {intermediate_choice::shortest, intermediate_choice::all_but_longest};
  } else {
    choices = {intermediate_choice::shortest};
  }
  routed_permutation best;
  double best_time = std::numeric_limits<double>::infinity();
  for (int eighths = 0; eighths <= 8; ++eighths) {
    for (intermediate_choice choice : choices) {
      routed_permutation candidate = route_sdr(t, destination, options, eighths / 8.0, choice);
      const double time = simulate(t, candidate, options.hardware, options.model).completion_time;
      if (time < best_time) {
        best_time = time;
        best = std::move(candidate);
      }
      if (eighths == 0) break;  // alpha = 0 routes nothing whatever the choice
    }
  }
  best.mode = routing_mode::automatic;
  return best;
}

}  // namespace redist::torus
