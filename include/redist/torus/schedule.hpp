// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The multi-phase block-cyclic transpose schedule (Choi, Dongarra and Walker; Fig. 2 of Chakaravarthy, Jain
// and Sabharwal, "Optimizing Matrix Transpose on Torus Interconnects"): transposing a matrix distributed
// block-cyclically over a P x Q grid, process (p, q) exchanges blocks with (p', q') iff p = q' and q = p'
// (mod G); the (L/P) * (L/Q) phases are permutations that together cover every such pair exactly once
// (L = lcm(P, Q), G = gcd(P, Q)).
#include <vector>

namespace redist::torus {

struct transpose_schedule {
  int P = 0, Q = 0;  ///< grid: process (p, q) is rank p * Q + q (row-major, as BLACS' default grid)
  int L = 0, G = 0;  ///< lcm and gcd of P and Q
  /// send_to[k][r]: the rank r sends its blocks to in phase k (r itself: its blocks stay); receive_from[k] is
  /// the inverse permutation. Phase k = j * (L/Q) + i in the loop order of Fig. 2.
  std::vector<std::vector<int>> send_to;
  std::vector<std::vector<int>> receive_from;
  int phases() const noexcept { return static_cast<int>(send_to.size()); }
};

/// The schedule of a P x Q grid (the same on every rank: a pure function of P and Q).
/// @throws invalid_argument P or Q below 1, or P * Q above 2^30
transpose_schedule multiphase_transpose_schedule(int P, int Q);

}  // namespace redist::torus
