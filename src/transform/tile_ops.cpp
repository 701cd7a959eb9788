// SPDX-License-Identifier: BSD-3-Clause
// The tile operations of an execution (tile_ops.hpp): typed dispatch onto the kernels, walking each tile's runs.
#include "tile_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <type_traits>

namespace redist::detail {

std::int64_t storage_view::at(const block_index* block, const local_index* local,
                              const std::int64_t*& strides_out) const {
  std::int64_t offset = 0;
  const std::int64_t* s = strides.data();
  if (kind != storage_kind::regular) {
    const placement& p = blocks.at(block_key(block));
    offset = p.offset;
    s = p.strides.data();
  }
  for (int k = 0; k < ndim; ++k) offset += local[k].value() * s[k];
  strides_out = s;
  return offset;
}

run sub_run(const run& r, std::int64_t skip, std::int64_t length) {
  run s = r;
  s.a_local += skip;
  s.b_local += skip;
  s.packed += skip;
  s.length = length;
  return s;
}

namespace {

template <class T>
T from_scalar(scalar s) {
  if constexpr (std::is_same_v<T, std::complex<float>>)
    return T(static_cast<float>(s.real()), static_cast<float>(s.imag()));
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return s;
  else
    return static_cast<T>(s.real());
}

template <class F>
void with_type(element_type t, F&& f) {
  switch (t) {
    case element_type::f32:
      f(float{});
      return;
    case element_type::f64:
      f(double{});
      return;
    case element_type::c32:
      f(std::complex<float>{});
      return;
    case element_type::c64:
      f(std::complex<double>{});
      return;
    case element_type::i32:
      f(std::int32_t{});
      return;
    case element_type::i64:
      f(std::int64_t{});
      return;
  }
}

// Strides of a packed tile: dense in op(B)'s packing order over the tile's extents.
axis_values packed_strides(const job_plan& jp, const tile& t) {
  axis_values s{};
  std::int64_t stride = 1;
  for (int i = 0; i < jp.ndim; ++i) {
    const int k = jp.packed_order[static_cast<size_t>(i)];
    s[static_cast<size_t>(k)] = stride;
    stride *= t.extent(k);
  }
  return s;
}

// The axes a piece hands to the 2-D kernels: x, along which the destination is contiguous, and y, along which the
// source is (the destination's next axis when both are contiguous along x; none for d = 1). The other axes are
// walked one index at a time, the destination's slowest outermost.
struct kernel_axes {
  int x = 0, y = -1;
  int outer_count = 0;
  std::array<int, max_axes> outer{};
};

kernel_axes choose_axes(int ndim, const axis_order& dst, const axis_order& src) {
  kernel_axes ka;
  ka.x = dst[0];
  if (ndim >= 2) ka.y = src[0] != dst[0] ? src[0] : dst[1];
  for (int i = ndim; i-- > 0;) {
    const int k = dst[static_cast<size_t>(i)];
    if (k != ka.x && k != ka.y) ka.outer[static_cast<size_t>(ka.outer_count++)] = k;
  }
  return ka;
}

// One piece: a run per axis (length 1 on the outer axes).
using piece_runs = std::array<const run*, max_axes>;

// Visits every piece of a tile, walking the destination along its contiguous axis x: the runs along y are cut
// into panels and, within a panel, the x runs go along it (so reads and writes advance through memory instead of
// striding across whole local arrays). Panels are up to 1024 indices wide: the kernels block their own planes, and
// narrower panels cut the streaming transposes' strips short (64-wide panels: 2 ranks, 256^3 complex<double>
// x -> y-pencils with y contiguous 1.16x slower; 4 ranks, 4000^2 doubles, pdtran 1.13x). Panels and outer
// indices are independent, so large tiles spread them over OpenMP threads, with panels narrowed (down to 64)
// until every thread has several.
constexpr std::int64_t widest_panel = 1024, narrowest_panel = 64;

bool has_short_y_runs(const tile& t, const kernel_axes& ka);

// With `whole_x`, piece(at, y_runs, y_count) is called once per panel and outer index with no run along x (at[x]
// null): the caller walks the panel's columns and x runs itself (short runs below). A panel is then either a cut of
// one y run or, where the y runs are short (ScaLAPACK's NB = 1 against NB = 32: a run per column), consecutive y
// runs up to a panel's width, at[y] its first.
template <bool whole_x, class F>
void for_each_piece(const tile& t, const kernel_axes& ka, F&& piece) {
  std::array<std::vector<run>, max_axes> singles;  // per outer axis: its indices one by one
  std::int64_t combinations = 1;
  for (int i = 0; i < ka.outer_count; ++i) {
    std::vector<run>& s = singles[static_cast<size_t>(i)];
    for (const run& r : t.runs(ka.outer[static_cast<size_t>(i)]))
      for (std::int64_t k = 0; k < r.length; ++k) s.push_back(sub_run(r, k, 1));
    combinations *= static_cast<std::int64_t>(s.size());
  }
  const bool parallel = t.elements() >= kernels::parallel_threshold && !omp_in_parallel() && omp_get_max_threads() > 1;
  std::vector<run> panel_parts;           // the y runs as the panels take them
  std::vector<std::size_t> panel_starts;  // panel p: panel_parts[panel_starts[p], panel_starts[p + 1])
  if (ka.y >= 0) {
    const auto panels_of_width = [&](std::int64_t width) {
      std::int64_t n = 0;
      for (const run& o : t.runs(ka.y)) n += (o.length + width - 1) / width;
      return n;
    };
    std::int64_t width = widest_panel;
    const bool group = whole_x && has_short_y_runs(t, ka);
    while (!group && parallel && width > narrowest_panel &&
           combinations * panels_of_width(width) < 4 * omp_get_max_threads())
      width /= 2;
    std::int64_t filled = width;
    for (const run& o : t.runs(ka.y)) {
      if (group) {
        if (filled + o.length > width) {  // this run starts a new panel
          panel_starts.push_back(panel_parts.size());
          filled = 0;
        }
        panel_parts.push_back(o);
        filled += o.length;
        continue;
      }
      for (std::int64_t k = 0; k < o.length; k += width) {
        panel_starts.push_back(panel_parts.size());
        panel_parts.push_back(sub_run(o, k, std::min(width, o.length - k)));
      }
    }
  } else {
    panel_starts.push_back(0);
    panel_parts.push_back(run{});  // d = 1: one panel, unused
  }
  const auto panel_count = static_cast<std::int64_t>(panel_starts.size());
  panel_starts.push_back(panel_parts.size());
  const run_range inner = t.runs(ka.x);
  auto one_item = [&](std::int64_t item) {
    piece_runs at{};
    std::int64_t combination = item / panel_count;
    for (int i = ka.outer_count; i-- > 0;) {
      const std::vector<run>& s = singles[static_cast<size_t>(i)];
      const auto n = static_cast<std::int64_t>(s.size());
      at[static_cast<size_t>(ka.outer[static_cast<size_t>(i)])] = &s[static_cast<size_t>(combination % n)];
      combination /= n;
    }
    const auto panel = static_cast<std::size_t>(item % panel_count);
    const run* first = &panel_parts[panel_starts[panel]];
    if (ka.y >= 0) at[static_cast<size_t>(ka.y)] = first;
    if constexpr (whole_x) {
      piece(at, first, panel_starts[panel + 1] - panel_starts[panel]);
    } else {
      for (const run& r : inner) {
        at[static_cast<size_t>(ka.x)] = &r;
        piece(at);
      }
    }
  };
  const std::int64_t items = combinations * panel_count;
  if (items >= 2 && parallel) {
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t w = 0; w < items; ++w) one_item(w);
  } else {
    for (std::int64_t w = 0; w < items; ++w) one_item(w);
  }
}

// A piece's extent along the kernel's two axes and the strides of one side there (for d = 1, y is a dummy axis
// of extent 1 whose stride continues x's).
struct plane {
  std::int64_t x_length, y_length;
};
plane plane_of(const piece_runs& at, const kernel_axes& ka) {
  return {at[static_cast<size_t>(ka.x)]->length, ka.y >= 0 ? at[static_cast<size_t>(ka.y)]->length : 1};
}
kernels::strided strides_of(const std::int64_t* s, const kernel_axes& ka, const plane& p) {
  const std::int64_t sx = s[ka.x];
  return {sx, ka.y >= 0 ? s[ka.y] : sx * p.x_length};
}

// Block and local indices of a piece's first element on one side.
struct side_indices {
  std::array<block_index, max_axes> block;
  std::array<local_index, max_axes> local;
};
side_indices a_side(const piece_runs& at, int ndim) {
  side_indices s;
  for (int k = 0; k < ndim; ++k) {
    s.block[static_cast<size_t>(k)] = at[static_cast<size_t>(k)]->a_block;
    s.local[static_cast<size_t>(k)] = at[static_cast<size_t>(k)]->a_local;
  }
  return s;
}
side_indices b_side(const piece_runs& at, int ndim) {
  side_indices s;
  for (int k = 0; k < ndim; ++k) {
    s.block[static_cast<size_t>(k)] = at[static_cast<size_t>(k)]->b_block;
    s.local[static_cast<size_t>(k)] = at[static_cast<size_t>(k)]->b_local;
  }
  return s;
}
std::int64_t packed_offset(const piece_runs& at, const axis_values& ps, int ndim) {
  std::int64_t off = 0;
  for (int k = 0; k < ndim; ++k) off += at[static_cast<size_t>(k)]->packed * ps[static_cast<size_t>(k)];
  return off;
}

// A = alpha * op(B) + beta * A on one piece, op(B)'s element (i, j) lying at bt[i * bt_s.rs + j * bt_s.cs]: the
// axis permutation is already in the strides, so only conjugation is left to the kernel, which applies it with
// a transpose (the strides are swapped back for it).
template <class T>
void apply(const job_plan& jp, T* dst, kernels::strided dst_s, const T* bt, kernels::strided bt_s, const plane& p,
           T alpha, T beta, kernels::store_hint stores) {
  if (!jp.conjugate)
    kernels::transform_block(dst, dst_s, bt, bt_s, p.x_length, p.y_length, op::identity, alpha, beta, stores);
  else
    kernels::transform_block(dst, dst_s, bt, kernels::strided{bt_s.cs, bt_s.rs}, p.x_length, p.y_length,
                             op::conj_transpose, alpha, beta, stores);
}

// ---- short runs ---------------------------------------------------------------------------------------------
// Where a tile's runs along x or y are a few elements long, a kernel call per piece costs more than the piece's
// copy. ScaLAPACK's MB = 1 against MB = 32 gives runs of one element along x, contiguous on one side and every other
// element on the other: a kernel call per run and panel would stride across the panel's columns one element at a
// time, a page apart. NB = 1 against NB = 32 gives runs of one column along y: a kernel call per column and x run.
// Instead a piece is a panel: its columns are walked in order and, in each, every x run (regular storage with unit
// stride along x on both sides; 2 ranks, 1000 x 1000 doubles, MB 1 -> 32 on a 2 x 1 grid: pdgemr2d 3.4 -> 0.83
// ms; 2000 x 2000, NB = 1 on 1 x 2 -> 32 x 32 on 2 x 1: 12.9 -> 2.4 ms).
constexpr std::int64_t short_run_length = 8;  // mean run length along x or y below which panels walk runs

bool has_short_runs(const tile& t, int axis) {
  const auto count = static_cast<std::int64_t>(t.runs(axis).size());
  return count >= 2 && t.extent(axis) < short_run_length * count;
}

bool has_short_x_runs(const tile& t, const kernel_axes& ka) { return ka.y >= 0 && has_short_runs(t, ka.x); }
bool has_short_y_runs(const tile& t, const kernel_axes& ka) { return ka.y >= 0 && has_short_runs(t, ka.y); }
bool has_short_runs(const tile& t, const kernel_axes& ka) { return has_short_x_runs(t, ka) || has_short_y_runs(t, ka); }

// One x run of a panel: its first element's offsets from each side's base, in the panel's first column, and its
// length.
struct run_offsets {
  std::int64_t dst, src, length;
};

template <class T>
T multiply(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else
    return a * b;
}

// Calls f with the element operation d = alpha * op(s) + beta * d (alpha != 0), one loop body per case.
template <class T, class F>
void with_element_op(bool conjugate, T alpha, T beta, F&& f) {
  const auto by_conjugation = [&](auto conj) {
    constexpr bool conj_v = decltype(conj)::value;
    const auto value = [](const T& s) {
      if constexpr (conj_v)
        return T(s.real(), -s.imag());
      else
        return s;
    };
    if (beta == T(0) && alpha == T(1))
      f([&](T& d, const T& s) { d = value(s); });
    else if (beta == T(0))
      f([&](T& d, const T& s) { d = multiply(alpha, value(s)); });
    else
      f([&](T& d, const T& s) { d = multiply(alpha, value(s)) + multiply(beta, d); });
  };
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    if (conjugate) {
      by_conjugation(std::true_type{});
      return;
    }
  }
  by_conjugation(std::false_type{});
}

