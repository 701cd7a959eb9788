// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Persistent neighborhood alltoallv with locality-aware aggregation (docs/exchange.md).
// A plan is built collectively over a communicator, bound to the caller's buffers, and then run any number
// of times with start()/wait(); the buffers' contents may change between runs, their addresses may not.
#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "redist/cost_model.hpp"
#include "redist/statistics.hpp"
#include "redist/types.hpp"

namespace redist::exchange {

enum class neighbor_strategy {
  automatic,  ///< the candidate with the least predicted time under the cost model (docs/exchange.md)
  standard,   ///< persistent point-to-point, one message per neighbor
  aggregate,  ///< gather within the region, one message per region pair, scatter within the region
  dedup,      ///< aggregate, each (source rank, global id) crossing a region pair once: needs global ids
};
const char* to_string(neighbor_strategy s) noexcept;  ///< "?" for a value outside the enum

/// The figures behind automatic: the one cost model type (redist/cost_model.hpp).
using redist::cost_model;

/// How ranks are grouped into regions (the unit of locality). The first that is set wins:
/// region_id (every rank passes its own; equal ids share a region), region_size (consecutive blocks of that
/// many ranks, the last one possibly shorter), else the node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).
/// Every rank must choose the same way.
struct exchange_options {
  neighbor_strategy strategy = neighbor_strategy::automatic;
  int region_size = 0;
  std::optional<int> region_id;
  /// The figures behind automatic. Unset: measured once per process for each set of ranks and regions
  /// (calibrate_cost_model) and remembered. Every rank must pass the same figures.
  std::optional<cost_model> model;
  /// Seconds after which a wait inside this plan (its making and its executions) is reported, in place of the
  /// process's timeout (REDIST_TIMEOUT, set_timeout); REDIST_TIMEOUT_ACTION still says what follows (docs/errors.md).
  /// Negative or NaN: the process's; 0: never. Each rank's own: it need not be the same on all ranks.
  double timeout_seconds = -1;
};

/// Collective: measures the cost model's figures with ping-pongs inside and between the regions that
/// `regions` defines on comm (a few milliseconds), concurrently on all ranks, so the figures include
/// contention; the result is the same on every rank.
/// @pre collective: every rank of comm calls it and chooses its region the same way (region_id, region_size or
///   the node)
/// The messages travel on the library's private duplicate of comm, never on comm itself.
/// @throws invalid_argument a negative region_size on some rank (on every rank)
/// @throws inconsistent_ranks ranks chose their regions differently, or passed different region sizes
/// @throws mpi_error an MPI call failed
cost_model calibrate_cost_model(MPI_Comm comm, const exchange_options& regions = {});

struct strategy_estimate {
  neighbor_strategy strategy = neighbor_strategy::standard;
  double seconds = 0;  ///< predicted time of one start()/wait() cycle (the slowest rank)
};

/// Per rank, what one start()/wait() cycle moves, in the vocabulary of redist/statistics.hpp (bytes_sent, ...:
/// every message of the chosen strategy, the gathers and scatters inside a region included); copies from a rank
/// to itself are bytes_local, not messages.
struct exchange_statistics : traffic_statistics {
  neighbor_strategy strategy = neighbor_strategy::standard;  ///< the one used (never automatic)
  std::string reason;                                        ///< one line: why that strategy
  int regions = 0;                                           ///< number of regions of the communicator
  /// The messages sent, by locality: to ranks of another region, to other ranks of this rank's region.
  std::int64_t inter_region_messages = 0;
  std::int64_t inter_region_bytes = 0;
  std::int64_t intra_region_messages = 0;
  std::int64_t intra_region_bytes = 0;
  std::vector<strategy_estimate> estimates;  ///< automatic only: every candidate's predicted time
};

/// Counts or displacements, one per edge: MPI's int form (MPI_Neighbor_alltoallv) or the 64-bit form of MPI-4's
/// large-count calls (MPI_Neighbor_alltoallv_c), read through one interface. Not owning.
class edge_array {
 public:
  edge_array() = default;
  /// No array (a null pointer). Throws nothing.
  edge_array(std::nullptr_t) {}
  /// MPI's int form. Throws nothing.
  edge_array(const int* values) : narrow_(values) {}  // NOLINT: implicit, as the pointer it stands for
  /// The 64-bit form. Throws nothing.
  edge_array(const std::int64_t* values) : wide_(values) {}  // NOLINT
  /// Entry i, widened to 64 bits. Throws nothing.
  /// @pre !empty() and i inside the array the pointer stands for
  std::int64_t operator[](std::size_t i) const { return wide_ ? wide_[i] : narrow_[i]; }
  bool empty() const noexcept { return narrow_ == nullptr && wide_ == nullptr; }  ///< no array (null pointer)

