// SPDX-License-Identifier: BSD-3-Clause
// Hostile arguments for the ScaLAPACK twins (p?gemr2d, p?trmr2d, p?tran, p?gemm, through the same code as
// the drop-in's symbols): each argument made invalid on every rank and on one rank only (tests/support/
// hostile.hpp: the same PXERBLA report everywhere, outputs and their guard zones untouched, the next valid
// call fine). Next to each case the log shows what ScaLAPACK itself does with it (docs/scalapack.md, "Every
// argument and descriptor field"): PBLAS ends the whole job (PB_Cabort), REDIST mostly does not check. Where
// ScaLAPACK is well-defined (the quick returns), the reference runs in the same binary on the same data.
// Failures after the checks run with REDIST_SCALAPACK_ON_ERROR=return (PXERBLA instead of Cblacs_abort).
// redist-test-ranks: 1 2 3 4
// redist-test-needs: scalapack
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "hostile.hpp"
#include "redist/redist.h"
#include "scalapack_cases.hpp"

extern "C" {
void pdgemr2d_(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
               const int*, const int*, const int*);
void pdtran_(const int*, const int*, const double*, const double*, const int*, const int*, const int*, const double*,
             double*, const int*, const int*, const int*);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*, double*,
             const int*, const int*, const int*);

// Replaces ScaLAPACK's PXERBLA for this program (redist finds it at run time): records what was reported.
int reported_info = 0;
char reported_routine[16] = "";
void pxerbla_(const int*, const char* routine, const int* info, std::size_t routine_length) {
  reported_info = *info;
  const std::size_t n = routine_length < sizeof(reported_routine) - 1 ? routine_length : sizeof(reported_routine) - 1;
  std::memcpy(reported_routine, routine, n);
  reported_routine[n] = '\0';
}
}

using namespace redist::testing;

namespace {

// Runs a twin; its outcome is what it reported through PXERBLA, or "ok".
template <class F>
std::string pxerbla_outcome(F&& call) {
  reported_info = 0;
  reported_routine[0] = '\0';
  call();
  if (reported_info == 0) return "ok";
  return std::string("PXERBLA ") + reported_routine + " " + std::to_string(reported_info);
}

// ScaLAPACK's behaviour next to a case, printed with it.
struct reference_note {
  std::string argument, scalapack;
};
void print_notes(const char* routine, const std::vector<reference_note>& notes) {
  if (world_rank() != 0) return;
  for (const reference_note& n : notes)
    std::printf("[hostile] %s %-44s ScaLAPACK: %s\n", routine, n.argument.c_str(), n.scalapack.c_str());
  std::fflush(stdout);
}

int total_cases = 0;

// Failures after the argument checks report through PXERBLA here instead of ending the program.
struct return_on_error {
  return_on_error() { setenv("REDIST_SCALAPACK_ON_ERROR", "return", 1); }
  ~return_on_error() { unsetenv("REDIST_SCALAPACK_ON_ERROR"); }
};

// A p x 1 grid and a 1 x p grid over every rank; two square matrices on them.
struct grids {
  std::vector<int> all;
  blacs_context rows, cols;
  grids() : all(iota_ranks()), rows(world_size(), 1, all), cols(1, world_size(), all) {}
  // A context made over every rank and exited again.
  int exited_context() const {
    const blacs_context gone(1, world_size(), all);
    return gone.context;
  }
  static std::vector<int> iota_ranks() {
    std::vector<int> v(static_cast<std::size_t>(world_size()));
    std::iota(v.begin(), v.end(), 0);
    return v;
  }
};

matrix_case square_case(int n, int nb) {
  matrix_case c;
  c.M = c.N = n;
  c.mb = c.nb = c.imb = c.inb = nb;
  return c;
}

std::size_t local_bytes(const std::vector<int>& desc, const matrix_case& c, const blacs_context& g) {
  const std::int64_t cols = redist::scalapack::numroc(c.N, c.inb, c.nb, g.my_col, c.csrc, g.cols);
  return static_cast<std::size_t>(desc[8] * std::max<std::int64_t>(cols, 1)) * sizeof(double);
}

}  // namespace

