// SPDX-License-Identifier: BSD-3-Clause
// Call tracing of the C++ plans (redist/trace.hpp): transform, gemm, neighborhood exchange and in-place alltoallv
// plans, each counted once per plan made and once per execution under its kind, with its strategy, on every rank;
// the summary over the ranks has every rank in each row. (The drop-in's routines: test_trace.cpp.)
// redist-test-ranks: 1 2 3 4
// redist-test-labels: fast
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/exchange/neighbor.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/layout/builders.hpp"
#include "redist/trace.hpp"
#include "redist/transform/plan.hpp"

using namespace redist::testing;
namespace trace = redist::trace;
namespace ex = redist::exchange;

namespace {

// This rank's totals by kind (the strategy left out), summed over paths.
std::map<std::string, trace::entry_totals> by_kind() {
  std::map<std::string, trace::entry_totals> out;
  for (const trace::entry_totals& r : trace::totals()) {
    trace::entry_totals& t = out[r.entry_point];
    t.calls += r.calls;
    t.plans_made += r.plans_made;
    t.bytes_sent += r.bytes_sent;
    EXPECT_EQ(r.path.rfind("redist/", 0), 0u) << r.entry_point << " " << r.path;
  }
  return out;
}

// A square matrix of n in blocks of nb on a 1 x P grid (columns) or P x 1 (rows).
redist::grid_layout square(std::int64_t n, std::int64_t nb, bool by_rows) {
  redist::block_cyclic_params p;
  p.m = p.n = n;
  p.mb = p.nb = nb;
  p.proc_rows = by_rows ? world_size() : 1;
  p.proc_cols = by_rows ? 1 : world_size();
  return redist::block_cyclic(p, world_rank());
}

class TracePlans : public ::testing::Test {
 protected:
  void SetUp() override {
    trace::set_mode(trace::trace_mode::summary);
    trace::reset();
  }
  void TearDown() override {
    trace::set_mode(trace::trace_mode::off);
    trace::reset();
  }
};

}  // namespace

TEST_F(TracePlans, EveryPlanKindCountsPlansAndExecutions) {
  const int p = world_size(), me = world_rank();
  // A transform: made once, executed twice.
  const redist::grid_layout rows = square(24, 4, true), cols = square(24, 5, false);
  std::vector<double> a(static_cast<size_t>(cols.local_elements()) + 1),
      b(static_cast<size_t>(rows.local_elements()) + 1, 1.0);
  const redist::transform_plan transform =
      redist::make_transform_plan(MPI_COMM_WORLD, cols, rows, redist::op::transpose, redist::element_type::f64);
  transform.execute(a.data(), b.data());
  transform.execute(a.data(), b.data());
  // A multiply: made once, executed once (its own transforms are part of it, not rows of their own).
  const redist::gemm_plan gemm =
      redist::make_gemm_plan(MPI_COMM_WORLD, redist::gemm_description{rows, cols, rows, redist::op::identity,
                                                                      redist::op::identity, redist::element_type::f64});
  std::vector<double> c(static_cast<size_t>(rows.local_elements()) + 1);
  gemm.execute(c.data(), b.data(), a.data(), 1.0, 0.0);
  // A neighborhood exchange around a ring: made once, three exchanges.
  const std::vector<int> sources{(me + p - 1) % p}, destinations{(me + 1) % p};
  const std::vector<double> send(3, me);
  std::vector<double> received(3, -1.0);
  const std::vector<int> counts{3}, displacements{0};
  ex::neighbor_plan ring = ex::neighbor_alltoallv_init(sources, destinations, send, counts, displacements, received,
                                                       counts, displacements, MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) {
    ring.start();
    ring.wait();
  }
  EXPECT_EQ(received[0], (me + p - 1) % p);
  // In-place alltoallv: a plan made and executed twice, and the one-call form (a plan and one execution).
  std::vector<double> buffer(static_cast<size_t>(2 * p), me);
  const ex::inplace_plan inplace = ex::make_alltoall_inplace_plan(MPI_COMM_WORLD, 2, MPI_DOUBLE);
  inplace.execute(buffer.data());
  inplace.execute(buffer.data());
  ex::alltoall_inplace(buffer.data(), 2, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int r = 0; r < p; ++r) EXPECT_EQ(buffer[static_cast<size_t>(2 * r)], r) << "block from rank " << r;

  const auto kinds = by_kind();
  const auto row = [&](const std::string& kind) { return kinds.count(kind) ? kinds.at(kind) : trace::entry_totals{}; };
  EXPECT_EQ(row("transform_plan").plans_made, 1);
  EXPECT_EQ(row("transform_plan").calls, 2);
  EXPECT_EQ(row("gemm_plan").plans_made, 1);
  EXPECT_EQ(row("gemm_plan").calls, 1);
  EXPECT_EQ(row("neighbor_plan").plans_made, 1);
  EXPECT_EQ(row("neighbor_plan").calls, 3);
  EXPECT_EQ(row("neighbor_plan").bytes_sent, p > 1 ? 3 * 3 * 8 : 0);
  EXPECT_EQ(row("inplace_plan").plans_made, 2);
  EXPECT_EQ(row("inplace_plan").calls, 3);
  EXPECT_EQ(kinds.size(), 4u) << "a plan counted under another kind";

  // The table over all ranks: each row has every rank, and the calls are this rank's (every rank made them all).
  const std::string table = trace::summary(MPI_COMM_WORLD);
  if (me != 0) {
    EXPECT_TRUE(table.empty());
    return;
  }
  std::istringstream lines(table);
  std::string line;
  std::map<std::string, std::int64_t> table_calls;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string kind, path;
    int ranks = 0;
    std::int64_t calls = 0;
    if (!(fields >> kind >> path >> ranks >> calls) || kind.find("_plan") == std::string::npos) continue;
    EXPECT_EQ(ranks, p) << line;
    table_calls[kind] += calls;
  }
  for (const auto& [kind, totals] : kinds) EXPECT_EQ(table_calls[kind], totals.calls) << kind << "\n" << table;
}
