// SPDX-License-Identifier: BSD-3-Clause
// The one registry of the transform's exchange strategies, and the automatic choice among them.
#include <algorithm>
#include <string>

#include "machine/host.hpp"
#include "mpi/node_arena.hpp"
#include "redist/error.hpp"
#include "strategy.hpp"

namespace redist::detail {

// Each strategy's file defines its factory; this table is the only other place that names it. point_to_point is
// not in it: every plan makes that executor before the choice (strategy.hpp), as a step of its messages' agreement.
std::unique_ptr<transform_executor> make_alltoallv_executor(transform_plan::impl&, MPI_Comm, mpi::agreement&);
std::unique_ptr<transform_executor> make_shared_memory_executor(transform_plan::impl&, MPI_Comm, mpi::agreement&);
std::unique_ptr<transform_executor> make_torus_routed_executor(transform_plan::impl&, MPI_Comm, mpi::agreement&);

namespace {
struct registered_strategy {
  exchange_strategy strategy;
  std::unique_ptr<transform_executor> (*make)(transform_plan::impl&, MPI_Comm, mpi::agreement&);
};
constexpr registered_strategy registry[] = {
    {exchange_strategy::alltoallv, make_alltoallv_executor},
    {exchange_strategy::shared_memory, make_shared_memory_executor},
    {exchange_strategy::torus_routed, make_torus_routed_executor},
};
}  // namespace

strategy_figures strategy_figures::ride_in(mpi::agreement& planned, const transform_plan::impl& plan, MPI_Comm caller) {
  strategy_figures f;
  if (plan.options.strategy != exchange_strategy::automatic) return f;
  f.largest_send_bytes = planned.reduce_max(plan.send_bytes);
  f.some_rank_without_window = planned.reduce_max(node_arena_cached(caller) ? 0 : 1);
  return f;
}

exchange_strategy resolve_strategy(transform_plan::impl& plan, MPI_Comm caller, const mpi::agreement& planned,
                                   const strategy_figures& figures) {
  if (plan.options.strategy != exchange_strategy::automatic) {
    plan.stats.reason = std::string("requested (transform_options::strategy ") + to_string(plan.options.strategy) + ")";
    return plan.options.strategy;
  }
  if (plan.nranks == 1) {
    plan.stats.reason = "one rank: no messages, every tile is a local copy";
    return exchange_strategy::point_to_point;
  }
  // Shared memory saves two copies per byte when peers share the node; it pays off once messages are large enough
  // to amortise the two node barriers, and for a single execution once they are large enough to amortise the
  // window's creation too, unless an earlier plan left a window on this communicator that the plan can cut its
  // segment from. Decided from figures every rank has after the agreement: the largest rank's bytes (the
  // slowest rank's exchange is the plan's), and whether some rank has no window.
  const std::int64_t per_rank = planned.max(figures.largest_send_bytes);
  constexpr std::int64_t repeated_from = std::int64_t(1) << 20;
  std::int64_t shared_from = repeated_from;
  const char* threshold = "the threshold for repeated executions";
  if (plan.options.one_shot) {
    const bool oversubscribed = machine::hosts_oversubscribed(caller);
    shared_from = oversubscribed ? one_shot_window_bytes_oversubscribed : one_shot_window_bytes;
    threshold = oversubscribed ? "the one-shot threshold of an oversubscribed host" : "the one-shot threshold";
  }
  const std::string sent = "the largest rank sends " + std::to_string(per_rank) + " bytes";
  const std::string against = std::string(threshold) + " of " + std::to_string(shared_from) + " bytes";
  if (per_rank >= shared_from) {
    plan.stats.reason = sent + ", at least " + against + ": shared_memory saves two copies per byte";
    return exchange_strategy::shared_memory;
  }
  if (per_rank >= repeated_from && planned.max(figures.some_rank_without_window) == 0) {
    plan.reuses_window_only = true;
    plan.stats.reason = sent + ", below " + against +
                        " but every rank has a window an earlier plan left on this communicator: shared_memory in it";
    return exchange_strategy::shared_memory;
  }
  plan.stats.one_shot_choices = per_rank >= repeated_from;
  plan.stats.reason = sent + ", below " + against + ": point_to_point (no window to set up)";
  return exchange_strategy::point_to_point;
}

std::unique_ptr<transform_executor> make_executor(exchange_strategy strategy, transform_plan::impl& plan,
                                                  MPI_Comm caller, mpi::agreement& set_up) {
  for (const registered_strategy& r : registry)
    if (r.strategy == strategy) {
      std::unique_ptr<transform_executor> made;
      set_up.collective([&] { made = r.make(plan, caller, set_up); });
      return made;
    }
  throw invalid_argument(std::string("exchange_strategy ") + to_string(strategy) +
                         " has no set-up after the choice (point_to_point is made before it; resolve automatic first)");
}

}  // namespace redist::detail
