// SPDX-License-Identifier: BSD-3-Clause
// Message and work buffers (src/machine/pages.cpp): 2 MiB alignment from 2 MiB on, and the cache of released
// blocks (from 64 KiB on): a later allocation of 50-100% of a kept block's size gets that block (its pages
// already mapped), a smaller one does not, and the kept bytes never exceed the limit (256 MiB unless
// REDIST_BUFFER_CACHE says); the byte counts of the environment variables; a page source (fake memory) instead
// of the heap for large blocks.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "buffer_cache.hpp"
#include "machine/byte_count.hpp"
#include "machine/pages.hpp"

namespace {

using redist::machine::allocate_pages;
using redist::machine::cached_page_bytes;
using redist::machine::page_buffer;
using redist::testing::buffer_cache_on;

constexpr std::int64_t mib = std::int64_t{1} << 20;

TEST(Pages, LargeBlocksAreHugePageAlignedAndWritable) {
  for (std::int64_t bytes : {std::int64_t{1}, mib, 2 * mib, 5 * mib + 17}) {
    page_buffer b = allocate_pages(bytes);
    ASSERT_NE(b.get(), nullptr);
    if (bytes >= 2 * mib)
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.get()) % static_cast<std::uintptr_t>(2 * mib), 0u);
    std::memset(b.get(), 0x5a, static_cast<std::size_t>(bytes));
    redist::machine::touch_pages(b.get(), bytes);
    EXPECT_EQ(b.get()[bytes - 1], std::byte{0});
  }
  EXPECT_EQ(allocate_pages(0).get(), nullptr);
}

// The mapping that holds a fresh 4 MiB block is marked for huge pages ("hg" in /proc/self/smaps) exactly when
// huge_pages_offered() says so (not on a VM whose balloon reports free memory to the hypervisor).
TEST(Pages, LargeBlocksAskForHugePagesOnlyWhereOffered) {
  redist::machine::drop_cached_pages();  // a kept block would carry an earlier process-wide choice: none differs
  page_buffer b = allocate_pages(4 * mib);
  const auto at = reinterpret_cast<std::uintptr_t>(b.get());
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) GTEST_SKIP() << "no /proc/self/smaps to read the mapping's flags from";
  std::string line;
  bool inside = false, found = false, huge = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2 && line.find(' ') > line.find('-')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      found = true;
      huge = (line + " ").find(" hg ") != std::string::npos;
    }
  }
  ASSERT_TRUE(found) << "no mapping of /proc/self/smaps holds the block";
  EXPECT_EQ(huge, redist::machine::huge_pages_offered());
  std::printf("[pages] huge pages %s\n",
              redist::machine::huge_pages_offered() ? "offered" : "not offered (free memory reported to the host)");
}

TEST(Pages, ReleasedBlocksServeLaterAllocationsOfSimilarSize) {
  if (!buffer_cache_on()) GTEST_SKIP() << "buffer cache off in sanitized builds or by REDIST_BUFFER_CACHE";
  redist::machine::drop_cached_pages();
  const std::int64_t before = cached_page_bytes();
  EXPECT_EQ(before, 0);
  std::byte* first = nullptr;
  {
    page_buffer b = allocate_pages(8 * mib);
    first = b.get();
    b.get()[8 * mib - 1] = std::byte{7};
  }
  EXPECT_EQ(cached_page_bytes(), before + 8 * mib);
  {
    page_buffer small = allocate_pages(3 * mib);  // under half of the kept block: a new one
    EXPECT_NE(small.get(), first);
    page_buffer similar = allocate_pages(6 * mib);
    EXPECT_EQ(similar.get(), first);
    EXPECT_EQ(cached_page_bytes(), before);
  }
  EXPECT_EQ(cached_page_bytes(), before + 11 * mib);
}

