// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Transform plans: A = alpha * op(B) + beta * A between any two grid layouts, for one job or a batch.
//
// A plan is built collectively (all ranks of the communicator call make_transform_plan with the same global
// descriptions) and is immutable; executing it needs only the buffers and is repeatable. Each rank
// derives what it sends and receives from the grid overlay of the two layouts: planning cost and plan
// memory are proportional to the rank's own data and peers, never to P^2.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redist/layout/grid_layout.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/layout/nd_layout.hpp"
#include "redist/statistics.hpp"
#include "redist/torus/routing.hpp"
#include "redist/types.hpp"

namespace redist {

namespace torus {
struct machine;  ///< redist/torus/exchange.hpp
}
struct box_reshape_options;  ///< below

/// How the data moves between ranks.
enum class exchange_strategy : std::uint8_t {
  automatic = 0,       ///< shared_memory when all peers share this node's memory and data is large, else point_to_point
  point_to_point = 1,  ///< MPI_Isend/MPI_Irecv, unpack each message as it arrives (overlap)
  alltoallv = 2,       ///< one MPI_Alltoallv (MPI_Alltoallv_c for counts above 2^31)
  shared_memory = 3,   ///< node-local peers stream packed data through a small MPI shared-memory window
                       ///< (or read B itself when it is in a node_buffer); peers on other nodes use
                       ///< point_to_point
  torus_routed = 4,    ///< the rounds of the multi-phase transpose (torus::multiphase_transpose_schedule), each a
                       ///< permutation routed on the described torus (transform_options::torus) with
                       ///< intermediates forwarding chunks (torus::routed_phases_plan); needs every job's A and
                       ///< B on one P x Q grid of all ranks and messages only between the schedule's pairs (a
                       ///< transpose A = op(B) of block-cyclic layouts with equal blocks on that grid)
};
/// The spelling (redist/names.hpp); "?" for a value outside the enum. Throws nothing.
const char* to_string(exchange_strategy s);

/// How packing and unpacking write memory.
enum class store_policy : std::uint8_t {
  automatic = 0,  ///< streaming for packing messages when a rank sends more than 8x its core's share of
                  ///< the last-level cache; into A when a job writes more there than that share (transposes: than
                  ///< 8x the core's level-2 share, if less); ordinary stores otherwise, and always into
                  ///< shared-memory ring slots
  cached = 1,     ///< ordinary stores
  streaming = 2,  ///< non-temporal stores for plain copies of contiguous runs (packing; unpacking without
                  ///< transposition, alpha = 1, beta = 0; runs of A of at least 1 KiB) and transposes (beta = 0;
                  ///< copies, alpha-scaling of doubles and floats, conjugation of complex<double>): they skip
                  ///< reading every destination cache line first and leave the cache to other data (ring slots,
                  ///< read at once by node peers, always use ordinary stores)
};
/// The spelling (redist/names.hpp); "?" for a value outside the enum. Throws nothing.
const char* to_string(store_policy s);

struct transform_options {
  exchange_strategy strategy = exchange_strategy::automatic;
  /// Collective check that all ranks passed the same global descriptions (one allreduce).
  bool check_consistency = true;
  /// OpenMP threads for packing/unpacking; 0 = the OpenMP default (omp_get_max_threads()), at most the host's
  /// online CPUs divided by the communicator's ranks on that host (at least 1): ranks that share a host unbound
  /// would otherwise each start a team as large as the host (plan_statistics::threads says what a plan uses).
  int num_threads = 0;
  store_policy stores = store_policy::automatic;
  /// shared_memory: bytes per chunk of the messages streamed to node peers (each message goes through a
  /// ring of 4 chunk slots in the sender's window, so a chunk is unpacked while it is still in the cache).
  /// 0 = automatic: 256 KiB per OpenMP thread, 2 MiB per thread on a node running more than twice as many
  /// threads as it has CPUs unless the plan is one_shot; pieces whose unpack transposes are then cut 256 KiB per
  /// thread, or 1 MiB where the tile is wide enough on both transposed axes for a square that large (not in plans
  /// for one call, nor in the 256 KiB chunks of an oversubscribed node; a chunk holds at least one piece). Must be
  /// the same on all ranks.
  std::int64_t stream_chunk_bytes = 0;
  /// torus_routed: the network and which node each rank runs on (build it with the torus headers,
  /// redist/torus/exchange.hpp), and how the rounds are routed. Must be the same on all ranks.
  std::shared_ptr<const torus::machine> torus;
  torus::routing_options torus_routing{};
  /// Seconds after which a wait inside this plan (its making and its executions) is reported, in place of the
  /// process's timeout (REDIST_TIMEOUT, set_timeout); REDIST_TIMEOUT_ACTION still says what follows (docs/errors.md).
  /// Negative or NaN: the process's; 0: never. Each rank's own: it need not be the same on all ranks.
  double timeout_seconds = -1;
  /// The plan is expected to run once (plan + one execution, as transform() and the ScaLAPACK drop-in's first
  /// call of a key do): `automatic` then weighs set-up against that one execution. It takes point_to_point
  /// below one_shot_window_bytes per rank (sent by the rank that sends the most;
  /// one_shot_window_bytes_oversubscribed when some host runs more ranks than it has CPUs), where a node
  /// communicator and a shared window cost more to create than they save in one execution, and otherwise what it
  /// takes for repeated executions. Where an earlier plan left a
  /// shared window on the communicator (on every rank), it takes shared_memory from 1 MiB per rank as a repeated
  /// plan does, cutting its segment from that window; if some node finds no room there, point_to_point (agreed).
  /// Must be the same on all ranks.
  bool one_shot = false;
};

/// Bytes per rank (sent by the rank that sends the most) from which a one-shot `automatic` plan streams through a
/// shared window: below it, creating the node communicator and the window costs more than one execution through
/// them saves. The second value applies where some host runs more ranks than it has CPUs (the set-up is slower
/// there). How they were measured: docs/tuning.md, "One-shot plans and the shared window".
inline constexpr std::int64_t one_shot_window_bytes = std::int64_t(12) << 20;
inline constexpr std::int64_t one_shot_window_bytes_oversubscribed = std::int64_t(32) << 20;

/// The elements of A a job writes (and of op(B) it reads): all of them, or a trapezoid cut by a diagonal,
/// in A's global indices i (row) and j (column), 0-based: `upper` keeps j - i >= diagonal, `lower` keeps
/// j - i <= diagonal (diagonal = 0: the main diagonal included; 1 or -1: excluded). Elements of A outside
/// the region are left untouched (neither written nor scaled by beta), and only the region travels: the
/// planner cuts the overlay's tiles along the diagonal into rectangles.
enum class region_shape : std::uint8_t { all = 0, upper = 1, lower = 2 };
struct element_region {
  region_shape shape = region_shape::all;
  std::int64_t diagonal = 0;
  /// Whether element (i, j) of A lies in the region. Throws nothing.
  bool contains(std::int64_t i, std::int64_t j) const {
    return shape == region_shape::all || (shape == region_shape::upper ? j - i >= diagonal : j - i <= diagonal);
  }
  /// The same elements seen in the transposed matrix (element (i, j) becomes (j, i)). Throws nothing.
  element_region transposed() const {
    if (shape == region_shape::all) return *this;
    return {shape == region_shape::upper ? region_shape::lower : region_shape::upper, -diagonal};
  }
};
/// The spelling (redist/names.hpp); "?" for a value outside the enum. Throws nothing.
const char* to_string(region_shape s);

/// One transformation of a batch: A (target) and B (source) layouts, op and element type, and the region
/// of A it covers.
struct job_description {
  grid_layout a;
  grid_layout b;
  op operation = op::identity;
  element_type type = element_type::f64;
  element_region region{};
};

/// One N-dimensional job: A = alpha * permute(B, axes) + beta * A, where axis i of A is axis axes[i] of B (empty:
/// the identity), conjugated when `conjugate` (complex types; integers and reals are unchanged by it). A matrix job
/// is the case d = 2 (rows axis 0, columns axis 1): op::transpose is axes {1, 0}, conj_transpose adds conjugate.
/// `region` cuts A's elements as for matrices and needs d = 2 (axis 0 = i, axis 1 = j).
struct reshape_job {
  nd_layout a;
  nd_layout b;
  std::vector<int> axes;
  bool conjugate = false;
  element_type type = element_type::f64;
  element_region region{};
};

/// The buffers and scalars of one job at execution: base pointers of this rank's local storage.
struct job_buffers {
  void* a = nullptr;
  const void* b = nullptr;
  scalar alpha{1.0, 0.0};
  scalar beta{0.0, 0.0};
};

/// What a plan moves, seen from this rank (and, summed, globally).
/// bytes_sent, bytes_received, messages_sent (one per peer), messages_received and bytes_local (bytes that stay on
/// this rank, copied directly) per execution: redist/statistics.hpp.
struct plan_statistics : traffic_statistics {
  std::int64_t peers_on_node = 0;  ///< send peers sharing this rank's node
  bool streaming_stores = false;   ///< this rank writes messages or A with streaming stores (see store_policy)
  std::int64_t window_bytes = 0;   ///< shared_memory: this rank's segment of the plan's shared window
  /// shared_memory: the segment was cut from a window that an earlier plan on the same communicator made (no
  /// MPI_Win_allocate_shared: src/mpi/node_arena.cpp)
  bool window_reused = false;
  /// transform_options::one_shot changed an automatic choice of this rank's plan (point_to_point below the window
  /// threshold or for want of room in the cached window; smaller stream chunks on an oversubscribed node): a plan
  /// for repeated executions would differ.
  bool one_shot_choices = false;
  std::int64_t stream_chunk_bytes = 0;  ///< shared_memory: the chunk size in use (options' or automatic)
  int threads = 1;                      ///< the OpenMP team this rank packs and unpacks with (see num_threads)
  /// start() returns with this rank's messages in flight, so that work between start() and wait() overlaps them
  /// (point_to_point); false: the strategy completes the exchange inside start() (shared_memory, alltoallv and
  /// torus_routed step through node memory or a blocking collective together).
  bool start_overlaps = false;
  /// One line: why the plan's strategy (requested, or what exchange_strategy::automatic compared), as the neighbor
  /// exchange's and the in-place alltoallv's statistics say it. The same on every rank.
  std::string reason;
  /// Where this rank's make_transform_plan spent its time (seconds, wall clock; not agreed over ranks): what a one-shot
  /// call pays before the first byte moves. The five phases below are disjoint parts of plan_seconds.
  double plan_seconds = 0;            ///< all of make_transform_plan
  double plan_agreement_seconds = 0;  ///< argument checks and their agreement, the plan's own communicator
  double plan_tiles_seconds = 0;      ///< overlay of the two layouts: tiles and their runs
  double plan_messages_seconds = 0;   ///< one message per peer, offsets, send order
  double plan_exchange_seconds = 0;   ///< the strategy's set-up (shared_memory: node communicator, streams, window)
  double plan_buffers_seconds = 0;    ///< private send and receive buffers laid out (borrowed per execution)
  /// This rank's wall time of the plan's latest execute (agreement included; 0 before the first).
  double last_execution_seconds = 0;
};

class transform_plan {
 public:
  /// An empty plan (build one with make_transform_plan or make_reshape_plan). Throws nothing.
  transform_plan();
  ~transform_plan();
  transform_plan(transform_plan&&) noexcept;
  transform_plan& operator=(transform_plan&&) noexcept;
  transform_plan(const transform_plan&) = delete;
  transform_plan& operator=(const transform_plan&) = delete;

