// SPDX-License-Identifier: BSD-3-Clause
// redist_p?gemm (twins of PBLAS's p?gemm) against Debian's reference PBLAS on random cases: a random grid
// shape on a random subset of the ranks in random order (A, B and C on that one context, as PBLAS requires;
// processes off the grid do not call), random DTYPE 1 or 2 descriptors with sub-matrices anywhere, the shapes
// square, tall-skinny (m = n << k), large m, flat (m = n >> k), tiny and empty (m, n or k = 0), every TRANSA x
// TRANSB in {N, T, C} (either case), all four types, alpha drawn among 1 and other (complex) values, beta among
// 0, 1 and others (alpha = 0 has its own test). Every element of C's local array is checked: inside sub(C) against the reference within a tolerance
// that grows with k (the sums run in another order), everywhere else (the rest of C, padding rows below the
// local rows) unchanged bit for bit. With beta = 0 redist's C starts as NaN, which must not leak into sub(C).
// Wrong arguments are reported through PXERBLA with PBLAS's argument positions and write nothing.
// redist-test-ranks: 1 2 3 4 5 7 8
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/trace.hpp"
#include "scalapack/plan_cache.hpp"
#include "scalapack_cases.hpp"
#include "test_seed.hpp"

extern "C" {
// Debian's reference PBLAS.
void psgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
             const int*, const int*, const float*, const int*, const int*, const int*, const float*, float*, const int*,
             const int*, const int*);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
             const int*, const int*, const int*);
void pcgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<float>*,
             const std::complex<float>*, const int*, const int*, const int*, const std::complex<float>*, const int*,
             const int*, const int*, const std::complex<float>*, std::complex<float>*, const int*, const int*,
             const int*);
void pzgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<double>*,
             const std::complex<double>*, const int*, const int*, const int*, const std::complex<double>*, const int*,
             const int*, const int*, const std::complex<double>*, std::complex<double>*, const int*, const int*,
             const int*);

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
constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// One call, with PBLAS's arguments by value (the wrappers pass them by reference).
template <class T>
struct gemm_call {
  char transa = 'N', transb = 'N';
  int m = 0, n = 0, k = 0;
  T alpha = T(1), beta = T(0);
  int ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
};

template <class T>
void reference(const gemm_call<T>& x, const T* a, const int* desca, const T* b, const int* descb, T* c,
               const int* descc) {
  const char* ta = &x.transa;
  const char* tb = &x.transb;
  if constexpr (std::is_same_v<T, float>)
    psgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
            &x.jc, descc);
  if constexpr (std::is_same_v<T, double>)
    pdgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
            &x.jc, descc);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    pcgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
            &x.jc, descc);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    pzgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
            &x.jc, descc);
}

// Through both spellings of the twins (with and without the trailing underscore).
template <class T>
void ours(const gemm_call<T>& x, const T* a, const int* desca, const T* b, const int* descb, T* c, const int* descc) {
  const char* ta = &x.transa;
  const char* tb = &x.transb;
  if constexpr (std::is_same_v<T, float>)
    redist_psgemm(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
                  &x.jc, descc);
  if constexpr (std::is_same_v<T, double>)
    redist_pdgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c,
                   &x.ic, &x.jc, descc);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    redist_pcgemm_(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c,
                   &x.ic, &x.jc, descc);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    redist_pzgemm(ta, tb, &x.m, &x.n, &x.k, &x.alpha, a, &x.ia, &x.ja, desca, b, &x.ib, &x.jb, descb, &x.beta, c, &x.ic,
                  &x.jc, descc);
}

// A value in [-1, 1) (both parts for complex types) for element (i, j) of the matrix numbered `salt`, the
// same on every process (splitmix64 of the three).
template <class T>
T value_at(std::int64_t i, std::int64_t j, std::uint64_t salt) {
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const std::uint64_t h =
      mix(mix(static_cast<std::uint64_t>(i) * 0x100000001b3ULL + salt) ^ static_cast<std::uint64_t>(j));
  const auto unit = [](std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53 * 2.0 - 1.0; };
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(unit(h)), static_cast<R>(unit(mix(h))));
  } else {
    return static_cast<T>(unit(h));
  }
}

template <class T>
std::vector<T> random_local(const matrix_case& c, const blacs_context& g, const std::vector<int>& desc,
                            std::uint64_t salt) {
  return make_local_from<T>(c, g, desc, [salt](std::int64_t i, std::int64_t j) { return value_at<T>(i, j, salt); });
}

