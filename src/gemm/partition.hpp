// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How the COSMA schedule cuts the iteration space, shared by the schedule (memory and volume counts) and the
// multiply (native layouts, buffers). Every cut splits a range into nearly equal consecutive parts, the
// first (range % parts) of them one larger, so part 0 is always the largest and the rank at grid position
// (0, 0, 0) holds the most.
//
//   m -> grid_m parts (grid row i)      -> sequential_m sub-parts (s)
//   n -> grid_n parts (grid column j)   -> sequential_n sub-parts (t)
//   k -> grid_k parts (grid layer l)    -> rounds (r)
// Native layouts (which rank stores what between the transforms and the multiply):
//   op(A): rows of sub-part (i, s) x the columns of round (l, r), those split into grid_n pieces: piece j
//          on rank (i, j, l). Gathering the pieces of round r along j gives the (i, s) x (l, r) panel.
//   op(B): rows of round (l, r) x the columns of sub-part (j, t), those split into grid_m pieces: piece i on
//          rank (i, j, l).
//   C:     rows of sub-part (i, s) x the columns of sub-part (j, t), those split into grid_k pieces: piece l
//          on rank (i, j, l) (where the sum over the grid_k layers is scattered).
// Ranges are positions in an order of each dimension (native_layout.hpp's dimension_order: the input's blocks
// grouped by owner), so a native part may be several global runs; the schedule only needs the sizes.
// Each native block is stored column-major with its own row count as leading dimension, blocks one after
// another, so a piece of a panel is always one contiguous run of memory.
#include <algorithm>
#include <cstdint>

namespace redist::gemm_detail {

inline std::int64_t part_start(std::int64_t n, std::int64_t parts, std::int64_t p) {
  return p * (n / parts) + std::min<std::int64_t>(p, n % parts);
}
inline std::int64_t part_size(std::int64_t n, std::int64_t parts, std::int64_t p) {
  return part_start(n, parts, p + 1) - part_start(n, parts, p);
}

}  // namespace redist::gemm_detail
