// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) The overlay geometry of a transform, one dimension at a time: the row (column) splits of A and op(B)
// merged into segments, each in one block of each side; segments grouped by the owners' grid rows (columns);
// maximal runs contiguous in local storage; and a tile cut to a triangular region.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "detail/plan_data.hpp"
#include "layout/indices.hpp"
#include "redist/transform/plan.hpp"

namespace redist::detail {

// One piece of the 1-D overlay of two split vectors: [lo, hi) lies in block a_block of A and block
// b_block of op(B), whose owners sit on process-grid rows (or columns) a_proc and b_proc.
struct segment {
  global_index lo, hi;
  block_index a_block, b_block;
  int a_proc, b_proc;
};

std::vector<segment> overlay(const std::vector<std::int64_t>& a_splits, const std::vector<int>& a_proc,
                             const std::vector<std::int64_t>& b_splits, const std::vector<int>& b_proc);

// Segments grouped by (op(B) process row/col, A process row/col), each group in increasing order.
using segment_groups = std::map<std::pair<int, int>, std::vector<const segment*>>;
segment_groups group_segments(const std::vector<segment>& segs);

// How to find the local index of a global row (or column) on one side.
struct dim_side {
  layout_dimension dimension;
  bool regular;
  // Regular storage numbers a block's elements from its local start, explicit storage from the block's first.
  local_index local(block_index block, global_index g) const {
    return (regular ? dimension.local_first(block) : local_index(0)) + (g - dimension.first(block));
  }
};

enum side_mask : int { side_a = 1, side_b = 2 };

// Maximal runs over a group of segments, contiguous in the storage of every side in `sides`
// (explicit storage never merges across blocks).
std::vector<run> make_runs(const std::vector<const segment*>& segs, const dim_side& a, const dim_side& b, int sides);

std::int64_t group_length(const std::vector<const segment*>& segs);

// The segments covering positions [first, first + count) of a group's concatenated index, clipped.
std::vector<segment> clip(const std::vector<const segment*>& segs, std::int64_t first, std::int64_t count);

std::vector<const segment*> pointers_to(const std::vector<segment>& segs);

// The region's diagonal moved into [-rows, cols]: beyond that an upper or lower region is all of the
// matrix or none of it either way, and index arithmetic cannot overflow.
element_region clamped(element_region r, std::int64_t rows, std::int64_t cols);

// Calls emit(row segments, column segments) for each rectangle of the tile rsegs x csegs inside the
// region, in an order that depends only on global knowledge (sender and receiver cut alike). The cut is a
// staircase: along the outer dimension (columns when `columns_outer`), each outer index keeps a prefix
// (upper) or suffix (lower) of the inner indices, so consecutive outer indices keeping the same inner
// range form one rectangle: the tile's part away from the diagonal stays whole, and at most one
// rectangle per outer index crosses it (the fewest rectangles that cover a staircase exactly).
template <class Emit>
void for_each_region_rectangle(const std::vector<const segment*>& rsegs, const std::vector<const segment*>& csegs,
                               const element_region& region, bool columns_outer, Emit&& emit) {
  if (region.shape == region_shape::all) {
    emit(rsegs, csegs);
    return;
  }
  const std::vector<const segment*>& inner = columns_outer ? rsegs : csegs;
  const std::vector<const segment*>& outer = columns_outer ? csegs : rsegs;
  // In (inner x, outer y) coordinates the region keeps y - x >= d (upper) or y - x <= d (lower).
  const element_region r = columns_outer ? region : region.transposed();
  const bool upper = r.shape == region_shape::upper;
  // Outer index y keeps the inner indices x <= y - d (upper: a prefix) or x >= y - d, i.e. all but those
  // x <= y - d - 1 (lower: a suffix); `shift` is d or d + 1 accordingly.
  const std::int64_t shift = upper ? r.diagonal : r.diagonal + 1;
  const std::int64_t inner_total = group_length(inner);
  struct piece {
    std::int64_t first, count;  // inner range, in the concatenated index
    std::vector<segment> outer;
  };
  std::vector<piece> pieces;
  size_t cursor = 0;        // first inner segment not entirely <= the current threshold
  std::int64_t before = 0;  // inner indices in the segments before `cursor`
  for (const segment* o : outer) {
    for (global_index y = o->lo; y < o->hi;) {
      const global_index v = y - shift;  // threshold: inner indices <= v are counted
      for (; cursor < inner.size() && inner[cursor]->hi - 1 <= v; ++cursor)
        before += inner[cursor]->hi - inner[cursor]->lo;
      std::int64_t counted = before;
      global_index y_end = o->hi;
      if (cursor < inner.size()) {
        const segment* s = inner[cursor];
        if (s->lo <= v) counted += v - s->lo + 1;
        y_end = std::min(y_end, std::max(v + 1, s->lo) + shift);  // where the next inner index is counted
      }
      const std::int64_t first = upper ? 0 : counted, count = upper ? counted : inner_total - counted;
      if (count > 0) {
        // Equal ranges are consecutive: the counts are monotone in y.
        if (pieces.empty() || pieces.back().first != first || pieces.back().count != count)
          pieces.push_back({first, count, {}});
        pieces.back().outer.push_back(segment{y, y_end, o->a_block, o->b_block, o->a_proc, o->b_proc});
      }
      y = y_end;
    }
  }
  for (const piece& p : pieces) {
    const std::vector<segment> inner_part = clip(inner, p.first, p.count);
    const std::vector<const segment*> inner_ptrs = pointers_to(inner_part), outer_ptrs = pointers_to(p.outer);
    if (columns_outer)
      emit(inner_ptrs, outer_ptrs);
    else
      emit(outer_ptrs, inner_ptrs);
  }
}

}  // namespace redist::detail
