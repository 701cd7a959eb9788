// SPDX-License-Identifier: BSD-3-Clause
// smpi_bench gemm: C = A * B, all N x N doubles block-cyclic on the most nearly square process grid (what an
// application holding ScaLAPACK matrices has): redist's gemm plan (the COSMA schedule, with the transforms into and
// out of its native layouts) vs a SUMMA on the same layout, as ScaLAPACK's pdgemm does it, and vs ScaLAPACK's pdgemm
// itself where the build has it (smpi_pdgemm.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <redist/redist.hpp>

#include "smpi_common.hpp"

extern "C" {
// Fortran BLAS, as libredist (linked here) calls it (src/gemm/local_blas.cpp).
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, std::size_t, std::size_t);
}

namespace smpi_bench {
namespace {

// Small integers, so that every product and sum is exact in double: A(i, j) = (i + 2j) mod 7 - 3,
// B(i, j) = (2i + j) mod 5 - 2.
double a_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i + 2 * j) % 7 - 3); }
double b_value(std::int64_t i, std::int64_t j) { return static_cast<double>((2 * i + j) % 5 - 2); }

// C(i, j) = sum over k of A(i, k) B(k, j) depends on k only through k mod 35 and on (i, j) only through (i mod 7,
// j mod 5): a 7 x 5 table of exact values, made in O(35) per entry.
std::vector<double> expected_table(std::int64_t n) {
  std::vector<double> t(35, 0.0);
  for (std::int64_t i = 0; i < 7; ++i)
    for (std::int64_t j = 0; j < 5; ++j)
      for (std::int64_t r = 0; r < 35 && r < n; ++r) {
        const std::int64_t ks = (n - 1 - r) / 35 + 1;  // k in [0, n) with k mod 35 == r
        t[static_cast<std::size_t>(i * 5 + j)] += static_cast<double>(ks) * a_value(i, r) * b_value(r, j);
      }
  return t;
}

// SUMMA on the block-cyclic layout, as pdgemm: for each block column kb of A (block row kb of B) the process column
// owning it broadcasts its A panel along each process row, the process row owning B's broadcasts its B panel down
// each process column, and every rank adds the panels' product to its C. Row and column communicators made once.
struct summa {
  std::int64_t n, nb, local_rows, local_cols;
  int rows, cols, my_row, my_col;
  MPI_Comm row_comm = MPI_COMM_NULL, col_comm = MPI_COMM_NULL;
  buffer a_panel_storage, b_panel_storage;  // SMPI's shared pages in timing runs
  double* a_panel;                          // the A panel received from another process column
  double* b_panel;                          // the B panel, packed here or received from another process row

  summa(std::int64_t n_, std::int64_t nb_, int rows_, int cols_, redist::grid_position me, bool real)
      : n(n_),
        nb(nb_),
        local_rows(redist::block_cyclic_local_count(n_, nb_, nb_, me.row, 0, rows_)),
        local_cols(redist::block_cyclic_local_count(n_, nb_, nb_, me.col, 0, cols_)),
        rows(rows_),
        cols(cols_),
        my_row(me.row),
        my_col(me.col),
        a_panel_storage(static_cast<std::size_t>(local_rows * nb_) * 8, real),
        b_panel_storage(static_cast<std::size_t>(nb_ * local_cols) * 8, real),
        a_panel(reinterpret_cast<double*>(a_panel_storage.data)),
        b_panel(reinterpret_cast<double*>(b_panel_storage.data)) {
    MPI_Comm_split(MPI_COMM_WORLD, my_row, my_col, &row_comm);  // rank in it: the process column
    MPI_Comm_split(MPI_COMM_WORLD, my_col, my_row, &col_comm);  // rank in it: the process row
  }
  ~summa() {
    MPI_Comm_free(&row_comm);
    MPI_Comm_free(&col_comm);
  }
  summa(const summa&) = delete;
  summa& operator=(const summa&) = delete;

