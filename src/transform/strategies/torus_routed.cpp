// SPDX-License-Identifier: BSD-3-Clause
// The torus_routed strategy: the rounds of the multi-phase transpose schedule of a P x Q grid, each a permutation
// routed on the torus (src/torus/exchange.cpp), carry the plan's messages one round after another.
#include <algorithm>
#include <string>

#include "mpi/agreement.hpp"
#include "redist/torus/exchange.hpp"
#include "redist/torus/schedule.hpp"
#include "strategy.hpp"

namespace redist::detail {
namespace {

class torus_routed_executor final : public transform_executor {
 public:
  explicit torus_routed_executor(const transform_plan::impl& plan);

  void execute(const tile_ops& ops, const std::vector<std::uint64_t>& /*agreed*/) const override {
    // Every message packed up front; the rounds then move them one after another (a rank starts round k + 1 once
    // its part of round k is done), and each received message is unpacked as soon as its round is done, before
    // the next round starts.
    const auto& p = plan_;
    for (std::size_t i : p.send_order) ops.pack_message(p.sends[i], p.private_send(i));
    for (const tile& t : p.local_tiles) ops.local(t);
    std::vector<const void*> round_out(round_send_.size(), nullptr);
    std::vector<void*> round_in(round_recv_.size(), nullptr);
    for (std::size_t k = 0; k < round_send_.size(); ++k) {
      if (round_send_[k] != no_message) round_out[k] = p.private_send(round_send_[k]);
      if (round_recv_[k] != no_message) round_in[k] = p.private_recv(round_recv_[k]);
    }
    rounds_.execute(round_in, round_out, [&](int k) {
      const std::size_t i = round_recv_[static_cast<std::size_t>(k)];
      if (i != no_message) ops.unpack_message(p.recvs[i], p.private_recv(i));
    });
  }

