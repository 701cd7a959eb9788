// SPDX-License-Identifier: BSD-3-Clause
#include "baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace redist_baseline {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error code %d", code);
  throw std::runtime_error(std::string(call) + " failed: " + text);
}

int world_rank() {
  int rank = 0;
  BASELINE_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  return rank;
}

int world_size() {
  int size = 0;
  BASELINE_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

// ---- BLACS grid ----

blacs_grid::blacs_grid(int proc_rows, int proc_cols, redist::grid_order order)
    : proc_rows_(proc_rows), proc_cols_(proc_cols), order_(order) {
  const int ranks = world_size();
  if (proc_rows < 1 || proc_cols < 1 || static_cast<std::int64_t>(proc_rows) * proc_cols > ranks)
    throw std::invalid_argument("a " + std::to_string(proc_rows) + "x" + std::to_string(proc_cols) +
                                " BLACS grid needs at least " + std::to_string(proc_rows * proc_cols) +
                                " MPI ranks, have " + std::to_string(ranks));
  int blacs_process = -1, blacs_processes = 0;
  Cblacs_pinfo(&blacs_process, &blacs_processes);
  if (blacs_process != world_rank() || blacs_processes != ranks)
    throw std::runtime_error("BLACS numbers this process " + std::to_string(blacs_process) + " of " +
                             std::to_string(blacs_processes) + ", MPI_COMM_WORLD says " + std::to_string(world_rank()) +
                             " of " + std::to_string(ranks));
  int context = -1;
  Cblacs_get(-1, 0, &context);  // the system context: MPI_COMM_WORLD
  Cblacs_gridinit(&context, order == redist::grid_order::row_major ? "R" : "C", proc_rows, proc_cols);
  context_ = context;
  if (context_ >= 0) {
    int rows = 0, cols = 0;
    Cblacs_gridinfo(context_, &rows, &cols, &my_row_, &my_col_);
    if (rows != proc_rows || cols != proc_cols)
      throw std::runtime_error("BLACS made a " + std::to_string(rows) + "x" + std::to_string(cols) +
                               " grid, asked for " + std::to_string(proc_rows) + "x" + std::to_string(proc_cols));
    if (my_row_ < 0) context_ = -1;  // not part of the grid
  }
  // Where BLACS put every rank: gathered rather than assumed.
  const int my_position = context_ >= 0 ? my_row_ * proc_cols + my_col_ : -1;
  std::vector<int> position_of(static_cast<size_t>(ranks));
  BASELINE_MPI_CHECK(MPI_Allgather(&my_position, 1, MPI_INT, position_of.data(), 1, MPI_INT, MPI_COMM_WORLD));
  position_ranks_.assign(static_cast<size_t>(proc_rows) * proc_cols, -1);
  for (int r = 0; r < ranks; ++r)
    if (position_of[static_cast<size_t>(r)] >= 0) position_ranks_[static_cast<size_t>(position_of[r])] = r;
  if (std::count(position_ranks_.begin(), position_ranks_.end(), -1) != 0)
    throw std::runtime_error("BLACS left a position of the " + describe() + " grid without a process");
}

blacs_grid::~blacs_grid() {
  if (context_ >= 0) Cblacs_gridexit(context_);
}

std::string blacs_grid::describe() const {
  return std::to_string(proc_rows_) + "x" + std::to_string(proc_cols_) +
         (order_ == redist::grid_order::row_major ? " row-major" : " col-major");
}

void blacs_exit_keep_mpi() { Cblacs_exit(1); }

// ---- distributed matrices ----

namespace {

// Global index of local index l of a block-cyclic dimension (first block of full size on `source`).
std::int64_t local_to_global(std::int64_t l, std::int64_t nb, int my_proc, int source, int procs) {
  const std::int64_t my_offset = ((my_proc - source) % procs + procs) % procs;
  return ((l / nb) * procs + my_offset) * nb + l % nb;
}

}  // namespace

std::int64_t distributed_matrix::global_row(std::int64_t l) const {
  return local_to_global(l, desc[mb_], my_row, desc[rsrc_], proc_rows);
}

std::int64_t distributed_matrix::global_col(std::int64_t l) const {
  return local_to_global(l, desc[nb_], my_col, desc[csrc_], proc_cols);
}

std::vector<std::int64_t> distributed_matrix::global_rows() const {
  std::vector<std::int64_t> rows(static_cast<size_t>(local_rows));
  for (int l = 0; l < local_rows; ++l) rows[static_cast<size_t>(l)] = global_row(l);
  return rows;
}

distributed_matrix make_matrix(const blacs_grid& grid, int m, int n, int mb, int nb) {
  distributed_matrix a;
  a.proc_rows = grid.proc_rows();
  a.proc_cols = grid.proc_cols();
  a.my_row = grid.my_row();
  a.my_col = grid.my_col();
  a.position_ranks = grid.position_ranks();
  const int source = 0;
  if (grid.holds_me()) {
    a.local_rows = numroc_(&m, &mb, &a.my_row, &source, &a.proc_rows);
    a.local_cols = numroc_(&n, &nb, &a.my_col, &source, &a.proc_cols);
    const int lld = std::max(1, a.local_rows);
    const int context = grid.context();
    int info = 0;
    descinit_(a.desc.data(), &m, &n, &mb, &nb, &source, &source, &context, &lld, &info);
    if (info != 0)
      throw std::runtime_error("descinit_ rejected a " + std::to_string(m) + "x" + std::to_string(n) + " matrix in " +
                               std::to_string(mb) + "x" + std::to_string(nb) + " blocks: info " + std::to_string(info));
    a.local.assign(static_cast<size_t>(lld) * static_cast<size_t>(std::max(1, a.local_cols)), 0.0);
  } else {
    // ScaLAPACK's convention for processes outside the grid of a matrix: CTXT = -1.
    a.desc = {1, -1, m, n, mb, nb, source, source, 1};
  }
  return a;
}

redist::grid_layout layout_of(const distributed_matrix& a, int my_rank) {
  redist::block_cyclic_params p;
  p.m = a.desc[m_];
  p.n = a.desc[n_];
  p.mb = a.desc[mb_];
  p.nb = a.desc[nb_];
  p.rsrc = a.desc[rsrc_];
  p.csrc = a.desc[csrc_];
  p.proc_rows = a.proc_rows;
  p.proc_cols = a.proc_cols;
  p.grid_ranks = a.position_ranks;
  p.lld = a.desc[ctxt_] >= 0 ? a.desc[lld_] : 0;
  p.order = redist::storage_order::col_major;
  return redist::block_cyclic(p, my_rank);
}

std::int64_t count_differences(const distributed_matrix& x, const distributed_matrix& y) {
  if (x.desc != y.desc) throw std::invalid_argument("count_differences: the two matrices have different descriptors");
  const std::int64_t ld = x.leading_dimension();
  std::int64_t different = 0;
#pragma omp parallel for schedule(static) reduction(+ : different)
  for (int lc = 0; lc < x.local_cols; ++lc) {
    const double* xc = x.local.data() + static_cast<std::int64_t>(lc) * ld;
    const double* yc = y.local.data() + static_cast<std::int64_t>(lc) * ld;
    for (int lr = 0; lr < x.local_rows; ++lr) different += xc[lr] != yc[lr];
  }
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&different, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

void copy_local(distributed_matrix& x, const distributed_matrix& y) {
  if (x.local.size() != y.local.size()) throw std::invalid_argument("copy_local: local arrays differ in size");
  if (!x.local.empty()) std::memcpy(x.local.data(), y.local.data(), x.local.size() * sizeof(double));
}

// ---- timing ----

timing summarize(MPI_Comm comm, const std::vector<double>& my_seconds) {
  timing t;
  t.seconds.resize(my_seconds.size());
  BASELINE_MPI_CHECK(MPI_Allreduce(my_seconds.data(), t.seconds.data(), static_cast<int>(my_seconds.size()), MPI_DOUBLE,
                                   MPI_MAX, comm));
  if (t.seconds.empty()) return t;
  std::vector<double> sorted = t.seconds;
  std::sort(sorted.begin(), sorted.end());
  t.best = sorted.front();
  const size_t n = sorted.size();
  t.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  return t;
}

std::vector<std::int64_t> gather_all(MPI_Comm comm, std::int64_t mine) {
  int ranks = 0;
  BASELINE_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  std::vector<std::int64_t> all(static_cast<size_t>(ranks));
  BASELINE_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm));
  return all;
}

