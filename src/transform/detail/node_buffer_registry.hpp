// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Registry of the live node_buffer segments of this process (internal): lets an execution find whether
// a B pointer lies in node-shared memory and where its node peers' segments are mapped.
#include <mpi.h>

#include <cstdint>

namespace redist::detail {

struct node_segment {
  std::uint64_t token = 0;  // the same on every rank of the allocation's communicator, never 0
  int rank_in_window = 0;   // this rank in the window's node communicator
  MPI_Win window = MPI_WIN_NULL;
  const std::byte* begin = nullptr;
  std::int64_t bytes = 0;
};

void register_node_segment(const node_segment& s);
void unregister_node_segment(MPI_Win window);

// The segment of this process that contains [p, p + 1) (false when none does).
bool find_node_segment(const void* p, node_segment& out);

// Where rank `rank_in_window` of the node's window has its segment in this process's address space.
const std::byte* peer_segment(const node_segment& mine, int rank_in_window);

}  // namespace redist::detail
