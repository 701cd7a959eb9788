// SPDX-License-Identifier: BSD-3-Clause
// Local block kernels (see redist/transform/kernels.hpp).
//
// Every call is first reduced to one canonical "plane": an n_inner x n_outer loop nest over
// dst[i*d_in + j*d_out] and src[i*s_in + j*s_out], where op(src)'s transposition has been folded into
// the source strides and the inner dimension is the one along which dst is contiguous (so writes
// stream). Three loop shapes then cover everything:
//   stream     both sides unit-stride along the inner dimension (memcpy for plain copies);
//   transpose  dst unit-stride inner, src unit-stride outer: cache-blocked tiles with prefetch, each
//              tile in 4x4 (2x2) register blocks where the CPU and the operation allow (simd.hpp);
//   general    any other strides: tiled scalar loops (correct, not tuned).
// The arithmetic (copy, scale, axpby, zero, scale-dst) is a functor chosen once per call, so each
// loop shape is compiled per operation without per-element branches.
#include "redist/transform/kernels.hpp"

#include "simd.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace redist::kernels {

namespace {

using index = std::int64_t;

template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

// Complex products written out: std::complex's operator* follows C99 Annex G (inf/NaN recovery through
// a library call), which blocks vectorisation; BLAS uses the plain formula, and so do we.
template <class T>
inline T multiply(const T& a, const T& b) {
  if constexpr (is_complex_v<T>) {
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  } else {
    return a * b;
  }
}

template <bool Conj, class T>
inline T conj_if(const T& v) {
  if constexpr (Conj) {
    return T(v.real(), -v.imag());
  } else {
    return v;
  }
}

// ---- per-element operations -------------------------------------------------------------------
// `plain_copy` marks functors that may be replaced by memcpy on contiguous runs.

template <class T, bool Conj>
struct copy_op {
  static constexpr bool plain_copy = !Conj;
  void operator()(T& d, const T& s) const { d = conj_if<Conj>(s); }
};

template <class T, bool Conj>
struct scale_op {  // beta == 0: dst is written, never read
  static constexpr bool plain_copy = false;
  T alpha;
  void operator()(T& d, const T& s) const { d = multiply(alpha, conj_if<Conj>(s)); }
};

template <class T, bool Conj>
struct axpby_op {
  static constexpr bool plain_copy = false;
  T alpha, beta;
  void operator()(T& d, const T& s) const { d = multiply(alpha, conj_if<Conj>(s)) + multiply(beta, d); }
};

// alpha == 0: the source is never read (the plane's source aliases dst and is ignored).
template <class T>
struct zero_op {
  static constexpr bool plain_copy = false;
  void operator()(T& d, const T&) const { d = T(0); }
};

template <class T>
struct scale_dst_op {
  static constexpr bool plain_copy = false;
  T beta;
  void operator()(T& d, const T&) const { d = multiply(beta, d); }
};

// ---- register-blocked transposes (simd.hpp) ------------------------------------------------------
// Which simd::lane_op an operation maps to for element type T, if any: copies move bytes (any element
// of 4, 8 or 16 bytes), conjugating copies only complex<double> (16-byte lanes), arithmetic only the
// real types float and double.

template <class T, class Op>
struct simd_lane {
  static constexpr bool supported = false;
};
template <class T, bool Conj>
struct simd_lane<T, copy_op<T, Conj>> {
  static constexpr bool supported =
      Conj ? std::is_same_v<T, std::complex<double>> : (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16);
  static simd::lane_op op() { return Conj ? simd::lane_op::conj_copy : simd::lane_op::copy; }
  static T alpha(const copy_op<T, Conj>&) { return T(1); }
  static T beta(const copy_op<T, Conj>&) { return T(0); }
};
template <class T>
struct simd_lane<T, scale_op<T, false>> {
  static constexpr bool supported = std::is_same_v<T, float> || std::is_same_v<T, double>;
  static simd::lane_op op() { return simd::lane_op::scale; }
  static T alpha(const scale_op<T, false>& f) { return f.alpha; }
  static T beta(const scale_op<T, false>&) { return T(0); }
};
template <class T>
struct simd_lane<T, axpby_op<T, false>> {
  static constexpr bool supported = std::is_same_v<T, float> || std::is_same_v<T, double>;
  static simd::lane_op op() { return simd::lane_op::axpby; }
  static T alpha(const axpby_op<T, false>& f) { return f.alpha; }
  static T beta(const axpby_op<T, false>& f) { return f.beta; }
};

// Register block edge (lanes) for T's size.
template <class T>
constexpr std::int64_t simd_block = sizeof(T) == 16 ? 2 : 4;

// Runs the register-blocked transpose over the largest ni x nj corner of the canonical tile whose sides
// are multiples of the register block; returns false (nothing done) where it does not apply.
template <class T, class Op>
bool simd_transpose(T* dst, std::int64_t d_out, const T* src, std::int64_t s_in, std::int64_t ni, std::int64_t nj,
                    const Op& apply, simd::row_prefetch next) {
  if constexpr (!simd_lane<T, Op>::supported) {
    return false;
  } else {
    if (!simd::available() || ni <= 0 || nj <= 0) return false;
    using lane = simd_lane<T, Op>;
    if constexpr (sizeof(T) == 16) {
      simd::transpose_16byte(reinterpret_cast<double*>(dst), d_out, reinterpret_cast<const double*>(src), s_in, ni, nj,
                             lane::op(), next);
    } else if constexpr (sizeof(T) == 8) {
      double alpha = 1.0, beta = 0.0;
      if constexpr (std::is_same_v<T, double>) {
        alpha = lane::alpha(apply);
        beta = lane::beta(apply);
      }
      simd::transpose_8byte(reinterpret_cast<double*>(dst), d_out, reinterpret_cast<const double*>(src), s_in, ni, nj,
                            lane::op(), alpha, beta, next);
    } else {
      float alpha = 1.0f, beta = 0.0f;
      if constexpr (std::is_same_v<T, float>) {
        alpha = lane::alpha(apply);
        beta = lane::beta(apply);
      }
      simd::transpose_4byte(reinterpret_cast<float*>(dst), d_out, reinterpret_cast<const float*>(src), s_in, ni, nj,
                            lane::op(), alpha, beta, next);
    }
    return true;
  }
}

// ---- canonical problem --------------------------------------------------------------------------

template <class T>
struct plane {
  T* dst;
  const T* src;
  index n_inner, n_outer;
  index d_in, d_out, s_in, s_out;
  bool streaming;  // non-temporal stores: plain copies of contiguous runs, and register transposes
};

// `src_s` are the strides of op(src) (transposition already folded in).
template <class T>
plane<T> make_plane(T* dst, strided dst_s, const T* src, strided src_s, index rows, index cols, store_hint stores) {
  bool rows_inner;
  if (rows == 1 && cols > 1)
    rows_inner = false;  // a single row: run along it whatever the strides say
  else if (cols == 1)
    rows_inner = true;
  else if (dst_s.rs == 1)
    rows_inner = true;  // dst contiguous down columns: write streams
  else if (dst_s.cs == 1)
    rows_inner = false;
  else if (src_s.rs == 1)
    rows_inner = true;  // at least read contiguously
  else if (src_s.cs == 1)
    rows_inner = false;
  else
    rows_inner = std::llabs(dst_s.rs) <= std::llabs(dst_s.cs);

  const bool streaming = stores == store_hint::streaming;
  plane<T> p = rows_inner ? plane<T>{dst, src, rows, cols, dst_s.rs, dst_s.cs, src_s.rs, src_s.cs, streaming}
                          : plane<T>{dst, src, cols, rows, dst_s.cs, dst_s.rs, src_s.cs, src_s.rs, streaming};
  // Strides of a dimension of extent 1 are meaningless; normalising them lets 1xN, Nx1 and 1x1 blocks
  // take the contiguous paths.
  if (p.n_inner == 1) p.d_in = p.s_in = 1;
  if (p.n_outer == 1) p.d_out = p.s_out = p.n_inner;
  // Both sides one contiguous run: a single 1-D loop (or one memcpy).
  if (p.d_in == 1 && p.s_in == 1 && p.d_out == p.n_inner && p.s_out == p.n_inner) {
    p.n_inner *= p.n_outer;
    p.n_outer = 1;
    p.d_out = p.s_out = p.n_inner;
  }
  return p;
}

bool go_parallel(index elements) {
  return elements >= parallel_threshold && !omp_in_parallel() && omp_get_max_threads() > 1;
}

// ---- stream: dst and src unit-stride along the inner dimension ----------------------------------

template <class T, class Op>
inline void stream_run(const plane<T>& p, index j, index i_begin, index i_end, const Op& apply, bool streaming) {
  T* __restrict d = p.dst + j * p.d_out;
  const T* __restrict s = p.src + j * p.s_out;
  if constexpr (Op::plain_copy) {
    // A library call per run only pays off for runs longer than a few elements (packing thin blocks
    // makes many short runs).
    if (i_end - i_begin >= 16) {
      const auto bytes = static_cast<std::size_t>(i_end - i_begin) * sizeof(T);
      if (streaming)
        simd::streaming_copy(d + i_begin, s + i_begin, bytes);
      else
        std::memcpy(d + i_begin, s + i_begin, bytes);
      return;
    }
  }
  for (index i = i_begin; i < i_end; ++i) apply(d[i], s[i]);
}

// Non-temporal stores (plain copies with p.streaming) are weakly ordered: every thread that made them
// fences before the kernel returns, so the data is published like ordinary stores. They are used where they fill
// whole cache lines: runs that follow each other in dst (packing), or runs of at least 1 KiB, whose partial lines
// at both ends are a small part. (A partial line written that way is merged in memory; runs of 32 doubles
// unpacked with non-temporal stores made a 16-core Xeon's pdgemr2d 1.4-1.9x slower.)
constexpr index min_streaming_run_bytes = 1024;

template <class T, class Op>
void stream(const plane<T>& p, const Op& apply) {
  const bool streaming = Op::plain_copy && p.streaming &&
                         (p.d_out == p.n_inner || p.n_inner * static_cast<index>(sizeof(T)) >= min_streaming_run_bytes);
  if (!go_parallel(p.n_inner * p.n_outer)) {
    for (index j = 0; j < p.n_outer; ++j) stream_run(p, j, 0, p.n_inner, apply, streaming);
    if (streaming) simd::store_fence();
    return;
  }
  // Work items are (column, chunk of the column); columns are cut only when there are too few of them
  // to keep every thread busy (a single long contiguous run, say).
  const index threads = omp_get_max_threads();
  index chunk = p.n_inner;
  if (p.n_outer < 4 * threads) {
    const index pieces_per_column = (4 * threads + p.n_outer - 1) / p.n_outer;
    chunk = (p.n_inner + pieces_per_column - 1) / pieces_per_column;
    chunk = (chunk + 63) / 64 * 64;  // whole cache lines per piece (for 8-byte and larger types)
  }
  const index chunks = (p.n_inner + chunk - 1) / chunk;
  const index items = chunks * p.n_outer;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (index item = 0; item < items; ++item) {
      const index j = item / chunks;
      const index i_begin = (item % chunks) * chunk;
      stream_run(p, j, i_begin, std::min(p.n_inner, i_begin + chunk), apply, streaming);
    }
    if (streaming) simd::store_fence();
  }
}