TEST(HostileScalapack, Pdgemr2d) {
  const return_on_error mode;
  const int me = world_rank(), p = world_size();
  grids g;
  const matrix_case ca = square_case(12, 3), cb = square_case(12, 2);
  const std::vector<int> desca = make_descriptor(ca, g.rows), descb = make_descriptor(cb, g.cols);
  const std::vector<double> a = make_local<double>(ca, g.rows, desca, 0);
  guarded_buffer b(local_bytes(descb, cb, g.cols));
  struct arguments {
    int m = 12, n = 12, ia = 1, ja = 1, ib = 1, jb = 1, ictxt;
    std::vector<int> da, db;
    const double* a;
    double* b;
    bool null_da = false, null_db = false;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x;
      x.ictxt = g.cols.context, x.da = desca, x.db = descb, x.a = a.data(), x.b = b.as<double>();
      if (bad) change(x);
      return pxerbla_outcome([&] {
        redist_pdgemr2d(&x.m, &x.n, x.a, &x.ia, &x.ja, x.null_da ? nullptr : x.da.data(), x.b, &x.ib, &x.jb,
                        x.null_db ? nullptr : x.db.data(), &x.ictxt);
      });
    };
  };
  const int exited = g.exited_context();
  using A = arguments;
  const std::vector<hostile_case> cases = {
      {"M < 0", call_with([](A& x) { x.m = -1; })},
      {"N < 0", call_with([](A& x) { x.n = -3; })},
      {"IA < 1", call_with([](A& x) { x.ia = 0; })},
      {"JA + N - 1 > N_A", call_with([](A& x) { x.ja = 2; })},
      {"IB + M - 1 > M_B", call_with([](A& x) { x.ib = 5; })},
      {"DESCA MB 0", call_with([](A& x) { x.da[4] = 0; })},
      {"DESCB NB < 0", call_with([](A& x) { x.db[5] = -2; })},
      {"DESCA RSRC outside the grid", call_with([p](A& x) { x.da[6] = p; })},
      {"DESCB CSRC < 0", call_with([](A& x) { x.db[7] = -5; })},
      {"DESCB LLD 0", call_with([](A& x) { x.db[8] = 0; })},
      {"DESCA null", call_with([](A& x) { x.null_da = true; })},
      {"DESCB null", call_with([](A& x) { x.null_db = true; })},
      {"DESCA CTXT never created", call_with([](A& x) { x.da[1] = 4000; })},
      {"M on one rank", call_with([](A& x) { x.m = 11; }), invalid_on::one_rank_only},
      {"M zero on one rank", call_with([](A& x) { x.m = 0; }), invalid_on::one_rank_only},
      {"N and JA on one rank", call_with([](A& x) { x.n = 11, x.ja = 2; }), invalid_on::one_rank_only},
      {"DESCA NB on one rank", call_with([](A& x) { x.da[5] = 4; }), invalid_on::one_rank_only},
      {"DESCB M_ on one rank", call_with([](A& x) { x.db[2] = 13; }), invalid_on::one_rank_only},
      // ICTXT bad on one rank: that rank joins the others through B's grid (ICTXT here), so every rank reports it.
      {"ICTXT -1 on one rank", call_with([](A& x) { x.ictxt = -1; }), invalid_on::one_rank_only},
      {"ICTXT exited on one rank", call_with([exited](A& x) { x.ictxt = exited; }), invalid_on::one_rank_only},
      {"ICTXT -1 everywhere", [&](bool) { return call_with([](A& x) { x.ictxt = -1; })(true); }},
      {"ICTXT exited everywhere", [&](bool) { return call_with([exited](A& x) { x.ictxt = exited; })(true); }},
  };
  total_cases += run_hostile("redist_pdgemr2d", {&b}, cases, [&] { return call_with([](A&) {})(false); });
  print_notes("PDGEMR2D", {{"M, N < 0", "not checked: negative sizes in the block arithmetic (undefined)"},
                           {"IA, JA, IB out of range", "exit(1) \"Bad submatrix\" (ends the job)"},
                           {"MB, NB < 1", "not checked: 0 divides by zero (SIGFPE)"},
                           {"RSRC, CSRC outside the grid", "exit(1) \"Bad first processor coordinates\""},
                           {"LLD too small", "exit(1) \"bad lda\" on that process"},
                           {"DESCA, DESCB null", "segfault"},
                           {"CTXT never created", "the process counts as outside the grid (no error)"},
                           {"an argument differing between ranks", "not checked: wrong data, MPI error or hang"},
                           {"ICTXT negative or exited", "Cblacs_get on a bad handle: crash"}});
  // Well-defined in ScaLAPACK: M or N zero on every rank returns at once; both leave B as it was.
  for (const int m : {0, 12}) {
    const int n = m == 0 ? 12 : 0;
    guarded_buffer ours(local_bytes(descb, cb, g.cols)), reference(local_bytes(descb, cb, g.cols));
    const int one = 1;
    redist_pdgemr2d(&m, &n, a.data(), &one, &one, desca.data(), ours.as<double>(), &one, &one, descb.data(),
                    &g.cols.context);
    pdgemr2d_(&m, &n, a.data(), &one, &one, desca.data(), reference.as<double>(), &one, &one, descb.data(),
              &g.cols.context);
    EXPECT_TRUE(all_ranks(ours.untouched() && reference.untouched())) << "M " << m << " N " << n;
  }
  (void)me;
}

