// SPDX-License-Identifier: BSD-3-Clause
// Register-blocked transposes and non-temporal copies (see simd.hpp).
//
// Why registers: measured on 32x32 double pieces scattered into a 4000x4000 matrix (the unpack of a
// 32x32 -> 128x128 block-cyclic transpose), a 4x4 AVX2 transpose was 1.4-1.8x faster than the scalar
// tiled loop. Non-temporal stores of those 32-byte column pieces (half lines) made it faster still in a single
// process, but 1.15-1.2x slower in the benchmark's 4-rank transposes (4 ranks on 2 cores, N = 8000), so the
// streaming transposes below write whole lines only (16 x 4 blocks of 4-byte lanes, 8 x 4 of 8-byte ones, 4 x 4
// of 16-byte ones); packing contiguous runs with non-temporal stores was 1.6x faster than memcpy of the runs. The
// functions are compiled for AVX2 through target attributes and chosen at run time, so the library still
// runs on any x86-64 CPU (and builds elsewhere, where available() is false).
#include "simd.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define REDIST_HAVE_X86_SIMD 1
#include <immintrin.h>
#else
#define REDIST_HAVE_X86_SIMD 0
#endif

namespace redist::kernels::simd {

#if REDIST_HAVE_X86_SIMD

bool available() noexcept {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

void store_fence() noexcept { _mm_sfence(); }

namespace {

#define REDIST_AVX2 __attribute__((target("avx2,fma")))

// Issues this column step's share of the next tile's row prefetches.
struct prefetcher {
  row_prefetch rows;
  index per_step;
  index issued = 0;
  prefetcher(row_prefetch r, index steps) : rows(r), per_step(steps > 0 ? (r.count + steps - 1) / steps : 0) {}
  void step() {
    for (index k = 0; k < per_step && issued < rows.count; ++k, ++issued)
      __builtin_prefetch(rows.first + issued * rows.stride);
  }
};

// Write-only transposes (dst not read) prefetch the destination lines of the next strip of columns before
// storing into this one: the columns lie a leading dimension apart, so each store would otherwise miss
// with its read-for-ownership in turn; loads of dst (axpby) start their misses early on their own. Up to
// 8 lines a column: past that the hardware prefetcher follows the column.
template <class T>
inline void prefetch_columns_for_write(T* column, index d_out, index columns, index rows) {
  constexpr index line = 64 / sizeof(T);
  const index lines = std::min<index>((rows + line - 1) / line, 8);
  for (index q = 0; q < columns; ++q)
    for (index l = 0; l < lines; ++l) __builtin_prefetch(column + q * d_out + l * line, 1, 3);
}

// The 4x4 register transposes, per lane size: a register of four lanes and its operations.
struct lanes_8byte {  // double, and the bytes of any 8-byte element
  using value = double;
  using reg = __m256d;
  REDIST_AVX2 static reg load(const value* p) { return _mm256_loadu_pd(p); }
  REDIST_AVX2 static void store(value* p, reg v) { _mm256_storeu_pd(p, v); }
  REDIST_AVX2 static reg splat(value x) { return _mm256_set1_pd(x); }
  REDIST_AVX2 static reg mul(reg a, reg b) { return _mm256_mul_pd(a, b); }
  REDIST_AVX2 static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  // Rows r[0..3] of a 4x4 block become its columns.
  REDIST_AVX2 static void transpose(reg r[4]) {
    const reg t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const reg t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
  }
};

struct lanes_4byte {  // float, and the bytes of any 4-byte element
  using value = float;
  using reg = __m128;
  REDIST_AVX2 static reg load(const value* p) { return _mm_loadu_ps(p); }
  REDIST_AVX2 static void store(value* p, reg v) { _mm_storeu_ps(p, v); }
  REDIST_AVX2 static reg splat(value x) { return _mm_set1_ps(x); }
  REDIST_AVX2 static reg mul(reg a, reg b) { return _mm_mul_ps(a, b); }
  REDIST_AVX2 static reg fmadd(reg a, reg b, reg c) { return _mm_fmadd_ps(a, b, c); }
  REDIST_AVX2 static void transpose(reg r[4]) { _MM_TRANSPOSE4_PS(r[0], r[1], r[2], r[3]); }
};

template <class Lanes, lane_op Op>
REDIST_AVX2 void transpose_4x4(typename Lanes::value* dst, index d_out, const typename Lanes::value* src, index s_in,
                               index ni, index nj, typename Lanes::value alpha, typename Lanes::value beta,
                               row_prefetch next) {
  using reg = typename Lanes::reg;
  const reg va = Lanes::splat(alpha), vb = Lanes::splat(beta);
  prefetcher pf(next, nj / 4);
  constexpr bool write_only = Op != lane_op::axpby;
  if constexpr (write_only) prefetch_columns_for_write(dst, d_out, std::min<index>(nj, 4), ni);
  for (index j = 0; j < nj; j += 4) {
    pf.step();
    if constexpr (write_only)
      if (j + 4 < nj) prefetch_columns_for_write(dst + (j + 4) * d_out, d_out, std::min<index>(nj - j - 4, 4), ni);
    for (index i = 0; i < ni; i += 4) {
      // Row q of the 4x4 block of dst (lanes j..j+3) is row i+q of src; transposed, c[q] is dst column j+q.
      const typename Lanes::value* s = src + i * s_in + j;
      reg c[4] = {Lanes::load(s), Lanes::load(s + s_in), Lanes::load(s + 2 * s_in), Lanes::load(s + 3 * s_in)};
      Lanes::transpose(c);
      for (int q = 0; q < 4; ++q) {
        typename Lanes::value* d = dst + i + (j + q) * d_out;
        if constexpr (Op == lane_op::copy) {
          Lanes::store(d, c[q]);
        } else if constexpr (Op == lane_op::scale) {
          Lanes::store(d, Lanes::mul(va, c[q]));
        } else {
          Lanes::store(d, Lanes::fmadd(va, c[q], Lanes::mul(vb, Lanes::load(d))));
        }
      }
    }
  }
}

// One entry point per lane size: the operation becomes a template argument (conj_copy is a copy for
// real lanes; callers never pass it for them).
template <class Lanes>
void transpose_lanes(typename Lanes::value* dst, index d_out, const typename Lanes::value* src, index s_in, index ni,
                     index nj, lane_op o, typename Lanes::value alpha, typename Lanes::value beta, row_prefetch next) {
  switch (o) {
    case lane_op::copy:
    case lane_op::conj_copy:
      transpose_4x4<Lanes, lane_op::copy>(dst, d_out, src, s_in, ni, nj, alpha, beta, next);
      return;
    case lane_op::scale:
      transpose_4x4<Lanes, lane_op::scale>(dst, d_out, src, s_in, ni, nj, alpha, beta, next);
      return;
    case lane_op::axpby:
      transpose_4x4<Lanes, lane_op::axpby>(dst, d_out, src, s_in, ni, nj, alpha, beta, next);
      return;
  }
}

// 16-byte lanes (complex<double>): a lane is a pair of doubles. Blocks of 4 source rows x 4 columns (eight
// registers): each source row's 64 bytes are a whole cache line used at once, so nothing depends on source lines
// surviving in the cache between columns (with power-of-two leading dimensions the rows of a tile share a few
// cache sets and evict each other), and each destination column gets a whole line too; 2 x 4 blocks at the bottom
// edge, 2 x 2 at the right edge.
template <lane_op Op, bool Streaming = false>
REDIST_AVX2 inline void store_16byte_pair(double* dst, __m256d c) {
  // conj_copy flips the sign of the imaginary parts (odd doubles).
  if constexpr (Op == lane_op::conj_copy) c = _mm256_xor_pd(c, _mm256_set_pd(-0.0, 0.0, -0.0, 0.0));
  if constexpr (Streaming)
    _mm256_stream_pd(dst, c);
  else
    _mm256_storeu_pd(dst, c);
}

// One 4 x 4 block: source rows s, s + s_in, ... (4 lanes each, one cache line when aligned) into destination rows d,
// d + d_out, ... (strides in lanes).
template <lane_op Op, bool Streaming>
REDIST_AVX2 inline void transpose_16byte_block(double* d, index d_out, const double* s, index s_in) {
  const __m256d a0 = _mm256_loadu_pd(s), a1 = _mm256_loadu_pd(s + 4);
  const __m256d b0 = _mm256_loadu_pd(s + 2 * s_in), b1 = _mm256_loadu_pd(s + 2 * s_in + 4);
  const __m256d c0 = _mm256_loadu_pd(s + 4 * s_in), c1 = _mm256_loadu_pd(s + 4 * s_in + 4);
  const __m256d e0 = _mm256_loadu_pd(s + 6 * s_in), e1 = _mm256_loadu_pd(s + 6 * s_in + 4);
  store_16byte_pair<Op, Streaming>(d, _mm256_permute2f128_pd(a0, b0, 0x20));
  store_16byte_pair<Op, Streaming>(d + 4, _mm256_permute2f128_pd(c0, e0, 0x20));
  d += 2 * d_out;
  store_16byte_pair<Op, Streaming>(d, _mm256_permute2f128_pd(a0, b0, 0x31));
  store_16byte_pair<Op, Streaming>(d + 4, _mm256_permute2f128_pd(c0, e0, 0x31));
  d += 2 * d_out;
  store_16byte_pair<Op, Streaming>(d, _mm256_permute2f128_pd(a1, b1, 0x20));
  store_16byte_pair<Op, Streaming>(d + 4, _mm256_permute2f128_pd(c1, e1, 0x20));
  d += 2 * d_out;
  store_16byte_pair<Op, Streaming>(d, _mm256_permute2f128_pd(a1, b1, 0x31));
  store_16byte_pair<Op, Streaming>(d + 4, _mm256_permute2f128_pd(c1, e1, 0x31));
}

template <lane_op Op>
REDIST_AVX2 void transpose_16byte_impl(double* dst, index d_out, const double* src, index s_in, index ni, index nj,
                                       row_prefetch next) {
  prefetcher pf(next, (nj + 3) / 4);
  struct lane16 {
    double re, im;
  };
  lane16* const lanes = reinterpret_cast<lane16*>(dst);
  prefetch_columns_for_write(lanes, d_out, std::min<index>(nj, 4), ni);
  index j = 0;
  for (; j + 4 <= nj; j += 4) {
    pf.step();
    if (j + 4 < nj) prefetch_columns_for_write(lanes + (j + 4) * d_out, d_out, std::min<index>(nj - j - 4, 4), ni);
    index i = 0;
    for (; i + 4 <= ni; i += 4) {
      transpose_16byte_block<Op, false>(dst + 2 * (i + j * d_out), d_out, src + 2 * (i * s_in + j), s_in);
    }
    for (; i < ni; i += 2) {
      const double* s = src + 2 * (i * s_in + j);
      const __m256d a0 = _mm256_loadu_pd(s), a1 = _mm256_loadu_pd(s + 4);
      const __m256d b0 = _mm256_loadu_pd(s + 2 * s_in), b1 = _mm256_loadu_pd(s + 2 * s_in + 4);
      store_16byte_pair<Op>(dst + 2 * (i + (j)*d_out), _mm256_permute2f128_pd(a0, b0, 0x20));
      store_16byte_pair<Op>(dst + 2 * (i + (j + 1) * d_out), _mm256_permute2f128_pd(a0, b0, 0x31));
      store_16byte_pair<Op>(dst + 2 * (i + (j + 2) * d_out), _mm256_permute2f128_pd(a1, b1, 0x20));
      store_16byte_pair<Op>(dst + 2 * (i + (j + 3) * d_out), _mm256_permute2f128_pd(a1, b1, 0x31));
    }
  }
  for (; j < nj; j += 2) {
    pf.step();
    for (index i = 0; i < ni; i += 2) {
      const double* s = src + 2 * (i * s_in + j);
      const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + 2 * s_in);
      store_16byte_pair<Op>(dst + 2 * (i + (j)*d_out), _mm256_permute2f128_pd(r0, r1, 0x20));
      store_16byte_pair<Op>(dst + 2 * (i + (j + 1) * d_out), _mm256_permute2f128_pd(r0, r1, 0x31));
    }
  }
}

// ---- transposes with non-temporal stores ----
// dst(i, j) = op(src(i, j)) as above, for any ni and nj, with dst rows that all start at one offset within a cache
// line (d_out a multiple of a line's lanes). Register blocks of one line's lanes of source rows x 4 columns write
// whole destination lines; the lanes before a row's first line boundary and after its last, and the last nj % 4
// rows, go out lane by lane as non-temporal stores next to the blocks of the same rows: ordinary stores there would
// each wait for a read for ownership of a line a leading dimension away (1.3x the time of the whole transpose on
// 256^3 complex pencil planes 16 bytes off a line). The blocks go in strips of streaming_strip_lanes source rows,
// each across all nj columns: a strip's source lines stay in the level-1 cache from one 4-column step to the next
// and each destination row receives whole consecutive lines. Callers' tiles should be wide (>= 256 columns): one
// thread, 128 planes of 512^2 complex lanes, 128 x 64 tiles in 4-column steps down 128 rows ran at 1.5x memcpy,
// strips of 16 rows across 512 columns at 0.9-1.0x (256- and 1024-lane planes alike).
//
// A lane kernel K knows its buffers and provides line_lanes, lane_bytes, block(i, j) (lanes i .. i + line_lanes of
// rows j .. j + 3) and lanes(j, i0, i1) (lanes [i0, i1) of row j, one by one).
constexpr index streaming_strip_lanes = 16;

template <class K>
REDIST_AVX2 inline void streaming_transpose(const K& k, const void* dst, index ni, index nj) {
  constexpr index line = K::line_lanes;
  constexpr index strip = std::max<index>(streaming_strip_lanes, line);
  const auto address = reinterpret_cast<std::uintptr_t>(dst);
  const index lead = std::min<index>(ni, static_cast<index>((64 - address % 64) % 64 / K::lane_bytes));
  const index body_end = lead + (ni - lead) / line * line;
  const index nj4 = nj / 4 * 4;
  for (index i0 = lead; i0 < body_end; i0 += strip) {
    const index i1 = std::min(i0 + strip, body_end);
    for (index j = 0; j < nj4; j += 4) {
      if (i0 == lead)
        for (index q = 0; q < 4; ++q) k.lanes(j + q, 0, lead);
      for (index i = i0; i < i1; i += line) k.block(i, j);
      if (i1 == body_end)
        for (index q = 0; q < 4; ++q) k.lanes(j + q, body_end, ni);
    }
  }
  if (lead == body_end)  // no whole line in any row
    for (index j = 0; j < nj4; ++j) k.lanes(j, 0, ni);
  for (index j = nj4; j < nj; ++j) k.lanes(j, 0, ni);
}

// 16-byte lanes (copy, conj_copy): transpose_16byte_block's 4 x 4 blocks.
template <lane_op Op>
struct streaming_16byte {
  static constexpr index line_lanes = 4, lane_bytes = 16;
  double* dst;
  index d_out;
  const double* src;
  index s_in;
  REDIST_AVX2 void block(index i, index j) const {
    transpose_16byte_block<Op, true>(dst + 2 * (i + j * d_out), d_out, src + 2 * (i * s_in + j), s_in);
  }
  REDIST_AVX2 void lanes(index j, index i0, index i1) const {
    for (index i = i0; i < i1; ++i) {
      __m128d v = _mm_loadu_pd(src + 2 * (i * s_in + j));
      if constexpr (Op == lane_op::conj_copy) v = _mm_xor_pd(v, _mm_set_pd(-0.0, 0.0));
      _mm_stream_pd(dst + 2 * (i + j * d_out), v);
    }
  }
};

// What the 8- and 4-byte lane kernels share: their buffers, and the lanes stored one by one (copies move the
// bytes: any element of the lane's size; scale multiplies the lane's real type).
template <class V, lane_op Op>
struct streaming_real_lanes {
  V* dst;
  index d_out;
  const V* src;
  index s_in;
  V alpha;
  REDIST_AVX2 void lanes(index j, index i0, index i1) const {
    using bits_type = std::conditional_t<sizeof(V) == 8, long long, int>;
    for (index i = i0; i < i1; ++i) {
      bits_type bits;
      if constexpr (Op == lane_op::scale) {
        const V v = alpha * src[i * s_in + j];
        std::memcpy(&bits, &v, sizeof bits);
      } else {
        std::memcpy(&bits, src + i * s_in + j, sizeof bits);
      }
      if constexpr (sizeof(V) == 8)
        _mm_stream_si64(reinterpret_cast<long long*>(dst + i + j * d_out), bits);
      else
        _mm_stream_si32(reinterpret_cast<int*>(dst + i + j * d_out), bits);
    }
  }
};

// 8-byte lanes: 8 x 4 blocks, two 4 x 4 register transposes.
template <lane_op Op>
struct streaming_8byte : streaming_real_lanes<double, Op> {
  static constexpr index line_lanes = 8, lane_bytes = 8;
  REDIST_AVX2 void block(index i, index j) const {
    const double* s = this->src + i * this->s_in + j;
    double* d = this->dst + i + j * this->d_out;
    __m256d top[4], bottom[4];
    for (int q = 0; q < 4; ++q) {
      top[q] = _mm256_loadu_pd(s + q * this->s_in);
      bottom[q] = _mm256_loadu_pd(s + (q + 4) * this->s_in);
    }
    lanes_8byte::transpose(top);
    lanes_8byte::transpose(bottom);
    for (int q = 0; q < 4; ++q) {
      if constexpr (Op == lane_op::scale) {
        top[q] = _mm256_mul_pd(_mm256_set1_pd(this->alpha), top[q]);
        bottom[q] = _mm256_mul_pd(_mm256_set1_pd(this->alpha), bottom[q]);
      }
      _mm256_stream_pd(d + q * this->d_out, top[q]);
      _mm256_stream_pd(d + q * this->d_out + 4, bottom[q]);
    }
  }
};

// 4-byte lanes: 16 x 4 blocks, four 4 x 4 register transposes.
template <lane_op Op>
struct streaming_4byte : streaming_real_lanes<float, Op> {
  static constexpr index line_lanes = 16, lane_bytes = 4;
  REDIST_AVX2 void block(index i, index j) const {
    const float* s = this->src + i * this->s_in + j;
    __m128 r[4][4];  // r[b]: rows 4b .. 4b + 3, transposed into columns j .. j + 3
    for (int b = 0; b < 4; ++b) {
      for (int q = 0; q < 4; ++q) r[b][q] = _mm_loadu_ps(s + (4 * b + q) * this->s_in);
      lanes_4byte::transpose(r[b]);
    }
    for (int q = 0; q < 4; ++q) {
      __m256 low = _mm256_set_m128(r[1][q], r[0][q]), high = _mm256_set_m128(r[3][q], r[2][q]);
      if constexpr (Op == lane_op::scale) {
        low = _mm256_mul_ps(_mm256_set1_ps(this->alpha), low);
        high = _mm256_mul_ps(_mm256_set1_ps(this->alpha), high);
      }
      float* d = this->dst + i + (j + q) * this->d_out;
      _mm256_stream_ps(d, low);
      _mm256_stream_ps(d + 8, high);
    }
  }
};

// The 8- and 4-byte entry points: copy (conj_copy is a copy for real lanes) or scale.
template <template <lane_op> class Kernel, class V>
void streaming_real_transpose(V* dst, index d_out, const V* src, index s_in, index ni, index nj, lane_op o, V alpha) {
  if (o == lane_op::scale)
    streaming_transpose(Kernel<lane_op::scale>{{dst, d_out, src, s_in, alpha}}, dst, ni, nj);
  else
    streaming_transpose(Kernel<lane_op::copy>{{dst, d_out, src, s_in, alpha}}, dst, ni, nj);
}

// A long copy runs as four streams at once, the quarters of the range a line at a time: one stream of
// non-temporal stores leaves most of the memory system's parallelism unused (one thread, 1 GiB in runs of 4 MiB on
// this VM: 9 GB/s as one stream, 11.5 GB/s as four, glibc's memcpy 9.7 GB/s over the whole GiB; runs of 16 KiB:
// 7.9 against 9.9 GB/s). At 8 KiB four streams gain little and at 2 KiB they lose.
constexpr std::size_t four_stream_bytes = 16 << 10;

REDIST_AVX2 void streaming_copy_avx2(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (bytes >= four_stream_bytes) {
    // Ordinary stores up to dst's first line boundary, so that every quarter starts on a line.
    const std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
    std::memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    const std::size_t quarter = bytes / 4 / 64 * 64;
    for (std::size_t k = 0; k < quarter; k += 64)
      for (std::size_t q = 0; q < 4; ++q) {
        const char* from = s + q * quarter + k;
        char* to = d + q * quarter + k;
        const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from));
        const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + 32));
        _mm256_stream_si256(reinterpret_cast<__m256i*>(to), low);
        _mm256_stream_si256(reinterpret_cast<__m256i*>(to + 32), high);
      }
    d += 4 * quarter;
    s += 4 * quarter;
    bytes -= 4 * quarter;  // under 4 lines: the single stream below
  }
  // Ordinary stores up to the first 16-byte boundary of dst, then 16-byte non-temporal stores.
  const std::size_t head = std::min<std::size_t>(bytes, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  std::size_t k = 0;
  for (; k + 64 <= bytes; k += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 48), e);
  }
  for (; k + 16 <= bytes; k += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k)));
  std::memcpy(d + k, s + k, bytes - k);
}

}  // namespace

