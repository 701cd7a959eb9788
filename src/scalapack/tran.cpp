// SPDX-License-Identifier: BSD-3-Clause
// PBLAS p?tran, p?tranu, p?tranc: sub(C) := beta*sub(C) + alpha*op(sub(A)), op transpose (conjugate
// transpose for p?tranc), sub(A) = A(ia:ia+n-1, ja:ja+m-1), sub(C) = C(ic:ic+m-1, jc:jc+n-1), A and C on
// the same BLACS context; through the transform engine. Prefixed twins redist_p?tran*; the drop-in's entries
// dropin_p?tran* may hand a call to ScaLAPACK instead (delegation.hpp). See docs/scalapack.md.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "call_summary.hpp"
#include "delegation.hpp"
#include "dropin.hpp"
#include "first_error.hpp"
#include "mpi/checked.hpp"
#include "pblas_call.hpp"
#include "plan_cache.hpp"
#include "redist/error.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/transform/plan.hpp"
#include "staging.hpp"
#include "traced_arguments.hpp"

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
  std::int64_t delegates;  // this process would hand the call to ScaLAPACK (the drop-in's): 1; and can remember it: 2
  std::int64_t info;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));

// Argument positions: M=1 N=2 ALPHA=3 A=4 IA=5 JA=6 DESCA=7 BETA=8 C=9 IC=10 JC=11 DESCC=12.
constexpr int desca_pos = 7, descc_pos = 12;

// The arguments every process must pass alike and the info that reports a difference (LLD, CTXT and DTYPE are
// each process's own).
std::vector<global_argument> global_arguments() {
  std::vector<global_argument> out{
      {word_at(offsetof(rank_record, m)), -1},     {word_at(offsetof(rank_record, n)), -2},
      {word_at(offsetof(rank_record, alpha)), -3}, {word_at(offsetof(rank_record, alpha)) + 1, -3},
      {word_at(offsetof(rank_record, ia)), -5},    {word_at(offsetof(rank_record, ja)), -6},
      {word_at(offsetof(rank_record, beta)), -8},  {word_at(offsetof(rank_record, beta)) + 1, -8},
      {word_at(offsetof(rank_record, ic)), -10},   {word_at(offsetof(rank_record, jc)), -11}};
  add_descriptor_arguments(out, offsetof(rank_record, a), desca_pos);
  add_descriptor_arguments(out, offsetof(rank_record, c), descc_pos);
  return out;
}

// ---- Transposes handed to ScaLAPACK (the drop-in's p?tran*): delegation.hpp says how the way is chosen ----------
//
// A transpose's size is its elements (M*N). None goes to ScaLAPACK by size alone: at 2 ranks redist's transpose
// was faster from 128 x 128 on, while with 4 ranks sharing 2 cores ScaLAPACK's was 8-100x faster up to 736 x 736
// (bench/traces/issue57_pdtran_*); so up to 2^22 elements (2048 x 2048) the way is learned per class, and larger
// transposes (the N = 4000 benchmarks) always run redist's.
delegation::override_cache tran_override;  // REDIST_PTRAN_DELEGATE_BELOW as last read
constexpr delegation::size_rule tran_sizes{"REDIST_PTRAN_DELEGATE_BELOW", "elements", 0, std::int64_t{1} << 22,
                                           &tran_override};

// A transpose's class: element type, operation, grid, M and N up to the next power of two, whether each
// sub-matrix starts on a block boundary (the same on every process).
std::vector<std::int64_t> class_of(element_type type, op operation, int m, int n, int ia, int ja, const int* desca,
                                   int ic, int jc, const int* descc, const process_grid& grid) {
  const descriptor da = parse_descriptor(desca), dc = parse_descriptor(descc);
  return {static_cast<std::int64_t>(delegation::routine_family::tran),
          static_cast<std::int64_t>(type),
          static_cast<std::int64_t>(operation),
          delegation::power_of_two_at_least(m),
          delegation::power_of_two_at_least(n),
          grid.proc_rows,
          grid.proc_cols,
          delegation::block_aligned(ia, ja, da.mb, da.nb) ? 1 : 0,
          delegation::block_aligned(ic, jc, dc.mb, dc.nb) ? 1 : 0};
}

