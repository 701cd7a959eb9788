// SPDX-License-Identifier: BSD-3-Clause
/** @file
 * @brief redist: the one C header for every C entry point of the project.
 *
 * C and Fortran entry points never throw. The ScaLAPACK and PBLAS twins return nothing and report through
 * PXERBLA, as ScaLAPACK does (docs/scalapack.md); every other entry point that can fail returns MPI_SUCCESS or an
 * MPI error code, mapped from the library's errors as docs/errors.md lists (MPI_ERR_OTHER for anything else), and
 * redist_last_error_message() says why.
 */
#ifndef REDIST_REDIST_H
#define REDIST_REDIST_H

#include <mpi.h>
#include <stdint.h>

#include "redist/version.hpp"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the library the program runs with (may differ from the header's REDIST_VERSION_*). A null pointer
 * is skipped. Cannot fail; returns nothing. */
void redist_version(int* major, int* minor, int* patch);

/** ScaLAPACK REDIST twins: B(ib:ib+m-1, jb:jb+n-1) = A(ia:ia+m-1, ja:ja+n-1).
 *
 * Declares redist_p?gemr2d and redist_p?gemr2d_ (Fortran convention: every argument by reference; callable from
 * Fortran as redist_pdgemr2d) and redist_Cp?gemr2d (C convention: scalars by value), with the same arguments and
 * semantics as ScaLAPACK's p?gemr2d and Cp?gemr2d. Descriptors of DTYPE 1 (9 entries) or 2 (11 entries); a process
 * outside A's (B's) grid passes a descriptor whose CTXT is -1; ictxt is a BLACS context containing every process of
 * both grids. The program must link ScaLAPACK (BLACS is found at run time). Element types (prefix): i = int,
 * s = float, d = double, c = float complex, z = double complex. See docs/scalapack.md.
 *
 * Returns nothing. Reports errors through PXERBLA; never throws: wrong arguments are reported through
 * PXERBLA(ictxt, routine, info) on every process and nothing is written; a failure after the checks (MPI, memory)
 * calls Cblacs_abort, or with REDIST_SCALAPACK_ON_ERROR=return reports through PXERBLA and returns (B is then
 * undefined). */
#define REDIST_DECLARE_GEMR2D(prefix)                                                                           \
  void redist_##prefix##gemr2d(const int* m, const int* n, const void* a, const int* ia, const int* ja,         \
                               const int* desca, void* b, const int* ib, const int* jb, const int* descb,       \
                               const int* ictxt);                                                               \
  void redist_##prefix##gemr2d_(const int* m, const int* n, const void* a, const int* ia, const int* ja,        \
                                const int* desca, void* b, const int* ib, const int* jb, const int* descb,      \
                                const int* ictxt);                                                              \
  void redist_C##prefix##gemr2d(int m, int n, const void* a, int ia, int ja, const int* desca, void* b, int ib, \
                                int jb, const int* descb, int ictxt);
REDIST_DECLARE_GEMR2D(pi)
REDIST_DECLARE_GEMR2D(ps)
REDIST_DECLARE_GEMR2D(pd)
REDIST_DECLARE_GEMR2D(pc)
REDIST_DECLARE_GEMR2D(pz)
#undef REDIST_DECLARE_GEMR2D

/** ScaLAPACK REDIST twins, trapezoidal: the upper (uplo 'U') or lower ('L') trapezoid of A(ia:ia+m-1, ja:ja+n-1)
 * into B(ib:ib+m-1, jb:jb+n-1), the rest of B untouched.
 *
 * Declares redist_p?trmr2d, redist_p?trmr2d_ and redist_Cp?trmr2d, with the same arguments and semantics as
 * ScaLAPACK's p?trmr2d and Cp?trmr2d (uplo and diag point to one character, either case, in both conventions; diag
 * 'U' leaves the diagonal out, 'N' copies it). As in REDIST, the trapezoid's diagonal ends in the sub-matrix's
 * bottom-right corner: for 'U', row i (0-based) of column j is copied when i <= j + max(m - n, 0); for 'L', when
 * i >= j - max(n - m, 0). Fortran callers' hidden character lengths follow the declared arguments and are not read.
 * Otherwise as p?gemr2d (REDIST_DECLARE_GEMR2D).
 *
 * Returns nothing. Reports errors through PXERBLA; never throws: as p?gemr2d, and a wrong uplo or diag is reported
 * through PXERBLA as argument 1 or 2. */
