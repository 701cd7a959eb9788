// SPDX-License-Identifier: BSD-3-Clause
// Split-phase reshapes overlapping local work: a batch of 3-D fields moves from bricks to x-pencils, and while batch
// i+1 is on its way (start) batch i is transformed locally (the place of an FFT along x), then wait. The same plan
// serves every batch. Exit status 0 when the pipeline's results equal blocking executions' exactly.
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <vector>

#include <redist/redist.hpp>

using complex = std::complex<double>;

// The local stage (an FFT along x would go here): any work on the batch that has arrived.
void local_stage(std::vector<complex>& pencil, int batch) {
  for (complex& v : pencil) v = v * complex(1.0 + batch, -0.5);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const std::vector<std::int64_t> shape{64, 48, 40};
  int bricks_grid[3] = {0, 0, 0}, pencils_grid[2] = {0, 0};
  MPI_Dims_create(nranks, 3, bricks_grid);
  MPI_Dims_create(nranks, 2, pencils_grid);
  const auto bricks = redist::box_layout(redist::brick_boxes(shape, {bricks_grid, bricks_grid + 3}), rank);
  const auto x = redist::box_layout(redist::pencil_boxes(shape, 0, {pencils_grid, pencils_grid + 2}), rank, {0, 2, 1});
  const redist::transform_plan to_x =
      redist::make_reshape_plan(MPI_COMM_WORLD, {{x, bricks, {}, false, redist::element_type::c64, {}}});

  const int batches = 4;
  std::vector<std::vector<complex>> in(batches), out(batches), blocking(batches);
  for (int k = 0; k < batches; ++k) {
    in[k].resize(static_cast<size_t>(bricks.local_elements()));
    for (size_t i = 0; i < in[k].size(); ++i) in[k][i] = complex(rank + k, static_cast<double>(i));
    out[k].resize(static_cast<size_t>(x.local_elements()));
    blocking[k].resize(out[k].size());
  }
  // Pipelined: start batch k+1, work on batch k, wait.
  to_x.start(out[0].data(), in[0].data());
  to_x.wait();
  for (int k = 0; k < batches; ++k) {
    if (k + 1 < batches) to_x.start(out[k + 1].data(), in[k + 1].data());
    local_stage(out[k], k);  // overlaps the messages of batch k+1
    if (k + 1 < batches) to_x.wait();
  }
  // The same, blocking.
  for (int k = 0; k < batches; ++k) {
    to_x.execute(blocking[k].data(), in[k].data());
    local_stage(blocking[k], k);
  }
  const int wrong = out == blocking ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "%d batches bricks -> x-pencils, start/wait around local work (%s; messages in flight between them: %s)\n",
        batches, any ? "WRONG" : "same as blocking", to_x.statistics().start_overlaps ? "yes" : "no");
  MPI_Finalize();
  return any;
}
