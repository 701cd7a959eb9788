// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) Facts about the machine a communicator runs on, gathered once per communicator and cached on it: which
// ranks share a node (node_leaders) and how the ranks share a host's CPUs (host_share). With the cache line and the
// page source (cache_line.hpp, pages.hpp), what the library knows of the machine lives in this folder.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace redist::machine {

// Per rank of comm, the lowest rank of comm on its node (MPI_COMM_TYPE_SHARED): the library's one node discovery
// (the neighbor exchange's regions, the relabeling's node-aware cost). Splitting a communicator is among the
// costliest parts of a plan's set-up, so the answer is cached on comm (an attribute, which every rank sets in the
// same call and which a duplicate does not inherit), as is the node communicator it splits, which node_duplicate
// shares. Collective over comm.
std::vector<int> node_leaders(MPI_Comm comm);
// Drops comm's cached node leaders (local): called on every rank when the agreement around the first node_leaders
// failed, so that no rank keeps leaders the others will gather again.
void forget_node_leaders(MPI_Comm comm);

// How this rank's host is shared among the ranks of a communicator: ranks grouped by host name, not by
// MPI_Comm_split_type, whose simulated nodes may share one host's CPUs. Gathered once per comm (one allgather of
// host keys and CPU counts) and cached on it as an attribute. Collective over comm.
struct host_share {
  std::int64_t ranks_on_host = 0;        // ranks of comm on this rank's host, this one included
  std::int64_t cpus = 1;                 // online CPUs of this rank's host
  bool any_host_oversubscribed = false;  // some host runs more ranks of comm than it has CPUs (the same everywhere)
  // The CPUs each rank of this host may count on, at least 1.
  std::int64_t cpus_per_rank() const {
    return std::max<std::int64_t>(1, cpus / std::max<std::int64_t>(1, ranks_on_host));
  }
};
const host_share& host_share_of(MPI_Comm comm);
// Drops comm's cached host share (local): called on every rank when the agreement around the first
// host_share_of failed, so that no rank keeps a share the others will gather again.
void forget_host_share(MPI_Comm comm);
// host_share_of(comm).any_host_oversubscribed. Collective over comm.
bool hosts_oversubscribed(MPI_Comm comm);

}  // namespace redist::machine
