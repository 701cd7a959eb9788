// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Internals of the persistent neighborhood alltoallv (include/redist/exchange/neighbor.hpp): the edges and
// regions the setup learns, the strategies as classes (their constructors build, start()/wait() run), the
// one registry the setup chooses them through, and the cost model that automatic compares them with.
//
// Messages of the standard strategy and the fully local messages of the other strategies use the caller's
// datatypes directly (no copy). Aggregated data travels as bytes, so that segments of different edges can
// share one message whatever the datatypes: a segment holds the signature bytes of its edge, count *
// MPI_Type_size bytes, copied by MPI through the byte mirror of the rank's datatype (src/mpi/compat.hpp), not
// by MPI_Pack, whose format (and size: MPI_Pack_size is a bound) is the implementation's; dedup picks single
// elements, MPI_Type_size bytes each, out of such buffers.
//
// Tags, per ordered pair of ranks: 4 * k + phase, where phase 0 is a direct message (k: the edge's
// occurrence among the edges between the two ranks, so that repeated edges match in order), 1 the gather
// to a region's sender (k: the destination region), 2 the inter-region message, 3 the scatter from a
// region's receiver (k: the source region).
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "redist/exchange/neighbor.hpp"

namespace redist::exchange::detail {

enum phase_tag : int { direct_phase = 0, gather_phase = 1, global_phase = 2, scatter_phase = 3 };
inline int tag_of(std::int64_t k, phase_tag phase) { return static_cast<int>(4 * k + phase); }

// One edge of the caller's send or receive side.
struct edge {
  int peer = 0;
  std::int64_t count = 0;
  std::int64_t displacement = 0;  // in elements of the datatype's extent, as the caller gave it
  std::int64_t offset = 0;        // bytes from the buffer's start: displacement * extent
  std::int64_t bytes = 0;         // signature bytes: count * MPI_Type_size
  int occurrence = 0;             // how many earlier edges of this side have the same peer
};

// An edge's data at an offset of a staging buffer.
struct segment {
  int edge = 0;
  std::int64_t offset = 0;
};

struct datatype_info {
  std::int64_t size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};
datatype_info describe(MPI_Datatype t);

// Messages and bytes one rank sends and receives per cycle, by phase, locality and direction: the
// statistics and the cost model's input.
struct load {
  std::int64_t messages = 0, bytes = 0;
};
enum locality : int { intra = 0, inter = 1 };
enum direction : int { outbound = 0, inbound = 1 };
using load_table = std::array<std::array<std::array<load, 2>, 2>, 4>;  // [phase][locality][direction]

// ---- Edges and regions (neighbor_regions.cpp) ----

// Everything the setup learns before building requests.
struct layout_facts {
  int me = 0, nranks = 0;
  std::vector<int> region_of;             // per rank, dense ids numbered by their lowest rank
  std::vector<std::vector<int>> members;  // per region, ascending
  int max_region_size = 0;
  // The rank of region a that sends (receives) the message of the region pair (a, b): round-robin over
  // the region's ranks by the other region's id, so that a region's pairs spread over its ranks.
  int sender(int a, int b) const { return members[a][b % members[a].size()]; }
  int receiver(int b, int a) const { return members[b][a % members[b].size()]; }
};

// Fills `edges` from one side of the caller's arguments; returns the kind and text of the first problem found
// (kind none: fine), in the classes every entry point uses: counts and displacements null or negative
// invalid_count, a null buffer with data to move, an edge past the buffer's capacity or overlapping receive areas
// invalid_buffer, MPI_DATATYPE_NULL invalid_datatype, a neighbor outside the communicator or lists of the wrong
// length invalid_argument. Throws overflow_error for byte offsets past 64 bits.
std::pair<mpi::error_kind, std::string> check_side(const char* side, const char* counts_name,
                                                   const std::vector<int>& peers, const edge_array& counts,
                                                   const edge_array& displs, MPI_Datatype type, const void* buf,
                                                   std::int64_t capacity, std::int64_t entries, int nranks,
                                                   std::vector<edge>& edges, bool check_overlap);

// Collective: the regions that `options` defines on comm, the same on every rank. options_agreed: every rank is
// known to pass the same region options (neighbor plans agree on options_hash first), so that only region ids need
// gathering; otherwise every rank's choice is gathered and checked.
layout_facts find_regions(MPI_Comm comm, const exchange_options& options, bool options_agreed = false);

// Sends to[r] to every rank r; returns what each rank sent to this one. Collective; the messages travel on
// mpi::call_duplicate(comm), which the set-up's first agreement made. words_from: how many words each rank sends
// this one, where every rank knows that already (an agreed graph); null: found with an MPI_Alltoall of the counts.
std::vector<std::vector<std::int64_t>> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::int64_t>>& to,
                                                      const std::vector<std::int64_t>* words_from = nullptr);

