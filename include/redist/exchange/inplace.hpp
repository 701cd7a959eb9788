// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// In-place variable-size all-to-all with bounded extra memory (docs/inplace.md; Zhuang, Nakashima and
// Nagamochi, "A memory-efficient algorithm and its implementation of variable-size all-to-all communication").
//
// On entry rank i's buffer holds s(i,0) .. s(i,P-1) concatenated (sendcounts[j] = |s(i,j)| elements); on exit
// it holds s(0,i) .. s(P-1,i) concatenated, in that order, each s(j,i) in its original element order.
// Extra memory: O(P) words per rank plus one work buffer of options.work_bytes, never proportional to the data.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redist/statistics.hpp"

namespace redist::exchange {

enum class inplace_algorithm {
  automatic,  ///< chunked when it fits, else the cheaper of pairwise and bitonic by their byte counts
  chunked,    ///< every block goes straight to its owner once, streamed through the work buffer (needs room:
              ///< see docs/inplace.md; the symmetric case always fits)
  pairwise,   ///< the paper's asymmetric pairwise exchange (Section 3.3): any counts, 2P-3 rounds
  bitonic,    ///< the paper's bitonic-sort algorithm (Section 3.2), any P: needs every capacity >= the largest
              ///< send or receive total over the ranks
};
const char* to_string(inplace_algorithm a) noexcept;  ///< "?" for a value outside the enum

/// Every rank must pass the same options (checked: refused otherwise).
struct inplace_options {
  inplace_algorithm algorithm = inplace_algorithm::automatic;
  /// Bytes of the one work buffer (staging of streamed pieces and local rotations), 64 KiB .. 1 GiB.
  std::int64_t work_bytes = std::int64_t{4} << 20;
  /// pairwise's worst-case guard: when its forwarding would send more than this many times the bytes of the
  /// largest total (the paper's O(NP) cases), bitonic runs instead where it applies (the report says so).
  /// Infinity: pairwise always.
  double pairwise_guard = 4.0;
  /// Seconds after which a wait inside this plan (its making and its executions) is reported, in place of the
  /// process's timeout (REDIST_TIMEOUT, set_timeout); REDIST_TIMEOUT_ACTION still says what follows (docs/errors.md).
  /// Negative or NaN: the process's; 0: never. Each rank's own: it need not be the same on all ranks.
  double timeout_seconds = -1;
};

/// What a call did, the same algorithm on every rank; counters are this rank's, in the vocabulary of
/// redist/statistics.hpp: messages count pieces and block lists; bytes_local is every byte copied or rotated inside
/// the buffer, staging included.
struct inplace_report : traffic_statistics {
  inplace_algorithm algorithm = inplace_algorithm::automatic;
  std::string reason;                    ///< why this algorithm (automatic, fallbacks)
  std::vector<std::int64_t> recvcounts;  ///< what each rank sent here: the layout of the result
  std::int64_t received_elements = 0;    ///< their sum: the result's length
  std::int64_t work_bytes = 0;           ///< the work buffer it allocated
  std::int64_t metadata_bytes = 0;       ///< peak bookkeeping (count vectors, block lists), O(P)
};

/// Collective over comm. capacity >= max(sum of sendcounts, sum of received counts) elements of `type`;
/// recvcounts may be null (then they are computed) or must equal what the peers send. `type` may be any
/// committed datatype with lower bound 0 whose data lie within its extent; elements are moved as whole
/// extents. Bad input (negative counts, a capacity too small, recvcounts that do not match the senders, an
/// unsuitable type, an algorithm whose requirement fails) throws a subclass of redist::invalid_argument on every
/// rank before any data moves; options that differ between ranks throw redist::inconsistent_ranks.
/// @pre collective: every rank of comm calls it, with the same type and options (timeout_seconds aside)
/// @throws invalid_count sendcounts null or negative, recvcounts that do not match the senders, a capacity below
///   either total or whose bytes overflow 64 bits
/// @throws invalid_buffer buf null with a capacity > 0
/// @throws invalid_datatype MPI_DATATYPE_NULL, an uncommitted type, a lower bound other than 0, data outside the
///   extent, or ranks passing types of different extents or sizes
/// @throws invalid_argument options out of range (work_bytes, algorithm, pairwise_guard), or an algorithm requested
///   that does not fit the capacities (chunked, bitonic)
/// @throws inconsistent_ranks options (work_bytes, algorithm, pairwise_guard), each in range, that differ between
///   ranks
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_report alltoallv_inplace(void* buf, std::int64_t capacity, const std::int64_t* sendcounts,
                                 const std::int64_t* recvcounts, MPI_Datatype type, MPI_Comm comm,
                                 const inplace_options& options = {});

/// MPI_Alltoallv(MPI_IN_PLACE, ...) semantics: rank i's counts[j] elements at displacement displs[j] (in
/// extents of type) are replaced by the counts[j] elements rank j has at its displs[i]. MPI's rules are checked:
/// counts symmetric (rank i's counts[j] == rank j's counts[i]), non-negative, areas disjoint; bytes outside the
/// areas stay untouched. Each pair of blocks swaps in place through the work buffer.
/// @pre collective: every rank of comm calls it, with the same type
/// @throws invalid_count counts or displs null, a negative count or displacement, or counts that are not symmetric
/// @throws invalid_buffer buf null with blocks to exchange, or areas that overlap
/// @throws invalid_argument work_bytes outside [64 KiB, 1 GiB]
/// @throws invalid_datatype as alltoallv_inplace
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_report alltoallv_inplace_symmetric(void* buf, const int* counts, const int* displs, MPI_Datatype type,
                                           MPI_Comm comm, std::int64_t work_bytes = std::int64_t{4} << 20);

/// The fixed-size case: `count` elements to and from every rank, buf holding P*count.
/// @pre collective: every rank of comm calls it, with the same count, type and options (timeout_seconds aside)
/// @throws invalid_count a negative count, or P*count elements whose bytes overflow 64 bits
/// @throws invalid_buffer buf null with count > 0
/// @throws invalid_datatype as alltoallv_inplace
/// @throws invalid_argument as alltoallv_inplace
/// @throws inconsistent_ranks as alltoallv_inplace
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_report alltoall_inplace(void* buf, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                                const inplace_options& options = {});

// ---- Plans: check and agree once, execute many times -------------------------------------------------------
// The one-call forms above check everything with collectives on every call (an Alltoall of the counts, an
// Allgather, an Allreduce), choose the algorithm (pairwise's dry run included), and allocate the work buffer.
// A plan does all of that once; execute() then only moves data. The one-call forms are a plan and one execute.

namespace inplace_plan_detail {
struct state;  ///< src/exchange/inplace_plan.cpp
}

class inplace_plan {
 public:
  inplace_plan() noexcept;                                                            ///< empty: valid() is false
  explicit inplace_plan(std::unique_ptr<inplace_plan_detail::state> state) noexcept;  ///< make_inplace_plan*
  inplace_plan(inplace_plan&&) noexcept;
  inplace_plan& operator=(inplace_plan&&) noexcept;
  inplace_plan(const inplace_plan&) = delete;
  inplace_plan& operator=(const inplace_plan&) = delete;
  ~inplace_plan();

