// redist at scale under SimGrid's SMPI: one measured variant per run, one JSON line from rank 0.
//   smpi_bench transform|neighbor --n N --variant V --platform NAME --link-bandwidth BYTES_PER_S [--reps R]
//                        [--verify 0|1] [--region RANKS]
//                        [--case study|equal] [--torus X,Y,Z] [--torus-routing sdr|direct|automatic]
//                        [--torus-beta CHUNKS]
// transform variants: redist:auto, redist:point_to_point, redist:alltoallv, redist:torus_routed (needs --torus and
// the equal case), mpi:alltoallv:<selector> (SMPI's MPI_Alltoallv of the same per-peer bytes; the selector is
// smpirun's --cfg=smpi/coll-selector, named here for the record). neighbor (a 27-point halo, N the subdomain's
// edge): redist:auto, redist:standard, redist:aggregate, redist:dedup (regions of --region ranks),
// mpi:neighbor_alltoallv (every receive and send posted at once, as MPICH's and Open MPI's default).
// MPI_Wtime is the simulated clock. Without --verify the matrices and redist's own buffers of 1 MiB or more live in
// SMPI_SHARED_MALLOC memory (every rank's buffers share pages: contents meaningless, timing only); with it every
// element of the result is checked.
#include <mpi.h>
#include <smpi/smpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <redist/redist.hpp>

#include "../../src/memory/pages.hpp"  // the library's seam for fake buffers (use_page_source)

namespace {

struct arguments {
  std::string benchmark, variant = "redist:auto", platform = "unknown", layout_case = "study", torus,
      torus_routing = "sdr";
  std::int64_t torus_beta = 0;  // 0: the library's default
  int region = 8;               // neighbor: ranks per region (a simulated node of several hosts)
  std::int64_t n = 1024;
  int reps = 2;
  bool verify = false;
  double link_bandwidth = 12.5e9;
};

arguments parse(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("usage: smpi_bench transform --n N --variant V ...");
  arguments a;
  a.benchmark = argv[1];
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--n") a.n = std::stoll(value);
    else if (key == "--variant") a.variant = value;
    else if (key == "--platform") a.platform = value;
    else if (key == "--link-bandwidth") a.link_bandwidth = std::stod(value);
    else if (key == "--reps") a.reps = std::max(1, std::stoi(value));
    else if (key == "--verify") a.verify = value == "1";
    else if (key == "--case") a.layout_case = value;
    else if (key == "--torus") a.torus = value;
    else if (key == "--torus-routing") a.torus_routing = value;
    else if (key == "--torus-beta") a.torus_beta = std::stoll(value);
    else if (key == "--region") a.region = std::stoi(value);
    else throw std::invalid_argument("unknown option " + key);
  }
  if (a.layout_case != "study" && a.layout_case != "equal")
    throw std::invalid_argument("--case " + a.layout_case + ": expected study or equal");
  return a;
}

// The most nearly square grid rows x cols = p with rows <= cols.
void grid_dims(int p, int& rows, int& cols) {
  rows = 1;
  while ((rows + 1) * (rows + 1) <= p) ++rows;
  while (p % rows != 0) --rows;
  cols = p / rows;
}

// Buffers: real (verified runs) or SMPI's shared pages (timing only). Never size 0: SMPI refuses it.
struct buffer {
  std::byte* data = nullptr;
  bool shared = false;
  buffer(std::size_t bytes, bool real) : shared(!real) {
    data = static_cast<std::byte*>(real ? std::malloc(bytes + 64) : SMPI_SHARED_MALLOC(bytes + 64));
    if (data == nullptr) throw std::bad_alloc();
  }
  ~buffer() {
    if (shared) SMPI_SHARED_FREE(data);
    else std::free(data);
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
};

// Calls f(global_row, global_col, local_offset) for every element this rank holds in layout l.
template <class F>
void for_each_local(const redist::grid_layout& l, F&& f) {
  for (const auto pos : l.my_positions())
    for (std::int64_t bi = 0; bi < l.block_rows(); ++bi) {
      if (l.row_proc()[bi] != pos.row) continue;
      for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
        if (l.col_proc()[bj] != pos.col) continue;
        for (std::int64_t j = l.col_splits()[bj]; j < l.col_splits()[bj + 1]; ++j)
          for (std::int64_t i = l.row_splits()[bi]; i < l.row_splits()[bi + 1]; ++i)
            f(i, j,
              (l.local_row_start()[bi] + i - l.row_splits()[bi]) +
                  (l.local_col_start()[bj] + j - l.col_splits()[bj]) * l.local_ld());
      }
    }
}

