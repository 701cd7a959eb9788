// SPDX-License-Identifier: BSD-3-Clause
/* Split-phase reshapes through redist's C interface: batches of 3-D fields move from bricks to x-pencils; while
 * batch k+1 travels (redist_reshape_plan_start) batch k is transformed locally, then redist_reshape_plan_wait.
 * Exit status 0 when the pipeline's results equal blocking executions' exactly. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <redist/redist.h>

enum { batches = 4 };

/* The p-th of parts pieces of [0, n): the first n % parts pieces are one longer. */
static void piece(int64_t n, int parts, int p, int64_t* lo, int64_t* hi) {
  const int64_t base = n / parts, extra = n % parts;
  *lo = p * base + (p < extra ? p : extra);
  *hi = *lo + base + (p < extra ? 1 : 0);
}

/* The local stage (an FFT along x would go here). */
static void local_stage(double* pencil, int64_t values, int batch) {
  for (int64_t i = 0; i < values; ++i) pencil[i] = pencil[i] * (1.0 + batch) + 0.5;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int64_t n[3] = {48, 40, 36};
  int bricks[3] = {0, 0, 0}, pencils[2] = {0, 0};
  MPI_Dims_create(nranks, 3, bricks);
  MPI_Dims_create(nranks, 2, pencils);
  int64_t in_lo[3], in_hi[3], out_lo[3], out_hi[3];
  const int at[3] = {rank / (bricks[1] * bricks[2]), rank / bricks[2] % bricks[1], rank % bricks[2]};
  for (int k = 0; k < 3; ++k) piece(n[k], bricks[k], at[k], &in_lo[k], &in_hi[k]);
  out_lo[0] = 0, out_hi[0] = n[0];
  piece(n[1], pencils[0], rank / pencils[1], &out_lo[1], &out_hi[1]);
  piece(n[2], pencils[1], rank % pencils[1], &out_lo[2], &out_hi[2]);
  const int x_fastest[3] = {0, 2, 1};

  redist_reshape_plan to_x = REDIST_RESHAPE_PLAN_NULL;
  if (redist_reshape_plan_create(MPI_COMM_WORLD, 3, in_lo, in_hi, NULL, out_lo, out_hi, x_fastest, NULL, MPI_DOUBLE,
                                 MPI_INFO_NULL, &to_x) != MPI_SUCCESS) { /* the same code on every rank */
    if (rank == 0) fprintf(stderr, "redist: %s\n", redist_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int64_t brick = (in_hi[0] - in_lo[0]) * (in_hi[1] - in_lo[1]) * (in_hi[2] - in_lo[2]);
  const int64_t pencil = n[0] * (out_hi[1] - out_lo[1]) * (out_hi[2] - out_lo[2]);
  double* in[batches];
  double* out[batches];
  double* blocking = malloc(sizeof(double) * (size_t)(pencil + 1));
  for (int k = 0; k < batches; ++k) {
    in[k] = malloc(sizeof(double) * (size_t)(brick + 1));
    out[k] = malloc(sizeof(double) * (size_t)(pencil + 1));
    for (int64_t i = 0; i < brick; ++i) in[k][i] = rank * 1e6 + k * 1e4 + (double)i;
  }
  int rc = redist_reshape_plan_start(to_x, out[0], in[0], NULL, NULL);
  if (rc == MPI_SUCCESS) rc = redist_reshape_plan_wait(to_x);
  for (int k = 0; k < batches && rc == MPI_SUCCESS; ++k) {
    if (k + 1 < batches) rc = redist_reshape_plan_start(to_x, out[k + 1], in[k + 1], NULL, NULL);
    local_stage(out[k], pencil, k); /* overlaps the messages of batch k+1 */
    if (k + 1 < batches && rc == MPI_SUCCESS) rc = redist_reshape_plan_wait(to_x);
  }
  int wrong = rc != MPI_SUCCESS;
  for (int k = 0; k < batches && !wrong; ++k) { /* blocking, batch by batch, for comparison */
    wrong |= redist_reshape_plan_execute(to_x, blocking, in[k], NULL, NULL) != MPI_SUCCESS;
    local_stage(blocking, pencil, k);
    for (int64_t i = 0; i < pencil; ++i) wrong |= blocking[i] != out[k][i];
  }
  int any = 0;
  MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%d batches bricks -> x-pencils, start/wait around local work: %s\n", batches,
           any ? "WRONG" : "same as blocking");
  redist_reshape_plan_free(&to_x);
  for (int k = 0; k < batches; ++k) {
    free(in[k]);
    free(out[k]);
  }
  free(blocking);
  MPI_Finalize();
  return any;
}