  /// Collective over the plan's communicator: every rank calls it with its buffer, which holds the data as the
  /// one-call form's buf (the plan's capacity in elements of its type). The pointer may differ from call to call
  /// and the contents change; the counts are the plan's. Nothing is re-checked collectively (that is the point
  /// of a plan), so misuse is this rank's alone: an empty (moved-from) plan throws redist::invalid_argument, a
  /// null buf with a capacity > 0 redist::invalid_buffer, here only and before any message (the other ranks'
  /// execute then waits, as with any mismatched MPI call). One thread at a time (the plan owns its work buffer).
  /// @pre every rank of the plan's communicator calls it; buf holds capacity() elements of the plan's type; no other
  ///   thread uses the plan meanwhile
  /// @throws invalid_argument an empty plan
  /// @throws invalid_buffer buf null with capacity() > 0
  /// @throws mpi_error an MPI call failed
  inplace_report execute(void* buf) const;

  /// The plan shape's split phase: the in-place algorithms step through rounds with a bounded work buffer, so
  /// start() runs the whole exchange (as execute()) and wait() only returns; both are local as execute() is: a
  /// second start() before wait(), or a wait() without a start(), throws redist::invalid_argument on this rank.
  /// @pre as execute(); no start() of this plan in progress
  /// @throws invalid_argument an empty plan, or a start() already in progress
  /// @throws invalid_buffer buf null with capacity() > 0
  /// @throws mpi_error an MPI call failed
  void start(void* buf) const;
  /// Ends the split phase start() began (the data is already in place).
  /// @pre a start() of this plan in progress
  /// @throws invalid_argument an empty plan, or no start() in progress
  void wait() const;
  bool in_progress() const noexcept;  ///< true between start() and wait()
  /// The report of this rank's latest execution (execute() or start()) with its counters; before the first,
  /// report().
  /// @throws invalid_argument an empty plan
  const inplace_report& statistics() const;
  /// The plan's communicator: the private duplicate it shares with the cache on the communicator it was made on.
  /// @throws invalid_argument an empty plan
  MPI_Comm communicator() const;

