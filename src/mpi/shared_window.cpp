#include "shared_window.hpp"

#include <unistd.h>

namespace redist::mpi {

namespace {
constexpr std::int64_t line = 64;

std::byte* align_to_line(void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  return p == nullptr ? nullptr : reinterpret_cast<std::byte*>((address + (line - 1)) / line * line);
}
}  // namespace

int allocate_shared_window(std::int64_t bytes, MPI_Comm node, std::byte** base, MPI_Win* window) noexcept {
  *base = nullptr;
  *window = MPI_WIN_NULL;
  // One spare line for the alignment of a segment that may start anywhere; one more where the size would
  // otherwise be a whole number of pages (see the header).
  std::int64_t request = 0;
  if (bytes > 0) {
    const long page = sysconf(_SC_PAGESIZE);
    request = (bytes + line - 1) / line * line + line;
    if (page > 0 && request % page == 0) request += line;
  }
  void* made = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(request), 1, MPI_INFO_NULL, node, &made, window);
  if (rc == MPI_SUCCESS && request > 0) *base = align_to_line(made);
  return rc;
}

int shared_window_segment(MPI_Win window, int rank, std::byte** base) noexcept {
  MPI_Aint size = 0;
  int unit = 0;
  void* segment = nullptr;
  const int rc = MPI_Win_shared_query(window, rank, &size, &unit, &segment);
  *base = rc == MPI_SUCCESS && size > 0 ? align_to_line(segment) : nullptr;
  return rc;
}

}  // namespace redist::mpi