  /// Executes all jobs with the given buffers (one entry per job, in planning order). Collective. A problem on any
  /// rank throws the same error on every rank before anything is written (with the default check_consistency; an
  /// empty plan: this rank only).
  /// @pre collective: every rank of the plan's communicator calls it; no start() of this plan in progress (else the
  ///   error is agreed)
  /// @throws invalid_argument an empty plan, buffers that do not fit the plan (one per job; A's or B's null where
  ///   this rank holds elements; complex alpha or beta for real elements; alpha != 1 or beta != 0 for integers), or
  ///   a start() in progress
  /// @throws insufficient_memory the message buffers could not be acquired
  /// @throws mpi_error an MPI call failed
  void execute(const std::vector<job_buffers>& buffers) const;

  /// Single-job convenience: A = alpha*op(B) + beta*A.
  /// @pre as execute(buffers)
  /// @throws invalid_argument as execute(buffers), a plan of more than one job, or T not the plan's element type
  ///   (agreed like a bad buffer)
  /// @throws insufficient_memory as execute(buffers)
  /// @throws mpi_error an MPI call failed
  template <class T>
  void execute(T* a, const T* b, T alpha = T(1), T beta = T(0)) const {
    /// A wrong element type on one rank is agreed like any bad buffer (a local throw would leave the others
    /// waiting in the execution).
    execute_agreed(std::vector<job_buffers>{job_buffers{a, b, redist::to_scalar(alpha), redist::to_scalar(beta)}},
                   single_job_problem(element_type_v<T>));
  }

