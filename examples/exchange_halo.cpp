// SPDX-License-Identifier: BSD-3-Clause
// The halo exchange of a distributed SpMV through redist's neighborhood alltoallv (C API, de-duplicating
// form): rows of the rotated anisotropic diffusion matrix split in blocks, auto strategy, regions of two ranks
// (emulated nodes). Prints the strategy auto chose and why; exit status 0 when every halo value is right.
//   mpiexec.mpich -n 4 build/examples/example_exchange_halo
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "redist/redist.h"
#include "redist_tools/patterns.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  namespace ex = redist::exchange;
  const ex::sparse_matrix a = ex::rotated_anisotropic_diffusion(64, M_PI / 4, 0.001);
  const std::vector<std::int64_t> split = ex::block_partition(a.rows, ranks);
  const ex::halo_pattern h = ex::spmv_halo(a, split, split, rank);

  // The SpMV's own communicator: a distributed graph of the halo.
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(h.sources.size()), h.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(h.destinations.size()), h.destinations.data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph);
  std::vector<double> x_send(static_cast<size_t>(h.send_total())), x_halo(static_cast<size_t>(h.recv_total()));

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "auto");
  MPI_Info_set(info, "redist_region_size", "2");
  redist_request request = REDIST_REQUEST_NULL;
  int status = redist_neighbor_alltoallv_init_ext(
      x_send.data(), h.sendcounts.data(), h.sdispls.data(), h.send_ids.data(), MPI_DOUBLE, x_halo.data(),
      h.recvcounts.data(), h.rdispls.data(), h.recv_ids.data(), MPI_DOUBLE, graph, info, &request);
  MPI_Info_free(&info);
  const char *strategy = "", *reason = "";
  if (status == MPI_SUCCESS) redist_neighbor_query(request, &strategy, &reason);
  if (rank == 0) std::printf("strategy %s: %s\n", strategy, reason);

  int wrong = status == MPI_SUCCESS ? 0 : 1;
  for (int iteration = 0; iteration < 3 && status == MPI_SUCCESS; ++iteration) {
    for (size_t k = 0; k < x_send.size(); ++k) x_send[k] = iteration + 0.5 * static_cast<double>(h.send_ids[k]);
    redist_start(&request);
    redist_wait(&request);
    for (size_t k = 0; k < x_halo.size(); ++k)
      wrong += x_halo[k] != iteration + 0.5 * static_cast<double>(h.recv_ids[k]);
  }
  redist_request_free(&request);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d wrong halo values\n", wrong ? "FAILED" : "ok", wrong);
  MPI_Comm_free(&graph);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
