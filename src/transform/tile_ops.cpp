// The tile operations of an execution (tile_ops.hpp): typed dispatch onto the kernels, walking each tile's runs.
#include "tile_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

namespace redist::detail {

placement storage_view::at(block_index block_row, block_index block_col, local_index local_row,
                           local_index local_col) const {
  if (kind == storage_kind::regular) return {local_row.value() * strides.rs + local_col.value() * strides.cs, strides};
  const placement& p = blocks.at(block_key(block_row, block_col));
  return {p.offset + local_row.value() * p.strides.rs + local_col.value() * p.strides.cs, p.strides};
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
    case element_type::f32: f(float{}); return;
    case element_type::f64: f(double{}); return;
    case element_type::c32: f(std::complex<float>{}); return;
    case element_type::c64: f(std::complex<double>{}); return;
    case element_type::i32: f(std::int32_t{}); return;
    case element_type::i64: f(std::int64_t{}); return;
  }
}

// Strides of a packed tile (rows x cols in op(B)'s orientation, op(B)'s packing order).
kernels::strided packed_strides(storage_order order, std::int64_t rows, std::int64_t cols) {
  return order == storage_order::col_major ? kernels::strided{1, rows} : kernels::strided{cols, 1};
}

// Visits every (row run, column run) piece of a tile, walking the destination along its contiguous
// dimension: for a column-major destination the column runs are cut into panels of a few columns and,
// within a panel, the row runs go down the columns (so reads and writes advance through memory
// instead of striding across whole local arrays); row-major symmetrically. Panels are independent,
// so large tiles spread them over OpenMP threads.
constexpr std::int64_t panel_width = 64;

template <class F>
void for_each_piece(const tile& t, storage_order dst_order, F&& piece) {
  const bool col_major = dst_order == storage_order::col_major;
  const std::vector<run>& outer = col_major ? t.col_runs : t.row_runs;
  const std::vector<run>& inner = col_major ? t.row_runs : t.col_runs;
  std::vector<run> panels;
  for (const run& o : outer)
    for (std::int64_t k = 0; k < o.length; k += panel_width) panels.push_back(sub_run(o, k, std::min(panel_width, o.length - k)));
  auto one_panel = [&](const run& o) {
    for (const run& i : inner) {
      if (col_major)
        piece(i, o);
      else
        piece(o, i);
    }
  };
  if (panels.size() >= 2 && t.rows * t.cols >= kernels::parallel_threshold && !omp_in_parallel() &&
      omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(dynamic)
    for (std::size_t k = 0; k < panels.size(); ++k) one_panel(panels[k]);
  } else {
    for (const run& o : panels) one_panel(o);
  }
}

// A(i,j) = alpha * op(B)(i,j) + beta * A(i,j) where op(B) is given in A's orientation by `bt`/`bt_s`:
// the kernel takes B in its own orientation, so the strides are swapped back for (conj-)transposes.
template <class T>
void apply(const job_plan& jp, T* dst, kernels::strided dst_s, const T* bt, kernels::strided bt_s, std::int64_t rows,
           std::int64_t cols, T alpha, T beta, kernels::store_hint stores) {
  if (jp.operation == op::identity)
    kernels::transform_block(dst, dst_s, bt, bt_s, rows, cols, op::identity, alpha, beta, stores);
  else
    kernels::transform_block(dst, dst_s, bt, kernels::strided{bt_s.cs, bt_s.rs}, rows, cols, jp.operation, alpha,
                             beta, stores);
}

template <class T>
void pack_tile(const job_plan& jp, const tile& t, const T* b_base, std::byte* message, kernels::store_hint stores) {
  T* packed = reinterpret_cast<T*>(message + t.byte_offset);
  const kernels::strided ps = packed_strides(jp.packed_order, t.rows, t.cols);
  for_each_piece(t, jp.packed_order, [&](const run& r, const run& c) {
    const placement src = jp.b_view.at(r.b_block, c.b_block, r.b_local, c.b_local);
    kernels::copy_block(packed + r.packed * ps.rs + c.packed * ps.cs, ps, b_base + src.offset, src.strides, r.length,
                        c.length, stores);
  });
}

template <class T>
void unpack_tile(const job_plan& jp, const tile& t, T* a_base, const std::byte* message, T alpha, T beta,
                 kernels::store_hint stores) {
  const T* packed = reinterpret_cast<const T*>(message + t.byte_offset);
  const kernels::strided ps = packed_strides(jp.packed_order, t.rows, t.cols);
  for_each_piece(t, jp.a_order, [&](const run& r, const run& c) {
    const placement dst = jp.a_view.at(r.a_block, c.a_block, r.a_local, c.a_local);
    apply(jp, a_base + dst.offset, dst.strides, packed + r.packed * ps.rs + c.packed * ps.cs, ps, r.length, c.length,
          alpha, beta, stores);
  });
}

// A tile transformed straight from op(B)'s storage into A: this rank's own B (local tiles), or a node
// peer's B in a node_buffer (b_view is then the peer's storage).
template <class T>
void direct_tile(const job_plan& jp, const tile& t, T* a_base, const T* b_base, const storage_view& b_view, T alpha,
                 T beta, kernels::store_hint stores) {
  for_each_piece(t, jp.a_order, [&](const run& r, const run& c) {
    const placement dst = jp.a_view.at(r.a_block, c.a_block, r.a_local, c.a_local);
    const placement src = b_view.at(r.b_block, c.b_block, r.b_local, c.b_local);
    // alpha == 0 allows a null B: the kernel does not read it, so no address is formed from it.
    const T* b = b_base ? b_base + src.offset : nullptr;
    apply(jp, a_base + dst.offset, dst.strides, b, src.strides, r.length, c.length, alpha, beta, stores);
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
                   result_stores);
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
                   from_scalar<T>(jb.beta), result_stores);
  });
}

void tile_ops::pack_message(const peer_message& m, std::byte* dst) const {
  for (const tile& t : m.tiles) pack(t, dst);
}

void tile_ops::unpack_message(const peer_message& m, const std::byte* src) const {
  for (const tile& t : m.tiles) unpack(t, src);
}

}  // namespace redist::detail