  /// Split-phase execution, first half: agrees on the buffers' checks like execute() (a problem on any rank throws
  /// the same error on every rank before anything is written), posts the communication and returns. The caller
  /// may compute between start() and wait() but must neither write B nor read or write A until wait() returns.
  /// Collective: every rank calls start(), later wait().
  /// @pre no start() of this plan in progress (else the error is agreed like a bad buffer; execute() likewise)
  /// @throws invalid_argument buffers that do not fit the plan, or a start() already in progress
  /// @throws insufficient_memory the message buffers could not be acquired
  /// @throws mpi_error an MPI call failed
  void start(const std::vector<job_buffers>& buffers) const;

  /// Single-job start(): A = alpha*op(B) + beta*A once wait() returns.
  /// @pre as start(buffers)
  /// @throws invalid_argument as start(buffers), a plan of more than one job, or T not the plan's element type
  ///   (agreed like a bad buffer)
  /// @throws insufficient_memory as start(buffers)
  /// @throws mpi_error an MPI call failed
  template <class T>
  void start(T* a, const T* b, T alpha = T(1), T beta = T(0)) const {
    start_agreed(std::vector<job_buffers>{job_buffers{a, b, redist::to_scalar(alpha), redist::to_scalar(beta)}},
                 single_job_problem(element_type_v<T>));
  }