// 0 (unless `nonzero`), 1 or another value (with an imaginary part for complex types).
template <class T>
T random_scalar(rng_t& g, bool nonzero = false) {
  const int kind = static_cast<int>(uniform(g, nonzero ? 1 : 0, 3));
  const double v = kind == 0 ? 0.0 : kind == 1 ? 1.0 : static_cast<double>(uniform(g, -9, 9)) / 4.0;
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v), kind >= 2 ? static_cast<R>(static_cast<double>(uniform(g, -4, 4)) / 8.0) : R(0));
  } else {
    return static_cast<T>(v);
  }
}

enum class shape { square, tall_skinny, large_m, flat, tiny, empty };

const char* to_string(shape s) {
  switch (s) {
    case shape::square:
      return "square";
    case shape::tall_skinny:
      return "tall-skinny";
    case shape::large_m:
      return "large m";
    case shape::flat:
      return "flat";
    case shape::tiny:
      return "tiny";
    case shape::empty:
      return "empty";
  }
  return "?";
}

// m, n, k of a shape (small enough for a 2-core machine running 8 ranks).
void draw_sizes(rng_t& g, shape s, int& m, int& n, int& k) {
  auto draw = [&g](std::int64_t lo, std::int64_t hi) { return static_cast<int>(uniform(g, lo, hi)); };
  switch (s) {
    case shape::square:
      m = n = k = draw(6, 40);
      return;
    case shape::tall_skinny:
      m = n = draw(1, 6), k = draw(80, 180);
      return;
    case shape::large_m:
      m = draw(80, 180), n = draw(1, 12), k = draw(1, 12);
      return;
    case shape::flat:
      m = n = draw(40, 90), k = draw(1, 4);
      return;
    case shape::tiny:
      m = draw(1, 3), n = draw(1, 3), k = draw(1, 3);
      return;
    case shape::empty: {
      m = draw(0, 14), n = draw(0, 14), k = draw(0, 14);
      const int zero = draw(0, 2);
      (zero == 0 ? m : zero == 1 ? n : k) = 0;
      return;
    }
  }
}

template <class T>
bool is_nan(T x) {
  if constexpr (is_complex_v<T>)
    return std::isnan(x.real()) || std::isnan(x.imag());
  else
    return std::isnan(x);
}

template <class T>
bool same_bits(T x, T y) {
  return x == y || (is_nan(x) && is_nan(y));
}

// Checks C's local array after redist's call (`got`) against the reference's (`expected`) and C's values
// before redist's call (`before`): inside sub(C) within `tolerance` and not NaN, elsewhere unchanged. Returns
// the number of wrong elements of this process.
template <class T>
std::int64_t wrong_elements(const std::vector<T>& got, const std::vector<T>& expected, const std::vector<T>& before,
                            const matrix_case& cc, const blacs_context& grid, int lld, const gemm_call<T>& x,
                            double tolerance) {
  if (!grid.holds_me()) return 0;
  const std::int64_t rows = sl::numroc(cc.M, cc.imb, cc.mb, grid.my_row, cc.rsrc, grid.rows);
  const std::int64_t cols = sl::numroc(cc.N, cc.inb, cc.nb, grid.my_col, cc.csrc, grid.cols);
  std::int64_t wrong = 0;
  for (std::int64_t lj = 0; lj < std::max<std::int64_t>(cols, 1); ++lj)
    for (std::int64_t li = 0; li < lld; ++li) {
      const size_t at = static_cast<size_t>(li + lj * lld);
      bool inside = false;
      if (li < rows && lj < cols) {
        const std::int64_t i = global_index(li, cc.imb, cc.mb, cc.rsrc, grid.rows, grid.my_row);
        const std::int64_t j = global_index(lj, cc.inb, cc.nb, cc.csrc, grid.cols, grid.my_col);
        inside = i >= x.ic - 1 && i < x.ic - 1 + x.m && j >= x.jc - 1 && j < x.jc - 1 + x.n;
      }
      if (inside ? is_nan(got[at]) || !(std::abs(got[at] - expected[at]) <= tolerance)
                 : !same_bits(got[at], before[at]))
        ++wrong;
    }
  return wrong;
}

// The sub-matrix of `rows` x `cols` at a random place of a random matrix (DTYPE `dtype`) on `grid`.
matrix_case random_operand(rng_t& g, int dtype, int rows, int cols, const blacs_context& grid, int& i, int& j) {
  i = static_cast<int>(uniform(g, 1, 6));
  j = static_cast<int>(uniform(g, 1, 6));
  return random_matrix(g, dtype, i - 1 + rows, j - 1 + cols, grid.rows, grid.cols);
}

