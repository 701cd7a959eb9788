// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The native layouts of the multiply (partition.hpp says which grid position stores what): the schedule's cuts,
// the order of each dimension, the parts of op(A), op(B) and C, and the grid_layouts the transforms move the
// operands into and out of.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "partition.hpp"
#include "redist/gemm/gemm.hpp"

namespace redist::gemm_detail {

struct range {
  std::int64_t begin = 0, size = 0;
};
// Part p of `parts` of the range r (partition.hpp's rule).
inline range sub_range(range r, std::int64_t parts, std::int64_t p) {
  return {r.begin + part_start(r.size, parts, p), part_size(r.size, parts, p)};
}

struct grid_coordinates {
  int i = 0, j = 0, l = 0;
};

// The cuts of the schedule (partition.hpp): sub-parts of m and n, rounds of k, and the pieces of each.
struct cuts {
  gemm_schedule s;
  range m_sub(int i, int sub) const { return sub_range(sub_range({0, s.m}, s.grid_m, i), s.sequential_m, sub); }
  range n_sub(int j, int sub) const { return sub_range(sub_range({0, s.n}, s.grid_n, j), s.sequential_n, sub); }
  range k_round(int l, std::int64_t r) const { return sub_range(sub_range({0, s.k}, s.grid_k, l), s.rounds, r); }
  // Position label of grid coordinates (i, j, l); labels >= ranks_used are idle.
  int label(int i, int j, int l) const { return (i * s.grid_n + j) * s.grid_k + l; }
  grid_coordinates coordinates(int label) const {
    return {label / (s.grid_n * s.grid_k), (label / s.grid_k) % s.grid_n, label % s.grid_k};
  }
};

// The order in which one dimension (m, n or k) is cut into parts. The schedule's ranges are positions in this
// order, not global indices: the order lists the blocks of an input layout grouped by the process row (column)
// that owns them, so that a native part is, as far as sizes allow, made of indices one input process already
// holds. A block-cyclic input then keeps most of its data in place (all of it when the grid matches), where
// contiguous parts would move most of it. Every matrix along the dimension uses the same order, so the
// multiply is unchanged: it never looks at global indices.
struct dimension_order {
  std::vector<range> runs;                 // global index ranges, in order
  std::vector<std::int64_t> run_position;  // position of each run's first index in the order

  // Identity order of [0, n).
  static dimension_order identity(std::int64_t n);
  // Blocks of `splits` (a layout's splits of this dimension), stably grouped by `owner_line` (the process
  // row or column of each block). With `automatic`, layouts whose blocks are on average shorter than
  // min_mean_run keep the identity order: every run becomes a block of the native layouts, and planning and
  // packing pay per block (with runs of 64 or more, a native block holds at least 4096 elements when both
  // dimensions are grouped).
  static constexpr std::int64_t min_mean_run = 64;
  static dimension_order grouped(const std::vector<std::int64_t>& splits, const std::vector<int>& owner_line,
                                 gemm_native_order choice);
  // The global runs of positions [r.begin, r.begin + r.size): (global range, offset within r).
  std::vector<std::pair<range, std::int64_t>> pieces(range r) const;
};

struct dimension_orders {
  dimension_order m, n, k;
};
// Each dimension is ordered after the larger of the two matrices along it (ties: C, then op(A)). The
// layouts must have been validated.
dimension_orders choose_orders(const gemm_description& d, std::int64_t m, std::int64_t n, std::int64_t k,
                               gemm_native_order choice);

// The parts of one native layout: (range in the dimension's order, process-grid row or column) along each
// dimension, and the grid label at each process-grid position (row-major).
struct layout_parts {
  std::vector<std::pair<range, int>> rows, cols;
  int proc_rows = 1, proc_cols = 1;
  std::vector<int> labels;
};
struct native_parts {
  layout_parts a, b, c;
};
native_parts native_parts_of(const cuts& cut);

// This rank's parts of a native layout as (row part, column part) indices, in the order they follow one another
// in its storage: the order in which the round loop reads them.
using part_order = std::vector<std::pair<std::size_t, std::size_t>>;
struct part_orders {
  part_order a, b, c;
};
part_orders part_orders_at(const cuts& cut, grid_coordinates at);
// Where each part of `order` starts in this rank's native storage (in elements).
std::vector<std::int64_t> part_offsets(const layout_parts& parts, const part_order& order);

struct native_layouts {
  grid_layout a, b, c;
};
// The native layouts with label x played by rank_of_label[x]. `my_rank` -1 and empty `mine` give layouts
// for counting volumes only (nothing stored on this rank).
native_layouts make_native_layouts(const native_parts& parts, const dimension_orders& orders,
                                   const std::vector<int>& rank_of_label, int my_rank, const part_orders& mine);

// C written in place. Per part of one dimension of the native C (layout_parts::rows or cols), the part's
// positions [begin, begin + size) (offsets within the part) that the user's C holds on this rank at consecutive
// local rows (columns), from local row (column) `local` on: the longest such run. The multiply writes the
// product of a row part's span and a column part's span straight into the user's C; the rest of the part goes
// through the native storage and the transform out.
struct held_span {
  std::int64_t begin = 0, size = 0, local = 0;
};
// This rank's spans along one dimension (`rows`: C's rows), for the parts `mine` lists (others: empty). Only a
// regular column-major user layout (ScaLAPACK's local arrays) that places this rank once on its process grid
// is recognised; otherwise every span is empty.
std::vector<held_span> held_spans(const std::vector<std::pair<range, int>>& parts, const dimension_order& order,
                                  const grid_layout& user, bool rows, const std::vector<std::size_t>& mine);
// The global indices of the parts' spans, as sorted runs, and the runs of [0, extent) outside them.
struct span_runs {
  std::vector<range> inside, outside;
};
span_runs runs_of_spans(const std::vector<std::pair<range, int>>& parts, const dimension_order& order,
                        const std::vector<held_span>& spans, std::int64_t extent);
// `x` cut down to the rows `rows` and the columns `cols` (sorted global runs), renumbered from 0 in that order:
// the same owners and, on this rank, the same storage (explicit blocks).
grid_layout restricted(const grid_layout& x, const std::vector<range>& rows, const std::vector<range>& cols);

}  // namespace redist::gemm_detail
