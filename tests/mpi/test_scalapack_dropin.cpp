// SPDX-License-Identifier: BSD-3-Clause
// libredist_scalapack linked before ScaLAPACK: the program's own p?gemr2d, p?trmr2d and p?gemm calls (every
// spelling) run redist. Checked by where the dynamic linker resolved the symbols and by the results (copies whose
// descriptors' DTYPE is unset on one rank, as ScaLAPACK's REDIST testers leave it). Small p?gemm problems go
// to the next pdgemm_ in the link chain: here a spy library (tests/support/pdgemm_spy.cpp, linked between
// libredist_scalapack and ScaLAPACK) that counts the calls it receives and passes them on to ScaLAPACK.
// redist-test-ranks: 1 2 3 4
// redist-test-needs: scalapack dropin pdgemm_spy
// redist-test-labels: fast
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "machine/host.hpp"
#include "mpi/checked.hpp"
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
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
             const int*, const int*, const int*);
void PDGEMM(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
            const int*, const int*, const int*);
void pzgemm(const char*, const char*, const int*, const int*, const int*, const std::complex<double>*,
            const std::complex<double>*, const int*, const int*, const int*, const std::complex<double>*, const int*,
            const int*, const int*, const std::complex<double>*, std::complex<double>*, const int*, const int*,
            const int*);
// The spy's count of the pdgemm_ calls it received (tests/support/pdgemm_spy.cpp).
int redist_test_spied_pdgemm_calls();
}

using namespace redist::testing;

namespace {

std::string library_of(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname) return "(not found)";
  return info.dli_fname;
}

