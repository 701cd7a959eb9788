// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Agreement on a ScaLAPACK-style error code (internal).
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "redist/scalapack/descriptor.hpp"

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
// The index of a record's word at byte `offset` (the records are gathered and compared as int64 words).
constexpr int word_at(std::size_t offset) { return static_cast<int>(offset / sizeof(std::int64_t)); }
// The entries of a descriptor stored at byte `offset` of the records that every process must pass alike (all but
// DTYPE, CTXT and LLD, each process's own), reported as PBLAS reports entry e of argument `position`.
inline void add_descriptor_arguments(std::vector<global_argument>& out, std::size_t offset, int position) {
  for (const desc_entry e : {desc_entry::m, desc_entry::n, desc_entry::imb, desc_entry::inb, desc_entry::mb,
                             desc_entry::nb, desc_entry::rsrc, desc_entry::csrc})
    out.push_back({word_at(offset) + static_cast<int>(e), -(position * 100 + static_cast<int>(e) + 1)});
}
// The first (as first_error ranks them) of `arguments` whose value differs between the processes for which
// `takes_part(rank, info)` holds, 0 when they agree; `differing_rank` is then set to a process that differs
// from the first participant. `records` holds record_words words per process. Local: every process computes
// the same answer from the same records.
int first_disagreement(const std::vector<std::int64_t>& records, int record_words,
                       const std::vector<global_argument>& arguments,
                       const std::function<bool(int rank, int info)>& takes_part, int& differing_rank);

}  // namespace redist::scalapack