#define REDIST_DECLARE_TRMR2D(prefix)                                                                                  \
  void redist_##prefix##trmr2d(const char* uplo, const char* diag, const int* m, const int* n, const void* a,          \
                               const int* ia, const int* ja, const int* desca, void* b, const int* ib, const int* jb,  \
                               const int* descb, const int* ictxt);                                                    \
  void redist_##prefix##trmr2d_(const char* uplo, const char* diag, const int* m, const int* n, const void* a,         \
                                const int* ia, const int* ja, const int* desca, void* b, const int* ib, const int* jb, \
                                const int* descb, const int* ictxt);                                                   \
  void redist_C##prefix##trmr2d(const char* uplo, const char* diag, int m, int n, const void* a, int ia, int ja,       \
                                const int* desca, void* b, int ib, int jb, const int* descb, int ictxt);
REDIST_DECLARE_TRMR2D(pi)
REDIST_DECLARE_TRMR2D(ps)
REDIST_DECLARE_TRMR2D(pd)
REDIST_DECLARE_TRMR2D(pc)
REDIST_DECLARE_TRMR2D(pz)
#undef REDIST_DECLARE_TRMR2D

/** PBLAS transpose twins: sub(C) := beta*sub(C) + alpha*op(sub(A)).
 *
 * Declares redist_NAME and redist_NAME_ for NAME = pstran, pdtran, pctranu, pztranu, pctranc, pztranc, with the
 * same arguments and semantics as PBLAS's p?tran (s, d), p?tranu (c, z; op = transpose) and p?tranc (c, z;
 * op = conjugate transpose), Fortran convention: sub(C) = C(ic:ic+m-1, jc:jc+n-1), sub(A) = A(ia:ia+n-1,
 * ja:ja+m-1), both on DESCA's context; alpha and beta point to one element of the routine's type. beta = 0 does not
 * read C.
 *
 * Returns nothing. Reports errors through PXERBLA; never throws: wrong arguments are reported through PXERBLA and
 * nothing is written; a failure after the checks calls Cblacs_abort (REDIST_SCALAPACK_ON_ERROR=return: PXERBLA and
 * a return, C then undefined). */
#define REDIST_DECLARE_TRAN(name)                                                                                   \
  void redist_##name(const int* m, const int* n, const void* alpha, const void* a, const int* ia, const int* ja,    \
                     const int* desca, const void* beta, void* c, const int* ic, const int* jc, const int* descc);  \
  void redist_##name##_(const int* m, const int* n, const void* alpha, const void* a, const int* ia, const int* ja, \
                        const int* desca, const void* beta, void* c, const int* ic, const int* jc, const int* descc);
REDIST_DECLARE_TRAN(pstran)
REDIST_DECLARE_TRAN(pdtran)
REDIST_DECLARE_TRAN(pctranu)
REDIST_DECLARE_TRAN(pztranu)
REDIST_DECLARE_TRAN(pctranc)
REDIST_DECLARE_TRAN(pztranc)
#undef REDIST_DECLARE_TRAN

/** PBLAS matrix multiply twins: sub(C) := alpha*op(sub(A))*op(sub(B)) + beta*sub(C).
 *
 * Declares redist_NAME and redist_NAME_ for NAME = psgemm, pdgemm, pcgemm, pzgemm, with the same arguments and
 * semantics as PBLAS's p?gemm (s, d, c, z), Fortran convention: sub(C) = C(ic:ic+m-1, jc:jc+n-1), op(sub(A)) m x k
 * and op(sub(B)) k x n, where op is given by transa and transb (one character each, either case: 'N', 'T' or 'C',
 * the conjugate transpose for c and z and the transpose for s and d); A, B and C on DESCA's context, every process
 * of which calls; alpha and beta point to one element of the routine's type. beta = 0 does not read C, and
 * alpha = 0 or k = 0 only scales sub(C). Always redist's multiply (libredist_scalapack's unprefixed p?gemm may hand
 * small problems to the next ScaLAPACK in the link chain instead); see docs/scalapack.md.
 *
 * Returns nothing. Reports errors through PXERBLA; never throws: wrong arguments are reported through PXERBLA and
 * nothing is written; a failure after the checks calls Cblacs_abort (REDIST_SCALAPACK_ON_ERROR=return: PXERBLA and
 * a return, C then undefined). */
