// SPDX-License-Identifier: BSD-3-Clause
// The README's transform example: 32x32 -> 128x128 blocks with a transpose, A = B^T + A, verified.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include <redist/redist.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t n = 1000;
  int rows = 1;
  while ((rows + 1) * (rows + 1) <= size) ++rows;
  const int cols = size / rows;

  redist::block_cyclic_params pb{n, n, 32, 32};
  pb.proc_rows = rows;
  pb.proc_cols = cols;
  redist::block_cyclic_params pa{n, n, 128, 128};
  pa.proc_rows = rows;
  pa.proc_cols = cols;
  pa.ordering = redist::grid_order::col_major;
  const auto b_layout = redist::block_cyclic(pb, rank);
  const auto a_layout = redist::block_cyclic(pa, rank);

  // Global element (i, j) of B is i + n*j; A starts as all ones.
  std::vector<double> b(static_cast<size_t>(b_layout.local_elements()));
  std::vector<double> a(static_cast<size_t>(a_layout.local_elements()), 1.0);
  const auto& rs = b_layout.row_splits();
  const auto& cs = b_layout.col_splits();
  for (const auto pos : b_layout.my_positions())
    for (std::int64_t bi = 0; bi < b_layout.block_rows(); ++bi)
      for (std::int64_t bj = 0; bj < b_layout.block_cols(); ++bj) {
        if (b_layout.row_proc()[bi] != pos.row || b_layout.col_proc()[bj] != pos.col) continue;
        for (std::int64_t i = rs[bi]; i < rs[bi + 1]; ++i)
          for (std::int64_t j = cs[bj]; j < cs[bj + 1]; ++j) {
            const std::int64_t li = b_layout.local_row_start()[bi] + i - rs[bi];
            const std::int64_t lj = b_layout.local_col_start()[bj] + j - cs[bj];
            b[static_cast<size_t>(li + lj * b_layout.local_ld())] = static_cast<double>(i + n * j);
          }
      }

  // Plan once (collective), execute many times on new data.
  auto plan =
      redist::make_transform_plan(MPI_COMM_WORLD, a_layout, b_layout, redist::op::transpose, redist::element_type::f64);
  plan.execute(a.data(), b.data(), /*alpha=*/1.0, /*beta=*/1.0);

  // A(i, j) must be B(j, i) + 1 = j + n*i + 1.
  long wrong = 0;
  const auto& ar = a_layout.row_splits();
  const auto& ac = a_layout.col_splits();
  for (const auto pos : a_layout.my_positions())
    for (std::int64_t bi = 0; bi < a_layout.block_rows(); ++bi)
      for (std::int64_t bj = 0; bj < a_layout.block_cols(); ++bj) {
        if (a_layout.row_proc()[bi] != pos.row || a_layout.col_proc()[bj] != pos.col) continue;
        for (std::int64_t i = ar[bi]; i < ar[bi + 1]; ++i)
          for (std::int64_t j = ac[bj]; j < ac[bj + 1]; ++j) {
            const std::int64_t li = a_layout.local_row_start()[bi] + i - ar[bi];
            const std::int64_t lj = a_layout.local_col_start()[bj] + j - ac[bj];
            if (a[static_cast<size_t>(li + lj * a_layout.local_ld())] != static_cast<double>(j + n * i + 1)) ++wrong;
          }
      }
  long total = 0;
  MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("transpose of %lldx%lld: %s\n", static_cast<long long>(n), static_cast<long long>(n),
                total == 0 ? "verified" : "WRONG");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