  /// Split-phase execution, second half: completes the exchange start() posted; A then holds the result. A plan
  /// destroyed between start() and wait() completes the exchange in its destructor.
  /// @pre start() returned on this rank and no wait() followed it
  /// @throws invalid_argument no start() in progress
  /// @throws mpi_error an MPI call failed (the plan's communicator is then not reused)
  void wait() const;

  /// True between a start() that returned and its wait() (this rank). Throws nothing.
  bool in_progress() const;

  /// The plan of the inverse movement: B = op(A) for every job (roles of A and B swapped; a job's region
  /// becomes the same elements of B). Collective, with the forward plan's options.
  /// @pre collective: every rank of the plan's communicator calls it
  /// @throws invalid_argument an empty plan (this rank only), or a strategy the inverse jobs do not fit (as
  ///   make_transform_plan, make_reshape_plan for reshape plans)
  /// @throws insufficient_memory as make_transform_plan
  /// @throws mpi_error an MPI call failed
  transform_plan inverse() const;

  /// The jobs as planned: matrix jobs (plans from make_transform_plan; empty for make_reshape_plan), and every
  /// plan's jobs in the engine's N-dimensional form. Throws nothing (as every accessor below). An empty plan
  /// (default-constructed or moved from) answers with nothing: no jobs, zero statistics, strategy automatic,
  /// MPI_COMM_NULL, no boxes and rank -1.
  const std::vector<job_description>& jobs() const;
  const std::vector<reshape_job>& reshape_jobs() const;  ///< the N-dimensional form; throws nothing
  plan_statistics statistics() const;                    ///< this rank; throws nothing
  exchange_strategy strategy() const;  ///< the strategy chosen (automatic only for an empty plan); throws nothing
  MPI_Comm communicator() const;       ///< duplicate owned by the plan; throws nothing