 private:
  const int* narrow_ = nullptr;
  const std::int64_t* wide_ = nullptr;
};

/// MPI_Neighbor_alltoallv's buffer arguments: edge i of the send (receive) side moves counts[i] elements of
/// the datatype starting at buf + displs[i] * extent(datatype). Counts and displacements are copied; the
/// buffers must stay valid while the plan lives. Capacities (in elements of the datatype's extent) enable
/// bounds checks; -1 means unknown.
struct neighbor_buffers {
  const void* sendbuf = nullptr;
  edge_array sendcounts;  ///< int or 64-bit counts and displacements (edge_array)
  edge_array sdispls;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  void* recvbuf = nullptr;
  edge_array recvcounts;
  edge_array rdispls;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  std::int64_t send_capacity = -1;
  std::int64_t recv_capacity = -1;
  /// Lengths of the counts and displacement arrays when known (-1: unknown, -2: the lengths disagree),
  /// checked against the outdegree (send) and indegree (receive).
  std::int64_t send_entries = -1;
  std::int64_t recv_entries = -1;
  /// Global ids (the _ext entry point; needed by dedup): the element at displacement d of the send (receive)
  /// buffer, d = displs[i] + k for the k-th element of edge i, carries id send_ids[d] (recv_ids[d]). A
  /// receive element's id must be the id of the send element that the plain exchange delivers there, and
  /// elements of one source with equal ids must hold equal values (it sends one of them). Lengths -1: unknown.
  bool global_ids = false;
  const std::int64_t* send_ids = nullptr;
  const std::int64_t* recv_ids = nullptr;
  std::int64_t send_ids_size = -1;
  std::int64_t recv_ids_size = -1;
};

/// buffers with global ids attached (sizes checked); the vectors must outlive the plan's construction.
/// Throws nothing (the ids are checked when the plan is made).
inline neighbor_buffers with_global_ids(neighbor_buffers buffers, const std::vector<std::int64_t>& send_ids,
                                        const std::vector<std::int64_t>& recv_ids) {
  buffers.global_ids = true;
  buffers.send_ids = send_ids.data();
  buffers.recv_ids = recv_ids.data();
  buffers.send_ids_size = static_cast<std::int64_t>(send_ids.size());
  buffers.recv_ids_size = static_cast<std::int64_t>(recv_ids.size());
  return buffers;
}

namespace detail {
struct plan_state;
}

class neighbor_plan {
 public:
  neighbor_plan();  ///< empty: valid() is false. Throws nothing.
  /// make_neighbor_plan, neighbor_alltoallv_init. Throws nothing.
  explicit neighbor_plan(std::unique_ptr<detail::plan_state> state);
  neighbor_plan(neighbor_plan&&) noexcept;
  neighbor_plan& operator=(neighbor_plan&&) noexcept;
  ~neighbor_plan();

  /// Starts one exchange; the send buffer must not change until wait() returns. Collective in the sense of
  /// MPI_Start on a persistent collective: every rank of the communicator calls start() then wait().
  /// @pre every rank of the plan's communicator calls it; the previous exchange was waited for; the bound buffers
  ///   are still valid
  /// @throws invalid_argument an empty plan, or an exchange started and not waited for (this rank only)
  /// @throws mpi_error an MPI call failed
  void start();
  /// Completes the exchange started last: the receive buffer then holds the data.
  /// @pre start() returned on this rank and no wait() followed it
  /// @throws invalid_argument an empty plan, or no exchange started (this rank only)
  /// @throws mpi_error an MPI call failed
  void wait();
  bool valid() const noexcept { return state_ != nullptr; }  ///< false for an empty (moved-from) plan
  /// One whole exchange: start() then wait().
  /// @pre as start()
  /// @throws invalid_argument as start()
  /// @throws mpi_error an MPI call failed
  void execute();
  /// True between start() and wait().
  bool active() const noexcept;
  /// This rank's figures: the strategy, why, and what one exchange moves.
  /// @throws invalid_argument an empty plan
  const exchange_statistics& statistics() const;
  /// The plan's own communicator (a duplicate of the one it was made on).
  /// @throws invalid_argument an empty plan
  MPI_Comm communicator() const;

