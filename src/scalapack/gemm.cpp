// PBLAS p?gemm: sub(C) := alpha*op(sub(A))*op(sub(B)) + beta*sub(C), sub(C) = C(ic:ic+m-1, jc:jc+n-1),
// op(sub(A)) m x k, op(sub(B)) k x n, op = N, T or C; A, B and C on the same BLACS context; through the
// distributed multiply (redist/gemm/gemm.hpp). Prefixed twins redist_p?gemm. See docs/scalapack.md.
#include <algorithm>
#include <cctype>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "blacs.hpp"
#include "first_error.hpp"
#include "plan_cache.hpp"
#include "redist/error.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/mpi/checked.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"

namespace redist::scalapack {
namespace {

// What every process of the context contributes: its grid position, its view of the three operands and of
// the scalar arguments (PBLAS requires them global; gathering them lets every process check that).
struct rank_record {
  std::int64_t my_row, my_col;
  std::int64_t a[descriptor_length], b[descriptor_length], c[descriptor_length];  // normalized (DTYPE as given)
  std::int64_t ia, ja, ib, jb, ic, jc, m, n, k, op_a, op_b, world_rank;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));

void store(const descriptor& d, std::int64_t* out) {
  const auto values = d.normalized();
  std::copy(values.begin(), values.end(), out);
  out[0] = d.dtype;
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
  try {
    if (!blacs::available()) {
      blacs::report_problem(routine, blacs::unavailable_reason());
      return;
    }
    const descriptor da = parse_descriptor(desca);
    const descriptor db = parse_descriptor(descb);
    const descriptor dc = parse_descriptor(descc);
    process_grid grid = blacs::grid_info(static_cast<int>(da.ctxt));
    if (!grid.contains_me()) {
      // PBLAS aborts here (its error 1002); this process cannot even reach the others.
      blacs::report_problem(routine, "parameter number 1002 had an illegal value: DESCA's context (" +
                                         std::to_string(da.ctxt) + ") is not a grid this process is part of");
      return;
    }
    MPI_Comm comm = blacs::communicator(static_cast<int>(da.ctxt));
    const int me = mpi::rank(comm);
    const int nranks = mpi::size(comm);
    int world_rank = 0;
    REDIST_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    const char ta = transa ? *transa : '\0', tb = transb ? *transb : '\0';
    const int info_here = check_gemm(grid, ta, tb, m, n, k, ia, ja, da, ib, jb, db, ic, jc, dc);
    rank_record mine{};
    mine.my_row = grid.my_row;
    mine.my_col = grid.my_col;
    store(da, mine.a);
    store(db, mine.b);
    store(dc, mine.c);
    mine.ia = ia, mine.ja = ja, mine.ib = ib, mine.jb = jb, mine.ic = ic, mine.jc = jc;
    mine.m = m, mine.n = n, mine.k = k, mine.world_rank = world_rank;
    // Only meaningful once TRANSA and TRANSB are known to be right (checked before they are used).
    mine.op_a = static_cast<std::int64_t>(op_of<T>(ta));
    mine.op_b = static_cast<std::int64_t>(op_of<T>(tb));
    std::vector<rank_record> all(static_cast<size_t>(nranks));
    REDIST_MPI_CHECK(MPI_Allgather(&mine, record_words, MPI_INT64_T, all.data(), record_words, MPI_INT64_T, comm));
    grid.position_ranks.assign(static_cast<size_t>(grid.proc_rows * grid.proc_cols), -1);
    for (int r = 0; r < nranks; ++r) {
      const rank_record& x = all[static_cast<size_t>(r)];
      grid.position_ranks[static_cast<size_t>(x.my_row * grid.proc_cols + x.my_col)] = r;
    }

    // PBLAS's checks (LLD is local: the first error over all processes is reported everywhere).
    if (const int info = agree_on_first_error(comm, info_here); info != 0) {
      blacs::report_error(static_cast<int>(da.ctxt), routine, info);
      return;
    }
    for (const rank_record& r : all)
      if (r.m != m || r.n != n || r.k != k || r.op_a != mine.op_a || r.op_b != mine.op_b) {
        // The same on every process: the records are.
        blacs::report_problem(routine, "the processes passed different M, N, K, TRANSA or TRANSB (" +
                                           std::to_string(all.front().m) + " x " + std::to_string(all.front().n) +
                                           " x " + std::to_string(all.front().k) + " on rank 0, " +
                                           std::to_string(r.m) + " x " + std::to_string(r.n) + " x " +
                                           std::to_string(r.k) + " on rank " + std::to_string(&r - all.data()) + ")");
        return;
      }
    // PBLAS's quick return.
    if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
    const bool multiply = alpha != T(0) && k != 0;
    const auto replicated = [](const descriptor& d) { return d.rsrc < 0 || d.csrc < 0; };
    if (replicated(dc) || (multiply && (replicated(da) || replicated(db)))) {  // the same on every process
      blacs::report_problem(routine, "replicated operands (RSRC or CSRC = -1) are not supported");
      return;
    }
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
    // operations and MPI_COMM_WORLD rank (the communicator's identity), and the element type.
    std::vector<std::int64_t> key;
    key.reserve(all.size() * record_words + 1);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    for (const rank_record& r : all) {
      const auto* words = reinterpret_cast<const std::int64_t*>(&r);
      key.insert(key.end(), words, words + record_words);
    }
    const gemm_plan& plan = cached_gemm_plan(std::move(key), [&] {
      return make_gemm_plan(comm, gemm_description{a_layout, b_layout, c_layout, op_a, op_b, element_type_v<T>});
    });
    plan.execute(c, a, b, alpha, beta);
  } catch (const std::exception& e) {
    blacs::report_problem(routine, e.what());
  }
}

template <class T>
T scalar_at(const void* p) {
  return *static_cast<const T*>(p);
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
