// SPDX-License-Identifier: BSD-3-Clause
// Call tracing (redist/trace.hpp) through the drop-in's symbols: the totals and the summary count every call made,
// by entry point and path, on every rank; the calls file has one line per call with its arguments; tracing off
// records nothing; a small p?gemm handed to ScaLAPACK adds no MPI call of redist's once its signature was
// checked; mid-size p?gemm and p?tran are learned per class (MPI calls counted here through MPI's profiling interface, ScaLAPACK's own told apart by the spy library
// between the drop-in and ScaLAPACK).
// redist-test-ranks: 1 2 3 4
// redist-test-needs: scalapack dropin pdgemm_spy
// redist-test-labels: fast
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/trace.hpp"
#include "scalapack/delegation.hpp"
#include "scalapack_cases.hpp"

extern "C" {
void pdgemr2d_(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
               const int*, const int*, const int*);
void pdtran_(const int*, const int*, const double*, const double*, const int*, const int*, const int*, const double*,
             double*, const int*, const int*, const int*);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
             const int*, const int*, const int*);
int redist_test_spied_pdgemm_calls();
int redist_test_spied_pdtran_calls();
int redist_test_inside_spied_pdgemm();
}

using namespace redist::testing;
namespace delegation = redist::scalapack::delegation;
namespace trace = redist::trace;

// ---- MPI calls made outside ScaLAPACK's pdgemm_, counted while `counting` is set.
namespace {
bool counting = false;
int mpi_calls = 0, gathers = 0;
void count() {
  if (counting && redist_test_inside_spied_pdgemm() == 0) ++mpi_calls;
}
}  // namespace

extern "C" {
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  count();
  if (counting) ++gathers;
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                   MPI_Request* q) {
  count();
  if (counting) ++gathers;
  return PMPI_Iallgather(s, sc, st, r, rc, rt, c, q);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  count();
  return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* q) {
  count();
  return PMPI_Iallreduce(s, r, n, t, o, c, q);
}
int MPI_Barrier(MPI_Comm c) {
  count();
  return PMPI_Barrier(c);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request* q) {
  count();
  return PMPI_Ibarrier(c, q);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  count();
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Send(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
  count();
  return PMPI_Send(b, n, t, d, tag, c);
}
int MPI_Isend(const void* b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* q) {
  count();
  return PMPI_Isend(b, n, t, d, tag, c, q);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status* st) {
  count();
  return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request* q) {
  count();
  return PMPI_Irecv(b, n, t, s, tag, c, q);
}
}

