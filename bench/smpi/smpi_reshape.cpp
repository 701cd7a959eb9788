// SPDX-License-Identifier: BSD-3-Clause
// smpi_bench reshape: the reshapes of a distributed 3-D FFT on an N x N x N array of complex doubles, redist's
// reshape plans vs what FFT codes call today: MPI_Alltoallw with a subarray type per peer (mpi4py-fft, several FFT
// libraries) and pack + MPI_Alltoallv + unpack (heFFTe's default).
// Cases (boxes in C order, every rank's array dense in its box, C order; an extent cut into p parts gives the first
// ones an element more, bench/reshape_bench.cpp's decompositions):
//   x_to_y_pencil      x-pencils -> y-pencils on the 2-D grid MPI_Dims_create(P, 2) (the FFT's transpose)
//   brick_to_x_pencil  bricks on MPI_Dims_create(P, 3) -> x-pencils (an FFT's first reshape)
// Element (i, j, k) holds (v, -v), v = (i N + j) N + k; verified runs check every element received.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <redist/redist.hpp>

#include "smpi_common.hpp"

namespace smpi_bench {
namespace {

using complex = std::complex<double>;

redist::box intersection(const redist::box& a, const redist::box& b) {
  redist::box c{a.lo, a.hi};
  for (std::size_t k = 0; k < 3; ++k) {
    c.lo[k] = std::max(a.lo[k], b.lo[k]);
    c.hi[k] = std::max(c.lo[k], std::min(a.hi[k], b.hi[k]));
  }
  return c;
}

// Calls f(i, j, k, offset in `in`'s dense C-order storage) for every element of region r (inside box `in`).
template <class F>
void for_each_element(const redist::box& r, const redist::box& in, F&& f) {
  const std::int64_t e1 = in.hi[1] - in.lo[1], e2 = in.hi[2] - in.lo[2];
  for (std::int64_t i = r.lo[0]; i < r.hi[0]; ++i)
    for (std::int64_t j = r.lo[1]; j < r.hi[1]; ++j)
      for (std::int64_t k = r.lo[2]; k < r.hi[2]; ++k)
        f(i, j, k, ((i - in.lo[0]) * e1 + (j - in.lo[1])) * e2 + (k - in.lo[2]));
}

// Region r of box b as an MPI subarray of b's dense C-order storage.
MPI_Datatype subarray(const redist::box& b, const redist::box& r) {
  int sizes[3], subsizes[3], starts[3];
  for (int k = 0; k < 3; ++k) {
    sizes[k] = static_cast<int>(b.hi[k] - b.lo[k]);
    subsizes[k] = static_cast<int>(r.hi[k] - r.lo[k]);
    starts[k] = static_cast<int>(r.lo[k] - b.lo[k]);
  }
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX, &t);
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

measured reshape(const arguments& a, int rank, int size) {
  const std::vector<std::int64_t> shape{a.n, a.n, a.n};
  int grid2[2] = {0, 0}, grid3[3] = {0, 0, 0};
  MPI_Dims_create(size, 2, grid2);
  MPI_Dims_create(size, 3, grid3);
  std::vector<redist::box> in_boxes, out_boxes;
  if (a.layout_case == "x_to_y_pencil") {
    in_boxes = redist::pencil_boxes(shape, 0, {grid2[0], grid2[1]});
    out_boxes = redist::pencil_boxes(shape, 1, {grid2[0], grid2[1]});
  } else if (a.layout_case == "brick_to_x_pencil") {
    in_boxes = redist::brick_boxes(shape, {grid3[0], grid3[1], grid3[2]});
    out_boxes = redist::pencil_boxes(shape, 0, {grid2[0], grid2[1]});
  } else {
    throw std::invalid_argument("reshape --case " + a.layout_case + ": expected x_to_y_pencil or brick_to_x_pencil");
  }
  const redist::box& in_box = in_boxes[static_cast<std::size_t>(rank)];
  const redist::box& out_box = out_boxes[static_cast<std::size_t>(rank)];
  // What goes to and comes from each rank: the intersections of the boxes.
  std::vector<redist::box> send_region, receive_region;
  measured m;
  std::int64_t received_off_rank = 0;
  for (int p = 0; p < size; ++p) {
    send_region.push_back(intersection(in_box, out_boxes[static_cast<std::size_t>(p)]));
    receive_region.push_back(intersection(out_box, in_boxes[static_cast<std::size_t>(p)]));
    if (p == rank) continue;
    m.bytes_sent += send_region.back().elements() * 16;
    m.messages += !send_region.back().empty();
    received_off_rank += receive_region.back().elements() * 16;
  }
  m.bytes_received = received_off_rank;
  m.problem_bytes = std::max(m.bytes_sent, m.bytes_received);
  buffer in(static_cast<std::size_t>(in_box.elements()) * 16, a.verify);
  buffer out(static_cast<std::size_t>(out_box.elements()) * 16, a.verify);
  auto* iv = reinterpret_cast<complex*>(in.data);
  auto* ov = reinterpret_cast<complex*>(out.data);
  const auto value = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    const double v = static_cast<double>((i * a.n + j) * a.n + k);
    return complex(v, -v);
  };
  if (a.verify)
    for_each_element(in_box, in_box,
                     [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t at) { iv[at] = value(i, j, k); });
  const auto check = [&] {
    if (!a.verify) return;
    for_each_element(out_box, out_box, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t at) {
      if (ov[at] != value(i, j, k)) m.correct = false;
    });
    m.verified = true;
  };
  const auto run = [&](auto&& execute) {
    time_executions(m, a.reps, [&](int) { execute(); });
    check();
  };
  m.comm_dup = warm_up_and_time_a_duplicate();

