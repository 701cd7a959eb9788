// SPDX-License-Identifier: BSD-3-Clause
// Local block operations of the in-place alltoallv (inplace_detail.hpp): rotation of adjacent byte ranges,
// stable merge and stable sort of variable-size blocks, all in place with the caller's work buffer as the only
// scratch memory (the block lists are O(P) metadata; the bytes are never copied anywhere else).
//
// Bytes moved: every byte written into the caller's data buffer counts once per write (copies into the work
// buffer are scratch traffic and do not count). Bounds, for B bytes in n blocks:
//  - rotate_bytes: exactly left+right when min(left, right) <= work_bytes, else at most 2 (left+right);
//  - merge_blocks: at most B when either (trimmed) run fits the work buffer, else at most 2 B per level of a
//    recursion tree of depth about log_{4/3}(n) (each split removes a quarter of the blocks), i.e.
//    O(B log n); the stack depth is at most log2(n);
//  - sort_blocks: 2 B' to reverse the strictly descending runs (B' bytes in them), then ceil(log2 r) passes of
//    merges for the r ascending runs left, O(B log n log r); 0 if already sorted.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "inplace_detail.hpp"

namespace redist::exchange::inplace_detail {

namespace {

using i64 = std::int64_t;

// memcpy / memmove that accept a null pointer when there is nothing to copy.
inline void copy_bytes(std::byte* to, const std::byte* from, i64 n) {
  if (n > 0) std::memcpy(to, from, static_cast<std::size_t>(n));
}
inline void move_bytes(std::byte* to, const std::byte* from, i64 n) {
  if (n > 0 && to != from) std::memmove(to, from, static_cast<std::size_t>(n));
}

// Exchanges the non-overlapping ranges [a, a+n) and [b, b+n): through the work buffer in chunks when it is big
// enough for memcpy to pay off, otherwise eight bytes at a time through registers.
void swap_bytes(std::byte* a, std::byte* b, i64 n, std::byte* work, i64 work_bytes) {
  if (work_bytes >= 64) {
    while (n > 0) {
      const i64 c = std::min(n, work_bytes);
      copy_bytes(work, a, c);
      copy_bytes(a, b, c);
      copy_bytes(b, work, c);
      a += c;
      b += c;
      n -= c;
    }
    return;
  }
  for (; n >= 8; n -= 8, a += 8, b += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    std::memcpy(a, &y, 8);
    std::memcpy(b, &x, 8);
  }
  for (; n > 0; --n, ++a, ++b) std::swap(*a, *b);
}

i64 total_bytes(const block* b, std::size_t n) {
  i64 s = 0;
  for (std::size_t i = 0; i < n; ++i) s += b[i].bytes;
  return s;
}

bool key_less(const block& x, const block& y) { return x.key < y.key; }

struct merger {
  std::byte* work;
  i64 work_bytes;
  std::vector<block> saved;  // the block list of the run copied to the work buffer
  i64 moved = 0;

  void rotate(std::byte* p, i64 left, i64 right) { moved += rotate_bytes(p, left, right, work, work_bytes); }

  // Left run [b, b+n1) at p (bytes1 bytes) fits the work buffer: copy it out, merge front to back.
  void merge_forward(std::byte* p, block* b, std::size_t n1, std::size_t n2, i64 bytes1) {
    copy_bytes(work, p, bytes1);
    saved.assign(b, b + n1);
    std::byte* out = p;
    const std::byte* right = p + bytes1;
    i64 from = 0;  // offset in the work buffer
    std::size_t li = 0, ri = n1, o = 0;
    const std::size_t end = n1 + n2;
    while (li < n1 && ri < end) {
      if (key_less(b[ri], saved[li])) {  // ties: the left run's block first
        const i64 sz = b[ri].bytes;
        move_bytes(out, right, sz);
        moved += sz;
        out += sz;
        right += sz;
        b[o++] = b[ri++];  // o < ri: the slot is saved or already consumed
      } else {
        const i64 sz = saved[li].bytes;
        copy_bytes(out, work + from, sz);
        moved += sz;
        out += sz;
        from += sz;
        b[o++] = saved[li++];
      }
    }
    // Whatever is left of the left run goes in one piece; what is left of the right run is in place already.
    copy_bytes(out, work + from, bytes1 - from);
    moved += bytes1 - from;
    for (; li < n1; ++li) b[o++] = saved[li];
  }

