#pragma once
// Internal representation of a transform plan (not part of the public API; shared by the planner and
// the executors in src/transform/).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "../../layout/indices.hpp"
#include "redist/layout/grid_layout.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/transform/types.hpp"

namespace redist::detail {

// A maximal 1-D run of consecutive rows (or columns) of a tile that is contiguous in the local storage
// of the side(s) that touch it. `packed` is the run's first index inside the packed tile.
struct run {
  local_index a_local;  // first local index in A's storage (receiver / local tiles)
  local_index b_local;  // first local index in op(B)'s storage (sender / local tiles)
  std::int64_t packed = 0;
  std::int64_t length = 0;
  block_index a_block;  // block row/column of A the run lies in (explicit storage lookup)
  block_index b_block;  // block row/column of op(B) the run lies in
};

// Where one rectangle of a layout lives: offset from the job's base pointer and strides.
struct placement {
  std::int64_t offset = 0;
  kernels::strided strides{1, 1};
};

// One side's view of its local storage, for address computation at execution.
struct storage_view {
  storage_kind kind = storage_kind::regular;
  kernels::strided strides{1, 1};                          // regular storage
  std::unordered_map<std::uint64_t, placement> blocks;     // explicit storage: block_key -> placement
  std::int64_t block_cols = 0;
  std::uint64_t block_key(block_index block_row, block_index block_col) const {
    return static_cast<std::uint64_t>(block_row.value()) * static_cast<std::uint64_t>(block_cols) +
           static_cast<std::uint64_t>(block_col.value());
  }
  // The element (local_row, local_col) of block (block_row, block_col): explicit storage numbers local indices
  // from the block's first element, regular storage from the local array's.
  placement at(block_index block_row, block_index block_col, local_index local_row, local_index local_col) const;
};

// A rectangle of A moved from one rank to another (or within a rank): rows x cols in A's coordinates,
// packed (when it travels) in op(B)'s orientation and op(B)'s packing order.
struct tile {
  int job = 0;
  std::int64_t rows = 0, cols = 0;
  std::int64_t byte_offset = 0;  // inside the peer's message
  std::vector<run> row_runs, col_runs;
};

struct peer_message {
  int rank = 0;
  std::int64_t bytes = 0;
  std::int64_t byte_offset = 0;  // inside the rank's whole send (or receive) buffer
  std::vector<tile> tiles;
};

struct job_plan {
  op operation = op::identity;
  element_type type = element_type::f64;
  std::size_t elem_size = 8;
  storage_view a_view;       // A's storage on this rank
  storage_view b_view;       // op(B)'s storage on this rank (already transposed when op != identity)
  storage_order packed_order = storage_order::col_major;  // op(B)'s packing order
  storage_order a_order = storage_order::col_major;       // A's (predominant) storage order
};

}  // namespace redist::detail