  if (a.variant.rfind("redist:", 0) == 0) {
    redist::transform_options o;
    o.num_threads = 1;  // SMPI runs every rank on one OS thread
    o.strategy = redist::parse_name<redist::exchange_strategy>(a.variant.substr(7));
    const auto make = [&] {
      return std::make_unique<redist::transform_plan>(
          redist::make_reshape_plan(MPI_COMM_WORLD,
                                    {redist::reshape_job{redist::box_layout(out_boxes, rank),
                                                         redist::box_layout(in_boxes, rank),
                                                         {0, 1, 2},
                                                         false,
                                                         redist::element_type::c64,
                                                         {}}},
                                    o));
    };
    std::unique_ptr<redist::transform_plan> plan;
    m.plan = timed([&] { plan = make(); });
    plan.reset();  // made again, as an FFT that plans per call does
    m.plan_again = timed([&] { plan = make(); });
    const auto s = plan->statistics();
    m.bytes_sent = s.bytes_sent;
    m.bytes_received = s.bytes_received;
    m.messages = s.messages_sent;
    m.chosen = redist::to_string(plan->strategy());
    run([&] { plan->execute(ov, iv, complex(1), complex(0)); });
    return m;
  }

  if (a.variant == "mpi:alltoallw") {
    // One subarray type per peer in each direction, made outside the timing. SMPI has one MPI_Alltoallw (every
    // message posted at once), whatever the selector.
    std::vector<int> send_counts(size, 0), receive_counts(size, 0), displacements(size, 0);
    std::vector<MPI_Datatype> send_types(size, MPI_C_DOUBLE_COMPLEX), receive_types(size, MPI_C_DOUBLE_COMPLEX);
    for (int p = 0; p < size; ++p) {
      if (!send_region[p].empty()) send_types[p] = subarray(in_box, send_region[p]), send_counts[p] = 1;
      if (!receive_region[p].empty()) receive_types[p] = subarray(out_box, receive_region[p]), receive_counts[p] = 1;
    }
    run([&] {
      MPI_Alltoallw(iv, send_counts.data(), displacements.data(), send_types.data(), ov, receive_counts.data(),
                    displacements.data(), receive_types.data(), MPI_COMM_WORLD);
    });
    for (int p = 0; p < size; ++p) {
      if (send_counts[p] == 1) MPI_Type_free(&send_types[p]);
      if (receive_counts[p] == 1) MPI_Type_free(&receive_types[p]);
    }
    return m;
  }

  if (a.variant.rfind("mpi:alltoallv", 0) != 0) throw std::invalid_argument("unknown variant " + a.variant);
  // Pack each peer's region in C order, one MPI_Alltoallv, unpack (heFFTe's default reshape). Copies cost no
  // simulated time (computation is not simulated): timing-only runs skip them, their buffers hold nothing.
  std::vector<int> sc(size), sd(size), rc(size), rd(size);
  std::int64_t sent = 0, received = 0;
  for (int p = 0; p < size; ++p) {
    if (sent + send_region[p].elements() > INT_MAX || received + receive_region[p].elements() > INT_MAX)
      throw std::invalid_argument("reshape: MPI_Alltoallv needs int counts");
    sc[p] = static_cast<int>(send_region[p].elements()), sd[p] = static_cast<int>(sent);
    rc[p] = static_cast<int>(receive_region[p].elements()), rd[p] = static_cast<int>(received);
    sent += sc[p];
    received += rc[p];
  }
  buffer send(static_cast<std::size_t>(sent) * 16, a.verify),
      receive(static_cast<std::size_t>(received) * 16, a.verify);
  auto* sv = reinterpret_cast<complex*>(send.data);
  auto* rv = reinterpret_cast<complex*>(receive.data);
  run([&] {
    if (a.verify)
      for (int p = 0; p < size; ++p) {
        complex* to = sv + sd[p];
        for_each_element(send_region[p], in_box,
                         [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t at) { *to++ = iv[at]; });
      }
    MPI_Alltoallv(sv, sc.data(), sd.data(), MPI_C_DOUBLE_COMPLEX, rv, rc.data(), rd.data(), MPI_C_DOUBLE_COMPLEX,
                  MPI_COMM_WORLD);
    if (a.verify)
      for (int p = 0; p < size; ++p) {
        const complex* from = rv + rd[p];
        for_each_element(receive_region[p], out_box,
                         [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t at) { ov[at] = *from++; });
      }
  });
  return m;
}

}  // namespace smpi_bench
