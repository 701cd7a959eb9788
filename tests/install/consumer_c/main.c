// SPDX-License-Identifier: BSD-3-Clause
/* A C program using an installed redist through redist/redist.h only: an in-place alltoallv in which rank r
 * sends r + j + 1 values to rank j, each value naming its sender and its place, checked on arrival. It also
 * prints the library's version next to the one it was built against (REDIST_EXPECTED_VERSION, when the build
 * passes it: the CMake package's or pkg-config's version), and fails when they differ. Run on any rank count. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redist/redist.h"

static double value(int from, int to, int64_t k) { return 1e6 * from + 1e3 * to + (double)k; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int major = -1, minor = -1, patch = -1;
  redist_version(&major, &minor, &patch);
  char library[64];
  snprintf(library, sizeof library, "%d.%d.%d", major, minor, patch);
  if (strcmp(library, REDIST_VERSION_STRING) != 0) {
    fprintf(stderr, "rank %d: redist_version() says %s, redist/version.hpp %s\n", rank, library, REDIST_VERSION_STRING);
    ++failures;
  }
#ifdef REDIST_EXPECTED_VERSION
  if (strcmp(library, REDIST_EXPECTED_VERSION) != 0) {
    fprintf(stderr, "rank %d: redist_version() says %s, the build system %s\n", rank, library, REDIST_EXPECTED_VERSION);
    ++failures;
  }
#endif

  int64_t* sendcounts = malloc(sizeof(int64_t) * (size_t)size);
  int64_t sent = 0, received = 0;
  for (int j = 0; j < size; ++j) {
    sendcounts[j] = rank + j + 1;
    sent += sendcounts[j];
    received += j + rank + 1;
  }
  const int64_t capacity = sent > received ? sent : received;
  double* buf = malloc(sizeof(double) * (size_t)capacity);
  int64_t at = 0;
  for (int j = 0; j < size; ++j)
    for (int64_t k = 0; k < sendcounts[j]; ++k) buf[at++] = value(rank, j, k);

  redist_inplace_options options;
  memset(&options, 0, sizeof options);
  const int rc = redist_alltoallv_inplace(buf, capacity, sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &options);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: redist_alltoallv_inplace returned %d\n", rank, rc);
    ++failures;
  } else {
    at = 0;
    for (int i = 0; i < size; ++i)
      for (int64_t k = 0; k < i + rank + 1; ++k)
        if (buf[at++] != value(i, rank, k)) ++failures;
  }
  free(buf);
  free(sendcounts);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("redist_consumer_c: redist %s, %d ranks, %d failures\n", library, size, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