void transpose_8byte(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                     double alpha, double beta, row_prefetch next) noexcept {
  transpose_lanes<lanes_8byte>(dst, d_out, src, s_in, ni, nj, o, alpha, beta, next);
}

void transpose_4byte(float* dst, index d_out, const float* src, index s_in, index ni, index nj, lane_op o, float alpha,
                     float beta, row_prefetch next) noexcept {
  transpose_lanes<lanes_4byte>(dst, d_out, src, s_in, ni, nj, o, alpha, beta, next);
}

void transpose_16byte(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                      row_prefetch next) noexcept {
  if (o == lane_op::conj_copy)
    transpose_16byte_impl<lane_op::conj_copy>(dst, d_out, src, s_in, ni, nj, next);
  else
    transpose_16byte_impl<lane_op::copy>(dst, d_out, src, s_in, ni, nj, next);
}

void transpose_16byte_streaming(double* dst, index d_out, const double* src, index s_in, index ni, index nj,
                                lane_op o) noexcept {
  if (o == lane_op::conj_copy)
    streaming_transpose(streaming_16byte<lane_op::conj_copy>{dst, d_out, src, s_in}, dst, ni, nj);
  else
    streaming_transpose(streaming_16byte<lane_op::copy>{dst, d_out, src, s_in}, dst, ni, nj);
}

