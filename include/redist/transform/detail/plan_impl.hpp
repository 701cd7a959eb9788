#pragma once
// The state behind redist::transform_plan (internal; used by src/transform/*.cpp only).
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "redist/mpi/checked.hpp"
#include "redist/transform/detail/plan_data.hpp"
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

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl();

  // Chooses the strategy (collective when automatic) and allocates buffers / the shared window.
  void setup_exchange();
  void execute(const std::vector<job_buffers>& buffers) const;
};

}  // namespace redist