  // Right run [b+n1, b+n1+n2) at p+bytes1 (bytes2 bytes) fits the work buffer: copy it out, merge back to front.
  void merge_backward(std::byte* p, block* b, std::size_t n1, std::size_t n2, i64 bytes1, i64 bytes2) {
    copy_bytes(work, p + bytes1, bytes2);
    saved.assign(b + n1, b + n1 + n2);
    std::byte* out = p + bytes1 + bytes2;
    const std::byte* left = p + bytes1;  // end of the unconsumed left run
    i64 upto = bytes2;                   // end of the unconsumed right run, in the work buffer
    std::size_t li = n1, ri = n2, o = n1 + n2;
    while (li > 0 && ri > 0) {
      if (!key_less(saved[ri - 1], b[li - 1])) {  // ties: the right run's block last
        const i64 sz = saved[ri - 1].bytes;
        out -= sz;
        upto -= sz;
        copy_bytes(out, work + upto, sz);
        moved += sz;
        b[--o] = saved[--ri];
      } else {
        const i64 sz = b[li - 1].bytes;
        out -= sz;
        left -= sz;
        move_bytes(out, left, sz);
        moved += sz;
        b[--o] = b[--li];  // o - 1 > li - 1 while ri > 0
      }
    }
    copy_bytes(p, work, upto);  // the rest of the right run, when the left one ran out
    moved += upto;
    for (; ri > 0;) b[--o] = saved[--ri];
  }

