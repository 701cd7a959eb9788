// SPDX-License-Identifier: BSD-3-Clause
// redist-test-ranks: 2 4
// Peak memory of the in-place alltoallv (include/redist/exchange/inplace.hpp): on a large buffer (512 MiB over
// all ranks: 256 MiB per rank at 2 ranks, 128 MiB at 4, every page touched), the rise of the process's peak
// resident set (VmHWM in /proc/self/status) during a call must stay within the work buffer plus a fixed
// allowance, for automatic and chunked (and pairwise and bitonic), on the paper's case 1 and on random counts;
// the results are checked in place (no second buffer). As a control that the measurement CAN fail, MPICH's out-of-place MPI_Alltoallv
// with a second buffer of the same size must raise VmHWM by about that buffer's size.
//
// Measuring: VmHWM is a high-water mark, so before each call it is reset to the current resident set by
// writing "5" to /proc/self/clear_refs (Linux >= 4.0); where that is refused, the in-place calls run first
// and the control last, each delta taken from the mark before it. A warm-up call on a small buffer comes
// first, so that code pages and MPICH's/UCX's per-peer resources (shared-memory segments, endpoints) are
// resident before anything is measured: they are not the call's memory. malloc is set to map every block of
// 64 KiB or more freshly and unmap it on free (a fixed M_MMAP_THRESHOLD: glibc would otherwise raise its
// threshold after the warm-up's free and serve the next temporaries from heap pages already resident, which
// VmHWM cannot see), and malloc_trim runs before each measurement: every temporary the call allocates counts.
#include <gtest/gtest.h>
#include <malloc.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/error.hpp"
#include "redist/exchange/inplace.hpp"
#include "test_seed.hpp"

namespace ex = redist::exchange;
using namespace redist::testing;

namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;

// The allowance beyond the work buffer. What it covers, besides the call's O(P) bookkeeping (a few KiB):
// MPICH 4 (ch4:ucx) and UCX allocate internally for point-to-point traffic (request pools, rendezvous
// state, bounce buffers of a transport, registration caches), some of it on first use of a message size;
// malloc's bookkeeping. Measured on this machine (MPICH 4.0.2, ch4:ucx, 2 and 4 ranks, chunked): the rise is
// 3.7 to 4.6 MiB, i.e. the 4 MiB work buffer (not all of whose pages a small exchange touches) plus at most
// 0.6 MiB; the [info] lines print it on every run. 8 MiB is ten times that surplus, and still only 1/32
// (1/16) of the data buffer, so an implementation holding a data-sized temporary, or even a sixteenth of
// one, fails.
constexpr std::int64_t mpi_allowance = 8 * MiB;

std::int64_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
  return -1;
}
std::int64_t hwm_bytes() { return status_kib("VmHWM") * 1024; }
std::int64_t rss_bytes() { return status_kib("VmRSS") * 1024; }

// Resets VmHWM to the current resident set; false when the kernel refuses.
bool reset_hwm() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// A buffer of `bytes`, mapped fresh and (when `touch`) written through, so that every page is resident.
struct mapped_buffer {
  std::uint64_t* data = nullptr;
  std::int64_t bytes = 0;
  explicit mapped_buffer(std::int64_t b, bool touch = true) : bytes(b) {
    void* p = mmap(nullptr, static_cast<size_t>(b), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    data = static_cast<std::uint64_t*>(p);
    if (touch) std::memset(p, 0x11, static_cast<size_t>(b));
  }
  ~mapped_buffer() { munmap(data, static_cast<size_t>(bytes)); }
  mapped_buffer(const mapped_buffer&) = delete;
  mapped_buffer& operator=(const mapped_buffer&) = delete;
  std::int64_t elements() const { return bytes / 8; }
};

using counts_matrix = std::vector<std::vector<std::int64_t>>;

counts_matrix case_one(int p, std::int64_t n) {
  return counts_matrix(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), n / p));
}

