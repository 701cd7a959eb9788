// SPDX-License-Identifier: BSD-3-Clause
// The local products: the Fortran BLAS ?gemm_ of each element type.
#include "local_blas.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <string>

#include "redist/error.hpp"

extern "C" {
// Fortran BLAS (the hidden lengths of TRANSA and TRANSB follow the declared arguments).
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*, std::size_t, std::size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, std::size_t, std::size_t);
void cgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<float>*,
            const std::complex<float>*, const int*, const std::complex<float>*, const int*, const std::complex<float>*,
            std::complex<float>*, const int*, std::size_t, std::size_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<double>*,
            const std::complex<double>*, const int*, const std::complex<double>*, const int*,
            const std::complex<double>*, std::complex<double>*, const int*, std::size_t, std::size_t);
}

namespace redist::gemm_detail {

int blas_size(std::int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw overflow_error("local multiply size " + std::to_string(v) + " does not fit the 32-bit sizes BLAS takes; " +
                         "expected 0 to " + std::to_string(std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}

void local_gemm(element_type t, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, scalar alpha,
                const void* a, std::int64_t lda, const void* b, std::int64_t ldb, scalar beta, void* c,
                std::int64_t ldc) {
  const char ta[2] = {transa, '\0'}, tb[2] = {transb, '\0'};
  const int im = blas_size(m), in = blas_size(n), ik = blas_size(k);
  const int ia = blas_size(std::max<std::int64_t>(lda, 1)), ib = blas_size(std::max<std::int64_t>(ldb, 1)),
            ic = blas_size(std::max<std::int64_t>(ldc, 1));
  switch (t) {
    case element_type::f32: {
      const float al = static_cast<float>(alpha.real()), be = static_cast<float>(beta.real());
      sgemm_(ta, tb, &im, &in, &ik, &al, static_cast<const float*>(a), &ia, static_cast<const float*>(b), &ib, &be,
             static_cast<float*>(c), &ic, 1, 1);
      return;
    }
    case element_type::f64: {
      const double al = alpha.real(), be = beta.real();
      dgemm_(ta, tb, &im, &in, &ik, &al, static_cast<const double*>(a), &ia, static_cast<const double*>(b), &ib, &be,
             static_cast<double*>(c), &ic, 1, 1);
      return;
    }
    case element_type::c32: {
      const std::complex<float> al(alpha), be(beta);
      cgemm_(ta, tb, &im, &in, &ik, &al, static_cast<const std::complex<float>*>(a), &ia,
             static_cast<const std::complex<float>*>(b), &ib, &be, static_cast<std::complex<float>*>(c), &ic, 1, 1);
      return;
    }
    case element_type::c64: {
      zgemm_(ta, tb, &im, &in, &ik, &alpha, static_cast<const std::complex<double>*>(a), &ia,
             static_cast<const std::complex<double>*>(b), &ib, &beta, static_cast<std::complex<double>*>(c), &ic, 1, 1);
      return;
    }
    default:
      break;
  }
  throw invalid_argument(std::string("no multiply for element type ") + to_string(t));
}

void local_gemm(element_type t, std::int64_t m, std::int64_t n, std::int64_t k, scalar alpha, const void* a,
                std::int64_t lda, const void* b, std::int64_t ldb, scalar beta, void* c, std::int64_t ldc) {
  local_gemm(t, 'N', 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace redist::gemm_detail
