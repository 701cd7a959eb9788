// SPDX-License-Identifier: BSD-3-Clause
// redist-test-ranks: 1 4 6 8
// Routed permutation exchanges on described tori: every routing (direct, SDR forced through intermediates,
// the defaults) delivers exactly what the direct exchange delivers, for messages of 0, 1, odd and many-chunk
// sizes, several pairs through one intermediate, the multi-phase transpose's rounds, and the transform
// engine's torus_routed strategy against point_to_point; bad input is rejected on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "expect_rejected.hpp"
#include "redist/redist.hpp"
#include "redist/torus/exchange.hpp"
#include "redist/torus/schedule.hpp"
#include "test_seed.hpp"

using namespace redist;
using namespace redist::testing;
using namespace redist::torus;

namespace {

// Torus shapes with one node per rank: the ring, and for even counts an asymmetric 2D torus (P/2 x 2) and
// at 8 the cube 2x2x2.
std::vector<std::string> shapes(int ranks) {
  std::vector<std::string> out{std::to_string(ranks)};
  if (ranks >= 4 && ranks % 2 == 0) out.push_back(std::to_string(ranks / 2) + "x2");
  if (ranks == 8) out.push_back("2x2x2");
  return out;
}

machine make_machine(const std::string& dims, std::uint64_t mapping_seed) {
  const topology t = topology::parse(dims);
  const std::string order = std::string("XYZ").substr(0, static_cast<std::size_t>(t.dimensions()));
  return {t, mapping_seed == 0 ? rank_mapping::dimension_ordered(t, order) : rank_mapping::random(t, mapping_seed)};
}

// Forces SDR through intermediates wherever the torus has a short dimension: every eligible pair routed,
// whatever its distance, any number of pairs per intermediate, and small chunks.
routing_options forced_sdr(std::int64_t beta) {
  routing_options o;
  o.mode = routing_mode::sdr;
  o.alpha = 1.0;
  o.gamma = 0;
  o.delta = -1;
  o.beta = beta;
  return o;
}

routing_options direct_routing() {
  routing_options o;
  o.mode = routing_mode::direct;
  return o;
}

std::vector<int> random_permutation(int n, std::uint64_t seed) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 g(seed);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}

// The message sizes: 0, 1, just off the minimum chunk, odd sizes and sizes of many chunks.
std::int64_t message_size(int rank, std::uint64_t seed) {
  static const std::int64_t sizes[] = {0, 1, 4095, 4097, 3 * 4096, 65537, 100000 + 37, 300007, (1 << 18) + 13};
  std::mt19937_64 g(seed * 7919 + static_cast<std::uint64_t>(rank));
  return sizes[g() % (sizeof(sizes) / sizeof(sizes[0]))];
}

std::byte pattern(int source, std::uint64_t salt, std::int64_t i) {
  return static_cast<std::byte>((static_cast<std::uint64_t>(source) * 131 + salt * 31 +
                                 static_cast<std::uint64_t>(i) * 7 + static_cast<std::uint64_t>(i >> 8)) &
                                0xff);
}

std::vector<std::byte> make_message(int source, std::uint64_t salt, std::int64_t bytes) {
  std::vector<std::byte> m(static_cast<std::size_t>(bytes));
  for (std::int64_t i = 0; i < bytes; ++i) m[static_cast<std::size_t>(i)] = pattern(source, salt, i);
  return m;
}

bool holds_message(const std::vector<std::byte>& got, int source, std::uint64_t salt) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != pattern(source, salt, static_cast<std::int64_t>(i))) return false;
  return true;
}