// Sums over all ranks of several counts in one reduction (processes off a grid make the same one call).
template <size_t N>
std::array<std::int64_t, N> global_sums(std::array<std::int64_t, N> counts) {
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(N), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return counts;
}

// |error| <= 4 (k + 2) eps (|alpha| 2k + 2 |beta| + 1): each of the k products is at most 2 in magnitude (the
// values are below 1, below sqrt(2) for complex types), so a sum of them in any order is off by at most about
// k eps times the sum of their magnitudes, for the reference and for redist alike.
template <class T>
double tolerance_for(const gemm_call<T>& x) {
  const double eps = std::numeric_limits<decltype(std::abs(T{}))>::epsilon();
  return 4.0 * (x.k + 2) * eps * (std::abs(x.alpha) * 2.0 * x.k + 2.0 * std::abs(x.beta) + 1.0);
}

const shape every_shape[] = {shape::square, shape::tall_skinny, shape::large_m, shape::flat, shape::tiny, shape::empty};

// One call of redist's and the reference's on the same random operands (matrices ca, cb, cc on `grid`, values
// from `salt`; C NaN where beta = 0), summed over all ranks: {wrong elements of C, inputs written, errors reported}.
// A process off the grid takes part in the sums only.
template <class T>
std::array<std::int64_t, 3> checked_call(const gemm_call<T>& x, const matrix_case& ca, const matrix_case& cb,
                                         const matrix_case& cc, const blacs_context& grid, std::uint64_t salt) {
  using R = decltype(std::abs(T{}));
  if (!grid.holds_me()) return global_sums<3>({0, 0, 0});
  const std::vector<int> desca = make_descriptor(ca, grid), descb = make_descriptor(cb, grid);
  const std::vector<int> descc = make_descriptor(cc, grid);
  const std::vector<T> a = random_local<T>(ca, grid, desca, salt), b = random_local<T>(cb, grid, descb, salt + 1);
  const std::vector<T> c_initial = random_local<T>(cc, grid, descc, salt + 2);
  std::vector<T> c = c_initial;
  if (x.beta == T(0)) std::fill(c.begin(), c.end(), T(std::numeric_limits<R>::quiet_NaN()));
  const std::vector<T> before = c;
  last_reported_info = 0;
  ours<T>(x, a.data(), desca.data(), b.data(), descb.data(), c.data(), descc.data());
  const bool inputs_written =
      a != random_local<T>(ca, grid, desca, salt) || b != random_local<T>(cb, grid, descb, salt + 1);
  const bool reported = last_reported_info != 0;
  std::vector<T> expected = c_initial;  // the reference reads C only through beta: finite values
  reference<T>(x, a.data(), desca.data(), b.data(), descb.data(), expected.data(), descc.data());
  const int lld = descc[cc.dtype == 1 ? 8 : 10];
  return global_sums<3>(
      {wrong_elements(c, expected, before, cc, grid, lld, x, tolerance_for(x)), inputs_written, reported});
}

// Case `number` of a run has shape every_shape[(number + offset) % 6] and the TRANSA x TRANSB pair
// (number + offset) % 9 (each letter in a random case), so 6 cases see every shape and 9 every pair.
template <class T>
void random_cases(std::uint64_t seed, int cases, int offset) {
  const int nranks = world_size();
  rng_t g(test_seed(seed));
  for (int number = 0; number < cases; ++number) {
    const shape s = every_shape[(number + offset) % 6];
    const int pair = (number + offset) % 9;
    const auto [grid_shape, ranks] = random_grid(g, nranks);
    blacs_context grid(grid_shape.first, grid_shape.second, ranks);
    gemm_call<T> x;
    draw_sizes(g, s, x.m, x.n, x.k);
    x.transa = (uniform(g, 0, 1) ? "NTC" : "ntc")[pair / 3];
    x.transb = (uniform(g, 0, 1) ? "NTC" : "ntc")[pair % 3];
    x.alpha = random_scalar<T>(g, true);  // alpha = 0 builds no plan: see QuickReturnsAndScalingOnly
    x.beta = random_scalar<T>(g);
    const int dtype = static_cast<int>(uniform(g, 1, 2));
    const bool a_transposed = x.transa != 'N' && x.transa != 'n';
    const bool b_transposed = x.transb != 'N' && x.transb != 'n';
    const matrix_case ca =
        random_operand(g, dtype, a_transposed ? x.k : x.m, a_transposed ? x.m : x.k, grid, x.ia, x.ja);
    const matrix_case cb =
        random_operand(g, dtype, b_transposed ? x.n : x.k, b_transposed ? x.k : x.n, grid, x.ib, x.jb);
    const matrix_case cc = random_operand(g, dtype, x.m, x.n, grid, x.ic, x.jc);
    const std::uint64_t salt = static_cast<std::uint64_t>(uniform(g, 0, 1 << 30));
    const auto [wrong, written, reports] = checked_call(x, ca, cb, cc, grid, salt);
    if (!grid.holds_me()) continue;  // off the grid: not part of the call
    const std::string where = "case " + std::to_string(number) + " (" + to_string(s) + "): " + x.transa + x.transb +
                              " m " + std::to_string(x.m) + " n " + std::to_string(x.n) + " k " + std::to_string(x.k) +
                              " dtype " + std::to_string(dtype) + " grid " + std::to_string(grid.rows) + "x" +
                              std::to_string(grid.cols);
    EXPECT_EQ(wrong, 0) << where << " alpha " << x.alpha << " beta " << x.beta;
    EXPECT_EQ(written, 0) << where << ": A or B was written";
    EXPECT_EQ(reports, 0) << where << ": an error was reported";
  }
}

