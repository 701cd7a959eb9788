#pragma once
// The plans of recent ScaLAPACK-style calls (internal): transform plans (p?gemr2d, p?trmr2d, p?tran*) and
// gemm plans (p?gemm), each kind in its own least-recently-used list, for all routines and types. Keys hold
// everything the processes agreed on for a call (gathered from all of them), so every process computes the
// same key and a hit or a miss is collective; the caches of all processes see the same calls in the same
// order. An evicted plan frees its communicator (and window), so any number of distinct calls runs with a
// bounded number of them. MPI_Finalize releases every cached plan (through an MPI_COMM_SELF attribute), so
// no communicator or window outlives MPI. Not thread-safe: one calling thread at a time.
#include <cstdint>
#include <functional>
#include <vector>

#include "redist/gemm/gemm.hpp"
#include "redist/transform/plan.hpp"

namespace redist::scalapack {

inline constexpr std::size_t plan_cache_capacity = 16;
// Fewer gemm plans: each holds the multiply's buffers (its share of the operands in the native layouts and
// the round buffers), about the size of the operands themselves.
inline constexpr std::size_t gemm_plan_cache_capacity = 4;

// The cached plan for `key`, or the one `make` builds (collective) and caches, evicting the least
// recently used plan of the same kind beyond its capacity.
const transform_plan& cached_plan(std::vector<std::int64_t> key, const std::function<transform_plan()>& make);
const gemm_plan& cached_gemm_plan(std::vector<std::int64_t> key, const std::function<gemm_plan()>& make);

// Plans of both kinds in the cache now, and plans built since the program started (cache misses; for tests).
std::size_t cached_plan_count();
std::size_t plans_made();

}  // namespace redist::scalapack
