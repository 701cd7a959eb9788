// SPDX-License-Identifier: BSD-3-Clause
#include "gathered.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>

#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"

namespace redist::relabel {

namespace {

// Makes every collective call of a sequence even after one failed on this rank (a failed call was still made, or
// an injected failure: fault_injection.hpp), so that no rank leaves the others waiting in a later one; the first
// failure is thrown once the sequence is done.
class every_call {
 public:
  template <class Call>
  void operator()(Call&& call) {
    try {
      call();
    } catch (...) {
      if (!first_) first_ = std::current_exception();
    }
  }
  void throw_first() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
};

}  // namespace

label_graph gather_label_graph(const label_graph& mine, std::int64_t largest_share, int root, MPI_Comm comm,
                               std::int64_t stage_packages) {
  const int size = mpi::size(comm), rank = mpi::rank(comm);
  const bool is_root = rank == root;
  const auto ranks = static_cast<size_t>(size);
  label_graph out;
  out.nranks = mine.nranks;

  // Each label's package count (one label per rank), so root knows where every share goes.
  const std::int64_t my_count = mine.package_count();
  if (is_root) out.label_start.assign(ranks + 1, 0);
  every_call calls;
  calls([&] {
    REDIST_MPI_CHECK(mpi::gather_yielding(&my_count, 1, MPI_INT64_T, is_root ? out.label_start.data() + 1 : nullptr, 1,
                                          MPI_INT64_T, root, comm));
  });
  if (is_root) {
    for (size_t x = 1; x < out.label_start.size(); ++x) out.label_start[x] += out.label_start[x - 1];
    out.src.resize(static_cast<size_t>(out.package_count()));
    out.volume.resize(out.src.size());
  }
  const auto share_start = [&](size_t k) { return out.label_start[k]; };
  const auto share_size = [&](size_t k) { return out.label_start[k + 1] - out.label_start[k]; };

  // Rounds: each rank sends up to per_round packages of its share, so that one round's counts and
  // displacements (at most size * per_round, or size) fit in an int; root copies them from a staging buffer.
  const std::int64_t per_round = std::max<std::int64_t>(1, stage_packages / size);
  const std::int64_t rounds = (largest_share + per_round - 1) / per_round;
  const auto share_part = [&](std::int64_t share, std::int64_t round) {
    return std::clamp<std::int64_t>(share - round * per_round, 0, per_round);
  };
  std::vector<int> round_count(is_root ? ranks : 0), round_displacement(is_root ? ranks : 0);
  std::vector<int> staged_src;
  std::vector<std::int64_t> staged_volume;
  if (is_root && rounds > 0) {
    staged_src.resize(static_cast<size_t>(std::min<std::int64_t>(per_round * size, out.package_count())));
    staged_volume.resize(staged_src.size());
  }
  for (std::int64_t round = 0; round < rounds; ++round) {
    const auto my_part = static_cast<int>(share_part(mine.package_count(), round));
    const auto my_offset = static_cast<size_t>(std::min(round * per_round, mine.package_count()));
    if (is_root) {
      int staged = 0;
      for (size_t k = 0; k < ranks; ++k) {
        round_count[k] = static_cast<int>(share_part(share_size(k), round));
        round_displacement[k] = staged;
        staged += round_count[k];
      }
    }
    calls([&] {
      REDIST_MPI_CHECK(mpi::gatherv_yielding(mine.src.data() + my_offset, my_part, MPI_INT, staged_src.data(),
                                             round_count.data(), round_displacement.data(), MPI_INT, root, comm));
    });
    calls([&] {
      REDIST_MPI_CHECK(mpi::gatherv_yielding(mine.volume.data() + my_offset, my_part, MPI_INT64_T, staged_volume.data(),
                                             round_count.data(), round_displacement.data(), MPI_INT64_T, root, comm));
    });
    if (!is_root) continue;
    for (size_t k = 0; k < ranks; ++k) {
      const auto from = static_cast<size_t>(round_displacement[k]);
      const auto to = static_cast<size_t>(share_start(k) + round * per_round);
      std::copy_n(staged_src.begin() + static_cast<std::ptrdiff_t>(from), round_count[k],
                  out.src.begin() + static_cast<std::ptrdiff_t>(to));
      std::copy_n(staged_volume.begin() + static_cast<std::ptrdiff_t>(from), round_count[k],
                  out.volume.begin() + static_cast<std::ptrdiff_t>(to));
    }
  }
  calls.throw_first();
  return out;
}

relabeling find_relabeling_gathered(MPI_Comm comm, const label_graph& mine, std::int64_t largest_share,
                                    const relabel_cost& cost, solver s) {
  const int nranks = mpi::size(comm);
  const bool is_root = mpi::rank(comm) == 0;
  relabeling result;
  mpi::agreement solved(comm);
  solved.collective([&] {
    label_graph all = gather_label_graph(mine, largest_share, 0, comm);
    if (is_root) result = find_relabeling(all, cost, s);
  });
  solved.conclude();

  // Rank 0's figures, then its permutation.
  struct figures {
    double cost_before, cost_after, solve_seconds;
    std::int64_t remote_volume_before, remote_volume_after, messages_before, messages_after, max_rank_volume_before,
        max_rank_volume_after;
  } f{result.cost_before,          result.cost_after,      result.solve_seconds,  result.remote_volume_before,
      result.remote_volume_after,  result.messages_before, result.messages_after, result.max_rank_volume_before,
      result.max_rank_volume_after};
  REDIST_MPI_CHECK(mpi::bcast_yielding(&f, static_cast<int>(sizeof f), MPI_BYTE, 0, comm));
  result.cost_before = f.cost_before;
  result.cost_after = f.cost_after;
  result.solve_seconds = f.solve_seconds;
  result.remote_volume_before = f.remote_volume_before;
  result.remote_volume_after = f.remote_volume_after;
  result.messages_before = f.messages_before;
  result.messages_after = f.messages_after;
  result.max_rank_volume_before = f.max_rank_volume_before;
  result.max_rank_volume_after = f.max_rank_volume_after;
  result.new_rank_of.resize(static_cast<size_t>(nranks));
  REDIST_MPI_CHECK(mpi::bcast_yielding(result.new_rank_of.data(), nranks, MPI_INT, 0, comm));
  return result;
}

}  // namespace redist::relabel
