// SPDX-License-Identifier: BSD-3-Clause
#include "redist/torus/schedule.hpp"

#include <numeric>
#include <string>

#include "redist/error.hpp"

namespace redist::torus {

transpose_schedule multiphase_transpose_schedule(int P, int Q) {
  if (P < 1 || Q < 1 || static_cast<std::int64_t>(P) * Q > (std::int64_t(1) << 30))
    throw invalid_argument("transpose schedule: grid " + std::to_string(P) + " x " + std::to_string(Q) +
                           ", expected P, Q >= 1 and P * Q <= 2^30");
  transpose_schedule s;
  s.P = P;
  s.Q = Q;
  s.G = std::gcd(P, Q);
  s.L = P / s.G * Q;
  const int rows_phases = s.L / P, cols_phases = s.L / Q;  // j runs over L/P values, i over L/Q
  const int ranks = P * Q;
  auto mod = [](int a, int m) { return ((a % m) + m) % m; };
  s.send_to.assign(static_cast<size_t>(rows_phases) * cols_phases, std::vector<int>(static_cast<size_t>(ranks)));
  s.receive_from = s.send_to;
  for (int p = 0; p < P; ++p) {
    for (int q = 0; q < Q; ++q) {
      // Fig. 2: (p~, q~) is the first partner: p~ = q and q~ = p (mod G).
      const int g = mod(q - p, s.G);
      const int pt = mod(p + g, P), qt = mod(q - g, Q);
      const int me = p * Q + q;
      for (int j = 0; j < rows_phases; ++j) {
        for (int i = 0; i < cols_phases; ++i) {
          const std::size_t k = static_cast<size_t>(j) * cols_phases + i;
          const int partner = mod(pt + i * s.G, P) * Q + mod(qt - j * s.G, Q);
          s.send_to[k][static_cast<size_t>(me)] = partner;
          // Fig. 2's receive line ((p~ - iG, q~ + jG)) does not invert its send line on every grid (2 x 4:
          // (0,1) sends to (1,0) in phase 0, whose receive line names (0,3)); the inverse is exact.
          s.receive_from[k][static_cast<size_t>(partner)] = me;
        }
      }
    }
  }
  return s;
}

}  // namespace redist::torus