namespace {

// Matrices on a grid over all ranks (1 x P, or 2 x P/2 for an even P > 2), in reverse rank order.
struct problem {
  std::vector<int> order;
  int rows, cols;
  blacs_context grid;
  matrix_case ca, cb;
  std::vector<int> desca, descb;
  std::vector<double> a, b;
  static int grid_rows() { return world_size() > 2 && world_size() % 2 == 0 ? 2 : 1; }
  explicit problem(int n) : order(reversed()), rows(grid_rows()), cols(world_size() / rows), grid(rows, cols, order) {
    ca.M = ca.N = cb.M = cb.N = n;
    ca.mb = ca.imb = 3, ca.nb = ca.inb = 4;
    cb.mb = cb.imb = 5, cb.nb = cb.inb = 2;
    desca = make_descriptor(ca, grid), descb = make_descriptor(cb, grid);
    a = make_local<double>(ca, grid, desca, 0);
    b = make_local<double>(cb, grid, descb, 1);
  }
  static std::vector<int> reversed() {
    std::vector<int> r(static_cast<size_t>(world_size()));
    std::iota(r.rbegin(), r.rend(), 0);
    return r;
  }
  // B = A over the whole matrix; true when B is right on every rank.
  bool copy() {
    const int n = static_cast<int>(ca.M), one = 1;
    pdgemr2d_(&n, &n, a.data(), &one, &one, desca.data(), b.data(), &one, &one, descb.data(), &grid.context);
    return all_ranks(b == make_local<double>(cb, grid, descb, 0));
  }
  void transpose(int n) {
    const int one = 1;
    const double alpha = 1, beta = 0;
    pdtran_(&n, &n, &alpha, a.data(), &one, &one, desca.data(), &beta, b.data(), &one, &one, descb.data());
  }
  // C = A * A (C in B's storage) on the leading m x m sub-matrices, k = m.
  void multiply(int m) {
    const int one = 1;
    const double alpha = 1, beta = 0;
    pdgemm_("N", "N", &m, &m, &m, &alpha, a.data(), &one, &one, desca.data(), a.data(), &one, &one, desca.data(), &beta,
            b.data(), &one, &one, descb.data());
  }
};

// This process's totals by entry point and path, the strategy left out ("redist/point_to_point" -> "redist").
std::map<std::string, trace::entry_totals> by_path() {
  std::map<std::string, trace::entry_totals> out;
  for (const trace::entry_totals& r : trace::totals()) {
    trace::entry_totals& sum = out[r.entry_point + " " + r.path.substr(0, r.path.find('/'))];
    sum.calls += r.calls;
    sum.plan_cache_hits += r.plan_cache_hits;
    sum.plans_made += r.plans_made;
  }
  return out;
}

// A learned class's calls of `size` through `handed_over` (returns 1 when the call went to ScaLAPACK): the first
// four alternate redist and ScaLAPACK, then two more and one of `same_class_size` take the way decided, alike on
// every rank; the trace counts them under `entry` ("PDGEMM"). Where the ranks share cores (more of them on this
// host than it has CPUs), nothing is learned: all seven go to ScaLAPACK. Returns the way (1: ScaLAPACK).
int learned_way(const std::function<int(int)>& handed_over, int size, int same_class_size, const std::string& entry,
                bool cores_shared) {
  for (int trial = 0; trial < 4; ++trial)
    EXPECT_EQ(handed_over(size), cores_shared ? 1 : trial % 2) << "trial " << trial;
  const int decided = handed_over(size);
  if (cores_shared) EXPECT_EQ(decided, 1) << "a class learned where the ranks share cores";
  EXPECT_EQ(handed_over(size), decided);
  EXPECT_EQ(handed_over(same_class_size), decided) << same_class_size << " is in the same class as " << size;
  int lowest = decided, highest = decided;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lowest, highest) << "the ranks took different ways";
  auto rows = by_path();
  const int through_redist = cores_shared ? 0 : 2 + (decided == 0 ? 3 : 0);
  EXPECT_EQ(rows[entry + " redist"].calls, through_redist);
  EXPECT_EQ(rows[entry + " delegated"].calls, 7 - through_redist);
  return decided;
}

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("REDIST_PDGEMM_DELEGATE_BELOW");
    unsetenv("REDIST_PTRAN_DELEGATE_BELOW");
    trace::set_mode(trace::trace_mode::summary);
    trace::reset();
  }
  void TearDown() override {
    trace::set_mode(trace::trace_mode::off);
    trace::reset();
    unsetenv("REDIST_PDGEMM_DELEGATE_BELOW");
    unsetenv("REDIST_PTRAN_DELEGATE_BELOW");
  }
};

