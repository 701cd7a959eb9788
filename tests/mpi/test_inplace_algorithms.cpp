// SPDX-License-Identifier: BSD-3-Clause
// The in-place pairwise and bitonic algorithms (src/exchange/inplace_pairwise.cpp, inplace_bitonic.cpp) run
// directly on a problem built here as the dispatcher would, each result checked byte for byte against an
// out-of-place MPI_Alltoallv: random counts with zeros, a rank sending everything to one peer, unequal send and
// receive totals, the paper's four cases (Section 4) and pairwise's bad case, element sizes 1, 8 and 16 bytes,
// capacities as tight as each algorithm allows (bytes past them must stay untouched). Also the byte bounds:
// pairwise_max_bytes is exactly the most any rank sends, bitonic_max_bytes bounds it.
// redist-test-ranks: 1 2 3 4 5 8
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "exchange/inplace_detail.hpp"
#include "mpi_test_support.hpp"
#include "test_seed.hpp"

namespace detail = redist::exchange::inplace_detail;
using namespace redist::testing;

namespace {

using count_matrix = std::vector<std::vector<std::int64_t>>;  // s(i, j) elements, the same on every rank

enum class algo { pairwise, bitonic };
const char* name_of(algo a) { return a == algo::pairwise ? "pairwise" : "bitonic"; }

constexpr std::int64_t guard_bytes = 64;
constexpr std::byte guard_value{0xA5};

// The byte b of element k of s(i, j): differs between blocks, elements and bytes.
std::byte pattern(int i, int j, std::int64_t k, std::int64_t b) {
  const std::uint64_t h = (static_cast<std::uint64_t>(i) * 1000003u + static_cast<std::uint64_t>(j) * 7919u +
                           static_cast<std::uint64_t>(k) * 131u + static_cast<std::uint64_t>(b)) *
                          0x9E3779B97F4A7C15ull;
  return static_cast<std::byte>(h >> 56);
}

// A problem built the way the library's validation builds it, from this rank's row of counts.
class test_problem {
 public:
  test_problem(const count_matrix& s, std::int64_t extent, algo a, std::int64_t work_bytes, std::int64_t slack) {
    const int np = world_size(), me = world_rank();
    const auto n = static_cast<std::size_t>(np);
    p_.rank = me;
    p_.size = np;
    p_.extent = extent;
    p_.sendcounts = s[static_cast<std::size_t>(me)];
    p_.recvcounts.assign(n, 0);
    MPI_Alltoall(p_.sendcounts.data(), 1, MPI_INT64_T, p_.recvcounts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
    p_.offset_in_dest.assign(n, 0);
    MPI_Exscan(p_.sendcounts.data(), p_.offset_in_dest.data(), np, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) std::fill(p_.offset_in_dest.begin(), p_.offset_in_dest.end(), 0);  // Exscan leaves it undefined
    std::int64_t send_total = 0, recv_total = 0;
    for (auto v : p_.sendcounts) send_total += v;
    for (auto v : p_.recvcounts) recv_total += v;
    p_.send_totals.assign(n, 0);
    p_.recv_totals.assign(n, 0);
    MPI_Allgather(&send_total, 1, MPI_INT64_T, p_.send_totals.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&recv_total, 1, MPI_INT64_T, p_.recv_totals.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
    // As tight as the algorithm allows: pairwise needs max(S, R) here, bitonic the largest of all totals.
    std::int64_t cap = std::max(send_total, recv_total);
    if (a == algo::bitonic)
      for (std::size_t j = 0; j < n; ++j) cap = std::max({cap, p_.send_totals[j], p_.recv_totals[j]});
    p_.capacity = cap + slack;
    p_.capacities.assign(n, 0);
    MPI_Allgather(&p_.capacity, 1, MPI_INT64_T, p_.capacities.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &p_.comm);

    // The data, then a guard that must survive (and garbage up to the capacity).
    storage_.assign(static_cast<std::size_t>(p_.capacity * extent + guard_bytes), guard_value);
    std::int64_t at = 0;
    for (int j = 0; j < np; ++j)
      for (std::int64_t k = 0; k < p_.sendcounts[static_cast<std::size_t>(j)]; ++k)
        for (std::int64_t b = 0; b < extent; ++b) storage_[static_cast<std::size_t>(at++)] = pattern(me, j, k, b);
    p_.buf = storage_.data();
    work_.assign(static_cast<std::size_t>(work_bytes), std::byte{0});
    p_.work = work_.data();
    p_.work_bytes = work_bytes;
    expected_ = reference();
  }
  ~test_problem() { MPI_Comm_free(&p_.comm); }
  test_problem(const test_problem&) = delete;
  test_problem& operator=(const test_problem&) = delete;

  const detail::problem& get() const { return p_; }

  // True on every rank iff every rank's result matches MPI_Alltoallv and its guard is intact.
  bool correct() const {
    const auto r = static_cast<std::size_t>(p_.recv_totals[static_cast<std::size_t>(p_.rank)] * p_.extent);
    bool ok = std::equal(expected_.begin(), expected_.end(), storage_.begin()) && expected_.size() == r;
    const auto cap = static_cast<std::size_t>(p_.capacity * p_.extent);
    ok = ok && std::all_of(storage_.begin() + static_cast<std::ptrdiff_t>(cap), storage_.end(),
                           [](std::byte v) { return v == guard_value; });
    return all_ranks(ok);
  }

  // Bytes every rank sends at least: each byte once to its owner, nothing to itself.
  std::int64_t direct_bytes_total() const {
    std::int64_t mine = 0;
    for (int j = 0; j < p_.size; ++j)
      if (j != p_.rank) mine += p_.sendcounts[static_cast<std::size_t>(j)] * p_.extent;
    return global_sum(mine);
  }

 private:
  // Out-of-place MPI_Alltoallv of the same data, in bytes.
  std::vector<std::byte> reference() const {
    const int np = p_.size;
    std::vector<int> sc(static_cast<std::size_t>(np)), sd(sc.size()), rc(sc.size()), rd(sc.size());
    int so = 0, ro = 0;
    for (std::size_t j = 0; j < sc.size(); ++j) {
      sc[j] = static_cast<int>(p_.sendcounts[j] * p_.extent);
      rc[j] = static_cast<int>(p_.recvcounts[j] * p_.extent);
      sd[j] = so;
      rd[j] = ro;
      so += sc[j];
      ro += rc[j];
    }
    std::vector<std::byte> out(static_cast<std::size_t>(ro));
    MPI_Alltoallv(storage_.data(), sc.data(), sd.data(), MPI_BYTE, out.data(), rc.data(), rd.data(), MPI_BYTE,
                  MPI_COMM_WORLD);
    return out;
  }

  detail::problem p_;
  std::vector<std::byte> storage_, work_;
  std::vector<std::byte> expected_;
};

struct outcome {
  bool correct = false;
  std::int64_t bytes_total = 0;   // summed over the ranks
  std::int64_t bytes_max = 0;     // the most one rank sent
  std::int64_t bound = 0;         // pairwise_max_bytes / bitonic_max_bytes
  std::int64_t direct_total = 0;  // each byte once
  std::int64_t metadata_max = 0;
  std::int64_t messages_max = 0;
};

outcome run(const count_matrix& s, std::int64_t extent, algo a, std::int64_t work_bytes = 4096,
            std::int64_t slack = 0) {
  test_problem t(s, extent, a, work_bytes, slack);
  detail::counters c;
  outcome o;
  if (a == algo::pairwise) {
    o.bound = detail::pairwise_max_bytes(t.get());
    detail::run_pairwise(t.get(), c);
  } else {
    EXPECT_TRUE(detail::bitonic_fits(t.get()));
    o.bound = detail::bitonic_max_bytes(t.get());
    detail::run_bitonic(t.get(), c);
  }
  o.correct = t.correct();
  o.bytes_total = global_sum(c.bytes_sent);
  o.bytes_max = global_max(c.bytes_sent);
  o.direct_total = t.direct_bytes_total();
  o.metadata_max = global_max(c.metadata_bytes);
  o.messages_max = global_max(c.messages_sent);
  return o;
}

// Runs both algorithms on s at every element size and checks results and byte bounds.
void check_all(const count_matrix& s, const std::string& what, std::int64_t work_bytes = 4096) {
  for (std::int64_t extent : {1, 8, 16})
    for (algo a : {algo::pairwise, algo::bitonic}) {
      const outcome o = run(s, extent, a, work_bytes);
      EXPECT_TRUE(o.correct) << what << ", " << name_of(a) << ", extent " << extent;
      if (a == algo::pairwise) {
        EXPECT_EQ(o.bound, o.bytes_max) << what << ": the dry run predicts exactly what pairwise sends";
      } else {
        EXPECT_LE(o.bytes_max, o.bound) << what << ": bitonic_max_bytes bounds what bitonic sends";
      }
      EXPECT_GE(o.bytes_total, o.direct_total) << what;
    }
}

count_matrix zeros() {
  const auto n = static_cast<std::size_t>(world_size());
  return count_matrix(n, std::vector<std::int64_t>(n, 0));
}

// Random counts, about a third of them zero; `row_scale` and `col_scale` skew the send and receive totals.
count_matrix random_counts(std::mt19937_64& g, std::int64_t most, bool skew) {
  auto s = zeros();
  const int np = world_size();
  for (int i = 0; i < np; ++i)
    for (int j = 0; j < np; ++j) {
      if (g() % 3 == 0) continue;
      std::int64_t v = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(most + 1));
      if (skew) v *= (i % 3 + 1) * ((j * 5 + 1) % 4 + 1);
      s[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = v;
    }
  return s;
}

// The paper's Section 4 cases, d = (j - i) mod P.
count_matrix paper_case(int which, std::int64_t n) {
  auto s = zeros();
  const int np = world_size();
  for (int i = 0; i < np; ++i)
    for (int j = 0; j < np; ++j) {
      const int d = ((j - i) % np + np) % np;
      std::int64_t v = 0;
      switch (which) {
        case 1:
          v = n / np;
          break;
        case 2:
          v = d < np / 4 ? 0 : (d < np - 1 ? n / np : n / 4);
          break;
        case 3:
          v = d < np / 2 ? 0 : (d < np - 1 ? n / np : n / 2);
          break;
        case 4:
          v = d == np - 1 ? n : 0;
          break;
      }
      s[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = v;
    }
  return s;
}

TEST(InplaceAlgorithms, RandomCounts) {
  std::mt19937_64 g(test_seed(20240611));
  for (int rep = 0; rep < 4; ++rep) {
    const auto s = random_counts(g, rep < 2 ? 4 : 40, false);
    check_all(s, "random " + std::to_string(rep), rep % 2 ? 64 : 4096);
  }
}

TEST(InplaceAlgorithms, UnequalSendAndReceiveTotals) {
  std::mt19937_64 g(test_seed(77));
  for (int rep = 0; rep < 3; ++rep) check_all(random_counts(g, 12, true), "skewed " + std::to_string(rep));
  // One rank sends nothing at all but receives; another receives nothing but sends.
  if (world_size() >= 2) {
    auto s = random_counts(g, 10, false);
    for (auto& v : s[0]) v = 0;
    for (auto& row : s) row.back() = 0;
    check_all(s, "silent sender and receiver");
  }
}

TEST(InplaceAlgorithms, OneRankSendsEverythingToOnePeer) {
  const int np = world_size();
  std::mt19937_64 g(test_seed(5));
  for (int sender : {0, np / 2, np - 1}) {  // the first, a middle and the last rank
    auto s = random_counts(g, 3, false);
    const int target = (sender * 3 + 1) % np;
    auto& row = s[static_cast<std::size_t>(sender)];
    std::fill(row.begin(), row.end(), 0);
    row[static_cast<std::size_t>(target)] = 50 + sender;
    check_all(s, "rank " + std::to_string(sender) + " sends all to " + std::to_string(target));
  }
}

TEST(InplaceAlgorithms, AllCountsZero) { check_all(zeros(), "all zero"); }

TEST(InplaceAlgorithms, CapacityWithSlack) {
  std::mt19937_64 g(test_seed(9));
  const auto s = random_counts(g, 20, true);
  for (algo a : {algo::pairwise, algo::bitonic}) {
    EXPECT_TRUE(run(s, 8, a, 4096, 17).correct) << name_of(a);
  }
}

// The paper's four cases: results, and the bytes sent against the direct minimum (printed for the record).
TEST(InplaceAlgorithms, PaperCases) {
  const int np = world_size();
  const std::int64_t n = 96 * np;  // N/P, N/4 and N/2 are whole numbers
  for (int which = 1; which <= 4; ++which) {
    const auto s = paper_case(which, n);
    check_all(s, "case-" + std::to_string(which), 1024);
    for (algo a : {algo::pairwise, algo::bitonic}) {
      const outcome o = run(s, 16, a, 1 << 16);
      EXPECT_TRUE(o.correct);
      if (world_rank() == 0)
        std::printf(
            "[bytes] P=%d case-%d N=%lld extent=16 %-8s sent total %lld (max/rank %lld, bound %lld), "
            "direct minimum %lld, ratio %.2f, metadata max %lld B, messages max %lld\n",
            np, which, static_cast<long long>(n), name_of(a), static_cast<long long>(o.bytes_total),
            static_cast<long long>(o.bytes_max), static_cast<long long>(o.bound),
            static_cast<long long>(o.direct_total),
            o.direct_total ? static_cast<double>(o.bytes_total) / static_cast<double>(o.direct_total) : 0.0,
            static_cast<long long>(o.metadata_max), static_cast<long long>(o.messages_max));
    }
  }
}

// The paper's bad case for pairwise (also its case-4): rank 0 holds S(P-1), rank i holds S(i-1). S(P-1) is
// forwarded along the chain 0 -> 1 -> ... -> P-1, one swap per round, each waiting for the one before: the
// time is O(NP). In bytes: ranks 1 .. P-2 each send their block to its owner and forward S(P-1), so the total
// is 2(P-1) blocks against P directly, and the dry run predicts it.
TEST(InplaceAlgorithms, PairwiseWorstCase) {
  const int np = world_size();
  auto s = zeros();
  const std::int64_t n = 40, extent = 8;
  s[0][static_cast<std::size_t>(np - 1)] = n;
  for (int i = 1; i < np; ++i) s[static_cast<std::size_t>(i)][static_cast<std::size_t>(i - 1)] = n;
  check_all(s, "pairwise worst case");
  const outcome o = run(s, extent, algo::pairwise);
  EXPECT_TRUE(o.correct);
  if (np >= 2) {
    EXPECT_EQ(o.bytes_total, 2 * (np - 1) * n * extent);
    EXPECT_EQ(o.bound, (np >= 3 ? 2 : 1) * n * extent);
  }
  if (world_rank() == 0)
    std::printf("[bytes] P=%d pairwise worst case: sent total %lld (max/rank %lld), direct minimum %lld\n", np,
                static_cast<long long>(o.bytes_total), static_cast<long long>(o.bytes_max),
                static_cast<long long>(o.direct_total));
}

}  // namespace
