// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// N-dimensional layouts: the general form of grid_layout for arrays of d >= 1 axes (d <= max_axes).
//
// Global part (identical on all ranks, checked collectively by the planner):
//   per axis k, splits 0 = s_0 < s_1 < ... < s_M = extent(k), and an owner for every N-d block. Owners are kept
//   in product form owner(b_0, ..., b_{d-1}) = grid_rank(procs(0)[b_0], ..., procs(d-1)[b_{d-1}]) over a d-dim
//   grid of positions (grid_shape; grid_ranks in C order, the last axis fastest). Block-cyclic layouts have one
//   position per process and axis; boxes (FFT decompositions) one position per block and axis.
//   packing_order: the order in which a block's elements are packed into messages, as axes from the fastest-
//   varying to the slowest (the layout's declared storage order).
// Local part (this rank only): where each of its blocks is stored, relative to the base pointer passed when a
// plan is executed. Storage orders are strides per axis (elements), so C order, Fortran order and any other
// permutation of the axes are all cases of one form.
//  - regular: all blocks of this rank live in one local array: the local index along axis k of global index g in
//    block b is local_start(k)[b] + (g - splits(k)[b]); the element lies at sum_k local index_k * local_strides[k].
//  - explicit_blocks: an arbitrary list of blocks, each with its own offset and strides.
// A grid_layout is the d = 2 case (rows = axis 0, columns = axis 1): to_nd_layout.
#include <cstdint>
#include <string>
#include <vector>

#include "redist/layout/grid_layout.hpp"

namespace redist {

inline constexpr int max_axes = 8;

/// Axis orders, fastest-varying first: C order (last axis fastest) and Fortran order (first axis fastest).
std::vector<int> c_order(int ndim);
std::vector<int> fortran_order(int ndim);

/// One block of this rank (explicit storage): its block coordinates (one per axis), where its first element lies
/// (elements from the base pointer) and the distance between consecutive indices along each axis.
struct nd_local_block {
  std::vector<std::int64_t> block;
  std::int64_t offset = 0;
  std::vector<std::int64_t> strides;
};

class nd_layout {
 public:
  nd_layout() = default;

  /// General constructor (product form). `grid_ranks` has prod(grid_shape) entries, C order. `local_start` (one
  /// vector per axis, one entry per block) and `local_strides` (one per axis) only for regular storage;
  /// `local_blocks` only for explicit storage. Nothing is checked here: validate_global / validate_local do it.
  nd_layout(std::vector<std::vector<std::int64_t>> splits, std::vector<std::vector<int>> procs,
            std::vector<int> grid_shape, std::vector<int> grid_ranks, std::vector<int> packing_order, storage_kind kind,
            std::vector<std::vector<std::int64_t>> local_start, std::vector<std::int64_t> local_strides,
            std::vector<nd_local_block> local_blocks, int my_rank);

  /// ---- global description ----
  int ndim() const noexcept { return static_cast<int>(splits_.size()); }
  std::int64_t extent(int axis) const { return splits_[static_cast<size_t>(axis)].back(); }
  std::vector<std::int64_t> shape() const;
  std::int64_t elements() const;  ///< product of the extents
  std::int64_t blocks(int axis) const {
    return static_cast<std::int64_t>(splits_[static_cast<size_t>(axis)].size()) - 1;
  }
  const std::vector<std::int64_t>& splits(int axis) const { return splits_[static_cast<size_t>(axis)]; }
  const std::vector<int>& procs(int axis) const { return procs_[static_cast<size_t>(axis)]; }
  const std::vector<int>& grid_shape() const noexcept { return grid_shape_; }
  const std::vector<int>& grid_ranks() const noexcept { return grid_ranks_; }
  /// The rank at a grid position (ndim() entries).
  int grid_rank(const int* position) const;
  /// The owner of a block (ndim() block coordinates).
  int owner(const std::int64_t* block) const;
  const std::vector<int>& packing_order() const noexcept { return packing_order_; }
  /// Largest rank that owns a block, + 1.
  int ranks_needed() const;

  /// ---- local storage (this rank) ----
  int my_rank() const noexcept { return my_rank_; }
  storage_kind kind() const noexcept { return kind_; }
  const std::vector<std::int64_t>& local_start(int axis) const { return local_start_[static_cast<size_t>(axis)]; }
  const std::vector<std::int64_t>& local_strides() const noexcept { return local_strides_; }
  const std::vector<nd_local_block>& local_blocks() const noexcept { return local_blocks_; }
  /// Elements the local buffer must hold (largest offset + 1 over this rank's elements; 0 when it has none).
  std::int64_t local_elements() const;
  /// Grid positions held by this rank, each ndim() entries.
  std::vector<std::vector<int>> my_positions() const;

  /// ---- derived layouts ----
  /// The same data and memory seen with its axes permuted: axis i of the result is axis axes[i] of this layout.
  nd_layout permuted(const std::vector<int>& axes) const;
  /// Owners relabeled: rank r becomes new_rank_of[r]. Local storage is rebuilt for my_rank in the relabeled
  /// layout: regular layouts keep their local starts, with dense strides in packing order; explicit layouts store
  /// their blocks one after another, each dense in packing order.
  nd_layout relabeled(const std::vector<int>& new_rank_of) const;

  /// ---- validation ----
  /// Checks the global description; comm_size bounds the owner ranks. Throws invalid_layout.
  void validate_global(int comm_size) const;
  /// Checks this rank's storage against the global description (blocks that overlap in memory, strides that
  /// are not positive, a block listed twice or not owned by this rank). Throws invalid_layout.
  void validate_local() const;
  /// 64-bit hash of the global description (for the collective consistency check).
  std::uint64_t global_hash() const;
  /// Short human-readable summary ("64x64x64 in 2x2x2 blocks on a 2x2x2 grid").
  std::string describe() const;

  friend bool operator==(const nd_layout& a, const nd_layout& b);
  friend bool operator!=(const nd_layout& a, const nd_layout& b) { return !(a == b); }

 private:
  std::vector<std::vector<std::int64_t>> splits_;
  std::vector<std::vector<int>> procs_;
  std::vector<int> grid_shape_;
  std::vector<int> grid_ranks_;
  std::vector<int> packing_order_;
  storage_kind kind_ = storage_kind::regular;
  std::vector<std::vector<std::int64_t>> local_start_;
  std::vector<std::int64_t> local_strides_;
  std::vector<nd_local_block> local_blocks_;
  int my_rank_ = -1;
};

/// A matrix layout as the d = 2 case: rows are axis 0, columns axis 1; column-major is Fortran order.
nd_layout to_nd_layout(const grid_layout& l);

}  // namespace redist
