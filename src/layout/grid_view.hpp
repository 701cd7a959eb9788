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

}  // namespace redist::detail
