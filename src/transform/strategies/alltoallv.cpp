// SPDX-License-Identifier: BSD-3-Clause
// The alltoallv strategy: every message packed, one MPI_Alltoallv (MPI_Alltoallw with byte datatypes where counts
// exceed int and the MPI has no large counts), then every message unpacked.
#include <algorithm>

#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "strategy.hpp"

namespace redist::detail {
namespace {

class alltoallv_executor final : public transform_executor {
 public:
  explicit alltoallv_executor(const transform_plan::impl& plan) : plan_(plan) {
    // Decided here, the same on every rank: the totals bound every count and displacement.
    if (!mpi::has_large_counts())
      wide_ = mpi::on_any_rank(plan.comm.get(), std::max(plan.send_bytes, plan.recv_bytes) > mpi::int_limit());
  }

  void execute(const tile_ops& ops, const std::vector<std::uint64_t>& /*agreed*/) const override {
    const auto& p = plan_;
    for (std::size_t i = 0; i < p.sends.size(); ++i) ops.pack_message(p.sends[i], p.private_send(i));
    const auto n = static_cast<std::size_t>(p.nranks);
    std::vector<std::int64_t> scount(n, 0), rcount(n, 0), sdispl(n, 0), rdispl(n, 0);
    for (const auto& m : p.sends) {
      scount[static_cast<std::size_t>(m.rank)] = m.bytes;
      sdispl[static_cast<std::size_t>(m.rank)] = m.byte_offset;
    }
    for (const auto& m : p.recvs) {
      rcount[static_cast<std::size_t>(m.rank)] = m.bytes;
      rdispl[static_cast<std::size_t>(m.rank)] = m.byte_offset;
    }
    std::byte dummy{};
    std::byte* sbuf = p.send_buffer ? p.send_buffer.get() : &dummy;
    std::byte* rbuf = p.recv_buffer ? p.recv_buffer.get() : &dummy;
    // MPI's collective blocks unwatched (mpi::alltoallv): every rank has arrived first, in a watched wait, so
    // that it cannot wait for a missing one. With check_consistency the execution's agreement was that wait.
    if (!p.options.check_consistency) REDIST_MPI_CHECK(mpi::barrier_yielding(p.comm.get()));
    mpi::alltoallv(sbuf, scount.data(), sdispl.data(), MPI_BYTE, rbuf, rcount.data(), rdispl.data(), MPI_BYTE,
                   p.comm.get(), wide_);
    for (const tile& t : p.local_tiles) ops.local(t);
    for (std::size_t i = 0; i < p.recvs.size(); ++i) ops.unpack_message(p.recvs[i], p.private_recv(i));
  }

 private:
  const transform_plan::impl& plan_;
  bool wide_ = false;  // without MPI-4 large counts: some rank's messages exceed int
};

}  // namespace

std::unique_ptr<transform_executor> make_alltoallv_executor(transform_plan::impl& plan, MPI_Comm /*caller*/,
                                                            mpi::agreement& /*set_up*/) {
  return std::make_unique<alltoallv_executor>(plan);
}

}  // namespace redist::detail
