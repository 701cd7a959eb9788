// SPDX-License-Identifier: BSD-3-Clause
// PBLAS p?gemm: sub(C) := alpha*op(sub(A))*op(sub(B)) + beta*sub(C), sub(C) = C(ic:ic+m-1, jc:jc+n-1),
// op(sub(A)) m x k, op(sub(B)) k x n, op = N, T or C; A, B and C on the same BLACS context; through the
// distributed multiply (redist/gemm/gemm.hpp). Prefixed twins redist_p?gemm. See docs/scalapack.md.
#include <algorithm>
#include <array>
#include <cctype>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "call_summary.hpp"
#include "delegation.hpp"
#include "dropin.hpp"
#include "first_error.hpp"
#include "gemm/local_blas.hpp"
#include "machine/pages.hpp"
#include "mpi/checked.hpp"
#include "pblas_call.hpp"
#include "plan_cache.hpp"
#include "redist/error.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "staging.hpp"
#include "traced_arguments.hpp"

namespace redist::scalapack {
namespace {

// What every process of the context contributes: its grid position, its view of the three operands and of
// the scalar arguments (PBLAS requires them global; gathering them lets every process check that), and its own
// argument error.
struct rank_record {
  std::int64_t my_row, my_col;
  std::int64_t a[descriptor_length], b[descriptor_length], c[descriptor_length];  // normalized (DTYPE as given)
  std::int64_t ia, ja, ib, jb, ic, jc, m, n, k, op_a, op_b, world_rank;
  std::int64_t alpha[2], beta[2];  // the scalars' bytes (a complex<double> fills both words)
  std::int64_t delegates;  // this process would hand the call to ScaLAPACK (the drop-in's): 1; and can remember it: 2
  std::int64_t info;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));

// Argument positions: TRANSA=1 TRANSB=2 M=3 N=4 K=5 ALPHA=6 A=7 IA=8 JA=9 DESCA=10 B=11 IB=12 JB=13 DESCB=14
// BETA=15 C=16 IC=17 JC=18 DESCC=19.
constexpr int desca_pos = 10, descb_pos = 14, descc_pos = 19;

// The arguments every process must pass alike and the info that reports a difference (LLD, CTXT and DTYPE are
// each process's own).
std::vector<global_argument> global_arguments() {
  std::vector<global_argument> out{
      {word_at(offsetof(rank_record, op_a)), -1},      {word_at(offsetof(rank_record, op_b)), -2},
      {word_at(offsetof(rank_record, m)), -3},         {word_at(offsetof(rank_record, n)), -4},
      {word_at(offsetof(rank_record, k)), -5},         {word_at(offsetof(rank_record, alpha)), -6},
      {word_at(offsetof(rank_record, alpha)) + 1, -6}, {word_at(offsetof(rank_record, ia)), -8},
      {word_at(offsetof(rank_record, ja)), -9},        {word_at(offsetof(rank_record, ib)), -12},
      {word_at(offsetof(rank_record, jb)), -13},       {word_at(offsetof(rank_record, beta)), -15},
      {word_at(offsetof(rank_record, beta)) + 1, -15}, {word_at(offsetof(rank_record, ic)), -17},
      {word_at(offsetof(rank_record, jc)), -18}};
  add_descriptor_arguments(out, offsetof(rank_record, a), desca_pos);
  add_descriptor_arguments(out, offsetof(rank_record, b), descb_pos);
  add_descriptor_arguments(out, offsetof(rank_record, c), descc_pos);
  return out;
}

template <class T>
constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The operation TRANS names, once check_gemm has accepted it: 'C' is the conjugate transpose for the complex
// routines and the plain transpose for the real ones (as in PBLAS).
template <class T>
op op_of(char trans) {
  const char t = static_cast<char>(std::toupper(static_cast<unsigned char>(trans)));
  if (t == 'N') return op::identity;
  return t == 'C' && is_complex_v<T> ? op::conj_transpose : op::transpose;
}

// The operation a TRANS letter names as a record word (1000 + the letter for one check_gemm refuses), so that
// processes are compared on what they ask for: 'T' and 'C' are the same for the real routines.
template <class T>
std::int64_t operation_word(char trans) {
  const char t = static_cast<char>(std::toupper(static_cast<unsigned char>(trans)));
  if (t != 'N' && t != 'T' && t != 'C') return 1000 + static_cast<unsigned char>(trans);
  return static_cast<std::int64_t>(op_of<T>(trans));
}

// sub(C) := beta*sub(C) on this process's part of sub(C), PBLAS's answer when alpha = 0 or K = 0: nothing of
// A or B is needed, so nothing moves. beta = 0 writes zeros without reading C. `layout` is sub(C)'s
// (layout_of: regular column-major storage in ScaLAPACK's local array).
template <class T>
void scale_local(const grid_layout& layout, T* c, T beta) {
  const auto& rows = layout.row_splits();
  const auto& cols = layout.col_splits();
  for (const grid_position& p : layout.my_positions())
    for (size_t i = 0; i < layout.row_proc().size(); ++i) {
      if (layout.row_proc()[i] != p.row) continue;
      for (size_t j = 0; j < layout.col_proc().size(); ++j) {
        if (layout.col_proc()[j] != p.col) continue;
        T* block = c + layout.local_row_start()[i] + layout.local_col_start()[j] * layout.local_ld();
        for (std::int64_t y = 0; y < cols[j + 1] - cols[j]; ++y) {
          T* column = block + y * layout.local_ld();
          for (std::int64_t x = 0; x < rows[i + 1] - rows[i]; ++x) column[x] = beta == T(0) ? T(0) : beta * column[x];
        }
      }
    }
}

// ---- A local multiply in place: a one-dimensional grid on which C and one operand are laid out alike -------------
//
// On a P x 1 grid, C := alpha*A*op(B) + beta*C where sub(A)'s rows lie in the same blocks on the same processes as
// sub(C)'s: each process's rows of C need its own rows of A and all of op(sub(B)). One allgather of op(sub(B)) and
// one local multiply replace both the distributed multiply's redistributions of A and C and ScaLAPACK's panel by
// panel broadcasts. Likewise on a 1 x Q grid, with B's columns and C's alike and op(sub(A)) gathered. (The 2 x 1
// products of an eigensolver, issue 57: bench/traces/issue57_pdgemm_signatures_np2.)

// Where a grid position's part of a layout starts in its local array and how large it is.
struct local_rectangle {
  std::int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
};

// The part of `l` on each grid row (along = rows) or column, when every such part is one run of consecutive local
// rows (columns) in its local array; nothing otherwise. Global: the same answer on every process.
std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> runs_per_process(const grid_layout& l,
                                                                                   bool along_rows) {
  const std::vector<std::int64_t>& splits = along_rows ? l.row_splits() : l.col_splits();
  const std::vector<int>& proc = along_rows ? l.row_proc() : l.col_proc();
  const std::vector<std::int64_t>& start = along_rows ? l.local_row_start() : l.local_col_start();
  if (l.kind() != storage_kind::regular || start.size() + 1 != splits.size()) return std::nullopt;
  std::vector<std::pair<std::int64_t, std::int64_t>> runs(
      static_cast<size_t>(along_rows ? l.proc_rows() : l.proc_cols()), {0, 0});  // (first local index, length)
  std::vector<bool> started(runs.size(), false);
  for (size_t i = 0; i + 1 < splits.size(); ++i) {
    auto& [first, length] = runs[static_cast<size_t>(proc[i])];
    if (!started[static_cast<size_t>(proc[i])]) {
      started[static_cast<size_t>(proc[i])] = true;
      first = start[i];
    } else if (start[i] != first + length) {
      return std::nullopt;
    }
    length += splits[i + 1] - splits[i];
  }
  return runs;
}

// What a process cannot do in a local multiply in place, exchanged before anything moves or is written: 0 for nothing.
enum in_place_problem : std::int64_t { no_problem = 0, a_null = 1, b_null = 2, c_null = 3, no_memory = 4 };

// This process's problem: a null buffer where it holds elements of that operand, else none.
in_place_problem null_operand(bool holds_a, const void* a, bool holds_b, const void* b, bool holds_c, const void* c) {
  return holds_c && c == nullptr   ? c_null
         : holds_a && a == nullptr ? a_null
         : holds_b && b == nullptr ? b_null
                                   : no_problem;
}

// Every process's problem, exchanged (one word each): the lowest process's is thrown on every process, before
// anything moves or is written. `bytes`: the work buffer a process without memory could not have.
void agree_on_in_place_problems(in_place_problem mine, std::int64_t bytes, MPI_Comm comm) {
  std::vector<std::int64_t> problems(static_cast<size_t>(mpi::size(comm)), no_problem);
  REDIST_MPI_CHECK(mpi::allgather_yielding(&mine, 1, MPI_INT64_T, problems.data(), 1, MPI_INT64_T, comm));
  for (size_t r = 0; r < problems.size(); ++r) {
    const std::int64_t problem = problems[r];
    if (problem == no_problem) continue;
    if (problem == no_memory)
      throw insufficient_memory("rank " + std::to_string(r) + ": no memory for the " + std::to_string(bytes) +
                                " bytes of a local multiply's exchanged parts; expected them free");
    throw invalid_argument("rank " + std::to_string(r) + ": " +
                           (problem == a_null   ? "A"
                            : problem == b_null ? "B"
                                                : "C") +
                           "'s buffer is null on a rank that holds elements of it");
  }
}

// Work buffer of `elements` T from the page cache (memory/pages.hpp: a call made again faults no page in), acquired
// before the agreement on problems: a process without it says so there (no_memory into `problem`).
template <class T>
machine::page_buffer in_place_buffer(std::int64_t elements, in_place_problem& problem) {
  try {
    return machine::allocate_pages(std::max<std::int64_t>(elements, 1) * static_cast<std::int64_t>(sizeof(T)));
  } catch (const std::bad_alloc&) {
    if (problem == no_problem) problem = no_memory;
    return machine::page_buffer(nullptr, machine::release_pages);
  }
}

template <class T>
scalar to_scalar(T x) {
  if constexpr (is_complex_v<T>) {
    return scalar(x.real(), x.imag());
  } else {
    return scalar(static_cast<double>(x), 0.0);
  }
}

// Starts one nonblocking exchange over a one-dimensional grid's communicator (a collective: BLACS's point-to-point
// messages on the same communicator cannot match it): to each other position p, `counts(p)[0]` elements from `send`
// + `counts(p)[1]`; from it `counts(p)[2]` into `receive` + `counts(p)[3]`. Counts and offsets bounded by
// in_place_gather_limit: MPI's int form.
template <class T, class Counts>
MPI_Request start_exchange(const T* send, T* receive, size_t mine, size_t positions, const process_grid& grid,
                           MPI_Comm comm, Counts&& counts) {
  const size_t ranks = static_cast<size_t>(mpi::size(comm));
  std::vector<int> send_counts(ranks, 0), send_displacements(ranks, 0), receive_counts(ranks, 0),
      receive_displacements(ranks, 0);
  for (size_t p = 0; p < positions; ++p) {
    if (p == mine) continue;
    const size_t rank = static_cast<size_t>(grid.position_ranks[p]);  // a one-dimensional grid: position p
    const std::array<std::int64_t, 4> c = counts(p);
    send_counts[rank] = static_cast<int>(c[0]), send_displacements[rank] = static_cast<int>(c[1]);
    receive_counts[rank] = static_cast<int>(c[2]), receive_displacements[rank] = static_cast<int>(c[3]);
  }
  const MPI_Datatype element = mpi_datatype(element_type_v<T>);
  MPI_Request request = MPI_REQUEST_NULL;
  REDIST_MPI_CHECK(MPI_Ialltoallv(send, send_counts.data(), send_displacements.data(), element, receive,
                                  receive_counts.data(), receive_displacements.data(), element, comm, &request));
  return request;
}

// The most op(sub(X)) a local multiply in place gathers (bytes): every process holds it whole.
constexpr std::int64_t in_place_gather_limit = std::int64_t{1} << 28;

// C := alpha*op(A)*op(B) + beta*C by a local multiply in place, when the grid and the layouts allow it (the same
// answer on every process: decided from global layouts only); false otherwise, nothing done.
//
// The gathered operand X (B by rows, A by columns) is split among the processes along one stored dimension, each
// process's part one rectangle of its local array. Every process packs its part once and sends it to every other in
// one nonblocking exchange; the parts are multiplied where they arrived, nothing put in place. While the others'
// parts arrive, the process multiplies with its own, a slice of sub(C) at a time, driving the exchange in between.
// Where op(X) is not transposed, X's blocks along its split dimension are ranges of K: a part's products add up
// in sub(C) (beta with the first), and the kept operand's matching columns (by rows) or rows (by columns) are
// copied together first, so that each part is one multiply and sub(C) is read and written once per process, not
// once per block. Transposed, the blocks are ranges of sub(C)'s columns (by rows) or rows (by columns): one
// multiply each, written once.
template <class T>
bool multiply_in_place(const grid_layout& a_layout, const grid_layout& b_layout, const grid_layout& c_layout, op op_a,
                       op op_b, const T* a, const T* b, T* c, T alpha, T beta, const process_grid& grid, MPI_Comm comm,
                       trace_detail::call_scope& traced) {
  const bool by_rows = grid.proc_cols == 1 && op_a == op::identity && a_layout.row_splits() == c_layout.row_splits() &&
                       a_layout.row_proc() == c_layout.row_proc();
  const bool by_cols = !by_rows && grid.proc_rows == 1 && op_b == op::identity &&
                       b_layout.col_splits() == c_layout.col_splits() && b_layout.col_proc() == c_layout.col_proc();
  if (!by_rows && !by_cols) return false;
  const grid_layout& gathered = by_rows ? b_layout : a_layout;
  if (gathered.rows() * gathered.cols() * static_cast<std::int64_t>(sizeof(T)) > in_place_gather_limit) return false;
  const grid_layout& kept = by_rows ? a_layout : b_layout;
  const auto kept_runs = runs_per_process(kept, by_rows), c_runs = runs_per_process(c_layout, by_rows);
  const auto kept_across = runs_per_process(kept, !by_rows), c_across = runs_per_process(c_layout, !by_rows);
  const auto parts = runs_per_process(gathered, by_rows), parts_across = runs_per_process(gathered, !by_rows);
  if (!kept_runs || !c_runs || !kept_across || !c_across || !parts || !parts_across) return false;
  const auto started = trace_detail::clock::now();
  const size_t mine = static_cast<size_t>(by_rows ? grid.my_row : grid.my_col), processes = parts->size();
  const std::int64_t m = c_layout.rows(), n = c_layout.cols(), k = by_rows ? a_layout.cols() : b_layout.rows();
  const op x_op = by_rows ? op_b : op_a;
  const bool accumulates = x_op == op::identity;  // X's blocks along its split dimension are ranges of K
  const std::int64_t c_length = (*c_runs)[mine].second;
  const T* kept_data = by_rows ? a : b;
  const T* my_part_data = by_rows ? b : a;
  // X's parts: along the split dimension a run per process (first local index, length); across it the whole
  // extent, one run. Part p is packed column-major: its rows by rows, `across` rows by columns.
  const std::int64_t across = by_rows ? gathered.cols() : gathered.rows();
  const auto part_length = [&](size_t p) { return (*parts)[p].second; };
  const auto part_ld = [&](size_t p) { return by_rows ? part_length(p) : across; };
  // In the work buffer (elements): this process's part, one element apart (an MPI may refuse a send buffer equal
  // to the receive buffer, even with nothing received there), then the others' parts as received.
  std::vector<std::int64_t> part_offset(processes, 0);
  const std::int64_t received_at = part_length(mine) * across + 1;
  std::int64_t elements = received_at;
  for (size_t p = 0; p < processes; ++p)
    if (p != mine) part_offset[p] = elements, elements += part_length(p) * across;
  // Accumulating, the kept operand's K ranges of each part side by side: c_length x K by rows, K x c_length by
  // columns (the order of each part's blocks).
  const std::int64_t kept_offset = elements;
  if (accumulates) elements += c_length * k;
  in_place_problem my_problem =
      null_operand(by_rows ? (*kept_runs)[mine].second > 0 : part_length(mine) > 0, a,
                   by_rows ? part_length(mine) > 0 : (*kept_runs)[mine].second > 0, b, c_length > 0, c);
  machine::page_buffer work = in_place_buffer<T>(elements, my_problem);
  agree_on_in_place_problems(my_problem, elements * static_cast<std::int64_t>(sizeof(T)), comm);
  T* const buffer = reinterpret_cast<T*>(work.get());
  // This process's part packed, then every part to every other process in one nonblocking exchange.
  const std::int64_t ld = gathered.local_ld(), part_across_first = (*parts_across)[0].first;
  T* const my_part = buffer + part_offset[mine];
  if (part_length(mine) > 0) {
    const T* from = my_part_data + (by_rows ? (*parts)[mine].first + part_across_first * ld
                                            : part_across_first + (*parts)[mine].first * ld);
    const std::int64_t columns = by_rows ? across : part_length(mine), rows = by_rows ? part_length(mine) : across;
    for (std::int64_t j = 0; j < columns; ++j) std::copy_n(from + j * ld, rows, my_part + j * rows);
  }
  MPI_Request request = start_exchange(my_part, buffer + received_at, mine, processes, grid, comm, [&](size_t p) {
    return std::array<std::int64_t, 4>{part_length(mine) * across, 0, part_length(p) * across,
                                       part_offset[p] - received_at};
  });
  int exchanged = 0;
  const auto drive_exchange = [&] {
    if (!exchanged) REDIST_MPI_CHECK(MPI_Test(&request, &exchanged, MPI_STATUS_IGNORE));
  };
  // Where this process's rows (by rows) or columns (by columns) of sub(C) and of the kept operand start.
  const std::int64_t kept_ld = kept.local_ld(), c_ld = c_layout.local_ld();
  const T* const kept_at = kept_data == nullptr
                               ? nullptr
                               : kept_data + (by_rows ? (*kept_runs)[mine].first + (*kept_across)[0].first * kept_ld
                                                      : (*kept_across)[0].first + (*kept_runs)[mine].first * kept_ld);
  T* const c_at = c == nullptr ? nullptr
                               : c + (by_rows ? (*c_runs)[mine].first + (*c_across)[0].first * c_ld
                                              : (*c_across)[0].first + (*c_runs)[mine].first * c_ld);
  const std::vector<std::int64_t>& splits = by_rows ? gathered.row_splits() : gathered.col_splits();
  const std::vector<int>& owner = by_rows ? gathered.row_proc() : gathered.col_proc();
  const std::vector<std::int64_t>& local_start = by_rows ? gathered.local_row_start() : gathered.local_col_start();
  const char x_letter = x_op == op::identity ? 'N' : x_op == op::transpose ? 'T' : 'C';
  const scalar alpha_value = to_scalar(alpha);
  bool first_product = true;
  // Process p's part times the kept operand into this process's sub(C); `between` runs between multiplies.
  const auto multiply_with = [&](size_t p, auto&& between) {
    const T* const part = buffer + part_offset[p];
    if (accumulates) {
      // The kept operand's K ranges that p's blocks hold, in their order, side by side.
      T* const kept_p = buffer + kept_offset;
      std::int64_t copied = 0;
      for (size_t i = 0; i + 1 < splits.size(); ++i) {
        if (static_cast<size_t>(owner[i]) != p) continue;
        const std::int64_t s = splits[i], size = splits[i + 1] - splits[i];
        if (by_rows)  // columns s.. of A's rows here: c_length x size
          for (std::int64_t j = 0; j < size; ++j)
            std::copy_n(kept_at + (s + j) * kept_ld, c_length, kept_p + (copied + j) * c_length);
        else  // rows s.. of B's columns here, into a K_p x c_length matrix
          for (std::int64_t j = 0; j < c_length; ++j)
            std::copy_n(kept_at + s + j * kept_ld, size, kept_p + copied + j * part_length(p));
        copied += size;
      }
      // A slice of sub(C)'s columns at a time: n by rows, c_length by columns.
      const std::int64_t columns = by_rows ? n : c_length, slice = std::max<std::int64_t>(64, (columns + 7) / 8);
      const scalar block_beta = to_scalar(first_product ? beta : T(1));
      for (std::int64_t j = 0; j < columns; j += slice) {
        const std::int64_t width = std::min(slice, columns - j);
        if (by_rows)  // C(mine, j..) (+)= A(mine, K_p) * B(K_p, j..)
          gemm_detail::local_gemm(element_type_v<T>, c_length, width, part_length(p), alpha_value, kept_p, c_length,
                                  part + j * part_ld(p), part_ld(p), block_beta, c_at + j * c_ld, c_ld);
        else  // C(:, mine j..) (+)= A(:, K_p) * B(K_p, mine j..)
          gemm_detail::local_gemm(element_type_v<T>, m, width, part_length(p), alpha_value, part, part_ld(p),
                                  kept_p + j * part_length(p), part_length(p), block_beta, c_at + j * c_ld, c_ld);
        between();
      }
      first_product = false;
      return;
    }
    for (size_t i = 0; i + 1 < splits.size(); ++i) {
      if (static_cast<size_t>(owner[i]) != p) continue;
      const std::int64_t s = splits[i], size = splits[i + 1] - splits[i], at = local_start[i] - (*parts)[p].first;
      const T* const x = part + (by_rows ? at : at * part_ld(p));  // the block: size rows (by rows) or columns
      if (by_rows)                                                 // C(mine, N block) = A(mine, :) * op(B(N block, :))
        gemm_detail::local_gemm(element_type_v<T>, 'N', x_letter, c_length, size, k, alpha_value, kept_at, kept_ld, x,
                                part_ld(p), to_scalar(beta), c_at + s * c_ld, c_ld);
      else  // C(M block, mine) = op(A(:, M block)) * B(:, mine)
        gemm_detail::local_gemm(element_type_v<T>, x_letter, 'N', size, c_length, k, alpha_value, x, part_ld(p),
                                kept_at, kept_ld, to_scalar(beta), c_at + s, c_ld);
      between();
    }
  };
  if (c_length > 0 && part_length(mine) > 0) multiply_with(mine, drive_exchange);
  if (!exchanged) REDIST_MPI_CHECK(mpi::wait_yielding(request));
  if (c_length > 0)
    for (size_t p = 0; p < processes; ++p)
      if (p != mine && part_length(p) > 0) multiply_with(p, [] {});
  traced.path("redist", "in_place");
  const std::int64_t others = static_cast<std::int64_t>(processes) - 1;
  traced.execution(trace_detail::seconds_since(started),
                   part_length(mine) * across * static_cast<std::int64_t>(sizeof(T)) * others, others);
  return true;
}

// C := alpha*op(A)*op(B) + beta*C where K is split among the processes of a one-dimensional grid alike in both
// operands: on a P x 1 grid TRANSA = T or C, TRANSB = N with sub(A)'s rows (K) in the same blocks on the same
// processes as sub(B)'s; on a 1 x Q grid TRANSA = N, TRANSB = T or C with sub(A)'s columns laid out as sub(B)'s.
// (The products V**T * C of a Householder update: bench/traces/xdsep_*.) Each process multiplies its K range
// of A and B into a partial sum of all of sub(C), as a piece per process that holds rows (P x 1) or columns (1 x Q)
// of sub(C), in that process's local order; the others' pieces go to them in one nonblocking exchange while the
// process multiplies its own piece straight into its sub(C) (beta there), then it adds the pieces it received.
// The operand indexed by sub(C)'s split dimension (A's columns by rows, B's rows by columns) is copied per piece,
// that piece's blocks side by side, so that a piece is one multiply. The same answer on every process (global
// layouts only); false when the layouts do not allow it, nothing done.
template <class T>
bool sum_in_place(const grid_layout& a_layout, const grid_layout& b_layout, const grid_layout& c_layout, op op_a,
                  op op_b, const T* a, const T* b, T* c, T alpha, T beta, const process_grid& grid, MPI_Comm comm,
                  trace_detail::call_scope& traced) {
  const bool by_rows = grid.proc_cols == 1 && op_a != op::identity && op_b == op::identity &&
                       a_layout.row_splits() == b_layout.row_splits() && a_layout.row_proc() == b_layout.row_proc();
  const bool by_cols = !by_rows && grid.proc_rows == 1 && op_a == op::identity && op_b != op::identity &&
                       a_layout.col_splits() == b_layout.col_splits() && a_layout.col_proc() == b_layout.col_proc();
  if (!by_rows && !by_cols) return false;
  const std::int64_t m = c_layout.rows(), n = c_layout.cols(), k = by_rows ? a_layout.rows() : a_layout.cols();
  if (m * n * static_cast<std::int64_t>(sizeof(T)) > in_place_gather_limit) return false;
  // Partial sums of sub(C) travel instead of the operands: only where they are no larger (K at least about as
  // long as sub(C)'s shorter side, as in V**T * C), else the distributed multiply moves less.
  if (m * n > k * (m + n)) return false;
  // K's runs (along the split dimension) in A and B; A's and B's other dimension whole; sub(C)'s runs.
  const auto a_k = runs_per_process(a_layout, by_rows), b_k = runs_per_process(b_layout, by_rows);
  const auto a_other = runs_per_process(a_layout, !by_rows), b_other = runs_per_process(b_layout, !by_rows);
  const auto c_runs = runs_per_process(c_layout, by_rows), c_across = runs_per_process(c_layout, !by_rows);
  if (!a_k || !b_k || !a_other || !b_other || !c_runs || !c_across) return false;
  const auto started = trace_detail::clock::now();
  const size_t mine = static_cast<size_t>(by_rows ? grid.my_row : grid.my_col), processes = c_runs->size();
  const std::int64_t k_here = (*a_k)[mine].second;  // the same run length in B: laid out alike
  // Piece q: the rows (by rows) or columns (by columns) of sub(C) that q holds, all columns (rows): `other` wide.
  const std::int64_t other = by_rows ? n : m;
  const auto piece_elements = [&](size_t q) { return (*c_runs)[q].second * other; };
  std::vector<std::int64_t> piece_offset(processes, 0), received_offset(processes, 0);
  std::int64_t elements = 0, largest = 0;
  for (size_t q = 0; q < processes; ++q) {
    largest = std::max(largest, (*c_runs)[q].second);
    if (q != mine) piece_offset[q] = elements, elements += piece_elements(q);
  }
  const std::int64_t pieces_elements = elements + 1;  // one element apart from the received pieces (as above)
  elements = pieces_elements;
  for (size_t p = 0; p < processes; ++p)
    if (p != mine) received_offset[p] = elements - pieces_elements, elements += piece_elements(mine);
  const std::int64_t grouped_offset = elements;  // one piece's blocks of the operand indexed by sub(C)'s split
  elements += k_here * largest;
  in_place_problem my_problem = null_operand(k_here > 0, a, k_here > 0, b, (*c_runs)[mine].second > 0, c);
  machine::page_buffer work = in_place_buffer<T>(elements, my_problem);
  agree_on_in_place_problems(my_problem, elements * static_cast<std::int64_t>(sizeof(T)), comm);
  T* const buffer = reinterpret_cast<T*>(work.get());
  T* const grouped = buffer + grouped_offset;
  const std::int64_t lda = a_layout.local_ld(), ldb = b_layout.local_ld(), ldc = c_layout.local_ld();
  // This process's K range of A and B (A: K x m by rows, m x K by columns; B: K x n by rows, n x K by columns).
  const T* const a_here = a == nullptr ? nullptr
                                       : a + (by_rows ? (*a_k)[mine].first + (*a_other)[0].first * lda
                                                      : (*a_other)[0].first + (*a_k)[mine].first * lda);
  const T* const b_here = b == nullptr ? nullptr
                                       : b + (by_rows ? (*b_k)[mine].first + (*b_other)[0].first * ldb
                                                      : (*b_other)[0].first + (*b_k)[mine].first * ldb);
  const std::vector<std::int64_t>& splits = by_rows ? c_layout.row_splits() : c_layout.col_splits();
  const std::vector<int>& owner = by_rows ? c_layout.row_proc() : c_layout.col_proc();
  const char a_letter = by_rows ? (op_a == op::transpose ? 'T' : 'C') : 'N';
  const char b_letter = by_cols ? (op_b == op::transpose ? 'T' : 'C') : 'N';
  const scalar alpha_value = to_scalar(alpha);
  // Piece q (alpha*op(A)*op(B) over this K range, q's part of sub(C)) into `out` (ld out_ld) with `piece_beta`.
  const auto multiply_piece = [&](size_t q, T* out, std::int64_t out_ld, scalar piece_beta) {
    const std::int64_t length = (*c_runs)[q].second;
    std::int64_t copied = 0;  // q's blocks of A's columns (by rows: K x length) or B's rows (by columns: length x K)
    for (size_t i = 0; k_here > 0 && i + 1 < splits.size(); ++i) {
      if (static_cast<size_t>(owner[i]) != q) continue;
      const std::int64_t s = splits[i], size = splits[i + 1] - splits[i];
      if (by_rows)
        for (std::int64_t j = 0; j < size; ++j)
          std::copy_n(a_here + (s + j) * lda, k_here, grouped + (copied + j) * k_here);
      else
        for (std::int64_t j = 0; j < k_here; ++j)
          std::copy_n(b_here + s + j * ldb, size, grouped + copied + j * length);
      copied += size;
    }
    if (by_rows)  // op(A(K, q's rows of C)) * B(K, :)
      gemm_detail::local_gemm(element_type_v<T>, a_letter, 'N', length, n, k_here, alpha_value, grouped,
                              std::max<std::int64_t>(k_here, 1), b_here, ldb, piece_beta, out, out_ld);
    else  // A(:, K) * op(B(q's columns of C, K))
      gemm_detail::local_gemm(element_type_v<T>, 'N', b_letter, m, length, k_here, alpha_value, a_here, lda, grouped,
                              std::max<std::int64_t>(length, 1), piece_beta, out, out_ld);
  };
  const scalar zero = to_scalar(T(0));
  for (size_t q = 0; q < processes; ++q)
    if (q != mine && (*c_runs)[q].second > 0)
      multiply_piece(q, buffer + piece_offset[q], by_rows ? (*c_runs)[q].second : m, zero);
  T* const received = buffer + pieces_elements;
  MPI_Request request = start_exchange(buffer, received, mine, processes, grid, comm, [&](size_t p) {
    return std::array<std::int64_t, 4>{piece_elements(p), piece_offset[p], piece_elements(mine), received_offset[p]};
  });
  const std::int64_t length = (*c_runs)[mine].second;
  T* const c_here = c == nullptr ? nullptr
                                 : c + (by_rows ? (*c_runs)[mine].first + (*c_across)[0].first * ldc
                                                : (*c_across)[0].first + (*c_runs)[mine].first * ldc);
  if (length > 0) multiply_piece(mine, c_here, ldc, to_scalar(beta));
  REDIST_MPI_CHECK(mpi::wait_yielding(request));
  // The others' pieces added: by rows length x n, by columns m x length, column-major.
  const std::int64_t rows = by_rows ? length : m, columns = by_rows ? n : length;
  for (size_t p = 0; p < processes; ++p) {
    if (p == mine || length == 0) continue;
    const T* piece = received + received_offset[p];
    for (std::int64_t j = 0; j < columns; ++j) {
      T* column = c_here + j * ldc;
      for (std::int64_t i = 0; i < rows; ++i) column[i] += piece[i + j * rows];
    }
  }
  traced.path("redist", "in_place");
  std::int64_t sent = 0;
  for (size_t q = 0; q < processes; ++q)
    if (q != mine) sent += piece_elements(q);
  traced.execution(trace_detail::seconds_since(started), sent * static_cast<std::int64_t>(sizeof(T)),
                   static_cast<std::int64_t>(processes) - 1);
  return true;
}

// ---- Products handed to ScaLAPACK (the drop-in's p?gemm): delegation.hpp says how the way is chosen --------------
//
// A product's size is its multiply-adds (M*N*K). Fewer than 2^23 go to ScaLAPACK: where redist's multiply overtook
// Debian's ScaLAPACK for cubes (192^3) and tall-skinny problems at 4 ranks with one thread each
// (bench/pdgemm_crossover.cpp; docs/scalapack.md). From 2^31 (about 1300^3) redist's multiply was 1.5x to 74x
// ScaLAPACK's in every recorded run (bench/results/side_by_side.md), so nothing is learned. Between, mid-size
// products and sub-matrices at block-misaligned offsets are where ScaLAPACK's own multiply can win
// (bench/traces/, bench/results/replay.md): learned per class.
delegation::override_cache gemm_override;  // REDIST_PDGEMM_DELEGATE_BELOW as last read
constexpr delegation::size_rule gemm_sizes{"REDIST_PDGEMM_DELEGATE_BELOW", "multiply-adds", std::int64_t{1} << 23,
                                           std::int64_t{1} << 31, &gemm_override};

// M*N*K < limit, without forming a product beyond 64 bits (sizes not negative).
bool fewer_multiply_adds(int m, int n, int k, std::int64_t limit) {
  const std::int64_t mn = std::int64_t{m} * n;  // below 2^62: no overflow
  return k == 0 || mn <= (limit - 1) / k;
}

using delegation::learned_class;
using delegation::power_of_two_at_least;

// A product's class: the same on every process (global arguments and the grid's shape): element type,
// operations, grid, each of M, N, K up to the next power of two, whether each sub-matrix starts on a block boundary.
std::vector<std::int64_t> class_of(element_type type, char ta, char tb, int m, int n, int k, int ia, int ja,
                                   const int* desca, int ib, int jb, const int* descb, int ic, int jc, const int* descc,
                                   const process_grid& grid) {
  std::vector<std::int64_t> c{static_cast<std::int64_t>(delegation::routine_family::gemm),
                              static_cast<std::int64_t>(type),
                              std::toupper(static_cast<unsigned char>(ta)),
                              std::toupper(static_cast<unsigned char>(tb)),
                              power_of_two_at_least(m),
                              power_of_two_at_least(n),
                              power_of_two_at_least(k),
                              grid.proc_rows,
                              grid.proc_cols};
  const std::pair<int, int> offsets[] = {{ia, ja}, {ib, jb}, {ic, jc}};
  const int* descs[] = {desca, descb, descc};
  for (int o = 0; o < 3; ++o) {
    const descriptor d = parse_descriptor(descs[o]);
    c.push_back(delegation::block_aligned(offsets[o].first, offsets[o].second, d.mb, d.nb) ? 1 : 0);
  }
  return c;
}

// The digest of a product's signature (delegation.hpp) under the override `limit`.
template <class T>
delegation::signature_digest signature_of(std::int64_t limit, char ta, char tb, int m, int n, int k, T alpha, int ia,
                                          int ja, const int* desca, int ib, int jb, const int* descb, T beta, int ic,
                                          int jc, const int* descc) {
  delegation::signature_builder s(limit);
  s.add(static_cast<std::int64_t>(delegation::routine_family::gemm) * 16 +
        static_cast<std::int64_t>(element_type_v<T>));
  for (const int w : {int{ta}, int{tb}, m, n, k, ia, ja, ib, jb, ic, jc}) s.add(w);
  std::int64_t scalars[4];
  store_scalar(alpha, scalars);
  store_scalar(beta, scalars + 2);
  for (const std::int64_t w : scalars) s.add(w);
  for (const int* d : {desca, descb, descc}) s.add_descriptor(d);
  return s.digest();
}

// Every call but those of the fast path in gemm below.
template <class T>
[[gnu::noinline]] void gemm_in_full(const char* routine, const char* transa, const char* transb, int m, int n, int k,
                                    T alpha, const T* a, int ia, int ja, const int* desca, const T* b, int ib, int jb,
                                    const int* descb, T beta, T* c, int ic, int jc, const int* descc,
                                    pblas_gemm_fn scalapack) noexcept {
  trace_detail::call_scope traced(routine);
  const call_summary summary{{"transa", "transb"},
                             {transa, transb},
                             m,
                             n,
                             true,
                             k,
                             {{'A', ia, ja, desca}, {'B', ib, jb, descb}, {'C', ic, jc, descc}}};
  traced.describe(describe_call, &summary);
  if (trace_detail::json_fields* f = traced.arguments()) {
    trace_type<T>(*f);
    f->text("transa", std::string(transa ? 1 : 0, transa ? *transa : ' '));
    f->text("transb", std::string(transb ? 1 : 0, transb ? *transb : ' '));
    f->number("m", std::int64_t{m}), f->number("n", std::int64_t{n}), f->number("k", std::int64_t{k});
    trace_scalar(*f, "alpha", alpha), trace_scalar(*f, "beta", beta);
    f->number("ia", std::int64_t{ia}), f->number("ja", std::int64_t{ja}), trace_descriptor(*f, "desca", desca);
    f->number("ib", std::int64_t{ib}), f->number("jb", std::int64_t{jb}), trace_descriptor(*f, "descb", descb);
    f->number("ic", std::int64_t{ic}), f->number("jc", std::int64_t{jc}), trace_descriptor(*f, "descc", descc);
    if (desca != nullptr) trace_grid(*f, "grid", desca[1]);
  }
  const char ta = transa ? *transa : '\0', tb = transb ? *transb : '\0';
  const auto hand_to_scalapack = [&] {
    if (!traced.active()) {
      scalapack(transa, transb, &m, &n, &k, &alpha, a, &ia, &ja, desca, b, &ib, &jb, descb, &beta, c, &ic, &jc, descc);
      return;
    }
    traced.path("delegated");
    const auto started = trace_detail::clock::now();
    scalapack(transa, transb, &m, &n, &k, &alpha, a, &ia, &ja, desca, b, &ib, &jb, descb, &beta, c, &ic, &jc, descc);
    traced.execution(trace_detail::seconds_since(started), 0, 0);
  };
  // The context's state (signatures checked, learned classes), then the way this call goes.
  delegation::context_state* state =
      scalapack != nullptr && descb != nullptr && descc != nullptr ? delegation::state_of(desca) : nullptr;
  delegation::way way;
  try {
    const auto class_of_call = [&]() -> learned_class* {
      if (state == nullptr) return nullptr;
      return &state->classes[class_of(element_type_v<T>, ta, tb, m, n, k, ia, ja, desca, ib, jb, descb, ic, jc, descc,
                                      blacs::grid_info(desca[1]))];
    };
    if (scalapack != nullptr && m >= 0 && n >= 0 && k >= 0) {  // negative sizes: redist reports them
      way = delegation::choose_way(
          gemm_sizes, [&](std::int64_t limit) { return fewer_multiply_adds(m, n, k, limit); }, class_of_call, state,
          [&](std::int64_t limit) {
            return signature_of(limit, ta, tb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc, descc);
          },
          state != nullptr ? desca[1] : -1);
    }
  } catch (const std::exception& e) {
    blacs::fail_after_checks(desca[1], routine, -(desca_pos * 100 + 2), e.what());
    return;
  }
  if (way.checked) {
    hand_to_scalapack();
    return;
  }
  delegation::trial_timer trial(way);
  const bool remembering = delegation::can_remember(state, way);
  descriptor db, dc;
  auto call = agree_on_pblas_call<rank_record>(
      routine, desca, desca_pos, global_arguments(),
      [&](rank_record& mine, const descriptor& da) {
        if (descb != nullptr) db = parse_descriptor(descb);
        if (descc != nullptr) dc = parse_descriptor(descc);
        store_descriptor(da, mine.a);
        store_descriptor(db, mine.b);
        store_descriptor(dc, mine.c);
        mine.ia = ia, mine.ja = ja, mine.ib = ib, mine.jb = jb, mine.ic = ic, mine.jc = jc;
        mine.m = m, mine.n = n, mine.k = k;
        mine.op_a = operation_word<T>(ta);
        mine.op_b = operation_word<T>(tb);
        store_scalar(alpha, mine.alpha);
        store_scalar(beta, mine.beta);
        mine.delegates = delegation::delegates_word(way, remembering);
        mine.info = descb == nullptr ? -descb_pos : descc == nullptr ? -descc_pos : 0;
      },
      [&](const process_grid& grid, const descriptor& da) {
        return check_gemm(grid, ta, tb, m, n, k, ia, ja, da, ib, jb, db, ic, jc, dc);
      });
  if (!call) {
    if (desca != nullptr && desca[1] == -1) traced.dismiss();  // off the grid: not this process's call
    return;
  }
  // Every process would hand it to ScaLAPACK (anything else, a different REDIST_PDGEMM_DELEGATE_BELOW on one
  // process say, takes redist's path everywhere).
  if (delegation::every_process_delegates(call->all, state, way)) {
    trial.start_now();  // a trial of ScaLAPACK's call alone
    hand_to_scalapack();
    return;
  }
  // References, not structured bindings: C++17 lambdas below cannot capture those.
  const descriptor& da = call->da;
  const process_grid& grid = call->grid;
  const std::vector<std::int64_t>& words = call->words;
  MPI_Comm comm = call->comm;
  const int context = call->context, me = call->me, nranks = static_cast<int>(call->all.size());
  const int context_info = -(desca_pos * 100 + 2);
  // PBLAS's quick return.
  if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) {
    traced.path("local");
    return;
  }
  const bool multiply = alpha != T(0) && k != 0;
  const auto replicated = [](const descriptor& d) { return d.rsrc < 0 || d.csrc < 0; };
  if (replicated(dc) || (multiply && (replicated(da) || replicated(db)))) {  // the same on every process
    const descriptor& d = replicated(dc) ? dc : replicated(da) ? da : db;
    const int position = &d == &dc ? descc_pos : &d == &da ? desca_pos : descb_pos;
    blacs::fail_after_checks(context, routine, -(position * 100 + (d.rsrc < 0 ? 9 : 10)),
                             "replicated operands (RSRC or CSRC = -1) are not supported");
    return;
  }
  try {
    const grid_layout c_layout = layout_of(m, n, ic, jc, dc, grid, me);
    if (!multiply) {
      scale_local(c_layout, c, beta);
      traced.path("local");
      return;
    }
    const op op_a = op_of<T>(ta), op_b = op_of<T>(tb);
    const grid_layout a_layout =
        op_a == op::identity ? layout_of(m, k, ia, ja, da, grid, me) : layout_of(k, m, ia, ja, da, grid, me);
    const grid_layout b_layout =
        op_b == op::identity ? layout_of(k, n, ib, jb, db, grid, me) : layout_of(n, k, ib, jb, db, grid, me);
    // Everything that determines the plan: every process's grid position, descriptors, sub-matrices, sizes,
    // operations and MPI_COMM_WORLD rank (the communicator's identity), and the element type; not the scalars, nor
    // what the processes would have handed to ScaLAPACK.
    std::vector<std::int64_t> key;
    key.reserve(words.size() + 1);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    key.insert(key.end(), words.begin(), words.end());
    for (int r = 0; r < nranks; ++r)
      for (const std::size_t scalar : {offsetof(rank_record, alpha), offsetof(rank_record, beta)})
        for (int w = 0; w < 2; ++w) key[static_cast<size_t>(1 + r * record_words + word_at(scalar) + w)] = 0;
    for (int r = 0; r < nranks; ++r)
      key[static_cast<size_t>(1 + r * record_words + word_at(offsetof(rank_record, delegates)))] = 0;
    const std::int64_t c_elements = local_array_elements(dc, grid);
    std::vector<T> a_copy, b_copy;
    const T* a_read = unaliased(a, local_array_elements(da, grid), c, c_elements, a_copy);
    const T* b_read = unaliased(b, local_array_elements(db, grid), c, c_elements, b_copy);
    // Up to the learned range's end: beyond, the distributed multiply's schedule wins over gathering an operand.
    if (fewer_multiply_adds(m, n, k, gemm_sizes.learned_below) &&
        (multiply_in_place(a_layout, b_layout, c_layout, op_a, op_b, a_read, b_read, c, alpha, beta, grid, comm,
                           traced) ||
         sum_in_place(a_layout, b_layout, c_layout, op_a, op_b, a_read, b_read, c, alpha, beta, grid, comm, traced)))
      return;
    const gemm_plan& plan = cached_gemm_plan(comm, std::move(key), [&] {
      const auto started = trace_detail::clock::now();
      gemm_plan made =
          make_gemm_plan(comm, gemm_description{a_layout, b_layout, c_layout, op_a, op_b, element_type_v<T>});
      trial.leave_out(trace_detail::seconds_since(started));  // a trial times the calls, not the planning
      return made;
    });
    plan.execute(c, a_read, b_read, alpha, beta);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
  }
}