// The digest of a transpose's signature (delegation.hpp) under the override `limit`.
template <class T>
delegation::signature_digest signature_of(std::int64_t limit, op operation, int m, int n, T alpha, int ia, int ja,
                                          const int* desca, T beta, int ic, int jc, const int* descc) {
  delegation::signature_builder s(limit);
  s.add(static_cast<std::int64_t>(delegation::routine_family::tran) * 16 +
        static_cast<std::int64_t>(element_type_v<T>));
  for (const int w : {static_cast<int>(operation), m, n, ia, ja, ic, jc}) s.add(w);
  std::int64_t scalars[4];
  store_scalar(alpha, scalars);
  store_scalar(beta, scalars + 2);
  for (const std::int64_t w : scalars) s.add(w);
  for (const int* d : {desca, descc}) s.add_descriptor(d);
  return s.digest();
}

// Every call but those of the fast path in tran below.
template <class T>
[[gnu::noinline]] void tran_in_full(const char* routine, op operation, int m, int n, T alpha, const T* a, int ia,
                                    int ja, const int* desca, T beta, T* c, int ic, int jc, const int* descc,
                                    pblas_tran_fn scalapack) noexcept {
  trace_detail::call_scope traced(routine);
  const call_summary summary{{}, {}, m, n, false, 0, {{'A', ia, ja, desca}, {'C', ic, jc, descc}}};
  traced.describe(describe_call, &summary);
  if (trace_detail::json_fields* f = traced.arguments()) {
    trace_type<T>(*f);
    f->number("m", std::int64_t{m}), f->number("n", std::int64_t{n});
    trace_scalar(*f, "alpha", alpha), trace_scalar(*f, "beta", beta);
    f->number("ia", std::int64_t{ia}), f->number("ja", std::int64_t{ja}), trace_descriptor(*f, "desca", desca);
    f->number("ic", std::int64_t{ic}), f->number("jc", std::int64_t{jc}), trace_descriptor(*f, "descc", descc);
    if (desca != nullptr) trace_grid(*f, "grid", desca[1]);
  }
  const auto hand_to_scalapack = [&] {
    if (!traced.active()) {
      scalapack(&m, &n, &alpha, a, &ia, &ja, desca, &beta, c, &ic, &jc, descc);
      return;
    }
    traced.path("delegated");
    const auto started = trace_detail::clock::now();
    scalapack(&m, &n, &alpha, a, &ia, &ja, desca, &beta, c, &ic, &jc, descc);
    traced.execution(trace_detail::seconds_since(started), 0, 0);
  };
  // The context's state (signatures checked, learned classes), then the way this call goes.
  delegation::context_state* state = scalapack != nullptr && descc != nullptr ? delegation::state_of(desca) : nullptr;
  delegation::way way;
  try {
    const auto class_of_call = [&]() -> delegation::learned_class* {
      if (state == nullptr) return nullptr;
      return &state->classes[class_of(element_type_v<T>, operation, m, n, ia, ja, desca, ic, jc, descc,
                                      blacs::grid_info(desca[1]))];
    };
    const auto fewer_elements = [&](std::int64_t limit) { return std::int64_t{m} * n < limit; };
    if (scalapack != nullptr && m >= 0 && n >= 0) {  // negative sizes: redist reports them
      way = delegation::choose_way(
          tran_sizes, fewer_elements, class_of_call, state,
          [&](std::int64_t limit) {
            return signature_of(limit, operation, m, n, alpha, ia, ja, desca, beta, ic, jc, descc);
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
        mine.delegates = delegation::delegates_word(way, remembering);
        mine.info = descc == nullptr ? -descc_pos : 0;
      },
      [&](const process_grid& grid, const descriptor& da) { return check_tran(grid, m, n, ia, ja, da, ic, jc, dc); });
  if (!call) {
    if (desca != nullptr && desca[1] == -1) traced.dismiss();  // off the grid: not this process's call
    return;
  }
  // Every process would hand it to ScaLAPACK (anything else, a different REDIST_PTRAN_DELEGATE_BELOW on one
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
    for (int r = 0; r < nranks; ++r) {  // one plan for every alpha and beta, whatever a process would delegate
      for (const std::size_t scalar : {offsetof(rank_record, alpha), offsetof(rank_record, beta)})
        for (int w = 0; w < 2; ++w) key[static_cast<size_t>(2 + r * record_words + word_at(scalar) + w)] = 0;
      key[static_cast<size_t>(2 + r * record_words + word_at(offsetof(rank_record, delegates)))] = 0;
    }
    const transform_plan& plan = cached_plan(comm, std::move(key), [&](bool one_shot) {
      transform_options options;
      options.one_shot = one_shot;
      const auto started = trace_detail::clock::now();
      transform_plan made = make_transform_plan(comm, target, source, operation, element_type_v<T>, options);
      trial.leave_out(trace_detail::seconds_since(started));  // a trial times the calls, not the planning
      return made;
    });
    std::vector<T> a_copy;
    const T* a_read = unaliased(a, local_array_elements(da, grid), c, local_array_elements(dc, grid), a_copy);
    plan.execute(c, a_read, alpha, beta);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
  }
}

// A transpose whose signature every process checked and delegated for good goes to ScaLAPACK here, from a few
// lines of code and data (tracing off: traced calls are counted in full).
template <class T>
void tran(const char* routine, op operation, int m, int n, T alpha, const T* a, int ia, int ja, const int* desca,
          T beta, T* c, int ic, int jc, const int* descc, pblas_tran_fn scalapack) noexcept {
  if (!trace_detail::on() && scalapack != nullptr && descc != nullptr) {
    if (const delegation::context_state* state = delegation::recent_state_of(desca)) {
      if (delegation::remembered(state, tran_sizes, [&](std::int64_t limit) {
            return signature_of(limit, operation, m, n, alpha, ia, ja, desca, beta, ic, jc, descc);
          })) {
        scalapack(&m, &n, &alpha, a, &ia, &ja, desca, &beta, c, &ic, &jc, descc);
        return;
      }
    }
  }
  tran_in_full(routine, operation, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc, scalapack);
}

}  // namespace
}  // namespace redist::scalapack