#define REDIST_DECLARE_GEMM(name)                                                                                     \
  void redist_##name(const char* transa, const char* transb, const int* m, const int* n, const int* k,                \
                     const void* alpha, const void* a, const int* ia, const int* ja, const int* desca, const void* b, \
                     const int* ib, const int* jb, const int* descb, const void* beta, void* c, const int* ic,        \
                     const int* jc, const int* descc);                                                                \
  void redist_##name##_(const char* transa, const char* transb, const int* m, const int* n, const int* k,             \
                        const void* alpha, const void* a, const int* ia, const int* ja, const int* desca,             \
                        const void* b, const int* ib, const int* jb, const int* descb, const void* beta, void* c,     \
                        const int* ic, const int* jc, const int* descc);
REDIST_DECLARE_GEMM(psgemm)
REDIST_DECLARE_GEMM(pdgemm)
REDIST_DECLARE_GEMM(pcgemm)
REDIST_DECLARE_GEMM(pzgemm)
#undef REDIST_DECLARE_GEMM

/** Persistent neighborhood alltoallv with locality-aware aggregation (docs/exchange.md): the handle of one exchange.
 *
 * Made by redist_neighbor_alltoallv_init, redist_neighbor_alltoallv_init_lists or redist_neighbor_alltoallv_init_ext
 * (collective over comm); the buffers are bound at init and their contents may change between exchanges. Each
 * exchange is redist_start then redist_wait; redist_request_free releases the plan (after waiting for an exchange
 * still in flight) and sets *request to REDIST_REQUEST_NULL.
 *
 * Info keys: "redist_strategy" = "standard", "aggregate", "dedup" (the _ext entry point only) or "auto" (default
 * auto: the candidate with the least predicted time); "redist_region_size" = n > 0 (regions of n consecutive ranks;
 * default: one region per node); "redist_cost_model" = "calibrate" (default: measured once per set of processes
 * and regions), "defaults" or eight numbers (seconds) "intra_latency,intra_seconds_per_message,
 * intra_seconds_per_byte,inter_latency,inter_seconds_per_message,inter_seconds_per_byte,
 * region_seconds_per_byte,copy_seconds_per_byte" (the postal model of docs/exchange.md).
 *
 * Every entry point returns MPI_SUCCESS or an error code, the same on every rank for init, and moves nothing when
 * init fails: MPI_ERR_TOPOLOGY for a communicator that is not a distributed graph or for send and receive edges
 * that do not match (rank i's k-th edge to j must be j's k-th edge from i, with equal counts times type sizes),
 * MPI_ERR_COUNT for a negative count or displacement, NULL counts or displacements with a positive degree, or byte
 * sizes past 64 bits, MPI_ERR_BUFFER for a NULL buffer with data to move or overlapping receive areas of a
 * contiguous type, MPI_ERR_TYPE for MPI_DATATYPE_NULL or for a strategy that combines regions asked for with a
 * datatype it cannot take apart, MPI_ERR_ARG for another wrong argument (a neighbor outside comm, a bad info value,
 * a null request, more regions or repeated neighbors than MPI_TAG_UB allows) or for info values that differ between
 * ranks, MPI_ERR_NO_MEM, an MPI call's error class, or MPI_ERR_OTHER (docs/errors.md).
 *
 * A request handle is a value: copies name the same request; handles are never reused, so after
 * redist_request_free any copy of it (or any value init did not return) is refused with MPI_ERR_REQUEST. */
