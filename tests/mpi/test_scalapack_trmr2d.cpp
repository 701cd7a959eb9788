// SPDX-License-Identifier: BSD-3-Clause
// redist_p?trmr2d (the prefixed twins of ScaLAPACK's REDIST p?trmr2d) on random cases: random grids of
// random shapes on random subsets of the ranks in random order, A and B on different contexts, a global
// context of another shape, random descriptors (their DTYPE unset on one rank or on all, as ScaLAPACK's own
// REDIST testers leave it), sub-matrices of every shape (tall, wide, square), UPLO and DIAG in either case.
// Every element of B's local array is checked against the analytic values (the trapezoid gets A's values,
// everything else, the other part of the sub-matrix included, keeps its own) and against Debian's reference
// p?trmr2d on the same data. Wrong arguments are
// reported through PXERBLA with the reference's argument positions and write nothing.
// redist-test-ranks: 1 2 3 4 6 8
// (no 7: a 1 x 7 grid is prime like 3's, and 7 oversubscribed ranks cost the suite a minute per program)
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "scalapack/plan_cache.hpp"
#include "scalapack_cases.hpp"
#include "test_seed.hpp"

extern "C" {
// Debian's reference REDIST (its Fortran entries read UPLO and DIAG through pointers, as its C entries).
void pitrmr2d_(const char*, const char*, const int*, const int*, const int*, const int*, const int*, const int*, int*,
               const int*, const int*, const int*, const int*);
void pstrmr2d_(const char*, const char*, const int*, const int*, const float*, const int*, const int*, const int*,
               float*, const int*, const int*, const int*, const int*);
void Cpdtrmr2d(const char*, const char*, int, int, const double*, int, int, const int*, double*, int, int, const int*,
               int);
void pctrmr2d_(const char*, const char*, const int*, const int*, const std::complex<float>*, const int*, const int*,
               const int*, std::complex<float>*, const int*, const int*, const int*, const int*);
void Cpztrmr2d(const char*, const char*, int, int, const std::complex<double>*, int, int, const int*,
               std::complex<double>*, int, int, const int*, int);

// Replaces ScaLAPACK's PXERBLA for this program (redist finds it at run time): records what was reported.
int last_reported_info = 0;
std::string last_reported_routine;
void pxerbla_(const int*, const char* routine, const int* info, std::size_t routine_length) {
  last_reported_info = *info;
  last_reported_routine.assign(routine, routine_length);
}
}

using namespace redist::testing;
namespace sl = redist::scalapack;

