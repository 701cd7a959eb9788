// SPDX-License-Identifier: BSD-3-Clause
// The torus link-load simulator (redist/torus/simulator.hpp): single messages worked out by hand under the
// three hardware models, conservation of hops and symmetry on random traffic, the time model on tiny cases,
// and the expected loads of Chakaravarthy, Jain and Sabharwal (Theorem 1: N/8 per link for direct routing of
// random permutations; Lemma 1: basic SDR puts 3 N_Y / 8 on the short dimension's links).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist/torus/routing.hpp"
#include "redist/torus/topology.hpp"
#include "redist_tools/torus_study.hpp"
#include "test_seed.hpp"

namespace {

using redist::testing::test_seed;
using redist::torus::coordinate;
using redist::torus::hardware_routing;
using redist::torus::link_loads;
using redist::torus::route;
using redist::torus::routed_permutation;
using redist::torus::routing_mode;
using redist::torus::study;
using redist::torus::time_model;
using redist::torus::topology;
using redist::torus::traffic_pattern;

constexpr int plus = 0, minus = 1;
constexpr std::array<hardware_routing, 3> all_models{
    hardware_routing::dimension_order, hardware_routing::uniform_shortest, hardware_routing::random_direction};

// One expected link load: the link leaving `at` along dim in direction dir.
struct expected_link {
  coordinate at;
  int dim;
  int dir;
  double load;
};

// Every link carries exactly the listed load (0 where not listed).
void expect_loads(const link_loads& loads, const std::vector<expected_link>& expected) {
  const topology& t = loads.network();
  std::vector<double> want(static_cast<size_t>(t.nodes()) * 6, 0.0);
  for (const expected_link& e : expected) want[static_cast<size_t>(t.node(e.at) * 6 + e.dim * 2 + e.dir)] += e.load;
  for (int node = 0; node < t.nodes(); ++node)
    for (int dim = 0; dim < 3; ++dim)
      for (int dir = 0; dir < 2; ++dir) {
        const coordinate c = t.coordinates(node);
        EXPECT_NEAR(loads.at(node, dim, dir), want[static_cast<size_t>(node * 6 + dim * 2 + dir)], 1e-12)
            << "link from (" << c[0] << "," << c[1] << "," << c[2] << ") dim " << dim << (dir == plus ? " +" : " -");
      }
}

double total_load(const link_loads& loads, int dim) {
  double total = 0;
  for (int node = 0; node < loads.network().nodes(); ++node)
    total += loads.at(node, dim, plus) + loads.at(node, dim, minus);
  return total;
}

std::vector<int> random_destinations(int nodes, std::uint64_t seed) {
  std::vector<int> destination(static_cast<size_t>(nodes));
  std::iota(destination.begin(), destination.end(), 0);
  std::mt19937_64 gen(seed);
  for (std::size_t i = destination.size(); i > 1; --i) std::swap(destination[i - 1], destination[gen() % i]);
  return destination;
}

TEST(TorusLinkLoads, RingMessageGoesTheShorterWayUnderEveryModel) {
  const topology ring({8});
  for (hardware_routing model : all_models) {
    link_loads loads(ring);
    loads.add_message(0, 3, model);
    expect_loads(loads, {{{0, 0, 0}, 0, plus, 1}, {{1, 0, 0}, 0, plus, 1}, {{2, 0, 0}, 0, plus, 1}});
    link_loads back(ring);
    back.add_message(0, 6, model);  // 2 hops backwards, not 6 forwards
    expect_loads(back, {{{0, 0, 0}, 0, minus, 1}, {{7, 0, 0}, 0, minus, 1}});
  }
}

TEST(TorusLinkLoads, RingTieAtHalfTheLengthIsSplitEvenly) {
  const topology ring({8});
  for (hardware_routing model : all_models) {
    link_loads loads(ring);
    loads.add_message(0, 4, model);
    expect_loads(loads, {{{0, 0, 0}, 0, plus, 0.5},
                         {{1, 0, 0}, 0, plus, 0.5},
                         {{2, 0, 0}, 0, plus, 0.5},
                         {{3, 0, 0}, 0, plus, 0.5},
                         {{0, 0, 0}, 0, minus, 0.5},
                         {{7, 0, 0}, 0, minus, 0.5},
                         {{6, 0, 0}, 0, minus, 0.5},
                         {{5, 0, 0}, 0, minus, 0.5}});
  }
}

// SimGrid's TORUS: Z hops first, then Y, then X; a tie goes the + way, except from N/2 (the - way).
TEST(TorusLinkLoads, SimgridTorusTakesZFirstAndTiesOneWay) {
  const topology cube({4, 4, 4});
  link_loads corner(cube);
  corner.add_message(cube.node({0, 0, 0}), cube.node({1, 1, 1}), hardware_routing::simgrid_torus);
  expect_loads(corner, {{{0, 0, 0}, 2, plus, 1}, {{0, 0, 1}, 1, plus, 1}, {{0, 1, 1}, 0, plus, 1}});
  const topology ring({4});
  link_loads ties(ring);
  ties.add_message(0, 2, hardware_routing::simgrid_torus);  // + : links 0+ and 1+
  ties.add_message(1, 3, hardware_routing::simgrid_torus);  // + : 1+ and 2+
  ties.add_message(2, 0, hardware_routing::simgrid_torus);  // from N/2: - : 2- and 1-
  ties.add_message(3, 1, hardware_routing::simgrid_torus);  // + round the wrap: 3+ and 0+
  expect_loads(ties, {{{0, 0, 0}, 0, plus, 2},
                      {{1, 0, 0}, 0, plus, 2},
                      {{2, 0, 0}, 0, plus, 1},
                      {{3, 0, 0}, 0, plus, 1},
                      {{2, 0, 0}, 0, minus, 1},
                      {{1, 0, 0}, 0, minus, 1}});
}

// From corner (0,0) to corner (2,2) of a 3x3 mesh: 6 shortest paths.
TEST(TorusLinkLoads, MeshCornerToCornerUnderEachModel) {
  const topology mesh({3, 3}, {false, false});
  const int from = mesh.node({0, 0, 0}), to = mesh.node({2, 2, 0});

  link_loads order(mesh);
  order.add_message(from, to, hardware_routing::dimension_order);
  expect_loads(order,
               {{{0, 0, 0}, 0, plus, 1}, {{1, 0, 0}, 0, plus, 1}, {{2, 0, 0}, 1, plus, 1}, {{2, 1, 0}, 1, plus, 1}});

  // Link (cell -> cell + e) carries paths(from -> cell) * paths(cell + e -> to) / 6.
  link_loads uniform(mesh);
  uniform.add_message(from, to, hardware_routing::uniform_shortest);
  expect_loads(uniform, {{{0, 0, 0}, 0, plus, 3.0 / 6},
                         {{0, 0, 0}, 1, plus, 3.0 / 6},
                         {{1, 0, 0}, 0, plus, 1.0 / 6},
                         {{1, 0, 0}, 1, plus, 2.0 / 6},
                         {{0, 1, 0}, 0, plus, 2.0 / 6},
                         {{0, 1, 0}, 1, plus, 1.0 / 6},
                         {{1, 1, 0}, 0, plus, 2.0 / 6},
                         {{1, 1, 0}, 1, plus, 2.0 / 6},
                         {{2, 0, 0}, 1, plus, 1.0 / 6},
                         {{2, 1, 0}, 1, plus, 3.0 / 6},
                         {{0, 2, 0}, 0, plus, 1.0 / 6},
                         {{1, 2, 0}, 0, plus, 3.0 / 6}});

  // Each hop picks X or Y with probability 1/2 while both have hops left.
  link_loads random(mesh);
  random.add_message(from, to, hardware_routing::random_direction);
  expect_loads(random, {{{0, 0, 0}, 0, plus, 0.5},
                        {{0, 0, 0}, 1, plus, 0.5},
                        {{1, 0, 0}, 0, plus, 0.25},
                        {{1, 0, 0}, 1, plus, 0.25},
                        {{0, 1, 0}, 0, plus, 0.25},
                        {{0, 1, 0}, 1, plus, 0.25},
                        {{1, 1, 0}, 0, plus, 0.25},
                        {{1, 1, 0}, 1, plus, 0.25},
                        {{2, 0, 0}, 1, plus, 0.25},
                        {{2, 1, 0}, 1, plus, 0.5},
                        {{0, 2, 0}, 0, plus, 0.25},
                        {{1, 2, 0}, 0, plus, 0.5}});

  // Backwards along a mesh line: the - links, never a wrap.
  link_loads back(mesh);
  back.add_message(to, from, hardware_routing::dimension_order);
  expect_loads(
      back, {{{2, 2, 0}, 0, minus, 1}, {{1, 2, 0}, 0, minus, 1}, {{0, 2, 0}, 1, minus, 1}, {{0, 1, 0}, 1, minus, 1}});
}

// On a 2x2x2 torus every dimension is a tie (1 hop either way): each of the 8 direction combinations gets 1/8.
TEST(TorusLinkLoads, CubeOfTwoSplitsEveryDimension) {
  const topology cube({2, 2, 2});
  const int from = cube.node({0, 0, 0}), to = cube.node({1, 1, 1});
  link_loads order(cube);
  order.add_message(from, to, hardware_routing::dimension_order);
  std::vector<expected_link> expected;
  for (int dir : {plus, minus}) {
    expected.push_back({{0, 0, 0}, 0, dir, 0.5});
    expected.push_back({{1, 0, 0}, 1, dir, 0.5});
    expected.push_back({{1, 1, 0}, 2, dir, 0.5});
  }
  expect_loads(order, expected);

  // Both adaptive models: X first with probability 1/3, after Y only or after Z only 1/6 each, last 1/3; the
  // same for Y and Z by symmetry; each half + and half -.
  for (hardware_routing model : {hardware_routing::uniform_shortest, hardware_routing::random_direction}) {
    link_loads loads(cube);
    loads.add_message(from, to, model);
    expected.clear();
    for (int dir : {plus, minus}) {
      expected.push_back({{0, 0, 0}, 0, dir, 1.0 / 6});
      expected.push_back({{0, 1, 0}, 0, dir, 1.0 / 12});
      expected.push_back({{0, 0, 1}, 0, dir, 1.0 / 12});
      expected.push_back({{0, 1, 1}, 0, dir, 1.0 / 6});
      expected.push_back({{0, 0, 0}, 1, dir, 1.0 / 6});
      expected.push_back({{1, 0, 0}, 1, dir, 1.0 / 12});
      expected.push_back({{0, 0, 1}, 1, dir, 1.0 / 12});
      expected.push_back({{1, 0, 1}, 1, dir, 1.0 / 6});
      expected.push_back({{0, 0, 0}, 2, dir, 1.0 / 6});
      expected.push_back({{1, 0, 0}, 2, dir, 1.0 / 12});
      expected.push_back({{0, 1, 0}, 2, dir, 1.0 / 12});
      expected.push_back({{1, 1, 0}, 2, dir, 1.0 / 6});
    }
    expect_loads(loads, expected);
  }
}

TEST(TorusLinkLoads, RoutedPermutationLoadsBothLegs) {
  const topology ring({8});
  routed_permutation p;
  p.routes = {{0, 2, 1}, {5, 4, -1}};
  link_loads loads(ring);
  loads.add(p, hardware_routing::uniform_shortest, 2.0);
  expect_loads(loads, {{{0, 0, 0}, 0, plus, 2}, {{1, 0, 0}, 0, plus, 2}, {{5, 0, 0}, 0, minus, 2}});
}

// Every model moves a message along shortest paths, so each dimension's links carry the hops in it.
TEST(TorusLinkLoads, LoadInEachDimensionIsTheHopsTakenInIt) {
  for (const topology& t :
       {topology({6, 5, 4}), topology({6, 5, 4}, {true, false, true}), topology({7, 2, 3}, {false, true, false})}) {
    const std::vector<int> destination = random_destinations(t.nodes(), test_seed(42));
    std::array<double, 3> hops{};
    for (int n = 0; n < t.nodes(); ++n) {
      const coordinate a = t.coordinates(n), b = t.coordinates(destination[static_cast<size_t>(n)]);
      for (std::size_t d = 0; d < 3; ++d) hops[d] += t.distance(static_cast<int>(d), a[d], b[d]);
    }
    for (hardware_routing model : all_models) {
      link_loads loads(t);
      for (int n = 0; n < t.nodes(); ++n) loads.add_message(n, destination[static_cast<size_t>(n)], model);
      const link_loads::summary s = loads.summarize();
      for (int dim = 0; dim < 3; ++dim) {
        const double dimension_hops = hops[static_cast<size_t>(dim)];
        EXPECT_NEAR(total_load(loads, dim), dimension_hops, 1e-9) << t.to_string() << " dim " << dim;
        EXPECT_NEAR(s.mean[static_cast<size_t>(dim)], dimension_hops / static_cast<double>(t.links(dim)), 1e-12);
      }
    }
  }
}

// A shift (every node sends to node + (3, 2)) looks the same from every node: all links of a dimension and
// direction carry the same load, so the busiest link is the mean one.
TEST(TorusLinkLoads, ShiftLoadsEveryLinkOfADimensionEqually) {
  const topology t({8, 6});
  for (hardware_routing model : all_models) {
    link_loads loads(t);
    for (int n = 0; n < t.nodes(); ++n) {
      const coordinate c = t.coordinates(n);
      loads.add_message(n, t.node({(c[0] + 3) % 8, (c[1] + 2) % 6, 0}), model);
    }
    for (int n = 0; n < t.nodes(); ++n) {
      EXPECT_NEAR(loads.at(n, 0, plus), 3, 1e-12);
      EXPECT_NEAR(loads.at(n, 1, plus), 2, 1e-12);
      EXPECT_NEAR(loads.at(n, 0, minus) + loads.at(n, 1, minus), 0, 1e-12);
    }
    const link_loads::summary s = loads.summarize();
    EXPECT_NEAR(s.mean[0], 1.5, 1e-12);  // 3 per node on the + links, none on the - links
    EXPECT_NEAR(s.max[0], 3, 1e-12);
    EXPECT_NEAR(s.mean[1], 1, 1e-12);
    EXPECT_NEAR(s.max[1], 2, 1e-12);
    EXPECT_EQ(s.mean[2], 0);
  }
}

// The set of shortest paths from b to a is that from a to b reversed, so under uniform_shortest reversing
// every message mirrors the loads: the + link from a to a+1 takes what the - link from a+1 to a had. (The
// other two models pick paths by the order of the hops, which reversing changes.)
TEST(TorusLinkLoads, ReversedTrafficMirrorsUniformLoads) {
  const topology t({6, 4, 5});
  const std::vector<int> destination = random_destinations(t.nodes(), test_seed(7));
  link_loads forward(t), backward(t);
  for (int n = 0; n < t.nodes(); ++n) {
    forward.add_message(n, destination[static_cast<size_t>(n)], hardware_routing::uniform_shortest);
    backward.add_message(destination[static_cast<size_t>(n)], n, hardware_routing::uniform_shortest);
  }
  for (int n = 0; n < t.nodes(); ++n)
    for (int dim = 0; dim < 3; ++dim) {
      coordinate next = t.coordinates(n);
      next[static_cast<size_t>(dim)] = (next[static_cast<size_t>(dim)] + 1) % t.extent(dim);
      EXPECT_NEAR(forward.at(n, dim, plus), backward.at(t.node(next), dim, minus), 1e-9);
    }
}

TEST(TorusLinkLoads, DimensionsOfLengthOneAndMeshesHaveNoLoadWhereNoLinkIs) {
  const topology line({5}, {false});
  link_loads loads(line);
  loads.add_message(0, 4, hardware_routing::uniform_shortest);
  loads.add_message(4, 1, hardware_routing::uniform_shortest);
  const link_loads::summary s = loads.summarize();
  EXPECT_NEAR(s.mean[0], 7.0 / 8, 1e-12);  // 7 hops over the line's 8 directed links
  EXPECT_NEAR(s.max[0], 1, 1e-12);
  EXPECT_EQ(s.mean[1], 0);
  EXPECT_EQ(s.max[2], 0);
}

TEST(TorusLinkLoads, RejectsNodesOutsideTheNetworkAndDegenerateDetours) {
  const topology t({4, 4});
  link_loads loads(t);
  EXPECT_THROW(loads.add_message(0, 16, hardware_routing::uniform_shortest), redist::invalid_argument);
  EXPECT_THROW(loads.add_message(-1, 3, hardware_routing::uniform_shortest), redist::invalid_argument);
  routed_permutation p;
  p.routes = {{0, 5, 5}};
  EXPECT_THROW(loads.add(p, hardware_routing::dimension_order), redist::invalid_argument);
  p.routes = {{0, 5, 0}};
  EXPECT_THROW(loads.add(p, hardware_routing::dimension_order), redist::invalid_argument);
  p.routes = {{0, 5, 99}};
  EXPECT_THROW(loads.add(p, hardware_routing::dimension_order), redist::invalid_argument);
}

// A value outside the enum (e.g. a cast integer) is refused before anything is loaded, not routed as some model.
TEST(TorusLinkLoads, RejectsHardwareModelsOutsideTheEnum) {
  const topology t({4, 4});
  const auto bad = static_cast<hardware_routing>(7);
  link_loads loads(t);
  routed_permutation p;
  p.routes = {{0, 5, -1}};
  for (const std::function<void()>& call :
       std::vector<std::function<void()>>{[&] { loads.add_message(0, 5, bad); }, [&] { loads.add(p, bad); },
                                          [&] { redist::torus::simulate(t, p, bad, time_model{}); }}) {
    try {
      call();
      ADD_FAILURE() << "expected redist::invalid_argument for hardware routing 7";
    } catch (const redist::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("hardware routing 7 unknown, expected dimension_order, "), std::string::npos)
          << e.what();
    }
  }
  for (int dim = 0; dim < 2; ++dim) EXPECT_EQ(loads.summarize().max[static_cast<size_t>(dim)], 0);
}