// ---- tiling -----------------------------------------------------------------------------------

struct tiling {
  index inner, outer;  // tile extents
  index inner_tiles, outer_tiles;
  index count() const { return inner_tiles * outer_tiles; }
};

// Tiles of `inner` x `outer`, shrunk (halving the larger side, down to 32) when a parallel run would
// otherwise leave threads without a tile.
tiling make_tiling(index n_inner, index n_outer, index inner, index outer, bool parallel) {
  if (parallel) {
    const index wanted = 4 * static_cast<index>(omp_get_max_threads());
    auto tiles = [&](index ti, index to) { return ((n_inner + ti - 1) / ti) * ((n_outer + to - 1) / to); };
    while (tiles(inner, outer) < wanted && (inner > 32 || outer > 32)) {
      if (inner >= outer)
        inner /= 2;
      else
        outer /= 2;
    }
  }
  return {inner, outer, (n_inner + inner - 1) / inner, (n_outer + outer - 1) / outer};
}

// Runs body(i0, i1, j0, j1, tile number) for every tile, in parallel when the block is large. Tiles are numbered
// outer-major (consecutive tiles go down the same strip of dst columns) and split statically, so each
// thread walks a contiguous run of tiles.
template <class Body>
void for_each_tile(index n_inner, index n_outer, const tiling& t, bool parallel, const Body& body) {
  auto run = [&](index tile) {
    const index i0 = (tile % t.inner_tiles) * t.inner;
    const index j0 = (tile / t.inner_tiles) * t.outer;
    body(i0, std::min(n_inner, i0 + t.inner), j0, std::min(n_outer, j0 + t.outer), tile);
  };
  const index count = t.count();
  if (parallel) {
#pragma omp parallel for schedule(static)
    for (index tile = 0; tile < count; ++tile) run(tile);
  } else {
    for (index tile = 0; tile < count; ++tile) run(tile);
  }
}

