// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) Point-to-point transfer of a plan's messages through its private buffers, used by the point_to_point
// strategy for every message and by shared_memory for those to other nodes.
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "mpi/compat.hpp"
#include "transform/detail/plan_impl.hpp"
#include "transform/tile_ops.hpp"

namespace redist::detail {

// Posts, on construction, a receive for every message not moved through node memory (plan.recv_on_node), then
// packs and sends those messages in send order; each arrival is unpacked as it comes.
class posted_messages {
 public:
  posted_messages(const transform_plan::impl& plan, const tile_ops& ops);
  posted_messages(const posted_messages&) = delete;
  posted_messages& operator=(const posted_messages&) = delete;
  // Unpacks one arrived message (wait: blocks until one arrives). False when every message is unpacked, or none
  // has arrived and wait is false.
  bool unpack_next_arrival(bool wait);
  // Unpacks the remaining messages, then completes the sends.
  void finish();

 private:
  const transform_plan::impl& plan_;
  const tile_ops& ops_;
  std::vector<MPI_Request> recv_requests_, send_requests_;
  std::vector<std::size_t> recv_index_;  // per receive request: its index in plan.recvs
  // Byte counts beyond int travel as derived datatypes, which live until the transfers complete.
  std::vector<mpi::byte_message> recv_types_, send_types_;
  std::size_t arrived_ = 0;
};

}  // namespace redist::detail
