// SPDX-License-Identifier: BSD-3-Clause
/* A 3-D FFT's first reshape through redist's C interface: every rank passes its input brick and its output
 * x-pencil (boxes lo inclusive, hi exclusive, as FFT libraries hand them out), the pencil stored with x contiguous;
 * then the way back. Exit status 0 when the round trip returns every element exactly. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <redist/redist.h>

/* The p-th of parts pieces of [0, n): the first n % parts pieces are one longer. */
static void piece(int64_t n, int parts, int p, int64_t* lo, int64_t* hi) {
  const int64_t base = n / parts, extra = n % parts;
  *lo = p * base + (p < extra ? p : extra);
  *hi = *lo + base + (p < extra ? 1 : 0);
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
  out_lo[0] = 0, out_hi[0] = n[0]; /* x whole; y and z cut over the 2-D grid */
  piece(n[1], pencils[0], rank / pencils[1], &out_lo[1], &out_hi[1]);
  piece(n[2], pencils[1], rank % pencils[1], &out_lo[2], &out_hi[2]);
  const int x_fastest[3] = {0, 2, 1};

  redist_reshape_plan to_x = REDIST_RESHAPE_PLAN_NULL, back = REDIST_RESHAPE_PLAN_NULL;
  int rc = redist_reshape_plan_create(MPI_COMM_WORLD, 3, in_lo, in_hi, NULL, out_lo, out_hi, x_fastest, NULL,
                                      MPI_C_DOUBLE_COMPLEX, MPI_INFO_NULL, &to_x);
  if (rc == MPI_SUCCESS)
    rc = redist_reshape_plan_create(MPI_COMM_WORLD, 3, out_lo, out_hi, x_fastest, in_lo, in_hi, NULL, NULL,
                                    MPI_C_DOUBLE_COMPLEX, MPI_INFO_NULL, &back);
  if (rc != MPI_SUCCESS) { /* the same code on every rank */
    if (rank == 0) fprintf(stderr, "redist: %s\n", redist_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int64_t brick = (in_hi[0] - in_lo[0]) * (in_hi[1] - in_lo[1]) * (in_hi[2] - in_lo[2]);
  const int64_t pencil = n[0] * (out_hi[1] - out_lo[1]) * (out_hi[2] - out_lo[2]);
  double* in = malloc(sizeof(double) * 2 * (size_t)(brick + 1));
  double* out = malloc(sizeof(double) * 2 * (size_t)(pencil + 1));
  double* again = malloc(sizeof(double) * 2 * (size_t)(brick + 1));
  for (int64_t i = 0; i < 2 * brick; ++i) in[i] = rank * 1e6 + (double)i;
  redist_reshape_plan_execute(to_x, out, in, NULL, NULL); /* out = in, as x-pencils */
  /* ... FFTs along x: out[i + n[0] * (k + nz * j)] for the pencil's (i, j, k) ... */
  redist_reshape_plan_execute(back, again, out, NULL, NULL);
  int wrong = 0;
  for (int64_t i = 0; i < 2 * brick; ++i) wrong |= again[i] != in[i];
  int any = 0;
  MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("bricks %dx%dx%d -> x-pencils %dx%d and back: %s\n", bricks[0], bricks[1], bricks[2], pencils[0], pencils[1],
           any ? "WRONG" : "exact");
  redist_reshape_plan_free(&to_x);
  redist_reshape_plan_free(&back);
  free(in);
  free(out);
  free(again);
  MPI_Finalize();
  return any;
}
