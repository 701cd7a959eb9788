// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Builders of N-dimensional layouts: block-cyclic on a d-dimensional process grid, boxes (the form FFT libraries
// use: each rank owns zero or more boxes [lo, hi) of the global index space), and the 3-D FFT decompositions
// (bricks, pencils, slabs) as boxes. Every builder checks its arguments and throws invalid_argument or
// invalid_layout with what was wrong and what was expected (overflow_error for sizes beyond 64 bits); given the same
// global arguments, every rank throws the same error, except an overflow of one rank's own local storage.
#include <cstdint>
#include <vector>

#include "redist/layout/nd_layout.hpp"

namespace redist {

/// A box of the global index space: lo inclusive, hi exclusive, one entry per axis. Empty when lo[k] == hi[k] for
/// some axis.
struct box {
  std::vector<std::int64_t> lo, hi;
  /// The number of elements (1 for a box of no axes). empty() throws the same.
  /// @throws invalid_argument lo and hi of different sizes, or hi < lo on an axis
  /// @throws overflow_error the product does not fit in 64 bits
  std::int64_t elements() const;
  /// No element (elements() == 0).
  /// @throws invalid_argument as elements()
  /// @throws overflow_error as elements()
  bool empty() const { return elements() == 0; }
  friend bool operator==(const box& a, const box& b) { return a.lo == b.lo && a.hi == b.hi; }
};

/// Block-cyclic on a d-dimensional process grid: axis k is cut into blocks of block[k] (the last one shorter) dealt
/// cyclically to the grid's positions along k. grid_ranks: the rank at each grid position, C order (empty: rank =
/// the position's C-order index, so the last grid axis varies fastest). Local storage: one array per rank, dense
/// in `order` (axes fastest first; empty = C order).
/// @throws invalid_argument shape without 1 to max_axes entries; block or grid without one entry per axis; order not
///   a permutation of the axes; a negative extent, a block or grid entry below 1; a grid of more than 2^31 - 1
///   positions without grid_ranks; grid_ranks without one entry per position, with a negative rank or with a rank
///   at two positions
/// @throws overflow_error the number of grid positions, or this rank's local array, does not fit in 64 bits (the
///   latter only on the ranks whose array is that large)
nd_layout block_cyclic_nd(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& block,
                          const std::vector<int>& grid, int my_rank, const std::vector<int>& order = {},
                          const std::vector<int>& grid_ranks = {});

/// Boxes: boxes_of_rank[r] lists the boxes rank r owns (possibly none). Together the non-empty boxes must cover
/// [0, shape) exactly, shape[k] being the largest hi[k]: no overlap, no gap, lo >= 0. Local storage: this rank's
/// boxes one after another in the listed order, each dense in `order` (axes fastest first; empty = C order).
/// packing_order: how blocks travel in messages (empty = `order`). It is part of the global description, so ranks
/// that store their boxes in different orders pass their own `order` and one common packing_order (the order most
/// ranks store in keeps most copies contiguous).
/// @throws invalid_argument no box at all; boxes that disagree in their number of axes (or a box whose lo and hi
///   differ in size); a bound with lo < 0 or hi < lo; not 1 to max_axes axes; order or packing_order not a
///   permutation of the axes
/// @throws invalid_layout non-empty boxes that overlap, or a point of [0, shape) in no box
/// @throws overflow_error a box's size, the number of cells or this rank's local storage does not fit in 64 bits
nd_layout box_layout(const std::vector<std::vector<box>>& boxes_of_rank, int my_rank,
                     const std::vector<int>& order = {}, const std::vector<int>& packing_order = {});
/// One box per rank (boxes[r] is rank r's).
/// @throws invalid_argument as above
/// @throws invalid_layout as above
/// @throws overflow_error as above
nd_layout box_layout(const std::vector<box>& boxes, int my_rank, const std::vector<int>& order = {},
                     const std::vector<int>& packing_order = {});

/// 3-D FFT decompositions, as one box per rank (index = rank). An extent n cut into p parts gives the first n % p
/// parts one more element. Ranks are numbered in C order over the process grid (its last dimension fastest).
/// Bricks: all three axes cut, over a grid[0] x grid[1] x grid[2] process grid.
/// @throws invalid_argument shape or grid without 3 entries, a negative extent, a grid entry below 1, or more than
///   2^31 - 1 boxes
/// @throws overflow_error the number of boxes does not fit in 64 bits
std::vector<box> brick_boxes(const std::vector<std::int64_t>& shape, const std::vector<int>& grid);
/// Pencils along `axis` (that axis whole on every rank): the other two axes, in increasing axis order, cut over a
/// grid[0] x grid[1] process grid.
/// @throws invalid_argument shape without 3 or grid without 2 entries, axis outside 0..2, a negative extent, a grid
///   entry below 1, or more than 2^31 - 1 boxes
std::vector<box> pencil_boxes(const std::vector<std::int64_t>& shape, int axis, const std::vector<int>& grid);
/// Slabs: `split_axis` cut into nranks parts, the other axes whole.
/// @throws invalid_argument shape without 1 to max_axes entries, split_axis outside [0, shape.size()), a negative
///   extent, or nranks < 1
std::vector<box> slab_boxes(const std::vector<std::int64_t>& shape, int split_axis, int nranks);

}  // namespace redist
