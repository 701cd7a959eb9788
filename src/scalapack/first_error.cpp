#include "first_error.hpp"

#include <cstdint>

#include "redist/mpi/checked.hpp"

namespace redist::scalapack {

int agree_on_first_error(MPI_Comm comm, int info) {
  // -p (scalar argument p) ranks as p*100, -(p*100 + e) as itself; no error ranks last.
  const std::int64_t p = -static_cast<std::int64_t>(info);
  std::int64_t rank = info == 0 ? INT64_MAX : p < 100 ? p * 100 : p;
  REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &rank, 1, MPI_INT64_T, MPI_MIN, comm));
  if (rank == INT64_MAX) return 0;
  return rank % 100 == 0 ? -static_cast<int>(rank / 100) : -static_cast<int>(rank);
}

}  // namespace redist::scalapack
