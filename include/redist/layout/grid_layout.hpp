// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Grid layouts: any rectangular grid of blocks, any owner map, and on each rank the storage
// of its own blocks.
//
// Global part (identical on all ranks, checked collectively by the planner):
//   row splits 0 = r0 < r1 < ... < rM = m, column splits likewise, and an owner for every block.
//   Owners are kept in product form owner(i, j) = grid_rank(row_proc(i), col_proc(j)) over a small
//   "process grid" of positions. Block-cyclic layouts have one position per process; a fully custom
//   owner map uses one position per block. The product form keeps layouts with millions of blocks
//   small (O(block rows + block cols + positions)) and lets planning work on rows and columns
//   separately.
// Local part (this rank only): where each of its blocks is stored, relative to a base pointer that is
//   passed when a plan is executed.
#include <cstdint>
#include <string>
#include <vector>

namespace redist {

/// Storage order of a 2-D block in memory.
enum class storage_order : std::uint8_t { col_major = 0, row_major = 1 };
/// Numbering of ranks on a process grid (BLACS "R" or "C"); numbered as storage_order (builders default to
/// row_major, BLACS's default).
enum class grid_order : std::uint8_t { col_major = 0, row_major = 1 };

/// Coordinates of a block in the block grid (block units).
struct block_coord {
  std::int64_t row = 0;
  std::int64_t col = 0;
  friend bool operator==(block_coord a, block_coord b) { return a.row == b.row && a.col == b.col; }
  friend bool operator!=(block_coord a, block_coord b) { return !(a == b); }
};

/// Coordinates of a matrix element (element units, 0-based, global).
struct element_coord {
  std::int64_t row = 0;
  std::int64_t col = 0;
};

/// A position on the owners' process grid (pr, pc); not a rank.
struct grid_position {
  int row = 0;
  int col = 0;
};

/// One block of this rank: where it starts (in elements from the base pointer), its leading
/// dimension and storage order.
struct local_block {
  block_coord block;
  std::int64_t offset = 0;
  std::int64_t ld = 0;
  storage_order order = storage_order::col_major;
};

/// How this rank stores its blocks.
///  - regular: all blocks of a grid position live in one local 2-D array (block-cyclic, blocked):
///    local row of global row g in block row i is local_row_start[i] + (g - r_i), likewise columns;
///    the array has leading dimension ld and order `order`.
///  - explicit_blocks: an arbitrary list of blocks, each with its own offset/ld/order.
enum class storage_kind : std::uint8_t { regular = 0, explicit_blocks = 1 };

class grid_layout {
 public:
  grid_layout() = default;

  /// General constructor (product form). `grid_ranks` is proc_rows x proc_cols, row-major.
  /// `local_row_start`/`local_col_start` are given only for regular storage (one entry per block
  /// row/column); `local_blocks` only for explicit storage. Only the shape errors that would make the accessors
  /// unsafe are checked here; everything else by validate_global / validate_local.
  /// @throws invalid_layout empty row or column splits, row_proc / col_proc without one entry per block row /
  ///   column, a negative process grid dimension or grid_ranks without proc_rows * proc_cols entries, a row_proc /
  ///   col_proc entry outside the process grid, or (regular storage, my_rank >= 0) local_row_start /
  ///   local_col_start without one entry per block row / column
  grid_layout(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, std::vector<int> row_proc,
              std::vector<int> col_proc, int proc_rows, int proc_cols, std::vector<int> grid_ranks,
              storage_order packing_order, storage_kind kind, std::vector<std::int64_t> local_row_start,
              std::vector<std::int64_t> local_col_start, std::int64_t local_ld, std::vector<local_block> local_blocks,
              int my_rank);

  /// ---- global description ----
  std::int64_t rows() const noexcept { return row_splits_.empty() ? 0 : row_splits_.back(); }
  std::int64_t cols() const noexcept { return col_splits_.empty() ? 0 : col_splits_.back(); }
  std::int64_t block_rows() const noexcept { return static_cast<std::int64_t>(row_splits_.size()) - 1; }
  std::int64_t block_cols() const noexcept { return static_cast<std::int64_t>(col_splits_.size()) - 1; }
  const std::vector<std::int64_t>& row_splits() const noexcept { return row_splits_; }
  const std::vector<std::int64_t>& col_splits() const noexcept { return col_splits_; }
  const std::vector<int>& row_proc() const noexcept { return row_proc_; }
  const std::vector<int>& col_proc() const noexcept { return col_proc_; }
  int proc_rows() const noexcept { return proc_rows_; }
  int proc_cols() const noexcept { return proc_cols_; }
  /// The rank at grid position p. Throws nothing.
  /// @pre p inside the proc_rows() x proc_cols() grid (not checked)
  int grid_rank(grid_position p) const { return grid_ranks_[static_cast<size_t>(p.row) * proc_cols_ + p.col]; }
  const std::vector<int>& grid_ranks() const noexcept { return grid_ranks_; }
  /// The owner of block b. Throws nothing.
  /// @pre b inside the block_rows() x block_cols() block grid (not checked)
  int owner(block_coord b) const {
    return grid_rank({row_proc_[static_cast<size_t>(b.row)], col_proc_[static_cast<size_t>(b.col)]});
  }
  /// Order in which blocks of this layout are packed into messages (the layout's declared order).
  storage_order packing_order() const noexcept { return packing_order_; }
  /// Largest rank that owns a block, + 1 (the number of ranks the layout needs). Throws nothing.
  int ranks_needed() const;