TEST(HostileScalapack, Pdtrmr2d) {
  const return_on_error mode;
  grids g;
  const matrix_case ca = square_case(10, 3), cb = square_case(10, 4);
  const std::vector<int> desca = make_descriptor(ca, g.cols), descb = make_descriptor(cb, g.rows);
  const std::vector<double> a = make_local<double>(ca, g.cols, desca, 0);
  guarded_buffer b(local_bytes(descb, cb, g.rows));
  const auto call = [&](bool bad, const char* uplo, const char* diag, int m) {
    const char* u = bad ? uplo : "U";
    const char* d = bad ? diag : "N";
    const int n = 10, one = 1, mm = bad ? m : 10;
    return pxerbla_outcome([&] {
      redist_pdtrmr2d(u, d, &mm, &n, a.data(), &one, &one, desca.data(), b.as<double>(), &one, &one, descb.data(),
                      &g.cols.context);
    });
  };
  const std::vector<hostile_case> cases = {
      {"UPLO 'X'", [&](bool bad) { return call(bad, "X", "N", 10); }},
      {"UPLO null", [&](bool bad) { return call(bad, nullptr, "N", 10); }},
      {"DIAG 'Q'", [&](bool bad) { return call(bad, "U", "Q", 10); }},
      {"M < 0", [&](bool bad) { return call(bad, "U", "N", -4); }},
      {"UPLO 'L' on one rank", [&](bool bad) { return call(bad, "L", "N", 10); }, invalid_on::one_rank_only},
      {"DIAG 'U' on one rank", [&](bool bad) { return call(bad, "U", "U", 10); }, invalid_on::one_rank_only},
  };
  total_cases += run_hostile("redist_pdtrmr2d", {&b}, cases, [&] { return call(false, "U", "N", 10); });
  print_notes("PDTRMR2D", {{"UPLO, DIAG not a letter it knows", "never an error: anything but 'U' means lower"},
                           {"UPLO, DIAG null", "crash on the processes that read it"},
                           {"UPLO differing between ranks", "not checked: wrong data, MPI error or hang"}});
}

