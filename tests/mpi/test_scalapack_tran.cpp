// SPDX-License-Identifier: BSD-3-Clause
// redist_p?tran / p?tranu / p?tranc (twins of PBLAS's) against Debian's reference PBLAS on random cases:
// a random grid shape on a random subset of the ranks in random order (processes off the grid do not
// call, as with PBLAS), random descriptors and sub-matrices (DTYPE 1 for the comparison, DTYPE 2 checked
// against the same call with the equivalent-by-construction values), random alpha and beta including 0
// and 1. Every element of C's local array is compared (beta = 0 starts from NaN: it must not leak).
// redist-test-ranks: 1 2 3 4 6 8
// (no 7: a 1 x 7 grid is prime like 3's, and 7 oversubscribed ranks cost the suite a minute per program)
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.h"
#include "scalapack_cases.hpp"
#include "test_seed.hpp"

extern "C" {
void pstran_(const int*, const int*, const float*, const float*, const int*, const int*, const int*, const float*,
             float*, const int*, const int*, const int*);
void pdtran_(const int*, const int*, const double*, const double*, const int*, const int*, const int*, const double*,
             double*, const int*, const int*, const int*);
void pctranu_(const int*, const int*, const std::complex<float>*, const std::complex<float>*, const int*, const int*,
              const int*, const std::complex<float>*, std::complex<float>*, const int*, const int*, const int*);
void pztranu_(const int*, const int*, const std::complex<double>*, const std::complex<double>*, const int*, const int*,
              const int*, const std::complex<double>*, std::complex<double>*, const int*, const int*, const int*);
void pctranc_(const int*, const int*, const std::complex<float>*, const std::complex<float>*, const int*, const int*,
              const int*, const std::complex<float>*, std::complex<float>*, const int*, const int*, const int*);
void pztranc_(const int*, const int*, const std::complex<double>*, const std::complex<double>*, const int*, const int*,
              const int*, const std::complex<double>*, std::complex<double>*, const int*, const int*, const int*);
}

using namespace redist::testing;

namespace {

enum class which_op { tran, tranu, tranc };

template <class T>
void reference(which_op w, const int* m, const int* n, const T* alpha, const T* a, const int* ia, const int* ja,
               const int* desca, const T* beta, T* c, const int* ic, const int* jc, const int* descc) {
  if constexpr (std::is_same_v<T, float>) pstran_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  if constexpr (std::is_same_v<T, double>) pdtran_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    if (w == which_op::tranc)
      pctranc_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
    else
      pctranu_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  }
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    if (w == which_op::tranc)
      pztranc_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
    else
      pztranu_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  }
}