// One column of a panel: its offsets from the panel's first column on each side.
struct column_offsets {
  std::int64_t dst, src;
};

// Where one side's index along y lies: a run's first local index on side a or b, or its packed index, times the
// side's stride along y.
struct y_side {
  enum class index { a_local, b_local, packed } of;
  std::int64_t stride;
  std::int64_t offset(const run& r) const {
    const std::int64_t i = of == index::a_local   ? r.a_local.value()
                           : of == index::b_local ? r.b_local.value()
                                                  : r.packed;
    return i * stride;
  }
};

// The columns of a panel (y runs `ys[0, count)`) as offsets from its first column.
const std::vector<column_offsets>& panel_columns(const run* ys, std::size_t count, const y_side& dst,
                                                 const y_side& src) {
  static thread_local std::vector<column_offsets> columns;  // pieces of one tile may run on several threads
  columns.clear();
  const std::int64_t dst0 = dst.offset(ys[0]), src0 = src.offset(ys[0]);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t d = dst.offset(ys[i]) - dst0, s = src.offset(ys[i]) - src0;
    for (std::int64_t k = 0; k < ys[i].length; ++k) columns.push_back({d + k * dst.stride, s + k * src.stride});
  }
  return columns;
}

// Every x run of every column of a panel.
template <class T, class Op>
void walk_short_runs(T* dst, const T* src, const std::vector<run_offsets>& runs,
                     const std::vector<column_offsets>& columns, const Op& op) {
  for (const column_offsets& c : columns) {
    T* __restrict d = dst + c.dst;
    const T* __restrict s = src + c.src;
    for (const run_offsets& r : runs)
      for (std::int64_t i = 0; i < r.length; ++i) op(d[r.dst + i], s[r.src + i]);
  }
}