// ---- transpose: dst unit-stride inner, src unit-stride outer ------------------------------------
//
// dst(i, j) = dst[i + j*d_out] is produced from src[i*s_in + j]. Within a tile, each dst column
// segment is written as one contiguous run; the source cache lines it touches (one per tile row) serve
// the next few columns too, so every source line is fetched once while the working set stays small
// (256 lines = 16 KiB for doubles). Tiles are sized in bytes, 2 KiB dst runs x 1 KiB src runs: long
// runs on both sides keep the hardware prefetchers busy (measured on 4000x4000 doubles, 32x32 and
// 64x64 tiles were 15-25% slower, and explicit SSE 2x2/4x4 register transposes or writing 4-8 dst
// columns per source line slower still: the loop is bound by memory traffic, not instructions).
//
// Two refinements, both measured on 4000..4096-sized double blocks (on a noisy shared machine, so
// only differences of 20% or more were acted on):
//  - While a tile is processed, the first cache line of every source row of the next tile is
//    prefetched. The rows are a leading dimension apart, a pattern the hardware prefetchers do not
//    follow, so without it the first column of every tile waits for one miss per row; once a row has
//    been touched the hardware streams the rest of it. (Prefetching every line of the next tile cost
//    more than it saved.)
//  - When the source leading dimension is a multiple of 1 KiB (power-of-two sizes, typical in
//    benchmarks), the rows of a tile fall into a handful of cache sets and evict each other before
//    their lines are used up (4K aliasing). Such tiles are first copied row by row into a contiguous
//    buffer, then transposed from there (n = 4096: about 1.4x faster). Not for 16-byte elements: their register
//    blocks read whole source lines at once (simd.cpp), so no line has to survive, and staging only added a copy
//    (complex<double> 2048 x 2048: 0.021 s against 0.034 s; 128 planes of 256 x 256: 0.033 s against 0.046 s).

