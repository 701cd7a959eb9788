// The persistent neighborhood alltoallv against MPICH's MPI_Neighbor_alltoallv on random sparse graphs (with
// self-loops, zero counts, ranks without neighbors), every strategy and region choice, repeated cycles with
// the send buffer changed in between; a derived datatype; one message per region pair (statistics); the C
// API; bad input (non-graph communicator, mismatched graphs, a negative
// count on one rank) refused on every rank with nothing moved.
// redist-test-nodes: 4:2 8:4
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"


using namespace redist::exchange;
namespace exchange = redist::exchange;
using namespace redist::testing;

namespace {

struct random_graph {
  std::vector<int> sources, destinations, sendcounts, sdispls, recvcounts, rdispls;
  MPI_Comm comm = MPI_COMM_NULL;
  int send_total = 0, recv_total = 0;
};

// Every rank draws the same global edge list (shared seed), then keeps its own edges.
random_graph make_graph(std::uint64_t seed) {
  const int p = world_size(), me = world_rank();
  std::mt19937_64 g(shared_seed(seed));
  random_graph r;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      if (g() % 3 != 0) continue;
      const int count = static_cast<int>(g() % 4);  // zero counts included
      if (i == me) {
        r.destinations.push_back(j);
        r.sendcounts.push_back(count);
        r.sdispls.push_back(r.send_total);
        r.send_total += count;
      }
      if (j == me) {
        r.sources.push_back(i);
        r.recvcounts.push_back(count);
        r.rdispls.push_back(r.recv_total);
        r.recv_total += count;
      }
    }
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(r.sources.size()), r.sources.data(),
                                 MPI_UNWEIGHTED, static_cast<int>(r.destinations.size()), r.destinations.data(),
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &r.comm);
  return r;
}

// MPICH's own exchange on the same graph: the reference.
void mpi_reference(const random_graph& r, const std::vector<double>& send, std::vector<double>& expected,
                   MPI_Datatype type) {
  MPI_Neighbor_alltoallv(send.data(), r.sendcounts.data(), r.sdispls.data(), type, expected.data(),
                         r.recvcounts.data(), r.rdispls.data(), type, r.comm);
}

void fill(std::vector<double>& v, int cycle) {
  for (size_t k = 0; k < v.size(); ++k) v[k] = world_rank() * 1000.0 + static_cast<double>(k) + cycle * 0.5;
}

void check_against_mpi(exchange_options options, std::uint64_t seed) {
  random_graph r = make_graph(seed);
  std::vector<double> send(r.send_total), recv(r.recv_total, -1), expected(r.recv_total, -2);
  neighbor_plan plan = neighbor_alltoallv_init(send, r.sendcounts, r.sdispls, recv, r.recvcounts, r.rdispls, r.comm,
                                               options);
  for (int cycle = 0; cycle < 3; ++cycle) {
    fill(send, cycle);
    plan.start();
    plan.wait();
    mpi_reference(r, send, expected, MPI_DOUBLE);
    EXPECT_TRUE(all_ranks(recv == expected)) << "strategy " << to_string(plan.statistics().strategy);
  }
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
    neighbor_plan plan = neighbor_alltoallv_init(everyone, everyone, send, ones, displs, recv, ones, displs,
                                                 MPI_COMM_WORLD, o);
    fill(send, 0);
    plan.start();
    plan.wait();
    for (int r = 0; r < p; ++r) EXPECT_EQ(recv[r], r * 1000.0 + world_rank());
    const exchange_statistics& s = plan.statistics();
    EXPECT_EQ(s.regions, regions);
    const std::int64_t messages = global_sum(s.inter_region_messages);
    bytes[strategy == exchange::neighbor_strategy::aggregate] = global_sum(s.inter_region_bytes);
    if (strategy == exchange::neighbor_strategy::standard) EXPECT_EQ(messages, cross_pairs);
    else EXPECT_EQ(messages, static_cast<std::int64_t>(regions) * (regions - 1));
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
  if (me == 0) { to = {p - 1}; counts_out = {2}; }
  if (me == p - 1) { from = {0}; counts_in = {1}; }
  std::vector<int> sd(to.size(), 0), rd(from.size(), 0);
  redist_request req = REDIST_REQUEST_NULL;
  EXPECT_EQ(redist_neighbor_alltoallv_init_lists(static_cast<int>(from.size()), from.data(), static_cast<int>(to.size()),
                                                 to.data(), send.data(), counts_out.data(), sd.data(), MPI_DOUBLE,
                                                 recv.data(), counts_in.data(), rd.data(), MPI_DOUBLE, MPI_COMM_WORLD,
                                                 MPI_INFO_NULL, &req),
            MPI_ERR_TOPOLOGY);
  EXPECT_EQ(req, REDIST_REQUEST_NULL);
  // A negative count on the last rank only.
  std::vector<int> self = {me}, bad = {me == p - 1 ? -1 : 1}, zero = {0};
  EXPECT_EQ(redist_neighbor_alltoallv_init_lists(1, self.data(), 1, self.data(), send.data(), bad.data(), zero.data(),
                                                 MPI_DOUBLE, recv.data(), bad.data(), zero.data(), MPI_DOUBLE,
                                                 MPI_COMM_WORLD, MPI_INFO_NULL, &req),
            MPI_ERR_ARG);
  EXPECT_TRUE(all_ranks(recv == std::vector<double>(4, 0.0)));
}

}  // namespace