// Runs the permutation once with plan built from `options`; returns what arrived (executed twice: plans are
// repeatable, the second run overwrites a poisoned buffer).
std::vector<std::byte> exchange(const machine& m, const std::vector<int>& permutation, std::uint64_t seed,
                                const routing_options& options, routed_permutation* routes = nullptr,
                                std::int64_t* forwarded = nullptr) {
  const int me = world_rank();
  const std::int64_t bytes = message_size(me, seed);
  const auto plan =
      make_routed_permutation_plan(MPI_COMM_WORLD, m, permutation[static_cast<std::size_t>(me)], bytes, options);
  const std::vector<std::byte> send = make_message(me, seed, bytes);
  std::vector<std::byte> recv(static_cast<std::size_t>(plan.receive_bytes()), std::byte{0x5a});
  plan.execute(recv.data(), send.data());
  std::fill(recv.begin(), recv.end(), std::byte{0xa5});
  plan.execute(recv.data(), send.data());
  if (routes) *routes = plan.routes();
  if (forwarded) *forwarded = plan.forwarded_bytes();
  EXPECT_EQ(plan.receive_bytes(), message_size(plan.source(), seed));
  EXPECT_EQ(permutation[static_cast<std::size_t>(plan.source())], me);
  // The statistics: a message to itself is local; every byte and message sent is received somewhere, and a rank
  // receives its own message plus what it forwards.
  const redist::traffic_statistics t = plan.statistics();
  EXPECT_EQ(t.bytes_local, plan.destination() == me ? bytes : 0);
  EXPECT_EQ(t.bytes_received, (plan.source() == me ? 0 : plan.receive_bytes()) + plan.forwarded_bytes());
  EXPECT_EQ(global_sum(t.bytes_sent), global_sum(t.bytes_received));
  EXPECT_EQ(global_sum(t.messages_sent), global_sum(t.messages_received));
  return recv;
}

TEST(TorusExchange, ChunkBytes) {
  EXPECT_EQ(chunk_bytes(0, 1024), 0);
  EXPECT_EQ(chunk_bytes(1, 1024), 1);
  EXPECT_EQ(chunk_bytes(4096, 1024), 4096);  // one chunk: none smaller than min_chunk_bytes
  EXPECT_EQ(chunk_bytes(4097, 1024), 4096);
  EXPECT_EQ(chunk_bytes(1 << 20, 1024), 4096);
  EXPECT_EQ(chunk_bytes((1 << 22) + 1, 1024), 4097);
  EXPECT_EQ(chunk_bytes(100037, 7), 14291);
  EXPECT_EQ(chunk_bytes(100037, 1), 100037);
  EXPECT_THROW(chunk_bytes(10, 0), redist::invalid_argument);
}

TEST(TorusExchange, RoutedMatchesDirect) {
  const int n = world_size();
  for (const std::string& dims : shapes(n)) {
    for (std::uint64_t mapping_seed : {std::uint64_t(0), test_seed(17)}) {
      const machine m = make_machine(dims, mapping_seed);
      std::int64_t routed = 0;
      for (int trial = 0; trial < 3; ++trial) {
        const std::uint64_t seed = test_seed(1000 + static_cast<std::uint64_t>(trial)) + mapping_seed;
        // Trial 0: every node sends one step along X (the same short coordinates: SDR detours each pair
        // wherever there is a short dimension); then random permutations.
        std::vector<int> permutation = random_permutation(n, seed);
        if (trial == 0)
          for (int r = 0; r < n; ++r) {
            coordinate c = m.network.coordinates(m.mapping.node_of_rank(r));
            c[0] = (c[0] + 1) % m.network.extent(0);
            permutation[static_cast<std::size_t>(r)] = m.mapping.rank_of_node(m.network.node(c));
          }
        const std::vector<std::byte> reference = exchange(m, permutation, seed, direct_routing());
        const int source =
            static_cast<int>(std::find(permutation.begin(), permutation.end(), world_rank()) - permutation.begin());
        EXPECT_TRUE(all_ranks(holds_message(reference, source, seed))) << dims << " trial " << trial;
        for (std::int64_t beta : {std::int64_t(7), std::int64_t(64), std::int64_t(1)}) {
          routed_permutation routes;
          std::int64_t forwarded = 0;
          const auto got = exchange(m, permutation, seed, forced_sdr(beta), &routes, &forwarded);
          EXPECT_TRUE(all_ranks(got == reference)) << dims << " trial " << trial << " beta " << beta;
          routed += routes.routed();
          // What the intermediates forward is exactly the routed pairs' bytes.
          std::int64_t routed_bytes = 0;
          for (const route& r : routes.routes) {
            const std::int64_t bytes = message_size(m.mapping.rank_of_node(r.source), seed);
            EXPECT_GT(bytes, 0) << "an empty message was routed, " << dims;
            if (r.via >= 0) routed_bytes += bytes;
          }
          EXPECT_EQ(global_sum(forwarded), routed_bytes) << dims;
        }
        EXPECT_TRUE(all_ranks(exchange(m, permutation, seed, routing_options{}) == reference)) << dims;
        routing_options automatic;
        automatic.mode = routing_mode::automatic;
        automatic.beta = 16;
        EXPECT_TRUE(all_ranks(exchange(m, permutation, seed, automatic) == reference)) << dims;
      }
      // With a short dimension to detour through, forced SDR really forwards (routes are global: the same
      // verdict on every rank).
      if (topology::parse(dims).dimensions() >= 2) EXPECT_GT(routed, 0) << dims;
    }
  }
}

