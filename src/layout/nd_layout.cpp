// SPDX-License-Identifier: BSD-3-Clause
// N-d layouts (redist/layout/nd_layout.hpp): construction, addressing of the owners' grid, axis permutation and
// the matrix case. Validation, hashing, relabeling and local sizes: nd_layout_checks.cpp.
#include "redist/layout/nd_layout.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "grid_view.hpp"
#include "redist/error.hpp"

namespace redist {

std::vector<int> c_order(int ndim) {
  std::vector<int> o(static_cast<size_t>(std::max(ndim, 0)));
  for (int k = 0; k < ndim; ++k) o[static_cast<size_t>(k)] = ndim - 1 - k;
  return o;
}

std::vector<int> fortran_order(int ndim) {
  std::vector<int> o(static_cast<size_t>(std::max(ndim, 0)));
  std::iota(o.begin(), o.end(), 0);
  return o;
}

nd_layout::nd_layout(std::vector<std::vector<std::int64_t>> splits, std::vector<std::vector<int>> procs,
                     std::vector<int> grid_shape, std::vector<int> grid_ranks, std::vector<int> packing_order,
                     storage_kind kind, std::vector<std::vector<std::int64_t>> local_start,
                     std::vector<std::int64_t> local_strides, std::vector<nd_local_block> local_blocks, int my_rank)
    : splits_(std::move(splits)),
      procs_(std::move(procs)),
      grid_shape_(std::move(grid_shape)),
      grid_ranks_(std::move(grid_ranks)),
      packing_order_(std::move(packing_order)),
      kind_(kind),
      local_start_(std::move(local_start)),
      local_strides_(std::move(local_strides)),
      local_blocks_(std::move(local_blocks)),
      my_rank_(my_rank) {
  // Regular storage has one local start vector per axis; an absent one reads as empty.
  if (kind_ == storage_kind::regular && local_start_.size() < splits_.size()) local_start_.resize(splits_.size());
}

std::vector<std::int64_t> nd_layout::shape() const {
  std::vector<std::int64_t> s;
  for (const auto& sp : splits_) s.push_back(sp.empty() ? 0 : sp.back());
  return s;
}

std::int64_t nd_layout::elements() const {
  std::int64_t n = 1;
  for (std::int64_t e : shape()) n *= e;
  return n;
}

int nd_layout::grid_rank(const int* position) const {
  std::size_t flat = 0;
  for (size_t k = 0; k < grid_shape_.size(); ++k)
    flat = flat * static_cast<size_t>(grid_shape_[k]) + static_cast<size_t>(position[k]);
  return grid_ranks_[flat];
}

int nd_layout::owner(const std::int64_t* block) const {
  int position[max_axes];
  for (size_t k = 0; k < procs_.size(); ++k) position[k] = procs_[k][static_cast<size_t>(block[k])];
  return grid_rank(position);
}

std::vector<std::vector<int>> nd_layout::my_positions() const {
  std::vector<std::vector<int>> out;
  const size_t d = grid_shape_.size();
  std::vector<int> position(d, 0);
  for (size_t flat = 0; flat < grid_ranks_.size(); ++flat) {
    if (grid_ranks_[flat] == my_rank_) out.push_back(position);
    // Next position in C order.
    for (size_t k = d; k-- > 0;) {
      if (++position[k] < grid_shape_[k]) break;
      position[k] = 0;
    }
  }
  return out;
}

nd_layout nd_layout::permuted(const std::vector<int>& axes) const {
  const size_t d = splits_.size();
  if (axes.size() != d)
    throw invalid_argument("nd_layout::permuted: " + std::to_string(axes.size()) + " axes given for a layout of " +
                           std::to_string(d));
  std::vector<int> inverse(d, -1);
  for (size_t i = 0; i < d; ++i) {
    const int a = axes[i];
    if (a < 0 || static_cast<size_t>(a) >= d || inverse[static_cast<size_t>(a)] >= 0)
      throw invalid_argument("nd_layout::permuted: axes must be a permutation of 0.." + std::to_string(d - 1));
    inverse[static_cast<size_t>(a)] = static_cast<int>(i);
  }
  nd_layout p;
  p.kind_ = kind_;
  p.my_rank_ = my_rank_;
  for (size_t i = 0; i < d; ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    p.splits_.push_back(splits_[a]);
    p.procs_.push_back(procs_[a]);
    p.grid_shape_.push_back(grid_shape_[a]);
    if (a < local_start_.size()) p.local_start_.push_back(local_start_[a]);
    if (a < local_strides_.size()) p.local_strides_.push_back(local_strides_[a]);
  }
  for (int a : packing_order_) p.packing_order_.push_back(inverse[static_cast<size_t>(a)]);
  // The grid of positions transposed: new position q reads old position with q's entries moved back.
  p.grid_ranks_.resize(grid_ranks_.size());
  std::vector<int> q(d, 0), old(d, 0);
  for (size_t flat = 0; flat < p.grid_ranks_.size(); ++flat) {
    for (size_t i = 0; i < d; ++i) old[static_cast<size_t>(axes[i])] = q[i];
    p.grid_ranks_[flat] = grid_rank(old.data());
    for (size_t k = d; k-- > 0;) {
      if (++q[k] < p.grid_shape_[k]) break;
      q[k] = 0;
    }
  }
  for (const nd_local_block& b : local_blocks_) {
    nd_local_block nb;
    nb.offset = b.offset;
    for (size_t i = 0; i < d; ++i) {
      nb.block.push_back(b.block[static_cast<size_t>(axes[i])]);
      nb.strides.push_back(b.strides[static_cast<size_t>(axes[i])]);
    }
    p.local_blocks_.push_back(std::move(nb));
  }
  return p;
}

namespace {

// The matrix's description as a 2-D nd_layout; local storage only when asked for.
nd_layout nd_view(const grid_layout& l, bool with_local_storage) {
  const bool col_major = l.packing_order() == storage_order::col_major;
  const bool regular = l.kind() == storage_kind::regular;
  std::vector<nd_local_block> blocks;
  std::vector<std::int64_t> strides;
  std::vector<std::vector<std::int64_t>> local_start;
  if (with_local_storage) {
    for (const local_block& b : l.local_blocks()) {
      const bool c = b.order == storage_order::col_major;
      blocks.push_back({{b.block.row, b.block.col},
                        b.offset,
                        c ? std::vector<std::int64_t>{1, b.ld} : std::vector<std::int64_t>{b.ld, 1}});
    }
    if (regular) {
      strides = col_major ? std::vector<std::int64_t>{1, l.local_ld()} : std::vector<std::int64_t>{l.local_ld(), 1};
      local_start = {l.local_row_start(), l.local_col_start()};
    }
  }
  return nd_layout({l.row_splits(), l.col_splits()}, {l.row_proc(), l.col_proc()}, {l.proc_rows(), l.proc_cols()},
                   l.grid_ranks(), col_major ? fortran_order(2) : c_order(2), l.kind(), std::move(local_start),
                   std::move(strides), std::move(blocks), with_local_storage ? l.my_rank() : -1);
}

// A matrix's storage order and leading dimension from 2-D strides; {1, 1} (one row or column) reads as
// `preferred`.
std::pair<storage_order, std::int64_t> matrix_strides(const std::vector<std::int64_t>& strides,
                                                      storage_order preferred) {
  if (strides.size() == 2) {
    const bool col = strides[0] == 1, row = strides[1] == 1;
    if (col && (!row || preferred == storage_order::col_major)) return {storage_order::col_major, strides[1]};
    if (row) return {storage_order::row_major, strides[0]};
  }
  std::string text;
  for (std::int64_t s : strides) text += (text.empty() ? "" : ", ") + std::to_string(s);
  throw invalid_layout("strides {" + text + "} describe no column- or row-major matrix; expected {1, ld} or {ld, 1}");
}

}  // namespace

nd_layout to_nd_layout(const grid_layout& l) { return nd_view(l, true); }

nd_layout detail::global_nd_view(const grid_layout& l) { return nd_view(l, false); }

grid_layout detail::grid_from_nd(const nd_layout& l) {
  const storage_order packing =
      l.packing_order() == fortran_order(2) ? storage_order::col_major : storage_order::row_major;
  std::vector<local_block> blocks;
  for (const nd_local_block& b : l.local_blocks()) {
    const auto [order, ld] = matrix_strides(b.strides, packing);
    blocks.push_back({{b.block[0], b.block[1]}, b.offset, ld, order});
  }
  const bool regular = l.kind() == storage_kind::regular;
  std::int64_t ld = 1;
  if (regular && !l.local_strides().empty()) {
    const auto [order, regular_ld] = matrix_strides(l.local_strides(), packing);
    if (order != packing)
      throw invalid_layout("regular storage's strides are not in its packing order; a matrix's local array is");
    ld = regular_ld;
  }
  return grid_layout(l.splits(0), l.splits(1), l.procs(0), l.procs(1), l.grid_shape()[0], l.grid_shape()[1],
                     l.grid_ranks(), packing, l.kind(), regular ? l.local_start(0) : std::vector<std::int64_t>{},
                     regular ? l.local_start(1) : std::vector<std::int64_t>{}, ld, std::move(blocks), l.my_rank());
}

}  // namespace redist