typedef struct redist_request_s* redist_request;
/** The null request: what redist_request_free leaves, and what a failed init sets. */
#define REDIST_REQUEST_NULL ((redist_request)0)
/** Same arguments and results as MPI_Neighbor_alltoallv_init: comm is a distributed-graph communicator from
 * MPI_Dist_graph_create_adjacent, whose sources and destinations are the receive and send edges. Collective over
 * comm. Info keys as redist_request lists.
 * @return MPI_SUCCESS, or on every rank alike (nothing moved, *request REDIST_REQUEST_NULL) MPI_ERR_TOPOLOGY,
 *   MPI_ERR_COUNT, MPI_ERR_BUFFER, MPI_ERR_TYPE, MPI_ERR_ARG, MPI_ERR_NO_MEM, an MPI call's error class or
 *   MPI_ERR_OTHER, for the causes redist_request lists. */
int redist_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, redist_request* request);
/** The same without a graph communicator: the indegree entries of sources[] (outdegree entries of destinations[])
 * are the ranks of comm, an ordinary communicator, that the receive (send) edges come from (go to), in the order
 * of recvcounts/rdispls (sendcounts/sdispls); repeated ranks are separate edges.
 * @return as redist_neighbor_alltoallv_init (a negative degree, or a NULL list with a positive degree: MPI_ERR_ARG
 *   on every rank). */
int redist_neighbor_alltoallv_init_lists(int indegree, const int sources[], int outdegree, const int destinations[],
                                         const void* sendbuf, const int sendcounts[], const int sdispls[],
                                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         redist_request* request);
/** As redist_neighbor_alltoallv_init, with a global id per element (paper Section 3.3): the element at
 * displacement d of the send (receive) buffer, d = sdispls[i] + k for the k-th element of edge i, carries
 * global_send_indices[d] (global_recv_indices[d]). A receive element's id must be the id of the send element the
 * plain call delivers there (checked), and elements of one source with equal ids must hold equal values: with
 * "dedup" (or auto choosing it) each (source, id) crosses a region pair once. The id arrays are read during the
 * call only.
 * @return as redist_neighbor_alltoallv_init, and MPI_ERR_TOPOLOGY for ids that do not match. */
