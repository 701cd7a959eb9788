// SPDX-License-Identifier: BSD-3-Clause
// The cost model: the predicted time of automatic's candidates, and the calibration of its figures.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <vector>

#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "neighbor_detail.hpp"

namespace redist::exchange {
namespace detail {
namespace {

// One rank's share of a plan's predicted time: per phase, the slower of its sending and receiving side.
struct rank_costs {
  double direct = 0, gather = 0, global = 0, scatter = 0, copy = 0;
};

rank_costs costs_of(const strategy& p, const cost_model& m) {
  const double latency[2] = {m.intra_latency, m.inter_latency};
  const double per_message[2] = {m.intra_seconds_per_message, m.inter_seconds_per_message};
  const double per_byte[2] = {m.intra_seconds_per_byte, m.inter_seconds_per_byte};
  const auto phase = [&](phase_tag ph) {
    double worst = 0;
    for (int way : {outbound, inbound}) {
      double side = 0, wait = 0;  // messages in flight overlap: one latency, the longest
      for (int where : {intra, inter}) {
        const load& l = p.loads[ph][where][way];
        if (l.messages > 0) wait = std::max(wait, latency[where]);
        side += per_message[where] * static_cast<double>(l.messages) + per_byte[where] * static_cast<double>(l.bytes);
      }
      worst = std::max(worst, wait + side);
    }
    return worst;
  };
  return {phase(direct_phase), phase(gather_phase), phase(global_phase), phase(scatter_phase),
          m.copy_seconds_per_byte * static_cast<double>(p.copied_bytes)};
}

std::int64_t inter_region_bytes_sent(const strategy& p) {
  std::int64_t bytes = 0;
  for (const auto& ph : p.loads) bytes += ph[inter][outbound].bytes;
  return bytes;
}

// Seconds per one-way message of `bytes` with `partner` (none: -1), by ping-pong; the lower rank serves first.
double ping_pong(MPI_Comm comm, int me, int partner, std::vector<char>& buffer, std::int64_t bytes, int repetitions) {
  if (partner < 0) return 0;
  const auto once = [&] {
    if (me < partner) {
      REDIST_MPI_CHECK(MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm));
      REDIST_MPI_CHECK(MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE));
    } else {
      REDIST_MPI_CHECK(MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE));
      REDIST_MPI_CHECK(MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm));
    }
  };
  once();  // connection set-up and first touch stay out of the figure
  const double begin = MPI_Wtime();
  for (int k = 0; k < repetitions; ++k) once();
  return (MPI_Wtime() - begin) / (2.0 * repetitions);
}

// Seconds per round of `burst` small messages to `partner` answered by one (none: -1): two latencies plus
// `burst` gaps.
double burst_round(MPI_Comm comm, int me, int partner, int burst, int repetitions) {
  if (partner < 0) return 0;
  std::vector<std::int64_t> words(static_cast<size_t>(burst));
  std::vector<MPI_Request> requests(static_cast<size_t>(burst));
  const auto once = [&] {
    if (me < partner) {
      for (int k = 0; k < burst; ++k)
        REDIST_MPI_CHECK(MPI_Isend(&words[k], 1, MPI_INT64_T, partner, k, comm, &requests[k]));
      REDIST_MPI_CHECK(MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE));
      REDIST_MPI_CHECK(MPI_Recv(nullptr, 0, MPI_BYTE, partner, burst, comm, MPI_STATUS_IGNORE));
    } else {
      for (int k = 0; k < burst; ++k)
        REDIST_MPI_CHECK(MPI_Irecv(&words[k], 1, MPI_INT64_T, partner, k, comm, &requests[k]));
      REDIST_MPI_CHECK(MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE));
      REDIST_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, partner, burst, comm));
    }
  };
  once();
  const double begin = MPI_Wtime();
  for (int k = 0; k < repetitions; ++k) once();
  return (MPI_Wtime() - begin) / repetitions;
}