// Elements of this rank's rows (from_rows) or columns of `from` that land on each process row or column of `to`.
std::vector<std::int64_t> per_process(const redist::grid_layout& from, bool from_rows, int my_proc,
                                      const redist::grid_layout& to, bool to_rows, int nprocs) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nprocs), 0);
  const auto& fs = from_rows ? from.row_splits() : from.col_splits();
  const auto& fp = from_rows ? from.row_proc() : from.col_proc();
  const auto& ts = to_rows ? to.row_splits() : to.col_splits();
  const auto& tp = to_rows ? to.row_proc() : to.col_proc();
  std::size_t t = 0;
  for (std::size_t b = 0; b + 1 < fs.size(); ++b) {
    if (fp[b] != my_proc) continue;
    while (ts[t + 1] <= fs[b]) ++t;
    for (std::size_t u = t; u + 1 < ts.size() && ts[u] < fs[b + 1]; ++u)
      counts[static_cast<std::size_t>(tp[u])] += std::min(fs[b + 1], ts[u + 1]) - std::max(fs[b], ts[u]);
  }
  return counts;
}

struct measured {
  double plan = 0, plan_again = 0, comm_dup = 0, best = 1e300, first = 0;
  std::int64_t bytes_sent = 0, bytes_received = 0, messages = 0;
  std::int64_t problem_bytes = -1;  // this rank's own data in or out, where a variant may move more (neighbor)
  bool verified = false, correct = true;
  std::string chosen;
};

