// SPDX-License-Identifier: BSD-3-Clause
// ScaLAPACK's REDIST routines through the transform engine: p?gemr2d, B(ib:ib+m-1, jb:jb+n-1) =
// A(ia:ia+m-1, ja:ja+n-1) between two block-cyclic matrices on any two BLACS grids, and p?trmr2d, the same
// for the upper or lower trapezoid of the sub-matrix only; the prefixed twins (redist_p?gemr2d,
// redist_p?trmr2d). See docs/scalapack.md.
#include <algorithm>
#include <cctype>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agreed_calls.hpp"
#include "blacs.hpp"
#include "call_summary.hpp"
#include "first_error.hpp"
#include "mpi/checked.hpp"
#include "mpi/watchdog.hpp"
#include "plan_cache.hpp"
#include "redist/error.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/transform/plan.hpp"
#include "staging.hpp"
#include "traced_arguments.hpp"

namespace redist::scalapack {
namespace {

// Argument positions of the routines' arguments: p?gemr2d (M, N, A, IA, JA, DESCA, B, IB, JB, DESCB, ICTXT);
// p?trmr2d has UPLO and DIAG first.
struct argument_positions {
  int m, n, ia, ja, desca, ib, jb, descb;
};
constexpr argument_positions gemr2d_positions{1, 2, 4, 5, 6, 8, 9, 10};
constexpr argument_positions trmr2d_positions{3, 4, 6, 7, 8, 10, 11, 12};
constexpr int uplo_pos = 1, diag_pos = 2;

// What every rank contributes so that all know both grids and both descriptors (a process outside a
// grid passes a descriptor whose CTXT is -1 and whose other entries need not be set, as in REDIST).
struct operand_record {
  std::int64_t rows, cols, my_row, my_col;
  std::int64_t dtype, m, n, imb, inb, mb, nb, rsrc, csrc, lld;
  std::int64_t i, j;
};
struct rank_record {
  operand_record a, b;
  std::int64_t m, n, world_rank;
  std::int64_t region_shape, region_diagonal;  // region_shape -1: this process's UPLO or DIAG is wrong
  std::int64_t info;                           // this process's own argument error (0: none)
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));
int operand_word(bool a, std::size_t offset) {
  return word_at((a ? offsetof(rank_record, a) : offsetof(rank_record, b)) + offset);
}

operand_record describe_operand(const process_grid& g, const descriptor& d, std::int64_t i, std::int64_t j) {
  return operand_record{g.proc_rows, g.proc_cols, g.my_row, g.my_col, d.dtype, d.m,   d.n, d.imb,
                        d.inb,       d.mb,        d.nb,     d.rsrc,   d.csrc,  d.lld, i,   j};
}

// One operand as all ranks agree on it: the grid (with the rank of every position), the descriptor's
// global entries from the grid's first process, and this rank's own LLD.
struct agreed_operand {
  process_grid grid;
  descriptor desc;
  std::int64_t i = 1, j = 1;
  std::string problem;  // why the processes' views cannot be combined (empty when fine)
};

agreed_operand agree_operand(const std::vector<rank_record>& all, int me, bool use_a) {
  agreed_operand out;
  const operand_record* first = nullptr;
  for (const rank_record& r : all) {
    const operand_record& o = use_a ? r.a : r.b;
    if (o.my_row < 0) continue;
    if (!first) first = &o;
    if (o.rows != first->rows || o.cols != first->cols) {
      out.problem = "the processes of the grid see different grid shapes";
      return out;
    }
  }
  if (!first) {
    out.problem = "no process of the context is on the grid";
    return out;
  }
  out.grid.proc_rows = static_cast<int>(first->rows);
  out.grid.proc_cols = static_cast<int>(first->cols);
  out.grid.position_ranks.assign(static_cast<size_t>(first->rows * first->cols), -1);
  for (int rank = 0; rank < static_cast<int>(all.size()); ++rank) {
    const operand_record& o = use_a ? all[static_cast<size_t>(rank)].a : all[static_cast<size_t>(rank)].b;
    if (o.my_row < 0) continue;
    int& slot = out.grid.position_ranks[static_cast<size_t>(o.my_row * first->cols + o.my_col)];
    if (slot >= 0) {
      out.problem = "two processes claim the same grid position";
      return out;
    }
    slot = rank;
  }
  if (std::find(out.grid.position_ranks.begin(), out.grid.position_ranks.end(), -1) != out.grid.position_ranks.end()) {
    out.problem = "a grid position has no process of the operation's context";
    return out;
  }
  const operand_record& mine = use_a ? all[static_cast<size_t>(me)].a : all[static_cast<size_t>(me)].b;
  out.grid.my_row = static_cast<int>(mine.my_row);
  out.grid.my_col = static_cast<int>(mine.my_col);
  descriptor& d = out.desc;
  d.dtype = first->dtype;
  d.m = first->m;
  d.n = first->n;
  d.imb = first->imb;
  d.inb = first->inb;
  d.mb = first->mb;
  d.nb = first->nb;
  d.rsrc = first->rsrc;
  d.csrc = first->csrc;
  d.lld = mine.my_row >= 0 ? mine.lld : 1;
  out.i = first->i;
  out.j = first->j;
  return out;
}

// The arguments every process must pass alike, with the info that reports a difference: M, N, UPLO/DIAG (one
// word each), and for each operand the sub-matrix's IA, JA and the descriptor's global entries, compared among
// the processes on that operand's grid (LLD and CTXT are local; DTYPE is not read).
std::vector<global_argument> global_arguments(const argument_positions& pos, bool trapezoid) {
  std::vector<global_argument> out{{word_at(offsetof(rank_record, m)), -pos.m},
                                   {word_at(offsetof(rank_record, n)), -pos.n}};
  if (trapezoid) {
    out.push_back({word_at(offsetof(rank_record, region_shape)), -uplo_pos});
    out.push_back({word_at(offsetof(rank_record, region_diagonal)), -diag_pos});
  }
  for (const bool a : {true, false}) {
    const int d = a ? pos.desca : pos.descb;
    out.push_back({operand_word(a, offsetof(operand_record, i)), -(a ? pos.ia : pos.ib)});
    out.push_back({operand_word(a, offsetof(operand_record, j)), -(a ? pos.ja : pos.jb)});
    out.push_back({operand_word(a, offsetof(operand_record, rows)), -(d * 100 + 2)});
    out.push_back({operand_word(a, offsetof(operand_record, cols)), -(d * 100 + 2)});
    out.push_back({operand_word(a, offsetof(operand_record, m)), -(d * 100 + 3)});
    out.push_back({operand_word(a, offsetof(operand_record, n)), -(d * 100 + 4)});
    out.push_back({operand_word(a, offsetof(operand_record, mb)), -(d * 100 + 5)});
    out.push_back({operand_word(a, offsetof(operand_record, nb)), -(d * 100 + 6)});
    out.push_back({operand_word(a, offsetof(operand_record, rsrc)), -(d * 100 + 9)});
    out.push_back({operand_word(a, offsetof(operand_record, csrc)), -(d * 100 + 10)});
  }
  return out;
}

// REDIST's checks of one operand as an info code (positions of IA, JA, DESC; descriptor entries numbered
// as PBLAS does).
int operand_info(std::int64_t m, std::int64_t n, const agreed_operand& op, int i_pos, int j_pos, int desc_pos) {
  const descriptor& d = op.desc;
  switch (check_gemr2d_operand(m, n, op.i, op.j, d, op.grid)) {
    case gemr2d_problem::none:
      return 0;
    case gemr2d_problem::source_process:
      return d.rsrc < 0 || d.rsrc >= op.grid.proc_rows ? -(desc_pos * 100 + 9) : -(desc_pos * 100 + 10);
    case gemr2d_problem::submatrix:
      return op.i < 1 || op.i + m - 1 > d.m ? -i_pos : -j_pos;
    case gemr2d_problem::block_size:
      if (d.imb < 1) return -(desc_pos * 100 + 5);
      if (d.inb < 1) return -(desc_pos * 100 + 6);
      return d.mb < 1 ? -(desc_pos * 100 + 7) : -(desc_pos * 100 + 8);
    case gemr2d_problem::leading_dimension:
      return -(desc_pos * 100 + 11);
  }
  return 0;
}

// The elements of the m x n sub-matrix p?trmr2d copies, as REDIST (`p?trmr.c`) selects them: UPLO 'U' keeps
// row i of column j (0-based) when i <= j + max(m - n, 0), 'L' when i >= j - max(n - m, 0), so a
// trapezoid's diagonal ends in the bottom-right corner (a tall upper or wide lower one is whole above or
// left of it); DIAG 'U' leaves that diagonal out. Either letter in either case; 0 or the info of a wrong one.
int trapezoid_of(const char* uplo, const char* diag, std::int64_t m, std::int64_t n, element_region& region) {
  const char u = uplo ? static_cast<char>(std::toupper(static_cast<unsigned char>(*uplo))) : '\0';
  const char d = diag ? static_cast<char>(std::toupper(static_cast<unsigned char>(*diag))) : '\0';
  if (u != 'U' && u != 'L') return -uplo_pos;
  if (d != 'U' && d != 'N') return -diag_pos;
  const std::int64_t unit = d == 'U' ? 1 : 0;
  region = u == 'U' ? element_region{region_shape::upper, -std::max<std::int64_t>(m - n, 0) + unit}
                    : element_region{region_shape::lower, std::max<std::int64_t>(n - m, 0) - unit};
  return 0;
}

// A descriptor as REDIST reads it: 9 entries whatever DTYPE says; a process outside the grid passes CTXT < 0
// and nothing else of it is read (nor anything when the descriptor is null: `info` gets its position).
descriptor read_descriptor(const int* desc, int desc_pos, int& info) {
  if (desc == nullptr) {
    info = first_error(info, -desc_pos);
    return descriptor{};
  }
  return desc[1] >= 0 ? parse_descriptor(desc, dtype_fallback::read_as_type1) : descriptor{};
}

// What an agreement on a copy concludes: every process's arguments (the plan's key), both operands as agreed, and
// this process's view of them.
struct agreed_copy {
  std::vector<std::int64_t> words;
  agreed_operand A, B;
  grid_layout source, target;
};

// The copy an agreement concluded, through its cached plan.
template <class T>
void execute_copy(const char* routine, const agreed_copy& copy, MPI_Comm comm, const T* a, T* b,
                  const element_region& region, int context, int ictxt_info) noexcept {
  try {
    // The records hold the region too, so p?gemr2d and each trapezoid of p?trmr2d have their own plans.
    std::vector<std::int64_t> key;
    key.reserve(copy.words.size() + 1);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    key.insert(key.end(), copy.words.begin(), copy.words.end());
    const transform_plan& plan = cached_plan(comm, std::move(key), [&](bool one_shot) {
      transform_options options;
      options.one_shot = one_shot;
      return make_transform_plan(
          comm, {job_description{copy.target, copy.source, op::identity, element_type_v<T>, region}}, options);
    });
    const agreed_operand &A = copy.A, &B = copy.B;
    std::vector<T> a_copy;
    const T* a_read = A.grid.contains_me() ? unaliased(a, local_array_elements(A.desc, A.grid), b,
                                                       local_array_elements(B.desc, B.grid), a_copy)
                                           : nullptr;
    plan.execute(B.grid.contains_me() ? b : nullptr, a_read);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, ictxt_info, e.what());
  }
}

