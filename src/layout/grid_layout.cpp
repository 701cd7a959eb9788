// SPDX-License-Identifier: BSD-3-Clause
#include "redist/layout/grid_layout.hpp"

#include <algorithm>
#include <sstream>

#include "field_hash.hpp"
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

grid_layout grid_layout::transposed() const {
  std::vector<int> t_ranks(grid_ranks_.size());
  for (int pr = 0; pr < proc_rows_; ++pr)
    for (int pc = 0; pc < proc_cols_; ++pc)
      t_ranks[static_cast<size_t>(pc) * proc_rows_ + pr] = grid_ranks_[static_cast<size_t>(pr) * proc_cols_ + pc];
  auto flip = [](storage_order o) {
    return o == storage_order::col_major ? storage_order::row_major : storage_order::col_major;
  };
  std::vector<local_block> t_blocks = local_blocks_;
  for (auto& b : t_blocks) {
    std::swap(b.block.row, b.block.col);
    b.order = flip(b.order);
  }
  return grid_layout(col_splits_, row_splits_, col_proc_, row_proc_, proc_cols_, proc_rows_, std::move(t_ranks),
                     flip(packing_order_), kind_, local_col_start_, local_row_start_, local_ld_, std::move(t_blocks),
                     my_rank_);
}

grid_layout grid_layout::relabeled(const std::vector<int>& new_rank_of) const {
  std::vector<int> ranks = grid_ranks_;
  for (int& r : ranks) {
    if (r < 0 || static_cast<size_t>(r) >= new_rank_of.size())
      throw invalid_argument("relabeling has " + std::to_string(new_rank_of.size()) +
                             " entries but the layout uses rank " + std::to_string(r));
    r = new_rank_of[static_cast<size_t>(r)];
  }
  grid_layout out(row_splits_, col_splits_, row_proc_, col_proc_, proc_rows_, proc_cols_, std::move(ranks),
                  packing_order_, kind_, local_row_start_, local_col_start_, 1, {}, my_rank_);
  if (my_rank_ < 0) return out;
  const auto positions = out.my_positions();
  const detail::layout_dimension rows(row_splits_, row_proc_, local_row_start_),
      cols(col_splits_, col_proc_, local_col_start_);
  if (kind_ == storage_kind::regular) {
    std::int64_t ld = 1;
    for (const auto& pos : positions)
      ld = std::max(ld, packing_order_ == storage_order::col_major ? rows.local_extent_of(pos.row)
                                                                   : cols.local_extent_of(pos.col));
    out.local_ld_ = ld;
    return out;
  }
  std::int64_t offset = 0;
  for (const auto& pos : positions)
    for (size_t i = 0; i < row_proc_.size(); ++i) {
      if (row_proc_[i] != pos.row) continue;
      for (size_t j = 0; j < col_proc_.size(); ++j) {
        if (col_proc_[j] != pos.col) continue;
        const std::int64_t h = rows.extent(block_index(static_cast<std::int64_t>(i)));
        const std::int64_t w = cols.extent(block_index(static_cast<std::int64_t>(j)));
        local_block b;
        b.block = {static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
        b.offset = offset;
        b.order = packing_order_;
        b.ld = std::max<std::int64_t>(1, packing_order_ == storage_order::col_major ? h : w);
        out.local_blocks_.push_back(b);
        offset += h * w;
      }
    }
  return out;
}

namespace {
std::string splits_error(const std::vector<std::int64_t>& s, const char* what) {
  if (s.front() != 0) return std::string(what) + " splits must start at 0, got " + std::to_string(s.front());
  for (size_t i = 1; i < s.size(); ++i)
    if (s[i] <= s[i - 1])
      return std::string(what) + " splits must be strictly increasing: entry " + std::to_string(i) + " is " +
             std::to_string(s[i]) + " after " + std::to_string(s[i - 1]);
  return {};
}
}  // namespace

void grid_layout::validate_global(int comm_size) const {
  if (auto e = splits_error(row_splits_, "row"); !e.empty()) throw invalid_layout(e);
  if (auto e = splits_error(col_splits_, "column"); !e.empty()) throw invalid_layout(e);
  for (size_t k = 0; k < grid_ranks_.size(); ++k) {
    const int r = grid_ranks_[k];
    if (r < 0 || r >= comm_size)
      throw invalid_layout("owner rank " + std::to_string(r) + " at process-grid position (" +
                           std::to_string(k / std::max(proc_cols_, 1)) + "," +
                           std::to_string(k % std::max(proc_cols_, 1)) + ") is outside the communicator of " +
                           std::to_string(comm_size) + " ranks");
  }
  if (kind_ == storage_kind::regular) {
    std::vector<int> seen(static_cast<size_t>(comm_size), -1);
    for (size_t k = 0; k < grid_ranks_.size(); ++k) {
      const int r = grid_ranks_[k];
      if (seen[static_cast<size_t>(r)] >= 0)
        throw invalid_layout("rank " + std::to_string(r) +
                             " holds two positions of a block-cyclic/blocked process grid "
                             "(each rank may appear once; use a custom layout otherwise)");
      seen[static_cast<size_t>(r)] = static_cast<int>(k);
    }
  }
}

void grid_layout::validate_local() const {
  if (my_rank_ < 0) return;
  const auto positions = my_positions();
  const detail::layout_dimension rows(row_splits_, row_proc_, local_row_start_),
      cols(col_splits_, col_proc_, local_col_start_);
  auto height = [&](std::int64_t i) { return rows.extent(block_index(i)); };
  auto width = [&](std::int64_t j) { return cols.extent(block_index(j)); };
  if (kind_ == storage_kind::regular) {
    if (positions.empty()) return;
    const auto& pos = positions.front();
    std::int64_t rows_end = 0, cols_end = 0;
    for (size_t i = 0; i < row_proc_.size(); ++i)
      if (row_proc_[i] == pos.row) {
        if (local_row_start_[i] < 0)
          throw invalid_layout("local row start of block row " + std::to_string(i) + " is negative");
        rows_end = std::max(rows_end, rows.local_end(block_index(static_cast<std::int64_t>(i))).value());
      }
    for (size_t j = 0; j < col_proc_.size(); ++j)
      if (col_proc_[j] == pos.col) {
        if (local_col_start_[j] < 0)
          throw invalid_layout("local column start of block column " + std::to_string(j) + " is negative");
        cols_end = std::max(cols_end, cols.local_end(block_index(static_cast<std::int64_t>(j))).value());
      }
    const std::int64_t need = packing_order_ == storage_order::col_major ? rows_end : cols_end;
    if (rows_end > 0 && cols_end > 0 && local_ld_ < std::max<std::int64_t>(need, 1))
      throw invalid_layout("local leading dimension " + std::to_string(local_ld_) + " on rank " +
                           std::to_string(my_rank_) + " is smaller than the " + std::to_string(need) + " local " +
                           (packing_order_ == storage_order::col_major ? "rows" : "columns") + " it must hold");
    return;
  }
  // Explicit blocks: exactly the blocks this rank owns, each once, each with room for its extent.
  std::vector<std::pair<std::int64_t, std::int64_t>> listed;
  listed.reserve(local_blocks_.size());
  for (const auto& b : local_blocks_) {
    const std::string where = "local block (" + std::to_string(b.block.row) + "," + std::to_string(b.block.col) + ")";
    if (b.block.row < 0 || b.block.row >= block_rows() || b.block.col < 0 || b.block.col >= block_cols())
      throw invalid_layout(where + " is outside the " + std::to_string(block_rows()) + "x" +
                           std::to_string(block_cols()) + " block grid");
    if (owner(b.block) != my_rank_)
      throw invalid_layout(where + " is listed on rank " + std::to_string(my_rank_) + " but owned by rank " +
                           std::to_string(owner(b.block)));
    if (b.offset < 0) throw invalid_layout(where + " has negative offset " + std::to_string(b.offset));
    const std::int64_t need = b.order == storage_order::col_major ? height(b.block.row) : width(b.block.col);
    if (b.ld < std::max<std::int64_t>(need, 1))
      throw invalid_layout(where + " has leading dimension " + std::to_string(b.ld) + ", smaller than its " +
                           std::to_string(need) + (b.order == storage_order::col_major ? " rows" : " columns"));
    listed.emplace_back(b.block.row, b.block.col);
  }
  std::sort(listed.begin(), listed.end());
  for (size_t k = 1; k < listed.size(); ++k)
    if (listed[k] == listed[k - 1])
      throw invalid_layout("local block (" + std::to_string(listed[k].first) + "," + std::to_string(listed[k].second) +
                           ") is listed twice on rank " + std::to_string(my_rank_));
  for (const auto& pos : positions)
    for (size_t i = 0; i < row_proc_.size(); ++i) {
      if (row_proc_[i] != pos.row) continue;
      for (size_t j = 0; j < col_proc_.size(); ++j) {
        if (col_proc_[j] != pos.col) continue;
        if (!std::binary_search(listed.begin(), listed.end(),
                                std::make_pair(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j))))
          throw invalid_layout("rank " + std::to_string(my_rank_) + " owns block (" + std::to_string(i) + "," +
                               std::to_string(j) + ") but does not list it among its local blocks");
      }
    }
}

std::uint64_t grid_layout::global_hash() const {
  return field_hash()
      .add_all(row_splits_, col_splits_, row_proc_, col_proc_, proc_rows_, proc_cols_, grid_ranks_, packing_order_)
      .value();
}

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