// A product whose signature every process checked and delegated for good goes to ScaLAPACK here, from a few lines
// of code and data (a solver calls many such between other work that leaves the caches cold; tracing off: traced
// calls are counted in full).
template <class T>
void gemm(const char* routine, const char* transa, const char* transb, int m, int n, int k, T alpha, const T* a, int ia,
          int ja, const int* desca, const T* b, int ib, int jb, const int* descb, T beta, T* c, int ic, int jc,
          const int* descc, pblas_gemm_fn scalapack) noexcept {
  if (!trace_detail::on() && scalapack != nullptr && descb != nullptr && descc != nullptr && transa != nullptr &&
      transb != nullptr) {
    if (const delegation::context_state* state = delegation::recent_state_of(desca)) {
      if (delegation::remembered(state, gemm_sizes, [&](std::int64_t limit) {
            return signature_of(limit, *transa, *transb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc,
                                descc);
          })) {
        scalapack(transa, transb, &m, &n, &k, &alpha, a, &ia, &ja, desca, b, &ib, &jb, descb, &beta, c, &ic, &jc,
                  descc);
        return;
      }
    }
  }
  gemm_in_full(routine, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc,
               scalapack);
}

}  // namespace
}  // namespace redist::scalapack

using redist::scalapack::gemm;
using redist::scalapack::scalar_at;

