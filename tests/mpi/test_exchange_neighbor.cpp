// SPDX-License-Identifier: BSD-3-Clause
// The persistent neighborhood alltoallv against MPICH's MPI_Neighbor_alltoallv on random sparse graphs (with
// self-loops, zero counts, ranks without neighbors), every strategy and region choice, repeated cycles with
// the send buffer changed in between; a derived datatype; one message per region pair (statistics); the C
// API; bad input (non-graph communicator, mismatched graphs, a negative
// count on one rank) refused on every rank with nothing moved.
// redist-test-nodes: 4:2 8:4
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "expect_rejected.hpp"
#include "mpi_test_support.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "test_seed.hpp"

using namespace redist::exchange;
namespace exchange = redist::exchange;
using namespace redist::testing;

namespace {

struct random_graph {
  std::vector<int> sources, destinations, sendcounts, sdispls, recvcounts, rdispls;
  MPI_Comm comm = MPI_COMM_NULL;
  int send_total = 0, recv_total = 0;

  // An edge of the global list: this rank keeps its send side (it is `from`) and its receive side (`to`).
  void add_edge(int from, int to, int count) {
    if (from == world_rank()) {
      destinations.push_back(to);
      sendcounts.push_back(count);
      sdispls.push_back(send_total);
      send_total += count;
    }
    if (to == world_rank()) {
      sources.push_back(from);
      recvcounts.push_back(count);
      rdispls.push_back(recv_total);
      recv_total += count;
    }
  }
  void create_graph_comm() {
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &comm);
  }
};

// Every rank draws the same global edge list (test_seed is the same on every rank), then keeps its own edges.
random_graph make_graph(std::uint64_t seed) {
  const int p = world_size();
  std::mt19937_64 g(test_seed(seed));
  random_graph r;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      if (g() % 3 != 0) continue;
      const int count = static_cast<int>(g() % 4);  // zero counts included
      r.add_edge(i, j, count);
    }
  r.create_graph_comm();
  return r;
}

// MPICH's own exchange on the same graph: the reference.
void mpi_reference(const random_graph& r, const std::vector<double>& send, std::vector<double>& expected,
                   MPI_Datatype type) {
  MPI_Neighbor_alltoallv(send.data(), r.sendcounts.data(), r.sdispls.data(), type, expected.data(), r.recvcounts.data(),
                         r.rdispls.data(), type, r.comm);
}

void fill(std::vector<double>& v, int cycle) {
  for (size_t k = 0; k < v.size(); ++k) v[k] = world_rank() * 1000.0 + static_cast<double>(k) + cycle * 0.5;
}

void check_against_mpi(exchange_options options, std::uint64_t seed) {
  random_graph r = make_graph(seed);
  std::vector<double> send(r.send_total), recv(r.recv_total, -1), expected(r.recv_total, -2);
  neighbor_plan plan =
      neighbor_alltoallv_init(send, r.sendcounts, r.sdispls, recv, r.recvcounts, r.rdispls, r.comm, options);
  for (int cycle = 0; cycle < 3; ++cycle) {
    fill(send, cycle);
    plan.start();
    plan.wait();
    mpi_reference(r, send, expected, MPI_DOUBLE);
    EXPECT_TRUE(all_ranks(recv == expected)) << "strategy " << to_string(plan.statistics().strategy);
  }
  // Every byte and message sent is received somewhere; what the exchange delivers is either sent or local.
  const exchange_statistics& s = plan.statistics();
  EXPECT_EQ(global_sum(s.bytes_sent), global_sum(s.bytes_received)) << to_string(s.strategy);
  EXPECT_EQ(global_sum(s.messages_sent), global_sum(s.messages_received)) << to_string(s.strategy);
  EXPECT_EQ(s.bytes_sent, s.inter_region_bytes + s.intra_region_bytes);
  if (s.strategy == exchange::neighbor_strategy::standard)
    EXPECT_EQ(s.bytes_sent + s.bytes_local,
              static_cast<std::int64_t>(sizeof(double)) *
                  std::accumulate(r.sendcounts.begin(), r.sendcounts.end(), std::int64_t{0}));
  MPI_Comm_free(&r.comm);
}

TEST(ExchangeNeighbor, MatchesMpiEveryStrategyAndRegion) {
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                        exchange::neighbor_strategy::automatic})
    for (int regions = 0; regions < 4; ++regions) {
      exchange_options o;
      o.strategy = strategy;
      if (regions == 1) o.region_size = 1;
      if (regions == 2) o.region_size = 3;
      if (regions == 3) o.region_id = world_rank() < 1 ? 0 : 1;  // unequal sizes
      check_against_mpi(o, 11 + static_cast<std::uint64_t>(regions));
    }
}