// A context of B's or A's descriptor whose grid holds this process (B's first: the target grid is the one a
// caller most often also passes as ICTXT), or -1.
int reachable_grid(const int* desca, const int* descb) {
  for (const int* desc : {descb, desca})
    if (desc != nullptr && blacs::holds_me(desc[1])) return desc[1];
  return -1;
}

// p?gemr2d (region all) and p?trmr2d (a trapezoid, or region_info the info of a wrong UPLO or DIAG).
//
// Every process of ICTXT gathers every process's arguments in one collective and all decide the same from them:
// arguments that differ between processes, and the reference's checks, are reported through PXERBLA on every
// process with nothing written. A failure after that agreement aborts (blacs::fail_after_checks). Arguments every
// process passed alike at an earlier agreement that succeeded take its conclusion after one two-word allreduce
// (agreed_calls.hpp).
template <class T>
void redistribute(const char* routine, const argument_positions& pos, bool trapezoid, int region_info,
                  element_region region, int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib,
                  int jb, const int* descb, int context, trace_detail::call_scope& traced) noexcept {
  const bool empty = m == 0 || n == 0;
  if (!blacs::available()) {
    if (!empty) blacs::report_problem(routine, blacs::unavailable_reason());
    return;
  }
  // REDIST reads nothing when the copy is empty, ICTXT included. Otherwise an unknown or exited context, or one
  // without this process, is ICTXT's error; the process joins the others' agreement through the grid of B's or
  // A's descriptor where it is on one (ICTXT is often that grid: then every process reports ICTXT's position, as
  // for any argument wrong on one process); where it is on neither it cannot reach them and reports alone (their
  // wait is the watchdog's).
  const int ictxt_info = -(pos.descb + 1);
  int own_info = 0;
  if (!blacs::holds_me(context)) {
    const int through = empty ? -1 : reachable_grid(desca, descb);
    if (through < 0) {
      if (!empty) blacs::report_error(context, routine, ictxt_info);
      if (context == -1) traced.dismiss();  // off ICTXT's grid: not this process's call
      return;
    }
    context = through;
    own_info = ictxt_info;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<rank_record> all;
  int me = 0;
  std::vector<std::int64_t> my_arguments;
  const agreed_copy* agreed_before = nullptr;
  try {
    comm = blacs::communicator(context);
    me = mpi::rank(comm);
    int world_rank = 0;
    REDIST_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));

    int info = 0;
    descriptor da, db;
    if (!empty) {
      info = first_error(region_info, own_info);
      if (m < 0) info = first_error(info, -pos.m);
      if (n < 0) info = first_error(info, -pos.n);
      da = read_descriptor(desca, pos.desca, info);
      db = read_descriptor(descb, pos.descb, info);
    }
    const process_grid ga = blacs::grid_info(static_cast<int>(da.ctxt));
    const process_grid gb = blacs::grid_info(static_cast<int>(db.ctxt));
    rank_record mine{describe_operand(ga, da, ia, ja),
                     describe_operand(gb, db, ib, jb),
                     m,
                     n,
                     world_rank,
                     region_info == 0 ? static_cast<std::int64_t>(region.shape) : -1,
                     region.diagonal,
                     info};
    const auto* first = reinterpret_cast<const std::int64_t*>(&mine);
    my_arguments.assign(first, first + record_words);
    my_arguments.insert(my_arguments.end(), {context, ga.proc_rows, ga.proc_cols, gb.proc_rows, gb.proc_cols,
                                             static_cast<std::int64_t>(element_type_v<T>)});
    const mpi::wait_label label(nullptr, "the processes' arguments compared");
    agreed_before = agreed_calls<agreed_copy>::find(comm, my_arguments);
    if (agreed_before == nullptr) {
      all.resize(static_cast<size_t>(mpi::size(comm)));
      REDIST_MPI_CHECK(
          mpi::allgather_yielding(&mine, record_words, MPI_INT64_T, all.data(), record_words, MPI_INT64_T, comm));
    }
  } catch (const std::exception& e) {
    // Nothing but MPI can fail before the records are gathered; the others may be waiting in the gather.
    blacs::fail_after_checks(context, routine, ictxt_info, e.what());
    return;
  }
  if (agreed_before != nullptr) {
    const agreed_copy copy = *agreed_before;  // what the map holds may go at the next call's remembering
    execute_copy(routine, copy, comm, a, b, region, context, ictxt_info);
    return;
  }

  // From here every process decides the same from the same records, until the LLD check.
  std::vector<std::int64_t> words(reinterpret_cast<const std::int64_t*>(all.data()),
                                  reinterpret_cast<const std::int64_t*>(all.data()) + all.size() * record_words);
  const auto on_grid = [&](int r, int info) {
    const rank_record& x = all[static_cast<size_t>(r)];
    const bool empty_here = x.m == 0 || x.n == 0;
    if (info == -pos.m || info == -pos.n) return true;
    if (empty_here) return false;  // nothing else is read from a process whose copy is empty
    if (info == -uplo_pos || info == -diag_pos) return x.region_shape >= 0;
    const int d = -info / 100;
    const bool a_side = (d == pos.desca) || info == -pos.ia || info == -pos.ja;
    return (a_side ? x.a.my_row : x.b.my_row) >= 0;
  };
  // An empty copy everywhere: nothing read, nothing communicated (REDIST returns at once, whatever the rest).
  if (std::all_of(all.begin(), all.end(), [](const rank_record& r) { return r.m == 0 || r.n == 0; })) {
    traced.path("local");
    return;
  }
  int differing = -1;
  const int disagreement =
      first_disagreement(words, record_words, global_arguments(pos, trapezoid), on_grid, differing);
  int info = disagreement;
  for (const rank_record& r : all) info = first_error(info, static_cast<int>(r.info));
  std::string why;
  if (info != 0 && info == disagreement)
    why = "process " + std::to_string(differing) + " of the context passed a different value of argument " +
          std::to_string(-info) + " than the others; it must be the same on every process";
  agreed_operand A, B;
  if (info == 0) {
    A = agree_operand(all, me, true);
    B = agree_operand(all, me, false);
    if (!A.problem.empty()) info = -(pos.desca * 100 + 2), why = "A: " + A.problem;
    if (!B.problem.empty())
      info = first_error(info, -(pos.descb * 100 + 2)), why = why.empty() ? "B: " + B.problem : why;
  }
  // The reference's checks; LLD is local, so the first error is agreed over all processes.
  grid_layout source, target;
  int local = info;
  if (local == 0) local = operand_info(m, n, A, pos.ia, pos.ja, pos.desca);
  if (local == 0) local = operand_info(m, n, B, pos.ib, pos.jb, pos.descb);
  if (local == 0) {
    try {
      source = layout_of(m, n, A.i, A.j, A.desc, A.grid, me);
    } catch (const error&) {
      local = -(pos.desca * 100 + 1);
    }
  }
  if (local == 0) {
    try {
      target = layout_of(m, n, B.i, B.j, B.desc, B.grid, me);
    } catch (const error&) {
      local = -(pos.descb * 100 + 1);
    }
  }
  try {
    info = info != 0 ? info : agree_on_first_error(comm, local);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, ictxt_info, e.what());
    return;
  }
  if (info != 0) {
    if (!why.empty() && me == 0) blacs::report_problem(routine, why);
    blacs::report_error(context, routine, info);
    return;
  }

  agreed_copy copy{std::move(words), std::move(A), std::move(B), std::move(source), std::move(target)};
  agreed_calls<agreed_copy>::remember(comm, std::move(my_arguments), copy.words, copy, 2 * copy.words.size());
  execute_copy(routine, copy, comm, a, b, region, context, ictxt_info);
}

