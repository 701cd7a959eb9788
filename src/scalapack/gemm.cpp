// PBLAS p?gemm: sub(C) := alpha*op(sub(A))*op(sub(B)) + beta*sub(C), sub(C) = C(ic:ic+m-1, jc:jc+n-1),
// op(sub(A)) m x k, op(sub(B)) k x n, op = N, T or C; A, B and C on the same BLACS context; through the
// distributed multiply (redist/gemm/gemm.hpp). Prefixed twins redist_p?gemm. See docs/scalapack.md.
#include <algorithm>
#include <cctype>
#include <complex>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "first_error.hpp"
#include "pblas_call.hpp"
#include "plan_cache.hpp"
#include "staging.hpp"
#include "redist/error.hpp"
#include "redist/gemm/gemm.hpp"
#include "../mpi/checked.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"

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
  std::int64_t info;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));

// Argument positions: TRANSA=1 TRANSB=2 M=3 N=4 K=5 ALPHA=6 A=7 IA=8 JA=9 DESCA=10 B=11 IB=12 JB=13 DESCB=14
// BETA=15 C=16 IC=17 JC=18 DESCC=19.
constexpr int desca_pos = 10, descb_pos = 14, descc_pos = 19;

// The arguments every process must pass alike and the info that reports a difference (LLD, CTXT and DTYPE are
// each process's own).
std::vector<global_argument> global_arguments() {
  std::vector<global_argument> out{{word_at(offsetof(rank_record, op_a)), -1},
                                   {word_at(offsetof(rank_record, op_b)), -2},
                                   {word_at(offsetof(rank_record, m)), -3},
                                   {word_at(offsetof(rank_record, n)), -4},
                                   {word_at(offsetof(rank_record, k)), -5},
                                   {word_at(offsetof(rank_record, alpha)), -6},
                                   {word_at(offsetof(rank_record, alpha)) + 1, -6},
                                   {word_at(offsetof(rank_record, ia)), -8},
                                   {word_at(offsetof(rank_record, ja)), -9},
                                   {word_at(offsetof(rank_record, ib)), -12},
                                   {word_at(offsetof(rank_record, jb)), -13},
                                   {word_at(offsetof(rank_record, beta)), -15},
                                   {word_at(offsetof(rank_record, beta)) + 1, -15},
                                   {word_at(offsetof(rank_record, ic)), -17},
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

template <class T>
void gemm(const char* routine, const char* transa, const char* transb, int m, int n, int k, T alpha, const T* a,
          int ia, int ja, const int* desca, const T* b, int ib, int jb, const int* descb, T beta, T* c, int ic, int jc,
          const int* descc) noexcept {
  const char ta = transa ? *transa : '\0', tb = transb ? *transb : '\0';
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
        mine.info = descb == nullptr ? -descb_pos : descc == nullptr ? -descc_pos : 0;
      },
      [&](const process_grid& grid, const descriptor& da) {
        return check_gemm(grid, ta, tb, m, n, k, ia, ja, da, ib, jb, db, ic, jc, dc);
      });
  if (!call) return;
  // References, not structured bindings: C++17 lambdas below cannot capture those.
  const descriptor& da = call->da;
  const process_grid& grid = call->grid;
  const std::vector<std::int64_t>& words = call->words;
  MPI_Comm comm = call->comm;
  const int context = call->context, me = call->me, nranks = static_cast<int>(call->all.size());
  const int context_info = -(desca_pos * 100 + 2);
  // PBLAS's quick return.
  if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
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
      return;
    }
    const op op_a = op_of<T>(ta), op_b = op_of<T>(tb);
    const grid_layout a_layout =
        op_a == op::identity ? layout_of(m, k, ia, ja, da, grid, me) : layout_of(k, m, ia, ja, da, grid, me);
    const grid_layout b_layout =
        op_b == op::identity ? layout_of(k, n, ib, jb, db, grid, me) : layout_of(n, k, ib, jb, db, grid, me);
    // Everything that determines the plan: every process's grid position, descriptors, sub-matrices, sizes,
    // operations and MPI_COMM_WORLD rank (the communicator's identity), and the element type; not the scalars.
    std::vector<std::int64_t> key;
    key.reserve(words.size() + 1);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    key.insert(key.end(), words.begin(), words.end());
    for (int r = 0; r < nranks; ++r)
      for (const std::size_t scalar : {offsetof(rank_record, alpha), offsetof(rank_record, beta)})
        for (int w = 0; w < 2; ++w) key[static_cast<size_t>(1 + r * record_words + word_at(scalar) + w)] = 0;
    const gemm_plan& plan = cached_gemm_plan(comm, std::move(key), [&] {
      return make_gemm_plan(comm, gemm_description{a_layout, b_layout, c_layout, op_a, op_b, element_type_v<T>});
    });
    const std::int64_t c_elements = local_array_elements(dc, grid);
    std::vector<T> a_copy, b_copy;
    const T* a_read = unaliased(a, local_array_elements(da, grid), c, c_elements, a_copy);
    const T* b_read = unaliased(b, local_array_elements(db, grid), c, c_elements, b_copy);
    plan.execute(c, a_read, b_read, alpha, beta);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(context, routine, context_info, e.what());
  }
}

}  // namespace
}  // namespace redist::scalapack

using redist::scalapack::gemm;
using redist::scalapack::scalar_at;

// ---- prefixed twins, Fortran convention (PBLAS has no by-value C entry). alpha and beta point to one element
// of the routine's type (two floats/doubles for the complex routines).
#define REDIST_GEMM_TWIN(name, T, ROUTINE)                                                                           \
  extern "C" void redist_##name(const char* transa, const char* transb, const int* m, const int* n, const int* k,   \
                                const void* alpha, const void* a, const int* ia, const int* ja, const int* desca,   \
                                const void* b, const int* ib, const int* jb, const int* descb, const void* beta,    \
                                void* c, const int* ic, const int* jc, const int* descc) {                         \
    gemm<T>(ROUTINE, transa, transb, *m, *n, *k, scalar_at<T>(alpha), static_cast<const T*>(a), *ia, *ja, desca,     \
            static_cast<const T*>(b), *ib, *jb, descb, scalar_at<T>(beta), static_cast<T*>(c), *ic, *jc, descc);     \
  }                                                                                                                  \
  extern "C" void redist_##name##_(const char* transa, const char* transb, const int* m, const int* n, const int* k, \
                                   const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, \
                                   const void* b, const int* ib, const int* jb, const int* descb, const void* beta,  \
                                   void* c, const int* ic, const int* jc, const int* descc) {                       \
    redist_##name(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);       \
  }

REDIST_GEMM_TWIN(psgemm, float, "PSGEMM")
REDIST_GEMM_TWIN(pdgemm, double, "PDGEMM")
REDIST_GEMM_TWIN(pcgemm, std::complex<float>, "PCGEMM")
REDIST_GEMM_TWIN(pzgemm, std::complex<double>, "PZGEMM")