// 64-bit counts and displacements (the form of MPI-4's large-count calls) plan the same exchange as int ones.
TEST(ExchangeNeighbor, SixtyFourBitCountsMatchMpi) {
  random_graph r = make_graph(21);
  const auto wide = [](const std::vector<int>& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };
  const std::vector<std::int64_t> sendcounts = wide(r.sendcounts), sdispls = wide(r.sdispls),
                                  recvcounts = wide(r.recvcounts), rdispls = wide(r.rdispls);
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate}) {
    std::vector<double> send(r.send_total), recv(r.recv_total, -1), expected(r.recv_total, -2);
    exchange_options o;
    o.strategy = strategy;
    o.region_size = 2;
    neighbor_plan plan = neighbor_alltoallv_init(send, sendcounts, sdispls, recv, recvcounts, rdispls, r.comm, o);
    fill(send, 1);
    plan.start();
    plan.wait();
    mpi_reference(r, send, expected, MPI_DOUBLE);
    EXPECT_TRUE(all_ranks(recv == expected)) << to_string(strategy);
  }
  MPI_Comm_free(&r.comm);
}

// A derived element type with holes (two doubles out of every four): direct messages use it as given,
// aggregated ones pack it; either way the holes of the receive buffer stay untouched, as with MPI.
TEST(ExchangeNeighbor, DerivedDatatypeMatchesMpi) {
  MPI_Datatype pair, spaced;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pair);
  MPI_Type_create_resized(pair, 0, 4 * static_cast<MPI_Aint>(sizeof(double)), &spaced);
  MPI_Type_commit(&spaced);
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate}) {
    random_graph r = make_graph(21);
    std::vector<double> send(4 * static_cast<size_t>(r.send_total)), recv(4 * static_cast<size_t>(r.recv_total), -1),
        expected(recv.size(), -1);
    neighbor_buffers b{send.data(), r.sendcounts.data(), r.sdispls.data(), spaced,
                       recv.data(), r.recvcounts.data(), r.rdispls.data(), spaced};
    b.send_capacity = r.send_total;
    b.recv_capacity = r.recv_total;
    exchange_options o;
    o.strategy = strategy;
    o.region_size = 2;
    neighbor_plan plan = neighbor_alltoallv_init(b, r.comm, o);
    for (int cycle = 0; cycle < 2; ++cycle) {
      fill(send, cycle);
      plan.start();
      plan.wait();
      mpi_reference(r, send, expected, spaced);
      EXPECT_TRUE(all_ranks(recv == expected)) << to_string(strategy);
    }
    MPI_Comm_free(&r.comm);
  }
  MPI_Type_free(&spaced);
  MPI_Type_free(&pair);
}

// Every rank sends one element to every rank: aggregate sends one message per ordered pair of regions
// across regions, standard one per pair of ranks in different regions; the bytes are the same.
TEST(ExchangeNeighbor, AggregateSendsOneMessagePerRegionPair) {
  const int p = world_size(), region_size = 2, regions = (p + region_size - 1) / region_size;
  std::vector<int> everyone(p), ones(p, 1), displs(p);
  for (int r = 0; r < p; ++r) everyone[r] = displs[r] = r;
  std::vector<double> send(p), recv(p);
  std::int64_t cross_pairs = 0;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) cross_pairs += i / region_size != j / region_size;
  std::int64_t bytes[2] = {0, 0};
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate}) {
    exchange_options o;
    o.strategy = strategy;
    o.region_size = region_size;
    neighbor_plan plan =
        neighbor_alltoallv_init(everyone, everyone, send, ones, displs, recv, ones, displs, MPI_COMM_WORLD, o);
    fill(send, 0);
    plan.start();
    plan.wait();
    for (int r = 0; r < p; ++r) EXPECT_EQ(recv[r], r * 1000.0 + world_rank());
    const exchange_statistics& s = plan.statistics();
    EXPECT_EQ(s.regions, regions);
    const std::int64_t messages = global_sum(s.inter_region_messages);
    bytes[strategy == exchange::neighbor_strategy::aggregate] = global_sum(s.inter_region_bytes);
    if (strategy == exchange::neighbor_strategy::standard)
      EXPECT_EQ(messages, cross_pairs);
    else
      EXPECT_EQ(messages, static_cast<std::int64_t>(regions) * (regions - 1));
  }
  EXPECT_EQ(bytes[0], bytes[1]);
  EXPECT_EQ(bytes[0], cross_pairs * static_cast<std::int64_t>(sizeof(double)));
}