// A record one rank sends about one of its send edges: the destination and the bytes.
constexpr int record_words = 2;

// Tells every destination its incoming edges (checked against its receive side) and every region pair's
// sender and receiver the edges they carry; returns the records each rank received, grouped by source.
std::vector<std::vector<std::int64_t>> exchange_records(MPI_Comm comm, const layout_facts& f,
                                                        const std::vector<edge>& sends);

// The receive edges of this rank from the ranks of one region carrying data, in (source, occurrence) order.
std::vector<int> receive_order(const std::vector<edge>& recvs, const layout_facts& f, int region);

// ---- Strategies (the base: neighbor_standard.cpp) ----

// The byte mirrors of a rank's send and receive datatypes (mpi::byte_mirror), shared by the candidates.
struct byte_types {
  mpi::datatype_handle send, recv;
};

// The validated description every strategy starts from; each candidate keeps its own copy.
struct plan_setup {
  MPI_Comm comm = MPI_COMM_NULL;  // the plan's duplicate: its messages never match the caller's
  const char* sendbuf = nullptr;
  char* recvbuf = nullptr;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  std::shared_ptr<const byte_types> mirrors;  // for the strategies that combine regions
  std::vector<edge> sends, recvs;
};

// Persistent requests, freed with the list (unless MPI is finalized: then they are gone already).
class request_list {
 public:
  request_list() = default;
  request_list(const request_list&) = delete;
  request_list& operator=(const request_list&) = delete;
  ~request_list();
  void push_back(MPI_Request r) { requests_.push_back(r); }
  void start_all();
  void wait_all(MPI_Comm comm = MPI_COMM_NULL);  // comm: the requests' (answers roll calls on it), if known

 private:
  std::vector<MPI_Request> requests_;
};

// One strategy's plan. The constructor does the plan-time work (buffers, datatypes, persistent requests:
// local, no messages); start() and wait() run one exchange and move data only. The base holds what every
// strategy has: the setup, the per-cycle load (statistics, cost model), the direct messages and the copies
// to self.
struct strategy : plan_setup {
  load_table loads{};
  std::int64_t copied_bytes = 0;                  // packed plus unpacked bytes per cycle
  std::vector<mpi::datatype_handle> owned_types;  // also those built for the requests' large counts
  request_list direct;                            // declared after owned_types: freed before the types they use
  std::vector<std::pair<int, int>> self_copies;   // (send edge, receive edge)

  explicit strategy(const plan_setup& setup) : plan_setup(setup) {}
  strategy(const strategy&) = delete;
  strategy& operator=(const strategy&) = delete;
  virtual ~strategy() = default;

  virtual void start() = 0;
  virtual void wait() = 0;

 protected:
  // Persistent requests on the plan's communicator (a datatype built for a large count is kept).
  MPI_Request send_init(const void* buf, std::int64_t count, MPI_Datatype type, int dest, int tag);
  MPI_Request recv_init(void* buf, std::int64_t count, MPI_Datatype type, int source, int tag);
  void record(phase_tag phase, locality where, direction way, std::int64_t bytes);
  MPI_Datatype keep(mpi::datatype_handle t);  // a committed datatype the plan keeps
  // Direct messages for every edge with data, or only those within this rank's region (self edges become
  // local copies).
  void build_direct(const layout_facts& f, bool own_region_only);
  void copy_to_self() const;
};

