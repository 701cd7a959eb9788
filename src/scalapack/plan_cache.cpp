// SPDX-License-Identifier: BSD-3-Clause
// Plan cache of the ScaLAPACK-style entry points (see plan_cache.hpp).
#include "plan_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <map>
#include <utility>

#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"
#include "trace/recorder.hpp"

namespace redist::scalapack {

namespace {

template <class Plan>
struct entry {
  std::vector<std::int64_t> key;
  Plan plan;
  bool one_shot = false;  // planned for a single call; replaced by a repeated plan on a later call
  int calls = 1;          // calls of the key so far, while its plan is a one-shot one
  int replace_at = 0;     // the call that replaces a one-shot plan (agreed on the second call; 0: not yet)
  // After a replacement: the one-shot plan's strategy and latest execution, and how many of the replacement's
  // executions have been read back (its first two tell what replacing cost and gained; -1: none to read).
  bool replaced_point_to_point = false;
  double one_shot_execution_seconds = 0;
  int executions_read = -1;
  double first_execution_seconds = 0;
};

// The plans of one communicator.
struct communicator_cache {
  std::list<entry<transform_plan>> transforms;
  std::list<entry<gemm_plan>> gemms;
  std::uint64_t release_order = 0;  // agreed by the communicator's processes when the cache was made
};

// Every live cache by its release order. Each process's orders grow with every cache it makes, and the
// processes of a communicator agree on its cache's order (the maximum over them of their next order), so any
// two caches two processes share are in the same order on both: releasing in this order frees collectively.
std::map<std::uint64_t, communicator_cache*>& live_caches() {
  static std::map<std::uint64_t, communicator_cache*> caches;
  return caches;
}
std::uint64_t next_release_order = 1;
std::size_t misses = 0;
std::size_t promotions = 0;
// This process's planning time of the latest repeated plan that replaced a one-shot one, on any communicator (0:
// none yet). Communicators of one context differ (p?gemr2d's spans both grids), their replacements' costs hardly.
double latest_replacement_seconds = 0;
// What the latest replacement's first execution took beyond its second (first touches of a new window's pages):
// part of what replacing cost.
double latest_first_touch_seconds = 0;
// The fraction of a one-shot plan's execution time its latest replacement still took (its second execution over
// the one-shot plan's latest), for one-shot plans that took point_to_point ([0]) and that streamed through a
// window ([1]); negative: no such replacement measured yet.
double latest_remaining_fraction[2] = {-1, -1};

void release(communicator_cache* cache) {
  live_caches().erase(cache->release_order);
  delete cache;
}

// A cached communicator is freed (Cblacs_gridexit): its plans go with it, collectively.
int release_at_free(MPI_Comm, int, void* cache, void*) {
  release(static_cast<communicator_cache*>(cache));
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes before it shuts anything down: the caches of communicators
// still alive release their plans there, in the agreed order, instead of reaching MPI_Finalize alive.
int release_all_at_finalize(MPI_Comm, int, void*, void*) {
  while (!live_caches().empty()) {
    communicator_cache* cache = live_caches().begin()->second;
    cache->transforms.clear();
    cache->gemms.clear();
    live_caches().erase(live_caches().begin());
    // The cache object itself stays attached to its communicator (freed with it, or never).
  }
  return MPI_SUCCESS;
}

int cache_keyval() {
  static const int keyval = mpi::new_comm_keyval_with_finalize(release_at_free, release_all_at_finalize);
  return keyval;
}

communicator_cache& cache_of(MPI_Comm comm) {
  const int keyval = cache_keyval();
  void* found = nullptr;
  int present = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_get_attr(comm, keyval, &found, &present));
  if (present) return *static_cast<communicator_cache*>(found);
  std::uint64_t order = next_release_order;
  REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &order, 1, MPI_UINT64_T, MPI_MAX, comm));
  auto* cache = new communicator_cache;
  cache->release_order = order;
  next_release_order = order + 1;
  const int set = MPI_Comm_set_attr(comm, keyval, cache);
  if (set != MPI_SUCCESS) {
    delete cache;
    mpi::check_local(set, "MPI_Comm_set_attr");
  }
  live_caches().emplace(order, cache);
  return *cache;
}

// The entry for `key`, moved to the front, or null.
template <class Plan>
entry<Plan>* find(std::list<entry<Plan>>& plans, const std::vector<std::int64_t>& key) {
  for (auto it = plans.begin(); it != plans.end(); ++it)
    if (it->key == key) {
      plans.splice(plans.begin(), plans, it);
      return &plans.front();
    }
  return nullptr;
}

// Tells the call being traced, if any, whether its plan was cached and what finding or making it took.
struct traced_lookup {
  trace_detail::call_scope* call = trace_detail::current();
  trace_detail::clock::time_point start =
      call != nullptr ? trace_detail::clock::now() : trace_detail::clock::time_point{};
  bool hit = true;
  ~traced_lookup() {
    if (call != nullptr) call->plan_cache(hit, trace_detail::seconds_since(start));
  }
};

template <class Plan>
entry<Plan>& insert(std::list<entry<Plan>>& plans, std::vector<std::int64_t> key, Plan plan, std::size_t capacity) {
  ++misses;
  if (plans.size() == capacity) plans.pop_back();
  plans.push_front(entry<Plan>{std::move(key), std::move(plan)});
  return plans.front();
}

}  // namespace