// The arguments of a p?gemr2d or p?trmr2d call for its trace line.
template <class T>
void trace_arguments(trace_detail::json_fields& f, int m, int n, int ia, int ja, const int* desca, int ib, int jb,
                     const int* descb, int context) {
  trace_type<T>(f);
  f.number("m", std::int64_t{m}), f.number("n", std::int64_t{n});
  f.number("ia", std::int64_t{ia}), f.number("ja", std::int64_t{ja}), trace_descriptor(f, "desca", desca, true);
  f.number("ib", std::int64_t{ib}), f.number("jb", std::int64_t{jb}), trace_descriptor(f, "descb", descb, true);
  f.number("ictxt", std::int64_t{context});
  if (desca != nullptr) trace_grid(f, "grid_a", desca[1]);
  if (descb != nullptr) trace_grid(f, "grid_b", descb[1]);
  trace_grid(f, "grid", context);
}

template <class T>
void gemr2d(const char* routine, int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb,
            const int* descb, int context) noexcept {
  trace_detail::call_scope traced(routine);
  const call_summary summary{{}, {}, m, n, false, 0, {{'A', ia, ja, desca}, {'B', ib, jb, descb}}, &context};
  traced.describe(describe_call, &summary);
  if (trace_detail::json_fields* f = traced.arguments())
    trace_arguments<T>(*f, m, n, ia, ja, desca, ib, jb, descb, context);
  redistribute<T>(routine, gemr2d_positions, false, 0, element_region{}, m, n, a, ia, ja, desca, b, ib, jb, descb,
                  context, traced);
}

