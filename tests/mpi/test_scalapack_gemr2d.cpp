// redist_p?gemr2d (the prefixed twins of ScaLAPACK's REDIST p?gemr2d) on random cases: random grids of
// random shapes on random subsets of the ranks in random order (BLACS gridmap), A and B on different
// contexts, a global context of another shape, random descriptors (DTYPE 1 and 2) and sub-matrices.
// Checked element by element against the analytic values (every element of B's local array: the
// sub-matrix gets A's values, everything else keeps its own), and, for DTYPE 1, against Debian's
// reference pdgemr2d on the same data.
// redist-test-ranks: 1 2 3 4 6 7 8
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "scalapack_cases.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "redist/scalapack/descriptor.hpp"

extern "C" {
void pigemr2d_(const int*, const int*, const int*, const int*, const int*, const int*, int*, const int*, const int*,
               const int*, const int*);
void psgemr2d_(const int*, const int*, const float*, const int*, const int*, const int*, float*, const int*,
               const int*, const int*, const int*);
void pdgemr2d_(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
               const int*, const int*, const int*);
void pcgemr2d_(const int*, const int*, const std::complex<float>*, const int*, const int*, const int*,
               std::complex<float>*, const int*, const int*, const int*, const int*);
void pzgemr2d_(const int*, const int*, const std::complex<double>*, const int*, const int*, const int*,
               std::complex<double>*, const int*, const int*, const int*, const int*);
}

using namespace redist::testing;
namespace sl = redist::scalapack;

namespace {

template <class T>
void call_redist(int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb, const int* descb,
                 int ctxt) {
  if constexpr (std::is_same_v<T, int>) redist_pigemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>) redist_psgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>) redist_Cpdgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    redist_pcgemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    redist_pzgemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
}
template <class T>
void call_reference(int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb,
                    const int* descb, int ctxt) {
  if constexpr (std::is_same_v<T, int>) pigemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>) psgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>) pdgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    pcgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    pzgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
}

