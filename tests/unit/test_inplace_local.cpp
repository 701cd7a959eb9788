// SPDX-License-Identifier: BSD-3-Clause
// Local block operations of the in-place alltoallv (src/exchange/inplace_local.cpp): rotate_bytes against
// std::rotate, merge_blocks against std::merge and sort_blocks against std::stable_sort (both stable), on blocks
// whose bytes encode (block, offset) so that every moved byte is checked, with guard bytes around the data and
// after the work buffer, and the bytes-moved counts held to their bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "exchange/inplace_detail.hpp"
#include "test_seed.hpp"

namespace {

using redist::exchange::inplace_detail::block;
using redist::exchange::inplace_detail::merge_blocks;
using redist::exchange::inplace_detail::rotate_bytes;
using redist::exchange::inplace_detail::sort_blocks;
using redist::testing::test_seed;
using i64 = std::int64_t;

constexpr i64 guard_bytes = 64;
constexpr std::byte guard_value{0xA5};

// The byte at `offset` of the block with identity `id` (a hash, so that neighbours and shifts differ).
std::byte pattern(std::uint64_t id, std::uint64_t offset) {
  std::uint64_t x = id * 0x9E3779B97F4A7C15ull + offset * 0xD6E8FEB86659FD93ull + 0x632BE59BD9B4E019ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<std::byte>(x & 0xff);
}

// A block of the test: its key and size, and its identity in the input order.
struct tblock {
  i64 key = 0;
  i64 bytes = 0;
  std::uint64_t id = 0;
};

i64 total_of(const std::vector<tblock>& v) {
  i64 s = 0;
  for (const tblock& b : v) s += b.bytes;
  return s;
}

// Data buffer with guards on both sides and a work buffer followed by a guard.
struct arena {
  std::vector<std::byte> data;
  std::vector<std::byte> work;
  i64 size = 0;
  i64 work_bytes = 0;

  arena(const std::vector<tblock>& blocks, i64 work_size) : size(total_of(blocks)), work_bytes(work_size) {
    data.assign(static_cast<std::size_t>(size + 2 * guard_bytes), guard_value);
    std::byte* p = base();
    for (const tblock& b : blocks)
      for (i64 o = 0; o < b.bytes; ++o) *p++ = pattern(b.id, static_cast<std::uint64_t>(o));
    work.assign(static_cast<std::size_t>(work_size + guard_bytes), guard_value);
  }
  std::byte* base() { return data.data() + guard_bytes; }
  std::byte* work_ptr() { return work.data(); }

  // Checks the guards and that the data holds `expected`'s blocks in order.
  void check(const std::vector<tblock>& expected) const {
    for (i64 i = 0; i < guard_bytes; ++i) {
      ASSERT_EQ(data[static_cast<std::size_t>(i)], guard_value) << "write before the data, guard byte " << i;
      ASSERT_EQ(data[static_cast<std::size_t>(guard_bytes + size + i)], guard_value)
          << "write after the data, guard byte " << i;
      ASSERT_EQ(work[static_cast<std::size_t>(work_bytes + i)], guard_value)
          << "write past the work buffer, guard byte " << i;
    }
    const std::byte* p = data.data() + guard_bytes;
    i64 at = 0;
    for (std::size_t k = 0; k < expected.size(); ++k)
      for (i64 o = 0; o < expected[k].bytes; ++o, ++at)
        ASSERT_EQ(p[at], pattern(expected[k].id, static_cast<std::uint64_t>(o)))
            << "byte " << at << ": expected offset " << o << " of block #" << k << " (input id " << expected[k].id
            << ", key " << expected[k].key << ", " << expected[k].bytes << " bytes)";
  }
};

std::vector<block> to_blocks(const std::vector<tblock>& v) {
  std::vector<block> out;
  for (const tblock& b : v) out.push_back(block{b.key, b.bytes});
  return out;
}

void expect_same_list(const std::vector<block>& got, const std::vector<tblock>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].key, expected[k].key) << "block #" << k;
    ASSERT_EQ(got[k].bytes, expected[k].bytes) << "block #" << k << " (key " << got[k].key << ")";
  }
}

bool key_less(const tblock& a, const tblock& b) { return a.key < b.key; }

// The bytes of the blocks that end up at another offset than where they started (in = input order, ids
// 0..n-1): any correct rearrangement writes each of them at least once, a lower bound of the bytes moved.
i64 displaced_bytes(const std::vector<tblock>& in, const std::vector<tblock>& out) {
  std::vector<i64> start(in.size());
  i64 at = 0;
  for (const tblock& b : in) {
    start[b.id] = at;
    at += b.bytes;
  }
  i64 displaced = 0;
  at = 0;
  for (const tblock& b : out) {
    if (start[b.id] != at) displaced += b.bytes;
    at += b.bytes;
  }
  return displaced;
}