TEST_F(Trace, SummaryCountsEveryCallByEntryPointAndPath) {
  problem p(40);
  EXPECT_TRUE(p.copy());
  EXPECT_TRUE(p.copy());                                        // the same signature: its plan is cached
  ASSERT_EQ(setenv("REDIST_PTRAN_DELEGATE_BELOW", "0", 1), 0);  // redist for every transpose (none learned)
  p.transpose(40);
  p.transpose(0);  // PBLAS's quick return: nothing to move
  p.multiply(5);   // 125 multiply-adds: handed to ScaLAPACK
  p.multiply(5);
  p.multiply(6);
  ASSERT_EQ(setenv("REDIST_PDGEMM_DELEGATE_BELOW", "0", 1), 0);  // redist for every product
  p.multiply(12);

  const auto rows = by_path();
  const auto calls = [&](const std::string& key) { return rows.count(key) ? rows.at(key).calls : 0; };
  EXPECT_EQ(calls("PDGEMR2D redist"), 2);
  EXPECT_EQ(rows.at("PDGEMR2D redist").plan_cache_hits, 1);
  EXPECT_EQ(rows.at("PDGEMR2D redist").plans_made, 1);
  EXPECT_EQ(calls("PDTRAN redist"), 1);
  EXPECT_EQ(calls("PDTRAN local"), 1);
  EXPECT_EQ(calls("PDGEMM delegated"), 3);
  EXPECT_EQ(calls("PDGEMM redist"), 1);
  std::int64_t all = 0;
  for (const auto& [key, r] : rows) all += r.calls;
  EXPECT_EQ(all, 8) << "a call was counted twice or under another entry point";

  // The table over all ranks: every rank made every call, so each row has every rank and the same counts.
  const std::string table = trace::summary(MPI_COMM_WORLD);
  if (world_rank() != 0) {
    EXPECT_TRUE(table.empty());
    return;
  }
  std::istringstream lines(table);
  std::string line;
  std::map<std::string, std::int64_t> table_calls;
  int data_rows = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string entry, path;
    int ranks = 0;
    std::int64_t n = 0;
    if (!(fields >> entry >> path >> ranks >> n) || entry.rfind("P", 0) != 0) continue;
    ++data_rows;
    EXPECT_EQ(ranks, world_size()) << line;
    table_calls[entry + " " + path.substr(0, path.find('/'))] += n;
  }
  EXPECT_GE(data_rows, 5) << table;
  for (const auto& [key, r] : rows) EXPECT_EQ(table_calls[key], r.calls) << key << "\n" << table;
}

TEST_F(Trace, OffRecordsNothing) {
  trace::set_mode(trace::trace_mode::off);
  problem p(24);
  EXPECT_TRUE(p.copy());
  p.multiply(4);
  EXPECT_TRUE(trace::totals().empty());
}

// One JSON line per call on each rank, in order, with the call's arguments.
TEST_F(Trace, CallsFileHasOneLinePerCallWithItsArguments) {
  const std::string path = ::testing::TempDir() + "redist-test-trace-" + std::to_string(getpid()) + ".%r.jsonl";
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  std::string mine = path;
  mine.replace(mine.find("%r"), 2, std::to_string(world));
  ASSERT_EQ(setenv("REDIST_TRACE_FILE", path.c_str(), 1), 0);
  trace::set_mode(trace::trace_mode::calls);
  problem p(30);
  EXPECT_TRUE(p.copy());
  p.multiply(7);
  p.transpose(30);
  trace::flush();
  std::ifstream file(mine);
  ASSERT_TRUE(file.good()) << mine;
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  // This process's first traced calls: the file is opened once, so earlier tests' calls (none here: they ran in
  // summary mode) would come first.
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("\"entry\":\"PDGEMR2D\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\"m\":30,\"n\":30"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\"desca\":[1,"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"entry\":\"PDGEMM\",\"path\":\"delegated\""), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("\"transa\":\"N\",\"transb\":\"N\",\"m\":7,\"n\":7,\"k\":7"), std::string::npos) << lines[1];
  // A transpose of 900 elements: learned per class, its first call redist's trial (where the ranks share cores,
  // handed to ScaLAPACK unlearned).
  const std::string transpose_path = delegation::cores_shared(p.grid.context) ? "delegated" : "redist";
  EXPECT_NE(lines[2].find("\"entry\":\"PDTRAN\",\"path\":\"" + transpose_path + "\""), std::string::npos) << lines[2];
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("{\"rank\":" + std::to_string(world) + ",\"seq\":", 0), 0u) << lines[i];
    EXPECT_EQ(lines[i].back(), '}');
  }
  unsetenv("REDIST_TRACE_FILE");
  // The library keeps the file open until MPI_Finalize; unlinked now, it is gone then (no files left in TMPDIR).
  std::remove(mine.c_str());
}