template <class T>
void random_cases(std::uint64_t seed, int cases) {
  const int nranks = world_size();
  rng_t g(shared_seed(seed));
  for (int k = 0; k < cases; ++k) {
    const auto [shape_a, ranks_a] = random_grid(g, nranks);
    const auto [shape_b, ranks_b] = random_grid(g, nranks);
    const auto [global_shape, all] = random_full_grid(g, nranks);
    blacs_context ga(shape_a.first, shape_a.second, ranks_a);
    blacs_context gb(shape_b.first, shape_b.second, ranks_b);
    blacs_context global(global_shape.first, global_shape.second, all);
    const int dtype = static_cast<int>(uniform(g, 1, 2));
    const int m = static_cast<int>(uniform(g, 0, 3) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const int n = static_cast<int>(uniform(g, 0, 3) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const int ia = static_cast<int>(uniform(g, 1, 6)), ja = static_cast<int>(uniform(g, 1, 6));
    const int ib = static_cast<int>(uniform(g, 1, 6)), jb = static_cast<int>(uniform(g, 1, 6));
    const matrix_case ca = random_matrix(g, dtype, ia - 1 + m, ja - 1 + n, shape_a.first, shape_a.second);
    const matrix_case cb = random_matrix(g, dtype, ib - 1 + m, jb - 1 + n, shape_b.first, shape_b.second);
    const std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
    const std::vector<T> a = make_local<T>(ca, ga, desca, 0);
    std::vector<T> b = make_local<T>(cb, gb, descb, 1);
    std::vector<T> reference = b;
    call_redist<T>(m, n, a.data(), ia, ja, desca.data(), b.data(), ib, jb, descb.data(), global.context);
    if (dtype == 1)
      call_reference<T>(m, n, a.data(), ia, ja, desca.data(), reference.data(), ib, jb, descb.data(),
                        global.context);

    std::int64_t wrong = 0, differ = 0;
    if (gb.holds_me()) {
      const std::int64_t lld = descb[dtype == 1 ? 8 : 10];
      const std::int64_t rows = sl::numroc(cb.M, cb.imb, cb.mb, gb.my_row, cb.rsrc, gb.rows);
      const std::int64_t cols = sl::numroc(cb.N, cb.inb, cb.nb, gb.my_col, cb.csrc, gb.cols);
      for (std::int64_t lj = 0; lj < std::max<std::int64_t>(cols, 1); ++lj)
        for (std::int64_t li = 0; li < lld; ++li) {
          const size_t at = static_cast<size_t>(li + lj * lld);
          T expected = value_of<T>(-7, -7, 1);  // padding
          if (li < rows && lj < cols) {
            const std::int64_t i = global_index(li, cb.imb, cb.mb, cb.rsrc, gb.rows, gb.my_row);
            const std::int64_t j = global_index(lj, cb.inb, cb.nb, cb.csrc, gb.cols, gb.my_col);
            const bool inside = i >= ib - 1 && i < ib - 1 + m && j >= jb - 1 && j < jb - 1 + n;
            expected = inside ? value_of<T>(i - (ib - 1) + (ia - 1), j - (jb - 1) + (ja - 1), 0) : value_of<T>(i, j, 1);
          }
          if (b[at] != expected) ++wrong;
          if (dtype == 1 && b[at] != reference[at]) ++differ;
        }
    }
    const auto where = [&] {
      return "case " + std::to_string(k) + ": m " + std::to_string(m) + " n " + std::to_string(n) + " dtype " +
             std::to_string(dtype) + " A grid " + std::to_string(shape_a.first) + "x" +
             std::to_string(shape_a.second) + " B grid " + std::to_string(shape_b.first) + "x" +
             std::to_string(shape_b.second) + " global " + std::to_string(global_shape.first) + "x" +
             std::to_string(global_shape.second);
    };
    EXPECT_EQ(global_sum(wrong), 0) << where();
    EXPECT_EQ(global_sum(differ), 0) << where() << " (against the reference pdgemr2d)";
  }
}

}  // namespace

TEST(ScalapackGemr2d, RandomCasesDouble) { random_cases<double>(7101, 12); }
TEST(ScalapackGemr2d, RandomCasesInt) { random_cases<int>(7102, 5); }
TEST(ScalapackGemr2d, RandomCasesFloat) { random_cases<float>(7103, 5); }
TEST(ScalapackGemr2d, RandomCasesComplexFloat) { random_cases<std::complex<float>>(7104, 5); }
TEST(ScalapackGemr2d, RandomCasesComplexDouble) { random_cases<std::complex<double>>(7105, 5); }

// The same call repeated reuses its plan and stays correct (the cache is keyed by everything the ranks
// agreed on).
TEST(ScalapackGemr2d, RepeatedCallsReusePlans) { random_cases<double>(7106, 3); random_cases<double>(7106, 3); }

// Wrong arguments are reported (PXERBLA, as ScaLAPACK does) and nothing is written on any rank, also when
// only one rank's argument is wrong (its LLD): the ranks agree before anything moves.
TEST(ScalapackGemr2d, WrongArgumentsWriteNothing) {
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
    int m, n, ia, ja, ib, jb;
    std::vector<int> desca, descb;
  };
  std::vector<int> bad_rsrc = desc, bad_block = desc, bad_lld_here = desc, bad_dtype = desc;
  bad_rsrc[6] = 1;  // RSRC on a 1-row grid
  bad_block[5] = 0;  // NB
  if (me == nranks - 1) bad_lld_here[8] = 1;  // LLD too small on one rank only (its local rows are 20)
  bad_dtype[0] = 7;
  const std::vector<bad_case> cases = {
      {"M < 0", -1, 4, 1, 1, 1, 1, desc, desc},
      {"IA < 1", 4, 4, 0, 1, 1, 1, desc, desc},
      {"JA beyond N_", 4, 4, 1, 18, 1, 1, desc, desc},
      {"IB + M - 1 > M_", 4, 4, 1, 1, 18, 1, desc, desc},
      {"RSRC outside the grid", 4, 4, 1, 1, 1, 1, bad_rsrc, desc},
      {"NB < 1", 4, 4, 1, 1, 1, 1, desc, bad_block},
      {"LLD too small on one rank", 4, 4, 1, 1, 1, 1, desc, bad_lld_here},
      {"unknown DTYPE", 4, 4, 1, 1, 1, 1, bad_dtype, desc},
  };
  for (const bad_case& k : cases) {
    std::vector<double> b = b_initial;
    redist_Cpdgemr2d(k.m, k.n, a.data(), k.ia, k.ja, k.desca.data(), b.data(), k.ib, k.jb, k.descb.data(),
                     grid.context);
    EXPECT_TRUE(all_ranks(b == b_initial)) << k.what << ": B was written";
  }
  // And a good call afterwards still works.
  std::vector<double> b = b_initial;
  redist_Cpdgemr2d(20, 20, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), grid.context);
  EXPECT_TRUE(all_ranks(b == a));
}

