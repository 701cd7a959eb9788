// PBLAS p?tran, p?tranu, p?tranc: sub(C) := beta*sub(C) + alpha*op(sub(A)), op transpose (conjugate
// transpose for p?tranc), sub(A) = A(ia:ia+n-1, ja:ja+m-1), sub(C) = C(ic:ic+m-1, jc:jc+n-1), A and C on
// the same BLACS context; through the transform engine. Prefixed twins redist_p?tran*. See docs/scalapack.md.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "blacs.hpp"
#include "first_error.hpp"
#include "plan_cache.hpp"
#include "redist/error.hpp"
#include "redist/mpi/checked.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/transform/plan.hpp"

namespace redist::scalapack {
namespace {

// What every process of the context contributes: its grid position and its view of both operands.
struct rank_record {
  std::int64_t my_row, my_col;
  std::int64_t a[descriptor_length], c[descriptor_length];  // normalized descriptors (DTYPE as given)
  std::int64_t ia, ja, ic, jc, m, n, world_rank;
};
constexpr int record_words = static_cast<int>(sizeof(rank_record) / sizeof(std::int64_t));

void store(const descriptor& d, std::int64_t* out) {
  const auto values = d.normalized();
  std::copy(values.begin(), values.end(), out);
  out[0] = d.dtype;
}

template <class T>
void tran(const char* routine, op operation, int m, int n, T alpha, const T* a, int ia, int ja, const int* desca,
          T beta, T* c, int ic, int jc, const int* descc) noexcept {
  try {
    if (!blacs::available()) {
      blacs::report_problem(routine, blacs::unavailable_reason());
      return;
    }
    const descriptor da = parse_descriptor(desca);
    const descriptor dc = parse_descriptor(descc);
    process_grid grid = blacs::grid_info(static_cast<int>(da.ctxt));
    if (!grid.contains_me()) {
      // PBLAS aborts here (its error 702); this process cannot even reach the others.
      blacs::report_problem(routine, "parameter number 702 had an illegal value: DESCA's context (" +
                                         std::to_string(da.ctxt) + ") is not a grid this process is part of");
      return;
    }
    MPI_Comm comm = blacs::communicator(static_cast<int>(da.ctxt));
    const int me = mpi::rank(comm);
    const int nranks = mpi::size(comm);
    int world_rank = 0;
    REDIST_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    rank_record mine{};
    mine.my_row = grid.my_row;
    mine.my_col = grid.my_col;
    store(da, mine.a);
    store(dc, mine.c);
    mine.ia = ia, mine.ja = ja, mine.ic = ic, mine.jc = jc, mine.m = m, mine.n = n, mine.world_rank = world_rank;
    std::vector<rank_record> all(static_cast<size_t>(nranks));
    REDIST_MPI_CHECK(MPI_Allgather(&mine, record_words, MPI_INT64_T, all.data(), record_words, MPI_INT64_T, comm));
    grid.position_ranks.assign(static_cast<size_t>(grid.proc_rows * grid.proc_cols), -1);
    for (int r = 0; r < nranks; ++r) {
      const rank_record& x = all[static_cast<size_t>(r)];
      grid.position_ranks[static_cast<size_t>(x.my_row * grid.proc_cols + x.my_col)] = r;
    }

    // PBLAS's checks (LLD is local: the first error over all processes is reported everywhere).
    if (const int info = agree_on_first_error(comm, check_tran(grid, m, n, ia, ja, da, ic, jc, dc)); info != 0) {
      blacs::report_error(static_cast<int>(da.ctxt), routine, info);
      return;
    }
    if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;  // PBLAS's quick return
    if (da.rsrc < 0 || da.csrc < 0 || dc.rsrc < 0 || dc.csrc < 0) {  // the same on every process
      blacs::report_problem(routine, "replicated operands (RSRC or CSRC = -1) are not supported");
      return;
    }
    const grid_layout target = layout_of(m, n, ic, jc, dc, grid, me);
    const grid_layout source = layout_of(n, m, ia, ja, da, grid, me);
    std::vector<std::int64_t> key;
    key.reserve(all.size() * record_words + 2);
    key.push_back(static_cast<std::int64_t>(element_type_v<T>));
    key.push_back(static_cast<std::int64_t>(operation) + 16);  // never equal to a p?gemr2d key's start
    for (const rank_record& r : all) {
      const auto* words = reinterpret_cast<const std::int64_t*>(&r);
      key.insert(key.end(), words, words + record_words);
    }
    const transform_plan& plan =
        cached_plan(std::move(key), [&] { return make_plan(comm, target, source, operation, element_type_v<T>); });
    plan.execute(c, a, alpha, beta);
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
