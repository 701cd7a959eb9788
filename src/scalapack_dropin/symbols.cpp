// libredist_scalapack: ScaLAPACK's own REDIST symbols and PBLAS's transposes and matrix multiply, answered by
// redist. Link it before ScaLAPACK (or LD_PRELOAD it) and a program's p?gemr2d, p?trmr2d, p?tran/p?tranu/p?tranc
// and p?gemm calls, in every spelling a Fortran compiler may use (and ScaLAPACK's C entry points Cp?gemr2d,
// Cp?trmr2d), run redist's implementation (the twins redist_* in libredist); small p?gemm problems may go to
// the next p?gemm in the link chain instead (below).
#include <dlfcn.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../scalapack/blacs.hpp"
#include "redist/redist.h"

#define REDIST_FORTRAN_GEMR2D(name, twin)                                                                         \
  extern "C" void name(const int* m, const int* n, const void* a, const int* ia, const int* ja, const int* desca, \
                       void* b, const int* ib, const int* jb, const int* descb, const int* ictxt) {              \
    twin(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                                        \
  }
#define REDIST_GEMR2D_SYMBOLS(lower, upper)                                                                   \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d_, redist_##lower##gemr2d)                                               \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d, redist_##lower##gemr2d)                                                \
  REDIST_FORTRAN_GEMR2D(lower##gemr2d__, redist_##lower##gemr2d)                                              \
  REDIST_FORTRAN_GEMR2D(upper##GEMR2D, redist_##lower##gemr2d)                                                \
  extern "C" void C##lower##gemr2d(int m, int n, const void* a, int ia, int ja, const int* desca, void* b, int ib, \
                                   int jb, const int* descb, int ictxt) {                                       \
    redist_C##lower##gemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                   \
  }

REDIST_GEMR2D_SYMBOLS(pi, PI)
REDIST_GEMR2D_SYMBOLS(ps, PS)
REDIST_GEMR2D_SYMBOLS(pd, PD)
REDIST_GEMR2D_SYMBOLS(pc, PC)
REDIST_GEMR2D_SYMBOLS(pz, PZ)

// Fortran callers append the lengths of UPLO and DIAG after ICTXT; they are not read.
#define REDIST_FORTRAN_TRMR2D(name, twin)                                                                     \
  extern "C" void name(const char* uplo, const char* diag, const int* m, const int* n, const void* a,         \
                       const int* ia, const int* ja, const int* desca, void* b, const int* ib, const int* jb, \
                       const int* descb, const int* ictxt) {                                                   \
    twin(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                         \
  }
#define REDIST_TRMR2D_SYMBOLS(lower, upper)                                                                   \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d_, redist_##lower##trmr2d)                                               \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d, redist_##lower##trmr2d)                                                \
  REDIST_FORTRAN_TRMR2D(lower##trmr2d__, redist_##lower##trmr2d)                                              \
  REDIST_FORTRAN_TRMR2D(upper##TRMR2D, redist_##lower##trmr2d)                                                \
  extern "C" void C##lower##trmr2d(const char* uplo, const char* diag, int m, int n, const void* a, int ia,   \
                                   int ja, const int* desca, void* b, int ib, int jb, const int* descb,       \
                                   int ictxt) {                                                               \
    redist_C##lower##trmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                     \
  }

REDIST_TRMR2D_SYMBOLS(pi, PI)
REDIST_TRMR2D_SYMBOLS(ps, PS)
REDIST_TRMR2D_SYMBOLS(pd, PD)
REDIST_TRMR2D_SYMBOLS(pc, PC)
REDIST_TRMR2D_SYMBOLS(pz, PZ)

#define REDIST_FORTRAN_TRAN(name, twin)                                                                          \
  extern "C" void name(const int* m, const int* n, const void* alpha, const void* a, const int* ia,            \
                       const int* ja, const int* desca, const void* beta, void* c, const int* ic, const int* jc, \
                       const int* descc) {                                                                     \
    twin(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);                                               \
  }
#define REDIST_TRAN_SYMBOLS(lower, upper)                 \
  REDIST_FORTRAN_TRAN(lower##_, redist_##lower)           \
  REDIST_FORTRAN_TRAN(lower, redist_##lower)              \
  REDIST_FORTRAN_TRAN(lower##__, redist_##lower)          \
  REDIST_FORTRAN_TRAN(upper, redist_##lower)

REDIST_TRAN_SYMBOLS(pstran, PSTRAN)
REDIST_TRAN_SYMBOLS(pdtran, PDTRAN)
REDIST_TRAN_SYMBOLS(pctranu, PCTRANU)
REDIST_TRAN_SYMBOLS(pztranu, PZTRANU)
REDIST_TRAN_SYMBOLS(pctranc, PCTRANC)
REDIST_TRAN_SYMBOLS(pztranc, PZTRANC)

// ---- p?gemm, with small problems delegated ------------------------------------------------------------------
//
// A multiply of fewer than REDIST_PDGEMM_DELEGATE_BELOW multiply-adds (M*N*K; default below, 0 = never) goes
// to the next definition of the called symbol in the link chain (dlsym RTLD_NEXT: the user's ScaLAPACK), whose
// fixed cost per call is lower than redist's planning, gathering and agreement; without one, redist runs it.
// M, N and K are global in PBLAS, but a process with other sizes or another setting would run ScaLAPACK's
// collectives against redist's (a hang): one allreduce over C's context decides, and unless every process
// delegates, none does (redist's gathered checks then report differing sizes through PXERBLA). Negative sizes
// are never delegated: redist reports them through PXERBLA.

namespace {

// 2^23: where redist's multiply overtook Debian's ScaLAPACK for cubes (192^3) and tall-skinny problems at 4 ranks
// with one thread each (bench/pdgemm_crossover.cpp; results and the other shapes in docs/scalapack.md).
constexpr std::int64_t default_delegate_below = std::int64_t{1} << 23;

std::int64_t delegate_below() {
  const char* text = std::getenv("REDIST_PDGEMM_DELEGATE_BELOW");
  if (text == nullptr || *text == '\0') return default_delegate_below;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) {
    static bool warned = false;  // once per process, not per call
    if (!warned)
      std::fprintf(stderr,
                   "redist: REDIST_PDGEMM_DELEGATE_BELOW=\"%s\" is not a non-negative integer (multiply-adds); "
                   "using the default %lld\n",
                   text, static_cast<long long>(default_delegate_below));
    warned = true;
    return default_delegate_below;
  }
  return value;
}

bool delegated(const int* m, const int* n, const int* k) {
  if (*m < 0 || *n < 0 || *k < 0) return false;
  const std::int64_t limit = delegate_below();
  if (limit == 0) return false;
  const std::int64_t mn = std::int64_t{*m} * *n;  // below 2^62: no overflow
  // M*N*K < limit, without forming a product beyond 64 bits.
  return *k == 0 || mn <= (limit - 1) / *k;
}

// Whether every process of C's context delegates. Processes off that grid (or with a context BLACS does not
// know) never delegate: redist's twin returns for them, or reports the context.
bool delegated_everywhere(const int* m, const int* n, const int* k, const int* descc) {
  const bool mine = delegated(m, n, k);
  if (descc == nullptr || !redist::scalapack::blacs::holds_me(descc[1])) return false;
  int all = mine ? 1 : 0;
  if (MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, redist::scalapack::blacs::communicator(descc[1])) !=
      MPI_SUCCESS)
    return false;
  return all == 1;
}

using gemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
                         const int*, const int*, const int*, const void*, const int*, const int*, const int*,
                         const void*, void*, const int*, const int*, const int*);

// The next definition of `name` after this library, else of `fortran_name` (the spelling ScaLAPACK's Fortran
// ABI uses here, which a ScaLAPACK built for another spelling convention may lack), else none.
gemm_fn next_gemm(const char* name, const char* fortran_name) {
  void* next = dlsym(RTLD_NEXT, name);
  if (next == nullptr) next = dlsym(RTLD_NEXT, fortran_name);
  return reinterpret_cast<gemm_fn>(next);
}

}  // namespace

// PBLAS's p?gemm is written in C and takes no lengths for TRANSA and TRANSB, so a Fortran caller's hidden
// lengths (after DESCC) are neither read nor passed on.
#define REDIST_FORTRAN_GEMM(name, twin, fortran_name)                                                                \
  extern "C" void name(const char* transa, const char* transb, const int* m, const int* n, const int* k,           \
                       const void* alpha, const void* a, const int* ia, const int* ja, const int* desca,           \
                       const void* b, const int* ib, const int* jb, const int* descb, const void* beta, void* c,   \
                       const int* ic, const int* jc, const int* descc) {                                           \
    if (delegated_everywhere(m, n, k, descc)) {                                                                    \
      static const gemm_fn next = next_gemm(#name, fortran_name);                                                 \
      if (next != nullptr) {                                                                                       \
        next(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);         \
        return;                                                                                                    \
      }                                                                                                            \
    }                                                                                                              \
    twin(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);             \
  }
#define REDIST_GEMM_SYMBOLS(lower, upper)                                 \
  REDIST_FORTRAN_GEMM(lower##_, redist_##lower, #lower "_")              \
  REDIST_FORTRAN_GEMM(lower, redist_##lower, #lower "_")                 \
  REDIST_FORTRAN_GEMM(lower##__, redist_##lower, #lower "_")             \
  REDIST_FORTRAN_GEMM(upper, redist_##lower, #lower "_")

REDIST_GEMM_SYMBOLS(psgemm, PSGEMM)
REDIST_GEMM_SYMBOLS(pdgemm, PDGEMM)
REDIST_GEMM_SYMBOLS(pcgemm, PCGEMM)
REDIST_GEMM_SYMBOLS(pzgemm, PZGEMM)
