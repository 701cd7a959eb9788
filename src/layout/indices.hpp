// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) Typed indices for the layout and transform cores. A row or column index names its numbering: the
// whole matrix's elements, a rank's local storage, or a layout's block grid. Moving along one numbering is index
// + count and index - index = count; mixing numberings does not compile, and crossing from one to another is
// spelled out (value()), where the formula that crosses is. Zero cost: one int64 each.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace redist::detail {

template <class Numbering>
class index_in {
 public:
  constexpr index_in() = default;
  constexpr explicit index_in(std::int64_t value) : value_(value) {}
  constexpr std::int64_t value() const { return value_; }

  friend constexpr index_in operator+(index_in i, std::int64_t count) { return index_in(i.value_ + count); }
  friend constexpr index_in operator-(index_in i, std::int64_t count) { return index_in(i.value_ - count); }
  friend constexpr std::int64_t operator-(index_in a, index_in b) { return a.value_ - b.value_; }
  constexpr index_in& operator+=(std::int64_t count) {
    value_ += count;
    return *this;
  }
  constexpr index_in& operator++() {
    ++value_;
    return *this;
  }
  friend constexpr bool operator==(index_in a, index_in b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(index_in a, index_in b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(index_in a, index_in b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(index_in a, index_in b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(index_in a, index_in b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(index_in a, index_in b) { return a.value_ >= b.value_; }

 private:
  std::int64_t value_ = 0;
};

struct global_elements;  // rows (columns) of the whole matrix, 0-based
struct local_elements;   // rows (columns) of one rank's local storage of a layout
struct grid_blocks;      // block rows (columns) of a layout's block grid

using global_index = index_in<global_elements>;
using local_index = index_in<local_elements>;
using block_index = index_in<grid_blocks>;

// One dimension (rows or columns) of a grid layout, read through typed indices: where each block starts and ends
// globally, which process-grid row (column) owns it, and, for regular storage, where it starts in the local array.
class layout_dimension {
 public:
  // splits: blocks + 1 global starts; procs: the owner's grid row (column) per block; local_start: per block
  // (regular storage; empty otherwise). The vectors must outlive the view.
  layout_dimension(const std::vector<std::int64_t>& splits, const std::vector<int>& procs,
                   const std::vector<std::int64_t>& local_start)
      : splits_(&splits), procs_(&procs), local_start_(&local_start) {}

  std::int64_t blocks() const { return static_cast<std::int64_t>(procs_->size()); }
  global_index first(block_index b) const { return global_index((*splits_)[at(b)]); }
  std::int64_t extent(block_index b) const { return (*splits_)[at(b) + 1] - (*splits_)[at(b)]; }
  int proc(block_index b) const { return (*procs_)[at(b)]; }
  local_index local_first(block_index b) const { return local_index((*local_start_)[at(b)]); }
  local_index local_end(block_index b) const { return local_first(b) + extent(b); }
  // Regular storage: the local extent grid row (column) `proc` needs, the largest local end of its blocks (0 when
  // it holds none).
  std::int64_t local_extent_of(int proc) const {
    local_index end;
    for (block_index b(0); b.value() < blocks(); ++b)
      if (this->proc(b) == proc) end = std::max(end, local_end(b));
    return end.value();
  }

 private:
  static std::size_t at(block_index b) { return static_cast<std::size_t>(b.value()); }
  const std::vector<std::int64_t>* splits_;
  const std::vector<int>* procs_;
  const std::vector<std::int64_t>* local_start_;
};

}  // namespace redist::detail