TEST(ExchangeNeighbor, CApiMatchesMpi) {
  random_graph r = make_graph(5);
  std::vector<double> send(r.send_total), recv(r.recv_total, -1), expected(r.recv_total, -2);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "aggregate");
  MPI_Info_set(info, "redist_region_size", "2");
  redist_request req = REDIST_REQUEST_NULL;
  ASSERT_EQ(redist_neighbor_alltoallv_init(send.data(), r.sendcounts.data(), r.sdispls.data(), MPI_DOUBLE, recv.data(),
                                           r.recvcounts.data(), r.rdispls.data(), MPI_DOUBLE, r.comm, info, &req),
            MPI_SUCCESS);
  fill(send, 1);
  EXPECT_EQ(redist_start(&req), MPI_SUCCESS);
  EXPECT_EQ(redist_wait(&req), MPI_SUCCESS);
  mpi_reference(r, send, expected, MPI_DOUBLE);
  EXPECT_TRUE(all_ranks(recv == expected));
  EXPECT_EQ(redist_request_free(&req), MPI_SUCCESS);
  EXPECT_EQ(req, REDIST_REQUEST_NULL);
  MPI_Info_free(&info);
  MPI_Comm_free(&r.comm);
}

// The plan shape of every capability: make_neighbor_plan(comm, description, options) with the edges from the graph
// communicator or listed, execute(), communicator(); and the same from C (redist_neighbor_plan_*).
TEST(ExchangeNeighbor, PlanShapeInCppAndCMatchesMpi) {
  random_graph r = make_graph(23);
  std::vector<double> send(r.send_total), recv(r.recv_total, -1), expected(r.recv_total, -2);
  const neighbor_buffers buffers = typed_buffers(send, r.sendcounts, r.sdispls, recv, r.recvcounts, r.rdispls);
  for (bool from_graph : {true, false}) {
    neighbor_description d;
    d.buffers = buffers;
    d.edges_of_graph_communicator = from_graph;
    if (!from_graph) {
      d.sources = r.sources;
      d.destinations = r.destinations;
    }
    neighbor_plan plan = make_neighbor_plan(from_graph ? r.comm : MPI_COMM_WORLD, d);
    int compared = MPI_UNEQUAL;
    MPI_Comm_compare(plan.communicator(), from_graph ? r.comm : MPI_COMM_WORLD, &compared);
    EXPECT_EQ(compared, MPI_CONGRUENT);
    fill(send, from_graph ? 2 : 3);
    plan.execute();
    mpi_reference(r, send, expected, MPI_DOUBLE);
    EXPECT_TRUE(all_ranks(recv == expected)) << (from_graph ? "graph" : "lists");
  }
  // Lists as well as the graph's edges: refused on every rank (here on the last rank only).
  neighbor_description both;
  both.buffers = buffers;
  both.edges_of_graph_communicator = true;
  if (world_rank() == world_size() - 1) both.sources = {0};
  bool refused = false;
  try {
    (void)make_neighbor_plan(r.comm, both);
  } catch (const redist::invalid_argument& e) {
    refused = std::string(e.what()).find("edge lists are not empty") != std::string::npos;
  }
  EXPECT_TRUE(all_ranks(refused));

  redist_neighbor_description c{};
  c.sendbuf = send.data();
  c.sendcounts = r.sendcounts.data();
  c.sdispls = r.sdispls.data();
  c.sendtype = MPI_DOUBLE;
  c.recvbuf = recv.data();
  c.recvcounts = r.recvcounts.data();
  c.rdispls = r.rdispls.data();
  c.recvtype = MPI_DOUBLE;
  c.indegree = static_cast<int>(r.sources.size());
  c.sources = r.sources.data();
  c.outdegree = static_cast<int>(r.destinations.size());
  c.destinations = r.destinations.data();
  redist_neighbor_plan plan = REDIST_NEIGHBOR_PLAN_NULL;
  ASSERT_EQ(redist_neighbor_plan_create(MPI_COMM_WORLD, &c, MPI_INFO_NULL, &plan), MPI_SUCCESS);
  fill(send, 4);
  EXPECT_EQ(redist_neighbor_plan_execute(plan), MPI_SUCCESS);
  mpi_reference(r, send, expected, MPI_DOUBLE);
  EXPECT_TRUE(all_ranks(recv == expected));
  fill(send, 5);
  EXPECT_EQ(redist_neighbor_plan_start(plan), MPI_SUCCESS);
  EXPECT_EQ(redist_neighbor_plan_wait(plan), MPI_SUCCESS);
  mpi_reference(r, send, expected, MPI_DOUBLE);
  EXPECT_TRUE(all_ranks(recv == expected));
  EXPECT_EQ(redist_neighbor_plan_free(&plan), MPI_SUCCESS);
  EXPECT_EQ(plan, REDIST_NEIGHBOR_PLAN_NULL);
  EXPECT_EQ(redist_neighbor_plan_execute(plan), MPI_ERR_REQUEST);
  // A null description: refused on every rank.
  EXPECT_EQ(redist_neighbor_plan_create(MPI_COMM_WORLD, nullptr, MPI_INFO_NULL, &plan), MPI_ERR_ARG);
  MPI_Comm_free(&r.comm);
}