// Offset of a piece's first element in regular storage of `strides`, on side a or b.
std::int64_t regular_offset(const piece_runs& at, const std::int64_t* strides, int ndim, bool a) {
  std::int64_t off = 0;
  for (int k = 0; k < ndim; ++k) {
    const run& r = *at[static_cast<size_t>(k)];
    off += (a ? r.a_local.value() : r.b_local.value()) * strides[k];
  }
  return off;
}

// Whether the short-run walk applies to one side of a piece: regular storage, unit stride along x.
bool walks_short_runs(const storage_view& v, const kernel_axes& ka) {
  return v.kind == storage_kind::regular && v.strides[static_cast<size_t>(ka.x)] == 1;
}

// The panel's x runs (`at` holds its panel and outer indices) as offsets from each side's base.
template <class DstOffset, class SrcOffset>
const std::vector<run_offsets>& panel_runs(const tile& t, const kernel_axes& ka, piece_runs at,
                                           const DstOffset& dst_offset, const SrcOffset& src_offset) {
  static thread_local std::vector<run_offsets> runs;  // pieces of one tile may run on several threads
  runs.clear();
  for (const run& r : t.runs(ka.x)) {
    at[static_cast<size_t>(ka.x)] = &r;
    runs.push_back({dst_offset(at), src_offset(at), r.length});
  }
  return runs;
}