time_model simple_model() {
  time_model m;
  m.link_bandwidth = 1e9;
  m.injection_bandwidth = 2e9;
  m.message_latency = 1e-6;
  m.hop_latency = 1e-7;
  m.forwarding_cost = 5e-7;
  m.message_bytes = 1000000;
  return m;
}

TEST(TorusTimeModel, DirectMessageByHand) {
  const topology ring({4});
  routed_permutation p;
  p.routes = {{0, 1, -1}};
  const auto cost = redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, simple_model());
  EXPECT_DOUBLE_EQ(cost.link_time, 1e-3);       // 1 message of 1e6 bytes on a 1e9 bytes/s link
  EXPECT_DOUBLE_EQ(cost.node_time, 5e-4);       // injected at 2e9 bytes/s
  EXPECT_DOUBLE_EQ(cost.latency_time, 1.1e-6);  // one message latency and one hop
  EXPECT_DOUBLE_EQ(cost.completion_time, 1e-3 + 1.1e-6);
  EXPECT_DOUBLE_EQ(cost.loads.max[0], 1);
}

TEST(TorusTimeModel, RoutedMessageByHand) {
  const topology ring({8});
  routed_permutation p;
  p.routes = {{0, 3, 1}, {4, 5, -1}};
  p.beta = 4;
  time_model m = simple_model();
  m.injection_bandwidth = 0.5e9;  // node 1 injects and ejects 1e6 bytes: 2e-3 s, more than any link
  const auto cost = redist::torus::simulate(ring, p, hardware_routing::dimension_order, m);
  EXPECT_DOUBLE_EQ(cost.link_time, 1e-3);
  EXPECT_DOUBLE_EQ(cost.node_time, 2e-3);
  // 2 message latencies, one forwarding, 3 hops, the first 250000-byte chunk over one link.
  const double latency = 2e-6 + 5e-7 + 3e-7 + 2.5e-4;
  EXPECT_DOUBLE_EQ(cost.latency_time, latency);
  EXPECT_DOUBLE_EQ(cost.completion_time, 2e-3 + latency);

  // Tiny messages in many chunks: node 1 forwards 1000 chunks (1000 forwarding costs, 1000 messages sent).
  m = simple_model();
  m.message_bytes = 1000;
  p.beta = 1000;
  const auto chunked = redist::torus::simulate(ring, p, hardware_routing::dimension_order, m);
  EXPECT_DOUBLE_EQ(chunked.node_time, 1000 * 5e-7 + 1000 * 1e-6);
  EXPECT_DOUBLE_EQ(chunked.link_time, 1e-6);
}