TEST(ExchangeNeighbor, NonGraphCommunicatorRefused) {
  redist_request req = REDIST_REQUEST_NULL;
  EXPECT_EQ(redist_neighbor_alltoallv_init(nullptr, nullptr, nullptr, MPI_DOUBLE, nullptr, nullptr, nullptr, MPI_DOUBLE,
                                           MPI_COMM_WORLD, MPI_INFO_NULL, &req),
            MPI_ERR_TOPOLOGY);
}

TEST(ExchangeNeighbor, BadInputRefusedOnEveryRank) {
  const int p = world_size(), me = world_rank();
  std::vector<double> send(4, 1.0), recv(4, 0.0);
  // Rank 0 sends 2 elements to the last rank, which expects 1 (or, on one rank, to itself).
  std::vector<int> to, from, counts_out, counts_in, displs = {0};
  if (me == 0) {
    to = {p - 1};
    counts_out = {2};
  }
  if (me == p - 1) {
    from = {0};
    counts_in = {1};
  }
  std::vector<int> sd(to.size(), 0), rd(from.size(), 0);
  redist_request req = REDIST_REQUEST_NULL;
  EXPECT_EQ(redist_neighbor_alltoallv_init_lists(static_cast<int>(from.size()), from.data(),
                                                 static_cast<int>(to.size()), to.data(), send.data(), counts_out.data(),
                                                 sd.data(), MPI_DOUBLE, recv.data(), counts_in.data(), rd.data(),
                                                 MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
            MPI_ERR_TOPOLOGY);
  EXPECT_EQ(req, REDIST_REQUEST_NULL);
  // A negative count on the last rank only: MPI_ERR_COUNT (invalid_count), as in every entry point.
  std::vector<int> self = {me}, bad = {me == p - 1 ? -1 : 1}, zero = {0};
  EXPECT_EQ(redist_neighbor_alltoallv_init_lists(1, self.data(), 1, self.data(), send.data(), bad.data(), zero.data(),
                                                 MPI_DOUBLE, recv.data(), bad.data(), zero.data(), MPI_DOUBLE,
                                                 MPI_COMM_WORLD, MPI_INFO_NULL, &req),
            MPI_ERR_COUNT);
  EXPECT_TRUE(all_ranks(recv == std::vector<double>(4, 0.0)));
}

// A graph whose elements carry global ids drawn from a small pool per source (64-bit values), so that a
// source sends some ids to several ranks of a region and some twice on one edge. The value of an element
// is a function of (source, id), as de-duplication requires.
struct id_graph {
  random_graph graph;
  std::vector<std::int64_t> send_ids, recv_ids;
  std::int64_t distinct_cross_elements = 0;  // over all sources s and regions b != region(s): distinct ids s sends to b
};

constexpr std::int64_t id_base = std::int64_t{1} << 40;

// Each ordered pair of ranks (self-loops included) has an edge of 0 to 4 elements with probability 1/2, or
// with `every_pair` an edge of 1 to 4 elements.
id_graph make_id_graph(std::uint64_t seed, int region_size, bool every_pair = false) {
  const int p = world_size(), me = world_rank();
  id_graph r;
  std::mt19937_64 g(test_seed(seed));
  std::vector<std::vector<std::set<std::int64_t>>> distinct(p, std::vector<std::set<std::int64_t>>(p));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      if (!every_pair && g() % 2 != 0) continue;
      const int count = static_cast<int>(every_pair ? 1 + g() % 4 : g() % 5);
      std::vector<std::int64_t> ids(count);
      for (auto& id : ids) id = id_base + static_cast<std::int64_t>(g() % 6) + 100 * i;
      if (i / region_size != j / region_size) distinct[i][j / region_size].insert(ids.begin(), ids.end());
      r.graph.add_edge(i, j, count);
      if (i == me) r.send_ids.insert(r.send_ids.end(), ids.begin(), ids.end());
      if (j == me) r.recv_ids.insert(r.recv_ids.end(), ids.begin(), ids.end());
    }
  for (auto& per_source : distinct)
    for (auto& ids : per_source) r.distinct_cross_elements += static_cast<std::int64_t>(ids.size());
  r.graph.create_graph_comm();
  return r;
}

