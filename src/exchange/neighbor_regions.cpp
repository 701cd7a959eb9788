// SPDX-License-Identifier: BSD-3-Clause
// The edges and regions of a neighborhood exchange: the caller's arguments checked into edges, the regions
// every rank agrees on, and the records that tell each rank the edges it receives or carries.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "machine/host.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "neighbor_detail.hpp"
#include "redist/error.hpp"

namespace redist::exchange::detail {

datatype_info describe(MPI_Datatype t) {
  const mpi::type_bounds bounds = mpi::type_extent(t), true_bounds = mpi::type_true_extent(t);
  return {mpi::type_size(t), bounds.lb, bounds.extent, true_bounds.lb, true_bounds.extent};
}

std::pair<mpi::error_kind, std::string> check_side(const char* side, const char* counts_name,
                                                   const std::vector<int>& peers, const edge_array& counts,
                                                   const edge_array& displs, MPI_Datatype type, const void* buf,
                                                   std::int64_t capacity, std::int64_t entries, int nranks,
                                                   std::vector<edge>& edges, bool check_overlap) {
  // The classes of alltoallv_inplace's checks (src/exchange/inplace.cpp, validate): counts invalid_count,
  // buffers invalid_buffer, datatypes invalid_datatype; the shape of the lists invalid_argument (as MPI's own
  // checks of a degree or a neighbor list: MPI_ERR_ARG).
  using mpi::error_kind;
  const auto degree = static_cast<std::int64_t>(peers.size());
  if (entries == -2)
    return {error_kind::invalid_argument,
            std::string(side) +
                ": the neighbor list, counts and displacements disagree in length (or the degree is negative)"};
  if (entries >= 0 && entries != degree)
    return {error_kind::invalid_argument, std::string(side) + ": " + std::to_string(entries) + " counts for " +
                                              std::to_string(degree) + " neighbors"};
  if (degree > 0 && (counts.empty() || displs.empty()))
    return {error_kind::invalid_count,
            std::string(side) + ": null counts or displacements for " + std::to_string(degree) + " neighbors"};
  if (type == MPI_DATATYPE_NULL)
    return {error_kind::invalid_datatype, std::string(side) + ": datatype is MPI_DATATYPE_NULL"};
  const datatype_info t = describe(type);
  std::map<int, int> seen;
  edges.resize(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    edge& e = edges[i];
    e.peer = peers[i];
    if (e.peer < 0 || e.peer >= nranks)
      return {error_kind::invalid_argument, std::string(side) + ": neighbor " + std::to_string(i) + " is rank " +
                                                std::to_string(e.peer) + ", outside [0, " + std::to_string(nranks) +
                                                ")"};
    e.occurrence = seen[e.peer]++;
    e.count = counts[i];
    if (e.count < 0)
      return {error_kind::invalid_count,
              std::string(counts_name) + "[" + std::to_string(i) + "] = " + std::to_string(e.count) + " is negative"};
    e.displacement = displs[i];
    // Byte sizes and offsets in 64 bits: a datatype of a huge size or extent can overflow them.
    std::int64_t last_element = 0, end = 0;
    if (__builtin_mul_overflow(displs[i], static_cast<std::int64_t>(t.extent), &e.offset) ||
        __builtin_mul_overflow(e.count, static_cast<std::int64_t>(t.size), &e.bytes) ||
        __builtin_mul_overflow(std::max<std::int64_t>(e.count, 1) - 1, static_cast<std::int64_t>(t.extent),
                               &last_element) ||
        __builtin_add_overflow(e.offset, last_element, &end) ||
        __builtin_add_overflow(end, static_cast<std::int64_t>(t.true_lb + t.true_extent), &end))
      throw overflow_error(std::string(side) + " edge " + std::to_string(i) + " (displacement " +
                           std::to_string(displs[i]) + ", count " + std::to_string(e.count) + ", type extent " +
                           std::to_string(t.extent) + " bytes): its byte offsets overflow 64 bits");
    if (e.count == 0) continue;
    // A displacement counts elements from the buffer's start, in the counts' unit: a negative one is a bad count.
    if (displs[i] < 0)
      return {error_kind::invalid_count, std::string(side) + " displacement " + std::to_string(i) + " = " +
                                             std::to_string(displs[i]) + " is negative"};
    if (buf == nullptr && e.bytes > 0)
      return {error_kind::invalid_buffer, std::string(side) + ": null buffer with data to move"};
    if (capacity >= 0 && end > capacity * static_cast<std::int64_t>(t.extent))
      return {error_kind::invalid_buffer, std::string(side) + " edge " + std::to_string(i) + " (displacement " +
                                              std::to_string(displs[i]) + ", count " + std::to_string(e.count) +
                                              ") ends past the buffer of " + std::to_string(capacity) + " elements"};
  }
  // Receive areas must not overlap (MPI's aliased buffers, MPI_ERR_BUFFER); decidable cheaply when the type has no
  // holes (contiguous elements).
  const bool contiguous = t.size == t.extent && t.true_extent == t.extent && t.true_lb == t.lb;
  if (check_overlap && contiguous) {
    std::vector<std::pair<std::int64_t, size_t>> starts;
    for (size_t i = 0; i < edges.size(); ++i)
      if (edges[i].bytes > 0) starts.emplace_back(edges[i].offset, i);
    std::sort(starts.begin(), starts.end());
    for (size_t k = 1; k < starts.size(); ++k) {
      const edge& prev = edges[starts[k - 1].second];
      if (prev.offset + prev.bytes > starts[k].first)
        return {error_kind::invalid_buffer, std::string(side) + " edges " + std::to_string(starts[k - 1].second) +
                                                " and " + std::to_string(starts[k].second) +
                                                " overlap in the receive buffer"};
    }
  }
  return {error_kind::none, {}};
}

layout_facts find_regions(MPI_Comm comm, const exchange_options& options, bool options_agreed) {
  layout_facts f;
  f.me = mpi::rank(comm);
  f.nranks = mpi::size(comm);
  const int mode = options.region_id ? 2 : options.region_size > 0 ? 1 : 0;
  int mine[2] = {mode, options.region_id ? *options.region_id : options.region_size};
  // The table of every rank's choice, where it says something the agreed options do not: region ids, or anything
  // when nothing was agreed. (An all-gather of 2P ints: at 1024 ranks the largest collective of a plan made again.)
  const bool gather = !options_agreed || mode == 2;
  std::vector<int> all(gather ? 2 * static_cast<size_t>(f.nranks) : 0);
  if (gather) REDIST_MPI_CHECK(redist::mpi::allgather_yielding(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm));
  for (int r = 0; gather && r < f.nranks; ++r) {
    // Every rank sees the same table, hence throws the same error.
    if (all[2 * r] != mode)
      throw inconsistent_ranks("exchange regions: rank " + std::to_string(r) +
                               " chose its region differently (region_id / region_size / node) from rank " +
                               std::to_string(f.me));
    if (mode == 1 && all[2 * r + 1] != options.region_size)
      throw inconsistent_ranks("exchange regions: region_size " + std::to_string(all[2 * r + 1]) + " on rank " +
                               std::to_string(r) + ", " + std::to_string(options.region_size) + " on rank " +
                               std::to_string(f.me));
  }
  std::vector<int> key(static_cast<size_t>(f.nranks));
  if (mode == 2) {
    for (int r = 0; r < f.nranks; ++r) key[r] = all[2 * r + 1];
  } else if (mode == 1) {
    for (int r = 0; r < f.nranks; ++r) key[r] = r / options.region_size;
  } else {
    key = machine::node_leaders(comm);
  }
  std::map<int, int> dense;  // ranks ascending: regions numbered by their lowest rank
  f.region_of.resize(key.size());
  for (int r = 0; r < f.nranks; ++r) {
    auto it = dense.emplace(key[r], static_cast<int>(dense.size())).first;
    f.region_of[r] = it->second;
    if (static_cast<size_t>(it->second) == f.members.size()) f.members.emplace_back();
    f.members[it->second].push_back(r);
  }
  for (const auto& m : f.members) f.max_region_size = std::max(f.max_region_size, static_cast<int>(m.size()));
  return f;
}

std::vector<std::vector<std::int64_t>> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::int64_t>>& to,
                                                      const std::vector<std::int64_t>* words_from) {
  const size_t nranks = to.size();
  std::vector<std::int64_t> send_counts(nranks), recv_counts(nranks);
  for (size_t r = 0; r < nranks; ++r) send_counts[r] = static_cast<std::int64_t>(to[r].size());
  // The all-to-all of counts is O(P) per rank, the one part of a plan made again that grows with P under a
  // latency-bound network: skipped where the receivers know their counts.
  if (words_from != nullptr)
    recv_counts = *words_from;
  else
    REDIST_MPI_CHECK(
        redist::mpi::alltoall_yielding(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm));
  // The words go as messages between the pairs that have some, on a private duplicate (the caller's receives
  // never match them), completed in a watched wait that yields the core: MPI_Alltoallv's wait spins, and with more
  // processes than cores each of its rounds waited for a scheduler tick (a plan 16 ms with 7 processes on 2 cores,
  // against 0.25 ms). Every rank completed the all-to-all above (or agreed on the graph), so none waits here for a
  // missing one.
  const MPI_Comm channel = mpi::call_duplicate(comm);
  std::vector<std::vector<std::int64_t>> from(nranks);
  std::vector<mpi::datatype_handle> keep;
  request_list requests;  // after keep: freed before the types they use
  for (size_t r = 0; r < nranks; ++r) {
    if (recv_counts[r] == 0) continue;
    from[r].resize(static_cast<size_t>(recv_counts[r]));
    requests.push_back(
        mpi::recv_init(from[r].data(), recv_counts[r], MPI_INT64_T, static_cast<int>(r), 0, channel, keep));
  }
  for (size_t r = 0; r < nranks; ++r)
    if (send_counts[r] > 0)
      requests.push_back(
          mpi::send_init(to[r].data(), send_counts[r], MPI_INT64_T, static_cast<int>(r), 0, channel, keep));
  requests.start_all();
  requests.wait_all(channel);
  return from;
}