// Random counts scaled so that every send and receive total is at most n (some much less).
counts_matrix random_within(int p, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p)));
  for (auto& row : c)
    for (auto& x : row) x = g() % 5 == 0 ? 0 : static_cast<std::int64_t>(g() % 1000000);
  std::int64_t largest = 1;
  for (int i = 0; i < p; ++i) {
    std::int64_t r = 0, s = 0;
    for (int j = 0; j < p; ++j) {
      r += c[static_cast<size_t>(i)][static_cast<size_t>(j)];
      s += c[static_cast<size_t>(j)][static_cast<size_t>(i)];
    }
    largest = std::max({largest, r, s});
  }
  for (auto& row : c)
    for (auto& x : row)
      x = static_cast<std::int64_t>(static_cast<double>(x) / static_cast<double>(largest) * static_cast<double>(n));
  return c;
}

std::uint64_t value(int from, int to, std::int64_t k) {
  return (static_cast<std::uint64_t>(from) << 48) | (static_cast<std::uint64_t>(to) << 40) |
         static_cast<std::uint64_t>(k);
}

void fill_send(std::uint64_t* buf, const counts_matrix& c, int me) {
  std::int64_t at = 0;
  for (int j = 0; j < static_cast<int>(c.size()); ++j)
    for (std::int64_t k = 0; k < c[static_cast<size_t>(me)][static_cast<size_t>(j)]; ++k) buf[at++] = value(me, j, k);
}

// Elements of the result that are not s(0, me) .. s(P-1, me).
std::int64_t wrong_received(const std::uint64_t* buf, const counts_matrix& c, int me) {
  std::int64_t at = 0, wrong = 0;
  for (int i = 0; i < static_cast<int>(c.size()); ++i)
    for (std::int64_t k = 0; k < c[static_cast<size_t>(i)][static_cast<size_t>(me)]; ++k)
      wrong += buf[at++] != value(i, me, k);
  return wrong;
}

struct measured {
  bool ran = false;       // false: refused (chunked may)
  std::int64_t rise = 0;  // VmHWM rise, this rank
  ex::inplace_report report;
};

