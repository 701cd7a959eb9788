// SPDX-License-Identifier: BSD-3-Clause
/* The N-d reshape's C API from plain C99: a 3-D brick -> pencil reshape with permuted axes, a non-C input order
 * and a Fortran output order, at the origin and offset by +5 on every axis, with an empty input box on the last
 * rank, checked element-wise against the global index function; NULL alpha/beta and explicit alpha/beta with
 * beta != 0; ranks storing their arrays in different orders (drawn per rank, seed printed); redist_relabel=exact
 * (undoing output boxes passed in reverse: the held boxes a permutation of the passed ones, the data right for the
 * box held); the input in a node buffer (redist_node_buffer_create, read in place by node peers); and every bad
 * input returning the same code on every rank with a reason, writing nothing. The verdict is agreed over all
 * ranks: exit status 0 on every rank iff every check passed on every rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redist/redist.h"

static int rank, nranks;
static int failures; /* checks failed on this rank */

#define CHECK(condition, ...)                                         \
  do {                                                                \
    if (!(condition)) {                                               \
      ++failures;                                                     \
      fprintf(stderr, "[rank %d] %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
    }                                                                 \
  } while (0)

typedef struct {
  int64_t lo[3], hi[3];
} box3;

static const int64_t shape[3] = {6, 5, 7}; /* the input space */
static const int axes[3] = {2, 0, 1};      /* output axis i = input axis axes[i] */
static const int in_order[3] = {1, 0, 2};  /* axis 1 fastest: neither C nor Fortran order */
static const int out_order[3] = {0, 1, 2}; /* Fortran order */
static const double sentinel = -12345.0;

static int64_t elements(box3 b) {
  int64_t n = 1;
  for (int k = 0; k < 3; ++k) n *= b.hi[k] - b.lo[k];
  return n;
}

/* Where index idx of box b lies in its dense array of the given order. */
static int64_t offset(box3 b, const int* order, const int64_t* idx) {
  int64_t at = 0, stride = 1;
  for (int m = 0; m < 3; ++m) {
    const int k = order[m];
    at += (idx[k] - b.lo[k]) * stride;
    stride *= b.hi[k] - b.lo[k];
  }
  return at;
}

/* idx over every index of b, C order. */
#define FOR_EACH_INDEX(b, idx)                         \
  for (idx[0] = b.lo[0]; idx[0] < b.hi[0]; ++idx[0])   \
    for (idx[1] = b.lo[1]; idx[1] < b.hi[1]; ++idx[1]) \
      for (idx[2] = b.lo[2]; idx[2] < b.hi[2]; ++idx[2])

static double input_value(const int64_t* i) { return 10000.0 * i[0] + 100.0 * i[1] + i[2] + 0.25; }
static double old_output_value(const int64_t* j) { return (double)(j[0] + 2 * j[1] + 3 * j[2]); }

/* Part p of n cut into `parts` near-equal parts, from origin. */
static void cut(int64_t n, int p, int parts, int64_t origin, int64_t* lo, int64_t* hi) {
  *lo = origin + n * p / parts;
  *hi = origin + n * (p + 1) / parts;
}

/* a x b = n, a >= b as close as they go (4: 2 x 2; 3: 3 x 1). */
static void grid2(int n, int* a, int* b) {
  *b = 1;
  for (int d = 1; d * d <= n; ++d)
    if (n % d == 0) *b = d;
  *a = n / *b;
}

/* Rank r's brick of `parts` ranks (r >= parts: empty, placed far outside the space). */
static box3 brick(int r, int parts, int64_t origin) {
  box3 b;
  if (r >= parts) {
    for (int k = 0; k < 3; ++k) b.lo[k] = b.hi[k] = 1000;
    return b;
  }
  int g0, g1;
  grid2(parts, &g0, &g1);
  cut(shape[0], r / g1, g0, origin, &b.lo[0], &b.hi[0]);
  cut(shape[1], r % g1, g1, origin, &b.lo[1], &b.hi[1]);
  cut(shape[2], 0, 1, origin, &b.lo[2], &b.hi[2]);
  return b;
}

/* Pencil p of the output space (input space permuted by axes): output axis 2 whole, axes 0 and 1 cut. */
static box3 pencil(int p, int64_t origin) {
  box3 b;
  int g0, g1;
  grid2(nranks, &g0, &g1);
  cut(shape[axes[0]], p / g1, g0, origin, &b.lo[0], &b.hi[0]);
  cut(shape[axes[1]], p % g1, g1, origin, &b.lo[1], &b.hi[1]);
  cut(shape[axes[2]], 0, 1, origin, &b.lo[2], &b.hi[2]);
  return b;
}

static double* input_of(box3 in, const int* order) {
  double* a = malloc(sizeof(double) * (size_t)(elements(in) + 1));
  int64_t i[3];
  FOR_EACH_INDEX(in, i) a[offset(in, order, i)] = input_value(i);
  return a;
}

/* out (the box `held`) == alpha * in permuted + beta * old_output_value? */
static int check_output(const double* out, box3 held, const int* order, double alpha, double beta) {
  int bad = 0;
  int64_t j[3], i[3];
  FOR_EACH_INDEX(held, j) {
    for (int k = 0; k < 3; ++k) i[axes[k]] = j[k];
    const double want = alpha * input_value(i) + beta * old_output_value(j);
    if (out[offset(held, order, j)] != want) ++bad;
  }
  return bad;
}

static void fill_old_output(double* out, box3 held, const int* order) {
  int64_t j[3];
  FOR_EACH_INDEX(held, j) out[offset(held, order, j)] = old_output_value(j);
}

/* The same code on every rank? */
static int same_everywhere(int code) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&code, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&code, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* in_ord, out_ord: this rank's storage orders (they may differ between ranks). */
static void test_reshape(int64_t origin, int empty_last, const int* in_ord, const int* out_ord) {
  const int parts = empty_last && nranks > 1 ? nranks - 1 : nranks;
  const box3 in = brick(rank, parts, origin), out_box = pencil(rank, origin);
  double* a = input_of(in, in_ord);
  double* b = malloc(sizeof(double) * (size_t)(elements(out_box) + 1));
  redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
  int code = redist_reshape_plan_create(MPI_COMM_WORLD, 3, in.lo, in.hi, in_ord, out_box.lo, out_box.hi, out_ord, axes,
                                        MPI_DOUBLE, MPI_INFO_NULL, &plan);
  CHECK(code == MPI_SUCCESS, "origin %lld: create returned %d: %s", (long long)origin, code,
        redist_last_error_message());
  if (code == MPI_SUCCESS) {
    CHECK(redist_reshape_plan_execute(plan, b, a, NULL, NULL) == MPI_SUCCESS, "execute: %s",
          redist_last_error_message());
    CHECK(check_output(b, out_box, out_ord, 1.0, 0.0) == 0, "origin %lld: wrong values (alpha, beta NULL)",
          (long long)origin);
    const double alpha = 2.0, beta = 3.0;
    fill_old_output(b, out_box, out_ord);
    CHECK(redist_reshape_plan_execute(plan, b, a, &alpha, &beta) == MPI_SUCCESS, "execute: %s",
          redist_last_error_message());
    CHECK(check_output(b, out_box, out_ord, alpha, beta) == 0, "origin %lld: wrong values (alpha 2, beta 3)",
          (long long)origin);
    /* Split phase: the same result from start + wait, with local work between them; a second start and an execute
     * before the wait are refused on every rank and the first start still completes; a wait without a start is
     * refused. */
    fill_old_output(b, out_box, out_ord);
    double sum_before = 0, sum_between = 0; /* the local work: in is read, not written, by the exchange */
    for (int64_t k = 0; k < elements(in); ++k) sum_before += a[k];
    CHECK(redist_reshape_plan_start(plan, b, a, &alpha, &beta) == MPI_SUCCESS, "start: %s",
          redist_last_error_message());
    for (int64_t k = 0; k < elements(in); ++k) sum_between += a[k];
    CHECK(sum_between == sum_before, "start wrote into in");
    code = redist_reshape_plan_start(plan, b, a, NULL, NULL);
    CHECK(code == MPI_ERR_ARG && same_everywhere(code), "second start: %d", code);
    code = redist_reshape_plan_execute(plan, b, a, NULL, NULL);
    CHECK(code == MPI_ERR_ARG && same_everywhere(code), "execute during a start: %d", code);
    CHECK(redist_reshape_plan_wait(plan) == MPI_SUCCESS, "wait: %s", redist_last_error_message());
    CHECK(check_output(b, out_box, out_ord, alpha, beta) == 0, "origin %lld: wrong values after start + wait",
          (long long)origin);
    CHECK(redist_reshape_plan_wait(plan) == MPI_ERR_ARG, "a wait without a start was accepted");
    int64_t lo[3], hi[3];
    int passed_by = -1;
    CHECK(redist_reshape_output_box(plan, lo, hi, &passed_by) == MPI_SUCCESS && passed_by == rank &&
              memcmp(lo, out_box.lo, sizeof lo) == 0 && memcmp(hi, out_box.hi, sizeof hi) == 0,
          "without relabeling every rank holds its own output box");
    /* A NULL input on one rank (of a non-empty box): agreed, nothing written anywhere. */
    for (int64_t k = 0; k < elements(out_box); ++k) b[k] = sentinel;
    code = redist_reshape_plan_execute(plan, b, rank == nranks - 1 && elements(in) > 0 ? NULL : a, NULL, NULL);
    if (parts == nranks) CHECK(code == MPI_ERR_ARG, "NULL input: %d", code);
    CHECK(same_everywhere(code), "NULL input: codes differ");
    for (int64_t k = 0; code != MPI_SUCCESS && k < elements(out_box); ++k)
      CHECK(b[k] == sentinel, "NULL input: out written");
  }
  CHECK(redist_reshape_plan_free(&plan) == MPI_SUCCESS && plan == REDIST_RESHAPE_PLAN_NULL, "free");
  free(a);
  free(b);
}

static void test_relabel(const int* in_ord, const int* out_ord) {
  /* Each rank's input is the pre-image of its pencil and the pencils are passed in reverse: relabeling back makes
   * every move local. */
  const box3 mine = pencil(rank, 5), passed = pencil(nranks - 1 - rank, 5);
  box3 in;
  for (int k = 0; k < 3; ++k) {
    in.lo[axes[k]] = mine.lo[k];
    in.hi[axes[k]] = mine.hi[k];
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_relabel", "exact");
  MPI_Info_set(info, "redist_strategy", "alltoallv");
  redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
  int code = redist_reshape_plan_create(MPI_COMM_WORLD, 3, in.lo, in.hi, in_ord, passed.lo, passed.hi, out_ord, axes,
                                        MPI_DOUBLE, info, &plan);
  MPI_Info_free(&info);
  CHECK(code == MPI_SUCCESS, "relabel: create returned %d: %s", code, redist_last_error_message());
  if (code != MPI_SUCCESS) return;
  box3 held;
  int passed_by = -1;
  CHECK(redist_reshape_output_box(plan, held.lo, held.hi, &passed_by) == MPI_SUCCESS, "output_box");
  /* The held boxes are the passed ones, permuted: rank passed_by passed the box this rank holds. */
  box3* all_passed = malloc(sizeof(box3) * (size_t)nranks);
  int* all_by = malloc(sizeof(int) * (size_t)nranks);
  int* seen = calloc((size_t)nranks, sizeof(int));
  MPI_Allgather(&passed, 6, MPI_INT64_T, all_passed, 6, MPI_INT64_T, MPI_COMM_WORLD);
  MPI_Allgather(&passed_by, 1, MPI_INT, all_by, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; ++r) {
    CHECK(all_by[r] >= 0 && all_by[r] < nranks && !seen[all_by[r]], "passed_by is not a permutation");
    if (all_by[r] >= 0 && all_by[r] < nranks) seen[all_by[r]] = 1;
  }
  int moved = 0;
  for (int r = 0; r < nranks; ++r) moved += all_by[r] != r;
  CHECK(moved == nranks / 2 * 2, "redist_relabel=exact moved %d of %d output boxes, expected the reversal", moved,
        nranks);
  CHECK(passed_by >= 0 && passed_by < nranks && memcmp(&all_passed[passed_by], &held, sizeof held) == 0,
        "the held box is not the box rank %d passed", passed_by);
  double* a = input_of(in, in_ord);
  double* b = malloc(sizeof(double) * (size_t)(elements(held) + 1));
  CHECK(redist_reshape_plan_execute(plan, b, a, NULL, NULL) == MPI_SUCCESS, "relabel: execute: %s",
        redist_last_error_message());
  CHECK(check_output(b, held, out_ord, 1.0, 0.0) == 0, "relabel: wrong values in the held box");
  CHECK(redist_reshape_plan_free(&plan) == MPI_SUCCESS, "free");
  free(a);
  free(b);
  free(all_passed);
  free(all_by);
  free(seen);
}

/* Every bad input: the same code on every rank, a reason, a NULL plan, nothing written. */
static void expect_error(const char* what, int expected, int ndim, box3 in, const int* in_ord, box3 out,
                         const int* out_ord, const int* ax, MPI_Datatype type, MPI_Info info, int null_plan) {
  redist_reshape_plan plan = (redist_reshape_plan)1; /* overwritten with REDIST_RESHAPE_PLAN_NULL */
  const int code = redist_reshape_plan_create(MPI_COMM_WORLD, ndim, in.lo, in.hi, in_ord, out.lo, out.hi, out_ord, ax,
                                              type, info, null_plan ? NULL : &plan);
  CHECK(code == expected, "%s: returned %d, expected %d (%s)", what, code, expected, redist_last_error_message());
  CHECK(same_everywhere(code), "%s: codes differ over the ranks", what);
  CHECK(code == MPI_SUCCESS || redist_last_error_message()[0] != '\0', "%s: no reason", what);
  CHECK(null_plan || plan == REDIST_RESHAPE_PLAN_NULL, "%s: plan not set to REDIST_RESHAPE_PLAN_NULL", what);
  if (rank == 0 && code != MPI_SUCCESS) printf("  %s: %s\n", what, redist_last_error_message());
}

static void test_errors(void) {
  const int last = rank == nranks - 1;
  const box3 in = brick(rank, nranks, 0), out = pencil(rank, 0);
  const int bad_axes[3] = {0, 0, 1}, bad_order[3] = {0, 1, 3};
  box3 overlap = out, gap = out, backwards = in;
  if (rank == 0) overlap.hi[0] += 1; /* into the neighbour's box (one rank: past the space) */
  if (rank == 0) gap.hi[2] -= 1;     /* a hole (one rank: the space shrinks) */
  if (last) backwards.lo[1] = backwards.hi[1] + 1;
  expect_error("overlapping output boxes", MPI_ERR_ARG, 3, in, in_order, overlap, out_order, axes, MPI_DOUBLE,
               MPI_INFO_NULL, 0);
  expect_error("a gap in the output boxes", MPI_ERR_ARG, 3, in, in_order, gap, out_order, axes, MPI_DOUBLE,
               MPI_INFO_NULL, 0);
  expect_error("output space not the permuted input space", MPI_ERR_ARG, 3, in, in_order, out, out_order, NULL,
               MPI_DOUBLE, MPI_INFO_NULL, 0);
  expect_error("axes not a permutation (last rank)", MPI_ERR_ARG, 3, in, in_order, out, out_order,
               last ? bad_axes : axes, MPI_DOUBLE, MPI_INFO_NULL, 0);
  expect_error("in_order not a permutation (rank 0)", MPI_ERR_ARG, 3, in, rank == 0 ? bad_order : in_order, out,
               out_order, axes, MPI_DOUBLE, MPI_INFO_NULL, 0);
  expect_error("lo > hi (last rank)", MPI_ERR_ARG, 3, backwards, in_order, out, out_order, axes, MPI_DOUBLE,
               MPI_INFO_NULL, 0);
  expect_error("ndim 0", MPI_ERR_ARG, 0, in, in_order, out, out_order, axes, MPI_DOUBLE, MPI_INFO_NULL, 0);
  expect_error("ndim 9", MPI_ERR_ARG, 9, in, in_order, out, out_order, axes, MPI_DOUBLE, MPI_INFO_NULL, 0);
  expect_error("unsupported type", MPI_ERR_TYPE, 3, in, in_order, out, out_order, axes, MPI_CHAR, MPI_INFO_NULL, 0);
  expect_error("NULL plan pointer (last rank)", MPI_ERR_ARG, 3, in, in_order, out, out_order, axes, MPI_DOUBLE,
               MPI_INFO_NULL, last);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", last ? "bogus" : "auto");
  expect_error("bad redist_strategy (last rank)", MPI_ERR_ARG, 3, in, in_order, out, out_order, axes, MPI_DOUBLE, info,
               0);
  MPI_Info_delete(info, "redist_strategy");
  MPI_Info_set(info, "redist_stores", last ? "fast" : "streaming");
  expect_error("bad redist_stores (last rank)", MPI_ERR_ARG, 3, in, in_order, out, out_order, axes, MPI_DOUBLE, info,
               0);
  if (nranks > 1) {
    MPI_Info_set(info, "redist_stores", rank == 0 ? "cached" : "streaming");
    expect_error("ranks disagree on redist_stores", MPI_ERR_ARG, 3, in, in_order, out, out_order, axes, MPI_DOUBLE,
                 info, 0);
  }
  MPI_Info_delete(info, "redist_stores");
  MPI_Info_set(info, "redist_relabel", "maybe");
  expect_error("bad redist_relabel", MPI_ERR_ARG, 3, in, in_order, out, out_order, axes, MPI_DOUBLE, info, 0);
  MPI_Info_free(&info);

  /* A NULL array, through its own call (the box3 helpers cannot pass one). */
  redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
  int code = redist_reshape_plan_create(MPI_COMM_WORLD, 3, last ? NULL : in.lo, in.hi, in_order, out.lo, out.hi,
                                        out_order, axes, MPI_DOUBLE, MPI_INFO_NULL, &plan);
  CHECK(code == MPI_ERR_ARG && same_everywhere(code) && plan == REDIST_RESHAPE_PLAN_NULL, "NULL in_lo: %d", code);

  /* NULL, freed and made-up plans: refused, nothing written. */
  double a[1] = {1.0}, b[1] = {sentinel};
  code = redist_reshape_plan_execute(REDIST_RESHAPE_PLAN_NULL, b, a, NULL, NULL);
  CHECK(code == MPI_ERR_ARG && same_everywhere(code) && b[0] == sentinel, "NULL plan: %d", code);
  CHECK(redist_last_error_message()[0] != '\0', "NULL plan: no reason");
  int64_t lo[3] = {-1, -1, -1}, hi[3] = {-1, -1, -1};
  CHECK(redist_reshape_output_box((redist_reshape_plan)77, lo, hi, NULL) == MPI_ERR_ARG && lo[0] == -1 && hi[0] == -1,
        "made-up plan");
  code = redist_reshape_plan_create(MPI_COMM_WORLD, 3, in.lo, in.hi, in_order, out.lo, out.hi, out_order, axes,
                                    MPI_DOUBLE, MPI_INFO_NULL, &plan);
  CHECK(code == MPI_SUCCESS, "create: %s", redist_last_error_message());
  redist_reshape_plan copy = plan;
  CHECK(redist_reshape_plan_free(&plan) == MPI_SUCCESS && plan == REDIST_RESHAPE_PLAN_NULL, "free");
  CHECK(redist_reshape_plan_free(&plan) == MPI_SUCCESS, "freeing REDIST_RESHAPE_PLAN_NULL does nothing");
  CHECK(redist_reshape_plan_execute(copy, b, a, NULL, NULL) == MPI_ERR_ARG && b[0] == sentinel,
        "a freed plan executed");
  CHECK(redist_reshape_plan_free(&copy) == MPI_ERR_ARG, "a freed plan freed again");
  CHECK(redist_reshape_plan_free(NULL) == MPI_ERR_ARG, "redist_reshape_plan_free(NULL)");
}

/* The input in a node buffer (node peers read it in place under the shared_memory strategy): the same results as
 * from a private copy; bad sizes and pointers refused alike on every rank; freed and unknown handles refused. */
static void test_node_buffer(void) {
  const box3 in = brick(rank, nranks, 0), out_box = pencil(rank, 0);
  const int64_t bytes = (int64_t)sizeof(double) * elements(in);
  redist_node_buffer buffer = REDIST_NODE_BUFFER_NULL;
  int code = redist_node_buffer_create(MPI_COMM_WORLD, bytes, &buffer);
  CHECK(code == MPI_SUCCESS && buffer != REDIST_NODE_BUFFER_NULL, "node buffer create: %d %s", code,
        redist_last_error_message());
  if (code != MPI_SUCCESS) return;
  double* shared = redist_node_buffer_data(buffer);
  double* private_copy = input_of(in, in_order);
  CHECK(shared != NULL || bytes == 0, "node buffer data is NULL");
  if (bytes > 0) memcpy(shared, private_copy, (size_t)bytes);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "shared_memory");
  redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
  code = redist_reshape_plan_create(MPI_COMM_WORLD, 3, in.lo, in.hi, in_order, out_box.lo, out_box.hi, out_order, axes,
                                    MPI_DOUBLE, info, &plan);
  MPI_Info_free(&info);
  CHECK(code == MPI_SUCCESS, "create: %s", redist_last_error_message());
  double* b = malloc(sizeof(double) * (size_t)(elements(out_box) + 1));
  if (code == MPI_SUCCESS) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      for (int64_t k = 0; k < elements(out_box); ++k) b[k] = sentinel;
      CHECK(redist_reshape_plan_execute(plan, b, shared, NULL, NULL) == MPI_SUCCESS, "execute: %s",
            redist_last_error_message());
      CHECK(check_output(b, out_box, out_order, 1.0, 0.0) == 0, "input in a node buffer: wrong values");
    }
    const double alpha = -1.5, beta = 2.0;
    fill_old_output(b, out_box, out_order);
    CHECK(redist_reshape_plan_execute(plan, b, shared, &alpha, &beta) == MPI_SUCCESS, "execute: %s",
          redist_last_error_message());
    CHECK(check_output(b, out_box, out_order, alpha, beta) == 0, "input in a node buffer: wrong values (alpha, beta)");
    /* The input in the node buffer on some ranks only: the usual path, the same values. */
    for (int64_t k = 0; k < elements(out_box); ++k) b[k] = sentinel;
    CHECK(redist_reshape_plan_execute(plan, b, rank % 2 ? private_copy : shared, NULL, NULL) == MPI_SUCCESS,
          "execute: %s", redist_last_error_message());
    CHECK(check_output(b, out_box, out_order, 1.0, 0.0) == 0, "input in a node buffer on some ranks: wrong values");
  }
  CHECK(redist_reshape_plan_free(&plan) == MPI_SUCCESS, "free plan");
  redist_node_buffer copy = buffer;
  CHECK(redist_node_buffer_free(&buffer) == MPI_SUCCESS && buffer == REDIST_NODE_BUFFER_NULL, "node buffer free");
  CHECK(redist_node_buffer_free(&buffer) == MPI_SUCCESS, "freeing REDIST_NODE_BUFFER_NULL does nothing");
  CHECK(redist_node_buffer_free(&copy) == MPI_ERR_ARG, "a freed node buffer freed again");
  CHECK(redist_node_buffer_data(copy) == NULL && redist_node_buffer_data((redist_node_buffer)77) == NULL,
        "data of a freed or made-up node buffer");
  CHECK(redist_node_buffer_free(NULL) == MPI_ERR_ARG, "redist_node_buffer_free(NULL)");

  /* A negative size or a NULL handle pointer on the last rank: every rank refuses, nothing allocated. */
  const int last = rank == nranks - 1;
  code = redist_node_buffer_create(MPI_COMM_WORLD, last ? -8 : 64, &buffer);
  CHECK(code == MPI_ERR_ARG && same_everywhere(code) && buffer == REDIST_NODE_BUFFER_NULL, "negative size: %d", code);
  CHECK(strstr(redist_last_error_message(), "-8") != NULL, "negative size: the reason names the size: %s",
        redist_last_error_message());
  code = redist_node_buffer_create(MPI_COMM_WORLD, 64, last ? NULL : &buffer);
  CHECK(code == MPI_ERR_ARG && same_everywhere(code) && buffer == REDIST_NODE_BUFFER_NULL, "NULL handle: %d", code);
  free(b);
  free(private_copy);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  test_reshape(0, 0, in_order, out_order);
  test_reshape(5, 0, in_order, out_order);
  test_reshape(5, 1, in_order, out_order);
  test_relabel(in_order, out_order);

  /* Every rank its own storage orders, drawn from the six permutations of 3 axes (seed varies per run). */
  static const int permutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  unsigned seed = (unsigned)time(NULL);
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("test_reshape_c: per-rank storage orders, seed %u\n", seed);
  srand(seed + 7919u * (unsigned)rank);
  const int* my_in = permutations[rand() % 6];
  const int* my_out = permutations[rand() % 6];
  test_reshape(5, 0, my_in, my_out);
  test_reshape(0, 1, my_in, my_out);
  test_relabel(my_in, my_out);
  /* Rank 0 alone in another order than the rest (the others' order is the one data travels in). */
  test_reshape(0, 0, rank == 0 ? permutations[5] : in_order, rank == 0 ? permutations[3] : out_order);
  test_node_buffer();
  test_errors();

  int failed_anywhere = 0;
  MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_reshape_c on %d ranks: %s (%d failed checks)\n", nranks, failed_anywhere ? "FAILED" : "passed",
           failed_anywhere);
  MPI_Finalize();
  return failed_anywhere ? 1 : 0;
}
