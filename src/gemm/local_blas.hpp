// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The round loop's local products through Fortran BLAS ?gemm_, which takes 32-bit sizes.
#include <cstdint>

#include "redist/types.hpp"

namespace redist::gemm_detail {

// A size as BLAS takes it. make_gemm_plan refuses schedules whose local multiplies do not fit, so this only
// guards against a narrowing that would otherwise be silent: throws overflow_error.
int blas_size(std::int64_t v);

// C (m x n, ld ldc) = alpha * A (m x k, ld lda) * B (k x n, ld ldb) + beta * C, all column-major.
void local_gemm(element_type t, std::int64_t m, std::int64_t n, std::int64_t k, scalar alpha, const void* a,
                std::int64_t lda, const void* b, std::int64_t ldb, scalar beta, void* c, std::int64_t ldc);
// The same with op(A) and op(B) as BLAS's TRANSA and TRANSB letters say ('N', 'T' or 'C'): A is then k x m
// unless transa is 'N', B n x k unless transb is 'N'.
void local_gemm(element_type t, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, scalar alpha,
                const void* a, std::int64_t lda, const void* b, std::int64_t ldb, scalar beta, void* c,
                std::int64_t ldc);

}  // namespace redist::gemm_detail