// True when rows `stride_bytes` apart map to at most 4 distinct 64-byte slots of a 4 KiB page, i.e.
// at most 4 sets of a typical L1 (64 sets of 64 bytes) and few sets of L2.
bool aliasing_stride(index stride_bytes) {
  const index page = 4096;
  index r = ((stride_bytes % page) + page) % page;
  if (r == 0) return true;
  index gcd = page;
  while (r != 0) {
    const index t = gcd % r;
    gcd = r;
    r = t;
  }
  return gcd >= page / 4;
}

template <class T>
T* staging_buffer(index elements) {
  // One per thread, grown on demand, never shrunk: tiles are at most 256 KiB.
  static thread_local std::vector<T> buffer;
  if (static_cast<index>(buffer.size()) < elements) buffer.resize(static_cast<size_t>(elements));
  return buffer.data();
}

// Scalar transpose of the canonical sub-tile rows [i0, i1) x columns [j0, j1).
template <class T, class Op>
inline void scalar_transpose(T* dst, index d_out, const T* src, index s_in, index i0, index i1, index j0, index j1,
                             const Op& apply) {
  for (index j = j0; j < j1; ++j) {
    T* __restrict d = dst + j * d_out;
    const T* __restrict s = src + j;
    for (index i = i0; i < i1; ++i) apply(d[i], s[i * s_in]);
  }
}

// One tile, dst(i, j) = dst[i + j*d_out] from src[i*s_in + j] for i < ni, j < nj: register blocks over
// the block-multiple corner, scalar loops over the edges (or everything where no register path applies).
template <class T, class Op>
void transpose_tile(T* dst, index d_out, const T* src, index s_in, index ni, index nj, const Op& apply,
                    simd::row_prefetch next) {
  constexpr index b = simd_block<T>;
  const index vi = ni / b * b, vj = nj / b * b;
  if (simd_transpose(dst, d_out, src, s_in, vi, vj, apply, next)) {
    scalar_transpose(dst, d_out, src, s_in, vi, ni, 0, nj, apply);
    scalar_transpose(dst, d_out, src, s_in, 0, vi, vj, nj, apply);
    return;
  }
  // Scalar path: the next tile's row prefetches spread evenly over this tile's columns.
  const index per_column = nj > 0 ? (next.count + nj - 1) / nj : 0;
  index row = 0;
  for (index j = 0; j < nj; ++j) {
    for (index k = 0; k < per_column && row < next.count; ++k, ++row)
      __builtin_prefetch(next.first + row * next.stride);
    scalar_transpose(dst, d_out, src, s_in, 0, ni, j, j + 1, apply);
  }
}