// A matrix whose rows (by_rows) or columns are laid out on a one-dimensional grid of `procs` processes exactly as
// `like`'s from `like_at` on, for a sub-matrix starting at `at` of it (chosen here): the same block size, and the
// first row (column) on the same process at the same place in its block, from a random source process.
matrix_case laid_out_alike(rng_t& g, const matrix_case& like, int like_at, int procs, bool by_rows, std::int64_t length,
                           std::int64_t other_extent, int& at) {
  matrix_case c = random_matrix(g, 1, by_rows ? 1 : other_extent, by_rows ? other_extent : 1, by_rows ? procs : 1,
                                by_rows ? 1 : procs);
  const std::int64_t block = by_rows ? like.mb : like.nb;
  const int like_src = by_rows ? like.rsrc : like.csrc;
  // like.imb == like.mb (DTYPE 1): the owner of row i (1-based) is (src + (i-1)/mb) mod P.
  const std::int64_t owner = (like_src + (like_at - 1) / block) % procs, within = (like_at - 1) % block;
  const int src = static_cast<int>(uniform(g, 0, procs - 1));
  const std::int64_t skip = uniform(g, 0, 2);  // whole rounds of blocks before
  const std::int64_t first_block = ((owner - src) % procs + procs) % procs + skip * procs;
  at = static_cast<int>(first_block * block + within + 1);
  (by_rows ? c.M : c.N) = at - 1 + length + uniform(g, 0, 7);
  (by_rows ? c.mb : c.nb) = (by_rows ? c.imb : c.inb) = block;
  (by_rows ? c.rsrc : c.csrc) = src;
  return c;
}