// A small product whose signature was checked goes to ScaLAPACK without an MPI call of redist's; a new signature
// is checked first (redist's argument agreement), and a product redist computes is not handed over.
TEST_F(Trace, DelegatedCallsAddNoMpiCall) {
  problem p(20);
  const auto redist_mpi_calls = [&](int m) {
    const int spied = redist_test_spied_pdgemm_calls();
    mpi_calls = 0;
    counting = true;
    p.multiply(m);
    counting = false;
    EXPECT_EQ(redist_test_spied_pdgemm_calls(), spied + 1) << "m = " << m << " was not handed to ScaLAPACK";
    return mpi_calls;
  };
  EXPECT_GT(redist_mpi_calls(9), 0) << "a new signature is checked on every rank";
  EXPECT_EQ(redist_mpi_calls(9), 0);
  EXPECT_EQ(redist_mpi_calls(9), 0);
  EXPECT_GT(redist_mpi_calls(8), 0);
  EXPECT_EQ(redist_mpi_calls(8), 0);
  EXPECT_EQ(redist_mpi_calls(9), 0) << "an earlier signature is still remembered";
  trace::set_mode(trace::trace_mode::off);  // tracing off: the same
  EXPECT_EQ(redist_mpi_calls(9), 0);
}

// Products between 2^23 and 2^31 multiply-adds, with REDIST_PDGEMM_DELEGATE_BELOW unset, are learned per class: the
// class's first four calls alternate redist and ScaLAPACK, and every later call takes the way agreed then, the same
// on every rank (which way depends on this machine's timings); where the ranks share cores, all go to ScaLAPACK.
TEST_F(Trace, MidSizeProductsAreLearnedPerClass) {
  problem p(210);
  const auto handed_over = [&](int m) {
    const int before = redist_test_spied_pdgemm_calls();
    p.multiply(m);
    return redist_test_spied_pdgemm_calls() - before;
  };
  const int m = 204;  // 204^3 = 8.49e6 multiply-adds, just above 2^23
  // 205: the same class (m, n, k up to 256)
  const int decided = learned_way(handed_over, m, m + 1, "PDGEMM", delegation::cores_shared(p.grid.context));
  EXPECT_TRUE(all_ranks(decided == 0 || decided == 1));
  ASSERT_EQ(setenv("REDIST_PDGEMM_DELEGATE_BELOW", "0", 1), 0);  // the override wins over what was learned
  EXPECT_EQ(handed_over(m), 0);
}

// Transposes up to 2^22 elements, with REDIST_PTRAN_DELEGATE_BELOW unset, are learned per class as products are;
// once a signature was checked, a transpose handed to ScaLAPACK adds no MPI call of redist's; the override forces
// either way.
TEST_F(Trace, TransposesAreLearnedPerClass) {
  problem p(60);
  const auto handed_over = [&](int n) {
    const int before = redist_test_spied_pdtran_calls();
    p.transpose(n);
    return redist_test_spied_pdtran_calls() - before;
  };
  const int n = 57;
  // 56: the same class (m, n up to 64)
  const int decided = learned_way(handed_over, n, n - 1, "PDTRAN", delegation::cores_shared(p.grid.context));
  if (decided == 1) {  // handed over for good: a signature checked once is remembered, trials' were not
    mpi_calls = 0;
    counting = true;
    EXPECT_EQ(handed_over(n), 1);
    counting = false;
    EXPECT_EQ(mpi_calls, 0) << "a signature of a class learned for ScaLAPACK was checked again";
  }

  // A class decided for redist keeps being timed and is checked after 8, then 16 more calls, ...: a check that
  // finds redist's calls within twice ScaLAPACK's fastest keeps redist, its call one more trial of ScaLAPACK; the
  // first that finds them slower sends the class to ScaLAPACK for good. ScaLAPACK's fastest is set here before each
  // call, alike on every rank, so that the checks' outcome is known. Of a signature not called yet (n and n - 1 may
  // be remembered as ScaLAPACK's for good).
  const int unseen = n - 2;
  delegation::context_state* state = delegation::state_of(p.desca.data());
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->classes.size(), 1u);
  delegation::learned_class& cls = state->classes.begin()->second;
  cls.decided = 0;
  cls.watched = 0;
  cls.next_check = delegation::learned_class::watch_window;
  const auto call_with_scalapack_at = [&](double seconds) {
    cls.fastest[1] = seconds;
    return handed_over(unseen);
  };
  // ScaLAPACK "a billion seconds" a call: the checks at the 9th and the 26th call keep redist and try ScaLAPACK.
  for (int call = 1; call <= 27; ++call)
    EXPECT_EQ(call_with_scalapack_at(1e9), call == 9 || call == 26 ? 1 : 0) << "call " << call << " after the decision";
  EXPECT_EQ(cls.next_check, 32) << "two checks passed";
  EXPECT_EQ(cls.watched, 1);
  // Now "a picosecond": the next check sends the class to ScaLAPACK.
  for (int call = 0; call < 31; ++call)
    EXPECT_EQ(call_with_scalapack_at(1e-12), 0) << "call " << call << " before the third check";
  EXPECT_EQ(cls.decided, 0);
  EXPECT_EQ(call_with_scalapack_at(1e-12), 1) << "the third check finds redist's calls slower than ScaLAPACK's";
  EXPECT_EQ(cls.decided, 1);
  mpi_calls = 0;
  counting = true;
  EXPECT_EQ(handed_over(unseen), 1);
  counting = false;
  EXPECT_EQ(mpi_calls, 0) << "a signature of a class rechecked for ScaLAPACK was not remembered";

  ASSERT_EQ(setenv("REDIST_PTRAN_DELEGATE_BELOW", "1000000", 1), 0);  // every transpose here to ScaLAPACK
  const auto redist_mpi_calls = [&](int size) {
    mpi_calls = 0;
    counting = true;
    const int handed = handed_over(size);
    counting = false;
    EXPECT_EQ(handed, 1) << "n = " << size << " was not handed to ScaLAPACK";
    return mpi_calls;
  };
  EXPECT_GT(redist_mpi_calls(33), 0) << "a new signature is checked on every rank";
  EXPECT_EQ(redist_mpi_calls(33), 0);
  EXPECT_EQ(redist_mpi_calls(33), 0);
  ASSERT_EQ(setenv("REDIST_PTRAN_DELEGATE_BELOW", "0", 1), 0);  // redist for every transpose
  EXPECT_EQ(handed_over(33), 0);
  EXPECT_EQ(handed_over(n), 0) << "the override wins over what was learned";
}

