// PBLAS p?gemm: sub(C) := alpha*op(sub(A))*op(sub(B)) + beta*sub(C), sub(C) = C(ic:ic+m-1, jc:jc+n-1),
// op(sub(A)) m x k, op(sub(B)) k x n, op = N, T or C; A, B and C on the same BLACS context; through the
// distributed multiply (redist/gemm/gemm.hpp). Prefixed twins redist_p?gemm. See docs/scalapack.md.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <complex>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <array>
#include <map>
#include <unordered_set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "dropin.hpp"
#include "first_error.hpp"
#include "pblas_call.hpp"
#include "plan_cache.hpp"
#include "staging.hpp"
#include "traced_arguments.hpp"
#include "redist/error.hpp"
#include "redist/gemm/gemm.hpp"
#include "../mpi/checked.hpp"
#include "../mpi/comm_attribute.hpp"
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
  std::int64_t delegates;          // 1: this process would hand the call to ScaLAPACK (the drop-in's small products)
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

// ---- Products handed to ScaLAPACK (the drop-in's p?gemm) -----------------------------------------------------------
//
// Which way a product goes is decided from arguments PBLAS requires to be the same on every process (M, N, K, the
// operations, offsets and descriptors' global entries) and from what earlier calls of its class measured, in the
// same order on every process, so every process decides alike without a collective but one per class:
// - REDIST_PDGEMM_DELEGATE_BELOW set: fewer multiply-adds (M*N*K) than it says go to ScaLAPACK, the rest to redist
//   (0: redist for all); an override for tests and users;
// - otherwise, fewer than 2^23 multiply-adds go to ScaLAPACK, 2^31 or more to redist, and products between are
//   learned per class (element type, operations, grid, each of M, N, K up to the next power of two, whether the
//   sub-matrices start on block boundaries): the class's first two calls run redist, the next two ScaLAPACK, and
//   at its fifth call the processes agree (one allreduce) on the way whose faster call was faster on the slowest
//   process, which every later call of the class takes. (Mid-size products and sub-matrices at block-misaligned
//   offsets are where ScaLAPACK's own multiply can win: bench/traces/, docs/trace.md.)
// What PBLAS requires is checked where a call is first seen: each signature (every argument but the arrays) is
// checked on every process of the context in redist's own argument agreement (the first collective of redist's
// path too: a process that would not delegate takes part in the same one, and one process's different K, alpha or
// descriptor is the same PXERBLA error everywhere, whichever way each would have gone). A signature every process
// passed, and on which all of them delegate, is remembered on the context's communicator; its later calls go to
// ScaLAPACK at once. (A process that passes a remembered signature while another passes a new one is not caught:
// they then make different calls.)

// 2^23: where redist's multiply overtook Debian's ScaLAPACK for cubes (192^3) and tall-skinny problems at 4 ranks
// with one thread each (bench/pdgemm_crossover.cpp; results and the other shapes in docs/scalapack.md).
constexpr std::int64_t default_delegate_below = std::int64_t{1} << 23;
// 2^31 (about 1300^3): from there redist's multiply was 1.5x to 74x ScaLAPACK's in every recorded run
// (bench/results/side_by_side.md), so nothing is learned.
constexpr std::int64_t learned_below = std::int64_t{1} << 31;
constexpr int redist_trials = 2, scalapack_trials = 2;  // a learned class's first calls, each way

// REDIST_PDGEMM_DELEGATE_BELOW, or -1 when unset.
std::int64_t delegate_below() {
  const char* text = std::getenv("REDIST_PDGEMM_DELEGATE_BELOW");
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) {
    static bool warned = false;  // once per process, not per call
    if (!warned)
      std::fprintf(stderr,
                   "redist: REDIST_PDGEMM_DELEGATE_BELOW=\"%s\" is not a non-negative integer (multiply-adds); "
                   "using the default (learned per class of products)\n",
                   text);
    warned = true;
    return -1;
  }
  return value;
}

// M*N*K < limit, without forming a product beyond 64 bits (sizes not negative).
bool fewer_multiply_adds(int m, int n, int k, std::int64_t limit) {
  const std::int64_t mn = std::int64_t{m} * n;  // below 2^62: no overflow
  return k == 0 || mn <= (limit - 1) / k;
}

// What a learned class has measured on this process, and its decision once made.
struct learned_class {
  int calls = 0;
  double fastest[2] = {-1, -1};  // this process's fastest call through redist [0] and ScaLAPACK [1] (-1: none yet)
  int decided = -1;              // -1: still trying; 0: redist; 1: ScaLAPACK
};

