// SPDX-License-Identifier: BSD-3-Clause
/* The C API of the persistent neighborhood alltoallv, from plain C99: on a ring plus random edges (repeated
 * edges, self loops and zero counts included), every strategy through the info keys, three cycles with the
 * data changed in between, compared element for element with MPI_Neighbor_alltoallv on the same graph; the
 * list form on MPI_COMM_WORLD; the de-duplicating _ext form with its query; and the error codes for a
 * communicator without a graph, a negative count and a bad info value. The verdict is agreed over all ranks: exit status 0 on every rank iff every check passed
 * on every rank. */
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

/* Same sequence on every rank (from the run's base seed, test_seed.h), so all ranks agree on the global edge
 * list. */
static uint64_t random_state;
static uint32_t next_random(void) {
  random_state = random_state * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(random_state >> 33);
}

/* One rank's side of the graph: send edges (destinations) and receive edges (sources) in edge order. */
typedef struct {
  int outdegree, indegree;
  int *destinations, *sendcounts, *sdispls;
  int *sources, *recvcounts, *rdispls;
  int* source_displs; /* per receive edge: where its elements start in the source's send buffer */
  int send_total, recv_total;
} graph_side;

/* The edges: i -> i+1 for every rank (the ring), then random edges, any pair including i -> i, with
 * counts 0 to 4. Edges are listed in one global order, so the k-th edge from i to j on i's side is the
 * k-th edge from i on j's side, as MPI requires for repeated edges. */
static graph_side make_graph(void) {
  const int random_edges = 2 * nranks;
  const int edges = nranks + random_edges;
  int* from = malloc(sizeof(int) * (size_t)edges);
  int* to = malloc(sizeof(int) * (size_t)edges);
  int* count = malloc(sizeof(int) * (size_t)edges);
  graph_side g;
  memset(&g, 0, sizeof g);
  for (int e = 0; e < edges; ++e) {
    if (e < nranks) {
      from[e] = e;
      to[e] = (e + 1) % nranks;
      count[e] = 1 + (int)(next_random() % 4);
    } else {
      from[e] = (int)(next_random() % (uint32_t)nranks);
      to[e] = (int)(next_random() % (uint32_t)nranks);
      count[e] = (int)(next_random() % 5);
    }
    g.outdegree += from[e] == rank;
    g.indegree += to[e] == rank;
  }
  /* One extra entry each, so no allocation has size 0. */
  g.destinations = malloc(sizeof(int) * (size_t)(g.outdegree + 1));
  g.sendcounts = malloc(sizeof(int) * (size_t)(g.outdegree + 1));
  g.sdispls = malloc(sizeof(int) * (size_t)(g.outdegree + 1));
  g.sources = malloc(sizeof(int) * (size_t)(g.indegree + 1));
  g.recvcounts = malloc(sizeof(int) * (size_t)(g.indegree + 1));
  g.rdispls = malloc(sizeof(int) * (size_t)(g.indegree + 1));
  g.source_displs = malloc(sizeof(int) * (size_t)(g.indegree + 1));
  int* sent_by = calloc((size_t)nranks, sizeof(int)); /* every rank's send buffer, filled in edge order */
  int out = 0, in = 0;
  for (int e = 0; e < edges; ++e) {
    if (from[e] == rank) {
      g.destinations[out] = to[e];
      g.sendcounts[out] = count[e];
      g.sdispls[out] = g.send_total;
      g.send_total += count[e];
      ++out;
    }
    if (to[e] == rank) {
      g.sources[in] = from[e];
      g.recvcounts[in] = count[e];
      g.rdispls[in] = g.recv_total;
      g.source_displs[in] = sent_by[from[e]];
      g.recv_total += count[e];
      ++in;
    }
    sent_by[from[e]] += count[e];
  }
  free(sent_by);
  free(from);
  free(to);
  free(count);
  return g;
}

static void free_graph(graph_side* g) {
  free(g->destinations);
  free(g->sendcounts);
  free(g->sdispls);
  free(g->sources);
  free(g->recvcounts);
  free(g->rdispls);
  free(g->source_displs);
}

static void fill(double* send, int n, int cycle) {
  for (int k = 0; k < n; ++k) send[k] = rank * 1000.0 + k + cycle * 0.25;
}