int redist_neighbor_alltoallv_init_ext(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       const int64_t global_send_indices[], MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int rdispls[], const int64_t global_recv_indices[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, redist_request* request);
/** The strategy a request uses ("standard", "aggregate" or "dedup") and one line saying why (auto: every
 * candidate's predicted time); either pointer may be NULL. The strings live as long as the request. Local.
 * @return MPI_SUCCESS, or MPI_ERR_REQUEST for a null, freed or unknown request. */
int redist_neighbor_query(redist_request request, const char** strategy, const char** reason);
/** Starts one exchange (as MPI_Start on a persistent collective: every rank calls redist_start then redist_wait);
 * the send buffer must not change until redist_wait returns.
 * @return MPI_SUCCESS; MPI_ERR_REQUEST for a NULL pointer or a null, freed or unknown request; MPI_ERR_ARG for an
 *   exchange started and not waited for (this rank only); or an MPI call's error class. */
int redist_start(redist_request* request);
/** Completes the exchange started last: the receive buffer then holds the data.
 * @return MPI_SUCCESS; MPI_ERR_REQUEST for a NULL pointer or a null, freed or unknown request; MPI_ERR_ARG when no
 *   exchange was started (this rank only); or an MPI call's error class. */
int redist_wait(redist_request* request);
/** Releases the plan (after waiting for an exchange still in flight) and sets *request to REDIST_REQUEST_NULL
 * (already REDIST_REQUEST_NULL: nothing to do).
 * @return MPI_SUCCESS; MPI_ERR_REQUEST for a NULL pointer or a freed or unknown request; or the wait's error code
 *   (the plan is released all the same). */
int redist_request_free(redist_request* request);
/** The same exchange in the plan shape of every capability: redist_neighbor_plan_create(comm, description, info,
 * plan) takes what the three init calls take, in one description (edges_of_graph_communicator != 0: comm is a
 * distributed-graph communicator and indegree, outdegree are 0; else sources/destinations list the edges; the id
 * arrays NULL unless every rank passes them, as for _ext). _execute is _start then _wait; _free as
 * redist_request_free. A redist_neighbor_plan is a redist_request: either set of calls takes it. */
typedef redist_request redist_neighbor_plan;
/** The null plan (REDIST_REQUEST_NULL). */
#define REDIST_NEIGHBOR_PLAN_NULL REDIST_REQUEST_NULL
/** What redist_neighbor_plan_create takes: the buffers and the edges of one neighborhood exchange (see
 * redist_neighbor_plan). */
typedef struct redist_neighbor_description {
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
  int edges_of_graph_communicator;
  int indegree;
  const int* sources;
  int outdegree;
  const int* destinations;
  const int64_t* global_send_indices;
  const int64_t* global_recv_indices;
} redist_neighbor_description;
/** Makes the plan of the exchange `description` gives (see redist_neighbor_plan): collective over comm, the same
 * checks, agreement and info keys as the init calls.
 * @return as redist_neighbor_alltoallv_init (a NULL description: MPI_ERR_ARG on every rank); *plan is
 *   REDIST_NEIGHBOR_PLAN_NULL on failure. */
int redist_neighbor_plan_create(MPI_Comm comm, const redist_neighbor_description* description, MPI_Info info,
                                redist_neighbor_plan* plan);
/** One whole exchange: redist_neighbor_plan_start then redist_neighbor_plan_wait.
 * @return as redist_start, then as redist_wait. */
int redist_neighbor_plan_execute(redist_neighbor_plan plan);
/** redist_start on the plan.
 * @return as redist_start. */
int redist_neighbor_plan_start(redist_neighbor_plan plan);
/** redist_wait on the plan.
 * @return as redist_wait. */
int redist_neighbor_plan_wait(redist_neighbor_plan plan);
/** redist_request_free on the plan.
 * @return as redist_request_free. */
int redist_neighbor_plan_free(redist_neighbor_plan* plan);

/** The algorithms of the in-place variable-size all-to-all (docs/inplace.md). */
typedef enum redist_inplace_algorithm {
  REDIST_INPLACE_AUTO = 0,     /**< chunked when it fits, else the cheaper of pairwise and bitonic */
  REDIST_INPLACE_CHUNKED = 1,  /**< each block straight to its owner, streamed through the work buffer */
  REDIST_INPLACE_PAIRWISE = 2, /**< the paper's asymmetric pairwise exchange, any counts */
  REDIST_INPLACE_BITONIC = 3   /**< the paper's bitonic-sort algorithm: every capacity >= the largest total */
} redist_inplace_algorithm;
/** What an in-place all-to-all did. */
typedef struct redist_inplace_report {
  redist_inplace_algorithm algorithm; /**< the one that ran (same on every rank) */
  char reason[256];                   /**< why (automatic, a guard's fallback), truncated, NUL-terminated */
  int64_t received_elements;          /**< the result's length: what all ranks sent here */
  int64_t bytes_sent;                 /**< this rank's payload bytes sent */
  int64_t messages_sent;
  int64_t bytes_local;    /**< copies and rotations inside the buffer (as C++'s inplace_report::bytes_local) */
  int64_t work_bytes;     /**< the work buffer allocated */
  int64_t metadata_bytes; /**< peak bookkeeping, O(P) */
} redist_inplace_report;
/** Options of the in-place all-to-all; NULL (or zeroed): defaults. Every rank must pass the same options. */
typedef struct redist_inplace_options {
  redist_inplace_algorithm algorithm;
  int64_t work_bytes;            /**< 0: 4 MiB; else 65536 .. 2^30 */
  double pairwise_guard;         /**< 0: 4 (pairwise falls back to bitonic past guard x the largest total;
                                    INFINITY: never) */
  redist_inplace_report* report; /**< NULL, or filled on success */
  int64_t* recvcounts_out;       /**< NULL, or P entries filled on success: what each rank sent here */
} redist_inplace_options;
/** In-place variable-size all-to-all with bounded extra memory (docs/inplace.md).
 *
 * On entry rank i's buf holds s(i,0) .. s(i,P-1) concatenated (sendcounts[j] = |s(i,j)| elements of type); on exit
 * it holds s(0,i) .. s(P-1,i) concatenated, in that order (stable). capacity (elements) must hold both this rank's
 * send and receive totals; recvcounts may be NULL (computed) or must match the senders. Extra memory: O(P) words
 * plus one work buffer of opts->work_bytes. type: any committed datatype with lower bound 0 whose data lie within
 * its extent (elements move as whole extents). opts NULL (or zeroed): defaults. Every rank must pass the same
 * options. Collective.
 * @return MPI_SUCCESS or, on every rank and before any data moves, MPI_ERR_COUNT (negative count, capacity too
 *   small, recvcounts not matching the senders, null sendcounts), MPI_ERR_BUFFER (null buf with capacity > 0),
 *   MPI_ERR_TYPE, MPI_ERR_ARG (bad or differing options, or an algorithm whose requirement fails), MPI_ERR_NO_MEM,
 *   or an MPI call's own code. */
int redist_alltoallv_inplace(void* buf, int64_t capacity, const int64_t sendcounts[], const int64_t recvcounts[],
                             MPI_Datatype type, MPI_Comm comm, const redist_inplace_options* opts);
/** The in-place all-to-all as a plan: redist_alltoallv_inplace checks its arguments with collectives on every call;
 * a plan checks, agrees, chooses the algorithm and allocates the work buffer once, and redist_inplace_plan_execute
 * then only moves data. Handles are never reused, so a copy kept past free is refused, as redist_request handles
 * are. One thread per plan at a time. Executions communicate on a private duplicate cached on comm, which the plan
 * shares: comm may be freed before the plan. */
typedef struct redist_inplace_plan_s* redist_inplace_plan;
/** The null plan. */
#define REDIST_INPLACE_PLAN_NULL ((redist_inplace_plan)0)
/** Makes the plan (see redist_inplace_plan): collective over comm, the same arguments as redist_alltoallv_inplace
 * without the buffer. opts->recvcounts_out is filled at creation, opts->report with what executions will do
 * (algorithm, reason, received_elements, work_bytes; counters zero).
 * @return the same error codes as redist_alltoallv_inplace, on every rank, and MPI_ERR_ARG for a NULL plan
 *   pointer; *plan is REDIST_INPLACE_PLAN_NULL on failure. */
int redist_inplace_plan_create(MPI_Comm comm, int64_t capacity, const int64_t sendcounts[], const int64_t recvcounts[],
                               MPI_Datatype type, const redist_inplace_options* opts, redist_inplace_plan* plan);
/** Moves the data: collective, buf of the plan's `capacity` elements holding the send blocks (its address and
 * contents may change from call to call, the counts may not). report (NULL: none) gets the call's counters.
 * Checks only locally, on the calling rank alone (no collective).
 * @return MPI_SUCCESS, MPI_ERR_ARG for a NULL, freed or unknown plan, MPI_ERR_BUFFER for a NULL buf with
 *   capacity > 0, or an MPI call's error class. */
int redist_inplace_plan_execute(redist_inplace_plan plan, void* buf, redist_inplace_report* report);
/** The plan shape's split phase: the in-place algorithms step through rounds with a bounded work buffer, so start
 * runs the whole exchange and wait returns its report (NULL: none); local checks as execute's.
 * @return as redist_inplace_plan_execute, and MPI_ERR_ARG for a second start before the wait. */
int redist_inplace_plan_start(redist_inplace_plan plan, void* buf);
/** Ends the split phase redist_inplace_plan_start began; report (NULL: none) gets the exchange's counters.
 * @return MPI_SUCCESS, or MPI_ERR_ARG for a NULL, freed or unknown plan or a wait without a start. */
int redist_inplace_plan_wait(redist_inplace_plan plan, redist_inplace_report* report);
/** Releases the plan (local) and sets *plan to REDIST_INPLACE_PLAN_NULL (already REDIST_INPLACE_PLAN_NULL: nothing
 * to do).
 * @return MPI_SUCCESS, or MPI_ERR_ARG for a NULL pointer or a freed or unknown handle. */
int redist_inplace_plan_free(redist_inplace_plan* plan);
/** MPI_Alltoallv with MPI's arguments. With sendbuf == MPI_IN_PLACE the exchange runs in place with the 4 MiB work
 * buffer (MPI's rules: counts symmetric, i.e. rank i's recvcounts[j] equals rank j's recvcounts[i], and receive
 * areas disjoint; checked); otherwise MPI's own call runs.
 * @return MPI_Alltoallv's code; in place: MPI_SUCCESS, MPI_ERR_COUNT (counts not symmetric, counts or displacements
 *   negative or NULL), MPI_ERR_BUFFER (overlapping areas, a NULL recvbuf with blocks to exchange), MPI_ERR_TYPE,
 *   MPI_ERR_NO_MEM or an MPI call's error class. */
int redist_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
/** MPI_Alltoall with MPI's arguments; with sendbuf == MPI_IN_PLACE it runs in place with the 4 MiB work buffer,
 * otherwise MPI's own call runs.
 * @return MPI_Alltoall's code; in place: MPI_SUCCESS, MPI_ERR_COUNT, MPI_ERR_BUFFER, MPI_ERR_TYPE, MPI_ERR_ARG,
 *   MPI_ERR_NO_MEM or an MPI call's error class, as redist_alltoallv_inplace. */
int redist_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm);