TEST(HostileScalapack, Pdtran) {
  const return_on_error mode;
  grids g;
  // C (10 x 12) := beta C + alpha A^T, A 12 x 10; both on the 1 x p grid (PBLAS: one context).
  matrix_case ca = square_case(12, 3), cc = square_case(12, 2);
  ca.N = 10, cc.M = 10;
  const std::vector<int> desca = make_descriptor(ca, g.cols), descc = make_descriptor(cc, g.cols);
  const std::vector<double> a = make_local<double>(ca, g.cols, desca, 0);
  guarded_buffer c(local_bytes(descc, cc, g.cols));
  struct arguments {
    int m = 10, n = 12, ia = 1, ja = 1, ic = 1, jc = 1;
    double alpha = 2.0, beta = 0.0;
    std::vector<int> da, dc;
    const double* a;
    double* c;
    bool null_dc = false;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x;
      x.da = desca, x.dc = descc, x.a = a.data(), x.c = c.as<double>();
      if (bad) change(x);
      return pxerbla_outcome([&] {
        redist_pdtran(&x.m, &x.n, &x.alpha, x.a, &x.ia, &x.ja, x.da.data(), &x.beta, x.c, &x.ic, &x.jc,
                      x.null_dc ? nullptr : x.dc.data());
      });
    };
  };
  const int exited = g.exited_context();
  using A = arguments;
  const std::vector<hostile_case> cases = {
      {"M < 0", call_with([](A& x) { x.m = -1; })},
      {"N < 0", call_with([](A& x) { x.n = -1; })},
      {"IA < 1", call_with([](A& x) { x.ia = 0; })},
      {"JA + M - 1 > N_A", call_with([](A& x) { x.ja = 3; })},
      {"IC + M - 1 > M_C", call_with([](A& x) { x.ic = 4; })},
      {"DESCA DTYPE 5", call_with([](A& x) { x.da[0] = 5; })},
      {"DESCC MB 0", call_with([](A& x) { x.dc[4] = 0; })},
      {"DESCC LLD 0", call_with([](A& x) { x.dc[8] = 0; })},
      {"DESCC CTXT another context", call_with([exited](A& x) { x.dc[1] = exited; })},
      {"DESCC null", call_with([](A& x) { x.null_dc = true; })},
      {"A null (alpha != 0)", call_with([](A& x) { x.a = nullptr; })},
      {"alpha zero on one rank", call_with([](A& x) { x.alpha = 0.0; }), invalid_on::one_rank_only},
      {"beta on one rank", call_with([](A& x) { x.beta = 1.0; }), invalid_on::one_rank_only},
      {"N on one rank", call_with([](A& x) { x.n = 11; }), invalid_on::one_rank_only},
      {"DESCA NB on one rank", call_with([](A& x) { x.da[5] = 5; }), invalid_on::one_rank_only},
      {"DESCA CTXT exited everywhere", [&](bool) { return call_with([exited](A& x) { x.da[1] = exited; })(true); }},
  };
  total_cases += run_hostile("redist_pdtran", {&c}, cases, [&] { return call_with([](A&) {})(false); });
  print_notes("PDTRAN", {{"M, N < 0; IA, JA, IC, JC out of range", "PB_Cabort: message, Cblacs_abort (the job ends)"},
                         {"DESCA/DESCC entries (DTYPE, MB, LLD, CTXT)", "PB_Cabort with 7xx / 12xx (the job ends)"},
                         {"DESCC null, A null", "crash"},
                         {"ALPHA, BETA, M, N differing between ranks", "not checked: wrong result or hang"}});
  // Well-defined in PBLAS: alpha = 0 and beta = 1 returns at once; M = 0 returns after the relaxed checks.
  for (const int m : {10, 0}) {
    guarded_buffer ours(local_bytes(descc, cc, g.cols)), reference(local_bytes(descc, cc, g.cols));
    const int n = 12, one = 1;
    const double alpha = m == 0 ? 2.0 : 0.0, beta = 1.0;
    redist_pdtran(&m, &n, &alpha, a.data(), &one, &one, desca.data(), &beta, ours.as<double>(), &one, &one,
                  descc.data());
    pdtran_(&m, &n, &alpha, a.data(), &one, &one, desca.data(), &beta, reference.as<double>(), &one, &one,
            descc.data());
    EXPECT_TRUE(all_ranks(ours.untouched() && reference.untouched())) << "M " << m;
  }
}