// Whether a streaming plane's transpose goes through simd::transpose_{16,8,4}byte_streaming (non-temporal stores,
// whole lines): copies (and scaling of doubles and floats), rows that all start at one offset within a cache line.
// The rest keep ordinary stores.
template <class T, class Op>
bool streaming_transpose_applies(const plane<T>& p) {
  if constexpr (!simd_lane<T, Op>::supported) {
    return false;
  } else {
    constexpr index lanes_per_line = 64 / static_cast<index>(sizeof(T));
    return p.streaming && simd_lane<T, Op>::op() != simd::lane_op::axpby &&  // (beta != 0 never streams)
           reinterpret_cast<std::uintptr_t>(p.dst) % sizeof(T) == 0 && p.d_out % lanes_per_line == 0 &&
           simd::available();
  }
}

// One tile of such a plane.
template <class T, class Op>
void streaming_transpose_tile(T* dst, index d_out, const T* src, index s_in, index ni, index nj, const Op& apply) {
  if constexpr (simd_lane<T, Op>::supported) {
    using lane = simd_lane<T, Op>;
    if constexpr (sizeof(T) == 16) {
      simd::transpose_16byte_streaming(reinterpret_cast<double*>(dst), d_out, reinterpret_cast<const double*>(src),
                                       s_in, ni, nj, lane::op());
    } else if constexpr (sizeof(T) == 8) {
      double alpha = 1.0;
      if constexpr (std::is_same_v<T, double>) alpha = lane::alpha(apply);
      simd::transpose_8byte_streaming(reinterpret_cast<double*>(dst), d_out, reinterpret_cast<const double*>(src), s_in,
                                      ni, nj, lane::op(), alpha);
    } else {
      float alpha = 1.0f;
      if constexpr (std::is_same_v<T, float>) alpha = lane::alpha(apply);
      simd::transpose_4byte_streaming(reinterpret_cast<float*>(dst), d_out, reinterpret_cast<const float*>(src), s_in,
                                      ni, nj, lane::op(), alpha);
    }
    simd::store_fence();  // by the thread that stored (tiles may run on several)
  }
}

template <class T, class Op>
void transpose(const plane<T>& p, const Op& apply) {
  const bool parallel = go_parallel(p.n_inner * p.n_outer);
  if (streaming_transpose_applies<T, Op>(p)) {
    // Wide tiles: the kernel walks each in strips of a few rows across all its columns.
    const tiling t = make_tiling(p.n_inner, p.n_outer, 256, 1024, parallel);
    for_each_tile(p.n_inner, p.n_outer, t, parallel, [&](index i0, index i1, index j0, index j1, index) {
      streaming_transpose_tile<T, Op>(p.dst + i0 + j0 * p.d_out, p.d_out, p.src + i0 * p.s_in + j0, p.s_in, i1 - i0,
                                      j1 - j0, apply);
    });
    return;
  }
  constexpr index dst_run = std::max<index>(8, 2048 / static_cast<index>(sizeof(T)));
  constexpr index src_run = std::max<index>(8, 1024 / static_cast<index>(sizeof(T)));
  const tiling t = make_tiling(p.n_inner, p.n_outer, dst_run, src_run, parallel);
  const index d_out = p.d_out, s_in = p.s_in;
  // Register blocks of 16-byte lanes read whole source lines (simd.cpp): nothing to stage for them.
  const bool whole_lines = sizeof(T) == 16 && simd_lane<T, Op>::supported && simd::available();
  const bool staged = !whole_lines && p.n_inner > 1 && aliasing_stride(s_in * static_cast<index>(sizeof(T)));

  for_each_tile(p.n_inner, p.n_outer, t, parallel, [&](index i0, index i1, index j0, index j1, index tile) {
    T* d = p.dst + i0 + j0 * d_out;
    if (staged) {
      const index width = j1 - j0;
      T* __restrict buf = staging_buffer<T>(t.inner * t.outer);
      for (index i = i0; i < i1; ++i)
        std::memcpy(buf + (i - i0) * width, p.src + i * s_in + j0, static_cast<size_t>(width) * sizeof(T));
      transpose_tile(d, d_out, buf, width, i1 - i0, width, apply, simd::row_prefetch{});
      return;
    }
    // The first line of each source row of the next tile.
    const index next = tile + 1;
    simd::row_prefetch rows;
    if (next < t.count()) {
      const index next_i0 = (next % t.inner_tiles) * t.inner;
      const index next_j0 = (next / t.inner_tiles) * t.outer;
      rows.first = reinterpret_cast<const std::byte*>(p.src + next_i0 * s_in + next_j0);
      rows.stride = s_in * static_cast<index>(sizeof(T));
      rows.count = std::min(p.n_inner, next_i0 + t.inner) - next_i0;
    }
    transpose_tile(d, d_out, p.src + i0 * s_in + j0, s_in, i1 - i0, j1 - j0, apply, rows);
  });
}

