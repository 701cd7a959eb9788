// SPDX-License-Identifier: BSD-3-Clause
// A library that stands between libredist_scalapack and ScaLAPACK in a test program's link order: it is
// "the next pdgemm_ (pdtran_) in the link chain" that libredist_scalapack delegates calls to. It counts the
// calls it receives and passes each on to the next definition after it (ScaLAPACK's), so a test can tell
// whether a call was delegated and still get ScaLAPACK's result. While ScaLAPACK runs, it says so
// (redist_test_inside_spied_pdgemm), so that a test counting MPI calls can tell ScaLAPACK's own from redist's.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace {

using pdgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                           const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                           const double*, double*, const int*, const int*, const int*);

using pdtran_fn = void (*)(const int*, const int*, const double*, const double*, const int*, const int*, const int*,
                           const double*, double*, const int*, const int*, const int*);

int calls = 0, tran_calls = 0;
int inside = 0;

// The definition of `name` after this library.
void* next_after(const char* name) {
  void* next = dlsym(RTLD_NEXT, name);
  if (next == nullptr) {
    std::fprintf(stderr, "pdgemm_spy: no %s after this library (link ScaLAPACK after it)\n", name);
    std::abort();
  }
  return next;
}

}  // namespace

extern "C" {

int redist_test_spied_pdgemm_calls() { return calls; }
int redist_test_spied_pdtran_calls() { return tran_calls; }
int redist_test_inside_spied_pdgemm() { return inside; }

void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc) {
  ++calls;
  static const auto next = reinterpret_cast<pdgemm_fn>(next_after("pdgemm_"));
  ++inside;
  next(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
  --inside;
}

void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia, const int* ja,
             const int* desca, const double* beta, double* c, const int* ic, const int* jc, const int* descc) {
  ++tran_calls;
  static const auto next = reinterpret_cast<pdtran_fn>(next_after("pdtran_"));
  ++inside;
  next(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  --inside;
}
}
