// SPDX-License-Identifier: BSD-3-Clause
// Torus topologies, rank mappings, the multi-phase transpose schedule and Short Dimension Routing.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redist/error.hpp"
#include "redist/torus/routing.hpp"
#include "redist/torus/schedule.hpp"
#include "redist/torus/topology.hpp"
#include "test_seed.hpp"

namespace rt = redist::torus;
using redist::testing::test_seed;

namespace {

std::vector<int> random_permutation(int n, std::uint64_t seed) {
  std::vector<int> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 gen(seed);
  for (std::size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[gen() % i]);
  return p;
}

bool is_permutation_of_ranks(const std::vector<int>& p) {
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int>(i)) return false;
  return true;
}

void expect_invalid_argument(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected redist::invalid_argument mentioning '" << fragment << "'";
  } catch (const redist::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << fragment << "'";
  }
}

}  // namespace

TEST(TorusTopology, ParsesDimensionsAndComputesWrappedDistances) {
  const rt::topology t = rt::topology::parse("16x8");
  EXPECT_EQ(t.dimensions(), 2);
  EXPECT_EQ(t.extent(0), 16);
  EXPECT_EQ(t.extent(1), 8);
  EXPECT_EQ(t.extent(2), 1);
  EXPECT_EQ(t.nodes(), 128);
  EXPECT_EQ(t.distance(0, 1, 15), 2);  // around the ring
  EXPECT_EQ(t.distance(0, 0, 8), 8);   // the tie at N/2
  EXPECT_EQ(t.distance(1, 7, 0), 1);
  EXPECT_EQ(t.links(0), 2 * 16 * 8);
  EXPECT_EQ(t.links(2), 0);
  EXPECT_EQ(t.to_string(), "16x8");

  const rt::topology mesh = rt::topology::parse("4x3", true);
  EXPECT_EQ(mesh.distance(0, 0, 3), 3);  // no wrap-around on a mesh
  EXPECT_EQ(mesh.links(0), 2 * 3 * 3);
  EXPECT_EQ(mesh.to_string(), "4x3 mesh");
}

TEST(TorusTopology, NodeIndexRoundTripsAndRanksDimensionsByLength) {
  const rt::topology t({4, 8, 2});
  for (int n = 0; n < t.nodes(); ++n) EXPECT_EQ(t.node(t.coordinates(n)), n);
  EXPECT_EQ(t.node({1, 2, 1}), (1 * 8 + 2) * 2 + 1);
  const auto order = t.by_length();
  EXPECT_EQ(order[0], 1);
  EXPECT_EQ(order[1], 0);
  EXPECT_EQ(order[2], 2);
  EXPECT_EQ(t.distance(t.node({0, 0, 0}), t.node({3, 4, 1})), 1 + 4 + 1);
}

TEST(TorusTopology, RejectsBadDescriptions) {
  EXPECT_THROW(rt::topology({}), redist::invalid_argument);
  EXPECT_THROW(rt::topology({2, 2, 2, 2}), redist::invalid_argument);
  EXPECT_THROW(rt::topology({4, 0}), redist::invalid_argument);
  EXPECT_THROW(rt::topology({4, 2}, {true}), redist::invalid_argument);
  EXPECT_THROW(rt::topology::parse("16by8"), redist::invalid_argument);
  EXPECT_THROW(rt::topology::parse("16x"), redist::invalid_argument);
  EXPECT_THROW(rt::topology::parse(""), redist::invalid_argument);
}

// Each length a run of decimal digits: no sign, no space, nothing after it, at most INT_MAX.
TEST(TorusTopology, ParseTakesDigitsOnly) {
  EXPECT_EQ(rt::topology::parse("8"), rt::topology({8}));
  EXPECT_EQ(rt::topology::parse("08x4x2"), rt::topology({8, 4, 2}));
  EXPECT_EQ(rt::topology::parse("4x3", true), rt::topology({4, 3}, {false, false}));
  for (const std::string bad : {" 4x4", "4x 4", "4x4 ", "+4", "4x+4", "4x-4", "4x4abc", "4X4", "4x0", "0", "x4", "4xx4",
                                "2147483648", "99999999999999999999x2"})
    expect_invalid_argument([&] { rt::topology::parse(bad); },
                            "torus dimensions '" + bad + "': expected positive decimal lengths");
  // Digits that fit an int but make too many nodes are the constructor's to reject.
  expect_invalid_argument([] { rt::topology::parse("2147483647"); }, "more than 2^30 nodes");
}

