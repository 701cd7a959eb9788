// SPDX-License-Identifier: BSD-3-Clause
/* The C API of the in-place variable-size all-to-all, from plain C99: redist_alltoallv_inplace on random
 * counts (zeros, send total != receive total) with zeroed options, NULL options and every algorithm (the
 * report filled), compared with MPI_Alltoallv out of place; redist_alltoallv with MPI_IN_PLACE on symmetric
 * counts whose receive areas lie in reverse rank order with gaps (the gaps must stay untouched) and without
 * MPI_IN_PLACE (MPI's own call); redist_alltoall with MPI_IN_PLACE; and the error codes, the same on every
 * rank with nothing moved: MPI_ERR_COUNT (a negative count, a capacity too small, recvcounts not matching the
 * senders, asymmetric MPI_IN_PLACE counts), MPI_ERR_BUFFER (overlapping MPI_IN_PLACE areas), MPI_ERR_TYPE (lower
 * bound != 0), MPI_ERR_ARG (a work buffer size out of range, an unknown algorithm, bitonic without its capacity); a
 * plan (redist_inplace_plan_create, redist_inplace_plan_execute, redist_inplace_plan_free) executed several
 * times on new data, its handle rules and its refusals. The verdict is
 * agreed over all ranks: exit status 0 on every rank iff every check passed on every rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redist/redist.h"
#include "test_seed.h"

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

/* Same sequence on every rank (from the run's base seed, test_seed.h), so all ranks agree on the global counts. */
static uint64_t random_state;
static uint32_t next_random(void) {
  random_state = random_state * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(random_state >> 33);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* counts[i * nranks + j] = elements rank i sends to rank j. */
static int64_t* random_matrix(int max_count, int symmetric) {
  int64_t* c = malloc(sizeof(int64_t) * (size_t)(nranks * nranks));
  for (int i = 0; i < nranks; ++i)
    for (int j = 0; j < nranks; ++j) {
      const int64_t v = next_random() % 4 == 0 ? 0 : (int64_t)(next_random() % (uint32_t)(max_count + 1));
      if (!symmetric || j >= i)
        c[i * nranks + j] = v;
      else
        c[i * nranks + j] = c[j * nranks + i];
    }
  return c;
}

static double value_of(int from, int to, int64_t k) { return from * 1.0e6 + to * 1.0e3 + (double)k * 1.0e-3; }

/* The same code on every rank? */
static int same_everywhere(int code) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&code, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&code, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* One problem: this rank's counts, a buffer of `capacity` doubles holding s(rank, *), and MPI's result. */
typedef struct {
  int64_t *sendcounts, *recvcounts;
  int64_t send_total, recv_total, capacity;
  double *buf, *original, *expected;
} problem;

/* shift: added to every value, so that each execution of a plan gets new data. */
static problem make_problem_shifted(const int64_t* c, int64_t slack, double shift) {
  problem x;
  x.sendcounts = malloc(sizeof(int64_t) * (size_t)nranks);
  x.recvcounts = malloc(sizeof(int64_t) * (size_t)nranks);
  x.send_total = x.recv_total = 0;
  for (int j = 0; j < nranks; ++j) {
    x.sendcounts[j] = c[rank * nranks + j];
    x.recvcounts[j] = c[j * nranks + rank];
    x.send_total += x.sendcounts[j];
    x.recv_total += x.recvcounts[j];
  }
  x.capacity = max64(x.send_total, x.recv_total) + slack;
  x.buf = malloc(sizeof(double) * (size_t)(x.capacity + 1));
  x.original = malloc(sizeof(double) * (size_t)(x.capacity + 1));
  x.expected = malloc(sizeof(double) * (size_t)(x.recv_total + 1));
  int64_t at = 0;
  for (int j = 0; j < nranks; ++j)
    for (int64_t k = 0; k < x.sendcounts[j]; ++k) x.buf[at++] = value_of(rank, j, k) + shift;
  for (; at < x.capacity + 1; ++at) x.buf[at] = -1.0;
  memcpy(x.original, x.buf, sizeof(double) * (size_t)(x.capacity + 1));
  /* The reference: MPI_Alltoallv out of place. */
  int* sc = malloc(sizeof(int) * (size_t)nranks);
  int* rc = malloc(sizeof(int) * (size_t)nranks);
  int* sd = malloc(sizeof(int) * (size_t)nranks);
  int* rd = malloc(sizeof(int) * (size_t)nranks);
  int s = 0, r = 0;
  for (int j = 0; j < nranks; ++j) {
    sc[j] = (int)x.sendcounts[j];
    rc[j] = (int)x.recvcounts[j];
    sd[j] = s;
    rd[j] = r;
    s += sc[j];
    r += rc[j];
  }
  MPI_Alltoallv(x.original, sc, sd, MPI_DOUBLE, x.expected, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  return x;
}

static problem make_problem(const int64_t* c, int64_t slack) { return make_problem_shifted(c, slack, 0.0); }

static void reset(problem* x) { memcpy(x->buf, x->original, sizeof(double) * (size_t)(x->capacity + 1)); }

static void free_problem(problem* x) {
  free(x->sendcounts);
  free(x->recvcounts);
  free(x->buf);
  free(x->original);
  free(x->expected);
}

static void compare_result(const problem* x, const char* what) {
  int shown = 0;
  for (int64_t k = 0; k < x->recv_total; ++k)
    if (x->buf[k] != x->expected[k] && shown++ < 5)
      CHECK(0, "%s: element %lld is %g, MPI_Alltoallv gives %g", what, (long long)k, x->buf[k], x->expected[k]);
}

static void expect_untouched(const problem* x, const char* what) {
  if (memcmp(x->buf, x->original, sizeof(double) * (size_t)(x->capacity + 1)) != 0)
    CHECK(0, "%s: a refused call changed the buffer", what);
}

static void test_inplace(void) {
  int64_t* c = random_matrix(300, 0);
  problem x = make_problem(c, 0);
  int64_t largest = 0; /* bitonic's capacity: the largest total over all ranks */
  MPI_Allreduce(&x.capacity, &largest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);

  /* NULL options, recvcounts NULL. */
  int code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, NULL);
  CHECK(code == MPI_SUCCESS, "NULL options: returned %d", code);
  if (code == MPI_SUCCESS) compare_result(&x, "NULL options");

  /* Zeroed options (the defaults) with a report, recvcounts given. */
  reset(&x);
  redist_inplace_options opts;
  redist_inplace_report report;
  memset(&opts, 0, sizeof opts);
  memset(&report, 0xff, sizeof report);
  opts.report = &report;
  int64_t* received = (int64_t*)malloc((size_t)nranks * sizeof(int64_t));
  for (int j = 0; j < nranks; ++j) received[j] = -1;
  opts.recvcounts_out = received;
  code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, x.recvcounts, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
  CHECK(code == MPI_SUCCESS, "zeroed options: returned %d", code);
  CHECK(same_everywhere(code) && same_everywhere((int)report.algorithm), "zeroed options: ranks disagree");
  if (code == MPI_SUCCESS) {
    compare_result(&x, "zeroed options");
    CHECK(report.work_bytes == (int64_t)4 << 20, "zeroed options: report.work_bytes = %lld, expected 4 MiB",
          (long long)report.work_bytes);
    CHECK(report.algorithm == REDIST_INPLACE_CHUNKED || report.algorithm == REDIST_INPLACE_PAIRWISE ||
              report.algorithm == REDIST_INPLACE_BITONIC,
          "zeroed options: report.algorithm = %d", (int)report.algorithm);
    CHECK(report.bytes_sent >= 0 && report.messages_sent >= 0 && report.bytes_local >= 0 && report.metadata_bytes >= 0,
          "zeroed options: negative counters in the report");
    int64_t received_total = 0;
    for (int j = 0; j < nranks; ++j) {
      CHECK(received[j] == x.recvcounts[j], "zeroed options: recvcounts_out[%d] = %lld, expected %lld", j,
            (long long)received[j], (long long)x.recvcounts[j]);
      received_total += x.recvcounts[j];
    }
    CHECK(report.received_elements == received_total, "zeroed options: received_elements = %lld, expected %lld",
          (long long)report.received_elements, (long long)received_total);
    CHECK(memchr(report.reason, '\0', sizeof report.reason) != NULL && report.reason[0] != '\0',
          "zeroed options: the reason is empty or not terminated");
    int64_t off_rank = x.send_total - x.sendcounts[rank];
    if (off_rank > 0)
      CHECK(report.bytes_sent >= off_rank * (int64_t)sizeof(double) && report.messages_sent > 0,
            "zeroed options: %lld bytes leave this rank but the report says %lld bytes in %lld messages",
            (long long)(off_rank * (int64_t)sizeof(double)), (long long)report.bytes_sent,
            (long long)report.messages_sent);
  }

  free(received);

  /* Every algorithm, the smallest work buffer; chunked may refuse (MPI_ERR_ARG on every rank, nothing moved). */
  const redist_inplace_algorithm algorithms[4] = {REDIST_INPLACE_AUTO, REDIST_INPLACE_CHUNKED, REDIST_INPLACE_PAIRWISE,
                                                  REDIST_INPLACE_BITONIC};
  const char* names[4] = {"auto", "chunked", "pairwise", "bitonic"};
  for (int a = 0; a < 4; ++a) {
    problem y = make_problem(c, algorithms[a] == REDIST_INPLACE_BITONIC ? largest - x.capacity : 0);
    memset(&opts, 0, sizeof opts);
    memset(&report, 0, sizeof report);
    opts.algorithm = algorithms[a];
    opts.work_bytes = 65536;
    opts.pairwise_guard = 1e30; /* pairwise itself, never its fallback */
    opts.report = &report;
    code = redist_alltoallv_inplace(y.buf, y.capacity, y.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
    CHECK(same_everywhere(code), "%s: different codes on different ranks", names[a]);
    if (algorithms[a] == REDIST_INPLACE_CHUNKED && code == MPI_ERR_ARG) {
      expect_untouched(&y, "chunked refused");
    } else if (code != MPI_SUCCESS) {
      CHECK(0, "%s: returned %d", names[a], code);
    } else {
      compare_result(&y, names[a]);
      CHECK(report.work_bytes == 65536, "%s: report.work_bytes = %lld", names[a], (long long)report.work_bytes);
      if (algorithms[a] != REDIST_INPLACE_AUTO)
        CHECK(report.algorithm == algorithms[a], "%s: report.algorithm = %d", names[a], (int)report.algorithm);
    }
    free_problem(&y);
  }
  free_problem(&x);
  free(c);
}

static void test_inplace_errors(void) {
  int64_t* c = random_matrix(200, 0);
  for (int j = 0; j < nranks; ++j) c[j * nranks + j] += 1; /* every total > 0 */
  const int last = rank == nranks - 1;
  int code;

  problem x = make_problem(c, 2);
  int64_t saved = x.sendcounts[0];
  if (last) x.sendcounts[0] = -1;
  code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, NULL);
  CHECK(code == MPI_ERR_COUNT, "negative count on the last rank: returned %d, expected MPI_ERR_COUNT (%d)", code,
        MPI_ERR_COUNT);
  expect_untouched(&x, "negative count");
  x.sendcounts[0] = saved;

  int64_t capacity = last ? max64(x.send_total, x.recv_total) - 1 : x.capacity;
  code = redist_alltoallv_inplace(x.buf, capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, NULL);
  CHECK(code == MPI_ERR_COUNT, "capacity too small on the last rank: returned %d, expected MPI_ERR_COUNT (%d)", code,
        MPI_ERR_COUNT);
  expect_untouched(&x, "capacity too small");

  if (last) x.recvcounts[0] += 1; /* slack 2: room for it */
  code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, x.recvcounts, MPI_DOUBLE, MPI_COMM_WORLD, NULL);
  CHECK(code == MPI_ERR_COUNT, "recvcounts not matching on the last rank: returned %d, expected MPI_ERR_COUNT (%d)",
        code, MPI_ERR_COUNT);
  expect_untouched(&x, "recvcounts not matching");
  if (last) x.recvcounts[0] -= 1;

  MPI_Datatype lb8;
  MPI_Type_create_resized(MPI_DOUBLE, 8, 16, &lb8);
  MPI_Type_commit(&lb8);
  code = redist_alltoallv_inplace(x.buf, x.capacity / 2, x.sendcounts, NULL, lb8, MPI_COMM_WORLD, NULL);
  CHECK(code == MPI_ERR_TYPE, "type with lb 8: returned %d, expected MPI_ERR_TYPE (%d)", code, MPI_ERR_TYPE);
  expect_untouched(&x, "type with lb 8");
  MPI_Type_free(&lb8);

  redist_inplace_options opts;
  const int64_t bad_work[3] = {65535, ((int64_t)1 << 30) + 1, -1};
  for (int w = 0; w < 3; ++w) {
    memset(&opts, 0, sizeof opts);
    opts.work_bytes = bad_work[w];
    code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
    CHECK(code == MPI_ERR_ARG, "work_bytes %lld: returned %d, expected MPI_ERR_ARG (%d)", (long long)bad_work[w], code,
          MPI_ERR_ARG);
    expect_untouched(&x, "work_bytes out of range");
  }
  memset(&opts, 0, sizeof opts);
  if (last) opts.work_bytes = 1000; /* one rank only: still refused everywhere */
  code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
  CHECK(code == MPI_ERR_ARG, "work_bytes 1000 on the last rank: returned %d, expected MPI_ERR_ARG (%d)", code,
        MPI_ERR_ARG);
  expect_untouched(&x, "work_bytes out of range on one rank");

  memset(&opts, 0, sizeof opts);
  opts.algorithm = (redist_inplace_algorithm)9;
  code = redist_alltoallv_inplace(x.buf, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
  CHECK(code == MPI_ERR_ARG, "algorithm 9: returned %d, expected MPI_ERR_ARG (%d)", code, MPI_ERR_ARG);
  expect_untouched(&x, "unknown algorithm");
  free_problem(&x);
  free(c);

  if (nranks >= 2) {
    /* Everybody sends to rank 0: bitonic needs rank 0's total everywhere. */
    int64_t* g = calloc((size_t)(nranks * nranks), sizeof(int64_t));
    for (int i = 0; i < nranks; ++i) g[i * nranks] = 50;
    problem y = make_problem(g, 0);
    memset(&opts, 0, sizeof opts);
    opts.algorithm = REDIST_INPLACE_BITONIC;
    code = redist_alltoallv_inplace(y.buf, y.capacity, y.sendcounts, NULL, MPI_DOUBLE, MPI_COMM_WORLD, &opts);
    CHECK(code == MPI_ERR_ARG, "bitonic without its capacity: returned %d, expected MPI_ERR_ARG (%d)", code,
          MPI_ERR_ARG);
    expect_untouched(&y, "bitonic without its capacity");
    free_problem(&y);
    free(g);
  }
}

/* A plan: created once (recvcounts_out and the plan's report filled), executed three times on new data in new
 * buffers, each result compared with MPI_Alltoallv and each report's counters with the first; then the handle
 * rules (freed, stale copy, NULL buf) and bad input at creation (the same code on every rank, no handle). */
static void test_inplace_plan(void) {
  int64_t* c = random_matrix(300, 0);
  problem x = make_problem(c, 1);
  redist_inplace_options opts;
  redist_inplace_report report, first;
  memset(&opts, 0, sizeof opts);
  memset(&report, 0xff, sizeof report);
  memset(&first, 0, sizeof first);
  opts.work_bytes = 65536;
  opts.report = &report;
  int64_t* received = (int64_t*)malloc((size_t)nranks * sizeof(int64_t));
  for (int j = 0; j < nranks; ++j) received[j] = -1;
  opts.recvcounts_out = received;
  redist_inplace_plan plan = REDIST_INPLACE_PLAN_NULL;
  int code = redist_inplace_plan_create(MPI_COMM_WORLD, x.capacity, x.sendcounts, NULL, MPI_DOUBLE, &opts, &plan);
  CHECK(code == MPI_SUCCESS && plan != REDIST_INPLACE_PLAN_NULL, "plan create: returned %d", code);
  if (code != MPI_SUCCESS) {
    free(received);
    free_problem(&x);
    free(c);
    return;
  }
  for (int j = 0; j < nranks; ++j)
    CHECK(received[j] == x.recvcounts[j], "plan create: recvcounts_out[%d] = %lld, expected %lld", j,
          (long long)received[j], (long long)x.recvcounts[j]);
  CHECK(report.work_bytes == 65536 && report.bytes_sent == 0 && report.messages_sent == 0 &&
            report.algorithm != REDIST_INPLACE_AUTO && report.reason[0] != '\0',
        "plan create: the plan's report (work_bytes %lld, bytes_sent %lld, algorithm %d)", (long long)report.work_bytes,
        (long long)report.bytes_sent, (int)report.algorithm);
  free_problem(&x);
  for (int round = 0; round < 3; ++round) {
    problem y = make_problem_shifted(c, 1, 0.25 * (round + 1)); /* new data, new buffer */
    memset(&report, 0, sizeof report);
    code = redist_inplace_plan_execute(plan, y.buf, round == 1 ? NULL : &report);
    CHECK(code == MPI_SUCCESS && same_everywhere(code), "plan execute, round %d: returned %d", round, code);
    if (code == MPI_SUCCESS) compare_result(&y, "plan execute");
    if (round == 0) first = report;
    if (round == 2)
      CHECK(report.bytes_sent == first.bytes_sent && report.messages_sent == first.messages_sent &&
                report.bytes_local == first.bytes_local && report.algorithm == first.algorithm,
            "plan execute: round 2 reports other counters than round 0");
    free_problem(&y);
  }
  { /* The plan shape's split phase: start runs the exchange, wait reports it; misuse is refused locally. */
    problem y = make_problem_shifted(c, 1, 0.875);
    CHECK(redist_inplace_plan_wait(plan, NULL) == MPI_ERR_ARG, "a wait without a start was accepted");
    code = redist_inplace_plan_start(plan, y.buf);
    CHECK(code == MPI_SUCCESS && same_everywhere(code), "plan start: returned %d", code);
    CHECK(redist_inplace_plan_start(plan, y.buf) == MPI_ERR_ARG, "a second start was accepted");
    memset(&report, 0, sizeof report);
    CHECK(redist_inplace_plan_wait(plan, &report) == MPI_SUCCESS, "plan wait failed");
    if (code == MPI_SUCCESS) compare_result(&y, "plan start + wait");
    CHECK(report.bytes_sent == first.bytes_sent && report.messages_sent == first.messages_sent,
          "plan wait: other counters than execute's");
    free_problem(&y);
  }
  /* Local misuse: refused on this rank, nothing collective. */
  code = redist_inplace_plan_execute(plan, NULL, NULL); /* the capacity is at least 1 (slack) */
  CHECK(code == MPI_ERR_BUFFER, "execute with a NULL buf: returned %d", code);
  redist_inplace_plan copy = plan;
  code = redist_inplace_plan_free(&plan);
  CHECK(code == MPI_SUCCESS && plan == REDIST_INPLACE_PLAN_NULL, "plan free: returned %d", code);
  CHECK(redist_inplace_plan_free(&plan) == MPI_SUCCESS, "freeing REDIST_INPLACE_PLAN_NULL must do nothing");
  double one = 0;
  CHECK(redist_inplace_plan_execute(copy, &one, NULL) == MPI_ERR_ARG, "execute on a freed plan must be refused");
  CHECK(redist_inplace_plan_execute(REDIST_INPLACE_PLAN_NULL, &one, NULL) == MPI_ERR_ARG, "execute on a NULL plan");
  CHECK(redist_inplace_plan_free(&copy) == MPI_ERR_ARG, "freeing a stale copy must be refused");
  CHECK(redist_inplace_plan_free(NULL) == MPI_ERR_ARG, "redist_inplace_plan_free(NULL)");

  /* Bad input at creation, on the last rank only: the same code everywhere and no handle. */
  problem z = make_problem(c, 0);
  if (rank == nranks - 1) z.sendcounts[0] = -1;
  plan = (redist_inplace_plan)(uintptr_t)12345;
  code = redist_inplace_plan_create(MPI_COMM_WORLD, z.capacity, z.sendcounts, NULL, MPI_DOUBLE, NULL, &plan);
  CHECK(code == MPI_ERR_COUNT && plan == REDIST_INPLACE_PLAN_NULL,
        "plan create with a negative count on the last rank: returned %d, expected MPI_ERR_COUNT (%d)", code,
        MPI_ERR_COUNT);
  if (rank == nranks - 1) z.sendcounts[0] = 0;
  code = redist_inplace_plan_create(MPI_COMM_WORLD, z.capacity, z.sendcounts, NULL, MPI_DOUBLE, NULL,
                                    rank == nranks - 1 ? NULL : &plan);
  CHECK(code == MPI_ERR_ARG,
        "plan create with a NULL plan pointer on the last rank: returned %d, expected "
        "MPI_ERR_ARG (%d)",
        code, MPI_ERR_ARG);
  free_problem(&z);
  free(received);
  free(c);
}

/* redist_alltoallv with MPI's arguments. Symmetric counts; block j at rdispls[j] in reverse rank order with a
 * gap of 1 + j % 3 elements before each, the gaps holding -5 (must stay). */
static void test_mpi_signature(void) {
  int64_t* c = random_matrix(40, 1);
  int* counts = malloc(sizeof(int) * (size_t)nranks);
  int* displs = malloc(sizeof(int) * (size_t)nranks);
  int at = 0;
  for (int j = nranks - 1; j >= 0; --j) {
    at += 1 + j % 3;
    counts[j] = (int)c[j * nranks + rank]; /* = c[rank][j]: symmetric */
    displs[j] = at;
    at += counts[j];
  }
  const int length = at + 2;
  double* buf = malloc(sizeof(double) * (size_t)length);
  double* original = malloc(sizeof(double) * (size_t)length);
  double* expected = malloc(sizeof(double) * (size_t)length);
  for (int k = 0; k < length; ++k) buf[k] = -5.0;
  for (int j = 0; j < nranks; ++j)
    for (int k = 0; k < counts[j]; ++k) buf[displs[j] + k] = value_of(rank, j, k);
  memcpy(original, buf, sizeof(double) * (size_t)length);
  memcpy(expected, buf, sizeof(double) * (size_t)length);
  MPI_Alltoallv(original, counts, displs, MPI_DOUBLE, expected, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);

  int code =
      redist_alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(code == MPI_SUCCESS, "redist_alltoallv(MPI_IN_PLACE): returned %d", code);
  int shown = 0;
  for (int k = 0; k < length; ++k)
    if (buf[k] != expected[k] && shown++ < 5)
      CHECK(0, "redist_alltoallv(MPI_IN_PLACE): element %d is %g, expected %g%s", k, buf[k], expected[k],
            expected[k] == -5.0 ? " (a gap)" : "");

  /* Not in place: MPI's own call. */
  double* out = malloc(sizeof(double) * (size_t)length);
  for (int k = 0; k < length; ++k) out[k] = -5.0;
  code = redist_alltoallv(original, counts, displs, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(code == MPI_SUCCESS, "redist_alltoallv out of place: returned %d", code);
  CHECK(memcmp(out, expected, sizeof(double) * (size_t)length) == 0, "redist_alltoallv out of place: wrong result");
  free(out);

  /* Errors: overlapping receive areas; asymmetric counts (nranks >= 2). */
  if (nranks >= 2) {
    memcpy(buf, original, sizeof(double) * (size_t)length);
    int* overlapping = malloc(sizeof(int) * (size_t)nranks);
    int* ones = malloc(sizeof(int) * (size_t)nranks);
    for (int j = 0; j < nranks; ++j) {
      ones[j] = 2;
      overlapping[j] = j; /* [j, j+2) overlaps [j+1, j+3) */
    }
    code = redist_alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, ones, overlapping, MPI_DOUBLE,
                            MPI_COMM_WORLD);
    CHECK(code == MPI_ERR_BUFFER, "overlapping MPI_IN_PLACE areas: returned %d, expected MPI_ERR_BUFFER (%d)", code,
          MPI_ERR_BUFFER);
    CHECK(memcmp(buf, original, sizeof(double) * (size_t)length) == 0, "overlapping areas: the buffer changed");

    /* Rank 0 expects one element more from rank 1 than rank 1 expects from rank 0. */
    int* asym = malloc(sizeof(int) * (size_t)nranks);
    memcpy(asym, counts, sizeof(int) * (size_t)nranks);
    int* asym_displs = malloc(sizeof(int) * (size_t)nranks);
    memcpy(asym_displs, displs, sizeof(int) * (size_t)nranks);
    if (rank == 0 && asym[1] > 0)
      asym[1] -= 1;
    else if (rank == 0)
      asym[1] = 1, asym_displs[1] = 0; /* the first gap (block 1 has nothing there) */
    code = redist_alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, asym, asym_displs, MPI_DOUBLE,
                            MPI_COMM_WORLD);
    CHECK(code == MPI_ERR_COUNT, "asymmetric MPI_IN_PLACE counts: returned %d, expected MPI_ERR_COUNT (%d)", code,
          MPI_ERR_COUNT);
    CHECK(memcmp(buf, original, sizeof(double) * (size_t)length) == 0, "asymmetric counts: the buffer changed");
    free(asym);
    free(asym_displs);
    free(overlapping);
    free(ones);
  }

  /* redist_alltoall in place: 7 elements to and from every rank. */
  const int n = 7;
  double* a = malloc(sizeof(double) * (size_t)(n * nranks));
  double* a_expected = malloc(sizeof(double) * (size_t)(n * nranks));
  double* a_original = malloc(sizeof(double) * (size_t)(n * nranks));
  for (int j = 0; j < nranks; ++j)
    for (int k = 0; k < n; ++k) a[j * n + k] = value_of(rank, j, k);
  memcpy(a_original, a, sizeof(double) * (size_t)(n * nranks));
  MPI_Alltoall(a_original, n, MPI_DOUBLE, a_expected, n, MPI_DOUBLE, MPI_COMM_WORLD);
  code = redist_alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(code == MPI_SUCCESS, "redist_alltoall(MPI_IN_PLACE): returned %d", code);
  CHECK(memcmp(a, a_expected, sizeof(double) * (size_t)(n * nranks)) == 0,
        "redist_alltoall(MPI_IN_PLACE): wrong result");
  for (int k = 0; k < n * nranks; ++k) a[k] = -5.0;
  code = redist_alltoall(a_original, n, MPI_DOUBLE, a, n, MPI_DOUBLE, MPI_COMM_WORLD);
  CHECK(code == MPI_SUCCESS, "redist_alltoall out of place: returned %d", code);
  CHECK(memcmp(a, a_expected, sizeof(double) * (size_t)(n * nranks)) == 0,
        "redist_alltoall out of place: wrong result");

  free(a);
  free(a_expected);
  free(a_original);
  free(buf);
  free(original);
  free(expected);
  free(counts);
  free(displs);
  free(c);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const uint64_t base_seed = redist_test_base_seed();
  random_state = redist_test_mix_seed(base_seed ^ 0x2545f4914f6cdd1du);

  test_inplace();
  test_inplace_errors();
  test_inplace_plan();
  test_mpi_signature();

  int failed_anywhere = 0;
  MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("test_inplace_c on %d ranks: %s (%d failed checks)\n", nranks, failed_anywhere ? "FAILED" : "passed",
           failed_anywhere);
    if (failed_anywhere) printf("[seed] reproduce with REDIST_TEST_SEED=%llu\n", (unsigned long long)base_seed);
  }
  MPI_Finalize();
  return failed_anywhere ? 1 : 0;
}