// Products on a one-dimensional grid that redist multiplies in place (the trace says "in_place"), with the
// reference's result: C and one operand laid out alike (P x 1: A's rows and C's, TRANSA = N; 1 x Q: B's columns and
// C's, TRANSB = N), the other operand in any layout and operation, gathered; or K laid out alike in A and B (P x 1:
// TRANSA = T or C, TRANSB = N, A's rows and B's; 1 x Q: TRANSA = N, TRANSB = T or C, A's columns and B's), C in any
// layout, partial sums exchanged.
template <class T>
void one_dimensional_cases(std::uint64_t seed, int cases) {
  const int nranks = world_size();
  rng_t g(test_seed(seed));
  redist::trace::set_mode(redist::trace::trace_mode::summary);
  redist::trace::reset();
  for (int number = 0; number < cases; ++number) {
    const bool by_rows = number % 2 == 0, sums = number % 4 >= 2;
    std::vector<int> ranks(static_cast<size_t>(nranks));
    std::iota(ranks.begin(), ranks.end(), 0);
    std::shuffle(ranks.begin(), ranks.end(), g);
    blacs_context grid(by_rows ? nranks : 1, by_rows ? 1 : nranks, ranks);
    gemm_call<T> x;
    draw_sizes(g, every_shape[uniform(g, 0, 3)], x.m, x.n, x.k);
    if (sums) x.k = std::max(x.k, std::min(x.m, x.n));  // partial sums no larger than the operands: in place
    const char* letters = uniform(g, 0, 1) ? "NTC" : "ntc";
    const char other = letters[uniform(g, sums ? 1 : 0, 2)];
    x.transa = by_rows == sums ? other : letters[0];
    x.transb = by_rows == sums ? letters[0] : other;
    x.alpha = random_scalar<T>(g, true);
    if (x.alpha == T(0)) x.alpha = T(1);  // "nonzero" draws a zero now and then: that would be a quick return
    x.beta = random_scalar<T>(g);
    const bool a_transposed = x.transa != 'N' && x.transa != 'n';
    const bool b_transposed = x.transb != 'N' && x.transb != 'n';
    const matrix_case cc = random_operand(g, 1, x.m, x.n, grid, x.ic, x.jc);
    matrix_case ca, cb;
    if (sums && by_rows) {  // A: K x M, B: K x N, K's rows alike
      ca = random_operand(g, 1, x.k, x.m, grid, x.ia, x.ja);
      cb = laid_out_alike(g, ca, x.ia, nranks, true, x.k, x.n, x.ib);
      x.jb = static_cast<int>(uniform(g, 1, 6));
      cb.N = x.jb - 1 + x.n + uniform(g, 0, 5);
    } else if (sums) {  // A: M x K, B: N x K, K's columns alike
      ca = random_operand(g, 1, x.m, x.k, grid, x.ia, x.ja);
      cb = laid_out_alike(g, ca, x.ja, nranks, false, x.k, x.n, x.jb);
      x.ib = static_cast<int>(uniform(g, 1, 6));
      cb.M = x.ib - 1 + x.n + uniform(g, 0, 5);
    } else if (by_rows) {
      ca = laid_out_alike(g, cc, x.ic, nranks, true, x.m, x.k, x.ia);
      x.ja = static_cast<int>(uniform(g, 1, 6));
      ca.N = x.ja - 1 + x.k + uniform(g, 0, 5);
      cb = random_operand(g, 1, b_transposed ? x.n : x.k, b_transposed ? x.k : x.n, grid, x.ib, x.jb);
    } else {
      cb = laid_out_alike(g, cc, x.jc, nranks, false, x.n, x.k, x.jb);
      x.ib = static_cast<int>(uniform(g, 1, 6));
      cb.M = x.ib - 1 + x.k + uniform(g, 0, 5);
      ca = random_operand(g, 1, a_transposed ? x.k : x.m, a_transposed ? x.m : x.k, grid, x.ia, x.ja);
    }
    const auto [wrong, written, reports] = checked_call(x, ca, cb, cc, grid, uniform(g, 0, 1 << 30));
    const std::string where = "case " + std::to_string(number) + ": " + x.transa + x.transb + " m " +
                              std::to_string(x.m) + " n " + std::to_string(x.n) + " k " + std::to_string(x.k) +
                              " grid " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) + " ia " +
                              std::to_string(x.ia) + " ib " + std::to_string(x.ib) + " ic " + std::to_string(x.ic) +
                              " jb " + std::to_string(x.jb) + " jc " + std::to_string(x.jc);
    EXPECT_EQ(wrong, 0) << where << " alpha " << x.alpha << " beta " << x.beta;
    EXPECT_EQ(written, 0) << where << ": A or B was written";
    EXPECT_EQ(reports, 0) << where << ": an error was reported";
  }
  std::int64_t in_place = 0, other_ways = 0;
  for (const redist::trace::entry_totals& r : redist::trace::totals())
    (r.path == "redist/in_place" ? in_place : other_ways) += r.calls;
  redist::trace::set_mode(redist::trace::trace_mode::off);
  redist::trace::reset();
  EXPECT_EQ(in_place, cases) << "every product multiplied in place";
  EXPECT_EQ(other_ways, 0);
}

}  // namespace

TEST(ScalapackGemm, OneDimensionalGridsMultiplyInPlace) {
  one_dimensional_cases<double>(8107, 12);
  one_dimensional_cases<std::complex<float>>(8108, 8);
}

// Few cases per type: on the 2-core CI machine every call at 8 ranks costs a scheduler slice per collective.
TEST(ScalapackGemm, PzgemmRandom) { random_cases<std::complex<double>>(8104, 9, 0); }  // every pair, every shape
TEST(ScalapackGemm, PdgemmRandom) { random_cases<double>(8101, 6, 3); }
TEST(ScalapackGemm, PsgemmRandom) { random_cases<float>(8102, 4, 1); }
TEST(ScalapackGemm, PcgemmRandom) { random_cases<std::complex<float>>(8103, 4, 5); }

