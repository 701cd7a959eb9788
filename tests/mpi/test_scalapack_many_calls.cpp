// Many p?gemr2d calls with ever new descriptors: the plan cache evicts, so communicators and memory stay
// bounded. Two ranks only: on this oversubscribed 2-core machine every collective of a plan costs a
// scheduler slice beyond two ranks, and the point is the count of calls, not the rank count.
// redist-test-ranks: 2
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.h"
#include "scalapack_cases.hpp"

using namespace redist::testing;

TEST(ScalapackGemr2d, ThousandsOfDistinctCallsStayBounded) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(nranks, 1, all);
  // A new LLD every call: every call misses the cache (16 plans) and evicts one, 3000 times; a plan that
  // kept its communicator would exhaust MPICH's context ids (it aborts in MPI_Comm_dup near 2000).
  for (int call = 0; call < 3000; ++call) {
    matrix_case c;
    c.M = c.N = 8;
    c.mb = c.imb = 1 + call % 7;
    c.nb = c.inb = 1 + (call / 7) % 5;
    c.extra_lld = call;
    const std::vector<int> desc = make_descriptor(c, grid);
    const std::vector<double> a = make_local<double>(c, grid, desc, 0);
    std::vector<double> b = make_local<double>(c, grid, desc, 1);
    redist_Cpdgemr2d(8, 8, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
    if (call % 250 == 0) ASSERT_TRUE(all_ranks(b == a)) << "call " << call;
  }
}