TEST(TorusTimeModel, RejectsBadModelsAndRoutes) {
  const topology ring({8});
  routed_permutation p;
  p.routes = {{0, 3, 1}};
  time_model m = simple_model();
  m.link_bandwidth = 0;
  EXPECT_THROW(redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, m), redist::invalid_argument);
  m = simple_model();
  m.hop_latency = -1;
  EXPECT_THROW(redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, m), redist::invalid_argument);
  m = simple_model();
  m.link_bandwidth = std::numeric_limits<double>::infinity();
  EXPECT_THROW(redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, m), redist::invalid_argument);
  p.beta = 0;
  EXPECT_THROW(redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, simple_model()),
               redist::invalid_argument);
  p.beta = 1;
  p.routes = {{0, 3, 3}};
  EXPECT_THROW(redist::torus::simulate(ring, p, hardware_routing::uniform_shortest, simple_model()),
               redist::invalid_argument);
}

study random_study(const topology& t, routing_mode mode, int samples) {
  study s;
  s.network = t;
  s.pattern = traffic_pattern::random;
  s.routing.mode = mode;
  s.samples = samples;
  s.seed = test_seed(2024);
  return s;
}

// Theorem 1: routed directly, a random permutation puts N/8 on every link of a dimension of length N.
TEST(TorusStudy, DirectRandomPermutationLoadsAreAnEighthOfTheLength) {
  for (const topology& t : {topology({16, 8}), topology({32, 8}), topology({16, 8, 4})}) {
    const auto r = redist::torus::run_study(random_study(t, routing_mode::direct, 400));
    for (int dim = 0; dim < t.dimensions(); ++dim)
      EXPECT_NEAR(r.mean_load[static_cast<size_t>(dim)], t.extent(dim) / 8.0, 0.03 * t.extent(dim) / 8.0)
          << t.to_string() << " dim " << dim;
    EXPECT_EQ(r.routed_pairs, 0);
    EXPECT_DOUBLE_EQ(r.completion_time, r.direct_completion_time);
  }
}