// The same call repeated with new values builds one plan and stays right; alpha = 0 and K = 0 (sub(C) only
// scaled) and PBLAS's quick returns build none.
TEST(ScalapackGemm, RepeatedCallsReuseThePlan) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  std::reverse(all.begin(), all.end());
  blacs_context grid(1, nranks, all);
  rng_t g(test_seed(8106));
  gemm_call<double> x;
  x.transa = 'T';
  x.m = 17, x.n = 14, x.k = 23;
  x.beta = 0.5;
  const matrix_case ca = random_operand(g, 2, x.k, x.m, grid, x.ia, x.ja);
  const matrix_case cb = random_operand(g, 1, x.k, x.n, grid, x.ib, x.jb);
  const matrix_case cc = random_operand(g, 2, x.m, x.n, grid, x.ic, x.jc);
  const std::vector<int> desca = make_descriptor(ca, grid), descb = make_descriptor(cb, grid);
  const std::vector<int> descc = make_descriptor(cc, grid);
  // The first call makes at most one plan (none where the drawn case is multiplied in place, as on one rank),
  // the later ones none.
  const std::size_t made_before = sl::plans_made();
  std::size_t made_at_first = made_before;
  for (std::uint64_t call = 0; call < 4; ++call) {
    x.alpha = 1.0 + static_cast<double>(call);
    const auto a = random_local<double>(ca, grid, desca, 20 + call),
               b = random_local<double>(cb, grid, descb, 30 + call);
    const auto c_initial = random_local<double>(cc, grid, descc, 40 + call);
    auto c = c_initial, expected = c_initial;
    ours(x, a.data(), desca.data(), b.data(), descb.data(), c.data(), descc.data());
    reference(x, a.data(), desca.data(), b.data(), descb.data(), expected.data(), descc.data());
    EXPECT_EQ(global_sum(wrong_elements(c, expected, c_initial, cc, grid, descc[10], x, tolerance_for(x))), 0)
        << "call " << call;
    if (call == 0) made_at_first = sl::plans_made();
    EXPECT_LE(made_at_first - made_before, 1u);
    EXPECT_EQ(sl::plans_made(), made_at_first) << "call " << call;
  }
  // Nothing to multiply: no plan, nothing moves.
  const auto a = random_local<double>(ca, grid, desca, 50), b = random_local<double>(cb, grid, descb, 51);
  for (const auto& [alpha, k] : {std::pair<double, int>{0.0, x.k}, {2.0, 0}}) {
    gemm_call<double> y = x;
    y.alpha = alpha;
    y.k = k;
    const auto c_initial = random_local<double>(cc, grid, descc, 52);
    auto c = c_initial, expected = c_initial;
    ours(y, a.data(), desca.data(), b.data(), descb.data(), c.data(), descc.data());
    reference(y, a.data(), desca.data(), b.data(), descb.data(), expected.data(), descc.data());
    EXPECT_EQ(global_sum(wrong_elements(c, expected, c_initial, cc, grid, descc[10], y, 0.0)), 0)
        << "alpha " << alpha << " k " << k;
  }
  EXPECT_EQ(sl::plans_made(), made_at_first);
}

// PBLAS's quick returns: M or N zero, or (alpha zero or K zero) with beta one, write nothing; alpha = 0 with
// beta = 0 sets sub(C) to zero without reading it (NaN there), and scales it otherwise; A and B are not read
// when alpha = 0 (NaN there).
TEST(ScalapackGemm, QuickReturnsAndScalingOnly) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  const int rows = nranks >= 4 ? 2 : 1;
  blacs_context grid(rows, nranks / rows, all);
  matrix_case c;
  c.M = 15, c.N = 12;
  c.mb = c.nb = c.imb = c.inb = 2;
  const std::vector<int> desc = make_descriptor(c, grid);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a_nan(std::max<size_t>(1, make_local<double>(c, grid, desc, 0).size()), nan);
  const std::vector<double> c_initial = random_local<double>(c, grid, desc, 60);
  const int lld = desc[8];
  struct quick_case {
    const char* what;
    int m, n, k, ic;
    double alpha, beta;
  };
  // IC = 40 is out of range, which PBLAS does not check for an empty sub(C).
  const std::vector<quick_case> untouched = {{"M = 0", 0, 5, 4, 40, 1.0, 0.0},
                                             {"N = 0", 5, 0, 4, 1, 1.0, 0.0},
                                             {"alpha = 0, beta = 1", 5, 6, 4, 2, 0.0, 1.0},
                                             {"K = 0, beta = 1", 5, 6, 0, 2, 3.0, 1.0}};
  for (const quick_case& q : untouched) {
    gemm_call<double> x;
    x.m = q.m, x.n = q.n, x.k = q.k, x.ic = q.ic, x.alpha = q.alpha, x.beta = q.beta;
    std::vector<double> got = c_initial;
    last_reported_info = 0;
    ours(x, a_nan.data(), desc.data(), a_nan.data(), desc.data(), got.data(), desc.data());
    EXPECT_TRUE(all_ranks(got == c_initial && last_reported_info == 0)) << q.what;
  }
  for (const double beta : {0.0, -2.5}) {
    gemm_call<double> x;
    x.m = 9, x.n = 7, x.k = 4, x.ic = 3, x.jc = 2, x.alpha = 0.0, x.beta = beta;
    std::vector<double> got = c_initial;
    if (beta == 0.0) std::fill(got.begin(), got.end(), nan);
    const std::vector<double> before = got;
    ours(x, a_nan.data(), desc.data(), a_nan.data(), desc.data(), got.data(), desc.data());
    std::vector<double> expected = c_initial;
    for (double& v : expected) v *= beta;
    EXPECT_EQ(global_sum(wrong_elements(got, expected, before, c, grid, lld, x, 0.0)), 0) << "beta " << beta;
  }
}

