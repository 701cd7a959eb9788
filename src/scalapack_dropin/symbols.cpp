// SPDX-License-Identifier: BSD-3-Clause
// libredist_scalapack: ScaLAPACK's own REDIST symbols and PBLAS's transposes and matrix multiply, answered by
// redist. Link it before ScaLAPACK (or LD_PRELOAD it) and a program's p?gemr2d, p?trmr2d, p?tran/p?tranu/p?tranc
// and p?gemm calls, in every spelling a Fortran compiler may use (and ScaLAPACK's C entry points Cp?gemr2d,
// Cp?trmr2d), run redist's implementation (the twins redist_* in libredist); p?gemm and p?tran* calls that
// ScaLAPACK does faster go to the next definition in the link chain instead (below). MPI_Finalize prints the trace summary under REDIST_TRACE.
#include <dlfcn.h>
#include <mpi.h>

#include "redist/redist.h"
#include "scalapack/dropin.hpp"
#include "trace/recorder.hpp"

#define REDIST_FORTRAN_GEMR2D(name, twin)                                                                         \
  extern "C" void name(const int* m, const int* n, const void* a, const int* ia, const int* ja, const int* desca, \
                       void* b, const int* ib, const int* jb, const int* descb, const int* ictxt) {               \
    twin(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                                        \
  }
#define REDIST_GEMR2D_SYMBOLS(lower, upper)                                                                        \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d_, redist_##lower##gemr2d)                                                    \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d, redist_##lower##gemr2d)                                                     \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d__, redist_##lower##gemr2d)                                                   \
  REDIST_FORTRAN_GEMR2D(upper##GEMR2D, redist_##lower##gemr2d)                                                     \
  extern "C" void C##lower##gemr2d(int m, int n, const void* a, int ia, int ja, const int* desca, void* b, int ib, \
                                   int jb, const int* descb, int ictxt) {                                          \
    redist_C##lower##gemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                      \
  }

REDIST_GEMR2D_SYMBOLS(pi, PI)
REDIST_GEMR2D_SYMBOLS(ps, PS)
REDIST_GEMR2D_SYMBOLS(pd, PD)
REDIST_GEMR2D_SYMBOLS(pc, PC)
REDIST_GEMR2D_SYMBOLS(pz, PZ)

// Fortran callers append the lengths of UPLO and DIAG after ICTXT; they are not read.
#define REDIST_FORTRAN_TRMR2D(name, twin)                                                                            \
  extern "C" void name(const char* uplo, const char* diag, const int* m, const int* n, const void* a, const int* ia, \
                       const int* ja, const int* desca, void* b, const int* ib, const int* jb, const int* descb,     \
                       const int* ictxt) {                                                                           \
    twin(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                               \
  }
#define REDIST_TRMR2D_SYMBOLS(lower, upper)                                                                         \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d_, redist_##lower##trmr2d)                                                     \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d, redist_##lower##trmr2d)                                                      \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d__, redist_##lower##trmr2d)                                                    \
  REDIST_FORTRAN_TRMR2D(upper##TRMR2D, redist_##lower##trmr2d)                                                      \
  extern "C" void C##lower##trmr2d(const char* uplo, const char* diag, int m, int n, const void* a, int ia, int ja, \
                                   const int* desca, void* b, int ib, int jb, const int* descb, int ictxt) {        \
    redist_C##lower##trmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                           \
  }

REDIST_TRMR2D_SYMBOLS(pi, PI)
REDIST_TRMR2D_SYMBOLS(ps, PS)
REDIST_TRMR2D_SYMBOLS(pd, PD)
REDIST_TRMR2D_SYMBOLS(pc, PC)
REDIST_TRMR2D_SYMBOLS(pz, PZ)

// ---- p?tran*, p?gemm: calls ScaLAPACK does faster go to the next definition of the called symbol in the link chain
// (dlsym RTLD_NEXT: the user's ScaLAPACK); without one, redist makes every call. Which calls is libredist's choice
// (src/scalapack/delegation.hpp): products below a size, and mid-size products and transposes of the classes where
// ScaLAPACK measured faster; no collective once a signature has been checked.

namespace {

// The next definition of `name` after this library, else of `fortran_name` (the spelling ScaLAPACK's Fortran
// ABI uses here, which a ScaLAPACK built for another spelling convention may lack), else none.
template <class Fn>
Fn next_definition(const char* name, const char* fortran_name) {
  void* next = dlsym(RTLD_NEXT, name);
  if (next == nullptr) next = dlsym(RTLD_NEXT, fortran_name);
  return reinterpret_cast<Fn>(next);
}

}  // namespace

#define REDIST_FORTRAN_TRAN(name, entry, fortran_name)                                                                \
  extern "C" void name(const int* m, const int* n, const void* alpha, const void* a, const int* ia, const int* ja,    \
                       const int* desca, const void* beta, void* c, const int* ic, const int* jc, const int* descc) { \
    static const auto next = next_definition<redist::scalapack::pblas_tran_fn>(#name, fortran_name);                  \
    entry(next, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);                                               \
  }
#define REDIST_TRAN_SYMBOLS(lower, upper)                                       \
  REDIST_FORTRAN_TRAN(lower##_, redist::scalapack::dropin_##lower, #lower "_")  \
  REDIST_FORTRAN_TRAN(lower, redist::scalapack::dropin_##lower, #lower "_")     \
  REDIST_FORTRAN_TRAN(lower##__, redist::scalapack::dropin_##lower, #lower "_") \
  REDIST_FORTRAN_TRAN(upper, redist::scalapack::dropin_##lower, #lower "_")

REDIST_TRAN_SYMBOLS(pstran, PSTRAN)
REDIST_TRAN_SYMBOLS(pdtran, PDTRAN)
REDIST_TRAN_SYMBOLS(pctranu, PCTRANU)
REDIST_TRAN_SYMBOLS(pztranu, PZTRANU)
REDIST_TRAN_SYMBOLS(pctranc, PCTRANC)
REDIST_TRAN_SYMBOLS(pztranc, PZTRANC)

// PBLAS's p?gemm is written in C and takes no lengths for TRANSA and TRANSB, so a Fortran caller's hidden
// lengths (after DESCC) are neither read nor passed on.
#define REDIST_FORTRAN_GEMM(name, twin, fortran_name)                                                            \
  extern "C" void name(const char* transa, const char* transb, const int* m, const int* n, const int* k,         \
                       const void* alpha, const void* a, const int* ia, const int* ja, const int* desca,         \
                       const void* b, const int* ib, const int* jb, const int* descb, const void* beta, void* c, \
                       const int* ic, const int* jc, const int* descc) {                                         \
    static const auto next = next_definition<redist::scalapack::pblas_gemm_fn>(#name, fortran_name);             \
    twin(next, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);      \
  }
#define REDIST_GEMM_SYMBOLS(lower, upper)                                       \
  REDIST_FORTRAN_GEMM(lower##_, redist::scalapack::dropin_##lower, #lower "_")  \
  REDIST_FORTRAN_GEMM(lower, redist::scalapack::dropin_##lower, #lower "_")     \
  REDIST_FORTRAN_GEMM(lower##__, redist::scalapack::dropin_##lower, #lower "_") \
  REDIST_FORTRAN_GEMM(upper, redist::scalapack::dropin_##lower, #lower "_")

REDIST_GEMM_SYMBOLS(psgemm, PSGEMM)
REDIST_GEMM_SYMBOLS(pdgemm, PDGEMM)
REDIST_GEMM_SYMBOLS(pcgemm, PCGEMM)
REDIST_GEMM_SYMBOLS(pzgemm, PZGEMM)

// MPI_Finalize through MPI's profiling interface, as libredist defines it (src/trace/finalize.cpp): a preloaded
// drop-in is searched before the program's MPI, libredist (its dependency) after it.
extern "C" int MPI_Finalize(void) {
  redist::trace_detail::at_finalize();
  return PMPI_Finalize();
}