 private:
  const transform_plan::impl& plan_;
  // The rounds, routed on the torus, and per round the index in sends (recvs) of the message it carries
  // (no_message: none, e.g. the round this rank keeps).
  torus::routed_phases_plan rounds_;
  static constexpr std::size_t no_message = ~std::size_t(0);
  std::vector<std::size_t> round_send_, round_recv_;
};

torus_routed_executor::torus_routed_executor(const transform_plan::impl& plan) : plan_(plan) {
  // What torus_routed needs, checked on every rank and agreed before anything is built: a torus, one
  // P x Q grid of all ranks under every layout, and this rank's messages only between pairs of the
  // multi-phase transpose schedule of that grid, whose rounds then carry them.
  const std::string needs =
      "; exchange_strategy::torus_routed needs a transpose between block-cyclic layouts with "
      "equal blocks on one P x Q grid of all ranks (A = op(B), both on that grid)";
  std::string problem;
  const grid_layout* grid = plan.jobs.empty() ? nullptr : &plan.jobs.front().a;
  if (!plan.options.torus)
    problem =
        "exchange_strategy::torus_routed needs transform_options::torus (the torus network and the node "
        "of every rank); it is null";
  if (problem.empty() && plan.jobs.size() != plan.reshape_jobs.size())
    problem =
        "exchange_strategy::torus_routed plans matrix jobs (make_transform_plan); this plan's jobs are N-dimensional" +
        needs;
  for (std::size_t k = 0; k < plan.jobs.size() && problem.empty(); ++k)
    for (const grid_layout* l : {&plan.jobs[k].a, &plan.jobs[k].b})
      if (problem.empty() && (l->proc_rows() != grid->proc_rows() || l->proc_cols() != grid->proc_cols() ||
                              l->grid_ranks() != grid->grid_ranks()))
        problem = "job " + std::to_string(k) + ": the layouts of A and B are on different process grids (" +
                  std::to_string(l->proc_rows()) + " x " + std::to_string(l->proc_cols()) + " vs " +
                  std::to_string(grid->proc_rows()) + " x " + std::to_string(grid->proc_cols()) +
                  " or other rank placement)" + needs;
  std::vector<int> grid_index(static_cast<std::size_t>(plan.nranks), -1);  // by rank: its row-major grid position
  if (problem.empty() && grid) {
    const std::vector<int>& ranks = grid->grid_ranks();
    for (std::size_t g = 0; g < ranks.size() && problem.empty(); ++g) {
      const int r = ranks[g];
      if (r < 0 || r >= plan.nranks || grid_index[static_cast<std::size_t>(r)] >= 0)
        problem = "the process grid places rank " + std::to_string(r) + " twice or outside the communicator" + needs;
      else
        grid_index[static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
    if (problem.empty() && static_cast<std::int64_t>(ranks.size()) != plan.nranks)
      problem = "the process grid is " + std::to_string(grid->proc_rows()) + " x " + std::to_string(grid->proc_cols()) +
                " but the communicator has " + std::to_string(plan.nranks) + " ranks" + needs;
  }
  std::vector<int> destination;
  std::vector<std::int64_t> bytes;
  if (problem.empty() && grid) {
    const torus::transpose_schedule schedule =
        torus::multiphase_transpose_schedule(grid->proc_rows(), grid->proc_cols());
    const auto me = static_cast<std::size_t>(grid_index[static_cast<std::size_t>(plan.rank)]);
    const std::vector<int>& ranks = grid->grid_ranks();
    std::vector<std::size_t> send_of(static_cast<std::size_t>(plan.nranks), no_message), recv_of = send_of;  // by peer
    for (std::size_t i = 0; i < plan.sends.size(); ++i) send_of[static_cast<std::size_t>(plan.sends[i].rank)] = i;
    for (std::size_t i = 0; i < plan.recvs.size(); ++i) recv_of[static_cast<std::size_t>(plan.recvs[i].rank)] = i;
    std::size_t carried_sends = 0, carried_recvs = 0;
    for (int k = 0; k < schedule.phases(); ++k) {
      const int to = ranks[static_cast<std::size_t>(schedule.send_to[static_cast<std::size_t>(k)][me])];
      const int from = ranks[static_cast<std::size_t>(schedule.receive_from[static_cast<std::size_t>(k)][me])];
      const std::size_t s = to == plan.rank ? no_message : send_of[static_cast<std::size_t>(to)];
      const std::size_t r = from == plan.rank ? no_message : recv_of[static_cast<std::size_t>(from)];
      carried_sends += s != no_message;
      carried_recvs += r != no_message;
      destination.push_back(to);
      bytes.push_back(s == no_message ? 0 : plan.sends[s].bytes);
      round_send_.push_back(s);
      round_recv_.push_back(r);
    }
    auto position = [&](int r) {
      const int g = grid_index[static_cast<std::size_t>(r)];
      return "(" + std::to_string(g / grid->proc_cols()) + ", " + std::to_string(g % grid->proc_cols()) + ")";
    };
    // A message the schedule does not carry: name the first such peer.
    auto unscheduled = [&](const std::vector<peer_message>& messages, const std::vector<std::size_t>& carried,
                           const char* verb) {
      for (std::size_t i = 0; i < messages.size(); ++i)
        if (std::find(carried.begin(), carried.end(), i) == carried.end())
          return "rank " + std::to_string(plan.rank) + " at grid position " + position(plan.rank) + " " + verb +
                 " rank " + std::to_string(messages[i].rank) + " at " + position(messages[i].rank) +
                 ", a pair the multi-phase transpose schedule of the " + std::to_string(grid->proc_rows()) + " x " +
                 std::to_string(grid->proc_cols()) +
                 " grid never forms ((p, q) and (p', q') exchange only when p = q' "
                 "and q = p' mod gcd(P, Q))" +
                 needs;
      return std::string();
    };
    if (carried_sends != plan.sends.size())
      problem = unscheduled(plan.sends, round_send_, "sends to");
    else if (carried_recvs != plan.recvs.size())
      problem = unscheduled(plan.recvs, round_recv_, "receives from");
  }
  mpi::agree_on(plan.comm.get(), mpi::error_kind::invalid_argument, problem);
  rounds_ = torus::make_routed_phases_plan(plan.comm.get(), *plan.options.torus, destination, bytes,
                                           plan.options.torus_routing);
}

}  // namespace

std::unique_ptr<transform_executor> make_torus_routed_executor(transform_plan::impl& plan, MPI_Comm /*caller*/,
                                                               mpi::agreement& /*set_up*/) {
  return std::make_unique<torus_routed_executor>(plan);
}

}  // namespace redist::detail