template <class T>
void pack_tile(const job_plan& jp, const tile& t, const T* b_base, std::byte* message, kernels::store_hint stores) {
  T* packed = reinterpret_cast<T*>(message + t.byte_offset);
  const axis_values ps = packed_strides(jp, t);
  const kernel_axes ka = choose_axes(jp.ndim, jp.packed_order, jp.packed_order);
  if (has_short_runs(t, ka) && walks_short_runs(jp.b_view, ka)) {
    const std::int64_t* bs = jp.b_view.strides.data();
    const y_side dst_y{y_side::index::packed, ps[static_cast<size_t>(ka.y)]}, src_y{y_side::index::b_local, bs[ka.y]};
    for_each_piece<true>(t, ka, [&](const piece_runs& at, const run* ys, std::size_t y_count) {
      const auto& runs = panel_runs(
          t, ka, at, [&](const piece_runs& r) { return packed_offset(r, ps, jp.ndim); },
          [&](const piece_runs& r) { return regular_offset(r, bs, jp.ndim, false); });
      walk_short_runs(packed, b_base, runs, panel_columns(ys, y_count, dst_y, src_y), [](T& d, const T& s) { d = s; });
    });
    return;
  }
  for_each_piece<false>(t, ka, [&](const piece_runs& at) {
    const side_indices b = b_side(at, jp.ndim);
    const std::int64_t* bs = nullptr;
    const std::int64_t src = jp.b_view.at(b.block.data(), b.local.data(), bs);
    const plane p = plane_of(at, ka);
    kernels::copy_block(packed + packed_offset(at, ps, jp.ndim), strides_of(ps.data(), ka, p), b_base + src,
                        strides_of(bs, ka, p), p.x_length, p.y_length, stores);
  });
}

