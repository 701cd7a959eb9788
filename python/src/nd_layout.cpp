// SPDX-License-Identifier: BSD-3-Clause
// N-d layouts (redist::nd_layout) and their builders: block-cyclic on a d-dimensional grid, boxes, and the 3-D FFT
// decompositions.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "common.hpp"
#include "redist/layout/nd_builders.hpp"

namespace redist::python {

using namespace nb::literals;

namespace {
nb::object as_tuple(const std::vector<std::int64_t>& v) { return nb::steal(PySequence_Tuple(nb::cast(v).ptr())); }
nb::object as_tuple(const std::vector<int>& v) { return nb::steal(PySequence_Tuple(nb::cast(v).ptr())); }
nb::object box_tuple(const box& b) { return nb::make_tuple(as_tuple(b.lo), as_tuple(b.hi)); }
}  // namespace

nb::list box_list(const std::vector<box>& boxes) {
  nb::list out;
  for (const box& b : boxes) out.append(box_tuple(b));
  return out;
}

namespace {

// This rank's blocks: first global index, extents, offset and strides (elements) in its local storage.
struct placed_nd_block {
  std::vector<std::int64_t> lo, extents;
  std::int64_t offset = 0;
  std::vector<std::int64_t> strides;
};
std::vector<placed_nd_block> placed_blocks(const nd_layout& l) {
  const auto d = static_cast<std::size_t>(l.ndim());
  const auto place = [&](const std::vector<std::int64_t>& block, std::int64_t offset,
                         const std::vector<std::int64_t>& strides) {
    placed_nd_block p{{}, {}, offset, strides};
    for (std::size_t k = 0; k < d; ++k) {
      const auto& s = l.splits(static_cast<int>(k));
      const auto b = static_cast<std::size_t>(block[k]);
      p.lo.push_back(s[b]);
      p.extents.push_back(s[b + 1] - s[b]);
    }
    return p;
  };
  std::vector<placed_nd_block> out;
  if (l.kind() == storage_kind::explicit_blocks) {
    for (const nd_local_block& b : l.local_blocks()) out.push_back(place(b.block, b.offset, b.strides));
    return out;
  }
  for (const std::vector<int>& p : l.my_positions()) {
    // The blocks of one grid position: every combination of its blocks along each axis.
    std::vector<std::vector<std::int64_t>> along(d);
    for (std::size_t k = 0; k < d; ++k)
      for (std::int64_t b = 0; b < l.blocks(static_cast<int>(k)); ++b)
        if (l.procs(static_cast<int>(k))[static_cast<std::size_t>(b)] == p[k]) along[k].push_back(b);
    if (std::any_of(along.begin(), along.end(), [](const auto& a) { return a.empty(); })) continue;
    std::vector<std::size_t> i(d, 0);
    for (bool more = true; more;) {
      std::vector<std::int64_t> block(d);
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < d; ++k) {
        block[k] = along[k][i[k]];
        offset += l.local_start(static_cast<int>(k))[static_cast<std::size_t>(block[k])] * l.local_strides()[k];
      }
      out.push_back(place(block, offset, l.local_strides()));
      more = false;
      for (std::size_t k = d; k-- > 0;) {
        if (++i[k] < along[k].size()) {
          more = true;
          break;
        }
        i[k] = 0;
      }
    }
  }
  return out;
}

// A writable NumPy view of `count` elements of `array` from `offset`, with the given shape and strides.
nb::object view_into(const writable_array& a, nb::handle array, std::int64_t offset,
                     const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
  std::vector<std::size_t> extents(shape.begin(), shape.end());
  auto* first = static_cast<std::byte*>(a.data()) + static_cast<std::size_t>(offset) * a.itemsize();
  return nb::cast(nb::ndarray<nb::numpy>(first, extents.size(), extents.data(), array, strides.data(), a.dtype()));
}

// `array` as a writable array checked against this rank's local storage (its own dtype).
writable_array checked_local_array(const nd_layout& l, nb::handle array, const char* who) {
  writable_array a;
  if (!nb::try_cast(array, a)) throw nb::type_error((std::string(who) + " needs a writable NumPy array").c_str());
  const array_view v = view_of(a);
  check_local_nd_array(v, l, element_type_of(v, "array"), "array");
  return a;
}

}  // namespace

// order=: None (C order, the builders' default), 'C' (last axis fastest), 'F' (first axis fastest), or the axes
// fastest first.
std::vector<int> parse_axis_order(nb::handle order, int ndim) {
  if (order.is_none()) return {};
  if (nb::isinstance<nb::str>(order)) {
    const std::string s = nb::cast<std::string>(order);
    if (s == "C" || s == "c") return c_order(ndim);
    if (s == "F" || s == "f") return fortran_order(ndim);
    throw nb::value_error(("order '" + s + "': expected 'C', 'F' or a sequence of axes, fastest first").c_str());
  }
  return cast_argument<std::vector<int>>(order, "order", "'C', 'F' or a sequence of axes, fastest first");
}