double value_of(int source, std::int64_t id, int cycle) {
  return source * 1e3 + static_cast<double>(id - id_base) + cycle * 0.25;
}

TEST(ExchangeNeighbor, DedupWithGlobalIdsMatchesMpi) {
  const int region_size = 2;
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                        exchange::neighbor_strategy::dedup, exchange::neighbor_strategy::automatic}) {
    id_graph r = make_id_graph(31, region_size);
    std::vector<double> send(r.graph.send_total), recv(r.graph.recv_total, -1), expected(recv.size(), -2);
    exchange_options o;
    o.strategy = strategy;
    o.region_size = region_size;
    neighbor_plan plan = neighbor_alltoallv_init(
        with_global_ids(
            typed_buffers(send, r.graph.sendcounts, r.graph.sdispls, recv, r.graph.recvcounts, r.graph.rdispls),
            r.send_ids, r.recv_ids),
        r.graph.comm, o);
    for (int cycle = 0; cycle < 3; ++cycle) {
      for (size_t k = 0; k < send.size(); ++k) send[k] = value_of(world_rank(), r.send_ids[k], cycle);
      plan.start();
      plan.wait();
      mpi_reference(r.graph, send, expected, MPI_DOUBLE);
      EXPECT_TRUE(all_ranks(recv == expected)) << "strategy " << to_string(plan.statistics().strategy);
    }
    if (strategy == exchange::neighbor_strategy::dedup) {
      // Each distinct (source, id) crosses into a region once.
      EXPECT_EQ(global_sum(plan.statistics().inter_region_bytes),
                r.distinct_cross_elements * static_cast<std::int64_t>(sizeof(double)));
    }
    MPI_Comm_free(&r.graph.comm);
  }
}

// The spaced type of DerivedDatatypeMatchesMpi: dedup picks single elements out of it.
TEST(ExchangeNeighbor, DedupDerivedDatatypeMatchesMpi) {
  MPI_Datatype pair, spaced;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pair);
  MPI_Type_create_resized(pair, 0, 4 * static_cast<MPI_Aint>(sizeof(double)), &spaced);
  MPI_Type_commit(&spaced);
  id_graph r = make_id_graph(41, 3);
  std::vector<double> send(4 * static_cast<size_t>(r.graph.send_total)),
      recv(4 * static_cast<size_t>(r.graph.recv_total), -1), expected(recv.size(), -1);
  neighbor_buffers b{send.data(), r.graph.sendcounts.data(), r.graph.sdispls.data(), spaced,
                     recv.data(), r.graph.recvcounts.data(), r.graph.rdispls.data(), spaced};
  b.send_capacity = r.graph.send_total;
  b.recv_capacity = r.graph.recv_total;
  exchange_options o;
  o.strategy = exchange::neighbor_strategy::dedup;
  o.region_size = 3;
  neighbor_plan plan = neighbor_alltoallv_init(with_global_ids(b, r.send_ids, r.recv_ids), r.graph.comm, o);
  for (int cycle = 0; cycle < 2; ++cycle) {
    for (size_t k = 0; k < r.send_ids.size(); ++k) {
      send[4 * k] = value_of(world_rank(), r.send_ids[k], cycle);
      send[4 * k + 2] = -value_of(world_rank(), r.send_ids[k], cycle);
    }
    plan.start();
    plan.wait();
    mpi_reference(r.graph, send, expected, spaced);
    EXPECT_TRUE(all_ranks(recv == expected));
  }
  MPI_Comm_free(&r.graph.comm);
  MPI_Type_free(&spaced);
  MPI_Type_free(&pair);
}