template <class T>
void trmr2d(const char* routine, const char* uplo, const char* diag, int m, int n, const T* a, int ia, int ja,
            const int* desca, T* b, int ib, int jb, const int* descb, int context) noexcept {
  trace_detail::call_scope traced(routine);
  const call_summary summary{
      {"uplo", "diag"}, {uplo, diag}, m, n, false, 0, {{'A', ia, ja, desca}, {'B', ib, jb, descb}}, &context};
  traced.describe(describe_call, &summary);
  if (trace_detail::json_fields* f = traced.arguments()) {
    f->text("uplo", std::string(uplo ? 1 : 0, uplo ? *uplo : ' '));
    f->text("diag", std::string(diag ? 1 : 0, diag ? *diag : ' '));
    trace_arguments<T>(*f, m, n, ia, ja, desca, ib, jb, descb, context);
  }
  element_region region;
  const int region_info = trapezoid_of(uplo, diag, m, n, region);
  redistribute<T>(routine, trmr2d_positions, true, region_info, region, m, n, a, ia, ja, desca, b, ib, jb, descb,
                  context, traced);
}

}  // namespace
}  // namespace redist::scalapack

using redist::scalapack::gemr2d;
using redist::scalapack::trmr2d;

// ---- prefixed twins: Fortran convention (every argument by reference) and C convention (by value). A and
// B are untyped here to give C one declaration for every type (redist.h).
#define REDIST_GEMR2D_TWINS(prefix, T, ROUTINE)                                                                       \
  extern "C" void redist_##prefix##gemr2d(const int* m, const int* n, const void* a, const int* ia, const int* ja,    \
                                          const int* desca, void* b, const int* ib, const int* jb, const int* descb,  \
                                          const int* ictxt) {                                                         \
    gemr2d<T>(ROUTINE, *m, *n, static_cast<const T*>(a), *ia, *ja, desca, static_cast<T*>(b), *ib, *jb, descb,        \
              *ictxt);                                                                                                \
  }                                                                                                                   \
  extern "C" void redist_##prefix##gemr2d_(const int* m, const int* n, const void* a, const int* ia, const int* ja,   \
                                           const int* desca, void* b, const int* ib, const int* jb, const int* descb, \
                                           const int* ictxt) {                                                        \
    redist_##prefix##gemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                                         \
  }                                                                                                                   \
  extern "C" void redist_C##prefix##gemr2d(int m, int n, const void* a, int ia, int ja, const int* desca, void* b,    \
                                           int ib, int jb, const int* descb, int ictxt) {                             \
    gemr2d<T>(ROUTINE, m, n, static_cast<const T*>(a), ia, ja, desca, static_cast<T*>(b), ib, jb, descb, ictxt);      \
  }

