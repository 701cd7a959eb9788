// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The state behind redist::transform_plan (internal; used by src/transform/*.cpp only).
#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "machine/pages.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "plan_data.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/transform/plan.hpp"
#include "timer.hpp"

namespace redist {

namespace detail {
class transform_executor;
struct started_execution;
}  // namespace detail

struct transform_plan::impl {
  mpi::comm_handle comm;
  int rank = 0;
  int nranks = 1;
  transform_options options;
  // The OpenMP team that packs and unpacks: options.num_threads, or the OpenMP default capped at the CPUs of
  // this rank's host per rank of the caller's communicator on it (src/transform/plan.cpp: why).
  int threads = 1;
  exchange_strategy strategy = exchange_strategy::point_to_point;  // resolved (never automatic)
  // A one-shot automatic plan that took shared_memory only because a window is cached on its communicator: it
  // streams through that window or, where some node finds no room there, falls back to point_to_point (agreed).
  bool reuses_window_only = false;
  std::vector<job_description> jobs;      // matrix jobs (make_transform_plan); empty for make_reshape_plan
  std::vector<reshape_job> reshape_jobs;  // every job in the engine's N-d form
  std::vector<detail::job_plan> job_plans;
  // make_reshape_plan from boxes: the output boxes this rank holds (caller's coordinates) and the rank that passed
  // them (-1: this rank).
  std::vector<box> output_boxes_held;
  int output_boxes_passed_by = -1;

  std::vector<detail::tile> local_tiles;    // op(B) -> A on this rank, no buffer
  std::vector<detail::peer_message> sends;  // by peer rank
  std::vector<detail::peer_message> recvs;  // by peer rank
  std::vector<std::size_t> send_order;      // order in which sends are packed and posted
  std::int64_t send_bytes = 0, recv_bytes = 0;
  plan_statistics stats;
  mutable double last_execution_seconds = 0;  // stats.last_execution_seconds (set by execute, which is const)

  // Message buffers for what the strategy does not move through node memory: laid out at planning, borrowed from
  // the process's buffer cache (src/machine/pages.hpp) for each execution and returned after it, so that a plan
  // kept but idle (the drop-in caches 16) holds none, and the next plan's execution finds their pages mapped.
  // Borrowed before the execution's agreement, so that a failed allocation fails every rank alike. Buffers the
  // cache cannot keep (over its limit, or the cache off) are held from the first execution on instead (a plan is
  // not meant to be executed by two threads at once).
  std::int64_t private_send_bytes = 0, private_recv_bytes = 0;
  mutable machine::page_buffer send_buffer{nullptr, machine::release_pages},
      recv_buffer{nullptr, machine::release_pages};
  std::byte* private_send(std::size_t i) const { return send_buffer.get() + sends[i].byte_offset; }
  std::byte* private_recv(std::size_t i) const { return recv_buffer.get() + recvs[i].byte_offset; }
  // Allocates (or finds held) both buffers; throws std::bad_alloc. Then returns them where the cache keeps them.
  void borrow_private_buffers() const;
  void return_private_buffers() const noexcept;
  // Per sends[i] / recvs[i]: moved by the strategy through node memory (shared_memory's node peers), so it has
  // no place in the private buffers.
  std::vector<char> send_on_node, recv_on_node;

  // options.stores resolved for this rank for the messages it packs (for A: job_plan::result_stores).
  kernels::store_hint pack_stores = kernels::store_hint::cached;

  // How the messages travel (src/transform/strategies/): set up at plan time, run by execute().
  std::unique_ptr<detail::transform_executor> executor;

  impl();
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl();

  // Lays out the private buffers, resolves the store policy and makes the point_to_point executor as steps of
  // `planned` (the agreement on the plan's messages), concludes it with the strategy's choice, and sets up any
  // other strategy in an agreement of its own, whose collectives every rank makes whatever failed before.
  // caller: the communicator make_transform_plan was given (node-level state is cached on it).
  void setup_exchange(MPI_Comm caller, mpi::agreement& planned);
  // caller_problem: what the caller found wrong on this rank (empty: nothing), agreed with the buffers' checks.
  // next: transform_plan::execute_agreed's.
  void execute(const std::vector<job_buffers>& buffers, const std::string& caller_problem = {},
               const impl* next = nullptr) const;
  // Split-phase execution (transform_plan::start/wait): start agrees like execute and leaves the exchange in
  // `in_progress`; wait completes it. A plan destroyed between the two completes it first.
  void start(const std::vector<job_buffers>& buffers, const std::string& caller_problem) const;
  void wait() const;
  mutable std::unique_ptr<detail::started_execution> in_progress;

 private:
  // The checks of one execution agreed over the ranks (problem: this rank's), the private buffers borrowed (the
  // caller returns them): the strategy's before_agreement values, minimised over the ranks.
  std::vector<std::uint64_t> agree_on_execution(const std::vector<job_buffers>* buffers, const std::string& problem,
                                                const impl* next) const;
  void lay_out_private_buffers();
  void choose_stores();
};

}  // namespace redist
