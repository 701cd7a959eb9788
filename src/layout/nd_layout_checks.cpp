// SPDX-License-Identifier: BSD-3-Clause
// N-d layouts (redist/layout/nd_layout.hpp): validation, hashing, relabeling, local sizes and comparison, modelled
// on grid_layout's (grid_layout.cpp).
#include <algorithm>
#include <sstream>
#include <utility>

#include "field_hash.hpp"
#include "nd_storage.hpp"
#include "redist/error.hpp"
#include "redist/layout/nd_layout.hpp"

namespace redist {

using detail::checked_add;
using detail::checked_mul;

namespace {

// How messages name an axis: the two axes of a 2-D layout (a matrix, and grid_layout's view) also by their
// matrix names, so that ScaLAPACK-style callers read rows and columns.
std::string axis_name(size_t axis, size_t ndim) {
  std::string s = "axis " + std::to_string(axis);
  if (ndim == 2) s += axis == 0 ? " (rows)" : " (columns)";
  return s;
}

std::string coords(const std::vector<std::int64_t>& c) {
  std::string s = "(";
  for (size_t k = 0; k < c.size(); ++k) s += (k ? "," : "") + std::to_string(c[k]);
  return s + ")";
}

std::int64_t block_extent(const nd_layout& l, int axis, std::int64_t b) {
  const auto& s = l.splits(axis);
  return s[static_cast<size_t>(b) + 1] - s[static_cast<size_t>(b)];
}

std::vector<std::int64_t> block_extents(const nd_layout& l, const std::vector<std::int64_t>& block) {
  std::vector<std::int64_t> e;
  for (int k = 0; k < l.ndim(); ++k) e.push_back(block_extent(l, k, block[static_cast<size_t>(k)]));
  return e;
}

// The blocks along `axis` dealt to grid coordinate `coord`.
std::vector<std::int64_t> blocks_of(const nd_layout& l, int axis, int coord) {
  std::vector<std::int64_t> out;
  const auto& p = l.procs(axis);
  for (size_t b = 0; b < p.size(); ++b)
    if (p[b] == coord) out.push_back(static_cast<std::int64_t>(b));
  return out;
}

// The blocks of a grid position: per axis, the blocks dealt to its coordinate. The position holds elements only
// when no axis's list is empty.
std::vector<std::vector<std::int64_t>> blocks_of(const nd_layout& l, const std::vector<int>& position) {
  std::vector<std::vector<std::int64_t>> per_axis;
  for (int k = 0; k < l.ndim(); ++k) per_axis.push_back(blocks_of(l, k, position[static_cast<size_t>(k)]));
  return per_axis;
}

bool holds_elements(const std::vector<std::vector<std::int64_t>>& per_axis) {
  return std::none_of(per_axis.begin(), per_axis.end(), [](const auto& v) { return v.empty(); });
}

// Calls f(block) for every block of the product of per_axis (C order); stops when f returns false.
template <class F>
void for_each_block(const std::vector<std::vector<std::int64_t>>& per_axis, F f) {
  if (!holds_elements(per_axis)) return;
  const size_t d = per_axis.size();
  std::vector<size_t> i(d, 0);
  std::vector<std::int64_t> block(d);
  for (;;) {
    for (size_t k = 0; k < d; ++k) block[k] = per_axis[k][i[k]];
    if (!f(block)) return;
    size_t k = d;
    while (k-- > 0 && ++i[k] == per_axis[k].size()) i[k] = 0;
    if (k == static_cast<size_t>(-1)) return;
  }
}

// Regular storage: the local extent along each axis, the largest local end over the blocks of this rank's
// positions that hold elements (as layout_dimension::local_extent_of); all 0 when the rank holds nothing.
std::vector<std::int64_t> regular_local_extents(const nd_layout& l) {
  std::vector<std::int64_t> ext(static_cast<size_t>(l.ndim()), 0);
  for (const auto& pos : l.my_positions()) {
    const auto per_axis = blocks_of(l, pos);
    if (!holds_elements(per_axis)) continue;
    for (int k = 0; k < l.ndim(); ++k)
      for (std::int64_t b : per_axis[static_cast<size_t>(k)])
        ext[static_cast<size_t>(k)] =
            std::max(ext[static_cast<size_t>(k)],
                     checked_add(l.local_start(k)[static_cast<size_t>(b)], block_extent(l, k, b), "local extent"));
  }
  return ext;
}

// Elements from the first to the last element of an array (0 when it has none).
std::int64_t span(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& strides) {
  std::int64_t last = 0;
  for (size_t k = 0; k < extents.size(); ++k) {
    if (extents[k] == 0) return 0;
    last = checked_add(last, checked_mul(extents[k] - 1, strides[k], "local array size"), "local array size");
  }
  return checked_add(last, 1, "local array size");
}

// Empty when positive strides map distinct indices of an array of these extents to distinct offsets: taken by
// increasing stride, each axis must step over the whole range of the axes before it. Axes of extent 1 are left
// out: their stride never multiplies a non-zero index.
std::string aliasing_error(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& strides) {
  std::vector<size_t> axes;
  for (size_t k = 0; k < extents.size(); ++k)
    if (extents[k] > 1) axes.push_back(k);
  std::sort(axes.begin(), axes.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  std::int64_t covered = 1;  // offsets the faster axes span, + 1
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = axes[i];
    if (strides[a] < covered)
      return "stride " + std::to_string(strides[a]) + " of " + axis_name(a, extents.size()) + " is smaller than the " +
             std::to_string(covered) + " elements " + axis_name(axes[i - 1], extents.size()) +
             " (and the faster axes) span, so distinct indices share memory";
    covered = checked_add(checked_mul(extents[a] - 1, strides[a], "local array size"), covered, "local array size");
  }
  return {};
}

std::string strides_error(const std::vector<std::int64_t>& strides, size_t ndim) {
  if (strides.size() != ndim)
    return std::to_string(strides.size()) + " strides given, expected one per axis (" + std::to_string(ndim) + ")";
  for (size_t k = 0; k < ndim; ++k)
    if (strides[k] <= 0)
      return "stride of " + axis_name(k, ndim) + " is " + std::to_string(strides[k]) + ", expected > 0";
  return {};
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Whether delta = sum_k t_k * stride_k for integers t_k in [lo_k, hi_k] (axes by decreasing stride): depth-first,
// each t_k limited to the values the faster axes can make up the rest of; at most a few per axis.
bool representable(std::int64_t delta, const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& lo,
                   const std::vector<std::int64_t>& hi, size_t axis) {
  if (axis == stride.size()) return delta == 0;
  std::int64_t rest_min = 0, rest_max = 0;
  for (size_t k = axis + 1; k < stride.size(); ++k) {
    rest_min += lo[k] * stride[k];
    rest_max += hi[k] * stride[k];
  }
  const std::int64_t s = stride[axis];
  const std::int64_t first = std::max(lo[axis], -floor_div(rest_max - delta, s));
  const std::int64_t last = std::min(hi[axis], floor_div(delta - rest_min, s));
  for (std::int64_t t = first; t <= last; ++t)
    if (representable(delta - t * s, stride, lo, hi, axis + 1)) return true;
  return false;
}

// Two blocks of equal strides share an element when a + i * s = b + j * s, i.e. b - a = (i - j) * s, for indices
// i, j within their extents.
bool share_memory(const nd_local_block& a, const std::vector<std::int64_t>& a_extents, const nd_local_block& b,
                  const std::vector<std::int64_t>& b_extents) {
  std::vector<size_t> axes(a.strides.size());
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = k;
  std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return a.strides[x] > a.strides[y]; });
  std::vector<std::int64_t> stride, lo, hi;
  for (size_t k : axes) {
    stride.push_back(a.strides[k]);
    lo.push_back(1 - b_extents[k]);
    hi.push_back(a_extents[k] - 1);
  }
  return representable(b.offset - a.offset, stride, lo, hi, 0);
}

}  // namespace

