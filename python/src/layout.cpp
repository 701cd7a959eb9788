// SPDX-License-Identifier: BSD-3-Clause
// Layout builders and the Layout class (redist::grid_layout).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <tuple>

#include "common.hpp"
#include "redist/layout/builders.hpp"

namespace redist::python {

namespace {

using namespace nb::literals;

grid_order parse_grid_order(const std::string& s) {
  if (s == "row" || s == "R" || s == "r") return grid_order::row_major;
  if (s == "col" || s == "C" || s == "c") return grid_order::col_major;
  throw nb::value_error(("grid_order '" + s + "': expected 'row' (BLACS 'R') or 'col' (BLACS 'C')").c_str());
}

// A 2-D array-like of ints (nested lists or a NumPy array) as a row-major vector with its shape.
std::vector<int> owner_table(nb::handle table, std::int64_t rows, std::int64_t cols, const char* name) {
  nb::object np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(table, "dtype"_a = np.attr("int64"));
  const auto shape = nb::cast<std::vector<std::int64_t>>(a.attr("shape"));
  if (shape.size() != 2 || shape[0] != rows || shape[1] != cols) {
    std::string got;
    for (std::int64_t extent : shape) got += (got.empty() ? "" : ", ") + std::to_string(extent);
    throw nb::value_error((std::string(name) + ": expected a " + std::to_string(rows) + " x " + std::to_string(cols) +
                           " table of ranks (one per block), got shape (" + got + ")")
                              .c_str());
  }
  const auto flat = nb::cast<std::vector<std::int64_t>>(a.attr("ravel")().attr("tolist")());
  return std::vector<int>(flat.begin(), flat.end());
}

nb::object as_tuple(const std::vector<std::int64_t>& v) { return nb::steal(PySequence_Tuple(nb::cast(v).ptr())); }

// This rank's blocks as (first global row, first global column, rows, columns, offset, ld, order) in elements
// from the start of the local array.
struct placed_block {
  std::int64_t row0, col0, rows, cols, offset, ld;
  storage_order order;
};
std::vector<placed_block> placed_blocks(const grid_layout& l) {
  std::vector<placed_block> out;
  const auto& rs = l.row_splits();
  const auto& cs = l.col_splits();
  if (l.kind() == storage_kind::explicit_blocks) {
    for (const local_block& b : l.local_blocks()) {
      const auto i = static_cast<std::size_t>(b.block.row), j = static_cast<std::size_t>(b.block.col);
      out.push_back({rs[i], cs[j], rs[i + 1] - rs[i], cs[j + 1] - cs[j], b.offset, b.ld, b.order});
    }
    return out;
  }
  const bool col_major = l.packing_order() == storage_order::col_major;
  for (const grid_position& p : l.my_positions())
    for (std::int64_t i = 0; i < l.block_rows(); ++i) {
      if (l.row_proc()[static_cast<std::size_t>(i)] != p.row) continue;
      for (std::int64_t j = 0; j < l.block_cols(); ++j) {
        if (l.col_proc()[static_cast<std::size_t>(j)] != p.col) continue;
        const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
        const std::int64_t r = l.local_row_start()[ui], c = l.local_col_start()[uj];
        out.push_back({rs[ui], cs[uj], rs[ui + 1] - rs[ui], cs[uj + 1] - cs[uj],
                       col_major ? r + c * l.local_ld() : r * l.local_ld() + c, l.local_ld(), l.packing_order()});
      }
    }
  return out;
}

}  // namespace

void register_layout(nb::module_& m) {
  nb::class_<grid_layout>(m, "Layout",
                          "A distributed matrix layout: its global block grid and owners, and how this rank stores "
                          "its blocks. Build one with block_cyclic, blocked or custom.")
      .def_prop_ro(
          "shape", [](const grid_layout& l) { return std::make_pair(l.rows(), l.cols()); }, "Global (rows, columns).")
      .def_prop_ro(
          "blocks", [](const grid_layout& l) { return std::make_pair(l.block_rows(), l.block_cols()); },
          "Number of (block rows, block columns).")
      .def_prop_ro("row_splits", &grid_layout::row_splits, "Block row boundaries, 0 .. rows.")
      .def_prop_ro("col_splits", &grid_layout::col_splits, "Block column boundaries, 0 .. columns.")
      .def_prop_ro(
          "grid", [](const grid_layout& l) { return std::make_pair(l.proc_rows(), l.proc_cols()); },
          "The owners' process grid (rows, columns).")
      .def_prop_ro("rank", &grid_layout::my_rank, "The rank whose local storage this layout describes.")
      .def_prop_ro(
          "order", [](const grid_layout& l) { return std::string(storage_name(l.packing_order())); },
          "'F' (column-major) or 'C' (row-major) local storage.")
      .def_prop_ro("local_elements", &grid_layout::local_elements, "Elements this rank's local array must hold.")
      .def_prop_ro(
          "local_shape", [](const grid_layout& l) { return as_tuple(local_shape(l)); },
          "Shape of this rank's local array: (lld, local columns) for column-major storage, (local rows, "
          "lld) for row-major, (local_elements,) for a custom layout's explicit blocks.")
      .def(
          "owner",
          [](const grid_layout& l, std::int64_t block_row, std::int64_t block_col) {
            if (block_row < 0 || block_row >= l.block_rows() || block_col < 0 || block_col >= l.block_cols())
              throw nb::index_error("block outside the layout's block grid");
            return l.owner({block_row, block_col});
          },
          "block_row"_a, "block_col"_a, "The rank owning block (block_row, block_col).")
      .def(
          "empty",
          [](const grid_layout& l, nb::handle dtype) {
            const element_type t = element_type_of_dtype(dtype);
            return nb::module_::import_("numpy").attr("zeros")(as_tuple(local_shape(l)), numpy_dtype(t),
                                                               "order"_a = storage_name(l.packing_order()));
          },
          "dtype"_a = nb::none(),
          "A zero-filled local array of the layout's local_shape and order (float64 unless dtype is given).")
      .def(
          "local_blocks",
          [](const grid_layout& l) {
            std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> out;
            for (const placed_block& b : placed_blocks(l)) out.emplace_back(b.row0, b.col0, b.rows, b.cols);
            return out;
          },
          "This rank's blocks as (first row, first column, rows, columns) of the global matrix.")
      .def(
          "local_views",
          [](const grid_layout& l, nb::object array) {
            writable_array a;
            if (!nb::try_cast(array, a)) throw nb::type_error("local_views needs a writable NumPy array");
            const array_view v = view_of(a);
            check_local_array(v, l, element_type_of(v, "array"), "array");
            const std::size_t item = a.itemsize();
            nb::list out;
            for (const placed_block& b : placed_blocks(l)) {
              const std::size_t shape[2] = {static_cast<std::size_t>(b.rows), static_cast<std::size_t>(b.cols)};
              const std::int64_t strides[2] = {b.order == storage_order::col_major ? 1 : b.ld,
                                               b.order == storage_order::col_major ? b.ld : 1};
              auto* first = static_cast<std::byte*>(v.data) + static_cast<std::size_t>(b.offset) * item;
              nb::ndarray<nb::numpy> view(first, 2, shape, array, strides, a.dtype());
              out.append(nb::make_tuple(b.row0, b.col0, view));
            }
            return out;
          },
          "array"_a,
          "This rank's blocks as writable NumPy views into its local array (no copies): a list of (first row, "
          "first column, view), the view's shape the block's (rows, columns) of the global matrix.")
      .def("transposed", &grid_layout::transposed, "The layout of the transposed matrix (same memory).")
      .def("relabeled", &grid_layout::relabeled, "new_rank_of"_a,
           "Owners relabeled: rank r becomes new_rank_of[r]; this rank's storage rebuilt with minimal leading "
           "dimensions.")
      .def("__eq__", [](const grid_layout& a, const grid_layout& b) { return a == b; })
      .def("__repr__", [](const grid_layout& l) { return "<redist.Layout " + l.describe() + ">"; });

  m.def(
      "block_cyclic",
      [](std::int64_t m_, std::int64_t n, std::int64_t mb, std::int64_t nb_, std::pair<int, int> grid, int rank,
         std::pair<int, int> src, std::optional<std::pair<std::int64_t, std::int64_t>> first_block,
         const std::string& grid_order_name, std::optional<nb::object> grid_ranks, std::int64_t lld,
         const std::string& order,
         std::optional<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> sub) {
        block_cyclic_params p;
        p.m = m_;
        p.n = n;
        p.mb = mb;
        p.nb = nb_;
        p.proc_rows = grid.first;
        p.proc_cols = grid.second;
        p.rsrc = src.first;
        p.csrc = src.second;
        if (first_block) {
          p.first_mb = first_block->first;
          p.first_nb = first_block->second;
        }
        p.ordering = parse_grid_order(grid_order_name);
        if (grid_ranks) p.grid_ranks = owner_table(*grid_ranks, grid.first, grid.second, "grid_ranks");
        p.lld = lld;
        p.order = parse_storage(order);
        if (sub) std::tie(p.sub_row, p.sub_col, p.sub_m, p.sub_n) = *sub;
        return block_cyclic(p, rank);
      },
      "m"_a, "n"_a, "mb"_a, "nb"_a, "grid"_a, "rank"_a, nb::kw_only(), "src"_a = std::make_pair(0, 0),
      "first_block"_a = nb::none(), "grid_order"_a = "row", "grid_ranks"_a = nb::none(), "lld"_a = 0, "order"_a = "F",
      "submatrix"_a = nb::none(),
      "A ScaLAPACK-style block-cyclic layout of an m x n matrix in mb x nb blocks on a grid = (P, Q) of processes, "
      "seen from `rank`. src: grid position of the first block; first_block: its (rows, columns) when smaller "
      "(ScaLAPACK's IMB, INB); grid_order 'row'/'col' numbers the ranks on the grid (or grid_ranks gives a P x Q "
      "table); lld: local leading dimension (0: minimal); order 'F' or 'C' local storage; submatrix = (row, col, "
      "rows, cols) restricts the layout to a sub-matrix (rows/cols -1: to the end).");

  m.def(
      "blocked",
      [](std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, nb::handle ranks, int rank,
         std::int64_t lld, const std::string& order) {
        const auto rows = static_cast<std::int64_t>(row_splits.size()) - 1;
        const auto cols = static_cast<std::int64_t>(col_splits.size()) - 1;
        return blocked(std::move(row_splits), std::move(col_splits), owner_table(ranks, rows, cols, "ranks"), rank, lld,
                       parse_storage(order));
      },
      "row_splits"_a, "col_splits"_a, "ranks"_a, "rank"_a, nb::kw_only(), "lld"_a = 0, "order"_a = "F",
      "A blocked layout: block (i, j) spans rows row_splits[i]:row_splits[i+1] and columns "
      "col_splits[j]:col_splits[j+1] and belongs to ranks[i][j]; each rank stores its block as one local array.");

  m.def(
      "custom",
      [](std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, nb::handle owners,
         std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::string>> my_blocks,
         int rank, const std::string& packing_order) {
        const auto rows = static_cast<std::int64_t>(row_splits.size()) - 1;
        const auto cols = static_cast<std::int64_t>(col_splits.size()) - 1;
        std::vector<local_block> blocks;
        for (const auto& [i, j, offset, ld, order] : my_blocks)
          blocks.push_back({{i, j}, offset, ld, parse_storage(order)});
        return custom(std::move(row_splits), std::move(col_splits), owner_table(owners, rows, cols, "owners"),
                      std::move(blocks), rank, parse_storage(packing_order));
      },
      "row_splits"_a, "col_splits"_a, "owners"_a, "my_blocks"_a, "rank"_a, nb::kw_only(), "packing_order"_a = "F",
      "A layout with any owner per block (owners[i][j]) and this rank's blocks stored anywhere in one local 1-D "
      "array: my_blocks lists (block_row, block_col, offset, ld, order) for each block of this rank.");

  m.def("even_splits", &even_splits, "n"_a, "parts"_a,
        "Boundaries 0 = s[0] < ... < s[parts] = n of `parts` nearly equal pieces.");
}

}  // namespace redist::python
