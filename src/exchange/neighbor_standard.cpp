// SPDX-License-Identifier: BSD-3-Clause
// The strategies' common base (persistent requests, load accounting, direct messages and copies to self) and
// the standard strategy, which is that base alone: persistent point-to-point, one message per edge.
#include <string>
#include <vector>

#include "neighbor_detail.hpp"

namespace redist::exchange::detail {

request_list::~request_list() {
  if (mpi::finalized()) return;
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}
void request_list::start_all() {
  if (!requests_.empty()) REDIST_MPI_CHECK(MPI_Startall(static_cast<int>(requests_.size()), requests_.data()));
}
void request_list::wait_all(MPI_Comm comm) {
  if (!requests_.empty())
    REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(requests_.size()), requests_.data(), comm));
}

MPI_Request strategy::send_init(const void* buf, std::int64_t count, MPI_Datatype type, int dest, int tag) {
  return mpi::send_init(buf, count, type, dest, tag, comm, owned_types);
}
MPI_Request strategy::recv_init(void* buf, std::int64_t count, MPI_Datatype type, int source, int tag) {
  return mpi::recv_init(buf, count, type, source, tag, comm, owned_types);
}

void strategy::record(phase_tag phase, locality where, direction way, std::int64_t bytes) {
  load& l = loads[phase][where][way];
  l.messages += 1;
  l.bytes += bytes;
}

MPI_Datatype strategy::keep(mpi::datatype_handle t) {
  owned_types.push_back(std::move(t));
  return owned_types.back().get();
}

void strategy::build_direct(const layout_facts& f, bool own_region_only) {
  const int mine = f.region_of[f.me];
  const auto take = [&](int peer) { return !own_region_only || f.region_of[peer] == mine; };
  const auto locality_of = [&](int peer) { return f.region_of[peer] == mine ? intra : inter; };
  std::vector<int> self_sends, self_recvs;
  for (direction way : {outbound, inbound}) {  // sends first, then receives
    const std::vector<edge>& edges = way == outbound ? sends : recvs;
    for (size_t i = 0; i < edges.size(); ++i) {
      const edge& e = edges[i];
      if (e.bytes == 0 || !take(e.peer)) continue;
      if (e.peer == f.me) {
        (way == outbound ? self_sends : self_recvs).push_back(static_cast<int>(i));
        continue;
      }
      const int tag = tag_of(e.occurrence, direct_phase);
      direct.push_back(way == outbound ? send_init(sendbuf + e.offset, e.count, sendtype, e.peer, tag)
                                       : recv_init(recvbuf + e.offset, e.count, recvtype, e.peer, tag));
      record(direct_phase, locality_of(e.peer), way, e.bytes);
    }
  }
  for (size_t k = 0; k < self_sends.size(); ++k) {  // matched in order, as MPI matches repeated edges
    self_copies.emplace_back(self_sends[k], self_recvs[k]);
    copied_bytes += 2 * sends[self_sends[k]].bytes;
  }
}

void strategy::copy_to_self() const {
  for (auto [s, r] : self_copies)  // the caller's datatypes on both sides: one copy
    mpi::local_copy(sendbuf + sends[s].offset, sends[s].count, sendtype, recvbuf + recvs[r].offset, recvs[r].count,
                    recvtype, comm);
}

namespace {

class standard final : public strategy {
 public:
  standard(const plan_setup& setup, const layout_facts& f) : strategy(setup) { build_direct(f, false); }
  void start() override {
    direct.start_all();
    copy_to_self();
  }
  void wait() override { direct.wait_all(); }
};

}  // namespace

strategy_builder prepare_standard(const strategy_context& c) {
  return [&f = c.regions](const plan_setup& setup) { return std::make_unique<standard>(setup, f); };
}

}  // namespace redist::exchange::detail