// Wrong arguments are reported through PXERBLA with p?gemm's argument positions (TRANSA 1, TRANSB 2, M 3,
// IA 8, JA 9, DESCA 10, IB 12, DESCB 14, DESCC 19), and nothing is written on any rank, also when only one
// rank's argument is wrong: the ranks agree before anything moves.
TEST(ScalapackGemm, WrongArgumentsReportedAndWriteNothing) {
  const int nranks = world_size(), me = world_rank();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(1, nranks, all), other(1, nranks, all);
  // C (12 x 10) = A (12 x 9) * B (9 x 10).
  matrix_case ca, cb, cc;
  ca.M = 12, ca.N = 9, cb.M = 9, cb.N = 10, cc.M = 12, cc.N = 10;
  for (matrix_case* x : {&ca, &cb, &cc}) x->mb = x->nb = x->imb = x->inb = 2;
  const std::vector<int> desca = make_descriptor(ca, grid), descb = make_descriptor(cb, grid);
  const std::vector<int> descc = make_descriptor(cc, grid);
  const std::vector<double> a = random_local<double>(ca, grid, desca, 70),
                            b = random_local<double>(cb, grid, descb, 71);
  const std::vector<double> c_initial = random_local<double>(cc, grid, descc, 72);
  std::vector<int> b_short = descb, b_bad_dtype = descb, b_other_context = descb, c_other_context = descc;
  std::vector<int> c_bad_lld_here = descc;
  b_short[2] = 8;  // B has 8 rows, K is 9
  b_bad_dtype[0] = 5;
  b_other_context[1] = other.context;
  c_other_context[1] = other.context;
  // LLD too small on one rank only (its local rows are 12; ranks 0-4 hold C's five column blocks).
  if (me == nranks / 2) c_bad_lld_here[8] = 1;
  struct bad_case {
    const char* what;
    char transa, transb;
    int m, ia;
    std::vector<int> da, db, dc;
    int info;  // what PXERBLA receives: the argument's position (100 * position + entry for a descriptor's)
  };
  const char transb_on_one_rank = me == 0 ? 'x' : 'N';
  const std::vector<bad_case> cases = {
      {"TRANSA 'X'", 'X', 'N', 12, 1, desca, descb, descc, 1},
      {"TRANSB on one rank", 'N', transb_on_one_rank, 12, 1, desca, descb, descc, 2},
      {"M < 0", 'N', 'N', -1, 1, desca, descb, descc, 3},
      {"IA + M - 1 > M_", 'N', 'N', 12, 2, desca, descb, descc, 8},
      {"A (12 x 9) transposed is 9 x 12: JA + M - 1 > N_", 'T', 'N', 12, 1, desca, descb, descc, 9},
      {"K beyond B's rows", 'N', 'N', 12, 1, desca, b_short, descc, 12},
      {"DTYPE of B", 'N', 'N', 12, 1, desca, b_bad_dtype, descc, 1401},
      {"B on another context", 'N', 'N', 12, 1, desca, b_other_context, descc, 1402},
      {"C on another context", 'N', 'N', 12, 1, desca, descb, c_other_context, 1902},
      {"LLD of C too small on one rank", 'N', 'N', 12, 1, desca, descb, c_bad_lld_here, 1911},
  };
  for (const bad_case& k : cases) {
    gemm_call<double> x;
    x.transa = k.transa, x.transb = k.transb, x.m = k.m, x.n = 10, x.k = 9, x.ia = k.ia, x.alpha = 2.0;
    std::vector<double> c = c_initial;
    last_reported_info = 0;
    last_reported_routine.clear();
    ours(x, a.data(), k.da.data(), b.data(), k.db.data(), c.data(), k.dc.data());
    EXPECT_TRUE(all_ranks(c == c_initial)) << k.what << ": C was written";
    EXPECT_TRUE(all_ranks(last_reported_info == k.info))
        << k.what << ": reported " << last_reported_info << ", expected " << k.info;
    EXPECT_EQ(last_reported_routine, "PDGEMM") << k.what;
  }
  // Global arguments different on one rank only (the ranks would plan different multiplies: a hang or a heap
  // overwrite), a null DESCC on one rank, a context that was exited: refused on every rank, nothing written.
  const auto refused = [&](const char* what, const gemm_call<double>& x, const int* da, const int* db, const int* dc,
                           int info) {
    std::vector<double> c = c_initial;
    last_reported_info = 0;
    ours(x, a.data(), da, b.data(), db, c.data(), dc);
    EXPECT_TRUE(all_ranks(c == c_initial)) << what << ": C was written";
    EXPECT_TRUE(all_ranks(last_reported_info == info))
        << what << ": reported " << last_reported_info << ", expected " << info;
  };
  gemm_call<double> good;
  good.m = 12, good.n = 10, good.k = 9, good.alpha = 2.0;
  if (nranks > 1) {
    gemm_call<double> x = good;
    x.alpha = me == nranks - 1 ? 0.0 : 2.0;  // alpha zero on one rank only: it alone would return at once
    refused("alpha zero on one rank only", x, desca.data(), descb.data(), descc.data(), 6);
    x = good;
    x.k = me == 0 ? 8 : 9;
    refused("K different on one rank", x, desca.data(), descb.data(), descc.data(), 5);
    std::vector<int> c_nb_here = descc;
    if (me == nranks - 1) c_nb_here[5] = 3;
    refused("NB of C different on one rank", good, desca.data(), descb.data(), c_nb_here.data(), 1906);
    refused("DESCC null on one rank", good, desca.data(), descb.data(), me == 0 ? nullptr : descc.data(), 19);
  }
  {
    std::vector<int> gone_a = desca;
    {
      blacs_context gone(1, nranks, all);
      gone_a[1] = gone.context;
    }
    refused("DESCA's context exited", good, gone_a.data(), descb.data(), descc.data(), 1002);
  }
  // And a good call afterwards still works.
  gemm_call<double> x;
  x.m = 12, x.n = 10, x.k = 9, x.alpha = 2.0, x.beta = -1.0;
  std::vector<double> c = c_initial, expected = c_initial;
  last_reported_info = 0;
  ours(x, a.data(), desca.data(), b.data(), descb.data(), c.data(), descc.data());
  reference(x, a.data(), desca.data(), b.data(), descb.data(), expected.data(), descc.data());
  EXPECT_EQ(global_sum(wrong_elements(c, expected, c_initial, cc, grid, descc[8], x, tolerance_for(x))), 0);
  EXPECT_TRUE(all_ranks(last_reported_info == 0));
}