TEST(TorusExchange, IdentityAndSelfCopies) {
  const int me = world_rank(), n = world_size();
  const machine m = make_machine(shapes(n).back(), 0);
  const std::int64_t bytes = 5000 + me;
  const auto plan = make_routed_permutation_plan(MPI_COMM_WORLD, m, me, bytes, forced_sdr(4));
  EXPECT_EQ(plan.source(), me);
  EXPECT_EQ(plan.receive_bytes(), bytes);
  EXPECT_EQ(plan.send_chunk_bytes(), 0);
  EXPECT_TRUE(plan.routes().routes.empty());
  const std::vector<std::byte> send = make_message(me, 3, bytes);
  std::vector<std::byte> recv(static_cast<std::size_t>(bytes));
  plan.execute(recv.data(), send.data());
  EXPECT_TRUE(all_ranks(recv == send));
}

// Several pairs through one intermediate (delta = -1): on the 2x2x2 cube, detouring along Y and Z, nodes
// 1 -> 0 and 2 -> 4 both go through node 3, which also sends its own message and receives one.
TEST(TorusExchange, SeveralPairsThroughOneIntermediate) {
  if (world_size() != 8) GTEST_SKIP() << "needs 8 ranks (the 2x2x2 cube)";
  const machine m = make_machine("2x2x2", 0);
  routing_options o = forced_sdr(5);
  o.choice = intermediate_choice::all_but_longest;
  const std::vector<int> permutation{1, 0, 4, 2, 3, 6, 7, 5};
  // Seeds under which both pairs carry data (empty messages are not routed).
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t seed = test_seed(600); seeds.size() < 3; ++seed)
    if (message_size(1, seed) > 0 && message_size(2, seed) > 0) seeds.push_back(seed);
  for (std::uint64_t seed : seeds) {
    const auto reference = exchange(m, permutation, seed, direct_routing());
    routed_permutation routes;
    const auto got = exchange(m, permutation, seed, o, &routes);
    EXPECT_TRUE(all_ranks(got == reference));
    std::vector<int> pairs_through(8, 0);
    for (const route& r : routes.routes)
      if (r.via >= 0) ++pairs_through[static_cast<std::size_t>(r.via)];
    EXPECT_GE(*std::max_element(pairs_through.begin(), pairs_through.end()), 2);
  }
  // Every pair of a random permutation can pile up on few intermediates: still exact.
  for (int trial = 0; trial < 6; ++trial) {
    const std::uint64_t seed = test_seed(500 + static_cast<std::uint64_t>(trial));
    const std::vector<int> permutation = random_permutation(8, seed);
    EXPECT_TRUE(all_ranks(exchange(m, permutation, seed, o) == exchange(m, permutation, seed, direct_routing())));
  }
}