// Sorts `in` with sort_blocks and checks the result against std::stable_sort; returns the bytes moved.
i64 check_sort(std::vector<tblock> in, i64 work_bytes) {
  for (std::size_t k = 0; k < in.size(); ++k) in[k].id = k;
  arena a(in, work_bytes);
  std::vector<block> blocks = to_blocks(in);
  const i64 moved = sort_blocks(a.base(), blocks, a.work_ptr(), work_bytes);
  std::vector<tblock> expected = in;
  std::stable_sort(expected.begin(), expected.end(), key_less);
  expect_same_list(blocks, expected);
  a.check(expected);
  EXPECT_GE(moved, displaced_bytes(in, expected));
  return moved;
}

// Merges left then right with merge_blocks and checks the result against std::merge; returns the bytes moved.
i64 check_merge(std::vector<tblock> left, std::vector<tblock> right, i64 work_bytes) {
  std::vector<tblock> in = left;
  in.insert(in.end(), right.begin(), right.end());
  for (std::size_t k = 0; k < in.size(); ++k) in[k].id = k;
  std::copy(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(left.size()), left.begin());
  std::copy(in.begin() + static_cast<std::ptrdiff_t>(left.size()), in.end(), right.begin());
  arena a(in, work_bytes);
  std::vector<block> blocks = to_blocks(in);
  const i64 moved = merge_blocks(a.base(), blocks, left.size(), a.work_ptr(), work_bytes);
  std::vector<tblock> expected;
  std::merge(left.begin(), left.end(), right.begin(), right.end(), std::back_inserter(expected), key_less);
  expect_same_list(blocks, expected);
  a.check(expected);
  EXPECT_GE(moved, displaced_bytes(in, expected));
  if (work_bytes >= a.size) {
    EXPECT_LE(moved, a.size) << "a work buffer that holds everything: each byte once";
  }
  return moved;
}

// A size drawn from a mix: empty, one byte, small, medium, large, and now and then huge.
i64 random_size(std::mt19937_64& rng, i64 huge = 60000) {
  const int kind = static_cast<int>(rng() % 100);
  if (kind < 10) return 0;
  if (kind < 20) return 1;
  if (kind < 50) return 2 + static_cast<i64>(rng() % 15);
  if (kind < 80) return 17 + static_cast<i64>(rng() % 300);
  if (kind < 97) return 300 + static_cast<i64>(rng() % 4000);
  return 4000 + static_cast<i64>(rng() % static_cast<std::uint64_t>(huge));
}

std::vector<tblock> random_blocks(std::mt19937_64& rng, std::size_t n, i64 key_range) {
  std::vector<tblock> v(n);
  for (tblock& b : v) {
    b.key = static_cast<i64>(rng() % static_cast<std::uint64_t>(key_range));
    b.bytes = random_size(rng);
  }
  return v;
}

std::vector<tblock> sorted_run(std::mt19937_64& rng, std::size_t n, i64 key_range) {
  std::vector<tblock> v = random_blocks(rng, n, key_range);
  std::stable_sort(v.begin(), v.end(), key_less);
  return v;
}

const std::vector<i64> work_sizes{1, 7, 64, 4096, i64{1} << 22};

// An upper bound of merge_blocks' bytes moved for n blocks of `bytes` bytes: 2 B per level of a split tree in
// which each split removes at least a quarter of the blocks, plus the final buffer merges.
i64 merge_bound(std::size_t n, i64 bytes) {
  const double levels = n < 2 ? 1.0 : std::ceil(std::log(static_cast<double>(n)) / std::log(4.0 / 3.0)) + 2.0;
  return static_cast<i64>(2.0 * static_cast<double>(bytes) * levels) + bytes;
}

// ---- rotate_bytes ------------------------------------------------------------------------------------------

