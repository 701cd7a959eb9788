// SPDX-License-Identifier: BSD-3-Clause
// smpi_bench inplace and neighbor: redist's in-place all-to-all vs MPI_Alltoallv, and its neighborhood exchange vs
// MPI_Neighbor_alltoallv as MPICH and Open MPI implement it by default.
#include <climits>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include <redist/redist.hpp>

#include "smpi_common.hpp"

namespace smpi_bench {

// In-place variable all-to-all: rank i sends rank j c(i, j) = n * (1 + (3i + 5j) mod 4) / 2 doubles (n/2 .. 2n, about
// 1.25 n on average, so that sends and receives differ per rank), element k of that block carrying the value
// (i * P + j) * 2n + k. redist's alltoallv_inplace (a plan, executed) in one buffer of max(sent, received); MPI's
// MPI_Alltoallv with separate send and receive buffers (MPI has no in-place form with unequal counts).
measured inplace(const arguments& a, int rank, int size) {
  const auto count = [&](int from, int to) { return a.n * (1 + (3 * from + 5 * to) % 4) / 2; };
  std::vector<std::int64_t> sc(size), rc(size);
  std::int64_t sent = 0, received = 0;
  measured m;
  for (int p = 0; p < size; ++p) {
    sc[p] = count(rank, p);
    rc[p] = count(p, rank);
    sent += sc[p];
    received += rc[p];
    if (p != rank) {
      m.bytes_sent += sc[p] * 8;
      m.bytes_received += rc[p] * 8;
      m.messages += sc[p] > 0;
    }
  }
  m.problem_bytes = std::max(m.bytes_sent, m.bytes_received);  // the bound; pairwise and bitonic forward more
  const auto value = [&](int from, int to, std::int64_t k) {
    return static_cast<double>((std::int64_t(from) * size + to) * 2 * a.n + k);
  };
  const auto fill = [&](double* out) {
    for (int p = 0; p < size; ++p)
      for (std::int64_t k = 0; k < sc[p]; ++k) *out++ = value(rank, p, k);
  };
  const auto check = [&](const double* in) {
    for (int p = 0; p < size; ++p)
      for (std::int64_t k = 0; k < rc[p]; ++k)
        if (*in++ != value(p, rank, k)) m.correct = false;
    m.verified = true;
  };
  m.comm_dup = warm_up_and_time_a_duplicate();
  if (a.variant.rfind("redist:", 0) == 0) {
    namespace ex = redist::exchange;
    ex::inplace_options o;
    o.algorithm = redist::parse_name<ex::inplace_algorithm>(a.variant.substr(7));
    const std::int64_t capacity = std::max(sent, received);
    buffer buf(static_cast<std::size_t>(capacity) * 8, a.verify);
    auto* data = reinterpret_cast<double*>(buf.data);
    ex::inplace_plan plan;
    m.plan =
        timed([&] { plan = ex::make_inplace_plan(MPI_COMM_WORLD, capacity, sc.data(), rc.data(), MPI_DOUBLE, o); });
    plan = ex::inplace_plan();
    m.plan_again =
        timed([&] { plan = ex::make_inplace_plan(MPI_COMM_WORLD, capacity, sc.data(), rc.data(), MPI_DOUBLE, o); });
    m.chosen = ex::to_string(plan.report().algorithm);
    time_executions(
        m, a.reps,
        [&](int r) {
          const ex::inplace_report report = plan.execute(data);
          if (r == 0) {  // what this algorithm moves, which may exceed the data's own bytes (forwarding)
            m.bytes_sent = report.bytes_sent;
            m.bytes_received = report.bytes_received;
            m.messages = report.messages_sent;
          }
        },
        [&](int) {
          if (a.verify) fill(data);  // each execution starts from the send layout
        });
    if (a.verify) check(data);
    return m;
  }
  if (a.variant.rfind("mpi:alltoallv", 0) != 0) throw std::invalid_argument("unknown variant " + a.variant);
  std::vector<int> isc(size), isd(size), irc(size), ird(size);
  for (int p = 0, s = 0, r = 0; p < size; ++p) {
    if (sent > INT_MAX || received > INT_MAX) throw std::invalid_argument("inplace: MPI_Alltoallv needs int counts");
    isc[p] = int(sc[p]), isd[p] = s, irc[p] = int(rc[p]), ird[p] = r;
    s += isc[p];
    r += irc[p];
  }
  buffer send(static_cast<std::size_t>(sent) * 8, a.verify), receive(static_cast<std::size_t>(received) * 8, a.verify);
  if (a.verify) fill(reinterpret_cast<double*>(send.data));
  time_executions(m, a.reps, [&](int) {
    MPI_Alltoallv(send.data, isc.data(), isd.data(), MPI_DOUBLE, receive.data, irc.data(), ird.data(), MPI_DOUBLE,
                  MPI_COMM_WORLD);
  });
  if (a.verify) check(reinterpret_cast<const double*>(receive.data));
  return m;
}

// 3-D halo exchange of a 27-point stencil: ranks on a periodic px x py x pz grid, each with an n^3 subdomain of
// doubles, send to each of their 26 neighbours the boundary slab facing it (faces n^2, edges n, corners 1
// element); an element's global id is its owner's rank * n^3 + its index there, and its value that id.
namespace {
struct halo {
  std::vector<int> sources, destinations;
  std::vector<std::int64_t> send_counts, send_displs, recv_counts, recv_displs, send_ids, recv_ids;
};

halo halo_of(int rank, int size, std::int64_t n) {
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  const int c[3] = {rank / (dims[1] * dims[2]), rank / dims[2] % dims[1], rank % dims[2]};
  const auto rank_at = [&](const int* d, int sign) {
    int q[3];
    for (int k = 0; k < 3; ++k) q[k] = ((c[k] + sign * d[k]) % dims[k] + dims[k]) % dims[k];
    return (q[0] * dims[1] + q[1]) * dims[2] + q[2];
  };
  // The slab of a subdomain facing direction d, as local indices (x slowest).
  const auto slab = [&](const int* d) {
    std::vector<std::int64_t> at;
    for (std::int64_t x = 0; x < n; ++x)
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t z = 0; z < n; ++z) {
          const std::int64_t v[3] = {x, y, z};
          bool in = true;
          for (int k = 0; k < 3; ++k) in = in && (d[k] == 0 || v[k] == (d[k] > 0 ? n - 1 : 0));
          if (in) at.push_back((x * n + y) * n + z);
        }
    return at;
  };
  halo h;
  const std::int64_t volume = n * n * n;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const int d[3] = {dx, dy, dz};
        const std::vector<std::int64_t> at = slab(d);
        // Send my slab facing d to the rank at +d; receive the slab facing d of the rank at -d.
        const int to = rank_at(d, 1), from = rank_at(d, -1);
        h.destinations.push_back(to);
        h.send_displs.push_back(static_cast<std::int64_t>(h.send_ids.size()));
        h.send_counts.push_back(static_cast<std::int64_t>(at.size()));
        for (std::int64_t i : at) h.send_ids.push_back(rank * volume + i);
        h.sources.push_back(from);
        h.recv_displs.push_back(static_cast<std::int64_t>(h.recv_ids.size()));
        h.recv_counts.push_back(static_cast<std::int64_t>(at.size()));
        for (std::int64_t i : at) h.recv_ids.push_back(from * volume + i);
      }
  return h;
}

}  // namespace