 private:
  std::unique_ptr<detail::plan_state> state_;
};

/// What a neighborhood exchange moves: the buffers (bound at planning, their contents may change between
/// exchanges) and where the edges come from.
struct neighbor_description {
  neighbor_buffers buffers;
  /// true: the communicator is a distributed-graph communicator (MPI_Dist_graph_create_adjacent) whose sources and
  /// destinations are the receive and send edges, and the lists below stay empty; false: the lists are the edges.
  bool edges_of_graph_communicator = false;
  /// The ranks the receive (send) edges come from (go to), one entry per edge, in edge order (repeated ranks are
  /// separate edges); any communicator.
  std::vector<int> sources, destinations;
};

/// The plan of a neighborhood exchange, collective over comm: the same checks, agreement and strategy choice as
/// neighbor_alltoallv_init (its MPI-shaped aliases below).
/// @pre every rank passes the same edges_of_graph_communicator and options
/// @throws invalid_topology send and receive edges that do not match, or a graph communicator expected and absent
/// @throws invalid_count as neighbor_alltoallv_init (the lowest failing rank's error, on every rank)
/// @throws invalid_buffer as neighbor_alltoallv_init
/// @throws invalid_argument as neighbor_alltoallv_init, or edge lists passed with edges_of_graph_communicator
/// @throws inconsistent_ranks as neighbor_alltoallv_init
/// @throws invalid_datatype as neighbor_alltoallv_init
/// @throws overflow_error as neighbor_alltoallv_init
/// @throws insufficient_memory as neighbor_alltoallv_init
/// @throws mpi_error an MPI call failed
neighbor_plan make_neighbor_plan(MPI_Comm comm, const neighbor_description& description,
                                 const exchange_options& options = {});

/// Collective over graph_comm, a distributed-graph communicator (MPI_Dist_graph_create_adjacent): its sources
/// and destinations are the receive and send edges, as in MPI_Neighbor_alltoallv_init.
/// @pre collective: every rank of graph_comm calls it, with the same options (region_id's value and
///   timeout_seconds aside) and all with global ids or all without
/// @throws invalid_topology graph_comm is not a distributed-graph communicator, or as the light path below
/// @throws invalid_count as the light path below
/// @throws invalid_buffer as the light path below
/// @throws invalid_argument as the light path below
/// @throws inconsistent_ranks as the light path below
/// @throws invalid_datatype as the light path below
/// @throws overflow_error as the light path below
/// @throws insufficient_memory as the light path below
/// @throws mpi_error an MPI call failed
neighbor_plan neighbor_alltoallv_init(const neighbor_buffers& buffers, MPI_Comm graph_comm,
                                      const exchange_options& options = {});

/// The light path: no graph communicator. sources (destinations) are the ranks of comm that the receive
/// (send) edges come from (go to), one entry per edge, in edge order; an ordinary communicator suffices.
/// Every check is agreed: a problem on any rank throws the same error on every rank before anything moves.
/// @pre collective: every rank of comm calls it, with the same options (region_id's value and timeout_seconds
///   aside) and all with global ids or all without
/// @throws invalid_count counts or displacements null (with neighbors) or negative
/// @throws invalid_buffer a null buffer with data to move, an edge past its buffer's capacity, or receive areas that
///   overlap (contiguous types)
/// @throws invalid_datatype MPI_DATATYPE_NULL, or a strategy that combines regions requested with a datatype it
///   cannot take apart
/// @throws invalid_argument a neighbor outside comm, counts and displacements of the wrong length, a strategy or
///   option out of range, dedup without global ids, or more regions or repeated neighbors than MPI_TAG_UB allows
/// @throws invalid_topology send and receive edges that do not match (ranks, repetitions, bytes), or global ids
///   that are inconsistent
/// @throws inconsistent_ranks ranks passed different options, or some passed global ids and others not
/// @throws overflow_error an edge whose byte offsets overflow 64 bits
/// @throws insufficient_memory buffers of the plan could not be allocated
/// @throws mpi_error an MPI call failed
neighbor_plan neighbor_alltoallv_init(const std::vector<int>& sources, const std::vector<int>& destinations,
                                      const neighbor_buffers& buffers, MPI_Comm comm,
                                      const exchange_options& options = {});

/// The MPI datatype of an arithmetic element type (and std::complex of float / double, mapped as the engine's
/// element types are: redist::mpi_datatype). Throws nothing; another T does not compile.
template <class T>
MPI_Datatype mpi_datatype_of() {
  if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<T, signed char>)
    return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<T, unsigned char>)
    return MPI_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<T, short>)
    return MPI_SHORT;
  else if constexpr (std::is_same_v<T, unsigned short>)
    return MPI_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, unsigned>)
    return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<T, long>)
    return MPI_LONG;
  else if constexpr (std::is_same_v<T, unsigned long>)
    return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<T, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, unsigned long long>)
    return MPI_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, long double>)
    return MPI_LONG_DOUBLE;
  else if constexpr (std::is_same_v<T, bool>)
    return MPI_CXX_BOOL;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return mpi_datatype(element_type::c32);
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return mpi_datatype(element_type::c64);
  else
    static_assert(sizeof(T) == 0, "no MPI datatype for this element type: use neighbor_buffers");
}