// Automatic takes the candidate with the least predicted time and says so: with costly inter-region
// messages a staged strategy, with free ones and costly copies the standard one. Every rank sends to every
// rank, so that staging has messages to combine and adds copies on every rank: on a sparse graph it may do
// neither (its copies then tie with standard's on the busiest rank, and the network terms decide).
TEST(ExchangeNeighbor, AutomaticFollowsTheCostModel) {
  if (world_size() < 3) GTEST_SKIP() << "needs two regions of which one holds two ranks";
  id_graph r = make_id_graph(51, 2, true);
  std::vector<double> send(r.graph.send_total), recv(r.graph.recv_total, -1), expected(recv.size(), -2);
  for (size_t k = 0; k < send.size(); ++k) send[k] = value_of(world_rank(), r.send_ids[k], 0);
  const auto buffers = with_global_ids(
      typed_buffers(send, r.graph.sendcounts, r.graph.sdispls, recv, r.graph.recvcounts, r.graph.rdispls), r.send_ids,
      r.recv_ids);
  cost_model costly_network, costly_copies;
  costly_network.inter_seconds_per_message = 1e-3;
  costly_network.inter_seconds_per_byte = 1e-6;
  costly_network.source = "test";
  costly_copies.inter_latency = costly_copies.intra_latency = 0;
  costly_copies.inter_seconds_per_message = costly_copies.intra_seconds_per_message = 0;
  costly_copies.copy_seconds_per_byte = 1e-3;
  costly_copies.source = "test";
  for (const bool network_is_costly : {true, false}) {
    const cost_model& model = network_is_costly ? costly_network : costly_copies;
    exchange_options o;
    o.region_size = 2;
    o.model = model;
    neighbor_plan plan = neighbor_alltoallv_init(buffers, r.graph.comm, o);
    const exchange_statistics& s = plan.statistics();
    ASSERT_EQ(s.estimates.size(), 3u);
    const auto best = std::min_element(s.estimates.begin(), s.estimates.end(),
                                       [](auto& x, auto& y) { return x.seconds < y.seconds; });
    EXPECT_EQ(s.strategy, best->strategy);
    EXPECT_NE(s.reason.find("cost model: test"), std::string::npos) << s.reason;
    if (network_is_costly)
      EXPECT_NE(s.strategy, exchange::neighbor_strategy::standard) << s.reason;
    else
      EXPECT_EQ(s.strategy, exchange::neighbor_strategy::standard) << s.reason;
    plan.start();
    plan.wait();
    mpi_reference(r.graph, send, expected, MPI_DOUBLE);
    EXPECT_TRUE(all_ranks(recv == expected));
  }
  MPI_Comm_free(&r.graph.comm);
}