// C := alpha*A*B + beta*C with A (or B) the very array C is: ScaLAPACK's interface allows it and PBLAS does not
// guard against it. redist reads an input that shares memory with C from a private copy (the multiply itself
// also moves its inputs into its own buffers before C is written): the result is the reference's on distinct
// arrays.
TEST(ScalapackGemm, OperandsSharingMemoryWithC) {
  const int nranks = world_size();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  const int rows = nranks >= 4 ? 2 : 1;
  blacs_context grid(rows, nranks / rows, all);
  matrix_case square;
  square.M = square.N = 11;
  square.mb = square.nb = square.imb = square.inb = 3;
  const std::vector<int> desc = make_descriptor(square, grid);
  const std::vector<double> c_initial = random_local<double>(square, grid, desc, 81);
  const std::vector<double> other = random_local<double>(square, grid, desc, 82);
  gemm_call<double> x;
  x.m = x.n = x.k = 11, x.alpha = 1.5, x.beta = -0.5;
  for (const bool a_is_c : {true, false}) {
    std::vector<double> c = c_initial, expected = c_initial;
    const std::vector<double> c_copy = c_initial;
    if (!grid.holds_me()) {  // processes off the grid do not call
    } else if (a_is_c) {
      ours(x, c.data(), desc.data(), other.data(), desc.data(), c.data(), desc.data());
      reference(x, c_copy.data(), desc.data(), other.data(), desc.data(), expected.data(), desc.data());
    } else {
      ours(x, other.data(), desc.data(), c.data(), desc.data(), c.data(), desc.data());
      reference(x, other.data(), desc.data(), c_copy.data(), desc.data(), expected.data(), desc.data());
    }
    EXPECT_EQ(global_sum(wrong_elements(c, expected, c_initial, square, grid, desc[8], x, tolerance_for(x))), 0)
        << (a_is_c ? "A" : "B") << " is C";
  }
}