  /// ---- local storage (this rank) ----
  int my_rank() const noexcept { return my_rank_; }
  storage_kind kind() const noexcept { return kind_; }
  const std::vector<std::int64_t>& local_row_start() const noexcept { return local_row_start_; }
  const std::vector<std::int64_t>& local_col_start() const noexcept { return local_col_start_; }
  std::int64_t local_ld() const noexcept { return local_ld_; }
  const std::vector<local_block>& local_blocks() const noexcept { return local_blocks_; }
  /// Elements the local buffer must hold (max offset + extent over this rank's blocks). Throws nothing.
  /// @pre explicit storage: every local block inside the block grid (validate_local checks it; not checked here)
  std::int64_t local_elements() const;
  /// Grid positions held by this rank (none when my_rank() < 0). Throws nothing.
  std::vector<grid_position> my_positions() const;

  /// ---- derived layouts ----
  /// The layout of the transposed matrix (same memory, rows and columns swapped): nd_layout::permuted({1, 0}).
  /// @pre explicit storage: every local block inside the block grid (validate_local checks it; not checked here)
  /// @throws invalid_layout (only if the precondition is broken)
  grid_layout transposed() const;
  /// Owners relabeled: rank r becomes new_rank_of[r]. Local storage is rebuilt for `my_rank` in the
  /// relabeled layout: regular layouts keep their local row/column starts with a minimal leading
  /// dimension; explicit layouts store their blocks one after another with minimal leading dimensions (as
  /// nd_layout::relabeled, which does it). The new ranks are not checked here (validate_global checks the result).
  /// @pre validate_global passes
  /// @throws invalid_argument an owner rank of the layout outside [0, new_rank_of.size())
  /// @throws overflow_error the rebuilt local storage does not fit in 64 bits
  grid_layout relabeled(const std::vector<int>& new_rank_of) const;

  /// ---- validation ----
  /// Checks the global description; `comm_size` bounds the owner ranks. The checks are nd_layout's (this layout
  /// is its 2-D case; messages name axis 0 (rows) and axis 1 (columns)), plus one of regular storage.
  /// @pre comm_size >= 1 (a communicator's size)
  /// @throws invalid_layout splits that do not start at 0 or do not strictly increase, an owner rank outside
  ///   [0, comm_size), or (regular storage) a rank at two process-grid positions
  void validate_global(int comm_size) const;
  /// Checks this rank's storage against the global description (nothing when my_rank() < 0): nd_layout's checks,
  /// plus ScaLAPACK's rule that a regular local array's leading dimension covers its local rows (columns).
  /// @pre validate_global passes
  /// @throws invalid_layout regular storage: a leading dimension smaller than the local rows (col_major) or
  ///   columns (row_major) it must hold, a negative local start of a block this rank holds, blocks overlapping
  ///   in local indices; explicit storage: a block outside the block grid, owned by another rank, with a negative
  ///   offset or a leading dimension that makes distinct elements share memory, blocks sharing memory, a block
  ///   listed twice, or an owned block not listed
  /// @throws overflow_error a local size does not fit in 64 bits
  void validate_local() const;
  /// 64-bit hash of the global description (for the collective consistency check). Throws nothing.
  std::uint64_t global_hash() const;
  /// Short human-readable summary ("100x80 matrix in 4x3 blocks owned through a 2x2 process grid"). Throws nothing.
  std::string describe() const;

  friend bool operator==(const grid_layout& a, const grid_layout& b);
  friend bool operator!=(const grid_layout& a, const grid_layout& b) { return !(a == b); }

 private:
  std::vector<std::int64_t> row_splits_{0}, col_splits_{0};
  std::vector<int> row_proc_, col_proc_;
  int proc_rows_ = 0, proc_cols_ = 0;
  std::vector<int> grid_ranks_;
  storage_order packing_order_ = storage_order::col_major;
  storage_kind kind_ = storage_kind::regular;
  std::vector<std::int64_t> local_row_start_, local_col_start_;
  std::int64_t local_ld_ = 1;
  std::vector<local_block> local_blocks_;
  int my_rank_ = -1;
};

}  // namespace redist
