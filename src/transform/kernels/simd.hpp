// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Register-blocked transposes and non-temporal copies for the local block kernels (x86 with AVX2).
//
// The transposes work on a canonical tile: dst(i, j) = dst[i + j*d_out] is produced from
// src(i, j) = src[i*s_in + j], for 0 <= i < ni, 0 <= j < nj, with ni and nj multiples of the register
// block (4x4 lanes of 4 or 8 bytes, 2x2 lanes of 16 bytes). Strides are in lanes. Loads and stores go
// through the intrinsics' may-alias vector types, so the copy modes move the bytes of any element type
// of the lane's size (int64 and complex<float> as 8-byte lanes, say); the arithmetic modes are for the
// lane's real type only (float, double).
#include <cstddef>
#include <cstdint>

namespace redist::kernels::simd {

using index = std::int64_t;

// What a transpose does with each transposed lane s and the destination lane d.
enum class lane_op : std::uint8_t {
  copy,       // d = s
  conj_copy,  // d = conj(s) (16-byte lanes: complex<double>)
  scale,      // d = alpha * s
  axpby,      // d = alpha * s + beta * d
};

// Where the next tile's source rows start: `count` rows `stride` bytes apart, whose first cache line the
// transpose prefetches, spread over its column steps (the hardware prefetchers do not follow rows a
// leading dimension apart).
struct row_prefetch {
  const std::byte* first = nullptr;
  index stride = 0;
  index count = 0;
};

// True when this CPU runs the functions below (checked once).
bool available() noexcept;

void transpose_4byte(float* dst, index d_out, const float* src, index s_in, index ni, index nj, lane_op o, float alpha,
                     float beta, row_prefetch next) noexcept;
void transpose_8byte(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                     double alpha, double beta, row_prefetch next) noexcept;
// copy and conj_copy only.
void transpose_16byte(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                      row_prefetch next) noexcept;
// The same with non-temporal stores, for any ni, nj >= 0: dst 16-byte aligned and d_out a multiple of 4 lanes (every
// row starts at the same offset within a cache line). The caller fences (store_fence) before anyone reads dst. It
// goes in strips of a few rows of src across all nj columns: give it wide tiles.
void transpose_16byte_streaming(double* dst, index d_out, const double* src, index s_in, index ni, index nj,
                                lane_op o) noexcept;
// 8- and 4-byte lanes with non-temporal stores (copy and scale), the same way: d_out a multiple of a line's lanes
// (8, 16).
void transpose_8byte_streaming(double* dst, index d_out, const double* src, index s_in, index ni, index nj, lane_op o,
                               double alpha) noexcept;
void transpose_4byte_streaming(float* dst, index d_out, const float* src, index s_in, index ni, index nj, lane_op o,
                               float alpha) noexcept;

// memcpy whose stores bypass the caches (a plain memcpy for sizes where that cannot pay off).
void streaming_copy(void* dst, const void* src, std::size_t bytes) noexcept;

// Orders this thread's non-temporal stores before its later stores (and so before any MPI
// synchronisation that follows): the stores are weakly ordered until then.
void store_fence() noexcept;

}  // namespace redist::kernels::simd
