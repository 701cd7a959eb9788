// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Distributed matrix multiply C = alpha * op(A) * op(B) + beta * C on any layouts the transform engine
// accepts, with the COSMA schedule (redist/gemm/schedule.hpp).
//
// A plan is built collectively and is immutable; executing it is repeatable with new values in the same
// layouts. Each execution: (1) one batched transform moves op(A) and op(B) from the user's layouts into the
// multiply's native layouts (transposing on the way when op is T or C); (2) the multiply runs round by
// round, its BLAS calls reading each round's A and B panels where the ranks of the grid line keep them (in
// node-shared windows, the default on one node) or gathering them while the previous round is multiplied,
// then sums the partial C blocks along k; (3) one transform writes C = C_native + beta * C in the
// user's layout (beta = 0: C is not read). Where the user's C holds a native part on its rank at consecutive
// local rows and columns (a ScaLAPACK C on the grid the schedule picks), the multiply writes it in place
// instead, with beta, and the transform out moves only the rest: nothing when the sizes divide evenly
// (gemm_statistics::c_in_place), edges of up to a block per part when not. The native layouts are ours to place, so the
// ranks playing the grid positions are chosen by relabeling (a linear assignment over the volumes of A, B and C that
// would move), the parts are cut along runs of the inputs' blocks grouped by owner (gemm_native_order), and the input
// layouts cost as little reshuffling as possible.
//
// Element types: float, double, std::complex<float>, std::complex<double>.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redist/gemm/schedule.hpp"
#include "redist/layout/grid_layout.hpp"
#include "redist/transform/plan.hpp"
#include "redist/types.hpp"

