// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Short Dimension Routing (SDR) of permutations on asymmetric tori (Chakaravarthy, Jain and Sabharwal,
// Sections 4.1-4.4): part of the pairs go through an intermediate node reached from the source along the
// short dimensions only, so that the second leg has the most long-dimension links to spread over.
#include <cstdint>
#include <string>
#include <vector>

#include "redist/torus/topology.hpp"

namespace redist::torus {

/// How the network routes one message between two nodes (the simulator's models).
enum class hardware_routing : std::uint8_t {
  dimension_order = 0,   ///< X hops, then Y, then Z, each the shorter way round (a tie at exactly N/2 split evenly)
  uniform_shortest = 1,  ///< equally over all shortest paths (the paper's idealised adaptive routing)
  random_direction = 2,  ///< each hop picks uniformly one dimension still to travel (a stand-in for minimal
                         ///< adaptive routing)
  simgrid_torus = 3,     ///< as SimGrid's TORUS cluster routes (3.32): Z hops first (its first dimension is the one
                         ///< numbered fastest), then Y, then X, each the shorter way round; a tie at exactly N/2 goes
                         ///< the + way, except from position N/2, which goes the - way (docs/smpi.md)
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(hardware_routing r);
/// @throws invalid_argument h is no value of the enum; the message lists the spellings
void validate(hardware_routing h);

/// Completion-time model of a routed permutation (see docs/torus.md). Defaults: Blue Gene/P-like links.
struct time_model {
  double link_bandwidth = 850e6;           ///< bytes/s of one directed link
  double injection_bandwidth = 6 * 850e6;  ///< bytes/s a node can inject (and, separately, eject)
  double message_latency = 3e-6;           ///< s of software overhead per message sent (each chunk is one)
  double hop_latency = 100e-9;             ///< s per link a message's head crosses
  double forwarding_cost = 1e-6;           ///< s an intermediate spends per chunk it forwards
  std::int64_t message_bytes = std::int64_t{256} << 20;  ///< bytes each source sends in one permutation (the
                                                         ///< paper's matrices held 256-512 MB per node)
};
/// Checks every field against its domain: bandwidths finite and > 0, latencies and forwarding cost finite and >= 0,
/// message_bytes >= 0 (simulate() checks its model with it).
/// @throws invalid_argument a field outside its domain; the message names the field, its value and its domain
void validate(const time_model& m);

enum class routing_mode : std::uint8_t {
  direct = 0,     ///< every pair directly (the paper's Base)
  sdr = 1,        ///< Short Dimension Routing with the given alpha and intermediate choice (the paper's Opt)
  automatic = 2,  ///< SDR with alpha (and, in 3D, the intermediate choice) minimising the simulated time
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(routing_mode m);

/// Which nodes serve as intermediates, named for a 3D torus N_X >= N_Y >= N_Z (Section 4.3); the dimensions
/// are ranked by length, so "X" is the longest whatever its index.
enum class intermediate_choice : std::uint8_t {
  automatic = 0,        ///< sdr: the paper's rule from the extents; automatic mode: the better one by simulation
  shortest = 1,         ///< u'  = <x1, y1, (z2 + N_Z/2) mod N_Z>: only the shortest dimension changes
  all_but_longest = 2,  ///< u'' = <x1, (y2 + N_Y/2) mod N_Y, (z2 + N_Z/2) mod N_Z> (in 2D the two coincide)
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(intermediate_choice c);

/// How the phases of a routed_phases_plan run (e.g. the multi-phase transpose of a non-square grid).
enum class phase_schedule : std::uint8_t {
  sequential = 0,  ///< one after another, as the paper schedules them: no phase's messages share links with the next's
  concurrent = 1,  ///< all at once, as point_to_point posts every message: under max-min flow sharing (SimGrid's
                   ///< model) the phases' synchronisation costs more than routing saves (docs/smpi.md)
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(phase_schedule s);

struct routing_options {
  routing_mode mode = routing_mode::sdr;
  /// Fraction, in [0, 1], of the eligible pairs that are routed: those with the smallest distance along the
  /// dimensions the intermediate keeps (the long ones), where routing helps most.
  double alpha = 0.5;
  /// Chunks a routed message is cut into, pipelined through its intermediate (>= 1).
  std::int64_t beta = 1024;
  /// Pairs whose long-dimension distance is below gamma are not eligible: they go directly (>= 0).
  int gamma = 2;
  /// One pair per intermediate: a pair whose intermediate is taken uses a free node within distance < delta
  /// of it along the short dimensions, else goes directly (>= 0). -1: no limit (basic SDR, Section 4.1).
  int delta = 2;
  intermediate_choice choice = intermediate_choice::automatic;
  /// automatic mode: the network model its simulations use.
  hardware_routing hardware = hardware_routing::uniform_shortest;
  /// Sequences of permutations (routed_phases_plan, torus_routed transforms): how their phases run.
  phase_schedule phases = phase_schedule::sequential;
  time_model model{};
};
/// Checks every field of the options against its domain (the hardware and the time model as validate(hardware_routing)
/// and validate(time_model) check them).
/// @throws invalid_argument a field outside its domain or an enum value outside its enum; the message names the field
/// and its domain
void validate(const routing_options& o);

/// One message of a permutation, between nodes: directly (via < 0) or through node `via`.
struct route {
  int source = 0;
  int destination = 0;
  int via = -1;
};

struct routed_permutation {
  std::vector<route> routes;                 ///< one per node that sends to another node, in increasing source order
  routing_mode mode = routing_mode::direct;  ///< what was asked for
  double alpha = 0.0;                        ///< the alpha used (automatic: the chosen one)
  intermediate_choice choice = intermediate_choice::shortest;  ///< the choice used (never automatic)
  std::int64_t beta = 1;                                       ///< chunks per routed message
  std::int64_t routed() const noexcept;                        ///< routes with an intermediate
};

/// Routes the permutation destination[n] (node n sends one message to node destination[n]; n itself or -1:
/// no message, so a partial permutation, e.g. without the empty messages of a phase, is fine) on the torus.
/// Deterministic: every rank computing it from the same input gets the same routes.
/// @throws invalid_argument destination does not hold t.nodes() entries, a destination is outside the nodes (and not
/// -1) or receives two messages, or validate(options) fails
routed_permutation route_permutation(const topology& t, const std::vector<int>& destination,
                                     const routing_options& options);

/// The intermediate choice the paper's rule (Section 4.3) takes for the extents: dimensions "close" to the
/// longest (at least 3/4 of it) keep their coordinate. Throws nothing.
intermediate_choice paper_choice(const topology& t);

}  // namespace redist::torus