TEST(InplaceRotate, MatchesStdRotateOnRandomSizes) {
  std::mt19937_64 rng(test_seed(101));
  const std::vector<i64> interesting{0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4095, 4096, 4097, 65537};
  for (i64 w : work_sizes) {
    for (int trial = 0; trial < 60; ++trial) {
      i64 left, right;
      if (trial < 30) {
        left = interesting[rng() % interesting.size()];
        right = interesting[rng() % interesting.size()];
      } else {
        left = static_cast<i64>(rng() % 200000);
        right = static_cast<i64>(rng() % (trial % 2 ? 50 : 200000));
        if (rng() % 2) std::swap(left, right);
      }
      SCOPED_TRACE("left " + std::to_string(left) + " right " + std::to_string(right) + " work " + std::to_string(w));
      std::vector<tblock> two{{0, left, 0}, {0, right, 1}};
      arena a(two, std::min<i64>(w, 1 << 20));
      const i64 moved = rotate_bytes(a.base(), left, right, a.work_ptr(), a.work_bytes);
      a.check({two[1], two[0]});
      if (left == 0 || right == 0) {
        EXPECT_EQ(moved, 0);
      } else if (std::min(left, right) <= a.work_bytes) {
        EXPECT_EQ(moved, left + right);
      } else {
        EXPECT_GE(moved, left + right);  // every byte changes place
        EXPECT_LE(moved, 2 * (left + right));
      }
    }
  }
}

TEST(InplaceRotate, AgreesWithStdRotateByteForByte) {
  // Independent of the pattern helper: plain std::rotate on a copy.
  std::mt19937_64 rng(test_seed(7));
  for (i64 w : {i64{1}, i64{7}, i64{64}, i64{100}}) {
    for (int trial = 0; trial < 40; ++trial) {
      const i64 n = 1 + static_cast<i64>(rng() % 5000);
      const i64 left = static_cast<i64>(rng() % static_cast<std::uint64_t>(n + 1));
      std::vector<std::byte> buf(static_cast<std::size_t>(n));
      for (auto& b : buf) b = static_cast<std::byte>(rng() & 0xff);
      std::vector<std::byte> ref = buf;
      std::rotate(ref.begin(), ref.begin() + left, ref.end());
      std::vector<std::byte> work(static_cast<std::size_t>(w));
      rotate_bytes(buf.data(), left, n - left, work.data(), w);
      ASSERT_TRUE(buf == ref) << "n " << n << " left " << left << " work " << w;
    }
  }
}

TEST(InplaceRotate, LargeCoprimeSidesWithTinyAndSmallWork) {
  const i64 left = 3000017, right = 1999993;
  for (i64 w : {i64{1}, i64{64}, i64{4096}}) {
    SCOPED_TRACE("work " + std::to_string(w));
    std::vector<tblock> two{{0, left, 0}, {0, right, 1}};
    arena a(two, w);
    const i64 moved = rotate_bytes(a.base(), left, right, a.work_ptr(), w);
    a.check({two[1], two[0]});
    EXPECT_GE(moved, left + right);
    EXPECT_LE(moved, 2 * (left + right));
  }
}

// ---- merge_blocks ------------------------------------------------------------------------------------------

TEST(InplaceMerge, RandomRunsMatchStdMerge) {
  std::mt19937_64 rng(test_seed(2024));
  for (i64 w : work_sizes) {
    for (int trial = 0; trial < 40; ++trial) {
      const std::size_t n1 = rng() % 60, n2 = rng() % 60;
      const i64 keys = trial % 3 == 0 ? 4 : 1000;  // many ties or few
      SCOPED_TRACE("trial " + std::to_string(trial) + " n1 " + std::to_string(n1) + " n2 " + std::to_string(n2) +
                   " work " + std::to_string(w));
      std::vector<tblock> left = sorted_run(rng, n1, keys), right = sorted_run(rng, n2, keys);
      const i64 moved = check_merge(left, right, w);
      EXPECT_LE(moved, merge_bound(n1 + n2, total_of(left) + total_of(right)));
    }
  }
}

TEST(InplaceMerge, AllKeysEqualKeepsOrderAndMovesNothing) {
  std::mt19937_64 rng(test_seed(3));
  for (i64 w : work_sizes) {
    std::vector<tblock> left = random_blocks(rng, 30, 1), right = random_blocks(rng, 40, 1);
    EXPECT_EQ(check_merge(left, right, w), 0) << "work " << w;
  }
}

TEST(InplaceMerge, OrderedRunsMoveNothing) {
  std::mt19937_64 rng(test_seed(4));
  for (i64 w : work_sizes) {
    std::vector<tblock> left = sorted_run(rng, 50, 100), right = sorted_run(rng, 50, 100);
    for (tblock& b : right) b.key += 99;  // right's first key equals left's last possible key
    EXPECT_EQ(check_merge(left, right, w), 0) << "work " << w;
  }
}