// B = A for a matrix on a grid over all ranks, through `call`, with the descriptors' DTYPE left unset on one
// rank (as ScaLAPACK's own REDIST testers leave it; REDIST never reads it); true when B is right everywhere.
// With `upper_unit` the call copies the strictly upper trapezoid only (as p?trmr2d with UPLO 'U', DIAG 'U':
// the matrix is 23 x 17, so row i of column j when i < j + 6); the rest of B keeps its values.
template <class T, class Call>
bool copies_with_unset_dtype(Call call, bool upper_unit = false) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  std::reverse(all.begin(), all.end());  // not the natural order
  blacs_context ga(nranks, 1, all), gb(1, nranks, all);
  std::vector<int> everyone(all);
  blacs_context global(1, nranks, everyone);
  matrix_case ca, cb;
  ca.M = cb.M = 23;
  ca.N = cb.N = 17;
  ca.imb = ca.mb = 3, ca.inb = ca.nb = 4;
  cb.imb = cb.mb = 2, cb.inb = cb.nb = 6;
  ca.rsrc = nranks - 1;
  cb.csrc = nranks / 2;
  std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
  const std::vector<T> a = make_local<T>(ca, ga, desca, 0);
  std::vector<T> b = make_local<T>(cb, gb, descb, 1);
  if (world_rank() == 0) desca[0] = descb[0] = 0;  // unset (a tester's zeroed stack); 2 or anything else alike
  std::vector<T> expected = make_local<T>(cb, gb, descb, 0);  // B's local array holding A's values
  if (upper_unit && gb.holds_me()) {
    const std::int64_t lld = descb[8];
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

// Element (i, j) (global, 0-based) of the multiplies' A (salt 0) and B (salt 1): small integers (both parts for
// complex types), so every sum of products is exact in any order and C is compared bit for bit.
template <class T>
T small_integer(std::int64_t i, std::int64_t j, int salt) {
  const double re = static_cast<double>((3 * i + 5 * j + salt) % 7 - 3);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    return T(re, static_cast<double>((i + 2 * j + salt) % 5 - 2));
  else
    return T(re);
}

// Element (i, j) of op(X) for X's elements x(i, j).
template <class T, class Element>
T op_element(char trans, std::int64_t i, std::int64_t j, Element x) {
  if (trans == 'N' || trans == 'n') return x(i, j);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    if (trans == 'C' || trans == 'c') return std::conj(x(j, i));
  return x(j, i);
}

// sub(C) = op(sub(A)) * op(sub(B)) (alpha 1, beta 0) for an m x n x k problem through `call` (PBLAS's p?gemm
// arguments): A and C in DTYPE 2 descriptors, B in a DTYPE 1 one, sub-matrices away from the corners, on a grid
// over all ranks in reverse order. C starts as NaN; true when every element of sub(C) is the serial product and
// every other element of C's local arrays is still NaN, on every rank.
template <class T, class Call>
bool multiplies(Call call, char transa, char transb, int m, int n, int k) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  std::reverse(all.begin(), all.end());
  const int rows = nranks == 4 ? 2 : 1;
  blacs_context grid(rows, nranks / rows, all);
  const bool a_transposed = transa != 'N' && transa != 'n', b_transposed = transb != 'N' && transb != 'n';
  const int ia = 2, ja = 3, ib = 1, jb = 2, ic = 3, jc = 1;
  matrix_case ca, cb, cc;
  ca.dtype = cc.dtype = 2;
  ca.M = ia + (a_transposed ? k : m), ca.N = ja + (a_transposed ? m : k);
  cb.M = ib + (b_transposed ? n : k), cb.N = jb + (b_transposed ? k : n);
  cc.M = ic + m + 1, cc.N = jc + n;
  ca.imb = 2, ca.inb = 3, ca.mb = 3, ca.nb = 2, ca.rsrc = rows - 1;
  cb.imb = cb.mb = 4, cb.inb = cb.nb = 3, cb.csrc = nranks / rows - 1;
  cc.imb = 1, cc.inb = 5, cc.mb = 2, cc.nb = 4, cc.extra_lld = 2;
  const std::vector<int> desca = make_descriptor(ca, grid), descb = make_descriptor(cb, grid);
  const std::vector<int> descc = make_descriptor(cc, grid);
  const auto a =
      make_local_from<T>(ca, grid, desca, [](std::int64_t i, std::int64_t j) { return small_integer<T>(i, j, 0); });
  const auto b =
      make_local_from<T>(cb, grid, descb, [](std::int64_t i, std::int64_t j) { return small_integer<T>(i, j, 1); });
  const T nan(std::numeric_limits<double>::quiet_NaN());
  std::vector<T> c = make_local_from<T>(cc, grid, descc, [&](std::int64_t, std::int64_t) { return nan; });
  std::fill(c.begin(), c.end(), nan);
  const T alpha(1), beta(0);
  call(&transa, &transb, &m, &n, &k, &alpha, a.data(), &ia, &ja, desca.data(), b.data(), &ib, &jb, descb.data(), &beta,
       c.data(), &ic, &jc, descc.data());

  const auto a_at = [&](std::int64_t i, std::int64_t j) { return small_integer<T>(i + ia - 1, j + ja - 1, 0); };
  const auto b_at = [&](std::int64_t i, std::int64_t j) { return small_integer<T>(i + ib - 1, j + jb - 1, 1); };
  const std::int64_t lld = descc[10];
  const std::int64_t local_rows = redist::scalapack::numroc(cc.M, cc.imb, cc.mb, grid.my_row, cc.rsrc, grid.rows);
  const std::int64_t local_cols = redist::scalapack::numroc(cc.N, cc.inb, cc.nb, grid.my_col, cc.csrc, grid.cols);
  bool right = true;
  for (std::int64_t lj = 0; lj < std::max<std::int64_t>(local_cols, 1); ++lj)
    for (std::int64_t li = 0; li < lld; ++li) {
      const T got = c[static_cast<size_t>(li + lj * lld)];
      const bool got_nan = std::isnan(std::real(got)) || std::isnan(std::imag(got));
      std::int64_t si = -1, sj = -1;  // in sub(C)
      if (li < local_rows && lj < local_cols) {
        si = global_index(li, cc.imb, cc.mb, cc.rsrc, grid.rows, grid.my_row) - (ic - 1);
        sj = global_index(lj, cc.inb, cc.nb, cc.csrc, grid.cols, grid.my_col) - (jc - 1);
      }
      if (si < 0 || si >= m || sj < 0 || sj >= n) {
        right = right && got_nan;
        continue;
      }
      T expected(0);
      for (std::int64_t l = 0; l < k; ++l)
        expected += op_element<T>(transa, si, l, a_at) * op_element<T>(transb, l, sj, b_at);
      right = right && !got_nan && got == expected;
    }
  return all_ranks(right);
}

}  // namespace