// One in-place call on `buf` with counts c, its VmHWM rise, the result checked.
measured measure_inplace(mapped_buffer& buf, const counts_matrix& c, ex::inplace_algorithm a, bool can_reset) {
  const int me = world_rank(), p = world_size();
  fill_send(buf.data, c, me);
  std::vector<std::int64_t> sendcounts(c[static_cast<size_t>(me)]);
  ex::inplace_options o;
  o.algorithm = a;
  measured m;
  malloc_trim(0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (can_reset) reset_hwm();
  const std::int64_t before = hwm_bytes();
  bool refused = false;
  try {
    m.report =
        ex::alltoallv_inplace(buf.data, buf.elements(), sendcounts.data(), nullptr, MPI_UINT64_T, MPI_COMM_WORLD, o);
  } catch (const redist::invalid_argument&) {
    refused = true;
  }
  m.rise = hwm_bytes() - before;
  EXPECT_TRUE(all_ranks(!refused) || all_ranks(refused)) << "a refusal must be collective";
  EXPECT_TRUE(!refused || a == ex::inplace_algorithm::chunked) << "only chunked may refuse";
  m.ran = !refused;
  if (m.ran) EXPECT_EQ(global_sum(wrong_received(buf.data, c, me)), 0) << "wrong result";
  (void)p;
  return m;
}

TEST(InplaceMemory, PeakRiseWithinWorkBufferPlusAllowanceAndTheControlShowsTheBuffer) {
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 64 * 1024);
  const int p = world_size(), me = world_rank();
  const std::int64_t bytes = 512 * MiB / p;  // 256 MiB at 2 ranks, 128 MiB at 4
  const bool can_reset = all_ranks(reset_hwm());
  if (me == 0)
    std::printf("[info] %lld MiB per rank; VmHWM reset by /proc/self/clear_refs: %s\n",
                static_cast<long long>(bytes / MiB), can_reset ? "yes" : "no (in-place first, control last)");

  // Warm-up: code pages, MPI's per-peer resources and large-message paths, on a small buffer.
  {
    mapped_buffer small(8 * MiB);
    const counts_matrix c = case_one(p, small.elements());
    for (auto a : {ex::inplace_algorithm::automatic, ex::inplace_algorithm::chunked}) {
      fill_send(small.data, c, me);
      std::vector<std::int64_t> sc(c[static_cast<size_t>(me)]);
      ex::inplace_options o;
      o.algorithm = a;
      ex::alltoallv_inplace(small.data, small.elements(), sc.data(), nullptr, MPI_UINT64_T, MPI_COMM_WORLD, o);
    }
  }

  mapped_buffer buf(bytes);
  const std::int64_t n = buf.elements();
  struct run {
    const char* pattern;
    counts_matrix c;
    ex::inplace_algorithm a;
  };
  const std::uint64_t seed = test_seed(20240601);
  const std::vector<run> runs = {{"case 1", case_one(p, n), ex::inplace_algorithm::automatic},
                                 {"case 1", case_one(p, n), ex::inplace_algorithm::chunked},
                                 {"random", random_within(p, n, seed), ex::inplace_algorithm::automatic},
                                 {"random", random_within(p, n, seed), ex::inplace_algorithm::chunked},
                                 // The paper's algorithms too (the capacity, the whole buffer, holds every total).
                                 {"case 1", case_one(p, n), ex::inplace_algorithm::pairwise},
                                 {"case 1", case_one(p, n), ex::inplace_algorithm::bitonic},
                                 {"random", random_within(p, n, seed), ex::inplace_algorithm::pairwise},
                                 {"random", random_within(p, n, seed), ex::inplace_algorithm::bitonic}};
  const std::int64_t work = ex::inplace_options{}.work_bytes;
  for (const run& r : runs) {
    const measured m = measure_inplace(buf, r.c, r.a, can_reset);
    const std::int64_t worst = global_max(m.rise);
    if (me == 0)
      std::printf("[info] in place, %s, %s: %s; VmHWM rise (max over ranks) %.2f MiB, work buffer %.2f MiB\n",
                  r.pattern, ex::to_string(r.a), m.ran ? ex::to_string(m.report.algorithm) : "refused",
                  static_cast<double>(worst) / MiB, static_cast<double>(work) / MiB);
    if (!m.ran) continue;
    EXPECT_EQ(m.report.work_bytes, work);
    EXPECT_LE(worst, work + mpi_allowance)
        << r.pattern << ", " << ex::to_string(r.a) << ": peak memory rose by " << worst << " bytes, more than the "
        << work << "-byte work buffer plus " << mpi_allowance << " bytes for MPI";
  }

  // The control, last: MPI_Alltoallv out of place on case 1 needs a receive buffer as large as the data.
  {
    const counts_matrix c = case_one(p, n);
    fill_send(buf.data, c, me);
    mapped_buffer recv(bytes, /*touch=*/false);
    std::vector<int> counts(static_cast<size_t>(p), static_cast<int>(n / p)), displs(static_cast<size_t>(p));
    for (int j = 0; j < p; ++j) displs[static_cast<size_t>(j)] = j * static_cast<int>(n / p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (can_reset) reset_hwm();
    const std::int64_t before = hwm_bytes();
    MPI_Alltoallv(buf.data, counts.data(), displs.data(), MPI_UINT64_T, recv.data, counts.data(), displs.data(),
                  MPI_UINT64_T, MPI_COMM_WORLD);
    const std::int64_t rise = hwm_bytes() - before;
    const std::int64_t least = -global_max(-rise);
    EXPECT_EQ(global_sum(wrong_received(recv.data, c, me)), 0);
    if (me == 0)
      std::printf(
          "[info] control, MPI_Alltoallv out of place, case 1: VmHWM rise (min over ranks) %.2f MiB of a "
          "%.2f MiB second buffer\n",
          static_cast<double>(least) / MiB, static_cast<double>(bytes) / MiB);
    EXPECT_GE(least, bytes * 9 / 10) << "the control did not see the second buffer: the measurement is blind";
    EXPECT_GT(least, work + mpi_allowance) << "the bound could not tell the control from an in-place call";
  }
}

}  // namespace