// Lemma 1: basic SDR (every pair through the node opposite its destination along the short dimension) keeps
// N_X / 8 on the long dimension's links and puts 3 N_Y / 8 on the short one's.
TEST(TorusStudy, BasicSdrPutsThreeEighthsOnTheShortDimension) {
  for (const topology& t : {topology({16, 8}), topology({32, 8})}) {
    study s = random_study(t, routing_mode::sdr, 400);
    s.routing.alpha = 1;
    s.routing.gamma = 0;
    s.routing.delta = -1;
    const auto r = redist::torus::run_study(s);
    EXPECT_NEAR(r.mean_load[0], t.extent(0) / 8.0, 0.03 * t.extent(0) / 8.0) << t.to_string();
    EXPECT_NEAR(r.mean_load[1], 3 * t.extent(1) / 8.0, 0.03 * 3 * t.extent(1) / 8.0) << t.to_string();
    EXPECT_GT(r.routed_pairs, r.pairs * 8 / 10);
    EXPECT_DOUBLE_EQ(r.mean_alpha, 1);
  }
  // 3D, detouring along the shortest dimension only: Z takes 3 N_Z / 8, X and Y keep N / 8.
  const topology cube({8, 8, 4});
  study s = random_study(cube, routing_mode::sdr, 400);
  s.routing.alpha = 1;
  s.routing.gamma = 0;
  s.routing.delta = -1;
  s.routing.choice = redist::torus::intermediate_choice::shortest;
  const auto r = redist::torus::run_study(s);
  EXPECT_NEAR(r.mean_load[0], 1.0, 0.03);
  EXPECT_NEAR(r.mean_load[1], 1.0, 0.03);
  EXPECT_NEAR(r.mean_load[2], 1.5, 0.03 * 1.5);
}

