// SPDX-License-Identifier: BSD-3-Clause
// Consumer of an installed redist (C++): moves a matrix between two block-cyclic layouts (identity, then a
// scaled transpose), checks every local element and that redist::version is the library's version. The install
// test builds it through the README's CMake and pkg-config blocks and runs it at 2 and 4 ranks.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "redist/redist.h"
#include "redist/redist.hpp"

namespace {

// Calls fn(global_row, global_col, offset) for every element this rank stores in a regular layout.
template <class F>
void for_each_local(const redist::grid_layout& l, F fn) {
  for (std::int64_t i = 0; i < l.block_rows(); ++i)
    for (std::int64_t j = 0; j < l.block_cols(); ++j) {
      if (l.owner({i, j}) != l.my_rank()) continue;
      for (std::int64_t r = l.row_splits()[i]; r < l.row_splits()[i + 1]; ++r)
        for (std::int64_t c = l.col_splits()[j]; c < l.col_splits()[j + 1]; ++c) {
          const std::int64_t lr = l.local_row_start()[i] + (r - l.row_splits()[i]);
          const std::int64_t lc = l.local_col_start()[j] + (c - l.col_splits()[j]);
          fn(r, c,
             l.packing_order() == redist::storage_order::col_major ? lr + lc * l.local_ld() : lr * l.local_ld() + lc);
        }
    }
}

double value(std::int64_t r, std::int64_t c) { return 1000.0 * static_cast<double>(r) + static_cast<double>(c); }

redist::grid_layout layout(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, int proc_rows,
                           int proc_cols, redist::storage_order order, int rank) {
  redist::block_cyclic_params p;
  p.m = m;
  p.n = n;
  p.mb = mb;
  p.nb = nb;
  p.proc_rows = proc_rows;
  p.proc_cols = proc_cols;
  p.order = order;
  return redist::block_cyclic(p, rank);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int failures = 0;
  try {
    const std::int64_t m = 9, n = 7;
    // B: 3x2 blocks on a size x 1 grid, column-major; A: 2x3 blocks on a 1 x size grid, row-major.
    const redist::grid_layout b_layout = layout(m, n, 3, 2, size, 1, redist::storage_order::col_major, rank);
    const redist::grid_layout a_layout = layout(m, n, 2, 3, 1, size, redist::storage_order::row_major, rank);
    std::vector<double> b(static_cast<size_t>(b_layout.local_elements()), -1.0);
    for_each_local(b_layout, [&](std::int64_t r, std::int64_t c, std::int64_t off) { b[off] = value(r, c); });

    std::vector<double> a(static_cast<size_t>(a_layout.local_elements()), -1.0);
    redist::transform(MPI_COMM_WORLD, a_layout, a.data(), b_layout, b.data(), redist::op::identity, 1.0, 0.0);
    for_each_local(a_layout, [&](std::int64_t r, std::int64_t c, std::int64_t off) {
      if (a[off] != value(r, c)) ++failures;
    });

    // A^T (n x m) = 2 * B^T + 1 * A^T.
    const redist::grid_layout t_layout = layout(n, m, 2, 2, 1, size, redist::storage_order::col_major, rank);
    std::vector<double> t(static_cast<size_t>(t_layout.local_elements()), 0.0);
    for_each_local(t_layout, [&](std::int64_t r, std::int64_t c, std::int64_t off) { t[off] = value(c, r); });
    redist::transform(MPI_COMM_WORLD, t_layout, t.data(), b_layout, b.data(), redist::op::transpose, 2.0, 1.0);
    for_each_local(t_layout, [&](std::int64_t r, std::int64_t c, std::int64_t off) {
      if (t[off] != 3.0 * value(c, r)) ++failures;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    ++failures;
  }
  // The headers' version (redist::version) is the library's (redist_version).
  int major = -1, minor = -1, patch = -1;
  redist_version(&major, &minor, &patch);
  const std::string library = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (library != redist::version) {
    std::fprintf(stderr, "rank %d: redist_version() says %s, redist::version %s\n", rank, library.c_str(),
                 redist::version);
    ++failures;
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("redist consumer (redist %s) on %d ranks: %s (%d failures)\n", redist::version, size,
                total ? "FAILED" : "ok", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