/* Runs three cycles of an initialised request and compares each with MPI_Neighbor_alltoallv on graph_comm. */
static void compare_cycles(redist_request* request, const graph_side* g, double* send, double* recv, double* expected,
                           MPI_Comm graph_comm, const char* what) {
  for (int cycle = 0; cycle < 3; ++cycle) {
    fill(send, g->send_total, cycle);
    for (int k = 0; k < g->recv_total; ++k) recv[k] = expected[k] = -1.0;
    CHECK(redist_start(request) == MPI_SUCCESS, "%s: redist_start failed in cycle %d", what, cycle);
    CHECK(redist_wait(request) == MPI_SUCCESS, "%s: redist_wait failed in cycle %d", what, cycle);
    MPI_Neighbor_alltoallv(send, g->sendcounts, g->sdispls, MPI_DOUBLE, expected, g->recvcounts, g->rdispls, MPI_DOUBLE,
                           graph_comm);
    int shown = 0;
    for (int k = 0; k < g->recv_total; ++k)
      if (recv[k] != expected[k] && shown++ < 5)
        CHECK(0, "%s, cycle %d: received[%d] = %g, MPI_Neighbor_alltoallv gives %g", what, cycle, k, recv[k],
              expected[k]);
  }
}

static void test_graph_strategies(const graph_side* g, MPI_Comm graph_comm, double* send, double* recv,
                                  double* expected) {
  const char* strategies[] = {"standard", "aggregate", "auto"};
  for (int s = 0; s < 3; ++s)
    for (int with_regions = 0; with_regions < 2; ++with_regions) {
      char what[96];
      snprintf(what, sizeof what, "graph, strategy %s, %s", strategies[s],
               with_regions ? "regions of 2" : "regions by node");
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "redist_strategy", strategies[s]);
      if (with_regions) MPI_Info_set(info, "redist_region_size", "2");
      redist_request request = REDIST_REQUEST_NULL;
      const int code = redist_neighbor_alltoallv_init(send, g->sendcounts, g->sdispls, MPI_DOUBLE, recv, g->recvcounts,
                                                      g->rdispls, MPI_DOUBLE, graph_comm, info, &request);
      CHECK(code == MPI_SUCCESS && request != REDIST_REQUEST_NULL, "%s: init returned %d", what, code);
      if (code == MPI_SUCCESS) {
        compare_cycles(&request, g, send, recv, expected, graph_comm, what);
        CHECK(redist_request_free(&request) == MPI_SUCCESS, "%s: redist_request_free failed", what);
        CHECK(request == REDIST_REQUEST_NULL, "%s: request not null after redist_request_free", what);
      }
      MPI_Info_free(&info);
    }
}

static void test_lists(const graph_side* g, MPI_Comm graph_comm, double* send, double* recv, double* expected) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "aggregate");
  MPI_Info_set(info, "redist_region_size", "2");
  redist_request request = REDIST_REQUEST_NULL;
  const int code = redist_neighbor_alltoallv_init_lists(g->indegree, g->sources, g->outdegree, g->destinations, send,
                                                        g->sendcounts, g->sdispls, MPI_DOUBLE, recv, g->recvcounts,
                                                        g->rdispls, MPI_DOUBLE, MPI_COMM_WORLD, info, &request);
  CHECK(code == MPI_SUCCESS, "lists on MPI_COMM_WORLD: init returned %d", code);
  if (code == MPI_SUCCESS) {
    compare_cycles(&request, g, send, recv, expected, graph_comm, "lists on MPI_COMM_WORLD");
    CHECK(redist_request_free(&request) == MPI_SUCCESS, "lists: redist_request_free failed");
  }
  MPI_Info_free(&info);
}

/* The de-duplicating form: every element's global id is (source rank, index in its send buffer). */
static void test_ext(const graph_side* g, MPI_Comm graph_comm, double* send, double* recv, double* expected) {
  int64_t* send_ids = malloc(sizeof(int64_t) * (size_t)(g->send_total + 1));
  int64_t* recv_ids = malloc(sizeof(int64_t) * (size_t)(g->recv_total + 1));
  for (int k = 0; k < g->send_total; ++k) send_ids[k] = ((int64_t)rank << 32) + k;
  for (int j = 0; j < g->indegree; ++j)
    for (int k = 0; k < g->recvcounts[j]; ++k)
      recv_ids[g->rdispls[j] + k] = ((int64_t)g->sources[j] << 32) + g->source_displs[j] + k;
  const char* strategies[] = {"dedup", "auto"};
  for (int s = 0; s < 2; ++s) {
    char what[64];
    snprintf(what, sizeof what, "_ext, strategy %s, regions of 2", strategies[s]);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "redist_strategy", strategies[s]);
    MPI_Info_set(info, "redist_region_size", "2");
    redist_request request = REDIST_REQUEST_NULL;
    const int code =
        redist_neighbor_alltoallv_init_ext(send, g->sendcounts, g->sdispls, send_ids, MPI_DOUBLE, recv, g->recvcounts,
                                           g->rdispls, recv_ids, MPI_DOUBLE, graph_comm, info, &request);
    CHECK(code == MPI_SUCCESS, "%s: init returned %d", what, code);
    if (code == MPI_SUCCESS) {
      const char *strategy = NULL, *reason = NULL;
      CHECK(redist_neighbor_query(request, &strategy, &reason) == MPI_SUCCESS && strategy && reason && *reason,
            "%s: redist_neighbor_query failed", what);
      compare_cycles(&request, g, send, recv, expected, graph_comm, what);
      CHECK(redist_request_free(&request) == MPI_SUCCESS, "%s: redist_request_free failed", what);
    }
    MPI_Info_free(&info);
  }
  free(send_ids);
  free(recv_ids);
}