TEST(TorusStudy, SamplesAreReproducibleFromTheSeed) {
  const study s = random_study(topology({8, 4}), routing_mode::sdr, 5);
  const auto a = redist::torus::run_study(s), b = redist::torus::run_study(s);
  EXPECT_EQ(a.mean_load, b.mean_load);
  EXPECT_EQ(a.max_load, b.max_load);
  EXPECT_EQ(a.completion_time, b.completion_time);
  study other = s;
  other.seed = s.seed + 1;
  EXPECT_NE(redist::torus::run_study(other).max_load, a.max_load);
}

TEST(TorusStudy, TransposeRunsEveryPhaseOfTheSchedule) {
  study s;
  s.network = topology({4, 2});
  s.pattern = traffic_pattern::transpose;
  s.grid_rows = 2;
  s.grid_cols = 4;  // L = 4, G = 2: (4/2) * (4/4) = 2 phases
  s.routing.mode = routing_mode::direct;
  const auto r = redist::torus::run_study(s);
  EXPECT_EQ(r.phases, 2);
  EXPECT_GT(r.completion_time, 0);
  EXPECT_GT(r.pairs, 0);
  EXPECT_LE(r.pairs, 2 * 8);

  // 0 x 0: the squarest grid, 2 x 4 again; a 2D network takes the default order "XYZ" as "XY".
  s.grid_rows = s.grid_cols = 0;
  const auto squarest = redist::torus::run_study(s);
  EXPECT_EQ(squarest.phases, 2);
  EXPECT_EQ(squarest.completion_time, r.completion_time);

  s.mapping = redist::torus::mapping_kind::random;
  s.samples = 4;
  EXPECT_EQ(redist::torus::run_study(s).phases, 2);
}

