// SPDX-License-Identifier: BSD-3-Clause
// smpi_bench transform: a block-cyclic pdtran-like redistribution, redist's plans vs MPI_Alltoallv of the same bytes.
#include <climits>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include <redist/redist.hpp>

#include "smpi_common.hpp"

namespace smpi_bench {
namespace {

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

}  // namespace

measured transform(const arguments& a, int rank, int size) {
  int rows = 1, cols = 1;
  grid_dims(size, rows, cols);
  // study: B block-cyclic 32x32 on a row-major grid, A = B^T 128x128 on a column-major grid (a pdtran with a change
  // of blocks and grids); equal: 128x128 on the same row-major grid (a permutation of blocks, torus_routed's case).
  if (a.layout_case != "study" && a.layout_case != "equal")
    throw std::invalid_argument("transform --case " + a.layout_case + ": expected study or equal");
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
      o.torus_routing.phases = redist::parse_name<redist::torus::phase_schedule>(a.torus_phases);
      if (!a.torus_hardware.empty())
        o.torus_routing.hardware = redist::parse_name<redist::torus::hardware_routing>(a.torus_hardware);
      m.extra_json = "\"torus_extents_simgrid\": \"" + a.torus + "\", \"torus_routing\": \"" +
                     redist::torus::to_string(o.torus_routing.mode) +
                     "\", \"torus_beta\": " + std::to_string(o.torus_routing.beta) + ", \"torus_phases\": \"" +
                     redist::torus::to_string(o.torus_routing.phases) + "\", \"torus_hardware\": \"" +
                     redist::torus::to_string(o.torus_routing.hardware) + "\", ";
    }
    m.comm_dup = warm_up_and_time_a_duplicate();
    std::unique_ptr<redist::transform_plan> plan;
    m.plan = timed([&] {
      plan = std::make_unique<redist::transform_plan>(
          redist::make_transform_plan(MPI_COMM_WORLD, al, bl, redist::op::transpose, redist::element_type::f64, o));
    });
    // The same plan made again once the first is dropped: what an application that plans over and over pays (the
    // first plan also pays for what is made once per communicator).
    plan.reset();
    m.plan_again = timed([&] {
      plan = std::make_unique<redist::transform_plan>(
          redist::make_transform_plan(MPI_COMM_WORLD, al, bl, redist::op::transpose, redist::element_type::f64, o));
    });
    const auto s = plan->statistics();
    m.bytes_sent = s.bytes_sent;
    m.bytes_received = s.bytes_received;
    m.messages = s.messages_sent;
    m.chosen = redist::to_string(plan->strategy());
    time_executions(m, a.reps, [&](int) { plan->execute(av, bv, 1.0, 0.0); });
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
    for (int pc = 0; pc < al.proc_cols(); ++pc)
      sc[al.grid_rank({pr, pc})] = int(cols_to_arow[pr] * rows_to_acol[pc] * 8);
  for (int pr = 0; pr < bl.proc_rows(); ++pr)
    for (int pc = 0; pc < bl.proc_cols(); ++pc)
      rc[bl.grid_rank({pr, pc})] = int(acols_from_brow[pr] * arows_from_bcol[pc] * 8);
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
  time_executions(m, a.reps, [&](int) {
    MPI_Alltoallv(send.data, sc.data(), sd.data(), MPI_BYTE, receive.data, rc.data(), rd.data(), MPI_BYTE,
                  MPI_COMM_WORLD);
  });
  if (a.verify) {
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < rc[p]; ++i)
        if (receive.data[rd[p] + i] != pattern(p, rank, i)) m.correct = false;
    m.verified = true;
  }
  return m;
}

}  // namespace smpi_bench