/* Errors: the same code on every rank, no request, nothing received. */
static void test_errors(const graph_side* g, MPI_Comm graph_comm, double* send, double* recv) {
  for (int k = 0; k < g->recv_total; ++k) recv[k] = -7.0;
  redist_request request = REDIST_REQUEST_NULL;
  int code = redist_neighbor_alltoallv_init(send, g->sendcounts, g->sdispls, MPI_DOUBLE, recv, g->recvcounts,
                                            g->rdispls, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  CHECK(code == MPI_ERR_TOPOLOGY, "MPI_COMM_WORLD (no graph): init returned %d, expected MPI_ERR_TOPOLOGY (%d)", code,
        MPI_ERR_TOPOLOGY);
  CHECK(request == REDIST_REQUEST_NULL, "MPI_COMM_WORLD (no graph): request is not REDIST_REQUEST_NULL");

  /* A negative count on the last rank only (its ring edge). */
  int* counts = malloc(sizeof(int) * (size_t)(g->outdegree + 1));
  memcpy(counts, g->sendcounts, sizeof(int) * (size_t)g->outdegree);
  if (rank == nranks - 1) counts[0] = -1;
  code = redist_neighbor_alltoallv_init(send, counts, g->sdispls, MPI_DOUBLE, recv, g->recvcounts, g->rdispls,
                                        MPI_DOUBLE, graph_comm, MPI_INFO_NULL, &request);
  CHECK(code == MPI_ERR_COUNT, "negative count on rank %d: init returned %d, expected MPI_ERR_COUNT (%d)", nranks - 1,
        code, MPI_ERR_COUNT);
  CHECK(request == REDIST_REQUEST_NULL, "negative count: request is not REDIST_REQUEST_NULL");
  free(counts);

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "redist_strategy", "fastest");
  code = redist_neighbor_alltoallv_init(send, g->sendcounts, g->sdispls, MPI_DOUBLE, recv, g->recvcounts, g->rdispls,
                                        MPI_DOUBLE, graph_comm, info, &request);
  CHECK(code == MPI_ERR_ARG, "redist_strategy = fastest: init returned %d, expected MPI_ERR_ARG (%d)", code,
        MPI_ERR_ARG);
  CHECK(request == REDIST_REQUEST_NULL, "bad info: request is not REDIST_REQUEST_NULL");
  MPI_Info_free(&info);

  for (int k = 0; k < g->recv_total; ++k)
    if (recv[k] != -7.0) {
      CHECK(0, "a refused init wrote received[%d] = %g", k, recv[k]);
      break;
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const uint64_t base_seed = redist_test_base_seed();
  random_state = redist_test_mix_seed(base_seed ^ 0x9e3779b97f4a7c15u);

  graph_side g = make_graph();
  MPI_Comm graph_comm;
  // Open MPI's MPI_UNWEIGHTED is the address 2, which GCC 12 takes for an array it reads (a false warning).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g.indegree, g.sources, MPI_UNWEIGHTED, g.outdegree, g.destinations,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_comm);
#pragma GCC diagnostic pop
  double* send = malloc(sizeof(double) * (size_t)(g.send_total + 1));
  double* recv = malloc(sizeof(double) * (size_t)(g.recv_total + 1));
  double* expected = malloc(sizeof(double) * (size_t)(g.recv_total + 1));

  test_graph_strategies(&g, graph_comm, send, recv, expected);
  test_lists(&g, graph_comm, send, recv, expected);
  test_ext(&g, graph_comm, send, recv, expected);
  test_errors(&g, graph_comm, send, recv);

  int failed_anywhere = 0;
  MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("test_exchange_c on %d ranks: %s (%d failed checks)\n", nranks, failed_anywhere ? "FAILED" : "passed",
           failed_anywhere);
    if (failed_anywhere) printf("[seed] reproduce with REDIST_TEST_SEED=%llu\n", (unsigned long long)base_seed);
  }

  free(send);
  free(recv);
  free(expected);
  free_graph(&g);
  MPI_Comm_free(&graph_comm);
  MPI_Finalize();
  return failed_anywhere ? 1 : 0;
}
