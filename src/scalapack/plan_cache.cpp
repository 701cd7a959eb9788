// Plan cache of the ScaLAPACK-style entry points (see plan_cache.hpp).
#include "plan_cache.hpp"

#include <list>
#include <map>
#include <utility>

#include "../mpi/comm_attribute.hpp"
#include "../mpi/checked.hpp"

namespace redist::scalapack {

namespace {

template <class Plan>
struct entry {
  std::vector<std::int64_t> key;
  Plan plan;
  bool one_shot = false;  // planned for a single call; replaced on the key's next call
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
  REDIST_MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &found, &present));
  if (present) return *static_cast<communicator_cache*>(found);
  std::uint64_t order = next_release_order;
  REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &order, 1, MPI_UINT64_T, MPI_MAX, comm));
  auto* cache = new communicator_cache;
  cache->release_order = order;
  next_release_order = order + 1;
  const int set = MPI_Comm_set_attr(comm, keyval, cache);
  if (set != MPI_SUCCESS) {
    delete cache;
    mpi::check(set, "MPI_Comm_set_attr");
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
  auto& plans = cache_of(comm).transforms;
  if (entry<transform_plan>* found = find(plans, key)) {
    if (found->one_shot) {
      // Built before it replaces anything: if planning fails (on every rank alike), the one-shot plan stays.
      transform_plan repeated = make(false);
      found->plan = std::move(repeated);
      found->one_shot = false;
      ++promotions;
    }
    return found->plan;
  }
  entry<transform_plan>& made = insert(plans, std::move(key), make(true), plan_cache_capacity);
  // Replaced on the second call only where a repeated-call plan would differ (plan_statistics::one_shot_choices):
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

const gemm_plan& cached_gemm_plan(MPI_Comm comm, std::vector<std::int64_t> key, const std::function<gemm_plan()>& make) {
  auto& plans = cache_of(comm).gemms;
  if (entry<gemm_plan>* found = find(plans, key)) return found->plan;
  return insert(plans, std::move(key), make(), gemm_plan_cache_capacity).plan;
}

std::size_t cached_plan_count() {
  std::size_t count = 0;
  for (const auto& [order, cache] : live_caches()) count += cache->transforms.size() + cache->gemms.size();
  return count;
}

std::size_t plans_made() { return misses; }
std::size_t plans_promoted() { return promotions; }

}  // namespace redist::scalapack
