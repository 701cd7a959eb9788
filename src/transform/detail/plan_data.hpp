// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Internal representation of a transform plan (not part of the public API; shared by the planner and
// the executors in src/transform/). Every job is N-dimensional (a matrix is the case d = 2: rows are axis 0,
// columns axis 1); axes are numbered as A's, and op(B) = permute(B, axes) is seen in A's axes.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "layout/indices.hpp"
#include "redist/layout/nd_layout.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/types.hpp"

namespace redist::detail {

using axis_values = std::array<std::int64_t, max_axes>;

// A maximal 1-D run of consecutive indices along one axis of a tile that is contiguous in the local storage
// of the side(s) that touch it. `packed` is the run's first index inside the packed tile.
struct run {
  local_index a_local;  // first local index in A's storage (receiver / local tiles)
  local_index b_local;  // first local index in op(B)'s storage (sender / local tiles)
  std::int64_t packed = 0;
  std::int64_t length = 0;
  block_index a_block;  // block of A along this axis the run lies in (explicit storage lookup)
  block_index b_block;  // block of op(B) along this axis
};

// Where one block of a layout lives: offset of its first element from the job's base pointer, and strides.
struct placement {
  std::int64_t offset = 0;
  axis_values strides{};
};

// One side's view of its local storage, for address computation at execution.
struct storage_view {
  storage_kind kind = storage_kind::regular;
  int ndim = 0;
  axis_values strides{};                                // regular storage
  std::unordered_map<std::uint64_t, placement> blocks;  // explicit storage: block_key -> placement
  axis_values block_counts{};
  std::uint64_t block_key(const block_index* block) const {
    std::uint64_t key = 0;
    for (int k = 0; k < ndim; ++k)
      key = key * static_cast<std::uint64_t>(block_counts[static_cast<size_t>(k)]) +
            static_cast<std::uint64_t>(block[k].value());
    return key;
  }
  // The offset of the element at local indices `local` (one per axis) of block `block`, and the strides around
  // it: explicit storage numbers local indices from the block's first element, regular storage from the local
  // array's.
  std::int64_t at(const block_index* block, const local_index* local, const std::int64_t*& strides_out) const;
};

// The runs of one axis of a tile.
struct run_range {
  const run* first = nullptr;
  const run* last = nullptr;
  const run* begin() const { return first; }
  const run* end() const { return last; }
  std::size_t size() const { return static_cast<std::size_t>(last - first); }
  const run& operator[](std::size_t i) const { return first[i]; }
};

// A box of A moved from one rank to another (or within a rank): extent(k) indices along each axis in A's
// coordinates, packed (when it travels) in op(B)'s packing order.
class tile {
 public:
  int job = 0;
  std::int64_t byte_offset = 0;  // inside the peer's message

  int ndim() const { return ndim_; }
  std::int64_t extent(int axis) const { return extent_[static_cast<size_t>(axis)]; }
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (int k = 0; k < ndim_; ++k) n *= extent_[static_cast<size_t>(k)];
    return n;
  }
  run_range runs(int axis) const {
    const run* base = runs_.data();
    return {base + first_run_[static_cast<size_t>(axis)], base + first_run_[static_cast<size_t>(axis) + 1]};
  }
  // Appends the next axis (axes are added in order 0, 1, ...).
  void add_axis(std::int64_t extent, const std::vector<run>& axis_runs) {
    extent_[static_cast<size_t>(ndim_)] = extent;
    runs_.insert(runs_.end(), axis_runs.begin(), axis_runs.end());
    first_run_[static_cast<size_t>(++ndim_)] = static_cast<std::uint32_t>(runs_.size());
  }

 private:
  int ndim_ = 0;
  axis_values extent_{};
  std::array<std::uint32_t, max_axes + 1> first_run_{};  // runs of axis k: runs_[first_run_[k], first_run_[k + 1])
  std::vector<run> runs_;
};

struct peer_message {
  int rank = 0;
  std::int64_t bytes = 0;
  std::int64_t byte_offset = 0;  // inside the rank's whole send (or receive) buffer
  std::vector<tile> tiles;
};

// Axes ordered from the fastest-varying in memory to the slowest.
using axis_order = std::array<int, max_axes>;

struct job_plan {
  bool conjugate = false;  // op(B) conjugates (complex types)
  element_type type = element_type::f64;
  std::size_t elem_size = 8;
  int ndim = 2;
  storage_view a_view;        // A's storage on this rank
  storage_view b_view;        // op(B)'s storage on this rank (axes already permuted into A's)
  axis_order packed_order{};  // op(B)'s packing order
  axis_order a_order{};       // A's (predominant) storage order
  // How this rank writes A for the job (the store policy resolved per job: transform_plan::impl::choose_stores).
  kernels::store_hint result_stores = kernels::store_hint::cached;
};

}  // namespace redist::detail
