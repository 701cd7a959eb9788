// SPDX-License-Identifier: BSD-3-Clause
// Many p?gemr2d calls: with ever new descriptors the plan cache evicts, so communicators and memory stay
// bounded; 100 000 repeated calls reuse one plan in constant memory. Two ranks only: on this oversubscribed 2-core machine every collective of a plan costs a
// scheduler slice beyond two ranks, and the point is the count of calls, not the rank count.
// redist-test-ranks: 2
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <string>
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

namespace {
// Resident memory of this process in KiB (Linux), 0 where unknown.
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}
}  // namespace

TEST(ScalapackGemr2d, HundredThousandRepeatedCallsRunInConstantMemory) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context rows(nranks, 1, all), cols(1, nranks, all);
  matrix_case source, target;
  source.M = source.N = target.M = target.N = 12;
  source.mb = source.imb = 2;
  source.nb = source.inb = 3;
  target.mb = target.imb = 5;
  target.nb = target.inb = 4;
  const std::vector<int> desca = make_descriptor(source, rows), descb = make_descriptor(target, cols);
  const std::vector<double> a = make_local<double>(source, rows, desca, 0);
  std::vector<double> b = make_local<double>(target, cols, descb, 1);
  // The same call 100 000 times (what a solver loop does): one plan, reused; nothing may accumulate per call.
  // Memory is compared between call 10 000 (everything allocated once is there) and the last call.
  long resident_after_warmup = 0;
  for (int call = 0; call < 100000; ++call) {
    redist_Cpdgemr2d(12, 12, a.data(), 1, 1, desca.data(), b.data(), 1, 1, descb.data(), rows.context);
    if (call == 10000) resident_after_warmup = resident_kib();
  }
  [[maybe_unused]] const long growth_kib = resident_kib() - resident_after_warmup;
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer keeps freed memory in quarantine: resident memory grows
  EXPECT_LT(growth_kib, 1024) << "resident memory grew by " << growth_kib << " KiB over 90 000 repeated calls";
#endif
  // B holds A's values everywhere (its padding rows untouched): the target filled from the source's values.
  EXPECT_TRUE(all_ranks(b == make_local<double>(target, cols, descb, 0)));
}