cost_model measure(MPI_Comm comm, const layout_facts& f) {
  constexpr std::int64_t small = 8, large = 64 * 1024;
  constexpr int burst = 16;
  const int mine = f.region_of[f.me];
  const auto& members = f.members[mine];
  const int index = static_cast<int>(std::find(members.begin(), members.end(), f.me) - members.begin());
  // Partners: neighbours inside the region, and the same index in the paired region.
  const int intra_index = index ^ 1;
  const int intra_partner = intra_index < static_cast<int>(members.size()) ? members[intra_index] : -1;
  const int other = mine ^ 1;
  const int inter_partner =
      other < static_cast<int>(f.members.size()) && index < static_cast<int>(f.members[other].size())
          ? f.members[other][index]
          : -1;
  std::vector<char> buffer(static_cast<size_t>(large));
  // Per locality: one-way small, one-way large (inter: one pair per region pair), a round of one message,
  // a round of `burst`; then inter large with all pairs at once, the copy rate, and whether inter pairs exist.
  double t[12] = {};
  for (int k = 0; k < 2; ++k) {
    const int partner = k == 0 ? intra_partner : inter_partner;
    REDIST_MPI_CHECK(mpi::barrier_yielding(comm));
    t[4 * k] = ping_pong(comm, f.me, partner, buffer, small, 20);
    REDIST_MPI_CHECK(mpi::barrier_yielding(comm));
    t[4 * k + 1] = ping_pong(comm, f.me, k == 1 && index > 0 ? -1 : partner, buffer, large, 5);
    REDIST_MPI_CHECK(mpi::barrier_yielding(comm));
    t[4 * k + 2] = burst_round(comm, f.me, partner, 1, 10);
    REDIST_MPI_CHECK(mpi::barrier_yielding(comm));
    t[4 * k + 3] = burst_round(comm, f.me, partner, burst, 10);
  }
  REDIST_MPI_CHECK(mpi::barrier_yielding(comm));
  t[8] = ping_pong(comm, f.me, inter_partner, buffer, large, 5);
  std::vector<char> copy_target(buffer.size());
  const double begin = MPI_Wtime();
  for (int k = 0; k < 20; ++k) {
    std::memcpy(copy_target.data(), buffer.data(), buffer.size());
    buffer[static_cast<size_t>(k)] = copy_target[static_cast<size_t>(k) + 1];  // keeps the copies observable
  }
  t[9] = (MPI_Wtime() - begin) / (20.0 * static_cast<double>(large));
  t[10] = inter_partner >= 0 ? 1.0 : 0.0;
  t[11] = intra_partner >= 0 ? 1.0 : 0.0;
  REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, t, 12, MPI_DOUBLE, MPI_MAX, comm));

  cost_model m;  // figures that cannot be measured (one region, or one rank per region) keep their defaults
  const auto fit = [&](const double* w, double& latency, double& per_message, double& per_byte) {
    per_byte = std::max(0.0, (w[1] - w[0]) / static_cast<double>(large - small));
    per_message = std::max(0.0, (w[3] - w[2]) / (burst - 1));
    latency = std::max(0.0, w[0] - per_message - per_byte * static_cast<double>(small));
  };
  if (t[11] > 0) fit(t, m.intra_latency, m.intra_seconds_per_message, m.intra_seconds_per_byte);
  if (t[10] > 0) {
    fit(t + 4, m.inter_latency, m.inter_seconds_per_message, m.inter_seconds_per_byte);
    const double pairs = static_cast<double>(std::min_element(f.members.begin(), f.members.end(), [](auto& x, auto& y) {
                                               return x.size() < y.size();
                                             })->size());
    m.region_seconds_per_byte = std::max(0.0, t[8] - m.inter_latency) / (pairs * static_cast<double>(large));
  }
  m.copy_seconds_per_byte = t[9];
  m.source = "calibrated";
  return m;
}

}  // namespace

