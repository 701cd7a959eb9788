// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What libredist_scalapack's p?gemm and p?tran* symbols call (internal): redist's routine, handing calls that
// ScaLAPACK does faster to the ScaLAPACK routine the drop-in found after itself in the link chain (null: none,
// redist makes every call; delegation.hpp). Arguments as PBLAS's Fortran-convention p?gemm_ and p?tran*_.

namespace redist::scalapack {

using pblas_gemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
                               const int*, const int*, const int*, const void*, const int*, const int*, const int*,
                               const void*, void*, const int*, const int*, const int*);

#define REDIST_DECLARE_DROPIN_GEMM(name)                                                                             \
  void dropin_##name(pblas_gemm_fn scalapack, const char* transa, const char* transb, const int* m, const int* n,    \
                     const int* k, const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, \
                     const void* b, const int* ib, const int* jb, const int* descb, const void* beta, void* c,       \
                     const int* ic, const int* jc, const int* descc);
REDIST_DECLARE_DROPIN_GEMM(psgemm)
REDIST_DECLARE_DROPIN_GEMM(pdgemm)
REDIST_DECLARE_DROPIN_GEMM(pcgemm)
REDIST_DECLARE_DROPIN_GEMM(pzgemm)
#undef REDIST_DECLARE_DROPIN_GEMM

using pblas_tran_fn = void (*)(const int*, const int*, const void*, const void*, const int*, const int*, const int*,
                               const void*, void*, const int*, const int*, const int*);

#define REDIST_DECLARE_DROPIN_TRAN(name)                                                                       \
  void dropin_##name(pblas_tran_fn scalapack, const int* m, const int* n, const void* alpha, const void* a,    \
                     const int* ia, const int* ja, const int* desca, const void* beta, void* c, const int* ic, \
                     const int* jc, const int* descc);
REDIST_DECLARE_DROPIN_TRAN(pstran)
REDIST_DECLARE_DROPIN_TRAN(pdtran)
REDIST_DECLARE_DROPIN_TRAN(pctranu)
REDIST_DECLARE_DROPIN_TRAN(pztranu)
REDIST_DECLARE_DROPIN_TRAN(pctranc)
REDIST_DECLARE_DROPIN_TRAN(pztranc)
#undef REDIST_DECLARE_DROPIN_TRAN

}  // namespace redist::scalapack