REDIST_GEMR2D_TWINS(pi, std::int32_t, "PIGEMR2D")
REDIST_GEMR2D_TWINS(ps, float, "PSGEMR2D")
REDIST_GEMR2D_TWINS(pd, double, "PDGEMR2D")
REDIST_GEMR2D_TWINS(pc, std::complex<float>, "PCGEMR2D")
REDIST_GEMR2D_TWINS(pz, std::complex<double>, "PZGEMR2D")

// p?trmr2d: UPLO and DIAG by reference in both conventions, as REDIST's Cp?trmr2d takes them. A Fortran
// caller's hidden lengths of UPLO and DIAG follow the declared arguments and are not read (only the first
// character counts, as in REDIST).
#define REDIST_TRMR2D_TWINS(prefix, T, ROUTINE)                                                                      \
  extern "C" void redist_##prefix##trmr2d(const char* uplo, const char* diag, const int* m, const int* n,            \
                                          const void* a, const int* ia, const int* ja, const int* desca, void* b,    \
                                          const int* ib, const int* jb, const int* descb, const int* ictxt) {        \
    trmr2d<T>(ROUTINE, uplo, diag, *m, *n, static_cast<const T*>(a), *ia, *ja, desca, static_cast<T*>(b), *ib, *jb,  \
              descb, *ictxt);                                                                                        \
  }                                                                                                                  \
  extern "C" void redist_##prefix##trmr2d_(const char* uplo, const char* diag, const int* m, const int* n,           \
                                           const void* a, const int* ia, const int* ja, const int* desca, void* b,   \
                                           const int* ib, const int* jb, const int* descb, const int* ictxt) {       \
    redist_##prefix##trmr2d(uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);                            \
  }                                                                                                                  \
  extern "C" void redist_C##prefix##trmr2d(const char* uplo, const char* diag, int m, int n, const void* a, int ia,  \
                                           int ja, const int* desca, void* b, int ib, int jb, const int* descb,      \
                                           int ictxt) {                                                              \
    trmr2d<T>(ROUTINE, uplo, diag, m, n, static_cast<const T*>(a), ia, ja, desca, static_cast<T*>(b), ib, jb, descb, \
              ictxt);                                                                                                \
  }

REDIST_TRMR2D_TWINS(pi, std::int32_t, "PITRMR2D")
REDIST_TRMR2D_TWINS(ps, float, "PSTRMR2D")
REDIST_TRMR2D_TWINS(pd, double, "PDTRMR2D")
REDIST_TRMR2D_TWINS(pc, std::complex<float>, "PCTRMR2D")
REDIST_TRMR2D_TWINS(pz, std::complex<double>, "PZTRMR2D")
