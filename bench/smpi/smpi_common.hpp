// SPDX-License-Identifier: BSD-3-Clause
// The parts every smpi_bench benchmark shares: its arguments, buffers (real or SMPI's shared pages), what it
// measured, and the timing of a collective step between barriers (MPI_Wtime is the simulated clock).
#pragma once
#include <mpi.h>
#include <smpi/smpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include <redist/layout/grid_layout.hpp>

namespace smpi_bench {

struct arguments {
  std::string benchmark, variant = "redist:auto", platform = "unknown", layout_case, torus, torus_routing = "sdr";
  std::int64_t torus_beta = 0;              // 0: the library's default
  std::string torus_phases = "sequential";  // torus::phase_schedule
  std::string torus_hardware;               // torus::hardware_routing (empty: the library's default)
  int region = 8;                           // neighbor: ranks per region (a simulated node of several hosts)
  // neighbor redist:auto's figures (exchange_options::model): `calibrate` (the library's default: measured once
  // per set of ranks and regions), `platform` (the platform's link rate, the same inside a region as between
  // regions, since every rank is its own host) or `defaults` (the built-in figures, which assume regions share
  // memory). The calibration's messages cost SimGrid more wall time at 1024 ranks than the exchange itself.
  std::string cost_model = "calibrate";
  std::int64_t n = 1024;
  int reps = 2;
  bool verify = false;
  double link_bandwidth = 12.5e9;
};

// The most nearly square grid rows x cols = p with rows <= cols.
void grid_dims(int p, int& rows, int& cols);

// Calls f(global_row, global_col, local_offset) for every element this rank holds in layout l.
template <class F>
void for_each_local(const redist::grid_layout& l, F&& f) {
  for (const auto pos : l.my_positions())
    for (std::int64_t bi = 0; bi < l.block_rows(); ++bi) {
      if (l.row_proc()[bi] != pos.row) continue;
      for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
        if (l.col_proc()[bj] != pos.col) continue;
        for (std::int64_t j = l.col_splits()[bj]; j < l.col_splits()[bj + 1]; ++j)
          for (std::int64_t i = l.row_splits()[bi]; i < l.row_splits()[bi + 1]; ++i)
            f(i, j,
              (l.local_row_start()[bi] + i - l.row_splits()[bi]) +
                  (l.local_col_start()[bj] + j - l.col_splits()[bj]) * l.local_ld());
      }
    }
}

// Buffers: real (verified runs) or SMPI's shared pages (timing only). Never size 0: SMPI refuses it.
struct buffer {
  std::byte* data = nullptr;
  bool shared = false;
  buffer(std::size_t bytes, bool real) : shared(!real) {
    data = static_cast<std::byte*>(real ? std::malloc(bytes + 64) : SMPI_SHARED_MALLOC(bytes + 64));
    if (data == nullptr) throw std::bad_alloc();
  }
  ~buffer() {
    if (shared)
      SMPI_SHARED_FREE(data);
    else
      std::free(data);
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
};

struct measured {
  double plan = 0, plan_again = 0, comm_dup = 0, best = 1e300, first = 0;
  std::int64_t bytes_sent = 0, bytes_received = 0, messages = 0;
  std::int64_t problem_bytes = -1;  // this rank's own data in or out, where a variant may move more (neighbor)
  bool verified = false, correct = true;
  std::string chosen;
  std::string extra_json;  // the benchmark's own fields, `"key": value, ` each (printed before the common ones)
};

// The slowest rank's time of f(), between barriers.
template <class F>
double timed(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  const double mine = MPI_Wtime() - t0;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// Times `reps` executions, execute(rep) each, between barriers: the first into m.first, the fastest into m.best.
// before_each(rep), untimed, runs ahead of each (restoring an in-place buffer).
template <class Execute, class Before>
void time_executions(measured& m, int reps, Execute&& execute, Before&& before_each) {
  for (int r = 0; r < reps; ++r) {
    before_each(r);
    const double t = timed([&] { execute(r); });
    if (r == 0) m.first = t;
    m.best = std::min(m.best, t);
  }
}
template <class Execute>
void time_executions(measured& m, int reps, Execute&& execute) {
  time_executions(m, reps, std::forward<Execute>(execute), [](int) {});
}

// The communicator has seen a collective, as an application's has (SMPI's mpich selector builds node-aware
// sub-communicators on the first one); returns the cost of one bare MPI_Comm_dup, for comparison with the plans.
double warm_up_and_time_a_duplicate();

// ScaLAPACK's pdgemm, C = A * B with N x N matrices in nb x nb blocks on a row-major rows x cols BLACS grid over
// MPI_COMM_WORLD (smpi_pdgemm.cpp; built only with REDIST_SMPI_SCALAPACK_SOURCE, which defines REDIST_SMPI_PDGEMM).
// Checks that BLACS places this rank where the layout does.
class scalapack_pdgemm {
 public:
  scalapack_pdgemm(std::int64_t n, std::int64_t nb, int rows, int cols, redist::grid_position me,
                   std::int64_t local_rows);
  ~scalapack_pdgemm();
  scalapack_pdgemm(const scalapack_pdgemm&) = delete;
  scalapack_pdgemm& operator=(const scalapack_pdgemm&) = delete;
  void multiply(double* c, const double* a, const double* b);
  // Point-to-point bytes and messages this rank sent inside multiply() since reset_counts().
  static long long bytes_sent();
  static long long messages_sent();
  static void reset_counts();

 private:
  int n_, context_ = -1;
  int descriptor_[9] = {};
};

// One per benchmark: runs a.variant on MPI_COMM_WORLD and returns this rank's measurements.
measured transform(const arguments& a, int rank, int size);
measured neighbor(const arguments& a, int rank, int size);
measured inplace(const arguments& a, int rank, int size);
measured reshape(const arguments& a, int rank, int size);
measured gemm(const arguments& a, int rank, int size);

}  // namespace smpi_bench
