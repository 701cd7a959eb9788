// SPDX-License-Identifier: BSD-3-Clause
// Builders of N-d layouts (redist/layout/nd_builders.hpp): block-cyclic on a d-dimensional grid, boxes, and the
// 3-D FFT decompositions. Arguments are global, so every rank throws the same error.
#include "redist/layout/nd_builders.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "nd_storage.hpp"
#include "redist/error.hpp"
#include "redist/layout/builders.hpp"

namespace redist {

using detail::checked_mul;

namespace {

std::string point(const std::vector<std::int64_t>& p) {
  std::string s = "(";
  for (size_t k = 0; k < p.size(); ++k) s += (k ? "," : "") + std::to_string(p[k]);
  return s + ")";
}

void check_ndim(size_t d, const std::string& who) {
  if (d < 1 || d > static_cast<size_t>(max_axes))
    throw invalid_argument(who + ": " + std::to_string(d) + " axes, expected 1 to " + std::to_string(max_axes));
}

void check_size(size_t n, size_t d, const std::string& who, const char* what) {
  if (n != d)
    throw invalid_argument(who + ": " + what + " has " + std::to_string(n) + " entries, expected one per axis (" +
                           std::to_string(d) + ")");
}

// The storage order: empty = C order, else a permutation of the axes.
std::vector<int> axis_order(const std::vector<int>& order, size_t d, const std::string& who) {
  if (order.empty()) return c_order(static_cast<int>(d));
  check_size(order.size(), d, who, "order");
  std::vector<bool> seen(d, false);
  for (int a : order) {
    if (a < 0 || static_cast<size_t>(a) >= d || seen[static_cast<size_t>(a)])
      throw invalid_argument(who + ": order must be a permutation of the axes 0.." + std::to_string(d - 1) + "; axis " +
                             std::to_string(a) + " is out of range or repeated");
    seen[static_cast<size_t>(a)] = true;
  }
  return order;
}

// Part i of an extent n cut into p parts, the first n % p parts one element longer: [lo, hi).
std::pair<std::int64_t, std::int64_t> part(std::int64_t n, std::int64_t p, std::int64_t i) {
  const std::int64_t lo = i * (n / p) + std::min(i, n % p);
  return {lo, lo + n / p + (i < n % p ? 1 : 0)};
}

// One box per rank: axis k cut into parts[k], ranks in C order over the parts (the last axis fastest).
std::vector<box> cut_boxes(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& parts,
                           const std::string& who) {
  std::int64_t n = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0)
      throw invalid_argument(who + ": shape[" + std::to_string(k) + "] = " + std::to_string(shape[k]) +
                             ", expected >= 0");
    if (parts[k] < 1)
      throw invalid_argument(who + ": axis " + std::to_string(k) + " cut into " + std::to_string(parts[k]) +
                             " parts, expected >= 1");
    n = checked_mul(n, parts[k], "number of boxes");
  }
  if (n > INT_MAX) throw invalid_argument(who + ": " + std::to_string(n) + " boxes, more than ranks can number");
  std::vector<box> boxes(static_cast<size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    box& b = boxes[static_cast<size_t>(r)];
    b.lo.resize(shape.size());
    b.hi.resize(shape.size());
    std::int64_t rest = r;
    for (size_t k = shape.size(); k-- > 0;) {
      std::tie(b.lo[k], b.hi[k]) = part(shape[k], parts[k], rest % parts[k]);
      rest /= parts[k];
    }
  }
  return boxes;
}

