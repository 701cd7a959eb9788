// SPDX-License-Identifier: BSD-3-Clause
// The reshapes of a distributed 3-D FFT: bricks -> x-pencils -> y-pencils -> z-pencils -> bricks, each pencil stored
// with its own axis contiguous, planned once and executed as often as the FFT runs. Exit status 0 when the cycle
// returns every element exactly.
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <vector>

#include <redist/redist.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const std::vector<std::int64_t> shape{64, 48, 40};
  int bricks_grid[3] = {0, 0, 0}, pencils_grid[2] = {0, 0};
  MPI_Dims_create(nranks, 3, bricks_grid);
  MPI_Dims_create(nranks, 2, pencils_grid);
  const std::vector<int> grid3(bricks_grid, bricks_grid + 3), grid2(pencils_grid, pencils_grid + 2);

  // One box per rank; storage orders list the axes from the fastest-varying: {0, 2, 1} keeps x contiguous.
  const auto bricks = redist::box_layout(redist::brick_boxes(shape, grid3), rank);
  const auto x = redist::box_layout(redist::pencil_boxes(shape, 0, grid2), rank, {0, 2, 1});
  const auto y = redist::box_layout(redist::pencil_boxes(shape, 1, grid2), rank, {1, 2, 0});
  const auto z = redist::box_layout(redist::pencil_boxes(shape, 2, grid2), rank);  // C order: z contiguous

  using complex = std::complex<double>;
  const auto plan = [&](const redist::nd_layout& to, const redist::nd_layout& from) {
    return redist::make_reshape_plan(MPI_COMM_WORLD, {{to, from, {}, false, redist::element_type::c64, {}}});
  };
  const redist::transform_plan to_x = plan(x, bricks), to_y = plan(y, x), to_z = plan(z, y), back = plan(bricks, z);

  std::vector<complex> b(static_cast<size_t>(bricks.local_elements())), px(static_cast<size_t>(x.local_elements())),
      py(static_cast<size_t>(y.local_elements())), pz(static_cast<size_t>(z.local_elements())), end(b.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = complex(rank, static_cast<double>(i));
  to_x.execute(px.data(), b.data());
  // ... FFTs along x on px ...
  to_y.execute(py.data(), px.data());
  to_z.execute(pz.data(), py.data());
  back.execute(end.data(), pz.data());
  const int wrong = end == b ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("bricks %dx%dx%d -> pencils %dx%d and back: %s; x-pencils move %lld bytes from this rank\n", grid3[0],
                grid3[1], grid3[2], grid2[0], grid2[1], any ? "WRONG" : "exact",
                static_cast<long long>(to_x.statistics().bytes_sent));
  MPI_Finalize();
  return any;
}