TEST(HostileScalapack, Pdgemm) {
  const return_on_error mode;
  grids g;
  // C (8 x 10) := alpha A B + beta C, A 8 x 6, B 6 x 10, all on the 1 x p grid.
  matrix_case ca = square_case(8, 2), cb = square_case(6, 3), cc = square_case(8, 2);
  ca.N = 6, cb.N = 10, cc.N = 10;
  const std::vector<int> desca = make_descriptor(ca, g.cols), descb = make_descriptor(cb, g.cols),
                         descc = make_descriptor(cc, g.cols);
  const std::vector<double> a = make_local<double>(ca, g.cols, desca, 0), b = make_local<double>(cb, g.cols, descb, 1);
  guarded_buffer c(local_bytes(descc, cc, g.cols));
  struct arguments {
    char transa = 'N', transb = 'N';
    int m = 8, n = 10, k = 6, ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
    double alpha = 1.5, beta = 0.0;
    std::vector<int> da, db, dc;
    double* c;
    bool null_dc = false;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x;
      x.da = desca, x.db = descb, x.dc = descc, x.c = c.as<double>();
      if (bad) change(x);
      return pxerbla_outcome([&] {
        redist_pdgemm(&x.transa, &x.transb, &x.m, &x.n, &x.k, &x.alpha, a.data(), &x.ia, &x.ja, x.da.data(), b.data(),
                      &x.ib, &x.jb, x.db.data(), &x.beta, x.c, &x.ic, &x.jc, x.null_dc ? nullptr : x.dc.data());
      });
    };
  };
  using A = arguments;
  const std::vector<hostile_case> cases = {
      {"TRANSA 'X'", call_with([](A& x) { x.transa = 'X'; })},
      {"M < 0", call_with([](A& x) { x.m = -1; })},
      {"K < 0", call_with([](A& x) { x.k = -2; })},
      {"K beyond A's columns", call_with([](A& x) { x.k = 7; })},
      {"IB + K - 1 > M_B", call_with([](A& x) { x.ib = 2; })},
      {"DESCB M_ 5 (K is 6)", call_with([](A& x) { x.db[2] = 5; })},
      {"DESCC LLD 0", call_with([](A& x) { x.dc[8] = 0; })},
      {"DESCC null", call_with([](A& x) { x.null_dc = true; })},
      {"C null", call_with([](A& x) { x.c = nullptr; })},
      {"TRANSB 'T' on one rank", call_with([](A& x) { x.transb = 'T', x.n = 6, x.k = 10; }), invalid_on::one_rank_only},
      {"alpha zero on one rank", call_with([](A& x) { x.alpha = 0.0; }), invalid_on::one_rank_only},
      {"K on one rank", call_with([](A& x) { x.k = 5; }), invalid_on::one_rank_only},
      {"DESCC NB on one rank", call_with([](A& x) { x.dc[5] = 3; }), invalid_on::one_rank_only},
  };
  total_cases += run_hostile("redist_pdgemm", {&c}, cases, [&] { return call_with([](A&) {})(false); });
  print_notes("PDGEMM", {{"TRANSA, M, K, IB, descriptor entries", "PB_Cabort: message, Cblacs_abort (the job ends)"},
                         {"DESCC null, C null", "crash"},
                         {"TRANSB, ALPHA, K differing between ranks", "not checked: wrong result or hang"}});
  // Well-defined in PBLAS: K = 0 (or alpha = 0) scales C by beta; beta = 1 then leaves C as it was.
  {
    guarded_buffer ours(local_bytes(descc, cc, g.cols)), reference(local_bytes(descc, cc, g.cols));
    const int m = 8, n = 10, k = 0, one = 1;
    const double alpha = 1.0, beta = 1.0;
    redist_pdgemm("N", "N", &m, &n, &k, &alpha, a.data(), &one, &one, desca.data(), b.data(), &one, &one, descb.data(),
                  &beta, ours.as<double>(), &one, &one, descc.data());
    pdgemm_("N", "N", &m, &n, &k, &alpha, a.data(), &one, &one, desca.data(), b.data(), &one, &one, descb.data(), &beta,
            reference.as<double>(), &one, &one, descc.data());
    EXPECT_TRUE(all_ranks(ours.untouched() && reference.untouched()));
  }
}