// Calls f(cell) for every cell of the product of [lo[k], hi[k]) (block coordinates, C order).
template <class F>
void for_each_cell(const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& hi, F f) {
  const size_t d = lo.size();
  for (size_t k = 0; k < d; ++k)
    if (lo[k] >= hi[k]) return;
  std::vector<std::int64_t> c = lo;
  for (;;) {
    f(c);
    size_t k = d;
    while (k-- > 0 && ++c[k] == hi[k]) c[k] = lo[k];
    if (k == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

std::int64_t box::elements() const {
  if (lo.size() != hi.size())
    throw invalid_argument("box has " + std::to_string(lo.size()) + " lower and " + std::to_string(hi.size()) +
                           " upper bounds, expected as many");
  for (size_t k = 0; k < lo.size(); ++k)
    if (hi[k] < lo[k])
      throw invalid_argument("box axis " + std::to_string(k) + ": hi = " + std::to_string(hi[k]) +
                             " < lo = " + std::to_string(lo[k]) + ", expected lo <= hi");
  // An empty axis first: a product of huge extents with one zero is 0, not an overflow.
  for (size_t k = 0; k < lo.size(); ++k)
    if (hi[k] == lo[k]) return 0;
  std::int64_t n = 1;
  for (size_t k = 0; k < lo.size(); ++k) n = checked_mul(n, hi[k] - lo[k], "box size");
  return n;
}

nd_layout block_cyclic_nd(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& block,
                          const std::vector<int>& grid, int my_rank, const std::vector<int>& order,
                          const std::vector<int>& grid_ranks) {
  const std::string who = "block_cyclic_nd";
  const size_t d = shape.size();
  check_ndim(d, who);
  check_size(block.size(), d, who, "block");
  check_size(grid.size(), d, who, "grid");
  const std::vector<int> storage = axis_order(order, d, who);
  std::int64_t positions = 1;
  for (size_t k = 0; k < d; ++k) {
    const std::string axis = who + ": axis " + std::to_string(k) + ": ";
    if (shape[k] < 0) throw invalid_argument(axis + "extent " + std::to_string(shape[k]) + ", expected >= 0");
    if (block[k] < 1) throw invalid_argument(axis + "block " + std::to_string(block[k]) + ", expected >= 1");
    if (grid[k] < 1) throw invalid_argument(axis + "grid " + std::to_string(grid[k]) + ", expected >= 1");
    positions = checked_mul(positions, grid[k], "process grid size");
  }
  std::vector<int> ranks = grid_ranks;
  if (ranks.empty()) {
    if (positions > INT_MAX)
      throw invalid_argument(who + ": a grid of " + std::to_string(positions) +
                             " positions, more than ranks can number");
    ranks.resize(static_cast<size_t>(positions));
    std::iota(ranks.begin(), ranks.end(), 0);
  } else if (static_cast<std::int64_t>(ranks.size()) != positions) {
    throw invalid_argument(who + ": grid_ranks has " + std::to_string(ranks.size()) +
                           " entries, expected one per grid "
                           "position (" +
                           std::to_string(positions) + ")");
  }
  // One local array per rank is one grid position per rank: a rank listed twice would alias its own blocks.
  std::vector<std::pair<int, size_t>> by_rank;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0)
      throw invalid_argument(who + ": grid_ranks[" + std::to_string(i) + "] = " + std::to_string(ranks[i]) +
                             ", expected >= 0");
    by_rank.emplace_back(ranks[i], i);
  }
  std::sort(by_rank.begin(), by_rank.end());
  for (size_t i = 1; i < by_rank.size(); ++i)
    if (by_rank[i].first == by_rank[i - 1].first)
      throw invalid_argument(who + ": rank " + std::to_string(by_rank[i].first) + " is at grid positions " +
                             std::to_string(by_rank[i - 1].second) + " and " + std::to_string(by_rank[i].second) +
                             " (C order); expected each rank at most once");

  std::vector<std::vector<std::int64_t>> splits(d), local_start(d);
  std::vector<std::vector<int>> procs(d);
  for (size_t k = 0; k < d; ++k) {
    splits[k].push_back(0);
    for (std::int64_t b = 0; splits[k].back() < shape[k]; ++b) {
      procs[k].push_back(static_cast<int>(b % grid[k]));
      local_start[k].push_back(b / grid[k] * block[k]);
      splits[k].push_back(shape[k] - splits[k].back() > block[k] ? splits[k].back() + block[k] : shape[k]);
    }
  }
  // This rank's local extents (zero when it is on no grid position): the elements its coordinates hold.
  std::vector<std::int64_t> extents(d, 0);
  const auto mine = std::find(ranks.begin(), ranks.end(), my_rank);
  if (mine != ranks.end()) {
    std::int64_t rest = mine - ranks.begin();
    for (size_t k = d; k-- > 0;) {
      extents[k] = block_cyclic_local_count(shape[k], block[k], block[k], static_cast<int>(rest % grid[k]), 0, grid[k]);
      rest /= grid[k];
    }
  }
  auto strides = detail::dense_strides(extents, storage);
  return nd_layout(std::move(splits), std::move(procs), grid, std::move(ranks), storage, storage_kind::regular,
                   std::move(local_start), std::move(strides), {}, my_rank);
}

nd_layout box_layout(const std::vector<std::vector<box>>& boxes_of_rank, int my_rank, const std::vector<int>& order,
                     const std::vector<int>& packing_order) {
  const std::string who = "box_layout";
  // The number of axes is the first box's; every box must agree and be well formed.
  const box* first = nullptr;
  for (size_t r = 0; r < boxes_of_rank.size(); ++r)
    for (size_t i = 0; i < boxes_of_rank[r].size(); ++i) {
      const box& b = boxes_of_rank[r][i];
      if (!first) first = &b;
      const std::string which = who + ": box " + std::to_string(i) + " of rank " + std::to_string(r);
      if (b.lo.size() != first->lo.size() || b.hi.size() != first->lo.size())
        throw invalid_argument(which + " has " + std::to_string(b.lo.size()) + " lower and " +
                               std::to_string(b.hi.size()) + " upper bounds, expected " +
                               std::to_string(first->lo.size()) + " (the first box's axes)");
      for (size_t k = 0; k < b.lo.size(); ++k)
        if (b.lo[k] < 0 || b.hi[k] < b.lo[k])
          throw invalid_argument(which + ": axis " + std::to_string(k) + " is [" + std::to_string(b.lo[k]) + ", " +
                                 std::to_string(b.hi[k]) + "), expected 0 <= lo <= hi");
    }
  if (!first) throw invalid_argument(who + ": no boxes; expected at least one (its size gives the number of axes)");
  const size_t d = first->lo.size();
  check_ndim(d, who);
  const std::vector<int> storage = axis_order(order, d, who);
  const std::vector<int> packing =
      packing_order.empty() ? storage : axis_order(packing_order, d, who + " packing_order");

  // Splits: every bound of a non-empty box, plus 0; the largest bound is the extent.
  std::vector<std::vector<std::int64_t>> splits(d, std::vector<std::int64_t>{0});
  for (const auto& boxes : boxes_of_rank)
    for (const box& b : boxes)
      if (!b.empty())
        for (size_t k = 0; k < d; ++k) {
          splits[k].push_back(b.lo[k]);
          splits[k].push_back(b.hi[k]);
        }
  std::vector<std::int64_t> cells_shape(d);
  std::int64_t cells = 1;
  for (size_t k = 0; k < d; ++k) {
    std::sort(splits[k].begin(), splits[k].end());
    splits[k].erase(std::unique(splits[k].begin(), splits[k].end()), splits[k].end());
    cells_shape[k] = static_cast<std::int64_t>(splits[k].size()) - 1;
    cells = checked_mul(cells, cells_shape[k], "box_layout cells");
  }
  // A box's cells along axis k: the blocks between its bounds.
  const auto cell_range = [&](const box& b, std::vector<std::int64_t>& lo, std::vector<std::int64_t>& hi) {
    for (size_t k = 0; k < d; ++k) {
      lo[k] = std::lower_bound(splits[k].begin(), splits[k].end(), b.lo[k]) - splits[k].begin();
      hi[k] = std::lower_bound(splits[k].begin(), splits[k].end(), b.hi[k]) - splits[k].begin();
    }
  };
  const auto flat = [&](const std::vector<std::int64_t>& c) {
    std::int64_t f = 0;
    for (size_t k = 0; k < d; ++k) f = f * cells_shape[k] + c[k];
    return static_cast<size_t>(f);
  };
  const auto corner = [&](const std::vector<std::int64_t>& c) {
    std::vector<std::int64_t> p(d);
    for (size_t k = 0; k < d; ++k) p[k] = splits[k][static_cast<size_t>(c[k])];
    return p;
  };

  // Coverage, one cell at a time; along the way, whether each block's boxes share their lower bound per axis.
  std::vector<int> owner(static_cast<size_t>(cells), -1);
  std::vector<std::vector<std::int64_t>> block_lo(d);
  for (size_t k = 0; k < d; ++k) block_lo[k].assign(static_cast<size_t>(cells_shape[k]), -1);
  bool shared_lo = true;
  std::vector<std::int64_t> lo(d), hi(d);
  for (size_t r = 0; r < boxes_of_rank.size(); ++r)
    for (const box& b : boxes_of_rank[r]) {
      if (b.empty()) continue;
      cell_range(b, lo, hi);
      for (size_t k = 0; k < d; ++k)
        for (std::int64_t c = lo[k]; c < hi[k]; ++c) {
          std::int64_t& l = block_lo[k][static_cast<size_t>(c)];
          if (l >= 0 && l != b.lo[k]) shared_lo = false;
          l = b.lo[k];
        }
      for_each_cell(lo, hi, [&](const std::vector<std::int64_t>& c) {
        int& o = owner[flat(c)];
        if (o >= 0)
          throw invalid_layout(who + ": " +
                               (o == static_cast<int>(r)
                                    ? "two boxes of rank " + std::to_string(r)
                                    : "the boxes of ranks " + std::to_string(o) + " and " + std::to_string(r)) +
                               " overlap at point " + point(corner(c)) + "; expected disjoint boxes");
        o = static_cast<int>(r);
      });
    }
  std::vector<std::int64_t> all_lo(d, 0);
  for_each_cell(all_lo, cells_shape, [&](const std::vector<std::int64_t>& c) {
    if (owner[flat(c)] < 0)
      throw invalid_layout(who + ": point " + point(corner(c)) +
                           " is in no box; expected the boxes to cover the whole index space");
  });

  std::vector<std::vector<int>> procs(d);
  std::vector<int> grid_shape(d);
  for (size_t k = 0; k < d; ++k) {
    procs[k].resize(static_cast<size_t>(cells_shape[k]));
    std::iota(procs[k].begin(), procs[k].end(), 0);
    grid_shape[k] = static_cast<int>(cells_shape[k]);
  }
  std::vector<const box*> mine;
  if (my_rank >= 0 && static_cast<size_t>(my_rank) < boxes_of_rank.size())
    for (const box& b : boxes_of_rank[static_cast<size_t>(my_rank)])
      if (!b.empty()) mine.push_back(&b);
  // Storage is regular or explicit on all ranks alike, so that relabeled() can give any rank's boxes to any rank.
  bool one_box_each = true;
  for (const auto& boxes : boxes_of_rank)
    one_box_each =
        one_box_each && std::count_if(boxes.begin(), boxes.end(), [](const box& b) { return !b.empty(); }) <= 1;
  const auto extents_of = [&](const box& b) {
    std::vector<std::int64_t> e(d);
    for (size_t k = 0; k < d; ++k) e[k] = b.hi[k] - b.lo[k];
    return e;
  };

  // Regular storage when local indices are global knowledge: one box at most per rank, and every block's boxes
  // starting at the same bound, so that local index = global index - that bound.
  if (shared_lo && one_box_each) {
    std::vector<std::vector<std::int64_t>> local_start(d);
    for (size_t k = 0; k < d; ++k)
      for (std::int64_t c = 0; c < cells_shape[k]; ++c)
        local_start[k].push_back(splits[k][static_cast<size_t>(c)] - block_lo[k][static_cast<size_t>(c)]);
    auto strides =
        detail::dense_strides(mine.empty() ? std::vector<std::int64_t>(d, 0) : extents_of(*mine[0]), storage);
    return nd_layout(std::move(splits), std::move(procs), std::move(grid_shape), std::move(owner), packing,
                     storage_kind::regular, std::move(local_start), std::move(strides), {}, my_rank);
  }
  // Explicit: this rank's boxes one after another, each dense in the storage order; one block per cell.
  std::vector<nd_local_block> blocks;
  std::int64_t box_offset = 0;
  for (const box* b : mine) {
    const auto strides = detail::dense_strides(extents_of(*b), storage);
    const std::int64_t next = detail::checked_add(box_offset, b->elements(), "box_layout local storage");
    cell_range(*b, lo, hi);
    for_each_cell(lo, hi, [&](const std::vector<std::int64_t>& c) {
      std::int64_t offset = box_offset;
      for (size_t k = 0; k < d; ++k) offset += (splits[k][static_cast<size_t>(c[k])] - b->lo[k]) * strides[k];
      blocks.push_back({c, offset, strides});
    });
    box_offset = next;
  }
  return nd_layout(std::move(splits), std::move(procs), std::move(grid_shape), std::move(owner), packing,
                   storage_kind::explicit_blocks, {}, {}, std::move(blocks), my_rank);
}

nd_layout box_layout(const std::vector<box>& boxes, int my_rank, const std::vector<int>& order,
                     const std::vector<int>& packing_order) {
  std::vector<std::vector<box>> boxes_of_rank;
  for (const box& b : boxes) boxes_of_rank.push_back({b});
  return box_layout(boxes_of_rank, my_rank, order, packing_order);
}

std::vector<box> brick_boxes(const std::vector<std::int64_t>& shape, const std::vector<int>& grid) {
  if (shape.size() != 3 || grid.size() != 3)
    throw invalid_argument("brick_boxes: shape and grid have " + std::to_string(shape.size()) + " and " +
                           std::to_string(grid.size()) + " entries, expected 3 each (a 3-D array on a 3-D grid)");
  return cut_boxes(shape, {grid[0], grid[1], grid[2]}, "brick_boxes");
}

std::vector<box> pencil_boxes(const std::vector<std::int64_t>& shape, int axis, const std::vector<int>& grid) {
  if (shape.size() != 3 || grid.size() != 2)
    throw invalid_argument("pencil_boxes: shape and grid have " + std::to_string(shape.size()) + " and " +
                           std::to_string(grid.size()) + " entries, expected 3 and 2 (a 3-D array on a 2-D grid)");
  if (axis < 0 || axis > 2)
    throw invalid_argument("pencil_boxes: axis " + std::to_string(axis) + ", expected 0, 1 or 2");
  std::vector<std::int64_t> parts(3, 1);
  const int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;  // the cut axes, increasing
  parts[static_cast<size_t>(a)] = grid[0];
  parts[static_cast<size_t>(b)] = grid[1];
  return cut_boxes(shape, parts, "pencil_boxes");
}

std::vector<box> slab_boxes(const std::vector<std::int64_t>& shape, int split_axis, int nranks) {
  check_ndim(shape.size(), "slab_boxes");
  if (split_axis < 0 || static_cast<size_t>(split_axis) >= shape.size())
    throw invalid_argument("slab_boxes: split_axis " + std::to_string(split_axis) + ", expected 0.." +
                           std::to_string(shape.size() - 1));
  std::vector<std::int64_t> parts(shape.size(), 1);
  parts[static_cast<size_t>(split_axis)] = nranks;
  return cut_boxes(shape, parts, "slab_boxes");
}

}  // namespace redist
