// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The plans of recent ScaLAPACK-style calls (internal): transform plans (p?gemr2d, p?trmr2d, p?tran*) and
// gemm plans (p?gemm), each kind in its own least-recently-used list, one pair of lists per communicator of
// a BLACS context (cached on it as an MPI attribute). Keys hold everything the processes agreed on for a call
// (gathered from all of them), so every process of the communicator computes the same key, and since all of
// them make the same calls on it, a hit or a miss is collective. (One list shared by all contexts would drift
// apart between processes that belong to different sets of contexts: one process would re-plan, collectively,
// while another executed a cached plan.) An evicted plan frees its communicator (and window), so any number
// of distinct calls runs with a bounded number of them. The plans of a communicator are released when it is
// freed (Cblacs_gridexit) and, for communicators still alive then, at MPI_Finalize (an MPI_COMM_SELF
// attribute) in an order every process agrees on, so that plans holding windows are freed collectively.
// Not thread-safe: one calling thread at a time.
#include <mpi.h>

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

// The plan cached on `comm` for `key`, or the one `make` builds (collective over comm) and caches, evicting the
// least recently used plan of the same kind on comm beyond its capacity. The first call on a communicator is
// collective over it (the caches agree on their release order).
// A transform key's first call is planned as a one-shot call: `make(true)` builds the plan with
// transform_options::one_shot, whose `automatic` takes point_to_point unless the messages are large (no node
// communicator, no shared window: below one_shot_window_bytes per rank, one_shot_window_bytes_oversubscribed where a
// host runs more ranks than CPUs, they cost more to create than one execution saves), and streams in small chunks on a
// node running more than twice as many ranks as CPUs. If either happened (plan_statistics::one_shot_choices), the key's
// second call shows the call repeats, and the plan is replaced, once, by the one `make(false)` builds, which later
// calls amortise: on the third call where the process has replaced none yet, otherwise on the call by which what the
// one-shot plan costs per call beyond its replacement adds up to what the process's latest replacement cost (its
// planning and its first execution's excess over its second; the saving per call is the share of the one-shot plan's
// latest execution that the latest replacement of a one-shot plan of the same kind, point_to_point or streamed through
// a window, did away with; maxima over the ranks agreed on the second call; by the 16th call at the latest). Otherwise
// (messages under 1 MiB per rank above all) the one-shot plan is what `make(false)` would build, and it stays. Both
// builds are collective, as hits and misses are.
const transform_plan& cached_plan(MPI_Comm comm, std::vector<std::int64_t> key,
                                  const std::function<transform_plan(bool one_shot)>& make);
const gemm_plan& cached_gemm_plan(MPI_Comm comm, std::vector<std::int64_t> key, const std::function<gemm_plan()>& make);

// Plans of both kinds in all caches now, plans built since the program started for keys not cached (cache
// misses), and one-shot plans replaced by repeated ones (for tests).
std::size_t cached_plan_count();
std::size_t plans_made();
std::size_t plans_promoted();
// This process's planning time of the latest such replacement, on any communicator (0: none yet).
double latest_replacement_planning_seconds();
// The latest call of a key that may still run its one-shot plan's replacement.
inline constexpr int latest_replacement_call = 16;

}  // namespace redist::scalapack