// Small message buffers are kept too (from 64 KiB: glibc maps fresh pages for them from 128 KiB on), page-aligned;
// below 64 KiB the C heap serves them and nothing is kept.
TEST(Pages, SmallBlocksAreKeptFrom64KiB) {
  if (!buffer_cache_on()) GTEST_SKIP() << "buffer cache off in sanitized builds or by REDIST_BUFFER_CACHE";
  redist::machine::drop_cached_pages();
  constexpr std::int64_t kib = 1024;
  { page_buffer tiny = allocate_pages(64 * kib - 1); }
  EXPECT_EQ(cached_page_bytes(), 0);
  std::byte* first = nullptr;
  {
    page_buffer b = allocate_pages(320 * kib);
    first = b.get();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % 4096u, 0u);
    b.get()[320 * kib - 1] = std::byte{7};
  }
  EXPECT_EQ(cached_page_bytes(), 320 * kib);
  {
    page_buffer other = allocate_pages(100 * kib);  // under half of the kept block: a new one
    EXPECT_NE(other.get(), first);
    page_buffer again = allocate_pages(300 * kib);
    EXPECT_EQ(again.get(), first);
    EXPECT_EQ(cached_page_bytes(), 0);
  }
  EXPECT_EQ(cached_page_bytes(), 420 * kib);
  redist::machine::drop_cached_pages();
}

// What a borrower (a plan's execution) gives back: whatever the cache keeps or the C heap serves; blocks over the
// limit are held instead of being faulted in afresh by every use.
TEST(Pages, BorrowersReturnWhatTheCacheKeeps) {
  if (!buffer_cache_on()) GTEST_SKIP() << "buffer cache off in sanitized builds or by REDIST_BUFFER_CACHE";
  EXPECT_TRUE(redist::machine::returned_after_use(0));
  EXPECT_TRUE(redist::machine::returned_after_use(1000));
  EXPECT_TRUE(redist::machine::returned_after_use(256 * mib));
  EXPECT_FALSE(redist::machine::returned_after_use(256 * mib + 1));
}

TEST(Pages, KeptBytesStayWithinTheLimit) {
  if (!buffer_cache_on()) GTEST_SKIP() << "buffer cache off in sanitized builds or by REDIST_BUFFER_CACHE";
  redist::machine::drop_cached_pages();
  std::vector<page_buffer> blocks;
  for (int k = 0; k < 6; ++k) blocks.push_back(allocate_pages(64 * mib));  // never touched: no memory used
  blocks.clear();
  EXPECT_LE(cached_page_bytes(), 256 * mib);
  EXPECT_GE(cached_page_bytes(), 192 * mib);
  page_buffer over = allocate_pages(300 * mib);  // larger than the whole cache: freed, never kept
  over.reset();
  EXPECT_LE(cached_page_bytes(), 256 * mib);
}

TEST(Pages, ByteCountsParseAsTheEnvironmentVariablesDocumentThem) {
  using redist::machine::parse_byte_count;
  EXPECT_EQ(parse_byte_count("0"), 0);
  EXPECT_EQ(parse_byte_count("4096"), 4096);
  EXPECT_EQ(parse_byte_count("3k"), 3 * 1024);
  EXPECT_EQ(parse_byte_count("512M"), 512 * mib);
  EXPECT_EQ(parse_byte_count("2G"), 2048 * mib);
  for (const char* bad : {"", "lots", "-5", " 5", "5 M", "5MB", "1e6", "9223372036854775807G"})
    EXPECT_EQ(parse_byte_count(bad), -1) << "'" << bad << "'";
}

}  // namespace

namespace {
// A page source that counts what it hands out and takes back (a simulator's fake memory stands there).
int sourced_live = 0, sourced_total = 0;
void* counted_allocate(std::size_t bytes) {
  ++sourced_live;
  ++sourced_total;
  return std::malloc(bytes);
}
void counted_release(void* data) {
  --sourced_live;
  std::free(data);
}
}  // namespace

TEST(Pages, APageSourceServesLargeBlocksAndTakesThemBack) {
  redist::machine::use_page_source({std::size_t(1) << 20, counted_allocate, counted_release});
  {
    const page_buffer large = allocate_pages(std::int64_t(3) << 20);
    const page_buffer small = allocate_pages(std::int64_t(64) << 10);  // below from_bytes: the heap
    EXPECT_EQ(sourced_live, 1);
    EXPECT_EQ(sourced_total, 1);
    std::memset(large.get(), 1, std::size_t(3) << 20);
  }
  EXPECT_EQ(sourced_live, 0) << "a sourced block went elsewhere than its source";
  const std::int64_t kept = cached_page_bytes();
  { const page_buffer again = allocate_pages(std::int64_t(3) << 20); }
  EXPECT_EQ(sourced_total, 2) << "a sourced block was kept by the cache";
  EXPECT_EQ(cached_page_bytes(), kept);
  redist::machine::use_page_source({});  // the heap again, for the tests after this one
  { const page_buffer heap = allocate_pages(std::int64_t(3) << 20); }
  EXPECT_EQ(sourced_total, 2);
}
