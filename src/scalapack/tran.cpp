// PBLAS p?tran, p?tranu, p?tranc: sub(C) := beta*sub(C) + alpha*op(sub(A)), op transpose (conjugate
// transpose for p?tranc), sub(A) = A(ia:ia+n-1, ja:ja+m-1), sub(C) = C(ic:ic+m-1, jc:jc+n-1), A and C on
// the same BLACS context; through the transform engine. Prefixed twins redist_p?tran*. See docs/scalapack.md.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "first_error.hpp"
#include "plan_cache.hpp"
#include "staging.hpp"
#include "redist/error.hpp"
#include "redist/mpi/checked.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/transform/plan.hpp"

namespace redist::scalapack {
namespace {

// What every process of the context contributes: its grid position, its view of both operands and of the
// scalars (PBLAS requires them global; gathering them lets every process check that), and its own argument
// error.
struct rank_record {
  std::int64_t my_row, my_col;
  std::int64_t a[descriptor_length], c[descriptor_length];  // normalized descriptors (DTYPE as given)
  std::int64_t ia, ja, ic, jc, m, n, world_rank;
  std::int64_t alpha[2], beta[2];  // the scalars' bytes (a complex<double> fills both words)
  std::int64_t info;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));
constexpr int word_at(std::size_t offset) { return static_cast<int>(offset / sizeof(std::int64_t)); }

// Argument positions: M=1 N=2 ALPHA=3 A=4 IA=5 JA=6 DESCA=7 BETA=8 C=9 IC=10 JC=11 DESCC=12.
constexpr int desca_pos = 7, descc_pos = 12;

void store(const descriptor& d, std::int64_t* out) {
  const auto values = d.normalized();
  std::copy(values.begin(), values.end(), out);
  out[0] = d.dtype;
}

template <class T>
void store_scalar(T value, std::int64_t* out) {
  static_assert(sizeof(T) <= 2 * sizeof(std::int64_t));
  out[0] = out[1] = 0;
  std::memcpy(out, &value, sizeof(T));
}

// The arguments every process must pass alike and the info that reports a difference (LLD, CTXT and DTYPE are
// each process's own).
std::vector<global_argument> global_arguments() {
  std::vector<global_argument> out{{word_at(offsetof(rank_record, m)), -1},
                                   {word_at(offsetof(rank_record, n)), -2},
                                   {word_at(offsetof(rank_record, alpha)), -3},
                                   {word_at(offsetof(rank_record, alpha)) + 1, -3},
                                   {word_at(offsetof(rank_record, ia)), -5},
                                   {word_at(offsetof(rank_record, ja)), -6},
                                   {word_at(offsetof(rank_record, beta)), -8},
                                   {word_at(offsetof(rank_record, beta)) + 1, -8},
                                   {word_at(offsetof(rank_record, ic)), -10},
                                   {word_at(offsetof(rank_record, jc)), -11}};
  for (const auto& [offset, position] : {std::pair{offsetof(rank_record, a), desca_pos},
                                         std::pair{offsetof(rank_record, c), descc_pos}})
    for (const desc_entry e : {desc_entry::m, desc_entry::n, desc_entry::imb, desc_entry::inb, desc_entry::mb,
                               desc_entry::nb, desc_entry::rsrc, desc_entry::csrc})
      out.push_back({word_at(offset) + static_cast<int>(e), -(position * 100 + static_cast<int>(e) + 1)});
  return out;
}

template <class T>
void tran(const char* routine, op operation, int m, int n, T alpha, const T* a, int ia, int ja, const int* desca,
          T beta, T* c, int ic, int jc, const int* descc) noexcept {
  if (!blacs::available()) {
    blacs::report_problem(routine, blacs::unavailable_reason());
    return;
  }
  if (desca == nullptr) {  // no context to reach the others through
    blacs::report_error(-1, routine, -desca_pos);
    return;
  }
  const descriptor da = parse_descriptor(desca);
  const int context = static_cast<int>(da.ctxt);
  process_grid grid = blacs::grid_info(context);
  if (!grid.contains_me()) {
    // CTXT -1 is what BLACS gives a process outside a grid: it has no part in the call (as in REDIST). Another
    // negative, unknown or exited context is reported here alone: it cannot reach the others.
    if (context != -1) blacs::report_error(context, routine, -(desca_pos * 100 + 2));
    return;
  }
  const int context_info = -(desca_pos * 100 + 2);
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<rank_record> all;
  descriptor dc;
  int me = 0;
  try {
    int info = descc == nullptr ? -descc_pos : 0;
    if (descc != nullptr) dc = parse_descriptor(descc);
    comm = blacs::communicator(context);
    me = mpi::rank(comm);
    int world_rank = 0;
    REDIST_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    rank_record mine{};
    mine.my_row = grid.my_row;
    mine.my_col = grid.my_col;
    store(da, mine.a);
    store(dc, mine.c);
    mine.ia = ia, mine.ja = ja, mine.ic = ic, mine.jc = jc, mine.m = m, mine.n = n, mine.world_rank = world_rank;
    store_scalar(alpha, mine.alpha);
    store_scalar(beta, mine.beta);
    mine.info = info;
    all.resize(static_cast<size_t>(mpi::size(comm)));
    REDIST_MPI_CHECK(MPI_Allgather(&mine, record_words, MPI_INT64_T, all.data(), record_words, MPI_INT64_T, comm));
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
    return;
  }
  const int nranks = static_cast<int>(all.size());
  grid.position_ranks.assign(static_cast<size_t>(grid.proc_rows * grid.proc_cols), -1);
  for (int r = 0; r < nranks; ++r) {
    const rank_record& x = all[static_cast<size_t>(r)];
    if (x.my_row >= 0 && x.my_row < grid.proc_rows && x.my_col >= 0 && x.my_col < grid.proc_cols)
      grid.position_ranks[static_cast<size_t>(x.my_row * grid.proc_cols + x.my_col)] = r;
  }

  // Arguments that differ between processes, then PBLAS's checks (LLD is local: the first error over all
  // processes is reported everywhere). Every process sees the same records, so all take the same branches.
  std::vector<std::int64_t> words(reinterpret_cast<const std::int64_t*>(all.data()),
                                  reinterpret_cast<const std::int64_t*>(all.data()) + all.size() * record_words);
  int differing = -1;
  const int disagreement =
      first_disagreement(words, record_words, global_arguments(), [](int, int) { return true; }, differing);
  int info = disagreement;
  for (const rank_record& r : all) info = first_error(info, static_cast<int>(r.info));
  if (info != 0 && info == disagreement && me == 0)
    blacs::report_problem(routine, "process " + std::to_string(differing) + " of the context passed a different " +
                                       "value of argument " + std::to_string(-info) +
                                       " than the others; it must be the same on every process");
  try {
    if (info == 0) info = agree_on_first_error(comm, check_tran(grid, m, n, ia, ja, da, ic, jc, dc));
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
    return;
  }
  if (info != 0) {
    blacs::report_error(context, routine, info);
    return;
  }
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;  // PBLAS's quick return
  if (da.rsrc < 0 || da.csrc < 0 || dc.rsrc < 0 || dc.csrc < 0) {  // the same on every process
    const descriptor& d = da.rsrc < 0 || da.csrc < 0 ? da : dc;
    const int position = &d == &da ? desca_pos : descc_pos;
    blacs::fail_after_checks(context, routine, -(position * 100 + (d.rsrc < 0 ? 9 : 10)),
                             "replicated operands (RSRC or CSRC = -1) are not supported");
    return;
  }
  try {
    const grid_layout target = layout_of(m, n, ic, jc, dc, grid, me);
    const grid_layout source = layout_of(n, m, ia, ja, da, grid, me);
    std::vector<std::int64_t> key;
    key.reserve(words.size() + 2);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    key.push_back(static_cast<std::int64_t>(operation) + 16);  // never equal to a p?gemr2d key's start
    key.insert(key.end(), words.begin(), words.end());
    for (int r = 0; r < nranks; ++r)  // one plan for every alpha and beta
      for (const std::size_t scalar : {offsetof(rank_record, alpha), offsetof(rank_record, beta)})
        for (int w = 0; w < 2; ++w) key[static_cast<size_t>(2 + r * record_words + word_at(scalar) + w)] = 0;
    const transform_plan& plan =
        cached_plan(comm, std::move(key), [&] { return make_plan(comm, target, source, operation, element_type_v<T>); });
    std::vector<T> a_copy;
    const T* a_read = unaliased(a, local_array_elements(da, grid), c, local_array_elements(dc, grid), a_copy);
    plan.execute(c, a_read, alpha, beta);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
  }
}

template <class T>
T scalar_at(const void* p) {
  return *static_cast<const T*>(p);
}

}  // namespace
}  // namespace redist::scalapack