TEST(InplaceMerge, RightRunEntirelySmallerIsOneRotation) {
  std::mt19937_64 rng(test_seed(5));
  for (i64 w : work_sizes) {
    std::vector<tblock> left = sorted_run(rng, 40, 100), right = sorted_run(rng, 30, 100);
    for (tblock& b : left) b.key += 100;
    const i64 bytes = total_of(left) + total_of(right);
    const i64 moved = check_merge(left, right, w);
    EXPECT_GE(moved, bytes) << "work " << w;
    EXPECT_LE(moved, 2 * bytes) << "work " << w;
    if (std::min(total_of(left), total_of(right)) <= w) {
      EXPECT_EQ(moved, bytes) << "work " << w;
    }
  }
}

TEST(InplaceMerge, InterleavedKeys) {
  std::mt19937_64 rng(test_seed(6));
  for (i64 w : work_sizes) {
    std::vector<tblock> left(50), right(50);
    for (std::size_t k = 0; k < 50; ++k) {
      left[k] = {static_cast<i64>(2 * k), random_size(rng), 0};
      right[k] = {static_cast<i64>(2 * k + 1), random_size(rng), 0};
    }
    check_merge(left, right, w);
    // Equal keys pairwise: left's copy must come first.
    for (std::size_t k = 0; k < 50; ++k) right[k].key = left[k].key;
    check_merge(left, right, w);
  }
}

TEST(InplaceMerge, OneHugeBlockAgainstManyTiny) {
  std::mt19937_64 rng(test_seed(8));
  for (i64 w : work_sizes) {
    SCOPED_TRACE("work " + std::to_string(w));
    std::vector<tblock> tiny(300);
    for (std::size_t k = 0; k < tiny.size(); ++k) tiny[k] = {static_cast<i64>(k), static_cast<i64>(rng() % 3), 0};
    std::vector<tblock> huge{{150, 1 << 20, 0}};
    check_merge(huge, tiny, w);
    check_merge(tiny, huge, w);
    std::vector<tblock> huge_first{{-1, 1 << 20, 0}}, huge_last{{1000, 1 << 20, 0}};
    EXPECT_EQ(check_merge(huge_first, tiny, w), 0);
    EXPECT_EQ(check_merge(tiny, huge_last, w), 0);
  }
}

TEST(InplaceMerge, VeryDifferentRunLengths) {
  std::mt19937_64 rng(test_seed(9));
  for (i64 w : work_sizes) {
    for (std::size_t shorter : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
      SCOPED_TRACE("work " + std::to_string(w) + " shorter " + std::to_string(shorter));
      std::vector<tblock> long_run = sorted_run(rng, 800, 10000), short_run = sorted_run(rng, shorter, 10000);
      check_merge(long_run, short_run, w);
      check_merge(short_run, long_run, w);
    }
  }
}

TEST(InplaceMerge, EmptyRunsAndZeroByteBlocks) {
  std::mt19937_64 rng(test_seed(10));
  for (i64 w : work_sizes) {
    std::vector<tblock> run = sorted_run(rng, 20, 50), none;
    EXPECT_EQ(check_merge(run, none, w), 0);
    EXPECT_EQ(check_merge(none, run, w), 0);
    EXPECT_EQ(check_merge(none, none, w), 0);
    // Zero-byte blocks only: the list is merged by key, no byte moves.
    std::vector<tblock> zl(25), zr(25);
    for (std::size_t k = 0; k < 25; ++k) {
      zl[k] = {static_cast<i64>(3 * k), 0, 0};
      zr[k] = {static_cast<i64>(2 * k), 0, 0};
    }
    EXPECT_EQ(check_merge(zl, zr, w), 0);
    // Zero-byte blocks among others.
    std::vector<tblock> left = sorted_run(rng, 30, 40), right = sorted_run(rng, 30, 40);
    for (std::size_t k = 0; k < 30; k += 3) left[k].bytes = right[k + 1].bytes = 0;
    check_merge(left, right, w);
  }
}

TEST(InplaceMerge, BytesMovedStayWithinLogBoundOnLargeMerges) {
  std::mt19937_64 rng(test_seed(11));
  for (i64 w : {i64{1}, i64{64}, i64{4096}}) {
    for (int trial = 0; trial < 3; ++trial) {
      const std::size_t n = 2000;
      std::vector<tblock> left(n), right(n);  // alternate keys: the worst case for the split tree
      for (std::size_t k = 0; k < n; ++k) {
        left[k] = {static_cast<i64>(2 * k + (trial == 2 ? 0 : 1)), 1 + static_cast<i64>(rng() % 200), 0};
        right[k] = {static_cast<i64>(2 * k), 1 + static_cast<i64>(rng() % 200), 0};
      }
      const i64 bytes = total_of(left) + total_of(right);
      const i64 moved = check_merge(left, right, w);
      EXPECT_LE(moved, merge_bound(2 * n, bytes)) << "work " << w << " trial " << trial;
      EXPECT_GE(moved, bytes / 2) << "work " << w << " trial " << trial;  // most blocks change place
    }
  }
}