void transpose_8byte_streaming(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                               double alpha) noexcept {
  streaming_real_transpose<streaming_8byte>(dst, d_out, src, s_in, ni, nj, o, alpha);
}

void transpose_4byte_streaming(float* dst, index d_out, const float* src, index s_in, index ni, index nj, lane_op o,
                               float alpha) noexcept {
  streaming_real_transpose<streaming_4byte>(dst, d_out, src, s_in, ni, nj, o, alpha);
}

void streaming_copy(void* dst, const void* src, std::size_t bytes) noexcept {
  // Below a few cache lines the head/tail handling costs more than the saved line reads.
  if (bytes < 256 || !available()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  streaming_copy_avx2(dst, src, bytes);
}

#else  // no x86 SIMD: nothing is available, callers take their portable loops.

bool available() noexcept { return false; }
void store_fence() noexcept {}
void transpose_4byte(float*, index, const float*, index, index, index, lane_op, float, float, row_prefetch) noexcept {}
void transpose_8byte(double*, index, const double*, index, index, index, lane_op, double, double,
                     row_prefetch) noexcept {}
void transpose_16byte(double*, index, const double*, index, index, index, lane_op, row_prefetch) noexcept {}
void transpose_16byte_streaming(double*, index, const double*, index, index, index, lane_op) noexcept {}
void transpose_8byte_streaming(double*, index, const double*, index, index, index, lane_op, double) noexcept {}
void transpose_4byte_streaming(float*, index, const float*, index, index, index, lane_op, float) noexcept {}
void streaming_copy(void* dst, const void* src, std::size_t bytes) noexcept { std::memcpy(dst, src, bytes); }

#endif

}  // namespace redist::kernels::simd
