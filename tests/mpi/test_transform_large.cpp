// SPDX-License-Identifier: BSD-3-Clause
// Messages over 2^31 bytes: one rank sends a 2.1 GB column block to another, for the point-to-point
// and alltoallv strategies. Needs ~9 GB of memory in total; excluded from sanitizer runs.
// redist-test-ranks: 2
// redist-test-labels: large
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.hpp"

using namespace redist;
using namespace redist::testing;

TEST(TransformLarge, MessageAbove2GiB) {
  const int me = world_rank();
  const std::int64_t rows = 4096;
  const std::int64_t cols = ((std::int64_t(1) << 31) / 8) / rows + 3;  // just over 2^31 bytes of doubles
  // B entirely on rank 0, A entirely on rank 1 (the last rank).
  const int target = world_size() - 1;
  auto b = blocked({0, rows}, {0, cols}, {0}, me);
  auto a = blocked({0, rows}, {0, cols}, {target}, me);
  std::vector<double> B(static_cast<size_t>(b.local_elements()));
  for (size_t k = 0; k < B.size(); ++k) B[k] = static_cast<double>(k % 1000003);
  std::vector<double> A(static_cast<size_t>(a.local_elements()), -1.0);
  for (exchange_strategy s : {exchange_strategy::point_to_point, exchange_strategy::alltoallv}) {
    transform_options o;
    o.strategy = s;
    auto plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64, o);
    if (me == 0 && target != 0) EXPECT_GT(plan.statistics().bytes_sent, std::int64_t(1) << 31);
    plan.execute(A.data(), B.data(), 1.0, 0.0);
    std::int64_t wrong = 0;
    for (size_t k = 0; k < A.size(); ++k)
      if (A[k] != static_cast<double>(k % 1000003)) ++wrong;
    EXPECT_EQ(global_sum(wrong), 0) << to_string(s);
    std::fill(A.begin(), A.end(), -1.0);
  }
}
