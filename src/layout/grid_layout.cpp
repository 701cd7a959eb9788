// SPDX-License-Identifier: BSD-3-Clause
#include "redist/layout/grid_layout.hpp"

#include <algorithm>
#include <sstream>

#include "grid_view.hpp"
#include "indices.hpp"
#include "redist/error.hpp"

namespace redist {

using detail::block_index;

grid_layout::grid_layout(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits,
                         std::vector<int> row_proc, std::vector<int> col_proc, int proc_rows, int proc_cols,
                         std::vector<int> grid_ranks, storage_order packing_order, storage_kind kind,
                         std::vector<std::int64_t> local_row_start, std::vector<std::int64_t> local_col_start,
                         std::int64_t local_ld, std::vector<local_block> local_blocks, int my_rank)
    : row_splits_(std::move(row_splits)),
      col_splits_(std::move(col_splits)),
      row_proc_(std::move(row_proc)),
      col_proc_(std::move(col_proc)),
      proc_rows_(proc_rows),
      proc_cols_(proc_cols),
      grid_ranks_(std::move(grid_ranks)),
      packing_order_(packing_order),
      kind_(kind),
      local_row_start_(std::move(local_row_start)),
      local_col_start_(std::move(local_col_start)),
      local_ld_(local_ld),
      local_blocks_(std::move(local_blocks)),
      my_rank_(my_rank) {
  // Shape errors that would make the accessors unsafe are reported here; everything else in validate_*.
  if (row_splits_.empty() || col_splits_.empty())
    throw invalid_layout("row and column splits need at least one entry (0); got " +
                         std::to_string(row_splits_.size()) + " row and " + std::to_string(col_splits_.size()) +
                         " column splits");
  if (row_proc_.size() + 1 != row_splits_.size())
    throw invalid_layout("row_proc has " + std::to_string(row_proc_.size()) + " entries, expected one per block row (" +
                         std::to_string(row_splits_.size() - 1) + ")");
  if (col_proc_.size() + 1 != col_splits_.size())
    throw invalid_layout("col_proc has " + std::to_string(col_proc_.size()) +
                         " entries, expected one per block column (" + std::to_string(col_splits_.size() - 1) + ")");
  if (proc_rows_ < 0 || proc_cols_ < 0 ||
      grid_ranks_.size() != static_cast<size_t>(proc_rows_) * static_cast<size_t>(proc_cols_))
    throw invalid_layout("process grid " + std::to_string(proc_rows_) + "x" + std::to_string(proc_cols_) + " needs " +
                         std::to_string(static_cast<long long>(proc_rows_) * proc_cols_) + " ranks, got " +
                         std::to_string(grid_ranks_.size()));
  for (int p : row_proc_)
    if (p < 0 || p >= proc_rows_)
      throw invalid_layout("row_proc entry " + std::to_string(p) + " outside the process grid's " +
                           std::to_string(proc_rows_) + " rows");
  for (int p : col_proc_)
    if (p < 0 || p >= proc_cols_)
      throw invalid_layout("col_proc entry " + std::to_string(p) + " outside the process grid's " +
                           std::to_string(proc_cols_) + " columns");
  if (kind_ == storage_kind::regular && my_rank_ >= 0) {
    if (local_row_start_.size() != row_proc_.size() || local_col_start_.size() != col_proc_.size())
      throw invalid_layout("regular storage needs a local start for every block row and column");
  }
}

int grid_layout::ranks_needed() const {
  int m = 0;
  for (int r : grid_ranks_) m = std::max(m, r + 1);
  return m;
}

std::vector<grid_position> grid_layout::my_positions() const {
  std::vector<grid_position> out;
  if (my_rank_ < 0) return out;
  for (int pr = 0; pr < proc_rows_; ++pr)
    for (int pc = 0; pc < proc_cols_; ++pc)
      if (grid_rank({pr, pc}) == my_rank_) out.push_back({pr, pc});
  return out;
}

std::int64_t grid_layout::local_elements() const {
  const detail::layout_dimension rows(row_splits_, row_proc_, local_row_start_),
      cols(col_splits_, col_proc_, local_col_start_);
  std::int64_t need = 0;
  if (kind_ == storage_kind::explicit_blocks) {
    for (const auto& b : local_blocks_) {
      const std::int64_t h = rows.extent(block_index(b.block.row)), w = cols.extent(block_index(b.block.col));
      if (h == 0 || w == 0) continue;
      const std::int64_t end =
          b.order == storage_order::col_major ? b.offset + (w - 1) * b.ld + h : b.offset + (h - 1) * b.ld + w;
      need = std::max(need, end);
    }
    return need;
  }
  std::int64_t rows_end = 0, cols_end = 0;
  for (const auto& pos : my_positions()) {
    rows_end = std::max(rows_end, rows.local_extent_of(pos.row));
    cols_end = std::max(cols_end, cols.local_extent_of(pos.col));
  }
  if (rows_end == 0 || cols_end == 0) return 0;
  return packing_order_ == storage_order::col_major ? (cols_end - 1) * local_ld_ + rows_end
                                                    : (rows_end - 1) * local_ld_ + cols_end;
}

// Transposing and relabeling are nd_layout's (the 2-D case): one implementation for matrices and arrays.
grid_layout grid_layout::transposed() const { return detail::grid_from_nd(to_nd_layout(*this).permuted({1, 0})); }

grid_layout grid_layout::relabeled(const std::vector<int>& new_rank_of) const {
  return detail::grid_from_nd(to_nd_layout(*this).relabeled(new_rank_of));
}

// Validation is nd_layout's; the matrix view adds the two rules of its regular (ScaLAPACK-style) storage
// (grid_view.hpp).
void grid_layout::validate_global(int comm_size) const {
  detail::global_nd_view(*this).validate_global(comm_size);
  detail::check_regular_matrix_global(*this);
}

void grid_layout::validate_local() const {
  detail::check_regular_matrix_local(*this);
  if (my_rank_ >= 0) to_nd_layout(*this).validate_local();
}

void detail::check_regular_matrix_global(const grid_layout& l) {
  if (l.kind() != storage_kind::regular) return;
  std::vector<int> ranks = l.grid_ranks();
  std::sort(ranks.begin(), ranks.end());
  const auto twice = std::adjacent_find(ranks.begin(), ranks.end());
  if (twice != ranks.end())
    throw invalid_layout("rank " + std::to_string(*twice) +
                         " holds two positions of a block-cyclic/blocked process grid "
                         "(each rank may appear once; use a custom layout otherwise)");
}

void detail::check_regular_matrix_local(const grid_layout& l) {
  const auto positions = l.my_positions();
  if (l.kind() != storage_kind::regular || positions.empty()) return;
  const bool col_major = l.packing_order() == storage_order::col_major;
  const detail::layout_dimension rows(l.row_splits(), l.row_proc(), l.local_row_start()),
      cols(l.col_splits(), l.col_proc(), l.local_col_start());
  const std::int64_t rows_end = rows.local_extent_of(positions.front().row);
  const std::int64_t cols_end = cols.local_extent_of(positions.front().col);
  const std::int64_t need = col_major ? rows_end : cols_end;
  if (rows_end > 0 && cols_end > 0 && l.local_ld() < std::max<std::int64_t>(need, 1))
    throw invalid_layout("local leading dimension " + std::to_string(l.local_ld()) + " on rank " +
                         std::to_string(l.my_rank()) + " is smaller than the " + std::to_string(need) + " local " +
                         (col_major ? "rows" : "columns") + " it must hold");
}

std::uint64_t grid_layout::global_hash() const { return detail::global_nd_view(*this).global_hash(); }

std::string grid_layout::describe() const {
  std::ostringstream s;
  s << rows() << "x" << cols() << " matrix in " << block_rows() << "x" << block_cols() << " blocks owned through a "
    << proc_rows_ << "x" << proc_cols_ << " process grid";
  return s.str();
}

bool operator==(const grid_layout& a, const grid_layout& b) {
  return a.row_splits_ == b.row_splits_ && a.col_splits_ == b.col_splits_ && a.row_proc_ == b.row_proc_ &&
         a.col_proc_ == b.col_proc_ && a.proc_rows_ == b.proc_rows_ && a.proc_cols_ == b.proc_cols_ &&
         a.grid_ranks_ == b.grid_ranks_ && a.packing_order_ == b.packing_order_;
}

}  // namespace redist
