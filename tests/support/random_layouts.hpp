// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Random layouts and deterministic matrix contents for property tests of the transform engine.
// Every rank draws from the same generator state, so all ranks agree on the global descriptions;
// each rank then keeps its own local storage.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "redist/layout/builders.hpp"
#include "redist/types.hpp"

namespace redist::testing {

using rng_t = std::mt19937_64;

// An n x n matrix of nb x nb blocks on a rows x cols grid (the other parameters at their defaults).
inline block_cyclic_params square_params(std::int64_t n, std::int64_t nb, int rows, int cols) {
  block_cyclic_params p;
  p.m = p.n = n;
  p.mb = p.nb = nb;
  p.proc_rows = rows;
  p.proc_cols = cols;
  return p;
}

inline std::int64_t uniform(rng_t& g, std::int64_t lo, std::int64_t hi) {  // inclusive
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

// k strictly increasing splits of n (k <= n parts; n == 0 gives {0}).
inline std::vector<std::int64_t> random_splits(rng_t& g, std::int64_t n, std::int64_t max_parts) {
  if (n == 0) return {0};
  const std::int64_t parts = uniform(g, 1, std::max<std::int64_t>(1, std::min(n, max_parts)));
  std::vector<std::int64_t> cuts;
  for (std::int64_t i = 1; i < n; ++i) cuts.push_back(i);
  std::shuffle(cuts.begin(), cuts.end(), g);
  cuts.resize(static_cast<size_t>(parts - 1));
  cuts.push_back(0);
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

enum class layout_family { block_cyclic, blocked, custom };

struct layout_recipe {
  layout_family family = layout_family::block_cyclic;
  int ranks_used = 1;  // layouts may live on a subset of the ranks
};

// A random layout of an m x n matrix over (a subset of) nranks ranks, described for `me`.
inline grid_layout random_layout(rng_t& g, std::int64_t m, std::int64_t n, int nranks, int me) {
  const int family = static_cast<int>(uniform(g, 0, 2));
  const int used = static_cast<int>(uniform(g, 1, nranks));  // ranks that hold data
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), g);
  if (family == 0) {
    block_cyclic_params p;
    // A sub-matrix of a larger matrix in about half the cases.
    const bool sub = uniform(g, 0, 1) == 1;
    p.m = m + (sub ? uniform(g, 0, 7) : 0);
    p.n = n + (sub ? uniform(g, 0, 7) : 0);
    p.sub_row = p.m - m > 0 ? uniform(g, 0, p.m - m) : 0;
    p.sub_col = p.n - n > 0 ? uniform(g, 0, p.n - n) : 0;
    p.sub_m = m;
    p.sub_n = n;
    p.mb = uniform(g, 1, std::max<std::int64_t>(1, m + 3));  // blocks larger than the matrix too
    p.nb = uniform(g, 1, std::max<std::int64_t>(1, n + 3));
    if (uniform(g, 0, 2) == 0) p.first_mb = uniform(g, 1, p.mb);
    if (uniform(g, 0, 2) == 0) p.first_nb = uniform(g, 1, p.nb);
    p.proc_rows = static_cast<int>(uniform(g, 1, used));
    p.proc_cols = static_cast<int>(uniform(g, 1, std::max(1, used / p.proc_rows)));
    p.rsrc = static_cast<int>(uniform(g, 0, p.proc_rows - 1));
    p.csrc = static_cast<int>(uniform(g, 0, p.proc_cols - 1));
    const int kind = static_cast<int>(uniform(g, 0, 2));
    if (kind == 2) {
      p.grid_ranks.assign(ranks.begin(), ranks.begin() + p.proc_rows * p.proc_cols);
    } else {
      p.ordering = kind == 0 ? grid_order::row_major : grid_order::col_major;
    }
    p.order = uniform(g, 0, 3) == 0 ? storage_order::row_major : storage_order::col_major;
    const std::int64_t pad = uniform(g, 0, 2);
    // lld: minimal plus padding (computed by the builder when 0).
    grid_layout probe = block_cyclic(p, me);
    p.lld = probe.local_ld() + pad;
    return block_cyclic(p, me);
  }
  auto rows = random_splits(g, m, 5);
  auto cols = random_splits(g, n, 5);
  const size_t nbr = rows.size() - 1, nbc = cols.size() - 1;
  if (family == 1 && nbr * nbc <= static_cast<size_t>(nranks)) {
    std::vector<int> owners(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(nbr * nbc));
    const storage_order o = uniform(g, 0, 2) == 0 ? storage_order::row_major : storage_order::col_major;
    const std::int64_t pad = uniform(g, 0, 2);
    grid_layout probe = blocked(rows, cols, owners, me, 0, o);
    return blocked(rows, cols, owners, me, probe.local_ld() + pad, o);
  }
  // Custom: any owner per block (from the used ranks), explicit blocks with gaps and mixed orders.
  std::vector<int> owners(nbr * nbc);
  for (auto& o : owners) o = ranks[static_cast<size_t>(uniform(g, 0, used - 1))];
  const storage_order packing = uniform(g, 0, 1) == 0 ? storage_order::row_major : storage_order::col_major;
  std::vector<local_block> mine;
  std::int64_t offset = 0;
  // Every rank draws the same random numbers for every block so the generator stays in step.
  for (size_t i = 0; i < nbr; ++i)
    for (size_t j = 0; j < nbc; ++j) {
      const std::int64_t h = rows[i + 1] - rows[i], w = cols[j + 1] - cols[j];
      const storage_order o = uniform(g, 0, 3) == 0 ? (packing == storage_order::col_major ? storage_order::row_major
                                                                                           : storage_order::col_major)
                                                    : packing;
      const std::int64_t pad = uniform(g, 0, 2), gap = uniform(g, 0, 3);
      if (owners[i * nbc + j] != me) continue;
      local_block b;
      b.block = {static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
      b.order = o;
      b.ld = (o == storage_order::col_major ? h : w) + pad;
      b.offset = offset + gap;
      offset = b.offset + b.ld * (o == storage_order::col_major ? w : h);
      mine.push_back(b);
    }
  std::reverse(mine.begin(), mine.end());  // any order is allowed
  return custom(rows, cols, owners, mine, me, packing);
}

// Deterministic contents: value of global element (i, j) of matrix `id`.
template <class T>
T element_value(std::uint64_t id, std::int64_t i, std::int64_t j) {
  const std::uint64_t h = (static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) ^
                          (static_cast<std::uint64_t>(j) * 0xC2B2AE3D27D4EB4Full) ^ (id * 0x165667B19E3779F9ull);
  const std::uint64_t x = (h ^ (h >> 29)) % 2001;
  const double v = (static_cast<double>(x) - 1000.0) / 8.0;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    const double im = (static_cast<double>((h >> 17) % 2001) - 1000.0) / 16.0;
    return T(static_cast<typename T::value_type>(v), static_cast<typename T::value_type>(im));
  } else {
    return static_cast<T>(v);
  }
}

// Calls f(local_offset, global_row, global_col) for every element this rank holds in layout l.
template <class F>
void for_each_local_element(const grid_layout& l, F&& f) {
  auto h = [&](std::int64_t i) { return l.row_splits()[static_cast<size_t>(i)]; };
  auto w = [&](std::int64_t j) { return l.col_splits()[static_cast<size_t>(j)]; };
  if (l.kind() == storage_kind::explicit_blocks) {
    for (const auto& b : l.local_blocks())
      for (std::int64_t gi = h(b.block.row); gi < h(b.block.row + 1); ++gi)
        for (std::int64_t gj = w(b.block.col); gj < w(b.block.col + 1); ++gj) {
          const std::int64_t li = gi - h(b.block.row), lj = gj - w(b.block.col);
          f(b.offset + (b.order == storage_order::col_major ? li + lj * b.ld : li * b.ld + lj), gi, gj);
        }
    return;
  }
  for (const auto& pos : l.my_positions())
    for (std::int64_t bi = 0; bi < l.block_rows(); ++bi) {
      if (l.row_proc()[static_cast<size_t>(bi)] != pos.row) continue;
      for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
        if (l.col_proc()[static_cast<size_t>(bj)] != pos.col) continue;
        for (std::int64_t gi = h(bi); gi < h(bi + 1); ++gi)
          for (std::int64_t gj = w(bj); gj < w(bj + 1); ++gj) {
            const std::int64_t li = l.local_row_start()[static_cast<size_t>(bi)] + gi - h(bi);
            const std::int64_t lj = l.local_col_start()[static_cast<size_t>(bj)] + gj - w(bj);
            f(l.packing_order() == storage_order::col_major ? li + lj * l.local_ld() : li * l.local_ld() + lj, gi, gj);
          }
      }
    }
}

template <class T>
T conj_if(T v, bool c) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return c ? std::conj(v) : v;
  else
    return v;
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>)
    return 1e-4;
  else
    return 1e-10;
}

template <class T>
double abs_diff(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return a == b ? 0.0 : 1.0;
  else
    return static_cast<double>(std::abs(a - b));
}

template <class T>
bool is_nan_value(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else
    return std::isnan(v);
}

}  // namespace redist::testing