namespace redist {

/// How the round panels travel along the grid.
enum class gemm_communication : std::uint8_t {
  automatic = 0,  ///< shared_memory where every grid line lies on one node, else two_sided
  two_sided = 1,  ///< nonblocking MPI collectives (MPI_Iallgatherv) on the grid's row and column communicators
  one_sided = 2,  ///< MPI_Put into RMA windows over the round buffers (passive epoch: flushes and barriers)
  /// Nothing travels: the native A and B live in a node-shared window (one per plan and node) and BLAS
  /// reads each round's pieces where the ranks of the line keep them. No panel copies and no waits for
  /// messages (an MPI without asynchronous progress moves them only inside MPI calls), one barrier per line
  /// and execution, no panel buffers. Needs every grid line on one node; make_gemm_plan throws
  /// invalid_argument on every rank otherwise.
  shared_memory = 3,
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(gemm_communication c);

/// The order in which m, n and k are cut into the grid's parts (the native layouts).
enum class gemm_native_order : std::uint8_t {
  /// grouped where the input's blocks along a dimension are 64 or more long on average, else contiguous
  automatic = 0,
  contiguous = 1,  ///< parts are ranges of consecutive indices
  /// parts are runs of the input's blocks grouped by owning process row (column): a block-cyclic input keeps
  /// most of its data in place, all of it when the grid matches the input's process grid. Each dimension
  /// follows the larger of the two matrices along it. Costs one native block per run.
  grouped = 2,
};
/// The spelling (redist/names.hpp); "?" for no value of the enum. Throws nothing.
const char* to_string(gemm_native_order o);

struct gemm_options {
  /// S in bytes per rank for the multiply's buffers (see gemm_schedule_options). 0 = the environment variable
  /// REDIST_GEMM_MEMORY (bytes, with an optional K, M or G suffix: powers of 1024), else no limit.
  std::int64_t memory_limit_bytes = 0;
  double max_idle_fraction = 0.03;  ///< ranks that may stay idle for a better grid (paper Section 7.1)
  std::int64_t rounds = 0;          ///< rounds along k, 0 = automatic (see gemm_schedule_options)
  gemm_communication communication = gemm_communication::automatic;
  /// Round t+1's panels travel while round t is multiplied (double buffering, paper Section 7.3).
  bool overlap = true;
  /// Choose which rank plays which grid position by relabeling (communication-optimal for the given user
  /// layouts). Off: rank r plays position r.
  bool relabel = true;
  gemm_native_order native_order = gemm_native_order::automatic;
  /// Options of the transforms into and out of the native layouts.
  transform_options transform{};
  /// Seconds after which a wait inside this plan (its making and its executions, its transforms' too) is reported, in
  /// place of the process's timeout (REDIST_TIMEOUT, set_timeout); REDIST_TIMEOUT_ACTION still says what follows
  /// (docs/errors.md). Negative or NaN: the process's; 0: never. Each rank's own: it need not be the same on all ranks.
  double timeout_seconds = -1;
};

/// Where this rank's most recent execute() spent its time (seconds, wall clock, not agreed over ranks): what
/// to compare against another library's multiply phase by phase. All zero before the first execution.
struct gemm_execution_profile {
  double transform_in = 0;   ///< op(A) and op(B) into the native layouts (with the execution's agreement)
  double multiply = 0;       ///< local BLAS calls
  double panel_wait = 0;     ///< waiting for round panels that did not arrive during the previous multiply
  double reduction = 0;      ///< summing the partial C blocks along k
  double transform_out = 0;  ///< C = C native + beta * C in the user's layout
  double total = 0;          ///< all of execute(), the parts and what lies between them
};

/// Where this rank's make_gemm_plan spent its time (seconds, wall clock, not agreed over ranks): what a first call
/// pays before the first multiply. The parts follow one another; total also holds what lies between them.
struct gemm_planning_profile {
  double agreement = 0;   ///< the arguments' checks, the schedule and their agreement (the plan's communicator)
  double placement = 0;   ///< which rank plays which grid position (relabeling) and how panels travel
  double transforms = 0;  ///< the native layouts and the transform plans into and out of them
  double storage = 0;     ///< the native A, B and C buffers
  double grid_lines = 0;  ///< the communicators of the grid's rows, columns and layers
  double rounds = 0;      ///< the round loop's layout, and the one-sided or node-shared windows
  double total = 0;       ///< all of make_gemm_plan
};

/// The profiles' parts by name, in order, total last: the names the Python statistics and bench_gemm_bench use.
/// Throws nothing.
inline std::vector<std::pair<const char*, double>> named_parts(const gemm_planning_profile& g) {
  return {{"agreement", g.agreement}, {"placement", g.placement},   {"transforms", g.transforms},
          {"storage", g.storage},     {"grid_lines", g.grid_lines}, {"rounds", g.rounds},
          {"total", g.total}};
}
/// The same for an execution profile. Throws nothing.
inline std::vector<std::pair<const char*, double>> named_parts(const gemm_execution_profile& e) {
  return {{"transform_in", e.transform_in}, {"multiply", e.multiply},           {"panel_wait", e.panel_wait},
          {"reduction", e.reduction},       {"transform_out", e.transform_out}, {"total", e.total}};
}

/// What a gemm plan does, seen from this rank.
struct gemm_statistics {
  gemm_schedule schedule;                                            ///< the same on every rank
  gemm_communication communication = gemm_communication::two_sided;  ///< how panels travel (automatic resolved)
  /// One line: why `communication` (requested, what automatic found, or a fallback), as every plan's statistics
  /// say why their strategy. The same on every rank.
  std::string communication_reason;
  bool idle = false;                                      ///< this rank holds no grid position
  int position_m = -1, position_n = -1, position_k = -1;  ///< this rank's grid position (-1 when idle)
  /// What the multiply moves per execution (panels and the reduction along k; the transforms are below): bytes
  /// received as the schedule counts them (every panel piece but this rank's own, the reduction's partial sums),
  /// bytes sent as each piece reaching every rank that needs it. With shared_memory panels the pieces are read
  /// in place (counted as received, no panel messages).
  traffic_statistics multiply;
  plan_statistics transform_in;   ///< moving op(A) and op(B) into the native layouts
  plan_statistics transform_out;  ///< moving C out of the native layout (none when c_in_place)
  /// C's layout is the native one on every rank (grid_k = 1 and a grid that matches C's, as a ScaLAPACK C on a
  /// fitting process grid): the multiply writes the user's C in place, with beta, and nothing moves it out.
  bool c_in_place = false;
  /// shared_memory: the native A and B were cut from the node's shared window that an earlier plan on the same
  /// communicator (or this plan's transform in) made, rather than from a new one.
  bool native_window_reused = false;
  /// The grid's row, column and layer communicators came from an earlier plan on the same communicator that
  /// placed the same grid alike (the last four placements are kept there) rather than from new splits.
  bool grid_lines_reused = false;
  std::int64_t relabel_volume_before = 0;  ///< elements of A, B and C that would move with rank r at position r
  std::int64_t relabel_volume_after = 0;   ///< ... with the chosen assignment (global sums)
  gemm_planning_profile planning;          ///< this rank's make_gemm_plan
  gemm_execution_profile last_execution;   ///< the most recent execute() on this rank
  /// This rank's elements of C the multiply writes in place: all of its C when c_in_place; on a matching grid
  /// whose sizes do not divide evenly, all but the edges where the native parts and C's blocks disagree (the
  /// transform out moves only those), and none of a row part with edge rows once k is at least its rows, nor
  /// where C's leading dimension aliases (docs/gemm.md, "C in place").
  std::int64_t c_elements_in_place = 0;
};

/// The problem: C (m x n) = op(A) * op(B); A is m x k (k x m when op_a transposes), B is k x n (n x k).
struct gemm_description {
  grid_layout a, b, c;
  op op_a = op::identity;
  op op_b = op::identity;
  element_type type = element_type::f64;
};

class gemm_plan {
 public:
  /// An empty plan: execute(), start() and wait() throw invalid_argument on it (build a plan with make_gemm_plan).
  /// Throws nothing.
  gemm_plan();
  ~gemm_plan();
  gemm_plan(gemm_plan&&) noexcept;
  gemm_plan& operator=(gemm_plan&&) noexcept;
  gemm_plan(const gemm_plan&) = delete;
  gemm_plan& operator=(const gemm_plan&) = delete;