TEST(ExchangeNeighbor, CalibrationGivesTheSameFiguresEverywhere) {
  exchange_options regions;
  regions.region_size = 2;
  // A receive the application has posted on the communicator: the calibration's messages must not match it (were
  // they sent on the caller's communicator, one would land here and the calibration would wait for it: ctest's
  // timeout fails the test then).
  int posted = 0;
  MPI_Request application;
  MPI_Irecv(&posted, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &application);
  const cost_model m = calibrate_cost_model(MPI_COMM_WORLD, regions);
  int matched = 0;
  MPI_Test(&application, &matched, MPI_STATUS_IGNORE);
  EXPECT_EQ(matched, 0) << "a calibration message arrived in the application's receive on the caller's communicator";
  if (!matched) {
    MPI_Cancel(&application);
    MPI_Wait(&application, MPI_STATUS_IGNORE);
  }
  const double figures[6] = {m.intra_latency,          m.intra_seconds_per_byte,  m.inter_latency,
                             m.inter_seconds_per_byte, m.region_seconds_per_byte, m.copy_seconds_per_byte};
  double lowest[6], highest[6];
  MPI_Allreduce(figures, lowest, 6, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(figures, highest, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(lowest[k], highest[k]) << "figure " << k;
    EXPECT_GE(figures[k], 0.0) << "figure " << k;
  }
  EXPECT_EQ(m.source, "calibrated");
}

TEST(ExchangeNeighbor, CalibrationRefusesANegativeRegionSizeOnEveryRank) {
  exchange_options regions;
  if (world_rank() == world_size() - 1) regions.region_size = -2;
  expect_rejected<redist::invalid_argument>([&] { calibrate_cost_model(MPI_COMM_WORLD, regions); }, "is negative");
}

TEST(ExchangeNeighbor, CApiExtAndQuery) {
  id_graph r = make_id_graph(61, 2);
  std::vector<double> send(r.graph.send_total), recv(r.graph.recv_total, -1), expected(recv.size(), -2);
  for (size_t k = 0; k < send.size(); ++k) send[k] = value_of(world_rank(), r.send_ids[k], 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "dedup");
  MPI_Info_set(info, "redist_region_size", "2");
  redist_request req = REDIST_REQUEST_NULL;
  const auto init = [&]() {
    return redist_neighbor_alltoallv_init_ext(
        send.data(), r.graph.sendcounts.data(), r.graph.sdispls.data(), r.send_ids.data(), MPI_DOUBLE, recv.data(),
        r.graph.recvcounts.data(), r.graph.rdispls.data(), r.recv_ids.data(), MPI_DOUBLE, r.graph.comm, info, &req);
  };
  ASSERT_EQ(init(), MPI_SUCCESS);
  const char *strategy = nullptr, *reason = nullptr;
  ASSERT_EQ(redist_neighbor_query(req, &strategy, &reason), MPI_SUCCESS);
  EXPECT_STREQ(strategy, "dedup");
  EXPECT_STREQ(reason, "requested dedup");
  EXPECT_EQ(redist_start(&req), MPI_SUCCESS);
  EXPECT_EQ(redist_wait(&req), MPI_SUCCESS);
  mpi_reference(r.graph, send, expected, MPI_DOUBLE);
  EXPECT_TRUE(all_ranks(recv == expected));
  EXPECT_EQ(redist_request_free(&req), MPI_SUCCESS);
  EXPECT_EQ(redist_neighbor_query(req, &strategy, &reason), MPI_ERR_REQUEST);
  // A user cost model through info, and a malformed one.
  MPI_Info_set(info, "redist_strategy", "auto");
  MPI_Info_set(info, "redist_cost_model", "0,0,0,0,1e-3,1e-6,0,0");
  ASSERT_EQ(init(), MPI_SUCCESS);
  ASSERT_EQ(redist_neighbor_query(req, &strategy, &reason), MPI_SUCCESS);
  if (world_size() > 2)  // else one region of two ranks: nothing to choose
    EXPECT_NE(std::string(reason).find("cost model: user"), std::string::npos) << reason;
  EXPECT_EQ(redist_request_free(&req), MPI_SUCCESS);
  MPI_Info_set(info, "redist_cost_model", "1,2,3");
  EXPECT_EQ(init(), MPI_ERR_ARG);
  EXPECT_EQ(req, REDIST_REQUEST_NULL);
  // The 0.1 development line's other spelling of auto (CHANGELOG.md) is an unknown strategy now.
  MPI_Info_set(info, "redist_cost_model", "defaults");
  MPI_Info_set(info, "redist_strategy", "automatic");
  EXPECT_EQ(init(), MPI_ERR_ARG);
  EXPECT_EQ(req, REDIST_REQUEST_NULL);
  MPI_Info_free(&info);
  MPI_Comm_free(&r.graph.comm);
}

// C++ bad input: each refused on every rank (the fault sits on the last rank only) before anything moves.
TEST(ExchangeNeighbor, CppBadInputRefusedOnEveryRank) {
  const int me = world_rank(), last = world_size() - 1;
  std::vector<int> self = {me}, two = {me, me};
  std::vector<double> send(4, 1.0), recv(4, 0.0);
  const std::vector<int> one = {1}, zero = {0};
  const auto attempt = [&](std::vector<int> sendcounts, std::vector<int> sdispls, std::vector<int> recvcounts,
                           std::vector<int> rdispls, const std::vector<int>& peers, exchange_options o = {}) {
    neighbor_alltoallv_init(peers, peers, send, sendcounts, sdispls, recv, recvcounts, rdispls, MPI_COMM_WORLD, o);
  };
  const bool faulty = me == last;
  // Negative displacement (a count), past the receive buffer (a buffer too small), counts shorter than the neighbor
  // list (the lists' shape), overlapping receive areas (aliased buffers).
  EXPECT_THROW(attempt(one, faulty ? std::vector<int>{-1} : zero, one, zero, self), redist::invalid_count);
  EXPECT_THROW(attempt(one, zero, one, faulty ? std::vector<int>{4} : zero, self), redist::invalid_buffer);
  EXPECT_THROW(attempt(faulty ? std::vector<int>{} : one, zero, one, zero, self), redist::invalid_argument);
  EXPECT_THROW(attempt({2, 2}, {0, 2}, {2, 2}, {0, faulty ? 1 : 2}, two), redist::invalid_buffer);
  exchange_options negative;
  negative.region_size = faulty ? -1 : 1;
  EXPECT_THROW(attempt(one, zero, one, zero, self, negative), redist::invalid_argument);
  exchange_options dedup;
  dedup.strategy = exchange::neighbor_strategy::dedup;
  EXPECT_THROW(attempt(one, zero, one, zero, self, dedup), redist::invalid_argument);  // no global ids
  EXPECT_TRUE(all_ranks(recv == std::vector<double>(4, 0.0)));
}

// Wrong global ids on the lowest rank that receives anything (one id differs from its sender's, or no receive ids
// at all), or on every such rank: refused on every rank whichever strategy is asked for (standard and aggregate
// never read the ids, but the check is one for all), before anything moves.
TEST(ExchangeNeighbor, WrongGlobalIdsRefusedOnEveryRankByEveryStrategy) {
  id_graph r = make_id_graph(71, 2);
  int candidate = r.recv_ids.empty() ? world_size() : world_rank(), faulty = 0;
  MPI_Allreduce(&candidate, &faulty, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (faulty == world_size()) GTEST_SKIP() << "this graph moves no elements";
  std::vector<double> send(r.graph.send_total, 1.0), recv(r.graph.recv_total, 0.0);
  for (const bool every_receiver : {false, true})
    for (const bool null_ids : {false, true})
      for (const auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                                  exchange::neighbor_strategy::dedup, exchange::neighbor_strategy::automatic}) {
        SCOPED_TRACE(std::string(to_string(strategy)) + (null_ids ? ", null receive ids" : ", one id differs") +
                     (every_receiver ? " on every receiving rank" : " on one rank"));
        const bool wrong_here = every_receiver ? !r.recv_ids.empty() : world_rank() == faulty;
        std::vector<std::int64_t> recv_ids = r.recv_ids;
        if (wrong_here) recv_ids.back() += 1;
        exchange_options o;
        o.strategy = strategy;
        o.region_size = 2;
        auto buffers = with_global_ids(
            typed_buffers(send, r.graph.sendcounts, r.graph.sdispls, recv, r.graph.recvcounts, r.graph.rdispls),
            r.send_ids, recv_ids);
        if (wrong_here && null_ids) buffers.recv_ids = nullptr, buffers.recv_ids_size = -1;
        EXPECT_THROW(neighbor_alltoallv_init(buffers, r.graph.comm, o), redist::invalid_topology);
        EXPECT_TRUE(all_ranks(recv == std::vector<double>(recv.size(), 0.0)));
      }
  // The same ids, right: accepted by every strategy.
  for (const auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                              exchange::neighbor_strategy::dedup, exchange::neighbor_strategy::automatic}) {
    exchange_options o;
    o.strategy = strategy;
    o.region_size = 2;
    const auto buffers = with_global_ids(
        typed_buffers(send, r.graph.sendcounts, r.graph.sdispls, recv, r.graph.recvcounts, r.graph.rdispls), r.send_ids,
        r.recv_ids);
    EXPECT_NO_THROW(neighbor_alltoallv_init(buffers, r.graph.comm, o)) << to_string(strategy);
  }
  MPI_Comm_free(&r.graph.comm);
}

