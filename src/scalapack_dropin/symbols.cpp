// libredist_scalapack: ScaLAPACK's own REDIST and PBLAS transpose symbols, answered by redist. Link it
// before ScaLAPACK (or LD_PRELOAD it) and a program's p?gemr2d, p?trmr2d and p?tran/p?tranu/p?tranc calls,
// in every spelling a Fortran compiler may use (and ScaLAPACK's C entry points Cp?gemr2d, Cp?trmr2d), run
// redist's implementation (the twins redist_* in libredist).
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