// The slowest rank's time of f(), between barriers.
template <class F>
double timed(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  const double mine = MPI_Wtime() - t0;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// The communicator has seen a collective, as an application's has (SMPI's mpich selector builds node-aware
// sub-communicators on the first one); returns the cost of one bare MPI_Comm_dup, for comparison with the plans.
double warm_up_and_time_a_duplicate() {
  double ignored = 0;
  MPI_Allreduce(MPI_IN_PLACE, &ignored, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return timed([] {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);
  });
}

measured transform(const arguments& a, int rank, int size) {
  int rows = 1, cols = 1;
  grid_dims(size, rows, cols);
  // study: B block-cyclic 32x32 on a row-major grid, A = B^T 128x128 on a column-major grid (a pdtran with a change
  // of blocks and grids); equal: 128x128 on the same row-major grid (a permutation of blocks, torus_routed's case).
  const bool equal = a.layout_case == "equal";
  redist::block_cyclic_params pb;
  pb.m = pb.n = a.n;
  pb.mb = pb.nb = equal ? 128 : 32;
  pb.proc_rows = rows;
  pb.proc_cols = cols;
  redist::block_cyclic_params pa;
  pa.m = pa.n = a.n;
  pa.mb = pa.nb = 128;
  pa.proc_rows = rows;
  pa.proc_cols = cols;
  pa.ordering = equal ? redist::grid_order::row_major : redist::grid_order::col_major;
  const auto bl = redist::block_cyclic(pb, rank);
  const auto al = redist::block_cyclic(pa, rank);
  buffer b(static_cast<std::size_t>(bl.local_elements()) * 8, a.verify);
  buffer out(static_cast<std::size_t>(al.local_elements()) * 8, a.verify);
  auto* bv = reinterpret_cast<double*>(b.data);
  auto* av = reinterpret_cast<double*>(out.data);
  const double n = static_cast<double>(a.n);
  if (a.verify) for_each_local(bl, [&](std::int64_t i, std::int64_t j, std::int64_t at) { bv[at] = i + n * j; });
  measured m;
  if (a.variant.rfind("redist:", 0) == 0) {
    redist::transform_options o;
    o.num_threads = 1;  // SMPI runs every rank on one OS thread
    o.strategy = redist::parse_name<redist::exchange_strategy>(a.variant.substr(7));
    if (!a.torus.empty()) {
      // SimGrid's TORUS numbers hosts with its FIRST dimension fastest; redist's topology has its last (Z) fastest:
      // the extents reversed, and rank r on host r (the hostfile's order) is the identity mapping.
      int d[3] = {1, 1, 1};
      if (std::sscanf(a.torus.c_str(), "%d,%d,%d", &d[0], &d[1], &d[2]) != 3)
        throw std::invalid_argument("--torus " + a.torus + ": expected X,Y,Z");
      redist::torus::topology t({d[2], d[1], d[0]});
      o.torus = std::make_shared<const redist::torus::machine>(
          redist::torus::machine{t, redist::torus::rank_mapping::dimension_ordered(t, "XYZ")});
      o.torus_routing.mode = redist::parse_name<redist::torus::routing_mode>(a.torus_routing);
      if (a.torus_beta > 0) o.torus_routing.beta = a.torus_beta;
    }
    m.comm_dup = warm_up_and_time_a_duplicate();
    std::unique_ptr<redist::transform_plan> plan;
    m.plan = timed([&] {
      plan = std::make_unique<redist::transform_plan>(
          redist::make_plan(MPI_COMM_WORLD, al, bl, redist::op::transpose, redist::element_type::f64, o));
    });
    // The same plan made again once the first is dropped: what an application that plans over and over pays (the
    // first plan also pays for what is made once per communicator).
    plan.reset();
    m.plan_again = timed([&] {
      plan = std::make_unique<redist::transform_plan>(
          redist::make_plan(MPI_COMM_WORLD, al, bl, redist::op::transpose, redist::element_type::f64, o));
    });
    const auto s = plan->statistics();
    m.bytes_sent = s.bytes_sent;
    m.bytes_received = s.bytes_received;
    m.messages = s.messages_sent;
    m.chosen = redist::to_string(plan->strategy());
    for (int r = 0; r < a.reps; ++r) {
      const double t = timed([&] { plan->execute(av, bv, 1.0, 0.0); });
      if (r == 0) m.first = t;
      m.best = std::min(m.best, t);
    }
    if (a.verify) {
      for_each_local(al, [&](std::int64_t i, std::int64_t j, std::int64_t at) {
        if (av[at] != j + n * i) m.correct = false;
      });
      m.verified = true;
    }
    return m;
  }
  if (a.variant.rfind("mpi:alltoallv", 0) != 0) throw std::invalid_argument("unknown variant " + a.variant);
  // Bytes per peer of A = B^T: B's rows become A's columns, B's columns A's rows (block-cyclic layouts are
  // products, so a peer's count is a row count times a column count).
  const auto mine_b = bl.my_positions().at(0), mine_a = al.my_positions().at(0);
  const auto rows_to_acol = per_process(bl, true, mine_b.row, al, false, al.proc_cols());
  const auto cols_to_arow = per_process(bl, false, mine_b.col, al, true, al.proc_rows());
  const auto arows_from_bcol = per_process(al, true, mine_a.row, bl, false, bl.proc_cols());
  const auto acols_from_brow = per_process(al, false, mine_a.col, bl, true, bl.proc_rows());
  std::vector<int> sc(size), sd(size), rc(size), rd(size);
  for (int pr = 0; pr < al.proc_rows(); ++pr)
    for (int pc = 0; pc < al.proc_cols(); ++pc) sc[al.grid_rank({pr, pc})] = int(cols_to_arow[pr] * rows_to_acol[pc] * 8);
  for (int pr = 0; pr < bl.proc_rows(); ++pr)
    for (int pc = 0; pc < bl.proc_cols(); ++pc) rc[bl.grid_rank({pr, pc})] = int(acols_from_brow[pr] * arows_from_bcol[pc] * 8);
  std::int64_t sent = 0, received = 0;
  for (int p = 0; p < size; ++p) {
    sd[p] = int(sent);
    rd[p] = int(received);
    sent += sc[p];
    received += rc[p];
    if (p != rank) {
      m.bytes_sent += sc[p];
      m.bytes_received += rc[p];
      m.messages += sc[p] > 0;
    }
  }
  buffer send(static_cast<std::size_t>(sent), a.verify), receive(static_cast<std::size_t>(received), a.verify);
  const auto pattern = [](int from, int to, int i) { return static_cast<std::byte>((from * 31 + to * 7 + i) & 0xff); };
  if (a.verify)
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < sc[p]; ++i) send.data[sd[p] + i] = pattern(rank, p, i);
  for (int r = 0; r < a.reps; ++r) {
    const double t = timed([&] {
      MPI_Alltoallv(send.data, sc.data(), sd.data(), MPI_BYTE, receive.data, rc.data(), rd.data(), MPI_BYTE,
                    MPI_COMM_WORLD);
    });
    if (r == 0) m.first = t;
    m.best = std::min(m.best, t);
  }
  if (a.verify) {
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < rc[p]; ++i)
        if (receive.data[rd[p] + i] != pattern(p, rank, i)) m.correct = false;
    m.verified = true;
  }
  return m;
}

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
  const auto value = [&](int from, int to, std::int64_t k) { return static_cast<double>((std::int64_t(from) * size + to) * 2 * a.n + k); };
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
    m.plan = timed([&] { plan = ex::make_inplace_plan(capacity, sc.data(), rc.data(), MPI_DOUBLE, MPI_COMM_WORLD, o); });
    plan = ex::inplace_plan();
    m.plan_again = timed([&] { plan = ex::make_inplace_plan(capacity, sc.data(), rc.data(), MPI_DOUBLE, MPI_COMM_WORLD, o); });
    m.chosen = ex::to_string(plan.report().algorithm);
    for (int r = 0; r < a.reps; ++r) {
      if (a.verify) fill(data);  // each execution starts from the send layout (not timed)
      const double t = timed([&] {
        const ex::inplace_report report = plan.execute(data);
        if (r == 0) {  // what this algorithm moves, which may exceed the data's own bytes (forwarding)
          m.bytes_sent = report.bytes_sent;
          m.bytes_received = report.bytes_received;
          m.messages = report.messages_sent;
        }
      });
      if (r == 0) m.first = t;
      m.best = std::min(m.best, t);
    }
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
  for (int r = 0; r < a.reps; ++r) {
    const double t = timed([&] {
      MPI_Alltoallv(send.data, isc.data(), isd.data(), MPI_DOUBLE, receive.data, irc.data(), ird.data(), MPI_DOUBLE,
                    MPI_COMM_WORLD);
    });
    if (r == 0) m.first = t;
    m.best = std::min(m.best, t);
  }
  if (a.verify) check(reinterpret_cast<const double*>(receive.data));
  return m;
}

