// SPDX-License-Identifier: BSD-3-Clause
// The README's in-place alltoallv example: particle load balancing in one array (exit status 0 = verified).
// Rank r sends (r + j) % 5 + 1 000 particles to rank j in one array sized for the larger of what it sends and
// receives, then checks that it holds every sender's particles, in sender order, with nothing lost.
#include <mpi.h>
#include <redist/redist.h>

#include <algorithm>
#include <cstdio>
#include <vector>

struct particle {
  double position[3];
  double velocity[3];
  int64_t id;  // sender * 2^32 + index within the sender's array
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Datatype particle_type;
  MPI_Type_contiguous(sizeof(particle), MPI_BYTE, &particle_type);
  MPI_Type_commit(&particle_type);

  auto count = [](int from, int to) { return int64_t{1000} * ((from + to) % 5 + 1); };
  std::vector<int64_t> sendcounts(size);
  int64_t send_total = 0, recv_total = 0;
  for (int j = 0; j < size; ++j) {
    sendcounts[j] = count(rank, j);
    send_total += sendcounts[j];
    recv_total += count(j, rank);
  }
  const int64_t capacity = std::max(send_total, recv_total);
  std::vector<particle> particles(capacity);
  for (int64_t k = 0; k < send_total; ++k) particles[k] = {{1.0 * k, 0, 0}, {0, 0, 0}, (int64_t{rank} << 32) + k};

  redist_inplace_report report;
  redist_inplace_options options = {};  // zeroed: automatic algorithm, 4 MiB work buffer
  options.report = &report;
  const int rc = redist_alltoallv_inplace(particles.data(), capacity, sendcounts.data(), /*recvcounts=*/nullptr,
                                          particle_type, MPI_COMM_WORLD, &options);

  int wrong = rc != MPI_SUCCESS;
  int64_t at = 0;
  for (int from = 0; from < size && !wrong; ++from) {
    int64_t first = 0;  // where the sender's block for this rank started in its array
    for (int j = 0; j < rank; ++j) first += count(from, j);
    for (int64_t k = 0; k < count(from, rank); ++k, ++at)
      if (particles[at].id != (int64_t{from} << 32) + first + k) wrong = 1;
  }
  int any_wrong = 0;
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "in-place alltoallv of %lld particles on rank 0: algorithm %d, %lld bytes sent, work buffer %lld "
        "bytes: %s\n",
        static_cast<long long>(recv_total), static_cast<int>(report.algorithm),
        static_cast<long long>(report.bytes_sent), static_cast<long long>(report.work_bytes),
        any_wrong ? "WRONG" : "verified");
  MPI_Type_free(&particle_type);
  MPI_Finalize();
  return any_wrong;
}