  bool valid() const noexcept { return state_ != nullptr; }  ///< false for an empty (moved-from) plan
  /// What execute() will do: algorithm, reason, recvcounts, received_elements, work_bytes. The traffic counters
  /// (bytes_*, messages_*, metadata_bytes) are per execution and zero here: each execute()'s report has them.
  /// Empty plan: redist::invalid_argument.
  /// @throws invalid_argument an empty plan
  const inplace_report& report() const;
  /// Elements of buf that execute() uses (symmetric plans: the areas' end).
  /// @throws invalid_argument an empty plan
  std::int64_t capacity() const;

 private:
  std::unique_ptr<inplace_plan_detail::state> state_;
};

/// Collective: the checks, the agreement (every rank throws the lowest failing rank's error, the same class as
/// alltoallv_inplace, before anything moves), the choice of algorithm, the count
/// exchanges its schedule needs, and the work buffer (allocated and faulted in here). Arguments as
/// alltoallv_inplace's, without the buffer; sendcounts and recvcounts are read during the call only. Executions
/// communicate on the private duplicate cached on comm, which the plan shares: comm may be freed before the plan.
/// @pre collective: every rank of comm calls it, with the same type and options (timeout_seconds aside)
/// @throws invalid_count as alltoallv_inplace
/// @throws invalid_datatype as alltoallv_inplace
/// @throws invalid_argument as alltoallv_inplace
/// @throws inconsistent_ranks as alltoallv_inplace
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_plan make_inplace_plan(MPI_Comm comm, std::int64_t capacity, const std::int64_t* sendcounts,
                               const std::int64_t* recvcounts, MPI_Datatype type, const inplace_options& options = {});

/// The fixed-size case: count elements to and from every rank (capacity P*count).
/// @pre collective: every rank of comm calls it, with the same count, type and options (timeout_seconds aside)
/// @throws invalid_count as alltoall_inplace
/// @throws invalid_datatype as alltoallv_inplace
/// @throws invalid_argument as alltoallv_inplace
/// @throws inconsistent_ranks as alltoallv_inplace
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_plan make_alltoall_inplace_plan(MPI_Comm comm, std::int64_t count, MPI_Datatype type,
                                        const inplace_options& options = {});

/// MPI_IN_PLACE semantics (alltoallv_inplace_symmetric): counts and displs read during the call only.
/// @pre collective: every rank of comm calls it, with the same type
/// @throws invalid_count as alltoallv_inplace_symmetric
/// @throws invalid_buffer as alltoallv_inplace_symmetric (overlapping areas)
/// @throws invalid_argument as alltoallv_inplace_symmetric
/// @throws invalid_datatype as alltoallv_inplace
/// @throws insufficient_memory the work buffer cannot be allocated
/// @throws mpi_error an MPI call failed
inplace_plan make_inplace_plan_symmetric(MPI_Comm comm, const int* counts, const int* displs, MPI_Datatype type,
                                         std::int64_t work_bytes = std::int64_t{4} << 20);

}  // namespace redist::exchange
