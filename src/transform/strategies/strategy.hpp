// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) The exchange strategies of a transform plan as objects. A strategy moves the plan's messages its own
// way: its constructor does the set-up at plan time (collective where it must be), execute() runs at every
// execution. The one registry (registry.cpp) maps exchange_strategy to a strategy: adding one touches its own
// file and that table.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transform/detail/plan_impl.hpp"
#include "transform/tile_ops.hpp"

namespace redist::detail {

// An exchange a strategy has started (transform_plan::start) and that complete() finishes: every message unpacked,
// every local tile applied.
class pending_exchange {
 public:
  virtual ~pending_exchange() = default;
  virtual void complete() = 0;
};

class transform_executor {
 public:
  virtual ~transform_executor() = default;
  // On every rank before the agreement that precedes each execution: values the strategy needs minimised over
  // the ranks (shared_memory: whether every rank's B lies in one node_buffer). buffers: null where this rank's
  // buffers are wrong (the execution then throws on every rank after the agreement).
  virtual std::vector<std::uint64_t> before_agreement(const std::vector<job_buffers>* /*buffers*/) const { return {}; }
  // Where the plan skips that agreement (transform_options::check_consistency off), the strategy reduces its
  // values itself, over whom it needs.
  virtual void reduce_without_agreement(std::vector<std::uint64_t>& /*values*/) const {}
  // Moves every message and applies every tile. agreed: before_agreement's values, minimised over the ranks.
  virtual void execute(const tile_ops& ops, const std::vector<std::uint64_t>& agreed) const = 0;
  // Split-phase execution: posts the messages and returns what completes them. The default runs the whole
  // exchange here and returns null: strategies whose node peers step through shared memory together
  // (shared_memory, torus_routed) or that rely on a blocking collective (alltoallv, see mpi::alltoallv) do.
  virtual std::unique_ptr<pending_exchange> start(const tile_ops& ops, const std::vector<std::uint64_t>& agreed) const {
    execute(ops, agreed);
    return nullptr;
  }
  // Whether start() returns with messages in flight (plan_statistics::start_overlaps).
  virtual bool start_overlaps() const { return false; }
};

// One start()ed execution of a plan, until its wait(): the buffers it was given (the tile operations refer to
// them), what completes the exchange, and the OpenMP team size the caller had.
struct started_execution {
  std::vector<job_buffers> buffers;
  tile_ops ops;
  std::unique_ptr<pending_exchange> pending;
  started_execution(const std::vector<job_buffers>& given, const transform_plan::impl& plan);
  started_execution(const started_execution&) = delete;
  started_execution& operator=(const started_execution&) = delete;
};

// The automatic choice: shared_memory or point_to_point by message volume; any other value as is. Its figures ride
// in `planned`, the agreement on the plan's messages (ride_in before its conclusion, resolve_strategy after it),
// so every rank makes the same choice without a collective of its own.
struct strategy_figures {
  std::size_t largest_send_bytes = 0;  // slots of `planned` (automatic only)
  std::size_t some_rank_without_window = 0;
  static strategy_figures ride_in(mpi::agreement& planned, const transform_plan::impl& plan, MPI_Comm caller);
};
exchange_strategy resolve_strategy(transform_plan::impl& plan, MPI_Comm caller, const mpi::agreement& planned,
                                   const strategy_figures& figures);
// The executor every plan makes before the choice (local): kept where point_to_point is chosen.
std::unique_ptr<transform_executor> make_point_to_point_executor(transform_plan::impl& plan, MPI_Comm caller,
                                                                 mpi::agreement& set_up);
// The registry: the executor of a resolved strategy other than point_to_point, set up (collective) in a step of `set_up`; a strategy whose
// set-up makes several collectives makes each a step of its own, on every rank whatever failed before. caller:
// the communicator make_transform_plan was given (node-level state is cached on it). Null, on every rank, where a plan that
// may only reuse cached windows (transform_plan::impl::reuses_window_only) found no room in some node's; null on
// a rank whose set-up failed (set_up's conclusion raises the error).
std::unique_ptr<transform_executor> make_executor(exchange_strategy strategy, transform_plan::impl& plan,
                                                  MPI_Comm caller, mpi::agreement& set_up);

}  // namespace redist::detail