int nd_layout::ranks_needed() const {
  int m = 0;
  for (int r : grid_ranks_) m = std::max(m, r + 1);
  return m;
}

std::int64_t nd_layout::local_elements() const {
  if (kind_ == storage_kind::explicit_blocks) {
    std::int64_t need = 0;
    for (const auto& b : local_blocks_)
      need = std::max(need, checked_add(b.offset, span(block_extents(*this, b.block), b.strides), "local array size"));
    return need;
  }
  return span(regular_local_extents(*this), local_strides_);
}

nd_layout nd_layout::relabeled(const std::vector<int>& new_rank_of) const {
  std::vector<int> ranks = grid_ranks_;
  for (int& r : ranks) {
    if (r < 0 || static_cast<size_t>(r) >= new_rank_of.size())
      throw invalid_argument("relabeling has " + std::to_string(new_rank_of.size()) +
                             " entries but the layout uses rank " + std::to_string(r));
    r = new_rank_of[static_cast<size_t>(r)];
  }
  nd_layout out(splits_, procs_, grid_shape_, std::move(ranks), packing_order_, kind_, local_start_, {}, {}, my_rank_);
  if (kind_ == storage_kind::regular) {
    out.local_strides_ = detail::dense_strides(regular_local_extents(out), packing_order_);
    return out;
  }
  std::int64_t offset = 0;
  for (const auto& pos : out.my_positions())
    for_each_block(blocks_of(out, pos), [&](const std::vector<std::int64_t>& block) {
      const auto extents = block_extents(out, block);
      nd_local_block b{block, offset, detail::dense_strides(extents, packing_order_)};
      offset = checked_add(offset, span(extents, b.strides), "relabeled local storage");
      out.local_blocks_.push_back(std::move(b));
      return true;
    });
  return out;
}