  // C = A * B with this rank's local A, B and C (column-major, leading dimension local_rows).
  void multiply(double* c, const double* a, const double* b) {
    const int lr = static_cast<int>(local_rows), lc = static_cast<int>(local_cols);
    const double one = 1.0, zero = 0.0;
    for (std::int64_t kb = 0; kb * nb < n; ++kb) {
      const int kw = static_cast<int>(std::min(nb, n - kb * nb));
      const int owner_col = static_cast<int>(kb % cols), owner_row = static_cast<int>(kb % rows);
      // A's panel: this rank's rows of block column kb, contiguous in the owner's local A (kb / cols-th local block).
      double* ap = my_col == owner_col ? const_cast<double*>(a) + (kb / cols) * nb * local_rows : a_panel;
      MPI_Bcast(ap, lr * kw, MPI_DOUBLE, owner_col, row_comm);
      // B's panel: block row kb's kw rows of this rank's columns, strided in the owner's B: packed first.
      if (my_row == owner_row) {
        const std::int64_t first = (kb / rows) * nb;
        for (std::int64_t j = 0; j < local_cols; ++j)
          std::memcpy(b_panel + j * kw, b + first + j * local_rows, static_cast<std::size_t>(kw) * 8);
      }
      MPI_Bcast(b_panel, kw * lc, MPI_DOUBLE, owner_row, col_comm);
      dgemm_("N", "N", &lr, &lc, &kw, &one, ap, &lr, b_panel, &kw, kb == 0 ? &zero : &one, c, &lr, 1, 1);
    }
  }

  // Panel bytes this rank receives per multiply: every A panel of its process row but its column's own, every B
  // panel of its process column but its row's own.
  std::int64_t bytes_received() const {
    std::int64_t bytes = 0;
    for (std::int64_t kb = 0; kb * nb < n; ++kb) {
      const std::int64_t kw = std::min(nb, n - kb * nb);
      if (kb % cols != my_col) bytes += local_rows * kw * 8;
      if (kb % rows != my_row) bytes += kw * local_cols * 8;
    }
    return bytes;
  }
  std::int64_t panels_received() const {
    std::int64_t count = 0;
    for (std::int64_t kb = 0; kb * nb < n; ++kb) count += (kb % cols != my_col) + (kb % rows != my_row);
    return count;
  }
};

}  // namespace

