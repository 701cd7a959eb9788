// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) The shared-memory window of the shared_memory strategy, made once per communicator and node and cut
// into the segments of the plans made from that communicator. MPI_Win_allocate_shared synchronises the node inside
// MPI (0.12-0.26 s on 4 ranks sharing 2 cores, 6 ms with a core each); a plan that finds room in the window
// pays a node allreduce and allgather instead. Plans hold the window they were cut from, so it outlives both
// the communicator's cache entry and newer windows; the last holder frees it (collective over the node: plans
// are destroyed in the same order on every rank, as MPI objects shared by a communicator are).
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace redist::mpi {
class agreement;
}  // namespace redist::mpi

namespace redist::detail {

class node_arena {
 public:
  // Collective over `node` (ranks sharing memory): every rank allocates `bytes` of its own segment. Throws only
  // where MPI made no window; a window made but not opened on this rank (locked, its segments queried) is still
  // this object's, which then has no room and raises that failure in check(): the node's other ranks free theirs
  // collectively, and would wait for a window that a throwing constructor left to no one.
  node_arena(MPI_Comm node, std::int64_t bytes);
  ~node_arena();
  node_arena(const node_arena&) = delete;
  node_arena& operator=(const node_arena&) = delete;

  MPI_Win window() const { return window_; }
  std::int64_t bytes() const { return bytes_; }
  int node_size() const { return static_cast<int>(segments_.size()); }
  std::byte* segment(int node_rank) const { return segments_[static_cast<std::size_t>(node_rank)]; }
  bool opened() const { return failure_ == nullptr; }
  void check() const;  // throws the failure that left the window unopened

  // Local, no communication: the offset of `bytes` (cache-line aligned) in this rank's segment, first fit, or -1
  // when no free range is large enough. Thread-safe.
  std::int64_t reserve(std::int64_t bytes);
  void release(std::int64_t offset);

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  bool locked_ = false;
  std::exception_ptr failure_;
  std::int64_t bytes_ = 0;
  std::vector<std::byte*> segments_;  // every node rank's segment, from MPI_Win_shared_query
  std::mutex mutex_;
  std::map<std::int64_t, std::int64_t> free_;  // offset -> size of the free ranges of this rank's segment
  std::map<std::int64_t, std::int64_t> used_;  // offset -> size of the reserved ones
};

// A plan's segment of an arena, given back when the plan is destroyed.
struct arena_segment {
  std::shared_ptr<node_arena> arena;
  std::int64_t offset = -1;
  bool reused = false;  // cut from a window an earlier plan made

  arena_segment() = default;
  arena_segment(const arena_segment&) = delete;
  arena_segment& operator=(const arena_segment&) = delete;
  ~arena_segment() {
    if (arena && offset >= 0) arena->release(offset);
  }
};

// Reserves `bytes` in the arena cached on `caller` for this rank's node (`node`: the ranks of caller sharing it),
// or, when some rank of the node finds no room there, in a new arena (4 times the request, at least twice the
// old arena) that replaces it in the cache. With `may_create` false no new arena is made: then it returns false,
// alike on every rank of the node, and `out` stays empty. Collective over `node`.
// With `set_up` (the caller's agreement) each collective is a step of it, and where a rank of the node had failed
// before (set_up->failed()) no rank of the node reserves or makes anything: false alike on all of them. True with
// `out` empty on a rank where MPI could not make its part of a new window (its failure is recorded in set_up).
bool reserve_node_segment(MPI_Comm caller, MPI_Comm node, std::int64_t bytes, arena_segment& out,
                          bool may_create = true, mpi::agreement* set_up = nullptr);

// Local, no communication: whether an earlier plan left an arena cached on `caller` (a plan may then find room in
// it at the cost of a node allreduce instead of a new window).
bool node_arena_cached(MPI_Comm caller);

}  // namespace redist::detail
