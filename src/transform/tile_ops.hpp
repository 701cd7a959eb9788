// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) The operations every strategy applies to tiles: pack op(B)'s part of a tile into a message, unpack a
// message's tile into A (A = alpha * op(B) + beta * A applied on receipt), and transform a tile straight from a B
// in memory (this rank's, or a node peer's in a node_buffer). Typed by each tile's job.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "detail/plan_data.hpp"
#include "redist/transform/kernels.hpp"
#include "redist/transform/plan.hpp"

namespace redist::detail {

// The part [skip, skip + length) of a run.
run sub_run(const run& r, std::int64_t skip, std::int64_t length);

// The tile operations of one execution: the plan's jobs with this execution's buffers and store policies (A's
// per job: job_plan::result_stores).
struct tile_ops {
  const std::vector<job_plan>& plans;
  const std::vector<job_buffers>& buffers;
  kernels::store_hint pack_stores;  // writing messages

  // alpha == 0: B is not read (packing writes nothing; the receiver does not read the bytes either).
  bool skips_source(int job) const;
  void pack(const tile& t, std::byte* message) const;
  void unpack(const tile& t, const std::byte* message) const;
  // A tile this rank keeps: from its own B.
  void local(const tile& t) const;
  // From a B whose storage b_view describes (a node peer's B read in place).
  void direct(const tile& t, const void* b, const storage_view& b_view) const;
  void pack_message(const peer_message& m, std::byte* dst) const;
  void unpack_message(const peer_message& m, const std::byte* src) const;
};

}  // namespace redist::detail
