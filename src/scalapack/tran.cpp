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
#include "pblas_call.hpp"
#include "plan_cache.hpp"
#include "staging.hpp"
#include "traced_arguments.hpp"
#include "redist/error.hpp"
#include "../mpi/checked.hpp"
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

// Argument positions: M=1 N=2 ALPHA=3 A=4 IA=5 JA=6 DESCA=7 BETA=8 C=9 IC=10 JC=11 DESCC=12.
constexpr int desca_pos = 7, descc_pos = 12;

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
  add_descriptor_arguments(out, offsetof(rank_record, a), desca_pos);
  add_descriptor_arguments(out, offsetof(rank_record, c), descc_pos);
  return out;
}

template <class T>
void tran(const char* routine, op operation, int m, int n, T alpha, const T* a, int ia, int ja, const int* desca,
          T beta, T* c, int ic, int jc, const int* descc) noexcept {
  trace_detail::call_scope traced(routine);
  if (trace_detail::json_fields* f = traced.arguments()) {
    trace_type<T>(*f);
    f->number("m", std::int64_t{m}), f->number("n", std::int64_t{n});
    trace_scalar(*f, "alpha", alpha), trace_scalar(*f, "beta", beta);
    f->number("ia", std::int64_t{ia}), f->number("ja", std::int64_t{ja}), trace_descriptor(*f, "desca", desca);
    f->number("ic", std::int64_t{ic}), f->number("jc", std::int64_t{jc}), trace_descriptor(*f, "descc", descc);
    if (desca != nullptr) trace_grid(*f, "grid", desca[1]);
  }
  descriptor dc;
  auto call = agree_on_pblas_call<rank_record>(
      routine, desca, desca_pos, global_arguments(),
      [&](rank_record& mine, const descriptor& da) {
        if (descc != nullptr) dc = parse_descriptor(descc);
        store_descriptor(da, mine.a);
        store_descriptor(dc, mine.c);
        mine.ia = ia, mine.ja = ja, mine.ic = ic, mine.jc = jc, mine.m = m, mine.n = n;
        store_scalar(alpha, mine.alpha);
        store_scalar(beta, mine.beta);
        mine.info = descc == nullptr ? -descc_pos : 0;
      },
      [&](const process_grid& grid, const descriptor& da) { return check_tran(grid, m, n, ia, ja, da, ic, jc, dc); });
  if (!call) {
    if (desca != nullptr && desca[1] == -1) traced.dismiss();  // off the grid: not this process's call
    return;
  }
  // References, not structured bindings: C++17 lambdas below cannot capture those.
  const descriptor& da = call->da;
  const process_grid& grid = call->grid;
  const std::vector<std::int64_t>& words = call->words;
  MPI_Comm comm = call->comm;
  const int context = call->context, me = call->me, nranks = static_cast<int>(call->all.size());
  const int context_info = -(desca_pos * 100 + 2);
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) {  // PBLAS's quick return
    traced.path("local");
    return;
  }
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
    const transform_plan& plan = cached_plan(comm, std::move(key), [&](bool one_shot) {
      transform_options options;
      options.one_shot = one_shot;
      return make_plan(comm, target, source, operation, element_type_v<T>, options);
    });
    std::vector<T> a_copy;
    const T* a_read = unaliased(a, local_array_elements(da, grid), c, local_array_elements(dc, grid), a_copy);
    plan.execute(c, a_read, alpha, beta);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
  }
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