// Every argument of a call but the arrays (element type, operations, sizes, offsets, scalars' bytes, descriptors),
// in a fixed array: looked up on every delegated call, so never allocated.
using call_signature = std::array<std::int64_t, 12 + 4 + 3 * (descriptor_length + 1)>;
struct signature_hash {
  std::size_t operator()(const call_signature& s) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the words
    for (const std::int64_t w : s) h = (h ^ static_cast<std::uint64_t>(w)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

// What a context's communicator keeps for the drop-in's p?gemm: the signatures checked (bounded: past the bound all
// are forgotten at once, at the same call on every process, and checked again), and the learned classes.
struct delegation_state {
  std::unordered_set<call_signature, signature_hash> seen;
  std::map<std::vector<std::int64_t>, learned_class> classes;
};
constexpr std::size_t checked_signatures_bound = 4096;
const mpi::comm_attribute<delegation_state>& delegation_on() {
  static const mpi::comm_attribute<delegation_state> attribute;
  return attribute;
}

std::int64_t power_of_two_at_least(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// A product's class: the same on every process (global arguments and the grid's shape).
std::vector<std::int64_t> class_of(element_type type, char ta, char tb, int m, int n, int k, int ia, int ja,
                                   const int* desca, int ib, int jb, const int* descb, int ic, int jc,
                                   const int* descc, const process_grid& grid) {
  std::vector<std::int64_t> c{static_cast<std::int64_t>(type), std::toupper(static_cast<unsigned char>(ta)),
                              std::toupper(static_cast<unsigned char>(tb)), power_of_two_at_least(m),
                              power_of_two_at_least(n), power_of_two_at_least(k), grid.proc_rows, grid.proc_cols};
  const std::pair<int, int> offsets[] = {{ia, ja}, {ib, jb}, {ic, jc}};
  const int* descs[] = {desca, descb, descc};
  for (int o = 0; o < 3; ++o) {
    const descriptor d = parse_descriptor(descs[o]);
    const bool aligned = (offsets[o].first - 1) % std::max<std::int64_t>(d.mb, 1) == 0 &&
                         (offsets[o].second - 1) % std::max<std::int64_t>(d.nb, 1) == 0;
    c.push_back(aligned ? 1 : 0);
  }
  return c;
}

// The way this call goes: true for ScaLAPACK. `trying` is set to the class whose trial this call is (its time is
// then added by the caller), null otherwise. A learned class's decision is agreed over `comm` (collective).
// class_of_call() gives the call's class (null: none to learn in).
template <class ClassOf>
bool hand_over(int m, int n, int k, ClassOf&& class_of_call, MPI_Comm comm, learned_class*& trying) {
  trying = nullptr;
  if (m < 0 || n < 0 || k < 0) return false;  // redist reports them
  const std::int64_t limit = delegate_below();
  if (limit >= 0) return limit > 0 && fewer_multiply_adds(m, n, k, limit);
  if (fewer_multiply_adds(m, n, k, default_delegate_below)) return true;
  if (!fewer_multiply_adds(m, n, k, learned_below)) return false;
  learned_class* cls = class_of_call();
  if (cls == nullptr) return false;
  if (cls->decided < 0 && cls->calls >= redist_trials + scalapack_trials) {
    double slowest[2] = {0, 0};
    REDIST_MPI_CHECK(MPI_Allreduce(cls->fastest, slowest, 2, MPI_DOUBLE, MPI_MAX, comm));
    cls->decided = slowest[1] < slowest[0] ? 1 : 0;
  }
  if (cls->decided >= 0) return cls->decided == 1;
  trying = cls;
  return cls->calls++ >= redist_trials;
}

template <class T>
call_signature signature(char ta, char tb, int m, int n, int k, T alpha, int ia, int ja, const int* desca, int ib,
                         int jb, const int* descb, T beta, int ic, int jc, const int* descc) {
  call_signature s{};
  std::int64_t* at = s.data();
  for (const std::int64_t w : {static_cast<std::int64_t>(element_type_v<T>), std::int64_t{ta}, std::int64_t{tb},
                               std::int64_t{m}, std::int64_t{n}, std::int64_t{k}, std::int64_t{ia}, std::int64_t{ja},
                               std::int64_t{ib}, std::int64_t{jb}, std::int64_t{ic}, std::int64_t{jc}})
    *at++ = w;
  store_scalar(alpha, at);
  store_scalar(beta, at + 2);
  at += 4;
  for (const int* d : {desca, descb, descc}) {  // as PBLAS reads them: 11 entries for DTYPE 2, 9 for 1, else 2
    const int length = d[0] == block_cyclic_2d_inb ? descriptor_length : d[0] == block_cyclic_2d ? descriptor_length_1 : 2;
    at = std::copy(d, d + length, at);
    at += descriptor_length + 1 - length;
  }
  return s;
}

template <class T>
void gemm(const char* routine, const char* transa, const char* transb, int m, int n, int k, T alpha, const T* a,
          int ia, int ja, const int* desca, const T* b, int ib, int jb, const int* descb, T beta, T* c, int ic, int jc,
          const int* descc, pblas_gemm_fn scalapack) noexcept {
  trace_detail::call_scope traced(routine);
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
  delegation_state* state = nullptr;
  MPI_Comm context_comm = MPI_COMM_NULL;
  if (scalapack != nullptr && desca != nullptr && descb != nullptr && descc != nullptr && blacs::holds_me(desca[1])) {
    try {
      context_comm = blacs::communicator(desca[1]);
      state = &delegation_on().get(context_comm, [] { return delegation_state{}; });
    } catch (const std::exception&) {
      state = nullptr;  // out of memory, or MPI refused the attribute: fixed sizes decide, and calls are checked
    }
  }
  learned_class* trying = nullptr;
  bool delegating = false;
  try {
    const auto class_of_call = [&]() -> learned_class* {
      if (state == nullptr) return nullptr;
      return &state->classes[class_of(element_type_v<T>, ta, tb, m, n, k, ia, ja, desca, ib, jb, descb, ic, jc, descc,
                                      blacs::grid_info(desca[1]))];
    };
    delegating = scalapack != nullptr && hand_over(m, n, k, class_of_call, context_comm, trying);
  } catch (const std::exception& e) {
    blacs::fail_after_checks(desca[1], routine, -(desca_pos * 100 + 2), e.what());
    return;
  }
  // A trial's time on this process, whichever way it ends.
  struct timed_trial {
    learned_class* cls;
    int way;
    trace_detail::clock::time_point start = cls != nullptr ? trace_detail::clock::now() : trace_detail::clock::time_point{};
    ~timed_trial() {
      if (cls == nullptr) return;
      const double seconds = trace_detail::seconds_since(start);
      double& fastest = cls->fastest[way];
      fastest = fastest < 0 ? seconds : std::min(fastest, seconds);
    }
  } trial{trying, delegating ? 1 : 0};
  call_signature my_signature{};
  if (delegating && state != nullptr) {
    my_signature = signature(ta, tb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc, descc);
    if (state->seen.count(my_signature) != 0) {
      hand_to_scalapack();
      return;
    }
  }
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
        mine.delegates = delegating ? 1 : 0;
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
  if (std::all_of(call->all.begin(), call->all.end(), [](const rank_record& r) { return r.delegates == 1; })) {
    if (state != nullptr) {
      if (state->seen.size() >= checked_signatures_bound) state->seen.clear();
      try {
        state->seen.insert(my_signature);
      } catch (const std::exception&) {
        // not remembered: checked again next time (every process inserts or clears alike but for memory)
      }
    }
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
    for (int r = 0; r < nranks; ++r) key[static_cast<size_t>(1 + r * record_words + word_at(offsetof(rank_record, delegates)))] = 0;
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
            static_cast<const T*>(b), *ib, *jb, descb, scalar_at<T>(beta), static_cast<T*>(c), *ic, *jc, descc,      \
            nullptr);                                                                                                \
  }                                                                                                                  \
  extern "C" void redist_##name##_(const char* transa, const char* transb, const int* m, const int* n, const int* k, \
                                   const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, \
                                   const void* b, const int* ib, const int* jb, const int* descb, const void* beta,  \
                                   void* c, const int* ic, const int* jc, const int* descc) {                       \
    redist_##name(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);       \
  }

// The drop-in's entry (dropin.hpp): small products to `scalapack`.
#define REDIST_DROPIN_GEMM(name, T, ROUTINE)                                                                         \
  void redist::scalapack::dropin_##name(pblas_gemm_fn scalapack, const char* transa, const char* transb,           \
                                        const int* m, const int* n, const int* k, const void* alpha, const void* a, \
                                        const int* ia, const int* ja, const int* desca, const void* b,              \
                                        const int* ib, const int* jb, const int* descb, const void* beta, void* c,  \
                                        const int* ic, const int* jc, const int* descc) {                           \
    gemm<T>(ROUTINE, transa, transb, *m, *n, *k, scalar_at<T>(alpha), static_cast<const T*>(a), *ia, *ja, desca,     \
            static_cast<const T*>(b), *ib, *jb, descb, scalar_at<T>(beta), static_cast<T*>(c), *ic, *jc, descc,      \
            scalapack);                                                                                              \
  }

REDIST_GEMM_TWIN(psgemm, float, "PSGEMM")
REDIST_GEMM_TWIN(pdgemm, double, "PDGEMM")
REDIST_GEMM_TWIN(pcgemm, std::complex<float>, "PCGEMM")
REDIST_GEMM_TWIN(pzgemm, std::complex<double>, "PZGEMM")
REDIST_DROPIN_GEMM(psgemm, float, "PSGEMM")
REDIST_DROPIN_GEMM(pdgemm, double, "PDGEMM")
REDIST_DROPIN_GEMM(pcgemm, std::complex<float>, "PCGEMM")
REDIST_DROPIN_GEMM(pzgemm, std::complex<double>, "PZGEMM")
