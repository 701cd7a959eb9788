// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Permutation exchanges over MPI routed on a described torus (Chakaravarthy, Jain and Sabharwal, Section
// 4.4): every rank sends one message to one other rank; pairs that route_permutation gives an intermediate
// node go through the rank on that node, cut into chunks that the intermediate forwards as they arrive
// (chunk based exchange), through a few staging slots, never the whole message.
//
// Plans are built collectively and are immutable; executing one needs only the buffers and is repeatable.
// A plan may be executed by one thread at a time (it owns the intermediate's staging slots).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "redist/statistics.hpp"
#include "redist/torus/routing.hpp"
#include "redist/torus/topology.hpp"

namespace redist::torus {

/// A torus described to the library: the network and the node each rank of the communicator runs on. The
/// communicator's size must be network.nodes().
struct machine {
  topology network;
  rank_mapping mapping;
};

/// Routed messages are cut into options.beta chunks, but no chunk is smaller than this: below a few KiB a
/// chunk's per-message software cost (microseconds) exceeds its transfer time, so finer pipelining only
/// slows the intermediate down. A message of at most this size travels as one chunk.
constexpr std::int64_t min_chunk_bytes = 4096;
/// Bytes per chunk of a routed message of `message_bytes` bytes: max(ceil(message_bytes / beta),
/// min_chunk_bytes), never more than the message (0 for an empty message).
/// @throws invalid_argument message_bytes below 0 or beta below 1
std::int64_t chunk_bytes(std::int64_t message_bytes, std::int64_t beta);
/// Staging slots (of one chunk each) an intermediate keeps per pair it forwards.
constexpr int relay_slots = 4;

namespace detail {
struct routed_exchange;
}
class routed_permutation_plan;
class routed_phases_plan;
routed_permutation_plan make_routed_permutation_plan(MPI_Comm comm, const machine& m, int destination_rank,
                                                     std::int64_t send_bytes, const routing_options& options);
routed_phases_plan make_routed_phases_plan(MPI_Comm comm, const machine& m, const std::vector<int>& destination_rank,
                                           const std::vector<std::int64_t>& send_bytes, const routing_options& options);

class routed_permutation_plan {
 public:
  /// An empty plan: every member but the destructor and the moves throws invalid_argument on it (build a plan with
  /// make_routed_permutation_plan). Throws nothing.
  routed_permutation_plan();
  ~routed_permutation_plan();
  routed_permutation_plan(routed_permutation_plan&&) noexcept;
  routed_permutation_plan& operator=(routed_permutation_plan&&) noexcept;
  routed_permutation_plan(const routed_permutation_plan&) = delete;
  routed_permutation_plan& operator=(const routed_permutation_plan&) = delete;

  /// Collective over the plan's communicator. recv: room for receive_bytes() bytes from source(); send:
  /// send_bytes() bytes for destination() (outputs first, as every plan's execute). A rank whose destination is itself copies send to recv (no
  /// message). Null buffers with bytes to move are rejected on every rank (redist::invalid_argument,
  /// agreed with one allreduce) before anything moves.
  /// @pre collective: every rank of the plan's communicator calls it, one thread at a time per plan
  /// @throws invalid_argument the plan is empty (on this rank only: call it on made plans), or a null buffer with
  /// bytes to move on some rank (on every rank)
  /// @throws mpi_error an MPI call failed
  void execute(void* recv, const void* send) const;

  /// The routes of the whole permutation, by node (as route_permutation returned them).
  /// @throws invalid_argument the plan is empty (the same for every accessor below)
  const routed_permutation& routes() const;
  int destination() const;             ///< the rank this rank sends to. @throws invalid_argument an empty plan
  int source() const;                  ///< the rank this rank receives from. @throws invalid_argument an empty plan
  std::int64_t send_bytes() const;     ///< bytes this rank sends. @throws invalid_argument an empty plan
  std::int64_t receive_bytes() const;  ///< bytes this rank receives. @throws invalid_argument an empty plan
  /// The rank this rank's message goes through first (-1: directly, or no message).
  /// @throws invalid_argument an empty plan
  int send_via() const;
  /// Bytes per chunk of this rank's message: chunk_bytes(send_bytes(), beta) when it is routed, its whole
  /// size when it goes directly (0: no message).
  /// @throws invalid_argument an empty plan
  std::int64_t send_chunk_bytes() const;
  /// Pairs (other ranks' messages) this rank forwards as an intermediate.
  /// @throws invalid_argument an empty plan
  std::int64_t forwarded_pairs() const;
  /// Their bytes.
  /// @throws invalid_argument an empty plan
  std::int64_t forwarded_bytes() const;
  /// What one execute() moves at this rank (redist/statistics.hpp): its own message and the pairs it forwards;
  /// a leg of a message counts as one message however many chunks pipeline it; a message to itself is
  /// bytes_local.
  /// @throws invalid_argument an empty plan
  traffic_statistics statistics() const;
  /// Owned by the plan (shared with the other phases of a routed_phases_plan).
  /// @throws invalid_argument an empty plan
  MPI_Comm communicator() const;