// ---- command line ----

int parse_positive_int(const std::string& text, const char* what) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 1 || v > (1LL << 30))
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got '" + text + "'");
  return static_cast<int>(v);
}

std::vector<int> parse_int_list(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    out.push_back(parse_positive_int(text.substr(start, end - start), "each list item"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// ---- JSON ----

void json_writer::newline() {
  out_ += '\n';
  out_.append(2 * levels_.size(), ' ');
}

void json_writer::before_item() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  level& l = levels_.back();
  if (!l.empty) out_ += l.inline_items ? ", " : ",";
  if (!l.inline_items) newline();
  l.empty = false;
}

json_writer& json_writer::begin_object() {
  before_item();
  out_ += '{';
  levels_.push_back({false, true});
  return *this;
}

json_writer& json_writer::end_object() {
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) newline();
  out_ += '}';
  return *this;
}

json_writer& json_writer::begin_array(bool inline_items) {
  before_item();
  out_ += '[';
  levels_.push_back({inline_items, true});
  return *this;
}

json_writer& json_writer::end_array() {
  const level l = levels_.back();
  levels_.pop_back();
  if (!l.empty && !l.inline_items) newline();
  out_ += ']';
  return *this;
}

json_writer& json_writer::key(std::string_view name) {
  before_item();
  write_string(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(double v) {
  before_item();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  out_ += text;
  return *this;
}

json_writer& json_writer::value(std::int64_t v) {
  before_item();
  out_ += std::to_string(v);
  return *this;
}

json_writer& json_writer::value(bool v) {
  before_item();
  out_ += v ? "true" : "false";
  return *this;
}

json_writer& json_writer::value(std::string_view v) {
  before_item();
  write_string(v);
  return *this;
}

void json_writer::write_string(std::string_view v) {
  out_ += '"';
  for (const char c : v) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out_ += escaped;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

}  // namespace redist_baseline
