// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// redist_baseline: running ScaLAPACK (the baseline) next to redist on identical data.
//
//  - C declarations of the BLACS / ScaLAPACK / PBLAS entry points we call (Debian's libscalapack-mpich,
//    32-bit Fortran integers).
//  - blacs_grid: a P x Q BLACS grid on the first P*Q ranks of MPI_COMM_WORLD, numbered row- or
//    column-major, with the rank at every grid position (as redist needs it).
//  - distributed_matrix: a ScaLAPACK descriptor with this rank's local array, and layout_of() giving the
//    redist layout that describes exactly the same distribution and storage.
//  - deterministic fills and element-by-element checks of block-cyclic local arrays from a global function.
//  - timing of repeated collective operations (MPI_Barrier before each repetition, max over ranks).
//  - json_writer: a tiny JSON writer for benchmark results.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "redist/redist.hpp"

// ---- BLACS / ScaLAPACK / PBLAS (C BLACS interface, Fortran ScaLAPACK and PBLAS) ----
extern "C" {
void Cblacs_pinfo(int* my_process, int* process_count);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int proc_rows, int proc_cols);
void Cblacs_gridinfo(int context, int* proc_rows, int* proc_cols, int* my_row, int* my_col);
void Cblacs_gridexit(int context);
// not_done != 0 keeps MPI initialised (the program calls MPI_Finalize itself).
void Cblacs_exit(int not_done);

int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
// B(ib:ib+m-1, jb:jb+n-1) = A(ia:ia+m-1, ja:ja+n-1); ictxt spans every process of both grids.
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja, const int* desca, double* b,
               const int* ib, const int* jb, const int* descb, const int* ictxt);
// sub(C) = beta * sub(C) + alpha * sub(A)^T; sub(C) is m x n, sub(A) is n x m; same context.
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia, const int* ja,
             const int* desca, const double* beta, double* c, const int* ic, const int* jc, const int* descc);
}

namespace redist_baseline {

// Throws std::runtime_error naming the MPI call when code != MPI_SUCCESS.
void check_mpi(int code, const char* call);
#define BASELINE_MPI_CHECK(call) ::redist_baseline::check_mpi((call), #call)

// ScaLAPACK descriptor entries (0-based positions in the 9-integer array).
enum descriptor_entry : int { dtype_ = 0, ctxt_ = 1, m_ = 2, n_ = 3, mb_ = 4, nb_ = 5, rsrc_ = 6, csrc_ = 7, lld_ = 8 };

int world_rank();
int world_size();

// A proc_rows x proc_cols BLACS grid on the first proc_rows*proc_cols ranks of MPI_COMM_WORLD. Collective
// over MPI_COMM_WORLD. Ranks beyond the grid hold no context (context() == -1).
class blacs_grid {
 public:
  blacs_grid(int proc_rows, int proc_cols, redist::grid_order order);
  ~blacs_grid();
  blacs_grid(const blacs_grid&) = delete;
  blacs_grid& operator=(const blacs_grid&) = delete;

  int context() const noexcept { return context_; }
  bool holds_me() const noexcept { return context_ >= 0; }
  int proc_rows() const noexcept { return proc_rows_; }
  int proc_cols() const noexcept { return proc_cols_; }
  int my_row() const noexcept { return my_row_; }  // -1 outside the grid
  int my_col() const noexcept { return my_col_; }
  // The MPI_COMM_WORLD rank at every grid position, row-major (as BLACS actually placed them).
  const std::vector<int>& position_ranks() const noexcept { return position_ranks_; }
  std::string describe() const;  // e.g. "2x2 row-major"

 private:
  int context_ = -1;
  int proc_rows_ = 0, proc_cols_ = 0;
  int my_row_ = -1, my_col_ = -1;
  redist::grid_order order_;
  std::vector<int> position_ranks_;
};

// Releases BLACS without finalizing MPI. Call once, after every blacs_grid is gone, before MPI_Finalize.
void blacs_exit_keep_mpi();

// A square-block m x n block-cyclic matrix of doubles (ScaLAPACK DTYPE 1, first block on position (0, 0))
// with this rank's column-major local array.
struct distributed_matrix {
  std::array<int, 9> desc{};  // CTXT is -1 on ranks outside the grid
  int proc_rows = 0, proc_cols = 0, my_row = -1, my_col = -1;
  std::vector<int> position_ranks;  // as blacs_grid::position_ranks()
  int local_rows = 0, local_cols = 0;
  std::vector<double> local;  // leading dimension desc[lld_]

