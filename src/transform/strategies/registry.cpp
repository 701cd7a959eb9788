// The one registry of the transform's exchange strategies, and the automatic choice among them.
#include <algorithm>
#include <string>

#include "redist/error.hpp"
#include "../detail/node_arena.hpp"
#include "strategy.hpp"

namespace redist::detail {

// Each strategy's file defines its factory; this table is the only other place that names it.
std::unique_ptr<transform_executor> make_point_to_point_executor(transform_plan::impl&, MPI_Comm);
std::unique_ptr<transform_executor> make_alltoallv_executor(transform_plan::impl&, MPI_Comm);
std::unique_ptr<transform_executor> make_shared_memory_executor(transform_plan::impl&, MPI_Comm);
std::unique_ptr<transform_executor> make_torus_routed_executor(transform_plan::impl&, MPI_Comm);

namespace {
struct registered_strategy {
  exchange_strategy strategy;
  std::unique_ptr<transform_executor> (*make)(transform_plan::impl&, MPI_Comm);
};
constexpr registered_strategy registry[] = {
    {exchange_strategy::point_to_point, make_point_to_point_executor},
    {exchange_strategy::alltoallv, make_alltoallv_executor},
    {exchange_strategy::shared_memory, make_shared_memory_executor},
    {exchange_strategy::torus_routed, make_torus_routed_executor},
};
}  // namespace

exchange_strategy resolve_strategy(transform_plan::impl& plan, MPI_Comm caller) {
  if (plan.options.strategy != exchange_strategy::automatic) return plan.options.strategy;
  // Shared memory saves two copies per byte when peers share the node; it pays off once messages are large enough
  // to amortise the two node barriers, and for a single execution once they are large enough to amortise the
  // window's creation too, unless an earlier plan left a window on this communicator that the plan can cut its
  // segment from. Decided collectively so that all ranks agree: the bytes summed, and how many ranks have no window.
  std::int64_t mine[2] = {plan.send_bytes, node_arena_cached(caller) ? 0 : 1}, total[2] = {0, 0};
  REDIST_MPI_CHECK(mpi::allreduce_yielding(mine, total, 2, MPI_INT64_T, MPI_SUM, plan.comm.get()));
  const std::int64_t per_rank = total[0] / std::max(plan.nranks, 1);
  constexpr std::int64_t repeated_from = std::int64_t(1) << 20;
  std::int64_t shared_from = repeated_from;
  if (plan.options.one_shot && plan.nranks > 1)
    shared_from = mpi::hosts_oversubscribed(caller) ? one_shot_window_bytes_oversubscribed : one_shot_window_bytes;
  exchange_strategy chosen = plan.nranks > 1 && per_rank >= shared_from ? exchange_strategy::shared_memory
                                                                        : exchange_strategy::point_to_point;
  if (chosen == exchange_strategy::point_to_point && plan.nranks > 1 && per_rank >= repeated_from && total[1] == 0) {
    chosen = exchange_strategy::shared_memory;
    plan.reuses_window_only = true;
  }
  plan.stats.one_shot_choices = chosen == exchange_strategy::point_to_point && per_rank >= repeated_from;
  return chosen;
}

std::unique_ptr<transform_executor> make_executor(exchange_strategy strategy, transform_plan::impl& plan,
                                                  MPI_Comm caller) {
  for (const registered_strategy& r : registry)
    if (r.strategy == strategy) return r.make(plan, caller);
  throw invalid_argument(std::string("exchange_strategy ") + to_string(strategy) +
                         " has no executor (resolve automatic first)");
}

}  // namespace redist::detail