namespace {
// A box from (lo, hi); nullopt when `value` is not one (it may be a list of boxes).
std::optional<box> box_of(nb::handle value) {
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> lo_hi;
  if (!nb::try_cast(value, lo_hi)) return std::nullopt;
  return box{std::move(lo_hi.first), std::move(lo_hi.second)};
}

}  // namespace

std::vector<box> boxes_of(nb::handle value, const std::string& where) {
  const auto refuse = [&] {
    return nb::type_error(
        (where + ": expected a box (lo, hi) or a list of boxes, got " + nb::cast<std::string>(nb::repr(value)))
            .c_str());
  };
  std::vector<box> boxes;
  std::vector<nb::object> items;
  if (std::optional<box> b = box_of(value)) return {std::move(*b)};
  if (!nb::try_cast(value, items)) throw refuse();
  for (const nb::object& item : items) {
    std::optional<box> b = box_of(item);
    if (!b) throw refuse();
    boxes.push_back(std::move(*b));
  }
  return boxes;
}

void register_nd_layout(nb::module_& m) {
  nb::class_<nd_layout>(m, "NdLayout",
                        "A distributed N-d array layout: its blocks along each axis, their owners on a grid of "
                        "positions, and how this rank stores its blocks. Build one with block_cyclic_nd or "
                        "box_layout.")
      .def_prop_ro("ndim", &nd_layout::ndim, "Number of axes.")
      .def_prop_ro(
          "shape", [](const nd_layout& l) { return as_tuple(l.shape()); }, "Global extent of each axis.")
      .def_prop_ro(
          "blocks",
          [](const nd_layout& l) {
            std::vector<std::int64_t> b;
            for (int k = 0; k < l.ndim(); ++k) b.push_back(l.blocks(k));
            return as_tuple(b);
          },
          "Number of blocks along each axis.")
      .def(
          "splits",
          [](const nd_layout& l, int axis) {
            if (axis < 0 || axis >= l.ndim()) throw nb::index_error("axis outside the layout's axes");
            return l.splits(axis);
          },
          "axis"_a, "Block boundaries along `axis`, 0 .. its extent.")
      .def_prop_ro(
          "grid", [](const nd_layout& l) { return as_tuple(l.grid_shape()); },
          "Shape of the owners' grid of positions (one entry per axis).")
      .def_prop_ro("rank", &nd_layout::my_rank, "The rank whose local storage this layout describes.")
      .def_prop_ro(
          "order", [](const nd_layout& l) { return as_tuple(l.packing_order()); },
          "The storage order: axes from the fastest-varying to the slowest.")
      .def_prop_ro("local_elements", &nd_layout::local_elements, "Elements this rank's local storage spans.")
      .def_prop_ro(
          "local_shape", [](const nd_layout& l) { return as_tuple(local_form(l).shape); },
          "Shape of this rank's local array: one extent per axis, in axis order (the array is strided in "
          "the layout's order: use empty() or local_view()), or (local_elements,) where this rank stores "
          "several boxes apart.")
      .def(
          "owner",
          [](const nd_layout& l, const std::vector<std::int64_t>& block) {
            bool inside = static_cast<int>(block.size()) == l.ndim();
            for (std::size_t k = 0; inside && k < block.size(); ++k)
              inside = block[k] >= 0 && block[k] < l.blocks(static_cast<int>(k));
            if (!inside) throw nb::index_error("block outside the layout's blocks (one coordinate per axis)");
            return l.owner(block.data());
          },
          "block"_a, "The rank owning the block at these block coordinates (one per axis).")
      .def(
          "empty",
          [](const nd_layout& l, nb::handle dtype) {
            const nd_local_form f = local_form(l);
            const element_type t = element_type_of_dtype(dtype);
            nb::object flat =
                nb::module_::import_("numpy").attr("zeros")(std::max(f.elements, l.local_elements()), numpy_dtype(t));
            return view_into(nb::cast<writable_array>(flat), flat, 0, f.shape, f.strides);
          },
          "dtype"_a = nb::none(),
          "A zero-filled local array: local_shape, strided as the layout stores it (float64 unless dtype is "
          "given).")
      .def(
          "local_view",
          [](const nd_layout& l, nb::object array) {
            const writable_array a = checked_local_array(l, array, "local_view");
            const nd_local_form f = local_form(l);
            return view_into(a, array, 0, f.shape, f.strides);
          },
          "array"_a,
          "The local array of shape local_shape, strided as the layout stores it, over the memory of `array` (no "
          "copy): `array` is such an array already, or a contiguous buffer of at least local_elements.")
      .def(
          "local_blocks",
          [](const nd_layout& l) {
            nb::list out;
            for (const placed_nd_block& b : placed_blocks(l)) {
              std::vector<std::int64_t> hi(b.lo);
              for (std::size_t k = 0; k < hi.size(); ++k) hi[k] += b.extents[k];
              out.append(nb::make_tuple(as_tuple(b.lo), as_tuple(hi)));
            }
            return out;
          },
          "This rank's blocks as (lo, hi) boxes of global indices.")
      .def(
          "local_views",
          [](const nd_layout& l, nb::object array) {
            const writable_array a = checked_local_array(l, array, "local_views");
            nb::list out;
            for (const placed_nd_block& b : placed_blocks(l))
              out.append(nb::make_tuple(as_tuple(b.lo), view_into(a, array, b.offset, b.extents, b.strides)));
            return out;
          },
          "array"_a,
          "This rank's blocks as writable views into its local array (no copies): a list of (lo, view), the "
          "view's shape the block's extents.")
      .def(
          "permuted", [](const nd_layout& l, const std::vector<int>& axes) { return l.permuted(axes); }, "axes"_a,
          "The same data and memory with its axes permuted: axis i of the result is axis axes[i] of this layout.")
      .def("relabeled", &nd_layout::relabeled, "new_rank_of"_a,
           "Owners relabeled: rank r becomes new_rank_of[r]; this rank's storage rebuilt densely in the layout's "
           "order.")
      .def("__eq__", [](const nd_layout& a, const nd_layout& b) { return a == b; })
      .def("__repr__", [](const nd_layout& l) { return "<redist.NdLayout " + l.describe() + ">"; });

  m.def(
      "block_cyclic_nd",
      [](const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& block, const std::vector<int>& grid,
         int rank, nb::handle order, nb::handle grid_ranks) {
        std::vector<int> ranks;
        if (!grid_ranks.is_none()) {
          nb::object np = nb::module_::import_("numpy");
          nb::object table = np.attr("asarray")(grid_ranks, "dtype"_a = np.attr("int64"));
          ranks = nb::cast<std::vector<int>>(table.attr("ravel")().attr("tolist")());
        }
        return block_cyclic_nd(shape, block, grid, rank, parse_axis_order(order, static_cast<int>(shape.size())),
                               ranks);
      },
      "shape"_a, "block"_a, "grid"_a, "rank"_a, nb::kw_only(), "order"_a = nb::none(), "grid_ranks"_a = nb::none(),
      "Block-cyclic on a d-dimensional process grid, seen from `rank`: axis k is cut into blocks of block[k] (the "
      "last one shorter) dealt cyclically to the grid's positions along k. grid_ranks: the rank at each grid "
      "position (an array of the grid's shape, or flat in C order; None: C-order numbering). order: the local "
      "array's storage order, None or 'C' (last axis fastest), 'F', or the axes fastest first.");

  m.def(
      "box_layout",
      [](const std::vector<nb::object>& boxes, int rank, nb::handle order, nb::handle packing_order) {
        std::vector<std::vector<box>> of_rank;
        int ndim = 0;
        for (std::size_t r = 0; r < boxes.size(); ++r) {
          of_rank.push_back(boxes_of(boxes[r], "boxes[" + std::to_string(r) + "]"));
          for (const box& b : of_rank.back()) ndim = static_cast<int>(b.lo.size());
        }
        return box_layout(of_rank, rank, parse_axis_order(order, ndim), parse_axis_order(packing_order, ndim));
      },
      "boxes"_a, "rank"_a, nb::kw_only(), "order"_a = nb::none(), "packing_order"_a = nb::none(),
      "A layout of boxes, seen from `rank`: boxes[r] is rank r's box (lo, hi) (lo inclusive, hi exclusive, one "
      "entry per axis) or a list of its boxes (possibly none). The non-empty boxes must cover the index space "
      "exactly. Each box is stored densely in `order` (None or 'C', 'F', or the axes fastest first), a rank's "
      "boxes one after another. packing_order: how blocks travel in messages, the same on every rank (None: "
      "`order`); ranks that store in different orders pass their own `order` and one packing_order.");

  m.def(
      "brick_boxes",
      [](const std::vector<std::int64_t>& shape, const std::vector<int>& grid) {
        return box_list(brick_boxes(shape, grid));
      },
      "shape"_a, "grid"_a,
      "3-D bricks, one (lo, hi) box per rank: all three axes cut over a grid[0] x grid[1] x grid[2] process grid "
      "(ranks in C order).");
  m.def(
      "pencil_boxes",
      [](const std::vector<std::int64_t>& shape, int axis, const std::vector<int>& grid) {
        return box_list(pencil_boxes(shape, axis, grid));
      },
      "shape"_a, "axis"_a, "grid"_a,
      "3-D pencils along `axis`, one (lo, hi) box per rank: the other two axes, in increasing order, cut over a "
      "grid[0] x grid[1] process grid.");
  m.def(
      "slab_boxes",
      [](const std::vector<std::int64_t>& shape, int split_axis, int nranks) {
        return box_list(slab_boxes(shape, split_axis, nranks));
      },
      "shape"_a, "split_axis"_a, "nranks"_a,
      "Slabs, one (lo, hi) box per rank: `split_axis` cut into nranks parts, the other axes whole.");
}

}  // namespace redist::python