using redist::scalapack::scalar_at;
using redist::scalapack::tran;

// The drop-in's entries (dropin.hpp): calls ScaLAPACK does faster to `scalapack`, none where it is null.
#define REDIST_DROPIN_TRAN(name, T, OP, ROUTINE)                                                                     \
  void redist::scalapack::dropin_##name(pblas_tran_fn scalapack, const int* m, const int* n, const void* alpha,      \
                                        const void* a, const int* ia, const int* ja, const int* desca,               \
                                        const void* beta, void* c, const int* ic, const int* jc, const int* descc) { \
    tran<T>(ROUTINE, OP, *m, *n, scalar_at<T>(alpha), static_cast<const T*>(a), *ia, *ja, desca, scalar_at<T>(beta), \
            static_cast<T*>(c), *ic, *jc, descc, scalapack);                                                         \
  }

REDIST_DROPIN_TRAN(pstran, float, redist::op::transpose, "PSTRAN")
REDIST_DROPIN_TRAN(pdtran, double, redist::op::transpose, "PDTRAN")
REDIST_DROPIN_TRAN(pctranu, std::complex<float>, redist::op::transpose, "PCTRANU")
REDIST_DROPIN_TRAN(pztranu, std::complex<double>, redist::op::transpose, "PZTRANU")
REDIST_DROPIN_TRAN(pctranc, std::complex<float>, redist::op::conj_transpose, "PCTRANC")
REDIST_DROPIN_TRAN(pztranc, std::complex<double>, redist::op::conj_transpose, "PZTRANC")

// ---- prefixed twins, Fortran convention (PBLAS has no by-value C entry for these): redist for every call. alpha
// and beta point to one element of the routine's type (two floats/doubles for the complex routines).
#define REDIST_TRAN_TWIN(name)                                                                                  \
  extern "C" void redist_##name(const int* m, const int* n, const void* alpha, const void* a, const int* ia,    \
                                const int* ja, const int* desca, const void* beta, void* c, const int* ic,      \
                                const int* jc, const int* descc) {                                              \
    redist::scalapack::dropin_##name(nullptr, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);           \
  }                                                                                                             \
  extern "C" void redist_##name##_(const int* m, const int* n, const void* alpha, const void* a, const int* ia, \
                                   const int* ja, const int* desca, const void* beta, void* c, const int* ic,   \
                                   const int* jc, const int* descc) {                                           \
    redist_##name(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);                                       \
  }

REDIST_TRAN_TWIN(pstran)
REDIST_TRAN_TWIN(pdtran)
REDIST_TRAN_TWIN(pctranu)
REDIST_TRAN_TWIN(pztranu)
REDIST_TRAN_TWIN(pctranc)
REDIST_TRAN_TWIN(pztranc)
