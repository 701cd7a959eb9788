// SPDX-License-Identifier: BSD-3-Clause
#include "machine/host.hpp"

#include <unistd.h>

#include <cstring>
#include <utility>

#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"

namespace redist::machine {

using mpi::allgather_yielding;
using mpi::allreduce_yielding;
using mpi::check;
using mpi::comm_attribute;
using mpi::node_communicator;
using mpi::rank;
using mpi::size;

namespace {
const comm_attribute<std::vector<int>>& node_leader_lists() {
  static const comm_attribute<std::vector<int>> leaders;
  return leaders;
}
}  // namespace

std::vector<int> node_leaders(MPI_Comm comm) {
  return node_leader_lists().get(comm, [&] {
    const int me = rank(comm);
    // The node communicator node_duplicate caches too: one split per comm for both.
    const MPI_Comm node = node_communicator(comm);
    int lowest = me;
    std::vector<int> leader_of(static_cast<size_t>(size(comm)));
    // Both made by every rank whatever the first returned, and checked as one call: a rank failing between them
    // would skip the gather the others enter.
    const int reduced = allreduce_yielding(&me, &lowest, 1, MPI_INT, MPI_MIN, node);
    const int gathered = allgather_yielding(&lowest, 1, MPI_INT, leader_of.data(), 1, MPI_INT, comm);
    check(reduced != MPI_SUCCESS ? reduced : gathered, "MPI_Allreduce(lowest node rank) and MPI_Allgather(leaders)");
    return leader_of;
  });
}

void forget_node_leaders(MPI_Comm comm) { node_leader_lists().forget(comm); }

namespace {
const comm_attribute<host_share>& host_shares() {
  static const comm_attribute<host_share> shares;
  return shares;
}
}  // namespace

void forget_host_share(MPI_Comm comm) { host_shares().forget(comm); }

const host_share& host_share_of(MPI_Comm comm) {
  return host_shares().get(comm, [&] {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "?");
    std::uint64_t key = 1469598103934665603ull;  // FNV-1a of the host name: equal names, equal keys
    for (const char* c = host; *c != 0; ++c) key = (key ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    // Every rank's host key and CPU count, so that every rank decides alike without a second collective.
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const std::uint64_t mine[2] = {key, static_cast<std::uint64_t>(std::max(cpus, 1L))};
    const size_t ranks = static_cast<size_t>(size(comm));
    std::vector<std::uint64_t> all(2 * ranks);
    check(allgather_yielding(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm),
          "MPI_Allgather(host name keys)");
    host_share share;
    share.cpus = static_cast<std::int64_t>(mine[1]);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> hosts(ranks);  // (host key, CPUs), sorted: runs = hosts
    for (size_t r = 0; r < ranks; ++r) {
      hosts[r] = {all[2 * r], all[2 * r + 1]};
      if (all[2 * r] == key) ++share.ranks_on_host;
    }
    std::sort(hosts.begin(), hosts.end());
    for (size_t first = 0, last = 0; first < ranks && !share.any_host_oversubscribed; first = last) {
      while (last < ranks && hosts[last].first == hosts[first].first) ++last;
      share.any_host_oversubscribed = last - first > hosts[first].second;
    }
    return share;
  });
}

bool hosts_oversubscribed(MPI_Comm comm) { return host_share_of(comm).any_host_oversubscribed; }

}  // namespace redist::machine
