// SPDX-License-Identifier: BSD-3-Clause
// The library's node-shared windows (src/mpi/shared_window.hpp): on random sizes per rank (0, whole pages, a
// page less or more a few bytes, any), every segment is 64-byte aligned, holds its bytes without overlapping a
// peer's, reads back on every node peer through shared_window_segment, and is asked of MPI with a size that is not
// a whole number of pages (what keeps MPICH's symmetric-heap probe, whose cost grows with the window, out of the
// window's set-up).
// redist-test-ranks: 1 2 3 4
// redist-test-nodes: 4:2
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "mpi/checked.hpp"
#include "mpi/shared_window.hpp"
#include "mpi_test_support.hpp"
#include "test_seed.hpp"

using namespace redist::testing;
namespace mpi = redist::mpi;

namespace {

std::byte pattern(int node_rank, std::int64_t at) {
  return static_cast<std::byte>((node_rank * 131 + at * 7 + (at >> 12)) & 0xff);
}

// A size of one of the kinds that matter: none, whole pages, a page boundary missed by a little, anything.
std::int64_t draw_size(std::mt19937_64& g, std::int64_t page) {
  const std::int64_t pages = static_cast<std::int64_t>(g() % 64);
  switch (g() % 5) {
    case 0:
      return 0;
    case 1:
      return std::max<std::int64_t>(1, pages) * page;
    case 2:
      return std::max<std::int64_t>(1, pages) * page - static_cast<std::int64_t>(1 + g() % 64);
    case 3:
      return pages * page + static_cast<std::int64_t>(1 + g() % 64);
    default:
      return static_cast<std::int64_t>(g() % (std::int64_t(1) << 22));
  }
}

TEST(SharedWindow, SegmentsAreAlignedDisjointAndSharedOnRandomSizes) {
  const std::int64_t page = sysconf(_SC_PAGESIZE);
  ASSERT_GT(page, 0);
  const mpi::comm_handle node = mpi::split_shared(MPI_COMM_WORLD);
  const int node_size = mpi::size(node.get()), node_rank = mpi::rank(node.get());
  std::mt19937_64 g(test_seed(0x5eed0001) ^ static_cast<std::uint64_t>(mpi::rank(MPI_COMM_WORLD)));
  for (int trial = 0; trial < 12; ++trial) {
    const std::int64_t bytes = draw_size(g, page);
    std::byte* base = nullptr;
    MPI_Win window = MPI_WIN_NULL;
    ASSERT_EQ(mpi::allocate_shared_window(bytes, node.get(), &base, &window), MPI_SUCCESS);
    ASSERT_NE(window, MPI_WIN_NULL);
    ASSERT_EQ(MPI_Win_lock_all(MPI_MODE_NOCHECK, window), MPI_SUCCESS);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(bytes) + " bytes on this rank");
    EXPECT_EQ(bytes == 0, base == nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(base) % 64, 0u);
    // The size MPI was asked for: never a whole number of pages where there are bytes.
    MPI_Aint asked = 0;
    int unit = 0;
    void* raw = nullptr;
    ASSERT_EQ(MPI_Win_shared_query(window, node_rank, &asked, &unit, &raw), MPI_SUCCESS);
    if (bytes > 0) {
      EXPECT_NE(asked % page, 0) << "asked MPI for " << asked << " bytes";
      EXPECT_GE(static_cast<std::int64_t>(reinterpret_cast<std::byte*>(raw) + asked - base), bytes);
    }
    for (std::int64_t at = 0; at < bytes; ++at) base[at] = pattern(node_rank, at);
    std::vector<std::int64_t> sizes(static_cast<std::size_t>(node_size));
    ASSERT_EQ(MPI_Allgather(&bytes, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, node.get()), MPI_SUCCESS);
    MPI_Win_sync(window);
    MPI_Barrier(node.get());
    MPI_Win_sync(window);
    // Every peer's bytes as it wrote them: the segments are where it sees its own, and none overlaps another.
    for (int r = 0; r < node_size; ++r) {
      std::byte* segment = nullptr;
      ASSERT_EQ(mpi::shared_window_segment(window, r, &segment), MPI_SUCCESS);
      const std::int64_t n = sizes[static_cast<std::size_t>(r)];
      EXPECT_EQ(n == 0, segment == nullptr) << "node rank " << r;
      if (r == node_rank) EXPECT_EQ(segment, base);
      std::int64_t wrong = 0;
      for (std::int64_t at = 0; at < n; ++at) wrong += segment[at] != pattern(r, at);
      EXPECT_EQ(wrong, 0) << "node rank " << r << "'s " << n << " bytes";
    }
    MPI_Barrier(node.get());
    MPI_Win_unlock_all(window);
    ASSERT_EQ(MPI_Win_free(&window), MPI_SUCCESS);
  }
}

}  // namespace