// The rounds of the multi-phase transpose on a P x Q grid, one routed permutation each.
TEST(TorusExchange, MultiphaseTransposeRounds) {
  const int me = world_rank(), n = world_size();
  std::vector<std::pair<int, int>> grids{{n, 1}, {1, n}};
  if (n % 2 == 0) grids.push_back({n / 2, 2});
  if (n % 2 == 0 && n != 4) grids.push_back({2, n / 2});
  for (const std::string& dims : shapes(n))
    for (const auto& [P, Q] : grids) {
      const machine m = make_machine(dims, test_seed(77));
      const transpose_schedule s = multiphase_transpose_schedule(P, Q);
      std::vector<int> destination;
      std::vector<std::int64_t> bytes;
      std::vector<std::vector<std::byte>> send;
      std::vector<int> sender;  // per phase: the rank whose send_to is this rank
      const auto phase_seed = [](int k) { return test_seed(40 + static_cast<std::uint64_t>(k)); };
      for (int k = 0; k < s.phases(); ++k) {
        const std::vector<int>& to = s.send_to[static_cast<std::size_t>(k)];
        sender.push_back(static_cast<int>(std::find(to.begin(), to.end(), me) - to.begin()));
        destination.push_back(s.send_to[static_cast<std::size_t>(k)][static_cast<std::size_t>(me)]);
        bytes.push_back(message_size(me, phase_seed(k)));
        send.push_back(make_message(me, phase_seed(k), bytes.back()));
      }
      auto run = [&](const routing_options& o) {
        const routed_phases_plan plan = make_routed_phases_plan(MPI_COMM_WORLD, m, destination, bytes, o);
        EXPECT_EQ(plan.phases(), s.phases());
        std::vector<std::vector<std::byte>> recv;
        std::vector<const void*> out;
        std::vector<void*> in;
        for (int k = 0; k < plan.phases(); ++k) {
          recv.emplace_back(static_cast<std::size_t>(plan.phase(k).receive_bytes()));
          EXPECT_EQ(plan.phase(k).source(), sender[static_cast<std::size_t>(k)]);
        }
        for (int k = 0; k < plan.phases(); ++k) {
          out.push_back(send[static_cast<std::size_t>(k)].data());
          in.push_back(recv[static_cast<std::size_t>(k)].data());
        }
        std::vector<int> finished;
        plan.execute(in, out, [&](int k) {
          finished.push_back(k);
          // The phase's data is complete when it is reported.
          EXPECT_TRUE(
              holds_message(recv[static_cast<std::size_t>(k)], sender[static_cast<std::size_t>(k)], phase_seed(k)));
        });
        std::vector<int> in_order(static_cast<std::size_t>(plan.phases()));
        std::iota(in_order.begin(), in_order.end(), 0);
        EXPECT_EQ(finished, in_order);
        return recv;
      };
      const auto reference = run(direct_routing());
      EXPECT_TRUE(all_ranks(run(forced_sdr(9)) == reference)) << dims << " grid " << P << "x" << Q;
      EXPECT_TRUE(all_ranks(run(routing_options{}) == reference)) << dims << " grid " << P << "x" << Q;
      // Every phase at once: each phase's chunks on tags of their own, through staging slots of their own.
      for (routing_options o : {direct_routing(), forced_sdr(9)}) {
        o.phases = phase_schedule::concurrent;
        EXPECT_TRUE(all_ranks(run(o) == reference))
            << dims << " grid " << P << "x" << Q << " concurrent " << to_string(o.mode);
      }
    }
}

// A = alpha * B^T + beta * A between block-cyclic layouts with equal blocks on one P x Q grid.
struct transpose_case {
  grid_layout a, b;
  std::vector<double> a_data, b_data;
};

