// SPDX-License-Identifier: BSD-3-Clause
// The overlay geometry of a transform (overlay.hpp).
#include "overlay.hpp"

#include <algorithm>

namespace redist::detail {

std::vector<segment> overlay(const std::vector<std::int64_t>& a_splits, const std::vector<int>& a_proc,
                             const std::vector<std::int64_t>& b_splits, const std::vector<int>& b_proc) {
  std::vector<segment> out;
  out.reserve(a_splits.size() + b_splits.size());
  const std::int64_t n = a_splits.back();
  size_t i = 0, j = 0;
  std::int64_t lo = 0;
  while (lo < n) {
    const std::int64_t hi = std::min(a_splits[i + 1], b_splits[j + 1]);
    out.push_back({global_index(lo), global_index(hi), block_index(static_cast<std::int64_t>(i)),
                   block_index(static_cast<std::int64_t>(j)), a_proc[i], b_proc[j]});
    lo = hi;
    if (a_splits[i + 1] == hi) ++i;
    if (b_splits[j + 1] == hi) ++j;
  }
  return out;
}

segment_groups group_segments(const std::vector<segment>& segs) {
  segment_groups g;
  for (const auto& s : segs) g[{s.b_proc, s.a_proc}].push_back(&s);
  return g;
}

// Maximal runs over a group of segments, contiguous in the storage of every side in `sides`
// (explicit storage never merges across blocks).
std::vector<run> make_runs(const std::vector<const segment*>& segs, const dim_side& a, const dim_side& b, int sides) {
  std::vector<run> runs;
  std::int64_t packed = 0;
  for (const segment* s : segs) {
    run r;
    r.a_local = (sides & side_a) ? a.local(s->a_block, s->lo) : local_index();
    r.b_local = (sides & side_b) ? b.local(s->b_block, s->lo) : local_index();
    r.packed = packed;
    r.length = s->hi - s->lo;
    r.a_block = s->a_block;
    r.b_block = s->b_block;
    packed += r.length;
    if (!runs.empty()) {
      run& p = runs.back();
      bool joins = true;
      if (sides & side_a) joins = joins && p.a_local + p.length == r.a_local && (a.regular || p.a_block == r.a_block);
      if (sides & side_b) joins = joins && p.b_local + p.length == r.b_local && (b.regular || p.b_block == r.b_block);
      if (joins) {
        p.length += r.length;
        continue;
      }
    }
    runs.push_back(r);
  }
  return runs;
}

std::int64_t group_length(const std::vector<const segment*>& segs) {
  std::int64_t n = 0;
  for (const segment* s : segs) n += s->hi - s->lo;
  return n;
}

// The segments covering positions [first, first + count) of a group's concatenated index, clipped.
std::vector<segment> clip(const std::vector<const segment*>& segs, std::int64_t first, std::int64_t count) {
  std::vector<segment> out;
  std::int64_t at = 0;  // concatenated index of the current segment's first element
  for (const segment* s : segs) {
    const std::int64_t lo = std::max(first, at), hi = std::min(first + count, at + (s->hi - s->lo));
    if (lo < hi) {
      segment c = *s;
      c.lo = s->lo + (lo - at);
      c.hi = s->lo + (hi - at);
      out.push_back(c);
    }
    at += s->hi - s->lo;
  }
  return out;
}

std::vector<const segment*> pointers_to(const std::vector<segment>& segs) {
  std::vector<const segment*> out;
  out.reserve(segs.size());
  for (const segment& s : segs) out.push_back(&s);
  return out;
}

// The region's diagonal moved into [-rows, cols]: beyond that an upper or lower region is all of the
// matrix or none of it either way, and index arithmetic cannot overflow.
element_region clamped(element_region r, std::int64_t rows, std::int64_t cols) {
  r.diagonal = std::clamp(r.diagonal, -rows, cols);
  return r;
}

}  // namespace redist::detail
