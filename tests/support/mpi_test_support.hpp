// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Helpers for MPI GoogleTest programs. Assertions about distributed results should be decided on
// values reduced over all ranks, so every rank takes the same branch and no rank is left waiting in a
// collective that another rank skipped.
#include <mpi.h>

#include <cstdint>

namespace redist::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
inline std::int64_t global_sum(std::int64_t v, MPI_Comm comm = MPI_COMM_WORLD) {
  std::int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, comm);
  return out;
}
inline std::int64_t global_max(std::int64_t v, MPI_Comm comm = MPI_COMM_WORLD) {
  std::int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, comm);
  return out;
}
// True on every rank iff ok on every rank.
inline bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD) { return global_sum(ok ? 0 : 1, comm) == 0; }

}  // namespace redist::testing