// ---- general strides -----------------------------------------------------------------------------

template <class T, class Op>
void general(const plane<T>& p, const Op& apply) {
  const bool parallel = go_parallel(p.n_inner * p.n_outer);
  const tiling t = make_tiling(p.n_inner, p.n_outer, 64, 64, parallel);
  for_each_tile(p.n_inner, p.n_outer, t, parallel, [&](index i0, index i1, index j0, index j1, index) {
    for (index j = j0; j < j1; ++j) {
      T* d = p.dst + j * p.d_out;
      const T* s = p.src + j * p.s_out;
      for (index i = i0; i < i1; ++i) apply(d[i * p.d_in], s[i * p.s_in]);
    }
  });
}

template <class T, class Op>
void run(const plane<T>& p, const Op& apply) {
  if (p.d_in == 1 && p.s_in == 1)
    stream(p, apply);
  else if (p.d_in == 1 && p.s_out == 1)
    transpose(p, apply);
  else
    general(p, apply);
}

}  // namespace

template <class T>
void transform_block(T* dst, strided dst_s, const T* src, strided src_s, std::int64_t rows, std::int64_t cols, op o,
                     T alpha, T beta, store_hint stores) {
  if (rows <= 0 || cols <= 0) return;
  if (alpha == T(0)) {
    // dst = beta * dst: the source is not touched; the plane's source aliases dst to reuse the loops.
    if (beta == T(1)) return;
    const plane<T> p = make_plane<T>(dst, dst_s, dst, dst_s, rows, cols, store_hint::cached);
    if (beta == T(0))
      run(p, zero_op<T>{});
    else
      run(p, scale_dst_op<T>{beta});
    return;
  }
  const strided op_src_s = o == op::identity ? src_s : strided{src_s.cs, src_s.rs};
  // Streaming stores only where dst is not read: with beta != 0 its lines are in the cache anyway.
  const plane<T> p = make_plane(dst, dst_s, src, op_src_s, rows, cols, beta == T(0) ? stores : store_hint::cached);

  auto dispatch = [&](auto conj) {
    constexpr bool Conj = decltype(conj)::value;
    if (beta == T(0)) {
      if (alpha == T(1))
        run(p, copy_op<T, Conj>{});
      else
        run(p, scale_op<T, Conj>{alpha});
    } else {
      run(p, axpby_op<T, Conj>{alpha, beta});
    }
  };
  if constexpr (is_complex_v<T>) {
    if (o == op::conj_transpose) {
      dispatch(std::true_type{});
      return;
    }
  }
  dispatch(std::false_type{});
}

template <class T>
void copy_block(T* dst, strided dst_s, const T* src, strided src_s, std::int64_t rows, std::int64_t cols,
                store_hint stores) {
  if (rows <= 0 || cols <= 0) return;
  run(make_plane(dst, dst_s, src, src_s, rows, cols, stores), copy_op<T, false>{});
}

#define REDIST_INSTANTIATE_KERNELS(T)                                                                                 \
  template void transform_block<T>(T*, strided, const T*, strided, std::int64_t, std::int64_t, op, T, T, store_hint); \
  template void copy_block<T>(T*, strided, const T*, strided, std::int64_t, std::int64_t, store_hint);

REDIST_INSTANTIATE_KERNELS(float)
REDIST_INSTANTIATE_KERNELS(double)
REDIST_INSTANTIATE_KERNELS(std::complex<float>)
REDIST_INSTANTIATE_KERNELS(std::complex<double>)
REDIST_INSTANTIATE_KERNELS(std::int32_t)
REDIST_INSTANTIATE_KERNELS(std::int64_t)

#undef REDIST_INSTANTIATE_KERNELS

}  // namespace redist::kernels
