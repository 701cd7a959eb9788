// libredist_scalapack linked before ScaLAPACK: the program's own p?gemr2d and p?trmr2d calls (every
// spelling) run redist. Checked by where the dynamic linker resolved the symbols and by results only redist gets right
// (DTYPE 2 descriptors with first blocks IMB/INB, which REDIST misreads as DTYPE 1).
// redist-test-ranks: 1 2 3 4
// redist-test-needs: scalapack dropin
// redist-test-labels: fast
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "scalapack_cases.hpp"

extern "C" {
void pdgemr2d_(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
               const int*, const int*, const int*);
void PDGEMR2D(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
              const int*, const int*, const int*);
void pzgemr2d(const int*, const int*, const std::complex<double>*, const int*, const int*, const int*,
              std::complex<double>*, const int*, const int*, const int*, const int*);
void Cpigemr2d(int, int, const int*, int, int, const int*, int*, int, int, const int*, int);
// As a Fortran compiler calls them: the lengths of UPLO and DIAG appended.
void pdtrmr2d_(const char*, const char*, const int*, const int*, const double*, const int*, const int*, const int*,
               double*, const int*, const int*, const int*, const int*, std::size_t, std::size_t);
void PDTRMR2D(const char*, const char*, const int*, const int*, const double*, const int*, const int*, const int*,
              double*, const int*, const int*, const int*, const int*, std::size_t, std::size_t);
void pztrmr2d__(const char*, const char*, const int*, const int*, const std::complex<double>*, const int*, const int*,
                const int*, std::complex<double>*, const int*, const int*, const int*, const int*, std::size_t,
                std::size_t);
void Cpstrmr2d(const char*, const char*, int, int, const float*, int, int, const int*, float*, int, int, const int*,
               int);
}

using namespace redist::testing;

namespace {

std::string library_of(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname) return "(not found)";
  return info.dli_fname;
}

// B = A for a DTYPE 2 matrix on a grid over all ranks, through `call`; true when B is right everywhere.
// With `upper_unit` the call copies the strictly upper trapezoid only (as p?trmr2d with UPLO 'U', DIAG 'U':
// the matrix is 23 x 17, so row i of column j when i < j + 6); the rest of B keeps its values.
template <class T, class Call>
bool copies_dtype2(Call call, bool upper_unit = false) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  std::reverse(all.begin(), all.end());  // not the natural order
  blacs_context ga(nranks, 1, all), gb(1, nranks, all);
  std::vector<int> everyone(all);
  blacs_context global(1, nranks, everyone);
  matrix_case ca, cb;
  ca.dtype = cb.dtype = 2;
  ca.M = cb.M = 23;
  ca.N = cb.N = 17;
  ca.imb = 2, ca.inb = 5, ca.mb = 3, ca.nb = 4;
  cb.imb = 7, cb.inb = 1, cb.mb = 2, cb.nb = 6;
  ca.rsrc = nranks - 1;
  cb.csrc = nranks / 2;
  const std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
  const std::vector<T> a = make_local<T>(ca, ga, desca, 0);
  std::vector<T> b = make_local<T>(cb, gb, descb, 1);
  std::vector<T> expected = make_local<T>(cb, gb, descb, 0);  // B's local array holding A's values
  if (upper_unit && gb.holds_me()) {
    const std::int64_t lld = descb[10];
    const std::int64_t rows = redist::scalapack::numroc(cb.M, cb.imb, cb.mb, gb.my_row, cb.rsrc, gb.rows);
    const std::int64_t cols = redist::scalapack::numroc(cb.N, cb.inb, cb.nb, gb.my_col, cb.csrc, gb.cols);
    for (std::int64_t lj = 0; lj < cols; ++lj)
      for (std::int64_t li = 0; li < rows; ++li) {
        const std::int64_t i = global_index(li, cb.imb, cb.mb, cb.rsrc, gb.rows, gb.my_row);
        const std::int64_t j = global_index(lj, cb.inb, cb.nb, cb.csrc, gb.cols, gb.my_col);
        const size_t at = static_cast<size_t>(li + lj * lld);
        if (i >= j + (cb.M - cb.N)) expected[at] = b[at];
      }
  }
  call(a.data(), desca.data(), b.data(), descb.data(), global.context);
  return all_ranks(b == expected);
}

}  // namespace

TEST(ScalapackDropin, SymbolsResolveToRedist) {
  for (const char* symbol : {"pdgemr2d_", "pdgemr2d", "PDGEMR2D", "pdgemr2d__", "Cpdgemr2d", "pzgemr2d_", "Cpigemr2d",
                             "psgemr2d_", "pcgemr2d_", "pigemr2d_", "pdtrmr2d_", "pdtrmr2d", "PDTRMR2D", "pdtrmr2d__",
                             "Cpdtrmr2d", "pitrmr2d_", "pstrmr2d_", "pctrmr2d_", "pztrmr2d_"})
    EXPECT_NE(library_of(symbol).find("libredist_scalapack"), std::string::npos)
        << symbol << " resolves to " << library_of(symbol);
}

TEST(ScalapackDropin, FortranAndCSpellingsCopyDtype2) {
  const int m = 23, n = 17, one = 1;
  EXPECT_TRUE(copies_dtype2<double>([&](const double* a, const int* da, double* b, const int* db, int ctxt) {
    pdgemr2d_(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
  }));
  EXPECT_TRUE(copies_dtype2<double>([&](const double* a, const int* da, double* b, const int* db, int ctxt) {
    PDGEMR2D(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
  }));
  EXPECT_TRUE(copies_dtype2<std::complex<double>>(
      [&](const std::complex<double>* a, const int* da, std::complex<double>* b, const int* db, int ctxt) {
        pzgemr2d(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
      }));
  EXPECT_TRUE(copies_dtype2<int>([&](const int* a, const int* da, int* b, const int* db, int ctxt) {
    Cpigemr2d(m, n, a, 1, 1, da, b, 1, 1, db, ctxt);
  }));
}

TEST(ScalapackDropin, TrapezoidSpellingsCopyDtype2) {
  const int m = 23, n = 17, one = 1;
  const char uplo = 'U', diag = 'u';
  EXPECT_TRUE(copies_dtype2<double>(
      [&](const double* a, const int* da, double* b, const int* db, int ctxt) {
        pdtrmr2d_(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(copies_dtype2<double>(
      [&](const double* a, const int* da, double* b, const int* db, int ctxt) {
        PDTRMR2D(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(copies_dtype2<std::complex<double>>(
      [&](const std::complex<double>* a, const int* da, std::complex<double>* b, const int* db, int ctxt) {
        pztrmr2d__(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(copies_dtype2<float>(
      [&](const float* a, const int* da, float* b, const int* db, int ctxt) {
        Cpstrmr2d(&uplo, &diag, m, n, a, 1, 1, da, b, 1, 1, db, ctxt);
      },
      true));
}
