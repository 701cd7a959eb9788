// SPDX-License-Identifier: BSD-3-Clause
// An edge of more than 2^31-1 elements, given with 64-bit counts: rank 0 sends 2^31 + 64 bytes to the last rank
// through the neighbor exchange (a single large-count message, MPI-4 or the compatibility layer's fallback).
// Needs ~4.5 GB of memory in total; excluded from sanitizer runs.
// redist-test-ranks: 2
// redist-test-labels: large
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.hpp"

using namespace redist;
using namespace redist::testing;

TEST(ExchangeLarge, EdgeAbove2GiElements) {
  const int me = world_rank(), last = world_size() - 1;
  const std::int64_t count = (std::int64_t{1} << 31) + 64;
  const bool sender = me == 0, receiver = me == last;
  std::vector<unsigned char> send(sender ? static_cast<size_t>(count) : 0),
      recv(receiver ? static_cast<size_t>(count) : 0);
  for (size_t k = 0; k < send.size(); ++k) send[k] = static_cast<unsigned char>(k * 131 + 7);
  const std::vector<int> destinations = sender ? std::vector<int>{last} : std::vector<int>{};
  const std::vector<int> sources = receiver ? std::vector<int>{0} : std::vector<int>{};
  const std::vector<std::int64_t> sendcounts(destinations.size(), count), recvcounts(sources.size(), count);
  const std::vector<std::int64_t> sdispls(destinations.size(), 0), rdispls(sources.size(), 0);
  exchange::exchange_options o;
  o.strategy = exchange::neighbor_strategy::standard;
  exchange::neighbor_plan plan = exchange::neighbor_alltoallv_init(sources, destinations, send, sendcounts, sdispls,
                                                                   recv, recvcounts, rdispls, MPI_COMM_WORLD, o);
  plan.start();
  plan.wait();
  bool right = true;
  for (size_t k = 0; k < recv.size() && right; ++k) right = recv[k] == static_cast<unsigned char>(k * 131 + 7);
  EXPECT_TRUE(all_ranks(right));
  const exchange::exchange_statistics& s = plan.statistics();
  EXPECT_EQ(s.bytes_sent, sender && last != 0 ? count : 0);
  EXPECT_EQ(s.bytes_received, receiver && last != 0 ? count : 0);
}