  // Stable merge of the runs [b, b+n1) and [b+n1, b+n1+n2) whose bytes start at p. Recurses on the smaller of
  // the two subproblems a split makes and loops on the other: the stack depth is at most log2(n1+n2).
  void merge(std::byte* p, block* b, std::size_t n1, std::size_t n2) {
    while (n1 > 0 && n2 > 0) {
      // Leading left blocks that are <= the right run's first block stay where they are.
      const std::size_t skip = static_cast<std::size_t>(std::upper_bound(b, b + n1, b[n1], key_less) - b);
      if (skip == n1) return;  // already in order
      p += total_bytes(b, skip);
      b += skip;
      n1 -= skip;
      // So do trailing right blocks that are >= the left run's last block (at least one right block remains:
      // the first is now < the left run's first, so < its last).
      n2 = static_cast<std::size_t>(std::lower_bound(b + n1, b + n1 + n2, b[n1 - 1], key_less) - (b + n1));
      const i64 bytes1 = total_bytes(b, n1);
      const i64 bytes2 = total_bytes(b + n1, n2);
      // One block goes past the whole other run, or the whole right run goes before the whole left one.
      if (n1 == 1 || n2 == 1 || key_less(b[n1 + n2 - 1], b[0])) {
        rotate(p, bytes1, bytes2);
        std::rotate(b, b + n1, b + n1 + n2);
        return;
      }
      if (bytes1 <= work_bytes && bytes1 <= bytes2) return merge_forward(p, b, n1, n2, bytes1);
      if (bytes2 <= work_bytes) return merge_backward(p, b, n1, n2, bytes1, bytes2);
      if (bytes1 <= work_bytes) return merge_forward(p, b, n1, n2, bytes1);
      // Split the longer run in half, find where its middle block goes in the other, rotate the two inner
      // pieces past each other: both sides of the new middle are then independent merges.
      std::size_t cut1, cut2;  // left run [0, cut1) stays in front; right run [n1, n1+cut2) moves in front
      if (n1 >= n2) {
        cut1 = n1 / 2;
        cut2 = static_cast<std::size_t>(std::lower_bound(b + n1, b + n1 + n2, b[cut1], key_less) - (b + n1));
      } else {
        cut2 = n2 / 2;
        cut1 = static_cast<std::size_t>(std::upper_bound(b, b + n1, b[n1 + cut2], key_less) - b);
      }
      const i64 head = total_bytes(b, cut1);  // bytes of the left run before the cut
      const i64 tail1 = bytes1 - head;
      const i64 moved2 = total_bytes(b + n1, cut2);
      rotate(p + head, tail1, moved2);
      std::rotate(b + cut1, b + n1, b + n1 + cut2);
      // First subproblem: [0, cut1) with [cut1, cut1+cut2); second: [cut1+cut2, n1+cut2) with [n1+cut2, n1+n2).
      const std::size_t a1 = cut1, a2 = cut2, c1 = n1 - cut1, c2 = n2 - cut2;
      std::byte* p2 = p + head + moved2;
      block* b2 = b + cut1 + cut2;
      if (a1 + a2 <= c1 + c2) {
        merge(p, b, a1, a2);
        p = p2;
        b = b2;
        n1 = c1;
        n2 = c2;
      } else {
        merge(p2, b2, c1, c2);
        n1 = a1;
        n2 = a2;
      }
    }
  }
};

}  // namespace

std::int64_t rotate_bytes(std::byte* first, std::int64_t left, std::int64_t right, std::byte* work,
                          std::int64_t work_bytes) {
  i64 moved = 0;
  // Gries and Mills: swap the shorter side with the equal-length far end of the longer one, which puts those
  // bytes in their final place, and go on rotating what remains; once the shorter side fits the work buffer,
  // finish with one memmove.
  while (left > 0 && right > 0) {
    if (left <= work_bytes && left <= right) {
      copy_bytes(work, first, left);
      move_bytes(first, first + left, right);
      copy_bytes(first + right, work, left);
      return moved + left + right;
    }
    if (right <= work_bytes) {
      copy_bytes(work, first + left, right);
      move_bytes(first + right, first, left);
      copy_bytes(first, work, right);
      return moved + left + right;
    }
    if (left <= right) {  // A B1 B2 with |B2| = |A|  ->  B2 B1 A; then rotate B2 | B1
      swap_bytes(first, first + right, left, work, work_bytes);
      moved += 2 * left;
      right -= left;
    } else {  // A1 A2 B with |A1| = |B|  ->  B A2 A1; then rotate A2 | A1
      swap_bytes(first, first + left, right, work, work_bytes);
      moved += 2 * right;
      first += right;
      left -= right;
    }
  }
  return moved;
}

std::int64_t merge_blocks(std::byte* base, std::vector<block>& blocks, std::size_t middle, std::byte* work,
                          std::int64_t work_bytes) {
  if (middle == 0 || middle >= blocks.size()) return 0;
  merger m{work, work_bytes, {}};
  m.merge(base, blocks.data(), middle, blocks.size() - middle);
  return m.moved;
}

namespace {

// Reverses the bytes of [first, first+bytes), eight at a time from both ends.
void reverse_bytes(std::byte* first, i64 bytes) {
  std::byte* last = first + bytes;
  while (last - first >= 16) {
    last -= 8;
    std::uint64_t front, back;
    std::memcpy(&front, first, 8);
    std::memcpy(&back, last, 8);
    front = __builtin_bswap64(front);
    back = __builtin_bswap64(back);
    std::memcpy(first, &back, 8);
    std::memcpy(last, &front, 8);
    first += 8;
  }
  std::reverse(first, last);
}

}  // namespace

std::int64_t sort_blocks(std::byte* base, std::vector<block>& blocks, std::byte* work, std::int64_t work_bytes) {
  const std::size_t n = blocks.size();
  if (n == 0) return 0;
  // Natural runs: bounds[k] is the first block of run k, offsets[k] its byte offset; both end with n and the
  // total. A strictly descending run (blocks landed in reflected order, as a shift schedule leaves them) is
  // reversed in place first: the whole range, then each block back, two passes instead of log2 of its length
  // in merges; strictness keeps the sort stable. Merging never changes a run's byte count, so the offsets of
  // the surviving bounds stay valid.
  std::vector<std::size_t> bounds;
  std::vector<i64> offsets;
  i64 off = 0, moved = 0;
  for (std::size_t i = 0; i < n;) {
    bounds.push_back(i);
    offsets.push_back(off);
    std::size_t j = i + 1;
    i64 bytes = blocks[i].bytes;
    if (j < n && blocks[j].key < blocks[i].key) {
      for (; j < n && blocks[j].key < blocks[j - 1].key; ++j) bytes += blocks[j].bytes;
      reverse_bytes(base + off, bytes);
      std::reverse(blocks.begin() + static_cast<std::ptrdiff_t>(i), blocks.begin() + static_cast<std::ptrdiff_t>(j));
      for (i64 at = off; i < j; ++i) {
        reverse_bytes(base + at, blocks[i].bytes);
        at += blocks[i].bytes;
      }
      moved += 2 * bytes;
    } else {
      for (; j < n && !(blocks[j].key < blocks[j - 1].key); ++j) bytes += blocks[j].bytes;
    }
    off += bytes;
    i = j;
  }
  bounds.push_back(n);
  offsets.push_back(off);
  merger m{work, work_bytes, {}};
  while (bounds.size() > 2) {  // more than one run: merge neighbours pairwise, halving the number of runs
    std::size_t kept = 0;
    for (std::size_t k = 0; k + 1 < bounds.size(); k += 2) {
      if (k + 2 < bounds.size())
        m.merge(base + offsets[k], blocks.data() + bounds[k], bounds[k + 1] - bounds[k], bounds[k + 2] - bounds[k + 1]);
      bounds[kept] = bounds[k];
      offsets[kept] = offsets[k];
      ++kept;
    }
    bounds[kept] = n;
    offsets[kept] = off;
    bounds.resize(kept + 1);
    offsets.resize(kept + 1);
  }
  return moved + m.moved;
}

}  // namespace redist::exchange::inplace_detail