using redist::scalapack::scalar_at;
using redist::scalapack::tran;

// ---- prefixed twins, Fortran convention (PBLAS has no by-value C entry for these). alpha and beta point to
// one element of the routine's type (two floats/doubles for the complex routines).
#define REDIST_TRAN_TWIN(name, T, OP, ROUTINE)                                                                     \
  extern "C" void redist_##name(const int* m, const int* n, const void* alpha, const void* a, const int* ia,    \
                                const int* ja, const int* desca, const void* beta, void* c, const int* ic,      \
                                const int* jc, const int* descc) {                                              \
    tran<T>(ROUTINE, OP, *m, *n, scalar_at<T>(alpha), static_cast<const T*>(a), *ia, *ja, desca,                 \
            scalar_at<T>(beta), static_cast<T*>(c), *ic, *jc, descc);                                            \
  }                                                                                                              \
  extern "C" void redist_##name##_(const int* m, const int* n, const void* alpha, const void* a, const int* ia, \
                                   const int* ja, const int* desca, const void* beta, void* c, const int* ic,   \
                                   const int* jc, const int* descc) {                                           \
    redist_##name(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);                                        \
  }

REDIST_TRAN_TWIN(pstran, float, redist::op::transpose, "PSTRAN")
REDIST_TRAN_TWIN(pdtran, double, redist::op::transpose, "PDTRAN")
REDIST_TRAN_TWIN(pctranu, std::complex<float>, redist::op::transpose, "PCTRANU")
REDIST_TRAN_TWIN(pztranu, std::complex<double>, redist::op::transpose, "PZTRANU")
REDIST_TRAN_TWIN(pctranc, std::complex<float>, redist::op::conj_transpose, "PCTRANC")
REDIST_TRAN_TWIN(pztranc, std::complex<double>, redist::op::conj_transpose, "PZTRANC")