TEST(TorusMapping, DimensionOrderedFollowsThePapersFormula) {
  const rt::topology t({4, 3, 2});
  const rt::rank_mapping xyz = rt::rank_mapping::dimension_ordered(t, "XYZ");
  for (int r = 0; r < t.nodes(); ++r) {
    const rt::coordinate c = t.coordinates(xyz.node_of_rank(r));
    EXPECT_EQ(c[2], r % 2);
    EXPECT_EQ(c[1], (r / 2) % 3);
    EXPECT_EQ(c[0], r / 6);
    EXPECT_EQ(xyz.rank_of_node(xyz.node_of_rank(r)), r);
  }
  const rt::rank_mapping zxy = rt::rank_mapping::dimension_ordered(t, "ZXY");  // y fastest, then x, then z
  for (int r = 0; r < t.nodes(); ++r) {
    const rt::coordinate c = t.coordinates(zxy.node_of_rank(r));
    EXPECT_EQ(c[1], r % 3);
    EXPECT_EQ(c[0], (r / 3) % 4);
    EXPECT_EQ(c[2], r / 12);
  }
  EXPECT_THROW(rt::rank_mapping::dimension_ordered(t, "XY"), redist::invalid_argument);
  EXPECT_THROW(rt::rank_mapping::dimension_ordered(t, "XXZ"), redist::invalid_argument);
}

// Without an order, the dimensions in order whatever their count: X slowest, as the node index, so rank r is on node
// r. An order given explicitly must still name each of the topology's dimensions once.
TEST(TorusMapping, DefaultOrderFitsEveryDimensionCount) {
  const rt::topology line({5}), plane({4, 3}), box({4, 3, 2});
  for (const rt::topology& t : {line, plane, box}) {
    const rt::rank_mapping m = rt::rank_mapping::dimension_ordered(t);
    ASSERT_EQ(m.ranks(), t.nodes()) << t.to_string();
    for (int r = 0; r < t.nodes(); ++r) EXPECT_EQ(m.node_of_rank(r), r) << t.to_string();
  }
  expect_invalid_argument([&] { rt::rank_mapping::dimension_ordered(plane, "XYZ"); },
                          "order 'XYZ' for a 2-dimensional topology (4x3): expected a permutation of XY,");
  expect_invalid_argument([&] { rt::rank_mapping::dimension_ordered(line, "XY"); }, "expected a permutation of X,");
  expect_invalid_argument([&] { rt::rank_mapping::dimension_ordered(box, ""); }, "expected a permutation of XYZ,");
}

TEST(TorusMapping, RandomIsABijectionFixedBySeedAndUserIsChecked) {
  const rt::topology t({8, 4});
  const rt::rank_mapping a = rt::rank_mapping::random(t, 7), b = rt::rank_mapping::random(t, 7),
                         c = rt::rank_mapping::random(t, 8);
  std::vector<int> na, nc;
  for (int r = 0; r < t.nodes(); ++r) {
    EXPECT_EQ(a.node_of_rank(r), b.node_of_rank(r));
    EXPECT_EQ(a.rank_of_node(a.node_of_rank(r)), r);
    na.push_back(a.node_of_rank(r));
    nc.push_back(c.node_of_rank(r));
  }
  EXPECT_TRUE(is_permutation_of_ranks(na));
  EXPECT_NE(na, nc);
  EXPECT_THROW(rt::rank_mapping::user(t, std::vector<int>(31, 0)), redist::invalid_argument);
  std::vector<int> twice(32);
  std::iota(twice.begin(), twice.end(), 0);
  twice[5] = 4;
  EXPECT_THROW(rt::rank_mapping::user(t, twice), redist::invalid_argument);
}