transpose_case make_transpose(int P, int Q, std::int64_t m, std::int64_t n, std::int64_t block, grid_order order) {
  const int me = world_rank();
  block_cyclic_params pb;
  pb.m = m;
  pb.n = n;
  pb.mb = pb.nb = block;
  pb.proc_rows = P;
  pb.proc_cols = Q;
  pb.ordering = order;
  block_cyclic_params pa = pb;
  pa.m = n;
  pa.n = m;
  transpose_case c{block_cyclic(pa, me), block_cyclic(pb, me), {}, {}};
  c.b_data.resize(static_cast<std::size_t>(c.b.local_elements()));
  c.a_data.resize(static_cast<std::size_t>(c.a.local_elements()));
  std::mt19937_64 g(test_seed(static_cast<std::uint64_t>(me) * 31 + 5));
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : c.b_data) v = u(g);
  for (double& v : c.a_data) v = u(g);
  return c;
}

TEST(TorusExchange, TransformEngineTransposeMatchesPointToPoint) {
  const int n = world_size();
  std::vector<std::pair<int, int>> grids{{n, 1}};
  if (n % 2 == 0) grids.push_back({n / 2, 2});
  if (n % 2 == 0 && n != 4) grids.push_back({2, n / 2});
  for (const std::string& dims : {shapes(n).front(), shapes(n).back()})
    for (const auto& [P, Q] : grids)
      for (grid_order order : {grid_order::row_major, grid_order::col_major}) {
        transpose_case c = make_transpose(P, Q, 61, 45, 4, order);
        transform_options p2p;
        p2p.strategy = exchange_strategy::point_to_point;
        transform_options routed;
        routed.strategy = exchange_strategy::torus_routed;
        routed.torus = std::make_shared<const machine>(make_machine(dims, test_seed(9)));
        routed.torus_routing = forced_sdr(3);
        // Phases one after another for row-major grids, all at once for column-major ones.
        if (order == grid_order::col_major) routed.torus_routing.phases = phase_schedule::concurrent;
        const auto reference_plan =
            make_transform_plan(MPI_COMM_WORLD, c.a, c.b, op::transpose, element_type::f64, p2p);
        const auto plan = make_transform_plan(MPI_COMM_WORLD, c.a, c.b, op::transpose, element_type::f64, routed);
        EXPECT_EQ(plan.strategy(), exchange_strategy::torus_routed);
        EXPECT_STREQ(to_string(plan.strategy()), "torus_routed");
        std::vector<double> expected = c.a_data, got = c.a_data;
        reference_plan.execute(expected.data(), c.b_data.data(), 2.0, 0.5);
        plan.execute(got.data(), c.b_data.data(), 2.0, 0.5);
        plan.execute(got.data(), c.b_data.data(), 2.0, 0.5);  // repeatable
        reference_plan.execute(expected.data(), c.b_data.data(), 2.0, 0.5);
        EXPECT_TRUE(all_ranks(got == expected)) << dims << " grid " << P << "x" << Q;
        // The way back (B = A^T) is a transpose on the same grid too.
        std::vector<double> back(c.b_data.size()), back_expected(c.b_data.size());
        plan.inverse().execute(back.data(), got.data());
        reference_plan.inverse().execute(back_expected.data(), got.data());
        EXPECT_TRUE(all_ranks(back == back_expected)) << dims << " grid " << P << "x" << Q;
      }
}

