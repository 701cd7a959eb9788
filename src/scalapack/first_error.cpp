// SPDX-License-Identifier: BSD-3-Clause
#include "first_error.hpp"

#include <cstdint>

#include "mpi/agreement.hpp"

namespace redist::scalapack {

namespace {

// -p (scalar argument p) ranks as p*100, -(p*100 + e) as itself; no error ranks last.
std::int64_t error_rank(int info) {
  const std::int64_t p = -static_cast<std::int64_t>(info);
  return info == 0 ? INT64_MAX : p < 100 ? p * 100 : p;
}

int info_of_rank(std::int64_t rank) {
  if (rank == INT64_MAX) return 0;
  return rank % 100 == 0 ? -static_cast<int>(rank / 100) : -static_cast<int>(rank);
}

}  // namespace

int agree_on_first_error(MPI_Comm comm, int info) {
  // The library's one agreement, with the error's rank as a rider: ScaLAPACK reports the first argument in
  // PBLAS's order, not the lowest failing process's.
  mpi::agreement agreed(comm);
  const std::size_t slot = agreed.reduce_min(error_rank(info));
  agreed.conclude();
  return info_of_rank(agreed.min(slot));
}

int first_error(int info, int other) { return error_rank(other) < error_rank(info) ? other : info; }

int first_disagreement(const std::vector<std::int64_t>& records, int record_words,
                       const std::vector<global_argument>& arguments,
                       const std::function<bool(int rank, int info)>& takes_part, int& differing_rank) {
  const int nranks = static_cast<int>(records.size() / static_cast<size_t>(record_words));
  int found = 0;
  for (const global_argument& argument : arguments) {
    if (found != 0 && first_error(found, argument.info) == found) continue;
    int first = -1;
    for (int r = 0; r < nranks; ++r) {
      if (!takes_part(r, argument.info)) continue;
      const std::int64_t value = records[static_cast<size_t>(r * record_words + argument.word)];
      if (first < 0) {
        first = r;
      } else if (value != records[static_cast<size_t>(first * record_words + argument.word)]) {
        found = argument.info;
        differing_rank = r;
        break;
      }
    }
  }
  return found;
}

}  // namespace redist::scalapack