// Every phase is a permutation, receive_from inverts send_to, and the phases cover each communicating pair
// of the block-cyclic transpose ((p, q) with (p', q') iff p = q' and q = p' mod G) exactly once.
TEST(TransposeSchedule, PhasesArePermutationsCoveringEveryPairOnce) {
  for (int P = 1; P <= 12; ++P) {
    for (int Q = 1; Q <= 12; ++Q) {
      const rt::transpose_schedule s = rt::multiphase_transpose_schedule(P, Q);
      ASSERT_EQ(s.G, std::gcd(P, Q));
      ASSERT_EQ(s.L, std::lcm(P, Q));
      ASSERT_EQ(s.phases(), (s.L / P) * (s.L / Q)) << P << "x" << Q;
      std::set<std::pair<int, int>> seen;
      for (int k = 0; k < s.phases(); ++k) {
        const auto& to = s.send_to[static_cast<size_t>(k)];
        const auto& from = s.receive_from[static_cast<size_t>(k)];
        ASSERT_TRUE(is_permutation_of_ranks(to)) << P << "x" << Q << " phase " << k;
        for (int r = 0; r < P * Q; ++r) {
          ASSERT_EQ(from[static_cast<size_t>(to[static_cast<size_t>(r)])], r) << P << "x" << Q << " phase " << k;
          ASSERT_TRUE(seen.insert({r, to[static_cast<size_t>(r)]}).second) << "pair twice, " << P << "x" << Q;
        }
      }
      std::set<std::pair<int, int>> expected;
      for (int p = 0; p < P; ++p)
        for (int q = 0; q < Q; ++q)
          for (int p2 = 0; p2 < P; ++p2)
            for (int q2 = 0; q2 < Q; ++q2)
              if ((p - q2) % s.G == 0 && (q - p2) % s.G == 0) expected.insert({p * Q + q, p2 * Q + q2});
      EXPECT_EQ(seen, expected) << P << "x" << Q;
    }
  }
}

// The pairs follow the blocks: block (r, c) lives on (r mod P, c mod Q) and goes where block (c, r) lives.
TEST(TransposeSchedule, MatchesTheOwnersOfTransposedBlocks) {
  for (auto [P, Q] : {std::pair{2, 3}, std::pair{4, 6}, std::pair{3, 3}, std::pair{5, 2}}) {
    const rt::transpose_schedule s = rt::multiphase_transpose_schedule(P, Q);
    std::set<std::pair<int, int>> scheduled;
    for (const auto& phase : s.send_to)
      for (int r = 0; r < P * Q; ++r) scheduled.insert({r, phase[static_cast<size_t>(r)]});
    const int blocks = 2 * s.L;
    std::set<std::pair<int, int>> needed;
    for (int r = 0; r < blocks; ++r)
      for (int c = 0; c < blocks; ++c) needed.insert({(r % P) * Q + c % Q, (c % P) * Q + r % Q});
    EXPECT_EQ(scheduled, needed) << P << "x" << Q;
  }
  EXPECT_THROW(rt::multiphase_transpose_schedule(0, 3), redist::invalid_argument);
}

TEST(ShortDimensionRouting, DirectModeSendsEveryPairDirectly) {
  const rt::topology t({16, 8});
  const std::vector<int> dest = random_permutation(t.nodes(), test_seed(3));
  rt::routing_options o;
  o.mode = rt::routing_mode::direct;
  const rt::routed_permutation p = rt::route_permutation(t, dest, o);
  std::size_t expected = 0;
  for (int n = 0; n < t.nodes(); ++n) expected += dest[static_cast<size_t>(n)] != n;
  EXPECT_EQ(p.routes.size(), expected);
  EXPECT_EQ(p.routed(), 0);
  for (const auto& r : p.routes) EXPECT_EQ(dest[static_cast<size_t>(r.source)], r.destination);
}

// Basic SDR in 2D: u' = <x1, (y2 + N_Y/2) mod N_Y> for every pair that has a detour to take.
TEST(ShortDimensionRouting, BasicSdrUsesTheOppositeNodeInTheSourcesColumn) {
  const rt::topology t({16, 8});
  const std::vector<int> dest = random_permutation(t.nodes(), test_seed(11));
  rt::routing_options o;
  o.alpha = 1;
  o.gamma = 0;
  o.delta = -1;
  const rt::routed_permutation p = rt::route_permutation(t, dest, o);
  for (const auto& r : p.routes) {
    const rt::coordinate s = t.coordinates(r.source), d = t.coordinates(r.destination);
    const rt::coordinate u{s[0], (d[1] + 4) % 8, 0};
    if (t.node(u) == r.source) {
      EXPECT_EQ(r.via, -1);
    } else {
      EXPECT_EQ(r.via, t.node(u));
    }
  }
  EXPECT_GT(p.routed(), t.nodes() / 2);
}

