#pragma once
// The state behind redist::transform_plan (internal; used by src/transform/*.cpp only).
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "../../mpi/checked.hpp"
#include "redist/torus/exchange.hpp"
#include "node_arena.hpp"
#include "node_buffer_registry.hpp"
#include "plan_data.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/transform/plan.hpp"

namespace redist {

// Wall-clock seconds since construction: the planning profile of plan_statistics.
class seconds_since {
 public:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct transform_plan::impl {
  mpi::comm_handle comm;
  int rank = 0;
  int nranks = 1;
  transform_options options;
  exchange_strategy strategy = exchange_strategy::point_to_point;
  bool alltoallv_wide = false;  // alltoallv without MPI-4 large counts: some rank's messages exceed int
  std::vector<job_description> jobs;
  std::vector<detail::job_plan> job_plans;

  std::vector<detail::tile> local_tiles;       // op(B) -> A on this rank, no buffer
  std::vector<detail::peer_message> sends;     // by peer rank
  std::vector<detail::peer_message> recvs;     // by peer rank
  std::vector<std::size_t> send_order;         // order in which sends are packed and posted
  std::int64_t send_bytes = 0, recv_bytes = 0;
  plan_statistics stats;

  // Message buffers, allocated once (on huge pages where they can be: src/memory/pages.hpp) and reused by
  // every execution (a plan is not meant to be executed by two threads at once).
  std::unique_ptr<std::byte, void (*)(void*)> send_buffer{nullptr, std::free}, recv_buffer{nullptr, std::free};

  // shared_memory strategy. Messages to and from node peers stream through a ring of `ring_slots` slots
  // in the sender's window segment, chunk by chunk: the receiver unpacks a chunk while it is still in
  // the cache, the sender refills the slot once it is read (counters, no barrier), and the window stays
  // small whatever the message sizes. A chunk is a run of whole pieces (tiles cut along their packing
  // order's outer dimension); sender and receiver cut their copies of a message identically.
  static constexpr std::int64_t ring_slots = 4;
  struct stream_chunk {
    std::size_t first_piece = 0, end_piece = 0;
  };
  struct message_stream {
    std::vector<detail::tile> pieces;  // byte_offset: from the start of the piece's chunk
    std::vector<stream_chunk> chunks;
    std::int64_t slot_bytes = 0;
    std::int64_t slots = 0;             // min(ring_slots, chunks): a short message needs no more
    std::byte* ring = nullptr;          // in the sender's segment
    std::int64_t* published = nullptr;  // chunks written, counted over all executions (sender's segment)
    std::int64_t* consumed = nullptr;   // chunks read, likewise (receiver's segment)
  };
  mpi::comm_handle node_comm;
  detail::arena_segment segment;  // this rank's segment, cut from the window of the caller's node (node_arena.hpp)
  MPI_Win window = MPI_WIN_NULL;  // that window (not owned)
  std::vector<char> send_on_node, recv_on_node;  // per sends[i] / recvs[i]: the peer shares this node
  std::vector<message_stream> send_streams;      // per sends[i] (empty for peers on other nodes)
  std::vector<message_stream> recv_streams;      // per recvs[i]
  std::vector<detail::tile> local_pieces;    // local tiles cut likewise: work between chunks
  mutable std::int64_t executions = 0;       // completed executions: the counters' base
  // Segment layout of every rank: a header of int64 words (per node rank d: where my ring for d starts or
  // -1, and how many chunks my message to d has; per job its op(B) storage strides (rs, cs; fixed at
  // planning); per job where its B is this execution (rank in its node_buffer's window, byte offset in
  // that segment; read by peers only for jobs agreed to be read directly)), then one cache line per node
  // rank for `published`, one per node rank for `consumed`, then the rings.
  std::byte* my_segment = nullptr;
  std::vector<const std::byte*> recv_segment;  // per recvs[i]: the sender's segment (nullptr off node)
  int node_size = 0;
  std::int64_t header_words() const { return 2 * node_size + 4 * static_cast<std::int64_t>(job_plans.size()); }
  std::size_t ring_offset_slot(int node_rank) const { return static_cast<std::size_t>(node_rank); }
  std::size_t chunk_count_slot(int node_rank) const { return static_cast<std::size_t>(node_size + node_rank); }
  std::size_t storage_slot(std::size_t job) const { return static_cast<std::size_t>(2 * node_size) + 2 * job; }
  std::size_t location_slot(std::size_t job) const {
    return static_cast<std::size_t>(2 * node_size) + 2 * job_plans.size() + 2 * job;
  }
  template <class Byte>
  static Byte* header_slot(Byte* segment, std::size_t word) {
    return segment + word * sizeof(std::int64_t);
  }
  static constexpr std::int64_t cache_line = 64;
  std::int64_t counters_offset() const { return (header_words() * 8 + cache_line - 1) / cache_line * cache_line; }
  std::int64_t* published_counter(std::byte* segment, int to_node_rank) const {
    return reinterpret_cast<std::int64_t*>(segment + counters_offset() + to_node_rank * cache_line);
  }
  std::int64_t* consumed_counter(std::byte* segment, int from_node_rank) const {
    return reinterpret_cast<std::int64_t*>(segment + counters_offset() + (node_size + from_node_rank) * cache_line);
  }

  // torus_routed: the rounds of the multi-phase transpose schedule, routed on the torus, and per round the
  // index in sends (recvs) of the message it carries (no_message: none, e.g. the round this rank keeps).
  torus::routed_phases_plan torus_rounds;
  static constexpr std::size_t no_message = ~std::size_t(0);
  std::vector<std::size_t> round_send, round_recv;
  void setup_torus_rounds();

  // options.stores resolved for this rank: for messages this rank packs, and for its A.
  kernels::store_hint pack_stores = kernels::store_hint::cached;
  kernels::store_hint result_stores = kernels::store_hint::cached;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl();

  // Chooses the strategy (collective when automatic) and allocates buffers / the shared window, then
  // resolves the store policy (collective when automatic). caller: the communicator make_plan was given (its
  // node communicator is split once and cached on it: mpi::node_duplicate).
  void setup_exchange(MPI_Comm caller);
  void setup_streams(MPI_Comm caller, const std::vector<int>& node_ranks);
  void choose_stores();
  // caller_problem: what the caller found wrong on this rank (empty: nothing), agreed with the buffers' checks.
  void execute(const std::vector<job_buffers>& buffers, const std::string& caller_problem = {}) const;

  // shared_memory: publishes where this rank's B of each job is (window header) and returns the values
  // to reduce (minimum) over the ranks to decide which jobs read node peers' B directly from a
  // node_buffer; null buffers: none. Then, per such job, where a node peer's B is and how it is stored.
  std::vector<std::uint64_t> publish_sources(const std::vector<job_buffers>* buffers,
                                             std::vector<detail::node_segment>& my_b_segment) const;
  // shared_memory: the node part of an execution: streams chunks to and from node peers and runs the
  // local pieces, calling poll_off_node (true when it unpacked a message) while it waits.
  void stream_on_node(const std::vector<job_buffers>& buffers, const std::vector<char>& direct,
                      const std::vector<detail::node_segment>& my_b_segment,
                      const std::function<bool()>& poll_off_node) const;
  void locate_peer_sources(const std::byte* peer_segment_base, const std::vector<char>& direct,
                           const std::vector<detail::node_segment>& my_b_segment, std::vector<const void*>& peer_b,
                           std::vector<detail::storage_view>& peer_view) const;
};

}  // namespace redist
