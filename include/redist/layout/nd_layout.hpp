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

/// Axis orders list the axes fastest-varying first. C order: the last axis fastest. Empty for ndim <= 0.
/// Throws nothing.
std::vector<int> c_order(int ndim);
/// Fortran order: the first axis fastest. Empty for ndim <= 0. Throws nothing.
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
  /// Throws nothing.
  nd_layout(std::vector<std::vector<std::int64_t>> splits, std::vector<std::vector<int>> procs,
            std::vector<int> grid_shape, std::vector<int> grid_ranks, std::vector<int> packing_order, storage_kind kind,
            std::vector<std::vector<std::int64_t>> local_start, std::vector<std::int64_t> local_strides,
            std::vector<nd_local_block> local_blocks, int my_rank);

  /// ---- global description ----
  int ndim() const noexcept { return static_cast<int>(splits_.size()); }
  /// The extent of `axis`. Throws nothing.
  /// @pre axis in [0, ndim()) and splits(axis) not empty (not checked)
  std::int64_t extent(int axis) const { return splits_[static_cast<size_t>(axis)].back(); }
  std::vector<std::int64_t> shape() const;  ///< the extents (0 for an axis without splits). Throws nothing.
  /// Product of the extents. Throws nothing.
  /// @pre the product fits in 64 bits (not checked)
  std::int64_t elements() const;
  /// Blocks along `axis`. Throws nothing.
  /// @pre axis in [0, ndim()) (not checked)
  std::int64_t blocks(int axis) const {
    return static_cast<std::int64_t>(splits_[static_cast<size_t>(axis)].size()) - 1;
  }
  /// The splits of `axis`, blocks(axis) + 1 entries. Throws nothing.
  /// @pre axis in [0, ndim()) (not checked)
  const std::vector<std::int64_t>& splits(int axis) const { return splits_[static_cast<size_t>(axis)]; }
  /// The grid coordinate along `axis` that owns each block of that axis. Throws nothing.
  /// @pre axis in [0, ndim()) (not checked)
  const std::vector<int>& procs(int axis) const { return procs_[static_cast<size_t>(axis)]; }
  const std::vector<int>& grid_shape() const noexcept { return grid_shape_; }
  const std::vector<int>& grid_ranks() const noexcept { return grid_ranks_; }
  /// The rank at a grid position (ndim() entries). Throws nothing.
  /// @pre every coordinate inside grid_shape() and grid_ranks() of prod(grid_shape()) entries (not checked)
  int grid_rank(const int* position) const;
  /// The owner of a block (ndim() block coordinates). Throws nothing.
  /// @pre every coordinate inside the axis's blocks, and the global description valid (validate_global)
  int owner(const std::int64_t* block) const;
  const std::vector<int>& packing_order() const noexcept { return packing_order_; }
  /// Largest rank that owns a block, + 1. Throws nothing.
  int ranks_needed() const;

  /// ---- local storage (this rank) ----
  int my_rank() const noexcept { return my_rank_; }
  storage_kind kind() const noexcept { return kind_; }
  /// Regular storage: the local start of each block along `axis`. Throws nothing.
  /// @pre axis in [0, ndim()), and regular storage or local starts given to the constructor (not checked)
  const std::vector<std::int64_t>& local_start(int axis) const { return local_start_[static_cast<size_t>(axis)]; }
  const std::vector<std::int64_t>& local_strides() const noexcept { return local_strides_; }
  const std::vector<nd_local_block>& local_blocks() const noexcept { return local_blocks_; }
  /// Elements the local buffer must hold (largest offset + 1 over this rank's elements; 0 when it has none).
  /// @pre validate_global and validate_local pass (block coordinates and local starts are not checked here)
  /// @throws overflow_error the size does not fit in 64 bits
  std::int64_t local_elements() const;
  /// Grid positions held by this rank, each ndim() entries (none when my_rank() < 0). Throws nothing.
  std::vector<std::vector<int>> my_positions() const;

  /// ---- derived layouts ----
  /// The same data and memory seen with its axes permuted: axis i of the result is axis axes[i] of this layout.
  /// @pre validate_global passes, and each local block has ndim() coordinates and strides (as validate_local checks)
  /// @throws invalid_argument axes not a permutation of 0..ndim()-1
  nd_layout permuted(const std::vector<int>& axes) const;
  /// Owners relabeled: rank r becomes new_rank_of[r]. Local storage is rebuilt for my_rank in the relabeled
  /// layout: regular layouts keep their local starts, with dense strides in packing order; explicit layouts store
  /// their blocks one after another, each dense in packing order. The new ranks are not checked here
  /// (validate_global checks the result).
  /// @pre validate_global passes; regular storage: one local start per block and axis (as validate_local checks)
  /// @throws invalid_argument an owner rank of the layout outside [0, new_rank_of.size())
  /// @throws overflow_error the rebuilt local storage does not fit in 64 bits
  nd_layout relabeled(const std::vector<int>& new_rank_of) const;

  /// ---- validation ----
  /// Checks the global description; comm_size bounds the owner ranks.
  /// @throws invalid_layout not 1 to max_axes axes; procs, grid_shape or packing_order without one entry per axis;
  ///   splits that do not start at 0 or do not increase; procs without one entry per block or with an entry outside
  ///   the grid; a negative grid_shape entry; grid_ranks without one entry per grid position or with a rank outside
  ///   [0, comm_size); packing_order not a permutation of the axes
  /// @throws overflow_error the number of grid positions does not fit in 64 bits
  void validate_global(int comm_size) const;
  /// Checks this rank's storage against the global description (blocks that overlap in memory, strides that
  /// are not positive, a block listed twice or not owned by this rank). Nothing when my_rank() < 0.
  /// @pre validate_global passes
  /// @throws invalid_layout regular storage: local starts without one entry per axis and block, strides without
  ///   one positive entry per axis, a negative local start, blocks overlapping in local indices, strides that map
  ///   distinct indices to one element; explicit storage: a block without ndim() coordinates, outside the block
  ///   grid or owned by another rank, a negative offset, bad or aliasing strides, blocks sharing memory, a block
  ///   listed twice, or an owned block not listed
  /// @throws overflow_error a local size does not fit in 64 bits
  void validate_local() const;
  /// 64-bit hash of the global description (for the collective consistency check). Throws nothing.
  std::uint64_t global_hash() const;
  /// Short human-readable summary ("64x64x64 in 2x2x2 blocks on a 2x2x2 grid"). Throws nothing.
  /// @pre grid_shape() has ndim() entries (validate_global checks it)
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
/// Throws nothing.
nd_layout to_nd_layout(const grid_layout& l);

}  // namespace redist