TEST(TorusStudy, RejectsBadStudies) {
  study s = random_study(topology({4, 4}), routing_mode::direct, 0);
  EXPECT_THROW(redist::torus::run_study(s), redist::invalid_argument);
  s.samples = 1;
  s.pattern = traffic_pattern::transpose;
  s.grid_rows = 3;
  s.grid_cols = 5;
  EXPECT_THROW(redist::torus::run_study(s), redist::invalid_argument);
  s.grid_rows = 0;
  s.grid_cols = 16;
  EXPECT_THROW(redist::torus::run_study(s), redist::invalid_argument);
  s.grid_rows = 4;
  s.grid_cols = 4;
  s.routing.alpha = 2;
  EXPECT_THROW(redist::torus::run_study(s), redist::invalid_argument);
  s.routing.alpha = 0.5;
  s.mapping_order = "XQ";
  EXPECT_THROW(redist::torus::run_study(s), redist::invalid_argument);
}

// The paper's largest machine: 2048 nodes, 8 x 16 x 16, random traffic and the transpose, routed
// automatically (every alpha simulated per permutation).
TEST(TorusStudy, TwoThousandNodesRun) {
  const topology t({8, 16, 16});
  study s = random_study(t, routing_mode::automatic, 4);
  const auto random = redist::torus::run_study(s);
  EXPECT_GT(random.completion_time, 0);
  EXPECT_LE(random.completion_time, random.direct_completion_time * (1 + 1e-12));
  for (int dim = 0; dim < 3; ++dim) EXPECT_GT(random.mean_load[static_cast<size_t>(dim)], 0);

  s.pattern = traffic_pattern::transpose;
  s.samples = 1;
  const auto transpose = redist::torus::run_study(s);
  EXPECT_EQ(transpose.phases, 2);  // 32 x 64: L = 64, G = 32
  EXPECT_GT(transpose.completion_time, 0);
}

}  // namespace
