// Plan cache of the ScaLAPACK-style entry points (see plan_cache.hpp).
#include "plan_cache.hpp"

#include <mpi.h>

#include <list>
#include <utility>

#include "redist/mpi/checked.hpp"

namespace redist::scalapack {

namespace {

struct entry {
  std::vector<std::int64_t> key;
  transform_plan plan;
};

std::list<entry>& cache() {
  static std::list<entry> plans;
  return plans;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes before it shuts anything down: the cached plans free
// their communicators and shared windows there, collectively (every process of a plan is finalizing, and
// all caches hold their common plans in the same order), instead of reaching MPI_Finalize alive.
int release_plans_at_finalize(MPI_Comm, int, void*, void*) {
  cache().clear();
  return MPI_SUCCESS;
}

void release_plans_at_finalize_once() {
  static bool registered = false;
  if (registered) return;
  int keyval = MPI_KEYVAL_INVALID;
  REDIST_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_plans_at_finalize, &keyval, nullptr));
  REDIST_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr));
  registered = true;
}

}  // namespace

const transform_plan& cached_plan(std::vector<std::int64_t> key, const std::function<transform_plan()>& make) {
  std::list<entry>& plans = cache();
  for (auto it = plans.begin(); it != plans.end(); ++it)
    if (it->key == key) {
      plans.splice(plans.begin(), plans, it);
      return plans.front().plan;
    }
  release_plans_at_finalize_once();
  transform_plan plan = make();
  if (plans.size() == plan_cache_capacity) plans.pop_back();
  plans.push_front(entry{std::move(key), std::move(plan)});
  return plans.front().plan;
}

std::size_t cached_plan_count() { return cache().size(); }

}  // namespace redist::scalapack