template <class T>
void unpack_tile(const job_plan& jp, const tile& t, T* a_base, const std::byte* message, T alpha, T beta,
                 kernels::store_hint stores) {
  const T* packed = reinterpret_cast<const T*>(message + t.byte_offset);
  const axis_values ps = packed_strides(jp, t);
  const kernel_axes ka = choose_axes(jp.ndim, jp.a_order, jp.packed_order);
  if (alpha != T(0) && has_short_runs(t, ka) && walks_short_runs(jp.a_view, ka) && ps[static_cast<size_t>(ka.x)] == 1) {
    const std::int64_t* as = jp.a_view.strides.data();
    const y_side dst_y{y_side::index::a_local, as[ka.y]}, src_y{y_side::index::packed, ps[static_cast<size_t>(ka.y)]};
    for_each_piece<true>(t, ka, [&](const piece_runs& at, const run* ys, std::size_t y_count) {
      const auto& runs = panel_runs(
          t, ka, at, [&](const piece_runs& r) { return regular_offset(r, as, jp.ndim, true); },
          [&](const piece_runs& r) { return packed_offset(r, ps, jp.ndim); });
      const auto& columns = panel_columns(ys, y_count, dst_y, src_y);
      with_element_op(jp.conjugate, alpha, beta,
                      [&](const auto& op) { walk_short_runs(a_base, packed, runs, columns, op); });
    });
    return;
  }
  for_each_piece<false>(t, ka, [&](const piece_runs& at) {
    const side_indices a = a_side(at, jp.ndim);
    const std::int64_t* as = nullptr;
    const std::int64_t dst = jp.a_view.at(a.block.data(), a.local.data(), as);
    const plane p = plane_of(at, ka);
    apply(jp, a_base + dst, strides_of(as, ka, p), packed + packed_offset(at, ps, jp.ndim),
          strides_of(ps.data(), ka, p), p, alpha, beta, stores);
  });
}

