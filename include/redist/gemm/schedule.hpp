// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The COSMA schedule of a distributed matrix multiply C (m x n) = op(A) (m x k) * op(B) (k x n) on P ranks
// (Kwasniewski et al., SC'19, Sections 3, 6.3 and 7.1). Pure arithmetic on the problem sizes: the same
// function plans a multiply and answers "what would it do at P = 10^5" in one process.
//
// The iteration space m x n x k is cut by parallel steps into a grid_m x grid_n x grid_k processor grid
// (ranks_used = grid_m * grid_n * grid_k <= P: up to max_idle_fraction of the ranks may stay idle when that
// cuts communication, paper Section 7.1, Fig. 5). Each used rank owns a local domain of about
// (m / grid_m) x (n / grid_n) x (k / grid_k). Sequential steps then cut the local domain in time so that the
// rank's buffers fit the memory limit S: its C block into sequential_m x sequential_n parts, processed one
// after another, and its k range into `rounds` rounds (paper Section 6.3: the I/O-latency trade-off; more
// rounds than the memory needs let round t+1's communication overlap round t's multiply, Section 7.3).
//
// Data movement of one multiply (what `communicated_elements` counts, per rank):
//  - op(A): the rank's A block (local m x local k) is stored split among the grid_n ranks sharing it and
//    gathered round by round (replication along n), once per sequential n part;
//  - op(B): likewise among the grid_m ranks sharing it (replication along m), once per sequential m part;
//  - C: the grid_k partial C blocks are summed and scattered (reduction along k).
// `io_elements` is the paper's I/O count of the local domain (its A and B inputs, each time they are
// loaded, plus its C output), the quantity bounded below by Eq. 33.
#include <cstdint>
#include <string>
#include <vector>

namespace redist {

enum class gemm_dimension : std::uint8_t { m = 0, n = 1, k = 2 };
const char* to_string(gemm_dimension d);  ///< "m", "n", "k"; "?" for a value outside the enum; throws nothing

/// One step of the schedule: split `dimension` by `divisor`, among ranks (parallel) or in time (sequential).
struct gemm_step {
  gemm_dimension dimension = gemm_dimension::m;
  int divisor = 1;
  bool parallel = true;
};

struct gemm_schedule_options {
  /// S: elements (of the multiply's type) each rank may hold in the multiply's buffers: its share of op(A),
  /// op(B) and C in the native layout, the C accumulator and the round buffers. 0 = no limit.
  std::int64_t memory_limit_elements = 0;
  /// Largest fraction of the ranks that may stay idle when a smaller grid communicates less (Section 7.1).
  double max_idle_fraction = 0.03;
  /// Rounds along k: 0 = automatic (the fewest that fit S, raised to up to 4 rounds of at least 256 k-columns
  /// each when inputs are replicated, so that communication overlaps the multiply); > 0 = at least this many.
  std::int64_t rounds = 0;
  /// Whether round buffers are doubled (communication of round t+1 during the multiply of round t).
  bool double_buffering = true;
};

struct gemm_schedule {
  /// The problem.
  std::int64_t m = 0, n = 0, k = 0;
  int ranks = 1;       ///< P
  int ranks_used = 1;  ///< grid_m * grid_n * grid_k
  /// Parallel steps (the processor grid) and sequential steps.
  int grid_m = 1, grid_n = 1, grid_k = 1;
  int sequential_m = 1, sequential_n = 1;
  std::int64_t rounds = 1;
  /// All steps in order: parallel ones (prime factors of the grid, largest first) then sequential ones.
  std::vector<gemm_step> steps;

  /// Largest local domain over the used ranks (ceil(m / grid_m) x ceil(n / grid_n) x ceil(k / grid_k)).
  std::int64_t local_m = 0, local_n = 0, local_k = 0;
  /// Per used rank, maximum over the ranks (elements of the multiply's type).
  std::int64_t memory_limit_elements = 0;  ///< S as given (0 = none)
  std::int64_t memory_elements = 0;        ///< buffers the multiply holds
  /// Received in the multiply (replication + reduction) by the rank at grid position (0, 0, 0), which holds the
  /// largest local domain; a rank whose stored pieces are smaller (rounding of the cuts) may receive a little more.
  std::int64_t communicated_elements = 0;
  std::int64_t io_elements = 0;  ///< the paper's I/O of the local domain (inputs as loaded + output)
  std::int64_t messages = 0;     ///< collective calls per rank (latency cost)
  /// Eq. 33 with Eq. 32's local domain: 2mnk / (P sqrt(S)) + S when S < (mnk / P)^(2/3) (the memory binds),
  /// else 3 (mnk / P)^(2/3) (also when S is unlimited); and io_elements / lower_bound (0 when the bound is 0).
  /// The paper prints min{} of the two terms, but the first is never below the second.
  double lower_bound_elements = 0;
  double ratio_to_lower_bound = 0;

  /// One line: "grid 2x2x1 (4 of 4 ranks), sequential 1x1, 3 rounds, ...". Throws nothing.
  std::string describe() const;
  /// The schedule as a JSON object (the statistics mode's output). Throws nothing.
  std::string to_json() const;
};

/// The schedule for C (m x n) = op(A) (m x k) * op(B) (k x n) on `ranks` ranks. Throws invalid_argument for
/// negative sizes, ranks < 1, a negative limit or idle fraction outside [0, 1); insufficient_memory (saying
/// how much memory per rank the smallest feasible schedule needs) when no schedule fits S. A grid never cuts a
/// dimension into more parts than it has elements (a zero size is valid and never cut), so a problem smaller
/// than the idle allowance permits uses fewer ranks.
/// @throws invalid_argument m, n or k negative, ranks < 1, a negative memory_limit_elements or rounds, or a
///   max_idle_fraction outside [0, 1)
/// @throws insufficient_memory no schedule fits memory_limit_elements (the message says the least that would)
/// @throws overflow_error the chosen schedule's counts exceed 2^63-1 elements per rank
gemm_schedule plan_gemm_schedule(std::int64_t m, std::int64_t n, std::int64_t k, int ranks,
                                 const gemm_schedule_options& options = {});

/// Elements a rank holds for a given grid and sequential steps (what memory_elements reports).
/// @throws invalid_argument m, n or k negative, or a grid size, sequential part or rounds below 1
std::int64_t gemm_memory_elements(std::int64_t m, std::int64_t n, std::int64_t k, int grid_m, int grid_n, int grid_k,
                                  int sequential_m, int sequential_n, std::int64_t rounds, bool double_buffering);

/// Eq. 33 of the paper for P ranks and memory S elements (S <= 0: unlimited), as lower_bound_elements above.
/// @throws invalid_argument ranks < 1, or m, n or k negative
double gemm_lower_bound_elements(std::int64_t m, std::int64_t n, std::int64_t k, int ranks,
                                 std::int64_t memory_limit_elements);

}  // namespace redist
