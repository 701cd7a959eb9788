// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) grid_layout as the 2-D case of nd_layout: validation, hashing, relabeling and transposition are
// written once, for nd_layout; grid_layout converts to it (to_nd_layout) and back.
#include "redist/layout/grid_layout.hpp"
#include "redist/layout/nd_layout.hpp"

namespace redist::detail {

/// The global description only (no local storage): what validate_global and global_hash read, without copying a
/// rank's list of blocks. Throws nothing.
nd_layout global_nd_view(const grid_layout& l);

/// Back from a 2-D nd_layout whose strides are a column- or row-major matrix's ({1, ld} or {ld, 1}), as
/// to_nd_layout, nd_layout::relabeled and nd_layout::permuted make them.
/// @throws invalid_layout strides that no leading dimension describes
grid_layout grid_from_nd(const nd_layout& l);

/// The rules grid_layout adds to nd_layout's checks for its regular (ScaLAPACK-style) storage, one local array
/// per rank: one process-grid position per rank (global; owner ranks need not be checked yet), and a leading
/// dimension that covers the local rows (col_major) or columns (row_major) even where a single local column (row)
/// would make any value safe (local; nothing for explicit storage or a rank without a position).
/// @throws invalid_layout the rule broken
void check_regular_matrix_global(const grid_layout& l);
void check_regular_matrix_local(const grid_layout& l);  ///< @throws invalid_layout the rule broken

}  // namespace redist::detail
