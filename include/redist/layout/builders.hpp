// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Builders for the common layouts. `my_rank` selects whose local storage is described; pass -1 for a
// purely global description (plan-only studies with virtual ranks).
#include <cstdint>
#include <vector>

#include "redist/layout/grid_layout.hpp"

namespace redist {

/// ScaLAPACK's 2-D block-cyclic distribution (DTYPE 1, and DTYPE 2 through first_mb/first_nb), on a
/// proc_rows x proc_cols grid whose positions are numbered row- or column-major (or given explicitly),
/// optionally restricted to the sub-matrix [sub_row, sub_row+sub_m) x [sub_col, sub_col+sub_n)
/// (0-based; ScaLAPACK's ia = sub_row + 1).
struct block_cyclic_params {
  std::int64_t m = 0, n = 0;         ///< global matrix (M_, N_)
  std::int64_t mb = 1, nb = 1;       ///< block sizes (MB_, NB_)
  std::int64_t first_mb = 0;         ///< first block row height (IMB_); 0 = mb
  std::int64_t first_nb = 0;         ///< first block column width (INB_); 0 = nb
  int rsrc = 0, csrc = 0;            ///< grid position of the first block (RSRC_, CSRC_)
  int proc_rows = 1, proc_cols = 1;  ///< process grid
  grid_order ordering = grid_order::row_major;
  std::vector<int> grid_ranks;  ///< optional: rank at each position (row-major), overrides ordering
  std::int64_t lld = 0;         ///< local leading dimension (LLD_); 0 = minimal
  storage_order order = storage_order::col_major;
  std::int64_t sub_row = 0, sub_col = 0;
  std::int64_t sub_m = -1, sub_n = -1;  ///< -1 = to the end of the matrix
};
/// The block-cyclic layout `p` describes, with the local storage of `my_rank` (-1: none). Owner ranks, lld and
/// the regular storage are checked later, by validate_global / validate_local (the planner calls both).
/// @throws invalid_argument m or n negative; mb, nb, or a non-zero first_mb or first_nb, below 1; a process grid
///   dimension below 1; rsrc or csrc outside the grid; a sub-matrix not inside the matrix; or grid_ranks neither
///   empty nor proc_rows * proc_cols entries
grid_layout block_cyclic(const block_cyclic_params& p, int my_rank);

/// Number of rows (or columns) of a block-cyclic dimension held by grid coordinate `proc`
/// (ScaLAPACK's NUMROC generalised to a first block of size `first`). Throws nothing; 0 when n <= 0.
/// @pre first >= 1, nb >= 1, nprocs >= 1, proc and src in [0, nprocs) (not checked: block_cyclic checks its own)
std::int64_t block_cyclic_local_count(std::int64_t n, std::int64_t first, std::int64_t nb, int proc, int src,
                                      int nprocs);

/// One block per grid position: block (i, j) spans [row_splits[i], row_splits[i+1]) x [col_splits[j], ...)
/// and is owned by ranks[i * (col_splits.size()-1) + j]; stored in one local array per rank, so each rank owns at
/// most one block (validate_global rejects a rank at two grid positions; use custom() otherwise). lld = 0: minimal.
/// Splits and owner ranks are checked later, by validate_global (the planner calls it).
/// @throws invalid_layout empty row or column splits, more than 2^31 - 1 blocks along a dimension, or ranks without
///   one entry per block
grid_layout blocked(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, std::vector<int> ranks,
                    int my_rank, std::int64_t lld = 0, storage_order order = storage_order::col_major);

/// Fully custom: any splits, any owner per block (owners is block_rows x block_cols, row-major) and the
/// explicit list of this rank's blocks. `packing_order` is the order blocks travel in (use the order most
/// blocks are stored in). Splits, owners and my_blocks are checked later, by validate_global / validate_local.
/// @throws invalid_layout empty row or column splits, more than 2^31 - 1 blocks along a dimension, or owners without
///   one entry per block
grid_layout custom(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, std::vector<int> owners,
                   std::vector<local_block> my_blocks, int my_rank,
                   storage_order packing_order = storage_order::col_major);

/// Splits of n into `parts` nearly equal consecutive pieces (parts + 1 entries, from 0 to n).
/// @pre n >= 0 and n * parts fits in 64 bits (not checked)
/// @throws invalid_argument parts < 1
std::vector<std::int64_t> even_splits(std::int64_t n, int parts);

}  // namespace redist