  /// C = alpha * op(A) * op(B) + beta * C with this rank's local storage of A, B and C. Collective. A problem on
  /// any rank throws the same error on every rank before anything is written (with the default
  /// transform.check_consistency; an empty plan: this rank only).
  /// @pre collective: every rank of the plan's communicator calls it; no start() of this plan in progress (else
  /// the error is agreed)
  /// @throws invalid_argument an empty plan, bad buffers, complex alpha or beta for real elements, a start() in
  /// progress, or (typed form) elements of another type than the plan's
  /// @throws insufficient_memory the transforms' message buffers could not be acquired
  /// @throws mpi_error an MPI call failed
  void execute(void* c, const void* a, const void* b, scalar alpha, scalar beta) const;
  /// execute() with typed buffers and scalars; T must be the plan's element type (checked and agreed).
  /// @pre as execute()
  /// @throws invalid_argument as execute(), or T not the plan's element type (agreed)
  /// @throws insufficient_memory as execute()
  /// @throws mpi_error an MPI call failed
  template <class T>
  void execute(T* c, const T* a, const T* b, T alpha, T beta) const {
    /// A wrong element type on one rank is agreed with the buffers' checks (a local throw would hang the others).
    execute_agreed(static_cast<void*>(c), static_cast<const void*>(a), static_cast<const void*>(b),
                   redist::to_scalar(alpha), redist::to_scalar(beta), type_problem(element_type_v<T>));
  }

  /// Split phase, first half: the same checks and agreement as execute() (nothing written where any rank fails),
  /// the transforms into the schedule's layouts and the multiply, then the transform of the result out to C's layout
  /// is started and start() returns: C's redistribution overlaps the caller's work until wait(). Between them
  /// touch neither C nor A or B. Collective: every rank calls start(), later wait().
  /// @pre no start() of this plan in progress (else the error is agreed; execute() likewise)
  /// @throws invalid_argument bad buffers, scalars or element type, or a start() in progress; an empty plan (this
  /// rank only)
  /// @throws insufficient_memory the transforms' message buffers could not be acquired
  /// @throws mpi_error an MPI call failed
  void start(void* c, const void* a, const void* b, scalar alpha, scalar beta) const;
  /// start() with typed buffers and scalars; T must be the plan's element type (checked and agreed).
  /// @pre as start()
  /// @throws invalid_argument as start(), or T not the plan's element type (agreed)
  /// @throws insufficient_memory as start()
  /// @throws mpi_error an MPI call failed
  template <class T>
  void start(T* c, const T* a, const T* b, T alpha, T beta) const {
    run(static_cast<void*>(c), static_cast<const void*>(a), static_cast<const void*>(b), redist::to_scalar(alpha),
        redist::to_scalar(beta), type_problem(element_type_v<T>), true);
  }
  /// Split phase, second half: completes the redistribution of C that start() began.
  /// @pre start() returned on this rank and no wait() followed it
  /// @throws invalid_argument no start() in progress, or an empty plan
  /// @throws mpi_error an MPI call failed
  void wait() const;
  /// True between a start() that returned and its wait() (this rank). Throws nothing.
  bool in_progress() const;

