// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What the round loop works through (rounds.cpp): per step, the panels gathered along the grid lines and the
// local multiply; per C block, its reduction along k. Laid out once per plan, reused by every execution.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/checked.hpp"
#include "mpi/compat.hpp"

namespace redist::gemm_detail {

// Allocated once per plan and reused by every execution (paper Section 7.5): 64-byte aligned and uninitialised
// (every execution writes what it reads, so a zeroing pass at planning would only be overwritten), from the C
// heap, which reuses pages the application has already faulted in; or a view of memory owned elsewhere (a
// rank's segment of a node-shared window).
class buffer {
 public:
  buffer() = default;
  explicit buffer(std::int64_t bytes)
      : owned_(bytes > 0 ? new line[static_cast<size_t>((bytes + 63) / 64)] : nullptr), bytes_(bytes > 0 ? bytes : 0) {}
  static buffer view(std::byte* memory, std::int64_t bytes) {
    buffer b;
    b.view_ = memory;
    b.bytes_ = bytes;
    return b;
  }
  std::byte* data() { return owned_ ? owned_[0].b : view_; }
  std::int64_t bytes() const { return bytes_; }

 private:
  struct alignas(64) line {
    std::byte b[64];
  };
  std::unique_ptr<line[]> owned_;
  std::byte* view_ = nullptr;
  std::int64_t bytes_ = 0;
};

// The communicators of a grid's rows (i, *, l), columns (*, j, l) and layers (i, j, *) as this rank sees them.
struct grid_lines {
  mpi::comm_handle row, col, layer;
};

// One gather of a panel along a grid line: this rank's piece and every member's piece (counts and
// displacements in elements within the panel).
struct panel_gather {
  std::int64_t my_offset = 0;  // of this rank's piece in its native storage: the panel itself when no gather is needed
  std::int64_t my_count = 0;
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> displacements;
  std::int64_t total = 0;       // elements of the panel
  mpi::allgatherv_args gather;  // two-sided: the counts in the form the MPI takes
  // shared_memory: where each member's piece starts in that member's native storage (elements).
  std::vector<std::int64_t> member_offsets;
};

// One step of the round loop: the panels of sub-parts (s, t) and one round.
struct round_step {
  std::size_t block = 0;                       // the C block (s, t): index into the plan's c_blocks
  std::int64_t rows = 0, cols = 0, depth = 0;  // the local multiply: rows x depth times depth x cols
  panel_gather a, b;
  bool last_of_block = false;  // the C block is complete after this step
};

// A rectangle of a C block and where the multiply writes it: the native C storage, the user's C (in place) or
// the accumulator that is summed along k. `offset` and `ld`: of the rectangle's first element there.
enum class c_storage : std::uint8_t { native, user, accumulator };
struct c_rectangle {
  std::int64_t row = 0, col = 0, rows = 0, cols = 0;  // within the block
  c_storage where = c_storage::native;
  std::int64_t offset = 0, ld = 0;
};

// Where C block (s, t) lives and how it is scattered along k.
struct c_block {
  std::int64_t rows = 0, cols = 0;
  std::int64_t native_offset = 0;    // this rank's piece in the native C storage
  std::vector<std::int64_t> counts;  // per layer l: rows * piece columns (the reduce-scatter's counts)
  // The block cut where it is written: one rectangle in the native storage (or the accumulator), or the part
  // the user's C holds in place and the edges around it in the native storage.
  std::vector<c_rectangle> rectangles;
};

}  // namespace redist::gemm_detail
