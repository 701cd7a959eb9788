// SPDX-License-Identifier: BSD-3-Clause
// The drop-in's plan cache with BLACS contexts over different subsets of the ranks, interleaved: rank 0 takes
// part in two contexts, the others in one. Each context's communicator has its own cache, so a call that hits
// on one process hits on every process of that context (one cache shared by all contexts would evict
// context X's plan on rank 0 while rank 1 still held it: rank 0 would re-plan, collectively, while rank 1
// executed, and the two would wait on each other).
// redist-test-ranks: 3 4
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.h"
#include "scalapack/plan_cache.hpp"
#include "scalapack_cases.hpp"

using namespace redist::testing;

TEST(ScalapackContexts, InterleavedSubsetsKeepTheirPlans) {
  const int nranks = world_size(), me = world_rank();
  const int last = nranks - 1;
  blacs_context x(1, 2, {0, 1}), y(1, 2, {0, last});
  matrix_case fixed;
  fixed.M = fixed.N = 9;
  fixed.mb = fixed.nb = fixed.imb = fixed.inb = 2;
  const std::vector<int> desc_x = make_descriptor(fixed, x);
  const std::vector<double> a_x = make_local<double>(fixed, x, desc_x, 0);
  const std::size_t made_before = redist::scalapack::plans_made();
  int x_calls = 0;
  bool right = true;
  for (int call = 0; call < 60; ++call) {
    if (call % 20 == 0 && x.holds_me()) {  // the same call on X every 20th time: always a hit after the first
      std::vector<double> b = make_local<double>(fixed, x, desc_x, 1);
      redist_Cpdgemr2d(9, 9, a_x.data(), 1, 1, desc_x.data(), b.data(), 1, 1, desc_x.data(), x.context);
      right = right && b == a_x;
      ++x_calls;
    }
    if (y.holds_me()) {  // a new call on Y every time (a new LLD): a miss that evicts Y's oldest plan
      matrix_case c = fixed;
      c.extra_lld = call;
      const std::vector<int> desc = make_descriptor(c, y);
      const std::vector<double> a = make_local<double>(c, y, desc, 0);
      std::vector<double> b = make_local<double>(c, y, desc, 1);
      redist_Cpdgemr2d(9, 9, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), y.context);
      right = right && b == a;
    }
  }
  EXPECT_TRUE(all_ranks(right));
  // Rank 1 (only in X) planned X's copy once; rank 0 once for X and once per call on Y.
  const std::size_t made = redist::scalapack::plans_made() - made_before;
  if (me == 1 && last != 1) EXPECT_EQ(made, 1u);
  if (me == 0) EXPECT_EQ(made, 61u);
  EXPECT_EQ(x_calls, x.holds_me() ? 3 : 0);
}