// Byte offsets past 2^31 (64-bit index math in every strategy): elements of one double every MiB, at
// displacements up to 4095 in 4 GiB buffers that are only reserved (the untouched pages cost nothing).
TEST(ExchangeNeighbor, ByteOffsetsPastTwoGiB) {
  constexpr MPI_Aint stride = MPI_Aint{1} << 20;
  constexpr size_t capacity = 4096;  // elements: 4 GiB of address space per buffer
  MPI_Datatype sparse;
  MPI_Type_create_resized(MPI_DOUBLE, 0, stride, &sparse);
  MPI_Type_commit(&sparse);
  const auto reserve = [&] {
    void* p =
        mmap(nullptr, capacity * stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  };
  char* send = reserve();
  char* recv = reserve();
  ASSERT_TRUE(all_ranks(send != nullptr && recv != nullptr)) << "cannot reserve 8 GiB of address space";
  const int p = world_size(), me = world_rank();
  const auto at = [&](char* buffer, int displacement) {
    return reinterpret_cast<double*>(buffer + displacement * stride);
  };
  // Rank i sends two elements to every rank j, at displacements past 2^31 bytes; ids repeat across j.
  std::vector<int> everyone(p), two(p, 2), sdispls(p), rdispls(p);
  std::vector<std::int64_t> send_ids(capacity, 0), recv_ids(capacity, 0);
  for (int j = 0; j < p; ++j) {
    everyone[j] = j;
    sdispls[j] = 2100 + 3 * j;
    rdispls[j] = 3000 + 3 * j;
    for (int k = 0; k < 2; ++k) {
      send_ids[sdispls[j] + k] = (std::int64_t{1} << 50) + me * 10 + k;
      recv_ids[rdispls[j] + k] = (std::int64_t{1} << 50) + j * 10 + k;
    }
  }
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                        exchange::neighbor_strategy::dedup}) {
    neighbor_buffers b{send, two.data(), sdispls.data(), sparse, recv, two.data(), rdispls.data(), sparse};
    b.send_capacity = b.recv_capacity = static_cast<std::int64_t>(capacity);
    exchange_options o;
    o.strategy = strategy;
    o.region_size = 2;
    neighbor_plan plan =
        neighbor_alltoallv_init(everyone, everyone, with_global_ids(b, send_ids, recv_ids), MPI_COMM_WORLD, o);
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < 2; ++k) *at(send, sdispls[j] + k) = me * 10 + k + 0.5;
    plan.start();
    plan.wait();
    bool right = true;
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < 2; ++k) right = right && *at(recv, rdispls[j] + k) == j * 10 + k + 0.5;
    EXPECT_TRUE(all_ranks(right)) << to_string(strategy);
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < 2; ++k) *at(recv, rdispls[j] + k) = -1;
  }
  munmap(send, capacity * stride);
  munmap(recv, capacity * stride);
  MPI_Type_free(&sparse);
}

}  // namespace
