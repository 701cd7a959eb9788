#pragma once
// The state behind redist::transform_plan (internal; used by src/transform/*.cpp only).
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "redist/mpi/checked.hpp"
#include "redist/transform/detail/node_buffer_registry.hpp"
#include "redist/transform/detail/plan_data.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/transform/plan.hpp"

namespace redist {

struct transform_plan::impl {
  mpi::comm_handle comm;
  int rank = 0;
  int nranks = 1;
  transform_options options;
  exchange_strategy strategy = exchange_strategy::point_to_point;
  std::vector<job_description> jobs;
  std::vector<detail::job_plan> job_plans;

  std::vector<detail::tile> local_tiles;       // op(B) -> A on this rank, no buffer
  std::vector<detail::peer_message> sends;     // by peer rank
  std::vector<detail::peer_message> recvs;     // by peer rank
  std::vector<std::size_t> send_order;         // order in which sends are packed and posted
  std::int64_t send_bytes = 0, recv_bytes = 0;
  plan_statistics stats;

  // Message buffers, allocated once and reused by every execution (a plan is not meant to be executed
  // by two threads at once).
  std::unique_ptr<std::byte[]> send_buffer, recv_buffer;

  // shared_memory strategy: this rank's window segment and, per message, where node-local peers'
  // data is read from / this rank's data is written to (nullptr for peers on other nodes).
  mpi::comm_handle node_comm;
  MPI_Win window = MPI_WIN_NULL;
  std::vector<std::byte*> send_shared;   // per sends[i]
  std::vector<const std::byte*> recv_shared;  // per recvs[i]
  // Segment header of every rank: node_size message offsets, then per job its op(B) storage strides
  // (rs, cs; fixed at planning), then per job where its B is this execution (rank in its node_buffer's
  // window, byte offset in that segment; read by peers only for jobs agreed to be read directly).
  std::byte* my_segment = nullptr;
  std::vector<const std::byte*> recv_segment;  // per recvs[i]: the sender's segment (nullptr off node)
  int node_size = 0;
  std::int64_t header_words() const { return node_size + 4 * static_cast<std::int64_t>(job_plans.size()); }
  std::size_t storage_slot(std::size_t job) const { return static_cast<std::size_t>(node_size) + 2 * job; }
  std::size_t location_slot(std::size_t job) const {
    return static_cast<std::size_t>(node_size) + 2 * job_plans.size() + 2 * job;
  }
  template <class Byte>
  static Byte* header_slot(Byte* segment, std::size_t word) {
    return segment + word * sizeof(std::int64_t);
  }

  kernels::store_hint stores = kernels::store_hint::cached;  // options.stores resolved for this rank

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl();

  // Chooses the strategy (collective when automatic) and allocates buffers / the shared window, then
  // resolves the store policy (collective when automatic).
  void setup_exchange();
  void choose_stores();
  void execute(const std::vector<job_buffers>& buffers) const;

  // shared_memory: publishes where this rank's B of each job is (window header) and returns the values
  // to reduce (minimum) over the ranks to decide which jobs read node peers' B directly from a
  // node_buffer; null buffers: none. Then, per such job, where a node peer's B is and how it is stored.
  std::vector<std::uint64_t> publish_sources(const std::vector<job_buffers>* buffers,
                                             std::vector<detail::node_segment>& my_b_segment) const;
  void locate_peer_sources(const std::byte* peer_segment_base, const std::vector<char>& direct,
                           const std::vector<detail::node_segment>& my_b_segment, std::vector<const void*>& peer_b,
                           std::vector<detail::storage_view>& peer_view) const;
};

}  // namespace redist