measured gemm(const arguments& a, int rank, int size) {
  if (a.layout_case != "square") throw std::invalid_argument("gemm --case " + a.layout_case + ": expected square");
  int rows = 1, cols = 1;
  grid_dims(size, rows, cols);
  // 128 x 128 blocks as ScaLAPACK codes use, halved until every process row and column holds at least one.
  std::int64_t nb = 128;
  while (nb > 1 && nb * cols > a.n) nb /= 2;
  redist::block_cyclic_params p;
  p.m = p.n = a.n;
  p.mb = p.nb = nb;
  p.proc_rows = rows;
  p.proc_cols = cols;
  const auto layout = redist::block_cyclic(p, rank);  // A, B and C alike
  const auto elements = static_cast<std::size_t>(std::max<std::int64_t>(layout.local_elements(), 1));
  buffer ab(elements * 8, a.verify), bb(elements * 8, a.verify), cb(elements * 8, a.verify);
  auto* av = reinterpret_cast<double*>(ab.data);
  auto* bv = reinterpret_cast<double*>(bb.data);
  auto* cv = reinterpret_cast<double*>(cb.data);
  if (a.verify) {
    for_each_local(layout, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      av[at] = a_value(i, j);
      bv[at] = b_value(i, j);
      cv[at] = std::nan("");  // beta = 0: every element must be written
    });
  } else {
    // Zeros: BLAS on SMPI's shared pages never meets denormals (wall time only: the computation is not simulated).
    std::memset(av, 0, elements * 8);
    std::memset(bv, 0, elements * 8);
  }
  measured m;
  // Classical matmul with unlimited memory: a rank computing N^3 / P products must access at least
  // 3 (N^3 / P)^(2/3) elements (Irony, Toledo, Tiskin; COSMA's bound), of which it holds 3 N^2 / P at the start:
  // bytes in >= 8 (3 (N^3 / P)^(2/3) - 3 N^2 / P), clamped at 0.
  const double n = static_cast<double>(a.n), ranks = static_cast<double>(size);
  m.problem_bytes =
      static_cast<std::int64_t>(std::max(0.0, 8 * (3 * std::pow(n * n * n / ranks, 2.0 / 3.0) - 3 * n * n / ranks)));
  m.comm_dup = warm_up_and_time_a_duplicate();
  const auto run = [&](auto&& multiply) { time_executions(m, a.reps, [&](int) { multiply(); }); };
  const std::string grid = "\"process_grid\": \"" + std::to_string(rows) + "x" + std::to_string(cols) +
                           "\", \"block\": " + std::to_string(nb) + ", ";
  if (a.variant.rfind("redist:", 0) == 0) {
    redist::gemm_options o;
    o.communication = redist::parse_name<redist::gemm_communication>(a.variant.substr(7));
    o.transform.num_threads = 1;  // SMPI runs every rank on one OS thread
    const redist::gemm_description d{
        layout, layout, layout, redist::op::identity, redist::op::identity, redist::element_type::f64};
    redist::gemm_plan plan;
    m.plan = timed([&] { plan = redist::make_gemm_plan(MPI_COMM_WORLD, d, o); });
    // The same plan made again once the first is dropped, as the other benchmarks: it takes the first plan's
    // duplicate of the communicator back from the pool and finds its grid lines cached.
    plan = redist::gemm_plan();
    m.plan_again = timed([&] { plan = redist::make_gemm_plan(MPI_COMM_WORLD, d, o); });
    run([&] { plan.execute(cv, av, bv, 1.0, 0.0); });
    const auto s = plan.statistics();
    // Everything an execution moves: the transforms into and out of the native layouts and the multiply's panels
    // and reduction.
    m.bytes_sent = s.transform_in.bytes_sent + s.multiply.bytes_sent + s.transform_out.bytes_sent;
    m.bytes_received = s.transform_in.bytes_received + s.multiply.bytes_received + s.transform_out.bytes_received;
    m.messages = s.transform_in.messages_sent + s.multiply.messages_sent + s.transform_out.messages_sent;
    m.chosen = redist::to_string(s.communication);
    const auto& g = s.schedule;
    m.extra_json = grid + "\"grid\": \"" + std::to_string(g.grid_m) + "x" + std::to_string(g.grid_n) + "x" +
                   std::to_string(g.grid_k) + "\", \"rounds\": " + std::to_string(g.rounds) +
                   ", \"c_in_place\": " + (s.c_in_place ? "true" : "false") +
                   ", \"rank0_bytes_received\": {\"transform_in\": " + std::to_string(s.transform_in.bytes_received) +
                   ", \"multiply\": " + std::to_string(s.multiply.bytes_received) +
                   ", \"transform_out\": " + std::to_string(s.transform_out.bytes_received) + "}, ";
  } else if (a.variant.rfind("mpi:summa", 0) == 0) {
    summa s(a.n, nb, rows, cols, layout.my_positions().at(0), a.verify);
    run([&] { s.multiply(cv, av, bv); });
    // A tree broadcast delivers each panel byte to each non-root once; which rank forwards it is the algorithm's,
    // so a rank's bytes sent are counted as its bytes received (the totals over ranks are exact).
    m.bytes_received = m.bytes_sent = s.bytes_received();
    m.messages = s.panels_received();
    m.extra_json = grid + "\"panels\": " + std::to_string((a.n + nb - 1) / nb) + ", ";
  } else if (a.variant == "scalapack:pdgemm") {
#ifdef REDIST_SMPI_PDGEMM
    scalapack_pdgemm s(a.n, nb, rows, cols, layout.my_positions().at(0), layout.local_ld());
    scalapack_pdgemm::reset_counts();
    run([&] { s.multiply(cv, av, bv); });
    // Per execution; as the SUMMA's, a rank's bytes sent stand for its bytes received (the totals are exact).
    const long long executions = std::max(a.reps, 1);
    m.bytes_received = m.bytes_sent = scalapack_pdgemm::bytes_sent() / executions;
    m.messages = scalapack_pdgemm::messages_sent() / executions;
    m.extra_json = grid + "\"blacs_broadcast\": \"increasing ring (BLACS default topology)\", ";
#else
    throw std::invalid_argument(
        "scalapack:pdgemm: this smpi_bench was built without ScaLAPACK (configure bench/smpi with "
        "-DREDIST_SMPI_SCALAPACK_SOURCE=<a ScaLAPACK source tree>; run.sh: SCALAPACK_SOURCE)");
#endif
  } else {
    throw std::invalid_argument("unknown variant " + a.variant +
                                ": expected redist:<communication>, mpi:summa:<selector> or scalapack:pdgemm");
  }
  if (a.verify) {
    const auto expected = expected_table(a.n);
    for_each_local(layout, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
      if (cv[at] != expected[static_cast<std::size_t>((i % 7) * 5 + j % 5)]) m.correct = false;
    });
    m.verified = true;
  }
  return m;
}

}  // namespace smpi_bench
