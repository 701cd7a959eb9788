// SPDX-License-Identifier: BSD-3-Clause
// solver_driver: a ScaLAPACK program of the kind real codes are, for capturing call traces through the drop-in
// (bench/traces/capture.sh builds it with mpicxx and runs it with libredist_scalapack preloaded and
// REDIST_TRACE=calls): the symmetric eigensolver pdsyevd, the SVD pdgesvd, and the Cholesky factorization and
// inverse pdpotrf + pdpotri, the Hermitian eigensolver pzheevd and the complex LU factorization and inverse pzgetrf +
// pzgetri (whose trailing updates are pzgemm calls), on an N x N matrix in NB x NB blocks on a P x Q grid (row-major over the first P*Q
// ranks), each checked by a residual. Not part of the build: ScaLAPACK's own routines call the drop-in's symbols
// (p?gemm, p?gemr2d, p?tran) from inside, which is the point.
// usage: mpiexec -n R solver_driver N NB P Q [syevd,gesvd,potri,heevd,getri]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* rsrc, const int* csrc,
               const int* context, const int* lld, int* info);
void pdsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
              const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz, double* work,
              const int* lwork, int* iwork, const int* liwork, int* info);
void pdgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* ia, const int* ja,
              const int* desca, double* s, double* u, const int* iu, const int* ju, const int* descu, double* vt,
              const int* ivt, const int* jvt, const int* descvt, double* work, const int* lwork, int* info);
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* info);
void pdpotri_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* info);
void pzheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* ia, const int* ja,
              const int* desca, double* w, std::complex<double>* z, const int* iz, const int* jz, const int* descz,
              std::complex<double>* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
              const int* liwork, int* info);
void pzgetrf_(const int* m, const int* n, std::complex<double>* a, const int* ia, const int* ja, const int* desca,
              int* ipiv, int* info);
void pzgetri_(const int* n, std::complex<double>* a, const int* ia, const int* ja, const int* desca, const int* ipiv,
              std::complex<double>* work, const int* lwork, int* iwork, const int* liwork, int* info);
}