// ---- sort_blocks ------------------------------------------------------------------------------------------

TEST(InplaceSort, RandomBlocksMatchStableSort) {
  std::mt19937_64 rng(test_seed(12));
  for (i64 w : work_sizes) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::size_t n = rng() % 200;
      const i64 keys = trial % 2 ? 5 : 100000;
      SCOPED_TRACE("trial " + std::to_string(trial) + " n " + std::to_string(n) + " work " + std::to_string(w));
      check_sort(random_blocks(rng, n, keys), w);
    }
  }
}

TEST(InplaceSort, SortedInputMovesNothing) {
  std::mt19937_64 rng(test_seed(13));
  for (i64 w : work_sizes) {
    EXPECT_EQ(check_sort(sorted_run(rng, 150, 30), w), 0) << "work " << w;
    EXPECT_EQ(check_sort(random_blocks(rng, 150, 1), w), 0) << "all keys equal, work " << w;
    EXPECT_EQ(check_sort({}, w), 0);
    EXPECT_EQ(check_sort({{5, 100, 0}}, w), 0);
  }
}

TEST(InplaceSort, ReversedAndAdversarialPatterns) {
  std::mt19937_64 rng(test_seed(14));
  for (i64 w : work_sizes) {
    SCOPED_TRACE("work " + std::to_string(w));
    const std::size_t n = 120;
    std::vector<tblock> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = {static_cast<i64>(n - k), random_size(rng), 0};
    // Strictly decreasing: one descending run, reversed in two passes.
    EXPECT_EQ(check_sort(v, w), 2 * total_of(v));
    // A shift schedule's reflected order (keys r, r-1, ..., 0, n-1, ..., r+1): two descending runs, reversed,
    // then one merge that is a single rotation.
    for (std::size_t r : {std::size_t{0}, std::size_t{37}, n - 1}) {
      for (std::size_t k = 0; k < n; ++k) v[k].key = static_cast<i64>((r + n - k) % n);
      EXPECT_LE(check_sort(v, w), 4 * total_of(v)) << "reflected about " << r;
    }
    for (std::size_t k = 0; k < n; ++k) v[k].key = static_cast<i64>((n - k) / 10);  // decreasing, ties in groups
    check_sort(v, w);
    for (std::size_t k = 0; k < n; ++k) v[k].key = static_cast<i64>(std::min(k, n - k));  // organ pipe
    check_sort(v, w);
    for (std::size_t k = 0; k < n; ++k) v[k].key = static_cast<i64>(k % 7);  // saw tooth
    check_sort(v, w);
    for (std::size_t k = 0; k < n; ++k) v[k].key = static_cast<i64>(k % 2 ? k : n + k);  // two interleaved runs
    check_sort(v, w);
    // One huge block with the smallest key at the end, then at the front with the largest.
    for (std::size_t k = 0; k < n; ++k) v[k] = {static_cast<i64>(k % 13), static_cast<i64>(rng() % 4), 0};
    v.back() = {-1, 1 << 20, 0};
    check_sort(v, w);
    v.back() = v.front();
    v.front() = {1000, 1 << 20, 0};
    check_sort(v, w);
  }
}

TEST(InplaceSort, ZeroByteBlocksOrderByKeyAndMoveNoBytes) {
  std::mt19937_64 rng(test_seed(15));
  for (i64 w : work_sizes) {
    std::vector<tblock> v(100);
    for (tblock& b : v) b = {static_cast<i64>(rng() % 20), 0, 0};
    EXPECT_EQ(check_sort(v, w), 0) << "work " << w;
    for (std::size_t k = 0; k < v.size(); k += 2) v[k].bytes = 1 + static_cast<i64>(rng() % 50);
    check_sort(v, w);
  }
}

TEST(InplaceSort, LargeDataWithSmallWork) {
  // 2000 blocks, ~8 MiB, a few distinct keys and many runs.
  std::mt19937_64 rng(test_seed(16));
  std::vector<tblock> v(2000);
  for (tblock& b : v) b = {static_cast<i64>(rng() % 64), static_cast<i64>(rng() % 8192), 0};
  for (i64 w : {i64{64}, i64{4096}}) {
    SCOPED_TRACE("work " + std::to_string(w));
    check_sort(v, w);
  }
}

}  // namespace
