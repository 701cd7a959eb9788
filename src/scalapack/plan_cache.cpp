// Plan cache of the ScaLAPACK-style entry points (see plan_cache.hpp).
#include "plan_cache.hpp"

#include <mpi.h>

#include <list>
#include <utility>

#include "redist/mpi/checked.hpp"

namespace redist::scalapack {

namespace {

template <class Plan>
struct entry {
  std::vector<std::int64_t> key;
  Plan plan;
};

template <class Plan>
std::list<entry<Plan>>& cache() {
  static std::list<entry<Plan>> plans;
  return plans;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes before it shuts anything down: the cached plans free
// their communicators and shared windows there, collectively (every process of a plan is finalizing, and
// all caches hold their common plans in the same order), instead of reaching MPI_Finalize alive.
int release_plans_at_finalize(MPI_Comm, int, void*, void*) {
  cache<transform_plan>().clear();
  cache<gemm_plan>().clear();
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

std::size_t misses = 0;

template <class Plan>
const Plan& lookup(std::vector<std::int64_t> key, const std::function<Plan()>& make, std::size_t capacity) {
  std::list<entry<Plan>>& plans = cache<Plan>();
  for (auto it = plans.begin(); it != plans.end(); ++it)
    if (it->key == key) {
      plans.splice(plans.begin(), plans, it);
      return plans.front().plan;
    }
  release_plans_at_finalize_once();
  Plan plan = make();
  ++misses;
  if (plans.size() == capacity) plans.pop_back();
  plans.push_front(entry<Plan>{std::move(key), std::move(plan)});
  return plans.front().plan;
}

}  // namespace

const transform_plan& cached_plan(std::vector<std::int64_t> key, const std::function<transform_plan()>& make) {
  return lookup(std::move(key), make, plan_cache_capacity);
}

const gemm_plan& cached_gemm_plan(std::vector<std::int64_t> key, const std::function<gemm_plan()>& make) {
  return lookup(std::move(key), make, gemm_plan_cache_capacity);
}

std::size_t cached_plan_count() { return cache<transform_plan>().size() + cache<gemm_plan>().size(); }

std::size_t plans_made() { return misses; }

}  // namespace redist::scalapack