  /// The problem as planned.
  /// @throws invalid_argument the plan is empty (not made by make_gemm_plan)
  const gemm_description& description() const;
  gemm_statistics statistics() const;  ///< this rank's (an empty plan: zeros). Throws nothing.
  MPI_Comm communicator() const;       ///< duplicate owned by the plan (an empty plan: MPI_COMM_NULL). Throws nothing.

  struct impl;

 private:
  explicit gemm_plan(std::unique_ptr<impl> p);
  /// What is wrong with executing T elements on this rank (empty: nothing).
  std::string type_problem(element_type t) const;
  /// execute(), with this rank's `problem` (non-empty: an error) agreed before anything is written.
  void execute_agreed(void* c, const void* a, const void* b, scalar alpha, scalar beta,
                      const std::string& problem) const {
    run(c, a, b, alpha, beta, problem, false);
  }
  /// execute_agreed(), or with `split` start(): the transform out is left in progress.
  void run(void* c, const void* a, const void* b, scalar alpha, scalar beta, const std::string& problem,
           bool split) const;
  std::unique_ptr<impl> impl_;
  friend gemm_plan make_gemm_plan(MPI_Comm, gemm_description, const gemm_options&);
};

/// Builds the plan (collective over comm). Validates first and throws on every rank, before anything moves.
/// @pre collective: every rank of comm calls it with the same global description (layouts' global parts, ops,
/// element type) and the same options (REDIST_GEMM_MEMORY included)
/// @throws dimension_mismatch op(A), op(B) and C do not fit together
/// @throws invalid_argument integer element types, bad options or ops, a malformed REDIST_GEMM_MEMORY, or
/// gemm_communication::shared_memory with a grid line whose ranks are on different nodes
/// @throws invalid_layout a layout the transform engine rejects (global description, or this rank's storage)
/// @throws inconsistent_ranks ranks pass different problems, options or layouts
/// @throws overflow_error the schedule's local multiplies exceed the 32-bit sizes BLAS takes
/// @throws insufficient_memory no schedule fits the memory limit, or the plan's buffers could not be allocated
/// @throws mpi_error an MPI call failed
gemm_plan make_gemm_plan(MPI_Comm comm, gemm_description description, const gemm_options& options = {});

/// One-shot convenience: plan, execute once, discard. The arguments in the order of transform() and of
/// Python's redist.gemm: the operands with their layouts, then alpha, beta and the ops.
/// @pre collective, as make_gemm_plan
/// @throws dimension_mismatch as make_gemm_plan
/// @throws invalid_argument as make_gemm_plan and gemm_plan::execute
/// @throws invalid_layout as make_gemm_plan
/// @throws inconsistent_ranks as make_gemm_plan
/// @throws overflow_error as make_gemm_plan
/// @throws insufficient_memory as make_gemm_plan and gemm_plan::execute
/// @throws mpi_error an MPI call failed
template <class T>
void gemm(MPI_Comm comm, const grid_layout& a_layout, const T* a, const grid_layout& b_layout, const T* b,
          const grid_layout& c_layout, T* c, T alpha, T beta, op op_a = op::identity, op op_b = op::identity,
          const gemm_options& options = {}) {
  make_gemm_plan(comm, gemm_description{a_layout, b_layout, c_layout, op_a, op_b, element_type_v<T>}, options)
      .execute(c, a, b, alpha, beta);
}

/// S in bytes from gemm_options / REDIST_GEMM_MEMORY (0 = no limit). Local (reads this process's environment).
/// @throws invalid_argument options.memory_limit_bytes negative, or REDIST_GEMM_MEMORY set (used when the option is
/// 0) and not a positive byte count (malformed, or 0)
std::int64_t gemm_memory_limit_bytes(const gemm_options& options);

}  // namespace redist