TEST(ShortDimensionRouting, AlphaGammaAndDeltaSelectTheRoutedPairs) {
  const rt::topology t({16, 4});
  const std::vector<int> dest = random_permutation(t.nodes(), test_seed(5));
  rt::routing_options o;
  o.delta = -1;
  o.gamma = 3;
  o.alpha = 1;
  const rt::routed_permutation all = rt::route_permutation(t, dest, o);
  for (const auto& r : all.routes) {
    const int dx = t.distance(0, t.coordinates(r.source)[0], t.coordinates(r.destination)[0]);
    if (dx < 3) EXPECT_EQ(r.via, -1) << "gamma: near pairs go directly";
  }
  o.alpha = 0.5;
  const rt::routed_permutation half = rt::route_permutation(t, dest, o);
  EXPECT_NEAR(static_cast<double>(half.routed()), all.routed() / 2.0, 0.51);
  // The routed half are the pairs of smallest X distance.
  int largest_routed = 0, smallest_direct_eligible = 1 << 30;
  for (std::size_t i = 0; i < half.routes.size(); ++i) {
    const auto& r = half.routes[i];
    const int dx = t.distance(0, t.coordinates(r.source)[0], t.coordinates(r.destination)[0]);
    if (r.via >= 0) largest_routed = std::max(largest_routed, dx);
    if (r.via < 0 && all.routes[i].via >= 0) smallest_direct_eligible = std::min(smallest_direct_eligible, dx);
  }
  EXPECT_LE(largest_routed, smallest_direct_eligible);

  // delta >= 0: no node serves two pairs, and alternatives stay in the source's column (X kept).
  o.alpha = 1;
  o.gamma = 0;
  for (int delta : {0, 2, 3}) {
    o.delta = delta;
    const rt::routed_permutation p = rt::route_permutation(t, dest, o);
    std::set<int> used;
    for (const auto& r : p.routes) {
      if (r.via < 0) continue;
      EXPECT_TRUE(used.insert(r.via).second) << "intermediate " << r.via << " used twice, delta " << delta;
      EXPECT_EQ(t.coordinates(r.via)[0], t.coordinates(r.source)[0]);
      EXPECT_NE(r.via, r.destination);
      const rt::coordinate d = t.coordinates(r.destination);
      const int ideal = t.node({t.coordinates(r.source)[0], (d[1] + 2) % 4, 0});
      EXPECT_LT(t.distance(r.via, ideal), std::max(delta, 1)) << "delta " << delta;
    }
  }
}

TEST(ShortDimensionRouting, ThreeDimensionalChoicesKeepTheRightCoordinates) {
  const rt::topology t({8, 4, 4});  // N_X = 2 N_Y = 2 N_Z: the paper picks u''
  EXPECT_EQ(rt::paper_choice(t), rt::intermediate_choice::all_but_longest);
  EXPECT_EQ(rt::paper_choice(rt::topology({8, 8, 4})), rt::intermediate_choice::shortest);
  EXPECT_EQ(rt::paper_choice(rt::topology({4, 8, 8})), rt::intermediate_choice::shortest);
  const std::vector<int> dest = random_permutation(t.nodes(), test_seed(9));
  rt::routing_options o;
  o.alpha = 1;
  o.gamma = 0;
  o.delta = -1;
  for (auto choice : {rt::intermediate_choice::shortest, rt::intermediate_choice::all_but_longest}) {
    o.choice = choice;
    const rt::routed_permutation p = rt::route_permutation(t, dest, o);
    EXPECT_EQ(p.choice, choice);
    for (const auto& r : p.routes) {
      if (r.via < 0) continue;
      const rt::coordinate s = t.coordinates(r.source), d = t.coordinates(r.destination), v = t.coordinates(r.via);
      EXPECT_EQ(v[0], s[0]);
      EXPECT_EQ(v[2], (d[2] + 2) % 4);
      EXPECT_EQ(v[1], choice == rt::intermediate_choice::shortest ? s[1] : (d[1] + 2) % 4);
    }
  }
}

TEST(ShortDimensionRouting, IsDeterministicAndLeavesRingsDirect) {
  const rt::topology t({8, 8, 4});
  const std::vector<int> dest = random_permutation(t.nodes(), test_seed(21));
  rt::routing_options o;
  const auto a = rt::route_permutation(t, dest, o), b = rt::route_permutation(t, dest, o);
  ASSERT_EQ(a.routes.size(), b.routes.size());
  for (std::size_t i = 0; i < a.routes.size(); ++i) EXPECT_EQ(a.routes[i].via, b.routes[i].via);

  const rt::topology ring({16});
  o.alpha = 1;
  o.gamma = 0;
  EXPECT_EQ(rt::route_permutation(ring, random_permutation(16, test_seed(2)), o).routed(), 0);
}

