// SPDX-License-Identifier: BSD-3-Clause
// Shared windows cut into the segments of shared_memory plans (mpi/node_arena.hpp).
#include "mpi/node_arena.hpp"

#include <algorithm>
#include <iterator>

#include "machine/cache_line.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"
#include "mpi/shared_window.hpp"

namespace redist::detail {

namespace {

// At least one line: every reservation has an offset of its own (an empty one would share the next one's).
std::int64_t round_to_line(std::int64_t bytes) {
  return machine::round_up_to_cache_line(std::max<std::int64_t>(bytes, 1));
}

// The arena cached on a communicator, numbered in the order this process cached them.
struct cached_arena {
  std::shared_ptr<node_arena> arena;
  std::uint64_t order = 0;
};
std::mutex cached_mutex;
std::uint64_t next_order = 0;
std::map<std::uint64_t, cached_arena*>& live_cached() {
  static std::map<std::uint64_t, cached_arena*> live;
  return live;
}

// The communicator is freed: the cache lets go (the last holder frees the window, collectively over the node).
int delete_cached_arena(MPI_Comm, int, void* value, void*) {
  auto* cached = static_cast<cached_arena*>(value);
  {
    std::lock_guard<std::mutex> lock(cached_mutex);
    live_cached().erase(cached->order);
  }
  delete cached;
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, with MPI still whole: the caches of communicators still
// alive (MPI_COMM_WORLD's, whose attributes may be deleted late in MPI_Finalize or never) let go there, in the
// order they were made, which the ranks of a node share.
int release_all_at_finalize(MPI_Comm, int, void*, void*) {
  std::lock_guard<std::mutex> lock(cached_mutex);
  for (auto& [order, cached] : live_cached()) cached->arena.reset();
  live_cached().clear();
  return MPI_SUCCESS;
}

int arena_keyval() {
  static const int keyval = mpi::new_comm_keyval_with_finalize(delete_cached_arena, release_all_at_finalize);
  return keyval;
}

}  // namespace

node_arena::node_arena(MPI_Comm node, std::int64_t bytes) : bytes_(round_to_line(bytes)) {
  std::byte* base = nullptr;
  // No injection point in here (the step that makes the arena injects once it is owned).
  REDIST_MPI_CHECK_CREATION(mpi::allocate_shared_window(bytes_, node, &base, &window_));
  try {
    REDIST_MPI_CHECK_LOCAL(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN));
    REDIST_MPI_CHECK_LOCAL(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_));
    locked_ = true;
    segments_.resize(static_cast<std::size_t>(mpi::size(node)));
    for (int r = 0; r < node_size(); ++r) {
      REDIST_MPI_CHECK_LOCAL(mpi::shared_window_segment(window_, r, &segments_[static_cast<std::size_t>(r)]));
    }
    free_[0] = bytes_;
  } catch (...) {
    failure_ = std::current_exception();  // no free range: reserve() finds no room
  }
}

void node_arena::check() const {
  if (failure_ != nullptr) std::rethrow_exception(failure_);
}

node_arena::~node_arena() {
  if (window_ != MPI_WIN_NULL && !mpi::finalized()) {
    if (locked_) MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
}

std::int64_t node_arena::reserve(std::int64_t bytes) {
  const std::int64_t need = round_to_line(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const std::int64_t offset = it->first, rest = it->second - need;
    free_.erase(it);
    if (rest > 0) free_[offset + need] = rest;
    used_[offset] = need;
    return offset;
  }
  return -1;
}

void node_arena::release(std::int64_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto used = used_.find(offset);
  if (used == used_.end()) return;
  std::int64_t begin = offset, size = used->second;
  used_.erase(used);
  // Merged with the free neighbours, so that a plan as large as the window fits again once the others are gone.
  const auto next = free_.find(begin + size);
  if (next != free_.end()) {
    size += next->second;
    free_.erase(next);
  }
  const auto after = free_.lower_bound(begin);
  if (after != free_.begin()) {
    const auto before = std::prev(after);
    if (before->first + before->second == begin) {
      begin = before->first;
      size += before->second;
      free_.erase(before);
    }
  }
  free_[begin] = size;
}

namespace {
cached_arena* arena_cached_on(MPI_Comm caller) {
  void* value = nullptr;
  int found = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_get_attr(caller, arena_keyval(), &value, &found));
  return found ? static_cast<cached_arena*>(value) : nullptr;
}
}  // namespace