/// Typed forms: counts and displacements in elements of T, as int (MPI's form) or std::int64_t (MPI-4's large-count
/// form: an edge may move more than 2^31-1 elements), bounds checked against the vectors' sizes. The vectors must not
/// be resized while the plan lives. Throws nothing (the plan checks the bounds).
template <class T, class Count>
neighbor_buffers typed_buffers(const std::vector<T>& send, const std::vector<Count>& sendcounts,
                               const std::vector<Count>& sdispls, std::vector<T>& recv,
                               const std::vector<Count>& recvcounts, const std::vector<Count>& rdispls) {
  static_assert(std::is_same_v<Count, int> || std::is_same_v<Count, std::int64_t>,
                "counts and displacements are int or std::int64_t");
  neighbor_buffers b;
  b.sendbuf = send.data();
  b.sendcounts = sendcounts.data();
  b.sdispls = sdispls.data();
  b.sendtype = mpi_datatype_of<T>();
  b.recvbuf = recv.data();
  b.recvcounts = recvcounts.data();
  b.rdispls = rdispls.data();
  b.recvtype = b.sendtype;
  b.send_capacity = static_cast<std::int64_t>(send.size());
  b.recv_capacity = static_cast<std::int64_t>(recv.size());
  b.send_entries = sendcounts.size() == sdispls.size() ? static_cast<std::int64_t>(sendcounts.size()) : -2;
  b.recv_entries = recvcounts.size() == rdispls.size() ? static_cast<std::int64_t>(recvcounts.size()) : -2;
  return b;
}

/// Graph communicator: sendcounts/sdispls must have the outdegree's length, recvcounts/rdispls the indegree's.
/// @pre as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws invalid_topology as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws invalid_count as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws invalid_buffer as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws invalid_argument as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws inconsistent_ranks as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws invalid_datatype as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws overflow_error as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws insufficient_memory as neighbor_alltoallv_init(buffers, graph_comm, options)
/// @throws mpi_error an MPI call failed
template <class T, class Count>
neighbor_plan neighbor_alltoallv_init(const std::vector<T>& send, const std::vector<Count>& sendcounts,
                                      const std::vector<Count>& sdispls, std::vector<T>& recv,
                                      const std::vector<Count>& recvcounts, const std::vector<Count>& rdispls,
                                      MPI_Comm graph_comm, const exchange_options& options = {}) {
  return neighbor_alltoallv_init(typed_buffers(send, sendcounts, sdispls, recv, recvcounts, rdispls), graph_comm,
                                 options);
}

/// Light path: one count and displacement per entry of destinations (sources).
/// @pre as neighbor_alltoallv_init(sources, destinations, buffers, comm, options)
/// @throws invalid_topology as the light-path neighbor_alltoallv_init
/// @throws invalid_count as the light-path neighbor_alltoallv_init
/// @throws invalid_buffer as the light-path neighbor_alltoallv_init
/// @throws invalid_argument as the light-path neighbor_alltoallv_init
/// @throws inconsistent_ranks as the light-path neighbor_alltoallv_init
/// @throws invalid_datatype as the light-path neighbor_alltoallv_init
/// @throws overflow_error as the light-path neighbor_alltoallv_init
/// @throws insufficient_memory as the light-path neighbor_alltoallv_init
/// @throws mpi_error an MPI call failed
template <class T, class Count>
neighbor_plan neighbor_alltoallv_init(const std::vector<int>& sources, const std::vector<int>& destinations,
                                      const std::vector<T>& send, const std::vector<Count>& sendcounts,
                                      const std::vector<Count>& sdispls, std::vector<T>& recv,
                                      const std::vector<Count>& recvcounts, const std::vector<Count>& rdispls,
                                      MPI_Comm comm, const exchange_options& options = {}) {
  return neighbor_alltoallv_init(sources, destinations,
                                 typed_buffers(send, sendcounts, sdispls, recv, recvcounts, rdispls), comm, options);
}

}  // namespace redist::exchange