TEST(TorusExchange, RejectsBadInput) {
  const int me = world_rank(), n = world_size();
  const machine m = make_machine(shapes(n).back(), 0);
  const machine too_big = make_machine(std::to_string(n + 1), 0);
  expect_rejected<redist::invalid_argument>(
      [&] { make_routed_permutation_plan(MPI_COMM_WORLD, too_big, me, 10, routing_options{}); },
      "nodes, the communicator has " + std::to_string(n) + " ranks");
  if (n > 1)
    expect_rejected<redist::invalid_argument>(
        [&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, 0, 10, routing_options{}); }, "permutation");
  expect_rejected<redist::invalid_argument>(
      [&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, me == 0 ? n : me, 10, routing_options{}); },
      "outside the communicator");
  routing_options bad_alpha;
  bad_alpha.alpha = 1.5;
  expect_rejected<redist::invalid_argument>([&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, me, 10, bad_alpha); },
                                            "alpha");
  expect_rejected<redist::invalid_argument>(
      [&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, me, me == 0 ? -1 : 10, routing_options{}); }, "bytes");
  routing_options bad_phases;
  bad_phases.phases = static_cast<phase_schedule>(7);
  expect_rejected<redist::invalid_argument>(
      [&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, me, 10, bad_phases); }, "phase schedule 7 unknown");
  // Phases at once take three tags each, within the 32767 every MPI allows: 8455 phases at most.
  routing_options at_once;
  at_once.phases = phase_schedule::concurrent;
  expect_rejected<redist::invalid_argument>(
      [&] {
        make_routed_phases_plan(MPI_COMM_WORLD, m, std::vector<int>(8456, me), std::vector<std::int64_t>(8456, 0),
                                at_once);
      },
      "expected at most 8455 phases");
  routing_options other = routing_options{};
  if (me == 0) other.alpha = 0.25;
  if (n > 1)
    expect_rejected<redist::inconsistent_ranks>([&] { make_routed_permutation_plan(MPI_COMM_WORLD, m, me, 10, other); },
                                                "routing_options");
  // A null buffer with data to move is refused everywhere before anything moves.
  const auto plan = make_routed_permutation_plan(MPI_COMM_WORLD, m, (me + 1) % n, 100, routing_options{});
  std::vector<std::byte> send(100), recv(100);
  expect_rejected<redist::invalid_argument>([&] { plan.execute(recv.data(), me == 0 ? nullptr : send.data()); },
                                            "null send buffer");
}

TEST(TorusExchange, TransformEngineRejectsWhatItCannotRoute) {
  const int n = world_size();
  transpose_case c = make_transpose(n, 1, 30, 20, 3, grid_order::row_major);
  transform_options routed;
  routed.strategy = exchange_strategy::torus_routed;
  expect_rejected<redist::invalid_argument>(
      [&] { make_transform_plan(MPI_COMM_WORLD, c.a, c.b, op::transpose, element_type::f64, routed); },
      "transform_options::torus");
  routed.torus = std::make_shared<const machine>(make_machine(shapes(n).back(), 0));
  if (n == 1) return;
  // B on P x 1, A on 1 x P: two grids.
  block_cyclic_params pa;
  pa.m = 20;
  pa.n = 30;
  pa.mb = pa.nb = 3;
  pa.proc_cols = n;
  const grid_layout a_other = block_cyclic(pa, world_rank());
  expect_rejected<redist::invalid_argument>(
      [&] { make_transform_plan(MPI_COMM_WORLD, a_other, c.b, op::transpose, element_type::f64, routed); },
      "process grids");
  // A copy between block sizes 2 and 3 on a grid with gcd(P, Q) > 1 pairs ranks the schedule never pairs
  // (with gcd 1 the schedule pairs every two ranks).
  if (n % 4 != 0) return;
  block_cyclic_params p2;
  p2.m = p2.n = 24;
  p2.mb = p2.nb = 2;
  p2.proc_rows = 2;
  p2.proc_cols = n / 2;
  block_cyclic_params p3 = p2;
  p3.mb = p3.nb = 3;
  expect_rejected<redist::invalid_argument>(
      [&] {
        make_transform_plan(MPI_COMM_WORLD, block_cyclic(p3, world_rank()), block_cyclic(p2, world_rank()),
                            op::identity, element_type::f64, routed);
      },
      "multi-phase transpose schedule");
}

}  // namespace
