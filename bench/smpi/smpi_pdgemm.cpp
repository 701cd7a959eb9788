// SPDX-License-Identifier: BSD-3-Clause
// smpi_bench gemm's scalapack:pdgemm: ScaLAPACK's own pdgemm (BLACS and PBLAS compiled against SMPI into this module:
// CMakeLists.txt, REDIST_SMPI_SCALAPACK_SOURCE) on the benchmark's block-cyclic layout. BLACS's broadcasts are its
// own rings of point-to-point messages (its default topology, '1'), so the MPI's collective selector does not
// change them. The point-to-point sends made during a multiply are counted here (PMPI), for the JSON's bytes and
// messages.
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "smpi_common.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* my_row, int* my_col);
void Cblacs_gridexit(int context);
void pdgemm_(const char* trans_a, const char* trans_b, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desc_a, const double* b, const int* ib,
             const int* jb, const int* desc_b, const double* beta, double* c, const int* ic, const int* jc,
             const int* desc_c);
}

namespace {
// Per simulated rank (the module's globals are privatized): counting only inside a pdgemm call.
bool counting = false;
long long sent_bytes = 0, sent_messages = 0;

void count(int items, MPI_Datatype type) {
  if (!counting) return;
  int size = 0;
  PMPI_Type_size(type, &size);
  sent_bytes += static_cast<long long>(items) * size;
  ++sent_messages;
}
}  // namespace

// BLACS's sends (BI_Ssend, BI_Asend, its combines' exchanges); libredist's too, but those are never counted.
extern "C" {
int MPI_Send(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c) {
  count(n, t);
  return PMPI_Send(b, n, t, to, tag, c);
}
int MPI_Isend(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request* r) {
  count(n, t);
  return PMPI_Isend(b, n, t, to, tag, c, r);
}
int MPI_Sendrecv(const void* s, int sn, MPI_Datatype st, int to, int stag, void* r, int rn, MPI_Datatype rt, int from,
                 int rtag, MPI_Comm c, MPI_Status* status) {
  count(sn, st);
  return PMPI_Sendrecv(s, sn, st, to, stag, r, rn, rt, from, rtag, c, status);
}
}

namespace smpi_bench {

scalapack_pdgemm::scalapack_pdgemm(std::int64_t n, std::int64_t nb, int rows, int cols, redist::grid_position me,
                                   std::int64_t local_rows)
    : n_(static_cast<int>(n)) {
  Cblacs_get(0, 0, &context_);  // the system context: MPI_COMM_WORLD
  Cblacs_gridinit(&context_, "Row-major", rows, cols);
  int grid_rows = 0, grid_cols = 0, my_row = -1, my_col = -1;
  Cblacs_gridinfo(context_, &grid_rows, &grid_cols, &my_row, &my_col);
  if (grid_rows != rows || grid_cols != cols || my_row != me.row || my_col != me.col)
    throw std::runtime_error("BLACS placed this rank at (" + std::to_string(my_row) + ", " + std::to_string(my_col) +
                             ") of " + std::to_string(grid_rows) + "x" + std::to_string(grid_cols) +
                             "; the layout has it at (" + std::to_string(me.row) + ", " + std::to_string(me.col) +
                             ") of " + std::to_string(rows) + "x" + std::to_string(cols));
  // DTYPE_ 1 (dense), context, M, N, MB, NB, RSRC, CSRC, LLD (at least 1).
  const int block = static_cast<int>(nb), ld = static_cast<int>(std::max<std::int64_t>(local_rows, 1));
  const int d[9] = {1, context_, n_, n_, block, block, 0, 0, ld};
  std::copy(d, d + 9, descriptor_);
}

scalapack_pdgemm::~scalapack_pdgemm() { Cblacs_gridexit(context_); }

void scalapack_pdgemm::multiply(double* c, const double* a, const double* b) {
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  counting = true;
  pdgemm_("N", "N", &n_, &n_, &n_, &alpha, a, &one, &one, descriptor_, b, &one, &one, descriptor_, &beta, c, &one, &one,
          descriptor_);
  counting = false;
}

long long scalapack_pdgemm::bytes_sent() { return sent_bytes; }
long long scalapack_pdgemm::messages_sent() { return sent_messages; }
void scalapack_pdgemm::reset_counts() { sent_bytes = sent_messages = 0; }

}  // namespace smpi_bench