// A tile transformed straight from op(B)'s storage into A: this rank's own B (local tiles), or a node
// peer's B in a node_buffer (b_view is then the peer's storage).
template <class T>
void direct_tile(const job_plan& jp, const tile& t, T* a_base, const T* b_base, const storage_view& b_view, T alpha,
                 T beta, kernels::store_hint stores) {
  const kernel_axes ka = choose_axes(jp.ndim, jp.a_order, jp.packed_order);
  if (alpha != T(0) && has_short_runs(t, ka) && walks_short_runs(jp.a_view, ka) && walks_short_runs(b_view, ka)) {
    const std::int64_t *as = jp.a_view.strides.data(), *bs = b_view.strides.data();
    const y_side dst_y{y_side::index::a_local, as[ka.y]}, src_y{y_side::index::b_local, bs[ka.y]};
    for_each_piece<true>(t, ka, [&](const piece_runs& at, const run* ys, std::size_t y_count) {
      const auto& runs = panel_runs(
          t, ka, at, [&](const piece_runs& r) { return regular_offset(r, as, jp.ndim, true); },
          [&](const piece_runs& r) { return regular_offset(r, bs, jp.ndim, false); });
      const auto& columns = panel_columns(ys, y_count, dst_y, src_y);
      with_element_op(jp.conjugate, alpha, beta,
                      [&](const auto& op) { walk_short_runs(a_base, b_base, runs, columns, op); });
    });
    return;
  }
  for_each_piece<false>(t, ka, [&](const piece_runs& at) {
    const side_indices a = a_side(at, jp.ndim), b = b_side(at, jp.ndim);
    const std::int64_t *as = nullptr, *bs = nullptr;
    const std::int64_t dst = jp.a_view.at(a.block.data(), a.local.data(), as);
    const std::int64_t src = b_view.at(b.block.data(), b.local.data(), bs);
    const plane p = plane_of(at, ka);
    // alpha == 0 allows a null B: the kernel does not read it, so no address is formed from it.
    const T* bp = b_base ? b_base + src : nullptr;
    apply(jp, a_base + dst, strides_of(as, ka, p), bp, strides_of(bs, ka, p), p, alpha, beta, stores);
  });
}

}  // namespace

bool tile_ops::skips_source(int job) const { return buffers[static_cast<size_t>(job)].alpha == scalar(0.0, 0.0); }

void tile_ops::pack(const tile& t, std::byte* message) const {
  if (skips_source(t.job)) return;  // alpha == 0: B is not read; the receiver does not read the bytes either
  const job_plan& jp = plans[static_cast<size_t>(t.job)];
  with_type(jp.type, [&](auto tag) {
    using T = decltype(tag);
    pack_tile<T>(jp, t, static_cast<const T*>(buffers[static_cast<size_t>(t.job)].b), message, pack_stores);
  });
}

void tile_ops::unpack(const tile& t, const std::byte* message) const {
  const job_plan& jp = plans[static_cast<size_t>(t.job)];
  const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
  with_type(jp.type, [&](auto tag) {
    using T = decltype(tag);
    unpack_tile<T>(jp, t, static_cast<T*>(jb.a), message, from_scalar<T>(jb.alpha), from_scalar<T>(jb.beta),
                   jp.result_stores);
  });
}

void tile_ops::local(const tile& t) const {
  const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
  direct(t, jb.b, plans[static_cast<size_t>(t.job)].b_view);
}

void tile_ops::direct(const tile& t, const void* b, const storage_view& b_view) const {
  const job_plan& jp = plans[static_cast<size_t>(t.job)];
  const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
  with_type(jp.type, [&](auto tag) {
    using T = decltype(tag);
    direct_tile<T>(jp, t, static_cast<T*>(jb.a), static_cast<const T*>(b), b_view, from_scalar<T>(jb.alpha),
                   from_scalar<T>(jb.beta), jp.result_stores);
  });
}

void tile_ops::pack_message(const peer_message& m, std::byte* dst) const {
  for (const tile& t : m.tiles) pack(t, dst);
}

void tile_ops::unpack_message(const peer_message& m, const std::byte* src) const {
  for (const tile& t : m.tiles) unpack(t, src);
}

}  // namespace redist::detail