  /// A plan from make_reshape_plan(comm, my_input_boxes, my_output_boxes, ...): the output boxes this rank holds, in
  /// the coordinates passed, and the rank that passed them (this rank unless box_reshape_options::relabel moved
  /// them). Other plans: no boxes, and this rank. Throws nothing.
  const std::vector<box>& output_boxes_held() const;
  int output_boxes_passed_by() const;  ///< the rank that passed them; throws nothing

  /// For operations built on transforms (the multiply's plans): execute(buffers) with a `problem` the caller found
  /// on this rank (non-empty: an error, raised as invalid_argument) agreed in the same step as the buffers'
  /// checks, so that one agreement decides for both before anything is written. `next`: a plan the caller executes
  /// after this one, once it has written its own output, whose message buffers this execution's agreement
  /// acquires too (they stay until `next` executes). Collective.
  /// @pre no start() of this plan or of `next` in progress
  /// @throws invalid_argument `problem` on any rank, buffers that do not fit the plan
  /// @throws insufficient_memory message buffers (this plan's or `next`'s) could not be acquired
  /// @throws mpi_error an MPI call failed
  void execute_agreed(const std::vector<job_buffers>& buffers, const std::string& problem,
                      const transform_plan* next = nullptr) const;
  /// start(buffers) with this rank's `problem` agreed as execute_agreed() agrees it; wait() completes it.
  /// @pre no start() of this plan in progress
  /// @throws invalid_argument `problem` on any rank, buffers that do not fit the plan
  /// @throws mpi_error an MPI call failed
  void start_agreed(const std::vector<job_buffers>& buffers, const std::string& problem) const;

  struct impl;