/** N-d reshape: out = alpha * permute(in) + beta * out between per-rank boxes (docs/transform.md). Handles are never
 * reused, as redist_inplace_plan's. */
typedef struct redist_reshape_plan_s* redist_reshape_plan;
/** The null plan. */
#define REDIST_RESHAPE_PLAN_NULL ((redist_reshape_plan)0)
/** Makes the reshape plan (see redist_reshape_plan). Collective.
 *
 * Each rank passes its input box and its output box: lo inclusive, hi exclusive, ndim entries each (1 <= ndim
 * <= 8). order: the axes of this rank's local array from fastest-varying (stride 1) to slowest; NULL = C order
 * (last axis fastest); ranks may store in different orders (the order most ranks pass is the one data travels in,
 * so the others copy with strides). axes: output axis i is input axis axes[i]; NULL = identity. The local arrays
 * are dense in their box. An empty box (lo[i] == hi[i] for some i) is allowed and may lie anywhere. The input space
 * is the bounding box of the non-empty input boxes (its lo may be nonzero), which they must cover without overlap;
 * the output boxes likewise cover that space permuted by axes. type: MPI_FLOAT, MPI_DOUBLE, MPI_C_FLOAT_COMPLEX,
 * MPI_C_DOUBLE_COMPLEX (MPI_INT32_T, MPI_INT64_T: copies only).
 *
 * Info keys: "redist_strategy" = "auto" (default), "point_to_point", "alltoallv", "shared_memory" or
 * "torus_routed" (docs/names.md); "redist_stores" = "auto" (default), "cached" or "streaming" (how out is written:
 * ordinary or non-temporal stores, docs/transform.md); "redist_relabel" = "none" (default: each rank holds the
 * output box it passed) or "exact" (the plan may permute which rank holds which output box, to move less data: ask
 * redist_reshape_output_box, and pass an out array dense in the box held). ndim, axes, type and the info values
 * must be the same on every rank.
 * @return MPI_SUCCESS or, on every rank alike, MPI_ERR_ARG (a NULL array or plan pointer, lo > hi, an order or axes
 *   that is not a permutation, boxes that overlap or leave a gap, output space not the input's permuted, a bad or
 *   differing info value, ranks disagreeing), MPI_ERR_TYPE, MPI_ERR_COUNT (sizes past 64 bits), MPI_ERR_NO_MEM or
 *   an MPI call's error class; *plan is then REDIST_RESHAPE_PLAN_NULL. */