// A context's state (its signatures checked) goes with the context: a grid made again after Cblacs_gridexit, which
// BLACS may give the same handle, has its calls checked anew.
TEST_F(Trace, GridMadeAgainIsCheckedAgain) {
  const auto redist_mpi_calls = [&](problem& p) {
    mpi_calls = 0;
    counting = true;
    p.multiply(7);
    counting = false;
    return mpi_calls;
  };
  int first_handle = -1;
  {
    problem p(20);
    first_handle = p.grid.context;
    EXPECT_GT(redist_mpi_calls(p), 0) << "a new signature is checked on every rank";
    EXPECT_EQ(redist_mpi_calls(p), 0);
  }  // Cblacs_gridexit
  problem again(20);
  if (!all_ranks(again.grid.context == first_handle)) GTEST_SKIP() << "BLACS gave the new grid another handle";
  EXPECT_GT(redist_mpi_calls(again), 0) << "the exited grid's signatures were taken for the new one's";
  EXPECT_EQ(redist_mpi_calls(again), 0);
}

// A call through redist made again with the same arguments everywhere is not gathered and checked again: its earlier
// agreement's conclusion stands after one allreduce (agreed_calls.hpp); new arguments are gathered.
TEST_F(Trace, RepeatedCallsAreNotGatheredAgain) {
  ASSERT_EQ(setenv("REDIST_PTRAN_DELEGATE_BELOW", "0", 1), 0);  // redist for every transpose
  problem p(30);
  const auto gathered = [&](const std::function<void()>& call) {
    gathers = 0;
    counting = true;
    call();
    counting = false;
    return gathers;
  };
  EXPECT_GT(gathered([&] { p.transpose(30); }), 0) << "a new call is gathered";
  EXPECT_EQ(gathered([&] { p.transpose(30); }), 0);
  EXPECT_GT(gathered([&] { p.transpose(29); }), 0);
  EXPECT_EQ(gathered([&] { p.transpose(30); }), 0) << "an earlier call is still remembered";
  EXPECT_GT(gathered([&] { EXPECT_TRUE(p.copy()); }), 0);
  EXPECT_EQ(gathered([&] { EXPECT_TRUE(p.copy()); }), 0);
}

}  // namespace