measured neighbor(const arguments& a, int rank, int size) {
  const halo h = halo_of(rank, size, a.n);
  const std::size_t send_n = h.send_ids.size(), recv_n = h.recv_ids.size();
  buffer send(send_n * 8, a.verify), receive(recv_n * 8, a.verify);
  auto* sv = reinterpret_cast<double*>(send.data);
  auto* rv = reinterpret_cast<double*>(receive.data);
  if (a.verify)
    for (std::size_t i = 0; i < send_n; ++i) sv[i] = static_cast<double>(h.send_ids[i]);
  measured m;
  for (std::size_t e = 0; e < h.destinations.size(); ++e)
    if (h.destinations[e] != rank) {
      m.bytes_sent += h.send_counts[e] * 8;
      ++m.messages;
    }
  for (std::size_t e = 0; e < h.sources.size(); ++e)
    if (h.sources[e] != rank) m.bytes_received += h.recv_counts[e] * 8;
  const auto check = [&] {
    if (!a.verify) return;
    for (std::size_t i = 0; i < recv_n; ++i)
      if (rv[i] != static_cast<double>(h.recv_ids[i])) m.correct = false;
    m.verified = true;
  };
  m.problem_bytes = std::max(m.bytes_sent, m.bytes_received);  // the bound: aggregate's leaders forward more
  m.comm_dup = warm_up_and_time_a_duplicate();
  if (a.variant.rfind("redist:", 0) == 0) {
    namespace ex = redist::exchange;
    ex::exchange_options o;
    o.strategy = redist::parse_name<ex::neighbor_strategy>(a.variant.substr(7));
    o.region_size = a.region;
    if (a.cost_model == "platform") {
      // One rank per host: inside a region costs what between regions does (the platform's links).
      redist::cost_model platform;
      platform.inter_seconds_per_byte = 1.0 / a.link_bandwidth;
      platform.intra_latency = platform.inter_latency;
      platform.intra_seconds_per_message = platform.inter_seconds_per_message;
      platform.intra_seconds_per_byte = platform.inter_seconds_per_byte;
      platform.source = "user";
      o.model = platform;
    } else if (a.cost_model == "defaults") {
      o.model = redist::cost_model{};
    } else if (a.cost_model != "calibrate") {
      throw std::invalid_argument("--cost-model '" + a.cost_model + "': expected calibrate, platform or defaults");
    }
    ex::neighbor_buffers b{send.data,    h.send_counts.data(), h.send_displs.data(), MPI_DOUBLE,
                           receive.data, h.recv_counts.data(), h.recv_displs.data(), MPI_DOUBLE};
    b.send_entries = b.recv_entries = static_cast<std::int64_t>(h.destinations.size());
    b = ex::with_global_ids(b, h.send_ids, h.recv_ids);
    std::unique_ptr<ex::neighbor_plan> plan;
    m.plan = timed([&] {
      plan = std::make_unique<ex::neighbor_plan>(
          ex::neighbor_alltoallv_init(h.sources, h.destinations, b, MPI_COMM_WORLD, o));
    });
    plan.reset();  // made again, as an application that plans over and over does
    m.plan_again = timed([&] {
      plan = std::make_unique<ex::neighbor_plan>(
          ex::neighbor_alltoallv_init(h.sources, h.destinations, b, MPI_COMM_WORLD, o));
    });
    const auto& st = plan->statistics();
    m.bytes_sent = st.bytes_sent;
    m.bytes_received = st.bytes_received;
    m.messages = st.messages_sent;
    m.chosen = ex::to_string(st.strategy);
    time_executions(m, a.reps, [&](int) {
      plan->start();
      plan->wait();
    });
    check();
    return m;
  }
  if (a.variant != "mpi:neighbor_alltoallv") throw std::invalid_argument("unknown variant " + a.variant);
  // What MPICH's and Open MPI's default MPI_Neighbor_alltoallv does: every receive and send posted, then waited.
  std::vector<MPI_Request> requests(h.sources.size() + h.destinations.size());
  time_executions(m, a.reps, [&](int) {
    std::size_t k = 0;
    for (std::size_t e = 0; e < h.sources.size(); ++e)
      MPI_Irecv(rv + h.recv_displs[e], static_cast<int>(h.recv_counts[e]), MPI_DOUBLE, h.sources[e],
                static_cast<int>(e), MPI_COMM_WORLD, &requests[k++]);
    for (std::size_t e = 0; e < h.destinations.size(); ++e)
      MPI_Isend(sv + h.send_displs[e], static_cast<int>(h.send_counts[e]), MPI_DOUBLE, h.destinations[e],
                static_cast<int>(e), MPI_COMM_WORLD, &requests[k++]);
    MPI_Waitall(static_cast<int>(k), requests.data(), MPI_STATUSES_IGNORE);
  });
  check();
  return m;
}
}  // namespace smpi_bench