// -1 (no message) makes a partial permutation: such nodes get no route and free their intermediates.
TEST(ShortDimensionRouting, PartialPermutationsLeaveSilentNodesOut) {
  const rt::topology t({8, 4});
  std::vector<int> dest = random_permutation(t.nodes(), test_seed(13));
  for (int n = 0; n < t.nodes(); n += 3) dest[static_cast<size_t>(n)] = -1;
  rt::routing_options o;
  o.alpha = 1;
  o.gamma = 0;
  const rt::routed_permutation p = rt::route_permutation(t, dest, o);
  std::size_t expected = 0;
  for (int n = 0; n < t.nodes(); ++n)
    expected += dest[static_cast<size_t>(n)] >= 0 && dest[static_cast<size_t>(n)] != n;
  EXPECT_EQ(p.routes.size(), expected);
  for (const auto& r : p.routes) EXPECT_NE(dest[static_cast<size_t>(r.source)], -1);
  dest[1] = -2;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
}

TEST(ShortDimensionRouting, RejectsBadOptionsAndNonPermutations) {
  const rt::topology t({4, 2});
  std::vector<int> dest(8);
  std::iota(dest.begin(), dest.end(), 0);
  rt::routing_options o;
  o.alpha = 1.5;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  o.alpha = -0.1;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  o = {};
  o.beta = 0;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  o = {};
  o.gamma = -1;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  o = {};
  o.delta = -2;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  o = {};
  dest[3] = 2;
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
  dest.pop_back();
  EXPECT_THROW(rt::route_permutation(t, dest, o), redist::invalid_argument);
}

// validate() refuses what simulate() could not use: infinities and NaN as well as values out of range.
TEST(ShortDimensionRouting, ValidateRejectsNonFiniteAndNegativeTimeModels) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<double rt::time_model::*, std::string>> fields{
      {&rt::time_model::link_bandwidth, "link_bandwidth"},
      {&rt::time_model::injection_bandwidth, "injection_bandwidth"},
      {&rt::time_model::message_latency, "message_latency"},
      {&rt::time_model::hop_latency, "hop_latency"},
      {&rt::time_model::forwarding_cost, "forwarding_cost"}};
  for (const auto& field : fields) {
    for (const double bad : {inf, -inf, nan, -1.0}) {
      rt::routing_options o;
      o.model.*(field.first) = bad;
      const std::string fragment = "torus time model: " + field.second + " = ";
      expect_invalid_argument([&] { rt::validate(o.model); }, fragment);
      expect_invalid_argument([&] { rt::validate(o); }, fragment);
    }
  }
  rt::time_model m;
  m.link_bandwidth = 0;
  expect_invalid_argument([&] { rt::validate(m); },
                          "link_bandwidth = 0.000000, expected a finite number of bytes/s > 0");
  m = {};
  m.message_bytes = -1;
  expect_invalid_argument([&] { rt::validate(m); }, "message_bytes = -1.000000, expected >= 0");
  m = {};
  m.message_latency = m.hop_latency = m.forwarding_cost = 0;
  m.message_bytes = 0;
  EXPECT_NO_THROW(rt::validate(m));
}

// An enum value outside its enum (e.g. a cast integer) is refused, naming the spellings it takes.
TEST(ShortDimensionRouting, ValidateRejectsHardwareAndChoiceOutsideTheirEnums) {
  rt::routing_options o;
  o.hardware = static_cast<rt::hardware_routing>(7);
  expect_invalid_argument([&] { rt::validate(o); }, "hardware routing 7 unknown, expected dimension_order, ");
  expect_invalid_argument([&] { rt::validate(o.hardware); }, "hardware routing 7 unknown, expected dimension_order, ");
  o = {};
  o.choice = static_cast<rt::intermediate_choice>(9);
  expect_invalid_argument([&] { rt::validate(o); }, "intermediate choice 9 unknown, expected auto, ");
  for (const auto h : {rt::hardware_routing::dimension_order, rt::hardware_routing::uniform_shortest,
                       rt::hardware_routing::random_direction, rt::hardware_routing::simgrid_torus})
    EXPECT_NO_THROW(rt::validate(h));
}