// Products multiplied in place on a 1 x p grid (B's columns laid out as C's: A gathered; A's and B's columns, K,
// alike: partial sums exchanged): a null buffer on a rank that holds elements of it is found in the exchange of
// problems before anything moves, and reported alike on every rank, C untouched. Every rank holds columns of
// every operand (8 x 8, 8 x 10, 10 x 8), all in blocks of 2 (p <= 4).
TEST(HostileScalapack, PdgemmInPlace) {
  const return_on_error mode;
  grids g;
  matrix_case ca = square_case(8, 2), cb = square_case(8, 2), cc = square_case(8, 2);
  cb.N = 10, cc.N = 10;
  const std::vector<int> desca = make_descriptor(ca, g.cols), descb = make_descriptor(cb, g.cols),
                         descc = make_descriptor(cc, g.cols);
  const std::vector<double> a = make_local<double>(ca, g.cols, desca, 0), b = make_local<double>(cb, g.cols, descb, 1);
  guarded_buffer c(local_bytes(descc, cc, g.cols));
  const auto call_with = [&](bool null_a, bool null_b, bool null_c) {
    return [&, null_a, null_b, null_c](bool bad) {
      const int m = 8, n = 10, k = 8, one = 1;
      const double alpha = 1.5, beta = 0.5;
      return pxerbla_outcome([&] {
        redist_pdgemm("N", "N", &m, &n, &k, &alpha, bad && null_a ? nullptr : a.data(), &one, &one, desca.data(),
                      bad && null_b ? nullptr : b.data(), &one, &one, descb.data(), &beta,
                      bad && null_c ? nullptr : c.as<double>(), &one, &one, descc.data());
      });
    };
  };
  // C := A * B**T on the same grid, A (8 x 8) and B (10 x 8) with K's columns alike: partial sums exchanged.
  matrix_case cbt = square_case(10, 2);
  cbt.N = 8;
  const std::vector<int> descbt = make_descriptor(cbt, g.cols);
  const std::vector<double> bt = make_local<double>(cbt, g.cols, descbt, 2);
  const auto sum_with = [&](bool null_a, bool null_b, bool null_c) {
    return [&, null_a, null_b, null_c](bool bad) {
      const int m = 8, n = 10, k = 8, one = 1;
      const double alpha = 1.5, beta = 0.5;
      return pxerbla_outcome([&] {
        redist_pdgemm("N", "T", &m, &n, &k, &alpha, bad && null_a ? nullptr : a.data(), &one, &one, desca.data(),
                      bad && null_b ? nullptr : bt.data(), &one, &one, descbt.data(), &beta,
                      bad && null_c ? nullptr : c.as<double>(), &one, &one, descc.data());
      });
    };
  };
  const std::vector<hostile_case> cases = {
      {"A null (gathered)", call_with(true, false, false)},
      {"B null (kept)", call_with(false, true, false)},
      {"C null", call_with(false, false, true)},
      {"A null (partial sums)", sum_with(true, false, false)},
      {"B null (partial sums)", sum_with(false, true, false)},
      {"C null (partial sums)", sum_with(false, false, true)},
  };
  total_cases += run_hostile("redist_pdgemm in place", {&c}, cases, [&] {
    const std::string gathered = call_with(false, false, false)(false);
    return gathered != "ok" ? gathered : sum_with(false, false, false)(false);
  });
  print_notes("PDGEMM", {{"A, B or C null (in place)", "crash"}});
}

TEST(HostileScalapack, CasesCounted) {
  if (world_rank() == 0) std::printf("[hostile] ScaLAPACK twins, total: %d cases\n", total_cases);
  EXPECT_GT(total_cases, 0);
}
