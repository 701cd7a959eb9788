// Plan cache of the ScaLAPACK-style entry points (see plan_cache.hpp).
#include "plan_cache.hpp"

#include <list>
#include <utility>

namespace redist::scalapack {

const transform_plan& cached_plan(std::vector<std::int64_t> key, const std::function<transform_plan()>& make) {
  struct entry {
    std::vector<std::int64_t> key;
    transform_plan plan;
  };
  static std::list<entry> cache;
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if (it->key == key) {
      cache.splice(cache.begin(), cache, it);
      return cache.front().plan;
    }
  transform_plan plan = make();
  if (cache.size() == plan_cache_capacity) cache.pop_back();
  cache.push_front(entry{std::move(key), std::move(plan)});
  return cache.front().plan;
}

}  // namespace redist::scalapack