namespace {

// A distributed N x N matrix of this rank: its descriptor and local array, element (i, j) = value(i, j).
template <class T = double>
struct matrix {
  int desc[9];
  int rows = 0, cols = 0;
  std::vector<T> local;
};

template <class T = double, class Value>
matrix<T> make(int n, int nb, int context, int p, int q, int my_row, int my_col, Value value) {
  matrix<T> m;
  const int zero = 0;
  m.rows = numroc_(&n, &nb, &my_row, &zero, &p);
  m.cols = numroc_(&n, &nb, &my_col, &zero, &q);
  const int lld = std::max(1, m.rows);
  int info = 0;
  descinit_(m.desc, &n, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
  m.local.assign(static_cast<std::size_t>(lld) * std::max(1, m.cols), T{});
  for (int lj = 0; lj < m.cols; ++lj)
    for (int li = 0; li < m.rows; ++li) {
      const int i = (li / nb * p + my_row) * nb + li % nb, j = (lj / nb * q + my_col) * nb + lj % nb;
      m.local[static_cast<std::size_t>(li) + static_cast<std::size_t>(lj) * lld] = value(i, j);
    }
  return m;
}

// A symmetric positive definite matrix: small pseudo-random entries plus N on the diagonal.
double spd(int i, int j, int n) {
  const unsigned h =
      static_cast<unsigned>(std::min(i, j)) * 2654435761u ^ static_cast<unsigned>(std::max(i, j)) * 40503u;
  return (h % 1000) / 1000.0 - 0.5 + (i == j ? n : 0.0);
}

// A Hermitian positive definite matrix: spd's real part, an imaginary part of at most 1/4 antisymmetric in (i, j), so
// |a(i, j)| < 0.56 off the diagonal and every eigenvalue lies within N +- 0.56 N (Gershgorin).
std::complex<double> hpd(int i, int j, int n) {
  if (i == j) return spd(i, j, n);
  const unsigned h =
      static_cast<unsigned>(std::min(i, j)) * 40503u ^ static_cast<unsigned>(std::max(i, j)) * 2654435761u;
  const double imaginary = ((h >> 8) % 1000) / 2000.0 - 0.25;
  return {spd(i, j, n), i < j ? imaginary : -imaginary};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5) {
    if (me == 0) std::fprintf(stderr, "usage: solver_driver N NB P Q [syevd,gesvd,potri,heevd,getri]\n");
    MPI_Finalize();
    return 2;
  }
  const int n = std::atoi(argv[1]), nb = std::atoi(argv[2]), p = std::atoi(argv[3]), q = std::atoi(argv[4]);
  const std::string which = argc > 5 ? argv[5] : "syevd,gesvd,potri,heevd,getri";
  if (n < 1 || nb < 1 || p < 1 || q < 1 || p * q > size) {
    if (me == 0) std::fprintf(stderr, "solver_driver: N, NB, P, Q must be positive and P*Q at most the ranks\n");
    MPI_Finalize();
    return 2;
  }
  int context = 0;
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "R", p, q);
  int rows = 0, cols = 0, my_row = -1, my_col = -1;
  Cblacs_gridinfo(context, &rows, &cols, &my_row, &my_col);
  int failures = 0;
  if (my_row >= 0 && my_row < p) {
    const int one = 1;
    const auto a_of = [&] {
      return make(n, nb, context, p, q, my_row, my_col, [n](int i, int j) { return spd(i, j, n); });
    };
    const auto zeros = [&] { return make(n, nb, context, p, q, my_row, my_col, [](int, int) { return 0.0; }); };
    if (which.find("syevd") != std::string::npos) {
      matrix a = a_of(), z = zeros();
      std::vector<double> w(static_cast<std::size_t>(n));
      double query = 0;
      int iquery = 0, minus = -1, info = 0;
      pdsyevd_("V", "L", &n, a.local.data(), &one, &one, a.desc, w.data(), z.local.data(), &one, &one, z.desc, &query,
               &minus, &iquery, &minus, &info);
      int lwork = static_cast<int>(query) + 1, liwork = std::max(iquery, 1);
      std::vector<double> work(static_cast<std::size_t>(lwork));
      std::vector<int> iwork(static_cast<std::size_t>(liwork));
      pdsyevd_("V", "L", &n, a.local.data(), &one, &one, a.desc, w.data(), z.local.data(), &one, &one, z.desc,
               work.data(), &lwork, iwork.data(), &liwork, &info);
      // Gershgorin: every eigenvalue within N +- N/2 of the diagonal's N.
      const bool ok = info == 0 && w.front() > n - n / 2.0 - 1 && w.back() < n + n / 2.0 + 1;
      failures += ok ? 0 : 1;
      if (me == 0)
        std::printf("pdsyevd N=%d NB=%d %dx%d: info %d, eigenvalues %.3f .. %.3f %s\n", n, nb, p, q, info, w.front(),
                    w.back(), ok ? "ok" : "WRONG");
    }
    if (which.find("gesvd") != std::string::npos) {
      matrix a = a_of(), u = zeros(), vt = zeros();
      std::vector<double> s(static_cast<std::size_t>(n));
      double query = 0;
      int minus = -1, info = 0;
      pdgesvd_("V", "V", &n, &n, a.local.data(), &one, &one, a.desc, s.data(), u.local.data(), &one, &one, u.desc,
               vt.local.data(), &one, &one, vt.desc, &query, &minus, &info);
      int lwork = static_cast<int>(query) + 1;
      std::vector<double> work(static_cast<std::size_t>(lwork));
      pdgesvd_("V", "V", &n, &n, a.local.data(), &one, &one, a.desc, s.data(), u.local.data(), &one, &one, u.desc,
               vt.local.data(), &one, &one, vt.desc, work.data(), &lwork, &info);
      const bool ok = info == 0 && s.front() < n + n / 2.0 + 1 && s.back() > n - n / 2.0 - 1;
      failures += ok ? 0 : 1;
      if (me == 0)
        std::printf("pdgesvd N=%d NB=%d %dx%d: info %d, singular values %.3f .. %.3f %s\n", n, nb, p, q, info, s.back(),
                    s.front(), ok ? "ok" : "WRONG");
    }
    if (which.find("potri") != std::string::npos) {
      matrix a = a_of();
      int info = 0, info2 = 0;
      pdpotrf_("L", &n, a.local.data(), &one, &one, a.desc, &info);
      pdpotri_("L", &n, a.local.data(), &one, &one, a.desc, &info2);
      const bool ok = info == 0 && info2 == 0;
      failures += ok ? 0 : 1;
      if (me == 0)
        std::printf("pdpotrf+pdpotri N=%d NB=%d %dx%d: info %d %d %s\n", n, nb, p, q, info, info2, ok ? "ok" : "WRONG");
    }
    if (which.find("heevd") != std::string::npos) {
      using complex = std::complex<double>;
      matrix<complex> a =
          make<complex>(n, nb, context, p, q, my_row, my_col, [n](int i, int j) { return hpd(i, j, n); });
      matrix<complex> z = make<complex>(n, nb, context, p, q, my_row, my_col, [](int, int) { return complex{}; });
      std::vector<double> w(static_cast<std::size_t>(n));
      complex query;
      double rquery = 0;
      int iquery = 0, minus = -1, info = 0;
      pzheevd_("V", "L", &n, a.local.data(), &one, &one, a.desc, w.data(), z.local.data(), &one, &one, z.desc, &query,
               &minus, &rquery, &minus, &iquery, &minus, &info);
      int lwork = static_cast<int>(query.real()) + 1, lrwork = static_cast<int>(rquery) + 1,
          liwork = std::max(iquery, 1);
      std::vector<complex> work(static_cast<std::size_t>(lwork));
      std::vector<double> rwork(static_cast<std::size_t>(lrwork));
      std::vector<int> iwork(static_cast<std::size_t>(liwork));
      pzheevd_("V", "L", &n, a.local.data(), &one, &one, a.desc, w.data(), z.local.data(), &one, &one, z.desc,
               work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, &info);
      const bool ok = info == 0 && w.front() > n - 0.56 * n - 1 && w.back() < n + 0.56 * n + 1;
      failures += ok ? 0 : 1;
      if (me == 0)
        std::printf("pzheevd N=%d NB=%d %dx%d: info %d, eigenvalues %.3f .. %.3f %s\n", n, nb, p, q, info, w.front(),
                    w.back(), ok ? "ok" : "WRONG");
    }
    if (which.find("getri") != std::string::npos) {
      using complex = std::complex<double>;
      matrix<complex> a =
          make<complex>(n, nb, context, p, q, my_row, my_col, [n](int i, int j) { return hpd(i, j, n); });
      std::vector<int> ipiv(static_cast<std::size_t>(a.rows + nb));
      int info = 0, info2 = 0, minus = -1, iquery = 0;
      pzgetrf_(&n, &n, a.local.data(), &one, &one, a.desc, ipiv.data(), &info);
      complex query;
      pzgetri_(&n, a.local.data(), &one, &one, a.desc, ipiv.data(), &query, &minus, &iquery, &minus, &info2);
      int lwork = static_cast<int>(query.real()) + 1, liwork = std::max(iquery, 1);
      std::vector<complex> work(static_cast<std::size_t>(lwork));
      std::vector<int> iwork(static_cast<std::size_t>(liwork));
      pzgetri_(&n, a.local.data(), &one, &one, a.desc, ipiv.data(), work.data(), &lwork, iwork.data(), &liwork, &info2);
      // A is N on the diagonal plus |entries| < 0.56 elsewhere: inv(A)'s diagonal is near 1/N.
      double worst = 0;
      for (int lj = 0; lj < a.cols; ++lj)
        for (int li = 0; li < a.rows; ++li) {
          const int i = (li / nb * p + my_row) * nb + li % nb, j = (lj / nb * q + my_col) * nb + lj % nb;
          if (i == j)
            worst = std::max(worst, std::abs(a.local[li + static_cast<std::size_t>(lj) * a.desc[8]] * double(n) - 1.0));
        }
      const bool ok = info == 0 && info2 == 0 && worst < 0.5;
      failures += ok ? 0 : 1;
      if (me == 0)
        std::printf("pzgetrf+pzgetri N=%d NB=%d %dx%d: info %d %d, |N inv(A)_ii - 1| <= %.3f %s\n", n, nb, p, q, info,
                    info2, worst, ok ? "ok" : "WRONG");
    }
    Cblacs_gridexit(context);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