// The schedule of the strategies that combine regions (aggregate and dedup; neighbor_aggregate.cpp): gather
// to the region's senders, one message per region pair, scatter from the receivers. They differ in their
// buffers and in how data gets in and out of them: the hooks.
struct staged : strategy {
  request_list gather, global_sends, global_recvs, scatter_sends, scatter_recvs;

  using strategy::strategy;
  void start() final;
  void wait() final;

 protected:
  virtual void pack_sends() = 0;             // this rank's data into its gather and pair buffers
  virtual void unpack_own() = 0;             // as a pair's receiver: this rank's own part of the pair messages
  virtual void unpack_incoming() const = 0;  // what the region's receivers scattered to this rank
};

// What a strategy's preparation sees. Preparation is collective on comm (the caller's): every rank prepares
// the same strategies in registry order, and agrees on its problems there.
struct strategy_context {
  MPI_Comm comm;
  const layout_facts& regions;
  const plan_setup& setup;  // validated; the plan's communicator is set later, before the builds
  const neighbor_buffers& buffers;
  const std::vector<std::vector<std::int64_t>>& records;  // exchange_records' result
};

// The local build a preparation returns, run by the setup inside an agreement while the context lives.
using strategy_builder = std::function<std::unique_ptr<strategy>(const plan_setup&)>;

strategy_builder prepare_standard(const strategy_context& c);   // neighbor_standard.cpp
strategy_builder prepare_aggregate(const strategy_context& c);  // neighbor_aggregate.cpp
strategy_builder prepare_dedup(const strategy_context& c);      // neighbor_dedup.cpp

// Collective (the _ext entry point, every strategy, before one is chosen): whether the global ids fit the edges
// (arrays present and long enough, send and receive types of one size) and every receive edge's ids are those
// its sender gives (a hash of each edge's ids to its destination). Returns the first problem (empty: none). Only
// after the edges were agreed (every rank's receive edges from each source match that source's send edges to it).
std::string check_global_ids(MPI_Comm comm, const plan_setup& p, const neighbor_buffers& b, int nranks);

// ---- The registry: every strategy, in automatic's order of candidates (ties go to the first) ----
struct strategy_entry {
  neighbor_strategy id;   // the value of exchange_options::strategy that requests it
  bool combines_regions;  // copies through byte mirrors; a candidate only where regions hold several ranks
  bool needs_global_ids;
  strategy_builder (*prepare)(const strategy_context&);
};
inline constexpr strategy_entry strategy_registry[] = {
    {neighbor_strategy::standard, false, false, &prepare_standard},
    {neighbor_strategy::aggregate, true, false, &prepare_aggregate},
    {neighbor_strategy::dedup, true, true, &prepare_dedup},
};

// What neighbor_plan holds: the chosen strategy and its statistics.
struct plan_state {
  mpi::comm_handle owned_comm;  // the plan's communicator, declared first: freed after the requests on it
  exchange_statistics stats;
  std::unique_ptr<strategy> chosen;
  bool active = false;
  std::chrono::steady_clock::time_point started;  // the last start(), when tracing is on
  double timeout_seconds = -1;                    // exchange_options::timeout_seconds

  void start();
  void wait();
};

// ---- Cost model (neighbor_cost.cpp) ----

// Collective: the predicted time of every candidate, the same on every rank.
std::vector<double> predict(const std::vector<std::unique_ptr<strategy>>& candidates, const layout_facts& f,
                            const cost_model& m, MPI_Comm comm);

// Collective: the figures measured once per set of processes and regions, remembered.
cost_model remembered_calibration(MPI_Comm comm, const layout_facts& f);

}  // namespace redist::exchange::detail