// Phases run one after another (the gather completes before the inter-region messages leave, which complete
// before the scatter), each as slow as its slowest rank; the direct messages overlap them; a region's
// inter-region bytes share its injection rate.
std::vector<double> predict(const std::vector<std::unique_ptr<strategy>>& candidates, const layout_facts& f,
                            const cost_model& m, MPI_Comm comm) {
  const size_t n = candidates.size(), nregions = f.members.size();
  std::vector<double> worst(5 * n), region_bytes(n * nregions, 0.0);
  for (size_t c = 0; c < n; ++c) {
    const rank_costs r = costs_of(*candidates[c], m);
    const double values[5] = {r.direct, r.gather, r.global, r.scatter, r.copy};
    std::copy(values, values + 5, worst.begin() + static_cast<std::ptrdiff_t>(5 * c));
    region_bytes[c * nregions + f.region_of[f.me]] = static_cast<double>(inter_region_bytes_sent(*candidates[c]));
  }
  REDIST_MPI_CHECK(
      mpi::allreduce_yielding(MPI_IN_PLACE, worst.data(), static_cast<int>(worst.size()), MPI_DOUBLE, MPI_MAX, comm));
  REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, region_bytes.data(), static_cast<int>(region_bytes.size()),
                                           MPI_DOUBLE, MPI_SUM, comm));
  std::vector<double> seconds(n);
  for (size_t c = 0; c < n; ++c) {
    const double* w = worst.data() + 5 * c;
    const double injection = m.region_seconds_per_byte *
                             *std::max_element(region_bytes.begin() + static_cast<std::ptrdiff_t>(c * nregions),
                                               region_bytes.begin() + static_cast<std::ptrdiff_t>((c + 1) * nregions));
    const bool staged = w[1] > 0 || w[2] > 0 || w[3] > 0;
    seconds[c] = (staged ? std::max(w[0], w[1] + std::max(w[2], injection) + w[3]) : std::max(w[0], injection)) + w[4];
  }
  return seconds;
}

// Calibrations are remembered per set of processes and regions: every rank of the set calibrated together,
// so all of them find (or miss) the same entry.
cost_model remembered_calibration(MPI_Comm comm, const layout_facts& f) {
  static std::mutex guard;
  static std::map<std::vector<int>, cost_model> remembered;
  mpi::group_handle group, world;
  REDIST_MPI_CHECK(MPI_Comm_group(comm, group.out()));
  REDIST_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, world.out()));
  std::vector<int> ranks(static_cast<size_t>(f.nranks)), in_world(ranks.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  REDIST_MPI_CHECK(MPI_Group_translate_ranks(group.get(), f.nranks, ranks.data(), world.get(), in_world.data()));
  std::vector<int> key = in_world;
  key.insert(key.end(), f.region_of.begin(), f.region_of.end());
  {
    std::lock_guard<std::mutex> lock(guard);
    const auto hit = remembered.find(key);
    if (hit != remembered.end()) return hit->second;
  }
  const cost_model m = measure(comm, f);
  std::lock_guard<std::mutex> lock(guard);
  return remembered.emplace(key, m).first->second;
}

}  // namespace detail

cost_model calibrate_cost_model(MPI_Comm comm, const exchange_options& regions) {
  // The ping-pongs travel on the library's private duplicate of comm, never on comm itself, where they could match
  // the application's receives; the duplicate is made inside an agreement, as a plan's set-up makes it.
  {
    mpi::agreement agreed(comm);
    agreed.attempt([&] {
      if (regions.region_size < 0)
        throw invalid_argument("exchange_options::region_size = " + std::to_string(regions.region_size) +
                               " is negative");
    });
    agreed.collective([&] { mpi::call_duplicate(comm); });
    agreed.on_failure([comm] { mpi::forget_call_duplicate(comm); });
    agreed.conclude();
  }
  const MPI_Comm channel = mpi::call_duplicate(comm);
  return detail::measure(channel, detail::find_regions(channel, regions));
}

}  // namespace redist::exchange