 private:
  explicit transform_plan(std::unique_ptr<impl> p);
  /// What is wrong with a single-job execute of T elements on this rank (empty: nothing).
  std::string single_job_problem(element_type t) const;
  std::unique_ptr<impl> impl_;
  friend transform_plan make_transform_plan(MPI_Comm, std::vector<job_description>, const transform_options&);
  friend transform_plan make_reshape_plan(MPI_Comm, std::vector<reshape_job>, const transform_options&);
  friend transform_plan make_reshape_plan(MPI_Comm, const std::vector<box>&, const std::vector<box>&, element_type,
                                          const box_reshape_options&);
};

/// Builds a plan for a batch of jobs (collective over comm). Validates every layout and shape first and
/// throws on every rank (same exception, same message) before anything moves.
/// @pre collective: every rank of comm calls it with the same global descriptions (layouts' global parts, ops,
///   element types, regions) and options, its layouts describing its own storage
/// @throws invalid_argument an option, op, element type or region out of range, layouts that do not describe this
///   rank's storage, or a strategy the jobs do not fit
/// @throws invalid_layout a layout that fails validate_global or validate_local
/// @throws dimension_mismatch op(B) of a job is not the shape of its A
/// @throws inconsistent_ranks ranks passed different global descriptions or options
/// @throws insufficient_memory the plan's buffers or shared window could not be allocated
/// @throws mpi_error an MPI call failed
transform_plan make_transform_plan(MPI_Comm comm, std::vector<job_description> jobs,
                                   const transform_options& options = {});

/// Single job.
/// @pre as above
/// @throws invalid_argument as above
/// @throws invalid_layout as above
/// @throws dimension_mismatch as above
/// @throws inconsistent_ranks as above
/// @throws insufficient_memory as above
/// @throws mpi_error an MPI call failed
transform_plan make_transform_plan(MPI_Comm comm, const grid_layout& a, const grid_layout& b, op operation,
                                   element_type type, const transform_options& options = {});

/// Builds a plan for a batch of N-dimensional jobs (collective over comm), with the same checks and agreement as
/// make_transform_plan: every layout, axis permutation and shape is validated and a problem on any rank throws on
/// every rank before anything moves.
/// @pre as make_transform_plan (axes and conjugate being part of the global description)
/// @throws invalid_argument as make_transform_plan, axes that are not a permutation, or a triangular region with
///   other than 2 axes
/// @throws invalid_layout as make_transform_plan
/// @throws dimension_mismatch A and B with different numbers of axes, or permute(B, axes) not the shape of A
/// @throws inconsistent_ranks as make_transform_plan
/// @throws insufficient_memory as make_transform_plan
/// @throws mpi_error an MPI call failed
transform_plan make_reshape_plan(MPI_Comm comm, std::vector<reshape_job> jobs, const transform_options& options = {});

/// How the boxes of make_reshape_plan(comm, my_input_boxes, my_output_boxes, type, options) are permuted and stored.
struct box_reshape_options {
  std::vector<int> axes;         ///< output axis k is input axis axes[k] (empty: the same axes); the same on every rank
  std::vector<int> input_order;  ///< how this rank stores its input boxes: axes fastest first (empty: C order)
  std::vector<int> output_order;  ///< likewise its output boxes; each rank its own
  bool conjugate = false;         ///< complex types: A = alpha * conj(permute(B)) + beta * A
  /// Exact process relabeling: rank r may then hold the output boxes another rank passed, so that fewer bytes move
  /// (transform_plan::output_boxes_held, output_boxes_passed_by). The same on every rank.
  bool relabel = false;
  transform_options transform;  ///< strategy, stores, threads, timeout: as for every transform plan
};

/// The reshape of FFT libraries' calling model (heFFTe's): every rank passes only the boxes it holds, of B (input)
/// and of A (output), in global coordinates of any origin; the plan gathers them (collective over comm). A rank may
/// pass no box; empty boxes are ignored. The non-empty input boxes must tile one index space exactly (no overlap,
/// no gap), the output boxes that space permuted by options.axes. Local storage: a rank's boxes one after another
/// in the order passed, each dense in its storage order. Execute as any plan: execute(a, b, alpha, beta).
/// @pre every rank passes the same type and the same options.axes, conjugate, relabel and transform strategy
/// @throws invalid_argument boxes that overlap, leave a gap or disagree in their number of axes (1 to max_axes), an
///   order or axes that is not a permutation, an output space that is not the input's permuted
/// @throws inconsistent_ranks ranks passed different types or options
/// @throws mpi_error an MPI call failed
transform_plan make_reshape_plan(MPI_Comm comm, const std::vector<box>& my_input_boxes,
                                 const std::vector<box>& my_output_boxes, element_type type,
                                 const box_reshape_options& options = {});

/// One-shot N-dimensional convenience: A = alpha * permute(B, axes) + beta * A, planned, executed once, discarded.
/// @pre collective, as make_reshape_plan
/// @throws invalid_argument as make_reshape_plan and transform_plan::execute
/// @throws invalid_layout as make_reshape_plan
/// @throws dimension_mismatch as make_reshape_plan
/// @throws inconsistent_ranks as make_reshape_plan
/// @throws insufficient_memory as make_reshape_plan and transform_plan::execute
/// @throws mpi_error an MPI call failed
template <class T>
void reshape(MPI_Comm comm, const nd_layout& a_layout, T* a, const nd_layout& b_layout, const T* b,
             const std::vector<int>& axes, T alpha = T(1), T beta = T(0), const transform_options& options = {}) {
  transform_options o = options;
  o.one_shot = true;
  make_reshape_plan(comm, std::vector<reshape_job>{{a_layout, b_layout, axes, false, element_type_v<T>, {}}}, o)
      .execute(a, b, alpha, beta);
}

/// One-shot convenience: plan, execute once, discard (planned with transform_options::one_shot).
/// @pre collective, as make_transform_plan
/// @throws invalid_argument as make_transform_plan and transform_plan::execute
/// @throws invalid_layout as make_transform_plan
/// @throws dimension_mismatch as make_transform_plan
/// @throws inconsistent_ranks as make_transform_plan
/// @throws insufficient_memory as make_transform_plan and transform_plan::execute
/// @throws mpi_error an MPI call failed
template <class T>
void transform(MPI_Comm comm, const grid_layout& a_layout, T* a, const grid_layout& b_layout, const T* b, op operation,
               T alpha, T beta, const transform_options& options = {}) {
  transform_options o = options;
  o.one_shot = true;
  make_transform_plan(comm, a_layout, b_layout, operation, element_type_v<T>, o).execute(a, b, alpha, beta);
}

}  // namespace redist