namespace {

template <class T>
void call_redist(char uplo, char diag, int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb,
                 const int* descb, int ctxt) {
  if constexpr (std::is_same_v<T, int>)
    redist_pitrmr2d(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>)
    redist_pstrmr2d_(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>)
    redist_Cpdtrmr2d(&uplo, &diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    redist_pctrmr2d(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    redist_Cpztrmr2d(&uplo, &diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
}
template <class T>
void call_reference(char uplo, char diag, int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib,
                    int jb, const int* descb, int ctxt) {
  if constexpr (std::is_same_v<T, int>) pitrmr2d_(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>)
    pstrmr2d_(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>) Cpdtrmr2d(&uplo, &diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    pctrmr2d_(&uplo, &diag, &m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    Cpztrmr2d(&uplo, &diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
}

// Whether p?trmr2d copies element (i, j) (0-based, in the m x n sub-matrix), written from the routine's
// documented behaviour independently of the implementation: an upper trapezoid whose diagonal ends in the
// bottom-right corner of a tall sub-matrix, a lower one whose diagonal ends there in a wide one.
bool in_trapezoid(char uplo, char diag, std::int64_t i, std::int64_t j, std::int64_t m, std::int64_t n) {
  const bool unit = diag == 'U' || diag == 'u';
  if (uplo == 'U' || uplo == 'u') {
    const std::int64_t rows_in_column = std::min(m, j + 1 + std::max<std::int64_t>(m - n, 0) - (unit ? 1 : 0));
    return i < rows_in_column;
  }
  const std::int64_t first_row = j - std::max<std::int64_t>(n - m, 0) + (unit ? 1 : 0);
  return i >= first_row;
}

// `every_trapezoid`: each case runs the four UPLO x DIAG pairs twice over, on the same descriptors.
template <class T>
void random_cases(std::uint64_t seed, int cases, bool every_trapezoid = false) {
  const int nranks = world_size();
  rng_t g(test_seed(seed));
  for (int k = 0; k < cases; ++k) {
    const auto [shape_a, ranks_a] = random_grid(g, nranks);
    const auto [shape_b, ranks_b] = random_grid(g, nranks);
    const auto [global_shape, all] = random_full_grid(g, nranks);
    blacs_context ga(shape_a.first, shape_a.second, ranks_a);
    blacs_context gb(shape_b.first, shape_b.second, ranks_b);
    blacs_context global(global_shape.first, global_shape.second, all);
    // DTYPE as the REDIST testers leave it: 1 everywhere, unset (garbage) on one process, or garbage everywhere;
    // REDIST reads every descriptor as 9 DTYPE 1 entries, and so does redist.
    const int dtype_garbage = static_cast<int>(uniform(g, 0, 2));
    const int dtype_garbage_rank = static_cast<int>(uniform(g, 0, nranks - 1));
    const int m = static_cast<int>(uniform(g, 0, 5) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const int n = static_cast<int>(uniform(g, 0, 5) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const char drawn_uplo = "UuLl"[uniform(g, 0, 3)], drawn_diag = "NnUu"[uniform(g, 0, 3)];
    const int ia = static_cast<int>(uniform(g, 1, 6)), ja = static_cast<int>(uniform(g, 1, 6));
    const int ib = static_cast<int>(uniform(g, 1, 6)), jb = static_cast<int>(uniform(g, 1, 6));
    const matrix_case ca = random_matrix(g, 1, ia - 1 + m, ja - 1 + n, shape_a.first, shape_a.second);
    const matrix_case cb = random_matrix(g, 1, ib - 1 + m, jb - 1 + n, shape_b.first, shape_b.second);
    std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
    if (dtype_garbage == 2 || (dtype_garbage == 1 && world_rank() == dtype_garbage_rank)) {
      desca[0] = 0x5eed + k;  // any value: 2 (DTYPE 2) and unknown types are read as DTYPE 1 alike
      descb[0] = k % 2 == 0 ? 2 : -1;
    }
    const std::vector<T> a = make_local<T>(ca, ga, desca, 0);
    const int calls = every_trapezoid ? 8 : 1;
    const std::size_t made_before = sl::plans_made();
    for (int call = 0; call < calls; ++call) {
      const char uplo = every_trapezoid ? "ULUL"[call % 4] : drawn_uplo;
      const char diag = every_trapezoid ? "NNUU"[call % 4] : drawn_diag;
      std::vector<T> b = make_local<T>(cb, gb, descb, 1);
      std::vector<T> reference = b;
      call_redist<T>(uplo, diag, m, n, a.data(), ia, ja, desca.data(), b.data(), ib, jb, descb.data(), global.context);
      call_reference<T>(uplo, diag, m, n, a.data(), ia, ja, desca.data(), reference.data(), ib, jb, descb.data(),
                        global.context);
      // Plans are cached on the global context's communicator, new in this case: one per trapezoid (UPLO and
      // DIAG are in the key), built by its first call and reused by the repeats (none for an empty copy).
      const std::size_t made = sl::plans_made() - made_before;
      const std::size_t expected_made = m > 0 && n > 0 ? static_cast<std::size_t>(std::min(call + 1, 4)) : 0;

      std::int64_t wrong = 0, differ = 0;
      if (gb.holds_me()) {
        const std::int64_t lld = descb[8];
        const std::int64_t rows = sl::numroc(cb.M, cb.imb, cb.mb, gb.my_row, cb.rsrc, gb.rows);
        const std::int64_t cols = sl::numroc(cb.N, cb.inb, cb.nb, gb.my_col, cb.csrc, gb.cols);
        for (std::int64_t lj = 0; lj < std::max<std::int64_t>(cols, 1); ++lj)
          for (std::int64_t li = 0; li < lld; ++li) {
            const size_t at = static_cast<size_t>(li + lj * lld);
            T expected = value_of<T>(-7, -7, 1);  // padding
            if (li < rows && lj < cols) {
              const std::int64_t i = global_index(li, cb.imb, cb.mb, cb.rsrc, gb.rows, gb.my_row);
              const std::int64_t j = global_index(lj, cb.inb, cb.nb, cb.csrc, gb.cols, gb.my_col);
              const std::int64_t si = i - (ib - 1), sj = j - (jb - 1);  // in the sub-matrix
              const bool copied = si >= 0 && si < m && sj >= 0 && sj < n && in_trapezoid(uplo, diag, si, sj, m, n);
              expected = copied ? value_of<T>(si + (ia - 1), sj + (ja - 1), 0) : value_of<T>(i, j, 1);
            }
            if (b[at] != expected) ++wrong;
            if (b[at] != reference[at]) ++differ;
          }
      }
      const auto where = [&] {
        return "case " + std::to_string(k) + ": uplo " + uplo + " diag " + diag + " m " + std::to_string(m) + " n " +
               std::to_string(n) + " DTYPE garbage " + std::to_string(dtype_garbage) + " A grid " +
               std::to_string(shape_a.first) + "x" + std::to_string(shape_a.second) + " B grid " +
               std::to_string(shape_b.first) + "x" + std::to_string(shape_b.second) + " global " +
               std::to_string(global_shape.first) + "x" + std::to_string(global_shape.second);
      };
      EXPECT_EQ(global_sum(wrong), 0) << where();
      EXPECT_EQ(global_sum(differ), 0) << where() << " (against the reference p?trmr2d)";
      EXPECT_TRUE(all_ranks(made == expected_made)) << where() << " call " << call << ": " << made << " plan(s) built";
    }
  }
}

}  // namespace

TEST(ScalapackTrmr2d, RandomCasesDouble) { random_cases<double>(7201, 8); }
TEST(ScalapackTrmr2d, RandomCasesInt) { random_cases<int>(7202, 6); }
TEST(ScalapackTrmr2d, RandomCasesFloat) { random_cases<float>(7203, 6); }
TEST(ScalapackTrmr2d, RandomCasesComplexFloat) { random_cases<std::complex<float>>(7204, 6); }
TEST(ScalapackTrmr2d, RandomCasesComplexDouble) { random_cases<std::complex<double>>(7205, 6); }

// Calls on the same descriptors with each UPLO and DIAG, twice over: the second round builds no plan, and UPLO
// and DIAG are part of the cache key (the first round builds four; each trapezoid must still be right).
TEST(ScalapackTrmr2d, RepeatedCallsReusePlans) { random_cases<double>(7206, 2, true); }

// Wrong arguments are reported through PXERBLA with p?trmr2d's argument positions (UPLO 1, DIAG 2, M 3,
// IA 6, JA 7, DESCA 8, IB 10, DESCB 12), and nothing is written on any rank, also when only one rank's
// argument is wrong: the ranks agree before anything moves.
TEST(ScalapackTrmr2d, WrongArgumentsReportedAndWriteNothing) {
  const int nranks = world_size(), me = world_rank();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(1, nranks, all);
  matrix_case c;
  c.M = c.N = 20;
  c.mb = c.nb = c.imb = c.inb = 3;
  const std::vector<int> desc = make_descriptor(c, grid);
  const std::vector<double> a = make_local<double>(c, grid, desc, 0);
  const std::vector<double> b_initial = make_local<double>(c, grid, desc, 1);
  struct bad_case {
    const char* what;
    char uplo, diag;
    int m, n, ia, ja, ib, jb;
    std::vector<int> desca, descb;
    int info;  // what PXERBLA receives: the argument's position (100 * position + entry for a descriptor's)
  };
  std::vector<int> bad_block = desc, bad_lld_here = desc, nb_here = desc;
  bad_block[5] = 0;                           // NB
  if (me == nranks - 1) bad_lld_here[8] = 1;  // LLD too small on one rank only (its local rows are 20)
  if (me == nranks - 1) nb_here[5] = 4;       // a global entry different on one rank only
  const char uplo_on_one_rank = me == 0 ? 'X' : 'U';
  const char lower_on_one_rank = me == nranks - 1 ? 'L' : 'U';
  const int m_one_rank = me == nranks - 1 ? 0 : 4;
  std::vector<bad_case> cases = {
      {"UPLO", 'A', 'N', 4, 4, 1, 1, 1, 1, desc, desc, 1},
      {"UPLO on one rank", uplo_on_one_rank, 'N', 4, 4, 1, 1, 1, 1, desc, desc, 1},
      {"DIAG", 'L', 'T', 4, 4, 1, 1, 1, 1, desc, desc, 2},
      {"UPLO before DIAG", ' ', ' ', 4, 4, 1, 1, 1, 1, desc, desc, 1},
      {"M < 0", 'U', 'N', -1, 4, 1, 1, 1, 1, desc, desc, 3},
      {"IA < 1", 'U', 'U', 4, 4, 0, 1, 1, 1, desc, desc, 6},
      {"JA beyond N_", 'L', 'N', 4, 4, 1, 18, 1, 1, desc, desc, 7},
      {"IB + M - 1 > M_", 'L', 'U', 4, 4, 1, 1, 18, 1, desc, desc, 10},
      // A DTYPE 1 NB is also the first block's INB, entry 6 of the 11-entry form, checked first (as PBLAS).
      {"NB of B < 1", 'U', 'N', 4, 4, 1, 1, 1, 1, desc, bad_block, 1206},
      {"LLD of B too small on one rank", 'U', 'N', 4, 4, 1, 1, 1, 1, desc, bad_lld_here, 1211},
      // ICTXT (13) negative or never created: reported on every rank (each passes the same one).
      {"ICTXT negative", 'U', 'N', 4, 4, 1, 1, 1, 1, desc, desc, 13},
  };
  // Different on one rank only (global arguments): the first differing argument, on every rank.
  if (nranks > 1) {
    cases.push_back({"M zero on one rank only", 'U', 'N', m_one_rank, 4, 1, 1, 1, 1, desc, desc, 3});
    cases.push_back({"UPLO different on one rank", lower_on_one_rank, 'N', 4, 4, 1, 1, 1, 1, desc, desc, 1});
    cases.push_back({"NB of A different on one rank", 'U', 'N', 4, 4, 1, 1, 1, 1, nb_here, desc, 806});
    cases.push_back({"JB different on one rank", 'U', 'N', 4, 4, 1, 1, 1, 1 + (me == 0), desc, desc, 11});
  }
  for (const bad_case& k : cases) {
    std::vector<double> b = b_initial;
    last_reported_info = 0;
    last_reported_routine.clear();
    redist_Cpdtrmr2d(&k.uplo, &k.diag, k.m, k.n, a.data(), k.ia, k.ja, k.desca.data(), b.data(), k.ib, k.jb,
                     k.descb.data(), k.info == 13 ? -3 : grid.context);
    EXPECT_TRUE(all_ranks(b == b_initial)) << k.what << ": B was written";
    EXPECT_TRUE(all_ranks(last_reported_info == k.info))
        << k.what << ": reported " << last_reported_info << ", expected " << k.info;
    EXPECT_EQ(last_reported_routine, "PDTRMR2D") << k.what;
  }
  // And a good call afterwards still works: the lower triangle with its diagonal, nothing above it.
  std::vector<double> b = b_initial;
  const char lower = 'L', non_unit = 'N';
  last_reported_info = 0;
  redist_Cpdtrmr2d(&lower, &non_unit, 20, 20, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  const std::int64_t local_cols = sl::numroc(20, 3, 3, me, 0, nranks);  // B's LLD is 20, its local rows
  std::int64_t wrong = 0;
  for (std::int64_t lj = 0; lj < local_cols; ++lj)
    for (std::int64_t i = 0; i < 20; ++i) {
      const size_t at = static_cast<size_t>(i + lj * 20);
      const std::int64_t j = global_index(lj, 3, 3, 0, nranks, me);
      if (b[at] != (i >= j ? a[at] : b_initial[at])) ++wrong;
    }
  EXPECT_EQ(global_sum(wrong), 0);
  EXPECT_TRUE(all_ranks(last_reported_info == 0));
}

// m == 0 or n == 0 returns at once, as REDIST: nothing is checked (not even UPLO), read or written.
TEST(ScalapackTrmr2d, EmptySubMatrixReturnsAtOnce) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(nranks, 1, all);
  matrix_case c;
  c.M = 9;
  c.N = 7;
  c.mb = c.nb = c.imb = c.inb = 2;
  const std::vector<int> desc = make_descriptor(c, grid);
  const std::vector<double> b_initial = make_local<double>(c, grid, desc, 1);
  std::vector<double> b = b_initial;
  const char bad = '?';
  last_reported_info = 0;
  redist_Cpdtrmr2d(&bad, &bad, 0, 5, nullptr, 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  redist_Cpdtrmr2d(&bad, &bad, 5, 0, nullptr, 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  EXPECT_TRUE(all_ranks(b == b_initial && last_reported_info == 0));
}
