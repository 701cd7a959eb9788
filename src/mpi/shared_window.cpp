// SPDX-License-Identifier: BSD-3-Clause
#include "shared_window.hpp"

#include <unistd.h>

#include "checked.hpp"
#include "machine/cache_line.hpp"

namespace redist::mpi {

int allocate_shared_window(std::int64_t bytes, MPI_Comm node, std::byte** base, MPI_Win* window) noexcept {
  *base = nullptr;
  *window = MPI_WIN_NULL;
  // One spare line for the alignment of a segment that may start anywhere; one more where the size would
  // otherwise be a whole number of pages (see the header).
  std::int64_t request = 0;
  if (bytes > 0) {
    const long page = sysconf(_SC_PAGESIZE);
    request = machine::round_up_to_cache_line(bytes) + machine::cache_line;
    if (page > 0 && request % page == 0) request += machine::cache_line;
  }
  void* made = nullptr;
  // Window creation has no nonblocking form: every process arrives first, in a watched wait (checked.hpp), so that
  // the creation cannot wait for a missing one; both made whatever the first returned.
  const int arrived = barrier_yielding(node);
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(request), 1, MPI_INFO_NULL, node, &made, window);
  if (rc == MPI_SUCCESS && request > 0) *base = machine::align_to_cache_line(made);
  return rc != MPI_SUCCESS ? rc : arrived;
}

int shared_window_segment(MPI_Win window, int rank, std::byte** base) noexcept {
  MPI_Aint size = 0;
  int unit = 0;
  void* segment = nullptr;
  const int rc = MPI_Win_shared_query(window, rank, &size, &unit, &segment);
  *base = rc == MPI_SUCCESS && size > 0 ? machine::align_to_cache_line(segment) : nullptr;
  return rc;
}

}  // namespace redist::mpi
