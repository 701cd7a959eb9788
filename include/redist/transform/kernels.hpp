// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Local block kernels: dst = alpha * op(src) + beta * dst on strided 2-D blocks.
//
// Element (i, j) of a block lives at ptr[i*rs + j*cs] (col-major: rs = 1, cs = ld; row-major:
// rs = ld, cs = 1; any other strides work too, on a slower path). `rows` x `cols` is the extent of dst.
// src is given in its own orientation and read as op(src): element (i, j) of op(src) is src(i, j) for
// identity, src(j, i) for transpose and conj(src(j, i)) for conj_transpose (for integer types
// conj_transpose is transpose). rows or cols <= 0: nothing happens. dst and src must not overlap.
// BLAS semantics: beta == 0 writes dst without reading it (NaN/Inf in dst do not leak);
// alpha == 0 does not read src at all (src may then be null); alpha == 0 and beta == 1 is a no-op.
// alpha == 1 and beta == 0 is a plain copy (memcpy on contiguous runs). Complex products use the plain
// BLAS formula, not C99 Annex G's inf/NaN recovery.
//
// Loop shapes: when both blocks are contiguous along the same dimension the kernel streams (one memcpy
// for a plain copy of two fully contiguous blocks); when dst is contiguous along one dimension and src
// along the other it runs a cache-blocked transpose (tiles of 2 KiB dst runs x 1 KiB src runs, with
// software prefetch of the next tile's source rows; on x86 CPUs with AVX2, 4x4 register transposes for
// 4- and 8-byte elements and 2x2 for 16-byte ones); otherwise a tiled strided loop.
//
// store_hint::streaming asks for non-temporal stores on plain copies of contiguous runs (packing, and
// unpacking without transposition: runs that follow each other in dst, or of at least 1 KiB) and on transposes
// (copies, alpha-scaling of doubles and floats, conjugation of complex<double>, wherever the rows all start at the
// same offset within a cache line; register blocks that fill whole destination lines): the written data bypasses
// the caches, which saves the read-for-ownership of every destination line when the destination is far larger
// than the last-level cache and will not be read again soon. The stores are fenced
// before the call returns, so the data is visible to other processes (shared-memory peers) as after
// ordinary stores.
// Blocks of at least `parallel_threshold` elements are split over the OpenMP threads (tiles, or
// chunks of the contiguous runs) when called outside a parallel region; inside one, or below the
// threshold, the call is serial, so callers may parallelise over many small blocks themselves.
#include <cstdint>

#include "redist/layout/grid_layout.hpp"
#include "redist/types.hpp"

namespace redist::kernels {

struct strided {
  std::int64_t rs;  ///< distance between consecutive rows
  std::int64_t cs;  ///< distance between consecutive columns
};

/// The strides of a block stored in `order` with leading dimension ld. Throws nothing.
inline strided strides(storage_order order, std::int64_t ld) {
  return order == storage_order::col_major ? strided{1, ld} : strided{ld, 1};
}

/// Elements from which a block is split over the OpenMP threads (outside a parallel region).
inline constexpr std::int64_t parallel_threshold = 1 << 16;

/// Ordinary or non-temporal stores (see above).
enum class store_hint : std::uint8_t { cached, streaming };

/// dst = alpha * op(src) + beta * dst on a rows x cols block (the rules above). Defined for float, double,
/// std::complex<float>, std::complex<double>, std::int32_t and std::int64_t. Throws nothing.
/// @pre dst (and src unless alpha == 0) address every element of the block through their strides; dst and src do
///   not overlap
template <class T>
void transform_block(T* dst, strided dst_s, const T* src, strided src_s, std::int64_t rows, std::int64_t cols, op o,
                     T alpha, T beta, store_hint stores = store_hint::cached);

/// Plain copy of a strided block into another (no op): used to pack blocks into messages. Defined for the same
/// types as transform_block. Throws nothing.
/// @pre dst and src address every element of the block through their strides and do not overlap
template <class T>
void copy_block(T* dst, strided dst_s, const T* src, strided src_s, std::int64_t rows, std::int64_t cols,
                store_hint stores = store_hint::cached);

}  // namespace redist::kernels
