#pragma once
// Agreement on a ScaLAPACK-style error code (internal).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace redist::scalapack {

// The first error over all processes of comm, ranked as PBLAS ranks them (the smallest argument position;
// a descriptor entry of argument p after a scalar argument p); 0 when no process has one. Collective.
int agree_on_first_error(MPI_Comm comm, int info);

// The first of two infos as agree_on_first_error ranks them (0 = none).
int first_error(int info, int other);

// An argument every process must pass alike (a scalar, a global descriptor entry), found at `word` of the
// records the processes gathered, reported as `info` when the processes differ.
struct global_argument {
  int word;
  int info;
};
// The first (as first_error ranks them) of `arguments` whose value differs between the processes for which
// `takes_part(rank, info)` holds, 0 when they agree; `differing_rank` is then set to a process that differs
// from the first participant. `records` holds record_words words per process. Local: every process computes
// the same answer from the same records.
int first_disagreement(const std::vector<std::int64_t>& records, int record_words,
                       const std::vector<global_argument>& arguments,
                       const std::function<bool(int rank, int info)>& takes_part, int& differing_rank);

}  // namespace redist::scalapack