void nd_layout::validate_global(int comm_size) const {
  const int d = ndim();
  if (d < 1 || d > max_axes)
    throw invalid_layout("an N-d layout needs 1 to " + std::to_string(max_axes) + " axes, got " + std::to_string(d));
  const auto count = [&](size_t n, const char* what) {
    if (n != static_cast<size_t>(d))
      throw invalid_layout(std::string(what) + " has " + std::to_string(n) + " entries, expected one per axis (" +
                           std::to_string(d) + ")");
  };
  count(procs_.size(), "procs");
  count(grid_shape_.size(), "grid_shape");
  count(packing_order_.size(), "packing_order");
  std::int64_t positions = 1;
  for (int k = 0; k < d; ++k) {
    const std::string axis = axis_name(static_cast<size_t>(k), static_cast<size_t>(d)) + ": ";
    const auto& s = splits_[static_cast<size_t>(k)];
    if (s.empty() || s.front() != 0)
      throw invalid_layout(axis + "splits must start at 0, got " + (s.empty() ? "none" : std::to_string(s.front())));
    for (size_t i = 1; i < s.size(); ++i)
      if (s[i] <= s[i - 1])
        throw invalid_layout(axis + "splits must increase; splits[" + std::to_string(i) +
                             "] = " + std::to_string(s[i]) + " after splits[" + std::to_string(i - 1) +
                             "] = " + std::to_string(s[i - 1]));
    const auto& p = procs_[static_cast<size_t>(k)];
    if (static_cast<std::int64_t>(p.size()) != blocks(k))
      throw invalid_layout(axis + "procs has " + std::to_string(p.size()) + " entries, expected one per block (" +
                           std::to_string(blocks(k)) + ")");
    const int g = grid_shape_[static_cast<size_t>(k)];
    if (g < 0) throw invalid_layout(axis + "grid_shape is " + std::to_string(g) + ", expected >= 0");
    for (size_t b = 0; b < p.size(); ++b)
      if (p[b] < 0 || p[b] >= g)
        throw invalid_layout(axis + "procs[" + std::to_string(b) + "] = " + std::to_string(p[b]) +
                             " is outside the grid's " + std::to_string(g) + " positions along this axis");
    positions = checked_mul(positions, g, "process grid size");
  }
  if (static_cast<std::int64_t>(grid_ranks_.size()) != positions)
    throw invalid_layout("grid_ranks has " + std::to_string(grid_ranks_.size()) +
                         " entries, expected one per grid "
                         "position (" +
                         std::to_string(positions) + ")");
  for (size_t i = 0; i < grid_ranks_.size(); ++i)
    if (grid_ranks_[i] < 0 || grid_ranks_[i] >= comm_size)
      throw invalid_layout("owner rank " + std::to_string(grid_ranks_[i]) + " at grid position " + std::to_string(i) +
                           " (C order) is outside the communicator of " + std::to_string(comm_size) + " ranks");
  std::vector<bool> seen(static_cast<size_t>(d), false);
  for (int a : packing_order_) {
    if (a < 0 || a >= d || seen[static_cast<size_t>(a)])
      throw invalid_layout("packing_order must be a permutation of the axes 0.." + std::to_string(d - 1) + "; axis " +
                           std::to_string(a) + " is out of range or repeated");
    seen[static_cast<size_t>(a)] = true;
  }
}

