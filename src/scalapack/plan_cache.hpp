#pragma once
// The plans of recent ScaLAPACK-style calls (internal), one cache for all routines and types. Keys hold
// everything the processes agreed on for a call (gathered from all of them), so every process computes the
// same key and a hit or a miss is collective; the caches of all processes see the same calls in the same
// order. An evicted plan frees its communicator (and window), so any number of distinct calls runs with a
// bounded number of them. MPI_Finalize releases every cached plan (through an MPI_COMM_SELF attribute), so
// no communicator or window outlives MPI. Not thread-safe: one calling thread at a time.
#include <cstdint>
#include <functional>
#include <vector>

#include "redist/transform/plan.hpp"

namespace redist::scalapack {

inline constexpr std::size_t plan_cache_capacity = 16;

// The cached plan for `key`, or the one `make` builds (collective) and caches, evicting the least
// recently used beyond plan_cache_capacity.
const transform_plan& cached_plan(std::vector<std::int64_t> key, const std::function<transform_plan()>& make);

// Plans in the cache now (for tests).
std::size_t cached_plan_count();

}  // namespace redist::scalapack
