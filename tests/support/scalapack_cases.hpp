// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// ScaLAPACK-side helpers for the drop-in's tests: BLACS grids on any ranks in any order, block-cyclic
// local arrays filled from their global indices, descriptors of DTYPE 1 or 2.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "random_layouts.hpp"
#include "redist/scalapack/descriptor.hpp"

extern "C" {
void Cblacs_pinfo(int* me, int* n);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int proc_rows, int proc_cols);
void Cblacs_gridinit(int* context, const char* order, int proc_rows, int proc_cols);
void Cblacs_gridinfo(int context, int* proc_rows, int* proc_cols, int* my_row, int* my_col);
void Cblacs_gridexit(int context);
}

namespace redist::testing {

// A BLACS grid on `ranks` (row-major list of the world rank at each position), or the caller's context -1
// when it is not on it. Collective over MPI_COMM_WORLD.
struct blacs_context {
  int context = -1;
  int rows = 0, cols = 0, my_row = -1, my_col = -1;
  blacs_context(int proc_rows, int proc_cols, const std::vector<int>& ranks) : rows(proc_rows), cols(proc_cols) {
    int system = -1;
    Cblacs_get(-1, 0, &system);
    std::vector<int> usermap(ranks.size());  // column-major, leading dimension proc_rows
    for (int r = 0; r < proc_rows; ++r)
      for (int c = 0; c < proc_cols; ++c)
        usermap[static_cast<size_t>(r + c * proc_rows)] = ranks[static_cast<size_t>(r * proc_cols + c)];
    context = system;
    Cblacs_gridmap(&context, usermap.data(), proc_rows, proc_rows, proc_cols);
    if (context >= 0) {
      int pr, pc;
      Cblacs_gridinfo(context, &pr, &pc, &my_row, &my_col);
      if (my_row < 0 || my_row >= pr) {
        my_row = my_col = -1;
      }
    }
    if (my_row < 0) context = -1;
  }
  blacs_context(const blacs_context&) = delete;
  blacs_context& operator=(const blacs_context&) = delete;
  ~blacs_context() {
    if (context >= 0) Cblacs_gridexit(context);
  }
  bool holds_me() const { return my_row >= 0; }
};

// Global index of local index l in a block-cyclic dimension (first block `first`, then `block`).
inline std::int64_t global_index(std::int64_t l, std::int64_t first, std::int64_t block, int src, int nprocs,
                                 int proc) {
  const int d = (proc - src + nprocs) % nprocs;
  if (d == 0) {
    if (l < first) return l;
    const std::int64_t rest = l - first;
    return first + ((rest / block + 1) * nprocs - 1) * block + rest % block;
  }
  return first + (d + (l / block) * nprocs - 1) * block + l % block;
}

template <class T>
T value_of(std::int64_t i, std::int64_t j, int which) {  // which: 0 = A's values, 1 = B's own
  const double v = (which == 0 ? 1.0 : -1.0) * static_cast<double>(1 + i + 1000 * j);
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(static_cast<typename T::value_type>(v), static_cast<typename T::value_type>(which + j));
  else
    return static_cast<T>(v);
}

struct matrix_case {
  int dtype = 1;
  std::int64_t M = 0, N = 0, imb = 1, inb = 1, mb = 1, nb = 1;
  int rsrc = 0, csrc = 0;
  std::int64_t extra_lld = 0;
};

// A random block-cyclic matrix of at least min_m x min_n on a rows x cols grid: block sizes, first blocks
// (DTYPE 2), source process and LLD padding drawn at random.
inline matrix_case random_matrix(rng_t& g, int dtype, std::int64_t min_m, std::int64_t min_n, int rows, int cols) {
  matrix_case c;
  c.dtype = dtype;
  c.M = min_m + uniform(g, 0, 12);
  c.N = min_n + uniform(g, 0, 12);
  c.mb = uniform(g, 1, 9);
  c.nb = uniform(g, 1, 9);
  c.imb = dtype == 2 ? uniform(g, 1, 11) : c.mb;
  c.inb = dtype == 2 ? uniform(g, 1, 11) : c.nb;
  c.rsrc = static_cast<int>(uniform(g, 0, rows - 1));
  c.csrc = static_cast<int>(uniform(g, 0, cols - 1));
  c.extra_lld = uniform(g, 0, 3);
  return c;
}

// The descriptor of a matrix on a context (a process off the grid passes CTXT -1 and garbage elsewhere).
inline std::vector<int> make_descriptor(const matrix_case& c, const blacs_context& g) {
  std::int64_t local_rows = 0;
  if (g.holds_me()) local_rows = redist::scalapack::numroc(c.M, c.imb, c.mb, g.my_row, c.rsrc, g.rows);
  const int lld = static_cast<int>(std::max<std::int64_t>(1, local_rows) + c.extra_lld);
  if (!g.holds_me()) return std::vector<int>(11, -1);  // CTXT -1, the rest unset
  if (c.dtype == 1) return {1, g.context, int(c.M), int(c.N), int(c.mb), int(c.nb), c.rsrc, c.csrc, lld};
  return {2, g.context, int(c.M), int(c.N), int(c.imb), int(c.inb), int(c.mb), int(c.nb), c.rsrc, c.csrc, lld};
}

// Local array of a matrix whose element (i, j) (global, 0-based) is value(i, j); padding rows are filled too,
// marked by a distinct value.
template <class T, class Value>
std::vector<T> make_local_from(const matrix_case& c, const blacs_context& g, const std::vector<int>& desc,
                               Value value) {
  if (!g.holds_me()) return {};
  const std::int64_t lld = desc[c.dtype == 1 ? 8 : 10];
  const std::int64_t rows = redist::scalapack::numroc(c.M, c.imb, c.mb, g.my_row, c.rsrc, g.rows);
  const std::int64_t cols = redist::scalapack::numroc(c.N, c.inb, c.nb, g.my_col, c.csrc, g.cols);
  std::vector<T> local(static_cast<size_t>(lld * std::max<std::int64_t>(cols, 1)), value_of<T>(-7, -7, 1));
  for (std::int64_t lj = 0; lj < cols; ++lj)
    for (std::int64_t li = 0; li < rows; ++li)
      local[static_cast<size_t>(li + lj * lld)] = value(global_index(li, c.imb, c.mb, c.rsrc, g.rows, g.my_row),
                                                        global_index(lj, c.inb, c.nb, c.csrc, g.cols, g.my_col));
  return local;
}

// Local array of a matrix filled from value_of (padding rows filled too, marked by a distinct value).
template <class T>
std::vector<T> make_local(const matrix_case& c, const blacs_context& g, const std::vector<int>& desc, int which) {
  return make_local_from<T>(c, g, desc, [which](std::int64_t i, std::int64_t j) { return value_of<T>(i, j, which); });
}

// A random grid shape on a random subset of the ranks, in random order: {{rows, cols}, rank at each
// position row-major}. Uses the same draws on every rank when g does.
template <class Rng>
std::pair<std::pair<int, int>, std::vector<int>> random_grid(Rng& g, int nranks) {
  auto uniform_int = [&g](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  const int size = uniform_int(1, nranks);
  const int rows = uniform_int(1, size);
  const int cols = size / rows;
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), g);
  ranks.resize(static_cast<size_t>(rows * cols));
  return {{rows, cols}, ranks};
}

// A grid over every rank, in a random shape and a random order of the ranks (p?gemr2d's context, which holds
// both operands' processes): its shape and the row-major list of ranks.
template <class Rng>
std::pair<std::pair<int, int>, std::vector<int>> random_full_grid(Rng& g, int nranks) {
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), g);
  int rows = 1;
  for (int r = 1; r <= nranks; ++r)
    if (nranks % r == 0 && uniform(g, 0, 1)) rows = r;
  return {{rows, nranks / rows}, ranks};
}

}  // namespace redist::testing
