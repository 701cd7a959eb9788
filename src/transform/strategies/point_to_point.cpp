// SPDX-License-Identifier: BSD-3-Clause
// The point_to_point strategy: one nonblocking message per peer, each unpacked as soon as it arrives while the
// local tiles are copied.
#include "point_to_point.hpp"

#include "strategy.hpp"

namespace redist::detail {
namespace {
constexpr int exchange_tag = 7301;
}  // namespace

posted_messages::posted_messages(const transform_plan::impl& plan, const tile_ops& ops) : plan_(plan), ops_(ops) {
  MPI_Comm c = plan.comm.get();
  recv_types_.reserve(plan.recvs.size());
  for (std::size_t i = 0; i < plan.recvs.size(); ++i) {
    if (plan.recv_on_node[i]) continue;
    recv_types_.push_back(mpi::describe_bytes(plan.recvs[i].bytes));
    recv_requests_.emplace_back();
    recv_index_.push_back(i);
    REDIST_MPI_CHECK(MPI_Irecv(plan.private_recv(i), recv_types_.back().count, recv_types_.back().type,
                               plan.recvs[i].rank, exchange_tag, c, &recv_requests_.back()));
  }
  send_types_.reserve(plan.sends.size());
  for (std::size_t i : plan.send_order) {
    if (plan.send_on_node[i]) continue;
    ops.pack_message(plan.sends[i], plan.private_send(i));
    send_types_.push_back(mpi::describe_bytes(plan.sends[i].bytes));
    send_requests_.emplace_back();
    REDIST_MPI_CHECK(MPI_Isend(plan.private_send(i), send_types_.back().count, send_types_.back().type,
                               plan.sends[i].rank, exchange_tag, c, &send_requests_.back()));
  }
}

bool posted_messages::unpack_next_arrival(bool wait) {
  if (arrived_ == recv_requests_.size()) return false;
  int which = MPI_UNDEFINED, flag = 0;
  if (wait) {
    REDIST_MPI_CHECK(mpi::wait_any_yielding(static_cast<int>(recv_requests_.size()), recv_requests_.data(), &which));
  } else {
    REDIST_MPI_CHECK(
        MPI_Testany(static_cast<int>(recv_requests_.size()), recv_requests_.data(), &which, &flag, MPI_STATUS_IGNORE));
    if (!flag || which == MPI_UNDEFINED) return false;
  }
  const std::size_t i = recv_index_[static_cast<std::size_t>(which)];
  ops_.unpack_message(plan_.recvs[i], plan_.private_recv(i));
  ++arrived_;
  return true;
}

void posted_messages::finish() {
  while (unpack_next_arrival(true)) {
  }
  if (!send_requests_.empty())
    REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(send_requests_.size()), send_requests_.data()));
}

namespace {

// Receives posted and sends packed and posted at start(); the local tiles and the arrivals at complete(), so that
// start() returns as soon as the messages are on their way.
class posted final : public pending_exchange {
 public:
  posted(const transform_plan::impl& plan, const tile_ops& ops) : plan_(plan), ops_(ops), messages_(plan, ops) {}
  void complete() override {
    for (const tile& t : plan_.local_tiles) ops_.local(t);
    messages_.finish();
  }

 private:
  const transform_plan::impl& plan_;
  const tile_ops& ops_;
  posted_messages messages_;
};

class point_to_point_executor final : public transform_executor {
 public:
  explicit point_to_point_executor(const transform_plan::impl& plan) : plan_(plan) {}
  void execute(const tile_ops& ops, const std::vector<std::uint64_t>& /*agreed*/) const override {
    posted_messages messages(plan_, ops);
    for (const tile& t : plan_.local_tiles) ops.local(t);
    messages.finish();
  }
  std::unique_ptr<pending_exchange> start(const tile_ops& ops,
                                          const std::vector<std::uint64_t>& /*agreed*/) const override {
    return std::make_unique<posted>(plan_, ops);
  }
  bool start_overlaps() const override { return true; }

 private:
  const transform_plan::impl& plan_;
};

}  // namespace

std::unique_ptr<transform_executor> make_point_to_point_executor(transform_plan::impl& plan, MPI_Comm /*caller*/,
                                                                 mpi::agreement& /*set_up*/) {
  return std::make_unique<point_to_point_executor>(plan);
}

}  // namespace redist::detail