int redist_reshape_plan_create(MPI_Comm comm, int ndim, const int64_t in_lo[], const int64_t in_hi[],
                               const int in_order[], const int64_t out_lo[], const int64_t out_hi[],
                               const int out_order[], const int axes[], MPI_Datatype type, MPI_Info info,
                               redist_reshape_plan* plan);
/** Executes the plan: alpha and beta point to one value of the plan's type (NULL alpha = 1, NULL beta = 0; beta = 0
 * does not read out). Collective; errors (a NULL buffer of a non-empty box, integer alpha != 1 or beta != 0) are
 * agreed and nothing is written.
 * @return MPI_SUCCESS, MPI_ERR_ARG (the agreed errors on every rank; a NULL, freed or unknown plan on the calling
 *   rank alone; a start in progress, on every rank), MPI_ERR_NO_MEM or an MPI call's error class. */
int redist_reshape_plan_execute(redist_reshape_plan plan, void* out, const void* in, const void* alpha,
                                const void* beta);
/** The same execution in two halves (split-phase, as MPI_Start/MPI_Wait): start agrees on the same errors, posts the
 * communication and returns; redist_reshape_plan_wait completes it, out then holds the result. Between them compute
 * freely, but neither write in nor touch out. One start per plan at a time. With the point_to_point strategy
 * messages travel between the two calls; other strategies complete the exchange inside start.
 * @return as redist_reshape_plan_execute: a second start, or an execute, before its wait is MPI_ERR_ARG on every
 *   rank (the first stays in progress). */
