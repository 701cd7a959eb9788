// SPDX-License-Identifier: BSD-3-Clause
// MPI_Finalize releases the plans cached by the ScaLAPACK-style entry points: by the time MPI shuts down,
// no cached plan (communicator, shared window) is alive. This program sets an attribute on MPI_COMM_SELF
// before any redist call; MPI_Finalize deletes MPI_COMM_SELF's attributes in the reverse order of setting,
// so its delete callback runs after redist's and sees what redist left behind.
// Exit status 0 when the cache was empty there, 1 otherwise; 2 when a call failed.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "redist/redist.h"
#include "scalapack/plan_cache.hpp"
#include "scalapack_cases.hpp"

namespace {

long plans_alive_at_finalize = -1;

int record_plans_alive(MPI_Comm, int, void*, void*) {
  plans_alive_at_finalize = static_cast<long>(redist::scalapack::cached_plan_count());
  return MPI_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_plans_alive, &keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);

  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> everyone(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) everyone[static_cast<size_t>(r)] = r;
  long cached_before_finalize = 0;
  {
    using redist::testing::blacs_context;
    using redist::testing::matrix_case;
    blacs_context row(1, size, everyone), column(size, 1, everyone);
    // Four distinct calls: three transform plans (two of them through the shared-memory strategy when large
    // enough) and a gemm plan.
    for (const int block : {2, 3}) {
      const matrix_case source{1, 64, 48, block, block, block, block, 0, 0, 0};
      const matrix_case target{1, 64, 48, 5, 5, 5, 5, 0, 0, 0};
      const std::vector<int> desca = redist::testing::make_descriptor(source, row);
      const std::vector<int> descb = redist::testing::make_descriptor(target, column);
      const auto a = redist::testing::make_local<double>(source, row, desca, 0);
      auto b = redist::testing::make_local<double>(target, column, descb, 1);
      const int m = 64, n = 48, one = 1;
      redist_pdgemr2d(&m, &n, a.data(), &one, &one, desca.data(), b.data(), &one, &one, descb.data(), &row.context);
    }
    const matrix_case square{1, 40, 40, 4, 4, 4, 4, 0, 0, 0};
    const std::vector<int> desc = redist::testing::make_descriptor(square, row);
    const auto a = redist::testing::make_local<double>(square, row, desc, 0);
    auto c = redist::testing::make_local<double>(square, row, desc, 1);
    const int m = 40, one = 1;
    const double alpha = 1.0, beta = 0.0;
    redist_pdtran(&m, &m, &alpha, a.data(), &one, &one, desc.data(), &beta, c.data(), &one, &one, desc.data());
    // C = A^T * A^T through the distributed multiply (neither operand untransposed: never a local multiply in place).
    redist_pdgemm("T", "T", &m, &m, &m, &alpha, a.data(), &one, &one, desc.data(), a.data(), &one, &one, desc.data(),
                  &beta, c.data(), &one, &one, desc.data());
    cached_before_finalize = static_cast<long>(redist::scalapack::cached_plan_count());
  }
  MPI_Finalize();
  if (cached_before_finalize != 4) {
    std::fprintf(stderr, "rank %d: expected 4 cached plans before MPI_Finalize, found %ld\n", rank,
                 cached_before_finalize);
    return 2;
  }
  if (plans_alive_at_finalize != 0) {
    std::fprintf(stderr, "rank %d: %ld cached plans were alive when MPI_Finalize released MPI_COMM_SELF\n", rank,
                 plans_alive_at_finalize);
    return 1;
  }
  return 0;
}