bool node_arena_cached(MPI_Comm caller) {
  const cached_arena* cached = arena_cached_on(caller);
  return cached != nullptr && cached->arena != nullptr;
}

bool reserve_node_segment(MPI_Comm caller, MPI_Comm node, std::int64_t bytes, arena_segment& out, bool may_create,
                          mpi::agreement* set_up) {
  const auto collective_step = [&](const auto& step) {
    if (set_up != nullptr)
      set_up->collective(step);
    else
      step();
  };
  const bool failed_before = set_up != nullptr && set_up->failed();
  const int keyval = arena_keyval();
  auto* cached = arena_cached_on(caller);
  std::shared_ptr<node_arena> arena = cached ? cached->arena : nullptr;
  std::int64_t offset = !failed_before && arena && arena->node_size() == mpi::size(node) ? arena->reserve(bytes) : -1;
  // Every rank of the node must cut its segment from the same window, and none makes one where a rank of the node
  // has failed: minima of (fits, has not failed). A rank whose step fails after the call keeps the answer.
  std::int64_t answers[2] = {offset >= 0 ? 1 : 0, failed_before ? 0 : 1};
  collective_step(
      [&] { REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, answers, 2, MPI_INT64_T, MPI_MIN, node)); });
  const bool everyone_fits = answers[0] == 1, nobody_failed = answers[1] == 1;
  if (offset >= 0 && (!everyone_fits || !nobody_failed)) arena->release(offset);
  if (!nobody_failed || (!everyone_fits && !may_create)) return false;
  out.reused = everyone_fits;
  if (!out.reused) {
    // Room for a few more plans like this one: address space only until a plan touches its segment.
    const std::int64_t arena_bytes = std::max(4 * round_to_line(bytes), arena ? 2 * arena->bytes() : 0);
    std::shared_ptr<node_arena> made;
    collective_step([&] {
      made = std::make_shared<node_arena>(node, arena_bytes);
      // Where the set-up fails, every rank of the node forgets the new arena in the agreement's conclusion, and
      // frees its window with the last plan cut from it, at the same steps: a rank that could not cache it would
      // otherwise free it alone, here, while its peers wait in their next collective with the window kept.
      if (set_up != nullptr)
        set_up->on_failure([caller, made] {
          if (cached_arena* c = arena_cached_on(caller); c != nullptr && c->arena == made) c->arena = nullptr;
        });
      // Cached even where this rank could not open it (it has no room then): every rank of the node frees the
      // window when the cache moves on, at the same collective step.
      if (cached) {
        cached->arena = made;  // the old window lives on in the plans cut from it
      } else {
        auto holder = std::make_unique<cached_arena>();
        holder->arena = made;
        REDIST_MPI_CHECK_LOCAL(MPI_Comm_set_attr(caller, keyval, holder.get()));
        std::lock_guard<std::mutex> lock(cached_mutex);
        holder->order = next_order++;
        live_cached()[holder->order] = holder.get();
        holder.release();  // owned by the attribute from here
      }
      made->check();
    });
    // Where MPI could not make or open this rank's part, the segment stays empty (the step's failure is the
    // set-up's).
    if (made == nullptr || !made->opened()) return true;
    arena = std::move(made);
    offset = arena->reserve(bytes);
  }
  out.arena = std::move(arena);
  out.offset = offset;
  return true;
}

}  // namespace redist::detail