  std::int64_t rows() const { return desc[m_]; }
  std::int64_t cols() const { return desc[n_]; }
  std::int64_t leading_dimension() const { return desc[lld_]; }
  std::int64_t local_bytes() const {
    return static_cast<std::int64_t>(local_rows) * local_cols * static_cast<std::int64_t>(sizeof(double));
  }
  double* data() { return local.empty() ? nullptr : local.data(); }
  const double* data() const { return local.empty() ? nullptr : local.data(); }
  // Global 0-based row / column of local row / column l.
  std::int64_t global_row(std::int64_t l) const;
  std::int64_t global_col(std::int64_t l) const;
  std::vector<std::int64_t> global_rows() const;  // global_row(l) for every local row
};

distributed_matrix make_matrix(const blacs_grid& grid, int m, int n, int mb, int nb);

// The redist layout of exactly the distribution and local storage that `a.desc` describes, seen by the
// MPI_COMM_WORLD rank `my_rank`.
redist::grid_layout layout_of(const distributed_matrix& a, int my_rank);

// Deterministic global contents. Exact in double for matrices up to 2^20 x 2^20 elements, distinct per
// element, and the sum of any two of them is exact (sums stay below 2^53).
inline double source_value(std::int64_t row, std::int64_t col) {
  return static_cast<double>(row) * 1048576.0 + static_cast<double>(col) + 1.0;
}
inline double target_initial_value(std::int64_t row, std::int64_t col) {
  return -(static_cast<double>(col) * 1048576.0 + static_cast<double>(row)) - 0.5;
}

// a(i, j) = value(global i, global j) on this rank's share.
template <class Value>
void fill(distributed_matrix& a, Value value) {
  const std::int64_t ld = a.leading_dimension();
  const std::vector<std::int64_t> rows = a.global_rows();
#pragma omp parallel for schedule(static)
  for (int lc = 0; lc < a.local_cols; ++lc) {
    const std::int64_t gc = a.global_col(lc);
    double* column = a.local.data() + static_cast<std::int64_t>(lc) * ld;
    for (int lr = 0; lr < a.local_rows; ++lr) column[lr] = value(rows[static_cast<size_t>(lr)], gc);
  }
}

// Elements of this rank's share that differ from expected(global i, global j), summed over all ranks.
template <class Value>
std::int64_t count_wrong_elements(const distributed_matrix& a, Value expected) {
  const std::int64_t ld = a.leading_dimension();
  const std::vector<std::int64_t> rows = a.global_rows();
  std::int64_t wrong = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong)
  for (int lc = 0; lc < a.local_cols; ++lc) {
    const std::int64_t gc = a.global_col(lc);
    const double* column = a.local.data() + static_cast<std::int64_t>(lc) * ld;
    for (int lr = 0; lr < a.local_rows; ++lr) wrong += column[lr] != expected(rows[static_cast<size_t>(lr)], gc);
  }
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

// The same check on the local storage `data` of any regular redist layout (e.g. a relabeled one).
template <class Value>
std::int64_t count_wrong_elements(const redist::grid_layout& layout, const double* data, Value expected) {
  if (layout.kind() != redist::storage_kind::regular)
    throw std::invalid_argument("count_wrong_elements: only regular (one array per rank) layouts are supported");
  const auto& row_splits = layout.row_splits();
  const auto& col_splits = layout.col_splits();
  const bool col_major = layout.packing_order() == redist::storage_order::col_major;
  const std::int64_t ld = layout.local_ld();
  std::int64_t wrong = 0;
  for (const redist::grid_position pos : layout.my_positions()) {
    for (size_t j = 0; j < layout.col_proc().size(); ++j) {
      if (layout.col_proc()[j] != pos.col) continue;
      for (size_t i = 0; i < layout.row_proc().size(); ++i) {
        if (layout.row_proc()[i] != pos.row) continue;
        for (std::int64_t gc = col_splits[j]; gc < col_splits[j + 1]; ++gc) {
          const std::int64_t lc = layout.local_col_start()[j] + (gc - col_splits[j]);
          for (std::int64_t gr = row_splits[i]; gr < row_splits[i + 1]; ++gr) {
            const std::int64_t lr = layout.local_row_start()[i] + (gr - row_splits[i]);
            wrong += data[col_major ? lr + lc * ld : lr * ld + lc] != expected(gr, gc);
          }
        }
      }
    }
  }
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

// Elements of the shares of x and y (same descriptor) that differ, summed over all ranks.
std::int64_t count_differences(const distributed_matrix& x, const distributed_matrix& y);

// Copies y's local array into x's (same descriptor); untimed reset between repetitions.
void copy_local(distributed_matrix& x, const distributed_matrix& y);

// ---- timing ----
struct timing {
  std::vector<double> seconds;  // per repetition: the slowest rank's time
  double best = 0, median = 0;
};

// Runs prepare() (untimed), MPI_Barrier, then run() timed, `repetitions` times on every rank of comm.
template <class Prepare, class Run>
timing time_repeated(MPI_Comm comm, int repetitions, Prepare&& prepare, Run&& run);

// One collective operation timed once (barrier first, max over ranks).
template <class Run>
double time_once(MPI_Comm comm, Run&& run) {
  BASELINE_MPI_CHECK(MPI_Barrier(comm));
  const double start = MPI_Wtime();
  run();
  const double mine = MPI_Wtime() - start;
  double slowest = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
  return slowest;
}

timing summarize(MPI_Comm comm, const std::vector<double>& my_seconds);

template <class Prepare, class Run>
timing time_repeated(MPI_Comm comm, int repetitions, Prepare&& prepare, Run&& run) {
  std::vector<double> mine;
  mine.reserve(static_cast<size_t>(repetitions));
  for (int k = 0; k < repetitions; ++k) {
    prepare();
    BASELINE_MPI_CHECK(MPI_Barrier(comm));
    const double start = MPI_Wtime();
    run();
    mine.push_back(MPI_Wtime() - start);
  }
  return summarize(comm, mine);
}

// redist's drop-in runs a key's first calls with a plan made for one call and replaces it by the plan repeated calls
// use by the key's 16th call at the latest (src/scalapack/plan_cache.hpp, latest_replacement_call): a benchmark
// that made `calls_made` calls of a key makes the rest of those untimed before timing the steady state.
template <class Run>
void settle_drop_in_plan(int calls_made, Run&& run) {
  for (int call = calls_made + 1; call <= 16; ++call) run();
}

// Values of one int64 per rank gathered on every rank (for per-rank statistics).
std::vector<std::int64_t> gather_all(MPI_Comm comm, std::int64_t mine);

// This process's resident set now (VmRSS of /proc/self/status), bytes; 0 where the system does not say.
std::int64_t resident_bytes();

// ---- command line ----
// "4000,8000" -> {4000, 8000}; throws std::invalid_argument on anything else.
std::vector<int> parse_int_list(const std::string& text);
int parse_positive_int(const std::string& text, const char* what);

// ---- JSON ----
class json_writer {
 public:
  json_writer& begin_object();
  json_writer& end_object();
  // Inline arrays put all items on one line (for short lists of numbers).
  json_writer& begin_array(bool inline_items = false);
  json_writer& end_array();
  json_writer& key(std::string_view name);
  json_writer& value(double v);  // non-finite -> null
  json_writer& value(std::int64_t v);
  json_writer& value(int v) { return value(static_cast<std::int64_t>(v)); }
  json_writer& value(bool v);
  json_writer& value(std::string_view v);
  json_writer& value(const char* v) { return value(std::string_view(v)); }
  template <class T>
  json_writer& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  template <class T>
  json_writer& array_field(std::string_view name, const std::vector<T>& items) {
    key(name);
    begin_array(true);
    for (const T& item : items) value(item);
    return end_array();
  }
  const std::string& text() const noexcept { return out_; }

 private:
  struct level {
    bool inline_items = false;
    bool empty = true;
  };
  void before_item();
  void newline();
  void write_string(std::string_view v);
  std::string out_;
  std::vector<level> levels_;
  bool after_key_ = false;
};

}  // namespace redist_baseline