int redist_reshape_plan_start(redist_reshape_plan plan, void* out, const void* in, const void* alpha, const void* beta);
/** Completes the exchange redist_reshape_plan_start posted; out then holds the result.
 * @return MPI_SUCCESS, MPI_ERR_ARG for a wait without a start or a NULL, freed or unknown plan (on the calling
 *   rank), or an MPI call's error class. */
int redist_reshape_plan_wait(redist_reshape_plan plan);
/** The output box this rank holds (local), in the caller's coordinates, and the rank that passed it to create (the
 * calling rank without relabeling); passed_by may be NULL.
 * @return MPI_SUCCESS, or MPI_ERR_ARG for a NULL, freed or unknown plan or a NULL lo or hi. */
int redist_reshape_output_box(redist_reshape_plan plan, int64_t lo[], int64_t hi[], int* passed_by);
/** Releases the plan (local; an exchange still in progress is completed first) and sets *plan to
 * REDIST_RESHAPE_PLAN_NULL (already NULL: nothing to do).
 * @return MPI_SUCCESS, or MPI_ERR_ARG for a NULL pointer or a freed or unknown handle. */
int redist_reshape_plan_free(redist_reshape_plan* plan);

/** Node-shared input arrays: the one-copy path of the shared-memory strategy (docs/transform.md).
 *
 * Use redist_node_buffer_data(buffer) as this rank's `in` array of redist_reshape_plan_execute, on every rank of the
 * plan: node peers then read it in place, one copy per element instead of two (packing into shared memory,
 * unpacking from it), whenever the plan runs the shared_memory strategy (the automatic choice for large data);
 * otherwise the usual path, with the same result. Do not modify it while an execution that reads it runs on any
 * rank of the node: redist_reshape_plan_execute returns once the node's peers are done with it. Handles are never
 * reused. */
typedef struct redist_node_buffer_s* redist_node_buffer;
/** The null buffer. */
#define REDIST_NODE_BUFFER_NULL ((redist_node_buffer)0)
/** Collective over comm: `bytes` bytes for this rank (any count per rank, 0 included) that the ranks of its node
 * can read, from MPI_Win_allocate_shared.
 * @return MPI_SUCCESS or, on every rank alike, MPI_ERR_ARG (a NULL buffer pointer, bytes < 0), MPI_ERR_NO_MEM
 *   (more than the node's memory) or an MPI call's error class; *buffer is then REDIST_NODE_BUFFER_NULL. */
int redist_node_buffer_create(MPI_Comm comm, int64_t bytes, redist_node_buffer* buffer);
/** This rank's bytes (local).
 * @return the segment; NULL for REDIST_NODE_BUFFER_NULL, a freed or unknown handle (and possibly for 0 bytes). */
void* redist_node_buffer_data(redist_node_buffer buffer);
/** Collective over the comm of create (every rank passes its live handle; call it before MPI_Finalize); sets
 * *buffer to REDIST_NODE_BUFFER_NULL (already NULL: nothing to do).
 * @return MPI_SUCCESS, or MPI_ERR_ARG for a NULL pointer or a freed or unknown handle (on the calling rank, which
 *   then does not take part). */
int redist_node_buffer_free(redist_node_buffer* buffer);

/** The reason of the last failing redist C call on the calling thread: set by the reshape entry points on every
 * failure, and by the other entry points that return an MPI error code for the library errors they report (not
 * for a refused handle). Not cleared by successful calls. Cannot fail.
 * @return the message, or "" when none failed yet; valid until the thread's next failing call. */
const char* redist_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* REDIST_REDIST_H */