 private:
  explicit routed_permutation_plan(std::unique_ptr<detail::routed_exchange> state);
  std::unique_ptr<detail::routed_exchange> state_;
  friend class routed_phases_plan;
  friend routed_permutation_plan make_routed_permutation_plan(MPI_Comm, const machine&, int, std::int64_t,
                                                              const routing_options&);
  friend routed_phases_plan make_routed_phases_plan(MPI_Comm, const machine&, const std::vector<int>&,
                                                    const std::vector<std::int64_t>&, const routing_options&);
};

/// Collective over comm: this rank sends send_bytes bytes to destination_rank (itself: no message). The
/// destinations are allgathered (O(P) integers per rank) and must form a permutation of the ranks; every
/// rank then routes the permutation on m.network with route_permutation (deterministic, so all ranks get the
/// same routes) and keeps what it sends, receives and forwards. routing_mode::automatic simulates with the
/// largest message of the permutation as time_model::message_bytes. Argument errors (invalid_argument,
/// inconsistent_ranks) are thrown on every rank, before anything moves. The plan owns a duplicate of comm.
/// @pre collective: every rank of comm calls it with the same machine and options (its own destination_rank and
/// send_bytes)
/// @throws invalid_argument comm's size or the rank mapping's ranks is not m.network.nodes(), destination_rank is
/// outside comm, send_bytes is negative, the destinations form no permutation, or the options are invalid
/// (validate(options), route_permutation)
/// @throws inconsistent_ranks ranks describe different machines or routing options
/// @throws insufficient_memory the plan's staging buffer or routes could not be allocated
/// @throws mpi_error an MPI call failed (duplicating comm, the allgather, the agreements)
routed_permutation_plan make_routed_permutation_plan(MPI_Comm comm, const machine& m, int destination_rank,
                                                     std::int64_t send_bytes, const routing_options& options);

/// A sequence of routed permutations (e.g. the phases of multiphase_transpose_schedule): phase k sends buffer k.
/// routing_options::phases says how they run: one after another (sequential; their messages cannot mix, a phase
/// ending on every rank only after all its messages arrived and MPI delivering messages between two ranks in
/// order), or all at once in one progress loop (concurrent; each phase's messages on tags of their own, each its
/// own staging slots). The phases share one duplicate of the communicator.
class routed_phases_plan {
 public:
  /// A plan of no phases (its execute() does nothing). Throws nothing.
  routed_phases_plan();
  ~routed_phases_plan();
  routed_phases_plan(routed_phases_plan&&) noexcept;
  routed_phases_plan& operator=(routed_phases_plan&&) noexcept;
  routed_phases_plan(const routed_phases_plan&) = delete;
  routed_phases_plan& operator=(const routed_phases_plan&) = delete;

  /// Collective. recv[k] / send[k]: phase k's buffers (as routed_permutation_plan::execute). after_phase, when
  /// given, is called with k once phase k's data is in recv[k] (to consume it before the next phase; with
  /// concurrent phases, for each k in order once all have arrived). Buffers are checked once for all phases (one
  /// allreduce).
  /// @pre collective: every rank of the plan's communicator calls it, one thread at a time per plan
  /// @pre after_phase returns normally: an exception from it leaves its rank alone, the others waiting in the
  /// next phase
  /// @throws invalid_argument send or recv does not hold one buffer per phase, or a null buffer with bytes to move,
  /// on some rank (on every rank, before anything moves)
  /// @throws mpi_error an MPI call failed
  void execute(const std::vector<void*>& recv, const std::vector<const void*>& send,
               const std::function<void(int)>& after_phase = {}) const;

  int phases() const noexcept { return static_cast<int>(phases_.size()); }
  /// Phase k's plan. Throws std::out_of_range (no redist::error) for k outside 0 to phases() - 1.
  /// @throws std::out_of_range k outside 0 to phases() - 1
  const routed_permutation_plan& phase(int k) const { return phases_.at(static_cast<std::size_t>(k)); }

 private:
  std::vector<routed_permutation_plan> phases_;
  phase_schedule schedule_ = phase_schedule::sequential;
  friend routed_phases_plan make_routed_phases_plan(MPI_Comm, const machine&, const std::vector<int>&,
                                                    const std::vector<std::int64_t>&, const routing_options&);
};

/// Collective over comm: phase k is the permutation destination_rank[k] with send_bytes[k] bytes from this
/// rank (both vectors as long as the number of phases, the same on every rank). One allgather for all
/// phases; errors as make_routed_permutation_plan, naming the phase.
/// @pre collective: every rank of comm calls it with the same machine, options and number of phases
/// @throws invalid_argument as make_routed_permutation_plan in any phase, destination_rank and send_bytes of different
/// lengths, or phase_schedule::concurrent with more phases than the MPI tags allow
/// @throws inconsistent_ranks ranks pass different numbers of phases, machines or routing options
/// @throws insufficient_memory the plan's staging buffer or routes could not be allocated
/// @throws mpi_error an MPI call failed
routed_phases_plan make_routed_phases_plan(MPI_Comm comm, const machine& m, const std::vector<int>& destination_rank,
                                           const std::vector<std::int64_t>& send_bytes, const routing_options& options);

}  // namespace redist::torus