// 3-D halo exchange of a 27-point stencil: ranks on a periodic px x py x pz grid, each with an n^3 subdomain of
// doubles, send to each of their 26 neighbours the boundary slab facing it (faces n^2, edges n, corners 1
// element); an element's global id is its owner's rank * n^3 + its index there, and its value that id.
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
    ex::neighbor_buffers b{send.data, h.send_counts.data(), h.send_displs.data(), MPI_DOUBLE,
                           receive.data, h.recv_counts.data(), h.recv_displs.data(), MPI_DOUBLE};
    b.send_entries = b.recv_entries = static_cast<std::int64_t>(h.destinations.size());
    b = ex::with_global_ids(b, h.send_ids, h.recv_ids);
    std::unique_ptr<ex::neighbor_plan> plan;
    m.plan = timed([&] {
      plan = std::make_unique<ex::neighbor_plan>(ex::neighbor_alltoallv_init(h.sources, h.destinations, b, MPI_COMM_WORLD, o));
    });
    plan.reset();  // made again, as an application that plans over and over does
    m.plan_again = timed([&] {
      plan = std::make_unique<ex::neighbor_plan>(ex::neighbor_alltoallv_init(h.sources, h.destinations, b, MPI_COMM_WORLD, o));
    });
    const auto& st = plan->statistics();
    m.bytes_sent = st.bytes_sent;
    m.bytes_received = st.bytes_received;
    m.messages = st.messages_sent;
    m.chosen = ex::to_string(st.strategy);
    for (int r = 0; r < a.reps; ++r) {
      const double t = timed([&] {
        plan->start();
        plan->wait();
      });
      if (r == 0) m.first = t;
      m.best = std::min(m.best, t);
    }
    check();
    return m;
  }
  if (a.variant != "mpi:neighbor_alltoallv") throw std::invalid_argument("unknown variant " + a.variant);
  // What MPICH's and Open MPI's default MPI_Neighbor_alltoallv does: every receive and send posted, then waited.
  std::vector<MPI_Request> requests(h.sources.size() + h.destinations.size());
  for (int r = 0; r < a.reps; ++r) {
    const double t = timed([&] {
      std::size_t k = 0;
      for (std::size_t e = 0; e < h.sources.size(); ++e)
        MPI_Irecv(rv + h.recv_displs[e], static_cast<int>(h.recv_counts[e]), MPI_DOUBLE, h.sources[e],
                  static_cast<int>(e), MPI_COMM_WORLD, &requests[k++]);
      for (std::size_t e = 0; e < h.destinations.size(); ++e)
        MPI_Isend(sv + h.send_displs[e], static_cast<int>(h.send_counts[e]), MPI_DOUBLE, h.destinations[e],
                  static_cast<int>(e), MPI_COMM_WORLD, &requests[k++]);
      MPI_Waitall(static_cast<int>(k), requests.data(), MPI_STATUSES_IGNORE);
    });
    if (r == 0) m.first = t;
    m.best = std::min(m.best, t);
  }
  check();
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const arguments a = parse(argc, argv);
    // Timing only: redist's own large buffers (messages, staging) in SMPI's shared pages too, so that thousands of
    // simulated ranks with large N fit in this machine's memory (and SMPI skips copying their payloads).
    if (!a.verify)
      redist::memory::use_page_source({std::size_t(1) << 20, [](std::size_t bytes) { return SMPI_SHARED_MALLOC(bytes); },
                                       [](void* data) { SMPI_SHARED_FREE(data); }});
    if (a.benchmark != "transform" && a.benchmark != "neighbor" && a.benchmark != "inplace")
      throw std::invalid_argument("benchmark " + a.benchmark + ": expected transform, neighbor or inplace");
    const auto wall0 = std::chrono::steady_clock::now();
    const measured m = a.benchmark == "transform" ? transform(a, rank, size)
                       : a.benchmark == "inplace" ? inplace(a, rank, size)
                                                  : neighbor(a, rank, size);
    // Totals and the busiest rank's bytes in or out: the link-rate bound is that rank's bytes over one link.
    const std::int64_t mine[3] = {m.bytes_sent, m.messages, m.correct ? 0 : 1};
    std::int64_t total[3] = {0, 0, 0};
    MPI_Reduce(mine, total, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    const std::int64_t busiest_mine = m.problem_bytes >= 0 ? m.problem_bytes : std::max(m.bytes_sent, m.bytes_received);
    std::int64_t busiest = 0;
    MPI_Reduce(&busiest_mine, &busiest, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (rank == 0) {
      std::printf("{\"benchmark\": \"%s\", \"platform\": \"%s\", \"ranks\": %d, \"n\": %lld, \"case\": \"%s\", "
                  "\"variant\": \"%s\", \"simulated_seconds\": %.9g, \"first_simulated_seconds\": %.9g, ",
                  a.benchmark.c_str(), a.platform.c_str(), size, static_cast<long long>(a.n), a.layout_case.c_str(),
                  a.variant.c_str(), m.best, m.first);
      if (a.variant.rfind("redist:", 0) == 0)
        std::printf("\"plan_simulated_seconds\": %.9g, \"strategy\": \"%s\", ", m.plan, m.chosen.c_str());
      if (a.variant.rfind("redist:", 0) == 0)
        std::printf("\"second_plan_simulated_seconds\": %.9g, \"comm_dup_simulated_seconds\": %.9g, ", m.plan_again,
                    m.comm_dup);
      if (a.benchmark == "neighbor") std::printf("\"region\": %d, ", a.region);
      std::printf("\"bound_seconds\": %.9g, \"bytes_off_rank\": %lld, \"busiest_rank_bytes\": %lld, \"messages\": %lld, "
                  "\"verified\": %s, \"reps\": %d, \"wall_seconds_rank0\": %.3f}\n",
                  static_cast<double>(busiest) / a.link_bandwidth, static_cast<long long>(total[0]),
                  static_cast<long long>(busiest), static_cast<long long>(total[1]),
                  m.verified && total[2] == 0 ? "true" : "false", a.reps, wall);
      if (m.verified && total[2] != 0) {
        std::fprintf(stderr, "smpi_bench: WRONG result on %lld rank(s)\n", static_cast<long long>(total[2]));
        status = 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smpi_bench (rank %d): %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