TEST(ScalapackDropin, SymbolsResolveToRedist) {
  for (const char* symbol :
       {"pdgemr2d_", "pdgemr2d",  "PDGEMR2D",  "pdgemr2d__", "Cpdgemr2d", "pzgemr2d_", "Cpigemr2d",
        "psgemr2d_", "pcgemr2d_", "pigemr2d_", "pdtrmr2d_",  "pdtrmr2d",  "PDTRMR2D",  "pdtrmr2d__",
        "Cpdtrmr2d", "pitrmr2d_", "pstrmr2d_", "pctrmr2d_",  "pztrmr2d_", "pdgemm_",   "pdgemm",
        "PDGEMM",    "pdgemm__",  "psgemm_",   "pcgemm_",    "pzgemm_",   "pzgemm",    "PZGEMM"})
    EXPECT_NE(library_of(symbol).find("libredist_scalapack"), std::string::npos)
        << symbol << " resolves to " << library_of(symbol);
}

TEST(ScalapackDropin, FortranAndCSpellingsCopyWithUnsetDtype) {
  const int m = 23, n = 17, one = 1;
  EXPECT_TRUE(copies_with_unset_dtype<double>([&](const double* a, const int* da, double* b, const int* db, int ctxt) {
    pdgemr2d_(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
  }));
  EXPECT_TRUE(copies_with_unset_dtype<double>([&](const double* a, const int* da, double* b, const int* db, int ctxt) {
    PDGEMR2D(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
  }));
  EXPECT_TRUE(copies_with_unset_dtype<std::complex<double>>(
      [&](const std::complex<double>* a, const int* da, std::complex<double>* b, const int* db, int ctxt) {
        pzgemr2d(&m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt);
      }));
  EXPECT_TRUE(copies_with_unset_dtype<int>([&](const int* a, const int* da, int* b, const int* db, int ctxt) {
    Cpigemr2d(m, n, a, 1, 1, da, b, 1, 1, db, ctxt);
  }));
}

TEST(ScalapackDropin, TrapezoidSpellingsCopyWithUnsetDtype) {
  const int m = 23, n = 17, one = 1;
  const char uplo = 'U', diag = 'u';
  EXPECT_TRUE(copies_with_unset_dtype<double>(
      [&](const double* a, const int* da, double* b, const int* db, int ctxt) {
        pdtrmr2d_(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(copies_with_unset_dtype<double>(
      [&](const double* a, const int* da, double* b, const int* db, int ctxt) {
        PDTRMR2D(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(copies_with_unset_dtype<std::complex<double>>(
      [&](const std::complex<double>* a, const int* da, std::complex<double>* b, const int* db, int ctxt) {
        pztrmr2d__(&uplo, &diag, &m, &n, a, &one, &one, da, b, &one, &one, db, &ctxt, 1, 1);
      },
      true));
  EXPECT_TRUE(
      copies_with_unset_dtype<float>([&](const float* a, const int* da, float* b, const int* db,
                                         int ctxt) { Cpstrmr2d(&uplo, &diag, m, n, a, 1, 1, da, b, 1, 1, db, ctxt); },
                                     true));
}

TEST(ScalapackDropin, GemmSpellingsMultiply) {
  ASSERT_EQ(setenv("REDIST_PDGEMM_DELEGATE_BELOW", "0", 1), 0);  // redist at every size
  const int spied = redist_test_spied_pdgemm_calls();
  EXPECT_TRUE(multiplies<double>(pdgemm_, 'N', 'T', 23, 19, 17));
  EXPECT_TRUE(multiplies<double>(PDGEMM, 't', 'n', 9, 21, 30));
  EXPECT_TRUE(multiplies<std::complex<double>>(pzgemm, 'C', 'T', 14, 8, 11));
  EXPECT_EQ(redist_test_spied_pdgemm_calls(), spied) << "a call went to the next pdgemm_";
  ASSERT_EQ(unsetenv("REDIST_PDGEMM_DELEGATE_BELOW"), 0);
}

// Fewer multiply-adds (M*N*K) than REDIST_PDGEMM_DELEGATE_BELOW: the call goes to the next pdgemm_ in the link
// chain, the spy, which counts it and hands it to ScaLAPACK; as many or more: redist computes it. The spy
// defines only pdgemm_, so PDGEMM's delegation falls back to that spelling (ScaLAPACK's own).
TEST(ScalapackDropin, SmallGemmsGoToTheNextPdgemm) {
  const auto delegated = [](const char* threshold, auto entry, int m, int n, int k) {
    if (threshold)
      EXPECT_EQ(setenv("REDIST_PDGEMM_DELEGATE_BELOW", threshold, 1), 0);
    else
      EXPECT_EQ(unsetenv("REDIST_PDGEMM_DELEGATE_BELOW"), 0);
    const int before = redist_test_spied_pdgemm_calls();
    EXPECT_TRUE(multiplies<double>(entry, 'N', 'N', m, n, k)) << (threshold ? threshold : "default");
    return redist_test_spied_pdgemm_calls() - before;
  };
  EXPECT_EQ(delegated("100000", pdgemm_, 10, 9, 8), 1);
  EXPECT_EQ(delegated("100000", PDGEMM, 10, 9, 8), 1);
  EXPECT_EQ(delegated("721", pdgemm_, 10, 9, 8), 1);  // 720 multiply-adds
  EXPECT_EQ(delegated("720", pdgemm_, 10, 9, 8), 0);
  EXPECT_EQ(delegated("720", PDGEMM, 10, 9, 8), 0);
  EXPECT_EQ(delegated("not a number", pdgemm_, 2, 2, 2), 1);  // a warning, then the default
  // The default (2^23 = 128 x 256 x 256 multiply-adds; from there on learned per class, the class's first call
  // redist's trial, but where the ranks share cores: then ScaLAPACK's, unlearned).
  EXPECT_EQ(delegated(nullptr, pdgemm_, 2, 3, 4), 1);
  EXPECT_EQ(delegated(nullptr, pdgemm_, 128, 256, 255), 1);
  EXPECT_EQ(delegated(nullptr, pdgemm_, 128, 256, 256), redist::machine::hosts_oversubscribed(MPI_COMM_WORLD) ? 1 : 0);
}

// REDIST_PDGEMM_DELEGATE_BELOW set differently on one process: every process still takes the same way
// (redist, since not all would delegate), the product is right, and nothing hangs.
TEST(ScalapackDropin, DelegationDecidedTogether) {
  const bool last = world_rank() == world_size() - 1;
  ASSERT_EQ(setenv("REDIST_PDGEMM_DELEGATE_BELOW", last ? "0" : "100000", 1), 0);
  const int before = redist_test_spied_pdgemm_calls();
  EXPECT_TRUE(multiplies<double>(pdgemm_, 'N', 'N', 10, 9, 8));
  const int spied = redist_test_spied_pdgemm_calls() - before;
  EXPECT_EQ(spied, 0) << "delegated on some processes only";
  ASSERT_EQ(unsetenv("REDIST_PDGEMM_DELEGATE_BELOW"), 0);
}