template <class T>
void ours(which_op w, const int* m, const int* n, const T* alpha, const T* a, const int* ia, const int* ja,
          const int* desca, const T* beta, T* c, const int* ic, const int* jc, const int* descc) {
  if constexpr (std::is_same_v<T, float>) redist_pstran(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  if constexpr (std::is_same_v<T, double>) redist_pdtran_(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    if (w == which_op::tranc)
      redist_pctranc(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
    else
      redist_pctranu(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  }
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    if (w == which_op::tranc)
      redist_pztranc(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
    else
      redist_pztranu(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
  }
}

template <class T>
T random_scalar(rng_t& g) {
  const int kind = static_cast<int>(uniform(g, 0, 3));
  const double v = kind == 0 ? 0.0 : kind == 1 ? 1.0 : static_cast<double>(uniform(g, -9, 9)) / 4.0;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(static_cast<typename T::value_type>(v), kind >= 2 ? static_cast<typename T::value_type>(0.5) : 0);
  else
    return static_cast<T>(v);
}

template <class T>
bool close(T x, T y) {
  using R = decltype(std::abs(x));
  const R tolerance = std::is_same_v<R, float> ? R(1e-5) : R(1e-12);
  return std::abs(x - y) <= tolerance * (1 + std::abs(y));
}

template <class T>
void random_cases(std::uint64_t seed, int cases, which_op w) {
  const int nranks = world_size();
  rng_t g(test_seed(seed));
  for (int k = 0; k < cases; ++k) {
    const auto [shape, ranks] = random_grid(g, nranks);
    const auto [rows, cols] = shape;
    blacs_context grid(rows, cols, ranks);
    const int m = static_cast<int>(uniform(g, 0, 5) == 0 ? 0 : uniform(g, 1, 40));
    const int n = static_cast<int>(uniform(g, 0, 5) == 0 ? 0 : uniform(g, 1, 40));
    const int ia = static_cast<int>(uniform(g, 1, 5)), ja = static_cast<int>(uniform(g, 1, 5));
    const int ic = static_cast<int>(uniform(g, 1, 5)), jc = static_cast<int>(uniform(g, 1, 5));
    matrix_case ca, cc;
    ca.M = ia - 1 + n + uniform(g, 0, 7);
    ca.N = ja - 1 + m + uniform(g, 0, 7);
    cc.M = ic - 1 + m + uniform(g, 0, 7);
    cc.N = jc - 1 + n + uniform(g, 0, 7);
    for (matrix_case* c : {&ca, &cc}) {
      c->mb = c->imb = uniform(g, 1, 9);
      c->nb = c->inb = uniform(g, 1, 9);
      c->rsrc = static_cast<int>(uniform(g, 0, rows - 1));
      c->csrc = static_cast<int>(uniform(g, 0, cols - 1));
      c->extra_lld = uniform(g, 0, 2);
    }
    const T alpha = random_scalar<T>(g), beta = random_scalar<T>(g);
    if (!grid.holds_me()) {  // off the grid: not part of the call
      EXPECT_EQ(global_sum(0), 0);
      continue;
    }
    const std::vector<int> desca = make_descriptor(ca, grid), descc = make_descriptor(cc, grid);
    const std::vector<T> a = make_local<T>(ca, grid, desca, 0);
    std::vector<T> c = make_local<T>(cc, grid, descc, 1);
    if (beta == T(0)) std::fill(c.begin(), c.end(), T(std::numeric_limits<double>::quiet_NaN()));
    std::vector<T> expected = c;
    ours<T>(w, &m, &n, &alpha, a.data(), &ia, &ja, desca.data(), &beta, c.data(), &ic, &jc, descc.data());
    reference<T>(w, &m, &n, &alpha, a.data(), &ia, &ja, desca.data(), &beta, expected.data(), &ic, &jc, descc.data());
    std::int64_t wrong = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool both_nan = c[i] != c[i] && expected[i] != expected[i];
      if (!both_nan && !close(c[i], expected[i])) ++wrong;
    }
    EXPECT_EQ(global_sum(wrong), 0) << "case " << k << ": m " << m << " n " << n << " grid " << rows << "x" << cols
                                    << " alpha " << alpha << " beta " << beta;
  }
}

}  // namespace

TEST(ScalapackTran, PdtranRandom) { random_cases<double>(7201, 12, which_op::tran); }
TEST(ScalapackTran, PstranRandom) { random_cases<float>(7202, 5, which_op::tran); }
TEST(ScalapackTran, PztranuRandom) { random_cases<std::complex<double>>(7203, 5, which_op::tranu); }
TEST(ScalapackTran, PztrancRandom) { random_cases<std::complex<double>>(7204, 5, which_op::tranc); }
TEST(ScalapackTran, PctranuRandom) { random_cases<std::complex<float>>(7205, 4, which_op::tranu); }
TEST(ScalapackTran, PctrancRandom) { random_cases<std::complex<float>>(7206, 4, which_op::tranc); }

// Wrong arguments (PBLAS's checks: M, IA, DTYPE, a block size, C's LLD on one rank only) are reported and
// nothing is written on any process.
TEST(ScalapackTran, WrongArgumentsWriteNothing) {
  const int nranks = world_size(), me = world_rank();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(1, nranks, all);
  matrix_case ca, cc;
  ca.M = cc.N = 12;
  ca.N = cc.M = 9;
  ca.mb = ca.imb = cc.mb = cc.imb = 2;
  ca.nb = ca.inb = cc.nb = cc.inb = 3;
  const std::vector<int> desca = make_descriptor(ca, grid), descc = make_descriptor(cc, grid);
  const std::vector<double> a = make_local<double>(ca, grid, desca, 0);
  const std::vector<double> c_initial = make_local<double>(cc, grid, descc, 1);
  std::vector<int> bad_dtype = desca, bad_block = descc, bad_lld_here = descc;
  bad_dtype[0] = 5;
  bad_block[4] = 0;  // MB of C
  if (me == 0) bad_lld_here[8] = 0;
  struct bad_case {
    const char* what;
    int m, n, ia;
    std::vector<int> da, dc;
  };
  const std::vector<bad_case> cases = {{"M < 0", -2, 12, 1, desca, descc},
                                       {"IA < 1", 9, 12, 0, desca, descc},
                                       {"DTYPE of A", 9, 12, 1, bad_dtype, descc},
                                       {"MB of C", 9, 12, 1, desca, bad_block},
                                       {"LLD of C on one rank", 9, 12, 1, desca, bad_lld_here}};
  const double alpha = 2.0, beta = 0.0;
  const int one = 1;
  for (const bad_case& k : cases) {
    std::vector<double> c = c_initial;
    redist_pdtran(&k.m, &k.n, &alpha, a.data(), &k.ia, &one, k.da.data(), &beta, c.data(), &one, &one, k.dc.data());
    EXPECT_TRUE(all_ranks(c == c_initial)) << k.what << ": C was written";
  }
  // Global arguments different on one rank only (alpha zero there: that rank alone would return at once; C's
  // NB; M), DESCC null on one rank, DESCA's context exited: refused on every rank, nothing written.
  const int m = 9, n = 12;
  std::vector<int> c_nb_here = descc, gone_a = desca;
  if (me == nranks - 1) c_nb_here[5] = 2;
  {
    blacs_context gone(1, nranks, all);
    gone_a[1] = gone.context;
  }
  const double alpha_here = me == nranks - 1 ? 0.0 : alpha, beta_one = 1.0;
  const int m_here = me == 0 ? 8 : m;
  struct one_rank_case {
    const char* what;
    const double* alpha;
    const double* beta;
    const int* m;
    const int* da;
    const int* dc;
  };
  std::vector<one_rank_case> one_rank = {{"DESCA's context exited", &alpha, &beta, &m, gone_a.data(), descc.data()}};
  if (nranks > 1) {
    one_rank.push_back({"alpha zero on one rank (beta 1)", &alpha_here, &beta_one, &m, desca.data(), descc.data()});
    one_rank.push_back({"NB of C on one rank", &alpha, &beta, &m, desca.data(), c_nb_here.data()});
    one_rank.push_back({"M on one rank", &alpha, &beta, &m_here, desca.data(), descc.data()});
    one_rank.push_back({"DESCC null on one rank", &alpha, &beta, &m, desca.data(), me == 0 ? nullptr : descc.data()});
  }
  for (const one_rank_case& k : one_rank) {
    std::vector<double> c = c_initial;
    redist_pdtran(k.m, &n, k.alpha, a.data(), &one, &one, k.da, k.beta, c.data(), &one, &one, k.dc);
    EXPECT_TRUE(all_ranks(c == c_initial)) << k.what << ": C was written";
  }
  // A good call made again takes its earlier agreement's conclusion (agreed_calls.hpp); one rank passing another
  // alpha or M than it did then, while the others pass theirs again, is still refused on every rank (no hang,
  // nothing written).
  const auto transpose = [&](int rows, double scale) {
    std::vector<double> c = c_initial;
    redist_pdtran(&rows, &n, &scale, a.data(), &one, &one, desca.data(), &beta, c.data(), &one, &one, descc.data());
    return c;
  };
  const std::vector<double> right = transpose(m, alpha);
  EXPECT_TRUE(all_ranks(me != 0 || right != c_initial));  // rank 0 holds C's first column block
  for (int call = 0; call < 2; ++call) EXPECT_TRUE(all_ranks(transpose(m, alpha) == right)) << "good call " << call;
  if (nranks > 1) {
    EXPECT_TRUE(all_ranks(transpose(m, me == 0 ? 3.0 : alpha) == c_initial)) << "alpha on one rank after the same call";
    EXPECT_TRUE(all_ranks(transpose(m_here, alpha) == c_initial)) << "M on one rank after the same call";
    EXPECT_TRUE(all_ranks(transpose(m, alpha) == right)) << "the remembered call afterwards";
  }
}

// C := beta*C + alpha*C^T with A the very array C is (a square matrix transposed in place): ScaLAPACK's
// interface allows it and PBLAS reads A while it writes C. redist reads A from a private copy where it shares
// memory with C: the result is the reference's on distinct arrays.
TEST(ScalapackTran, ASharingMemoryWithC) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(nranks >= 4 ? 2 : 1, nranks >= 4 ? nranks / 2 : nranks, all);
  matrix_case square;
  square.M = square.N = 13;
  square.mb = square.nb = square.imb = square.inb = 3;
  const std::vector<int> desc = make_descriptor(square, grid);
  std::vector<double> c = make_local<double>(square, grid, desc, 0), expected = c;
  const std::vector<double> a_copy = c;
  const double alpha = 2.0, beta = 0.5;
  const int n = 13, one = 1;
  if (grid.holds_me()) {  // processes off the grid do not call
    redist_pdtran(&n, &n, &alpha, c.data(), &one, &one, desc.data(), &beta, c.data(), &one, &one, desc.data());
    pdtran_(&n, &n, &alpha, a_copy.data(), &one, &one, desc.data(), &beta, expected.data(), &one, &one, desc.data());
  }
  EXPECT_TRUE(all_ranks(c == expected));
}