const transform_plan& cached_plan(MPI_Comm comm, std::vector<std::int64_t> key,
                                  const std::function<transform_plan(bool one_shot)>& make) {
  traced_lookup traced;
  auto& plans = cache_of(comm).transforms;
  if (entry<transform_plan>* found = find(plans, key)) {
    if (!found->one_shot) {
      // A replacement's first two executions, read back on the next two calls (local; the ranks agree on them
      // where they are used, on another key's second call).
      if (found->executions_read >= 0 && found->executions_read < 2) {
        const double last = found->plan.statistics().last_execution_seconds;
        if (found->executions_read == 0) {
          found->first_execution_seconds = last;
        } else {
          latest_first_touch_seconds = std::max(0.0, found->first_execution_seconds - last);
          if (found->one_shot_execution_seconds > 0) {
            const int kind = found->replaced_point_to_point ? 0 : 1;
            latest_remaining_fraction[kind] = last / found->one_shot_execution_seconds;
          }
        }
        ++found->executions_read;
      }
      return found->plan;
    }
    ++found->calls;
    const bool point_to_point = found->plan.strategy() == exchange_strategy::point_to_point;
    if (found->replace_at == 0) {
      // Ski rental on the key's second call: keep executing the one-shot plan until what it costs per call beyond
      // its replacement adds up to what replacing it costs, then replace it (if the calls stop before, nothing was
      // spent on a plan they would not amortise; if not, at most the replacement's cost was lost). The price is
      // that of the latest replacement in the process (planning, a window and its first touches: 0.13-0.19 s on 4
      // ranks sharing 2 cores, about one execution with a core per rank); the saving per call is the share of
      // the one-shot plan's execution that the latest replacement of a plan of its kind (point_to_point, or
      // streamed through a window) did away with, all of it before one was measured. Before any replacement on
      // every rank, the price is taken as two one-shot executions (measured 2-3 there: pdgemr2d N = 4000 on 4
      // ranks sharing 2 cores, 0.08 s one-shot, 0.19 s to replace), so the process's first replacement comes on
      // the key's third call and a key called twice never pays one. Maxima over the ranks, so that every rank
      // picks the same call.
      double mine[3] = {latest_replacement_seconds + latest_first_touch_seconds,
                        found->plan.statistics().last_execution_seconds,
                        latest_remaining_fraction[point_to_point ? 0 : 1]},
             most[3] = {0, 0, 0};
      REDIST_MPI_CHECK(mpi::allreduce_yielding(mine, most, 3, MPI_DOUBLE, MPI_MAX, comm));
      const double execution = most[1], remaining = most[2];
      const double price = most[0] > 0 ? most[0] : 2 * execution;
      const double saving = remaining >= 0 ? execution * (1 - remaining) : execution;
      double executions = 1;
      if (price > 0 && execution > 0) executions = saving > 0 ? std::ceil(price / saving) : latest_replacement_call;
      found->replace_at = 1 + static_cast<int>(std::clamp<double>(executions, 1, latest_replacement_call - 1));
    }
    if (found->calls >= found->replace_at) {
      // Built before it replaces anything: if planning fails (on every rank alike), the one-shot plan stays.
      const double one_shot_execution = found->plan.statistics().last_execution_seconds;
      const auto started = std::chrono::steady_clock::now();
      traced.hit = false;
      transform_plan repeated = make(false);
      latest_replacement_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      found->plan = std::move(repeated);
      found->one_shot = false;
      found->replaced_point_to_point = point_to_point;
      found->one_shot_execution_seconds = one_shot_execution;
      found->executions_read = 0;
      ++promotions;
    }
    return found->plan;
  }
  traced.hit = false;
  entry<transform_plan>& made = insert(plans, std::move(key), make(true), plan_cache_capacity);
  // Replaced on a later call only where a repeated-call plan would differ (plan_statistics::one_shot_choices):
  // a point_to_point plan taken for one execution only (decided from agreed totals, so alike on all ranks), or a
  // shared_memory plan whose streams some node cut into smaller chunks (decided per node: gathered, so that all
  // ranks mark alike). Anything else, a small point_to_point plan above all, is what the repeated call would plan:
  // re-planning it would cost the second call about one more execution.
  if (made.plan.strategy() == exchange_strategy::point_to_point) {
    made.one_shot = made.plan.statistics().one_shot_choices;
  } else {
    int mine = made.plan.statistics().one_shot_choices ? 1 : 0, any = 0;
    REDIST_MPI_CHECK(mpi::allreduce_yielding(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
    made.one_shot = any != 0;
  }
  return made.plan;
}

const gemm_plan& cached_gemm_plan(MPI_Comm comm, std::vector<std::int64_t> key,
                                  const std::function<gemm_plan()>& make) {
  traced_lookup traced;
  auto& plans = cache_of(comm).gemms;
  if (entry<gemm_plan>* found = find(plans, key)) return found->plan;
  traced.hit = false;
  return insert(plans, std::move(key), make(), gemm_plan_cache_capacity).plan;
}

std::size_t cached_plan_count() {
  std::size_t count = 0;
  for (const auto& [order, cache] : live_caches()) count += cache->transforms.size() + cache->gemms.size();
  return count;
}

std::size_t plans_made() { return misses; }
std::size_t plans_promoted() { return promotions; }
double latest_replacement_planning_seconds() { return latest_replacement_seconds; }

}  // namespace redist::scalapack