std::vector<std::vector<std::int64_t>> exchange_records(MPI_Comm comm, const layout_facts& f,
                                                        const std::vector<edge>& sends) {
  std::vector<std::vector<std::int64_t>> to(static_cast<size_t>(f.nranks));
  const int mine = f.region_of[f.me];
  for (const edge& e : sends) {
    int targets[3] = {e.peer, -1, -1};
    const int theirs = f.region_of[e.peer];
    if (theirs != mine && e.bytes > 0) {
      targets[1] = f.sender(mine, theirs);
      targets[2] = f.receiver(theirs, mine);
    }
    for (int k = 0; k < 3; ++k) {
      const int t = targets[k];
      if (t < 0 || std::find(targets, targets + k, t) != targets + k) continue;  // one record per rank
      to[t].push_back(e.peer);
      to[t].push_back(e.bytes);
    }
  }
  return exchange_words(comm, to);
}

std::vector<int> receive_order(const std::vector<edge>& recvs, const layout_facts& f, int region) {
  std::vector<int> order;
  for (size_t j = 0; j < recvs.size(); ++j)
    if (f.region_of[recvs[j].peer] == region && recvs[j].bytes > 0) order.push_back(static_cast<int>(j));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return recvs[a].peer < recvs[b].peer; });
  return order;
}

}  // namespace redist::exchange::detail