// Assumes validate_global passed (the planner checks the global description first).
void nd_layout::validate_local() const {
  if (my_rank_ < 0) return;
  const int d = ndim();
  const std::string on = " on rank " + std::to_string(my_rank_);
  if (kind_ == storage_kind::regular) {
    if (local_start_.size() != static_cast<size_t>(d))
      throw invalid_layout("regular storage" + on + " has local starts for " + std::to_string(local_start_.size()) +
                           " axes, expected " + std::to_string(d));
    for (int k = 0; k < d; ++k)
      if (static_cast<std::int64_t>(local_start(k).size()) != blocks(k))
        throw invalid_layout(axis_name(static_cast<size_t>(k), static_cast<size_t>(d)) + ": regular storage" + on +
                             " has " + std::to_string(local_start(k).size()) +
                             " local starts, expected one per block (" + std::to_string(blocks(k)) + ")");
    if (auto e = strides_error(local_strides_, static_cast<size_t>(d)); !e.empty())
      throw invalid_layout("regular storage" + on + ": " + e);
    // Along each axis, the blocks of the coordinates this rank holds must lie at distinct local indices; then no
    // two of its blocks share local indices (a condition stricter than needed only for ranks holding positions
    // that differ on several axes).
    std::vector<std::vector<bool>> coord_held(static_cast<size_t>(d));
    for (int k = 0; k < d; ++k) coord_held[static_cast<size_t>(k)].assign(static_cast<size_t>(grid_shape_[k]), false);
    for (const auto& pos : my_positions())
      if (holds_elements(blocks_of(*this, pos)))
        for (int k = 0; k < d; ++k) coord_held[static_cast<size_t>(k)][static_cast<size_t>(pos[k])] = true;
    for (int k = 0; k < d; ++k) {
      std::vector<std::pair<std::int64_t, std::int64_t>> starts;  // local start, block
      for (std::int64_t b = 0; b < blocks(k); ++b) {
        if (!coord_held[static_cast<size_t>(k)][static_cast<size_t>(procs(k)[static_cast<size_t>(b)])]) continue;
        const std::int64_t s = local_start(k)[static_cast<size_t>(b)];
        if (s < 0)
          throw invalid_layout(axis_name(static_cast<size_t>(k), static_cast<size_t>(d)) + ": local start of block " +
                               std::to_string(b) + on + " is " + std::to_string(s) + ", expected >= 0");
        starts.emplace_back(s, b);
      }
      std::sort(starts.begin(), starts.end());
      for (size_t i = 1; i < starts.size(); ++i) {
        const auto [s0, b0] = starts[i - 1];
        const auto [s1, b1] = starts[i];
        if (s1 < s0 + block_extent(*this, k, b0))
          throw invalid_layout(axis_name(static_cast<size_t>(k), static_cast<size_t>(d)) + ": blocks " +
                               std::to_string(b0) + " and " + std::to_string(b1) + on + " overlap in local indices: [" +
                               std::to_string(s0) + ", " + std::to_string(s0 + block_extent(*this, k, b0)) + ") and [" +
                               std::to_string(s1) + ", ...); expected disjoint local ranges");
      }
    }
    if (auto e = aliasing_error(regular_local_extents(*this), local_strides_); !e.empty())
      throw invalid_layout("regular storage" + on + ": " + e);
    return;
  }
  // Explicit blocks: exactly the blocks this rank owns, each once, each non-aliasing, none sharing memory.
  std::vector<std::vector<std::int64_t>> listed;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;  // [offset, end) of each block
  for (const auto& b : local_blocks_) {
    if (b.block.size() != static_cast<size_t>(d))
      throw invalid_layout("a local block" + on + " has " + std::to_string(b.block.size()) + " coordinates, expected " +
                           std::to_string(d));
    const std::string where = "local block " + coords(b.block) + on;
    for (int k = 0; k < d; ++k)
      if (b.block[static_cast<size_t>(k)] < 0 || b.block[static_cast<size_t>(k)] >= blocks(k))
        throw invalid_layout(where + ": coordinate " + std::to_string(k) + " is outside the " +
                             std::to_string(blocks(k)) + " blocks of " +
                             axis_name(static_cast<size_t>(k), static_cast<size_t>(d)));
    if (owner(b.block.data()) != my_rank_)
      throw invalid_layout(where + " is owned by rank " + std::to_string(owner(b.block.data())));
    if (b.offset < 0) throw invalid_layout(where + " has negative offset " + std::to_string(b.offset));
    if (auto e = strides_error(b.strides, static_cast<size_t>(d)); !e.empty()) throw invalid_layout(where + ": " + e);
    const auto extents = block_extents(*this, b.block);
    if (auto e = aliasing_error(extents, b.strides); !e.empty()) throw invalid_layout(where + ": " + e);
    spans.emplace_back(b.offset, checked_add(b.offset, span(extents, b.strides), "local array size"));
    listed.push_back(b.block);
  }
  // A block listed twice would also share memory with itself: say what is wrong first.
  std::sort(listed.begin(), listed.end());
  for (size_t i = 1; i < listed.size(); ++i)
    if (listed[i] == listed[i - 1]) throw invalid_layout("local block " + coords(listed[i]) + " is listed twice" + on);
  // Blocks whose spans overlap share memory unless they interleave: decided exactly for blocks of equal strides
  // (the cells of one strided array, as box_layout makes them), conservatively (as overlapping) otherwise.
  std::vector<size_t> by_offset(spans.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  for (size_t i = 0; i < by_offset.size(); ++i)
    for (size_t j = i + 1; j < by_offset.size() && spans[by_offset[j]].first < spans[by_offset[i]].second; ++j) {
      const nd_local_block& a = local_blocks_[by_offset[i]];
      const nd_local_block& b = local_blocks_[by_offset[j]];
      if (a.strides == b.strides && !share_memory(a, block_extents(*this, a.block), b, block_extents(*this, b.block)))
        continue;
      throw invalid_layout(
          "local blocks " + coords(a.block) + " and " + coords(b.block) + on + " overlap in memory (elements [" +
          std::to_string(spans[by_offset[i]].first) + ", " + std::to_string(spans[by_offset[i]].second) + ") and [" +
          std::to_string(spans[by_offset[j]].first) + ", " + std::to_string(spans[by_offset[j]].second) + "))");
    }
  // Every listed block is owned and distinct, so all owned blocks are listed iff the counts agree; the missing
  // one is looked for only then.
  std::int64_t owned = 0;
  for (const auto& pos : my_positions()) {
    std::int64_t n = 1;
    for (const auto& axis_blocks : blocks_of(*this, pos)) n *= static_cast<std::int64_t>(axis_blocks.size());
    owned += n;
  }
  if (owned == static_cast<std::int64_t>(listed.size())) return;
  for (const auto& pos : my_positions())
    for_each_block(blocks_of(*this, pos), [&](const std::vector<std::int64_t>& block) {
      if (std::binary_search(listed.begin(), listed.end(), block)) return true;
      throw invalid_layout("rank " + std::to_string(my_rank_) + " owns block " + coords(block) +
                           " but does not list it among its local blocks");
    });
}

std::uint64_t nd_layout::global_hash() const {
  return field_hash().add_all(splits_, procs_, grid_shape_, grid_ranks_, packing_order_).value();
}

std::string nd_layout::describe() const {
  std::ostringstream s;
  const auto joined = [&](auto get) {
    for (int k = 0; k < ndim(); ++k) s << (k ? "x" : "") << get(k);
  };
  const auto sh = shape();
  joined([&](int k) { return sh[static_cast<size_t>(k)]; });
  s << " in ";
  joined([&](int k) { return blocks(k); });
  s << " blocks on a ";
  joined([&](int k) { return grid_shape_[static_cast<size_t>(k)]; });
  s << " grid";
  return s.str();
}

// The global description, as grid_layout's ==: local storage differs from rank to rank.
bool operator==(const nd_layout& a, const nd_layout& b) {
  return a.splits_ == b.splits_ && a.procs_ == b.procs_ && a.grid_shape_ == b.grid_shape_ &&
         a.grid_ranks_ == b.grid_ranks_ && a.packing_order_ == b.packing_order_;
}

}  // namespace redist