// The drop-in's entries (dropin.hpp): calls ScaLAPACK does faster to `scalapack`, none where it is null.
#define REDIST_DROPIN_GEMM(name, T, ROUTINE)                                                                          \
  void redist::scalapack::dropin_##name(                                                                              \
      pblas_gemm_fn scalapack, const char* transa, const char* transb, const int* m, const int* n, const int* k,      \
      const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, const void* b, const int* ib, \
      const int* jb, const int* descb, const void* beta, void* c, const int* ic, const int* jc, const int* descc) {   \
    gemm<T>(ROUTINE, transa, transb, *m, *n, *k, scalar_at<T>(alpha), static_cast<const T*>(a), *ia, *ja, desca,      \
            static_cast<const T*>(b), *ib, *jb, descb, scalar_at<T>(beta), static_cast<T*>(c), *ic, *jc, descc,       \
            scalapack);                                                                                               \
  }

REDIST_DROPIN_GEMM(psgemm, float, "PSGEMM")
REDIST_DROPIN_GEMM(pdgemm, double, "PDGEMM")
REDIST_DROPIN_GEMM(pcgemm, std::complex<float>, "PCGEMM")
REDIST_DROPIN_GEMM(pzgemm, std::complex<double>, "PZGEMM")

// ---- prefixed twins, Fortran convention (PBLAS has no by-value C entry): redist for every product. alpha and beta
// point to one element of the routine's type (two floats/doubles for the complex routines).
#define REDIST_GEMM_TWIN(name)                                                                                       \
  extern "C" void redist_##name(const char* transa, const char* transb, const int* m, const int* n, const int* k,    \
                                const void* alpha, const void* a, const int* ia, const int* ja, const int* desca,    \
                                const void* b, const int* ib, const int* jb, const int* descb, const void* beta,     \
                                void* c, const int* ic, const int* jc, const int* descc) {                           \
    redist::scalapack::dropin_##name(nullptr, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,    \
                                     beta, c, ic, jc, descc);                                                        \
  }                                                                                                                  \
  extern "C" void redist_##name##_(const char* transa, const char* transb, const int* m, const int* n, const int* k, \
                                   const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, \
                                   const void* b, const int* ib, const int* jb, const int* descb, const void* beta,  \
                                   void* c, const int* ic, const int* jc, const int* descc) {                        \
    redist_##name(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);       \
  }

REDIST_GEMM_TWIN(psgemm)
REDIST_GEMM_TWIN(pdgemm)
REDIST_GEMM_TWIN(pcgemm)
REDIST_GEMM_TWIN(pzgemm)
