// SPDX-License-Identifier: BSD-3-Clause
// reshape_peers: redist's N-d reshape (make_reshape_plan) against the reshapes of FFT libraries, on the same
// boxes and the same data, in the same run. The peers are built by hand, never dependencies of the project
// (bench/results/reshape_peers.md): the program is configured with
//   -DREDIST_HEFFTE_DIR=/path/to/heffte/install   (REDIST_PEERS_HEFFTE: heFFTe's reshape3d)
//   -DREDIST_WITH_FFTW_MPI=ON                     (REDIST_PEERS_FFTW_MPI: FFTW's MPI transpose; Open MPI builds)
// and either part compiles alone.
//
//   mpiexec -n 4 bench_reshape_peers [--n 256] [--reps 5] [--json FILE] [--fftw-flags measure|estimate]
//
// Cases (an N x N x N array of complex doubles, C order: axis 2 fastest; N from --n, default 256):
//   heffte brick_to_pencil  bricks (redist::brick_boxes on the MPI_Dims_create 3-D grid) -> pencils along axis 0
//                           (redist::pencil_boxes on the MPI_Dims_create 2-D grid over axes 1, 2)
//   heffte pencil_to_brick  the way back
//     heFFTe's box3d has its index 0 fastest in memory (order {0, 1, 2}): redist's axis k is heFFTe's index 2 - k,
//     so both libraries see the same boxes in the same memory. heFFTe runs reshape3d_alltoallv (its default
//     algorithm, MPI_Alltoallv) and reshape3d_pointtopoint with p2p_plined (Isend/Irecv, pipelined); redist runs
//     make_reshape_plan on box_layout of the same boxes (automatic strategy, one thread).
//   Every case also runs redist with exchange_strategy::alltoallv (redist_alltoallv: one MPI_Alltoallv, as
//   heFFTe's default), so that the ratios can be split into what the exchange and what the packing is worth;
//   the ratios peer / redist are against the automatic strategy, ratio_peer_over_redist_alltoallv against that.
//   fftw slab_transpose     slabs along axis 0 -> slabs along axis 1 with the two first axes swapped in memory:
//     fftw_mpi_plan_many_transpose of the N x N matrix whose elements are tuples of howmany = 2N doubles (a row of
//     N complex numbers along axis 2), default blocks (ceil(N / P)); its output is the N1 x N0 x N2 array split
//     along its first axis. redist: B = box_layout of FFTW's input slabs (as fftw_mpi_local_size_many_transposed
//     reports them, gathered), A = box_layout of the output slabs of the N1 x N0 x N2 array, axes {1, 0, 2}; both
//     read FFTW's input array, and their outputs are compared element by element (and with the analytic values).
// Every method is verified once against the global index function before timing; then --reps repetitions, the
// methods of a case interleaved (each after an MPI_Barrier; the slowest rank's time; the order rotates every
// repetition). Output: one JSON object (stdout, or --json FILE with a table on stdout; medians, ratio
// peer / redist > 1 when redist is faster), then one SUMMARY line. Exit status 1 when a verification fails, 2 on
// errors.
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.hpp"
#include "usage.hpp"

#if REDIST_PEERS_HEFFTE
#include "heffte.h"
#endif
#if REDIST_PEERS_FFTW_MPI
#include <fftw3-mpi.h>
#endif

#if !REDIST_PEERS_HEFFTE && !REDIST_PEERS_FFTW_MPI
#error "bench_reshape_peers needs REDIST_PEERS_HEFFTE and/or REDIST_PEERS_FFTW_MPI (see bench/CMakeLists.txt)"
#endif

namespace {

using namespace redist_baseline;
using cplx = std::complex<double>;

struct bench_options {
  std::vector<int> sizes{256};
  int repetitions = 5;
  std::string json_path;
  bool fftw_measure = true;
};

constexpr const char* usage_text =
    "usage: bench_reshape_peers [--n 256] [--reps 5] [--json FILE] [--fftw-flags measure]\n"
    "  --n LIST            N, comma-separated: an N x N x N array of complex doubles (1 .. 131072)\n"
    "  --reps R            timed repetitions, the methods of a case interleaved (medians, slowest rank)\n"
    "  --json FILE         write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n"
    "  --fftw-flags NAME   FFTW's planner flag for its transpose: measure (FFTW_MEASURE) or estimate (FFTW_ESTIMATE)\n";

bench_options parse_options(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (is_help_argument(arg)) {
      throw usage_requested{usage_text};
    } else if (arg == "--n") {
      o.sizes = parse_int_list(next());
    } else if (arg == "--reps") {
      o.repetitions = parse_positive_int(next(), "--reps");
    } else if (arg == "--json") {
      o.json_path = next();
    } else if (arg == "--fftw-flags") {
      const std::string f = next();
      if (f != "measure" && f != "estimate") throw std::invalid_argument("--fftw-flags: measure or estimate");
      o.fftw_measure = f == "measure";
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "' (--n, --reps, --json, --fftw-flags; see --help)");
    }
  }
  for (int n : o.sizes)
    if (n < 1 || n > (1 << 17)) throw std::invalid_argument("--n: 1 .. 131072");
  return o;
}

// The global index function: distinct, exact in double for N <= 2^17.
cplx value(std::int64_t n, std::int64_t i, std::int64_t j, std::int64_t k) {
  return {static_cast<double>((i * n + j) * n + k), -static_cast<double>((k * n + j) * n + i) - 0.5};
}

// The elements of a box, C order, dense: f(local offset, i, j, k).
template <class F>
void for_each_in_box(const redist::box& b, F&& f) {
  const std::int64_t e1 = b.hi[1] - b.lo[1], e2 = b.hi[2] - b.lo[2];
  for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
        f(((i - b.lo[0]) * e1 + (j - b.lo[1])) * e2 + (k - b.lo[2]), i, j, k);
}

// Elements of `data` (this rank's box, C order) that differ from expected(i, j, k), summed over all ranks.
template <class Expected>
std::int64_t count_wrong(const redist::box& b, const cplx* data, Expected expected) {
  std::int64_t wrong = 0;
  for_each_in_box(b, [&](std::int64_t l, std::int64_t i, std::int64_t j, std::int64_t k) {
    wrong += data[l] != expected(i, j, k);
  });
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

struct method_result {
  std::string name;
  bool peer = true;  // false: redist (automatic strategy, the reference of the ratios) or redist_alltoallv
  std::int64_t wrong_elements = -1;  // against the analytic values
  double plan_seconds = 0;           // planning, slowest rank
  timing execute;
};

struct case_result {
  std::string library, name;
  int n = 0;
  std::string source_description, target_description;
  std::int64_t bytes = 0;        // the global array
  std::int64_t bytes_moved = 0;  // bytes leaving their rank (redist's plan statistics, summed)
  std::string redist_strategy;
  std::int64_t differences_peer_redist = -1;  // fftw: element-wise comparison of both outputs
  std::vector<method_result> methods;
  const method_result& method(const std::string& name) const {
    for (const auto& m : methods)
      if (m.name == name) return m;
    throw std::logic_error("no method " + name);
  }
  const method_result& redist() const { return method("redist"); }
  bool verified() const {
    for (const auto& m : methods)
      if (m.wrong_elements != 0) return false;
    return differences_peer_redist <= 0;
  }
};

// Times the methods interleaved: repetition r runs them in the order r, r+1, ... (mod count), each after a
// barrier; per method the slowest rank's time of every repetition.
void time_interleaved(int repetitions, std::vector<method_result>& methods,
                      const std::vector<std::function<void()>>& runs) {
  const size_t m = runs.size();
  std::vector<std::vector<double>> mine(m);
  for (int r = 0; r < repetitions; ++r) {
    for (size_t s = 0; s < m; ++s) {
      const size_t k = (static_cast<size_t>(r) + s) % m;
      BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double start = MPI_Wtime();
      runs[k]();
      mine[k].push_back(MPI_Wtime() - start);
    }
  }
  for (size_t k = 0; k < m; ++k) methods[k].execute = summarize(MPI_COMM_WORLD, mine[k]);
}

double slowest(double mine) {
  double s = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return s;
}

std::string describe_boxes(const char* what, const std::vector<int>& grid) {
  std::string s = what;
  s += " on ";
  for (size_t k = 0; k < grid.size(); ++k) s += (k ? "x" : "") + std::to_string(grid[k]);
  return s;
}

redist::transform_options redist_options(redist::exchange_strategy strategy = redist::exchange_strategy::automatic) {
  redist::transform_options o;
  o.strategy = strategy;
  o.num_threads = 1;  // the peers pack on one thread
  return o;
}

std::int64_t bytes_moved(const redist::transform_plan& plan) {
  std::int64_t mine = plan.statistics().bytes_sent, total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

#if REDIST_PEERS_HEFFTE
// redist's axis k is heFFTe's index 2 - k (heFFTe's default order {0, 1, 2}: index 0 fastest); hi inclusive.
heffte::box3d<int> to_heffte(const redist::box& b) {
  auto c = [](std::int64_t v) { return static_cast<int>(v); };
  return heffte::box3d<int>({c(b.lo[2]), c(b.lo[1]), c(b.lo[0])}, {c(b.hi[2] - 1), c(b.hi[1] - 1), c(b.hi[0] - 1)});
}

std::vector<heffte::box3d<int>> to_heffte(const std::vector<redist::box>& boxes) {
  std::vector<heffte::box3d<int>> out;
  for (const auto& b : boxes) out.push_back(to_heffte(b));
  return out;
}

std::vector<case_result> heffte_cases(int n, int repetitions) {
  const int rank = world_rank(), ranks = world_size();
  int d3[3] = {0, 0, 0}, d2[2] = {0, 0};
  BASELINE_MPI_CHECK(MPI_Dims_create(ranks, 3, d3));
  BASELINE_MPI_CHECK(MPI_Dims_create(ranks, 2, d2));
  const std::vector<int> brick_grid(d3, d3 + 3), pencil_grid(d2, d2 + 2);
  const std::vector<std::int64_t> shape{n, n, n};
  const std::vector<redist::box> bricks = redist::brick_boxes(shape, brick_grid);
  const std::vector<redist::box> pencils = redist::pencil_boxes(shape, 0, pencil_grid);
  const std::string brick_text = describe_boxes("bricks", brick_grid);
  const std::string pencil_text = describe_boxes("pencils along axis 0", pencil_grid);

  std::vector<case_result> results;
  for (int direction = 0; direction < 2; ++direction) {
    const bool to_pencil = direction == 0;
    const auto& in_boxes = to_pencil ? bricks : pencils;
    const auto& out_boxes = to_pencil ? pencils : bricks;
    const redist::box& in_box = in_boxes[static_cast<size_t>(rank)];
    const redist::box& out_box = out_boxes[static_cast<size_t>(rank)];
    case_result c;
    c.library = "heffte";
    c.name = to_pencil ? "brick_to_pencil" : "pencil_to_brick";
    c.n = n;
    c.source_description = to_pencil ? brick_text : pencil_text;
    c.target_description = to_pencil ? pencil_text : brick_text;
    c.bytes = std::int64_t(n) * n * n * static_cast<std::int64_t>(sizeof(cplx));

    std::vector<cplx> source(static_cast<size_t>(std::max<std::int64_t>(in_box.elements(), 1)));
    for_each_in_box(in_box, [&](std::int64_t l, std::int64_t i, std::int64_t j, std::int64_t k) {
      source[static_cast<size_t>(l)] = value(n, i, j, k);
    });
    const size_t out_size = static_cast<size_t>(std::max<std::int64_t>(out_box.elements(), 1));
    std::vector<cplx> out_a2av(out_size), out_p2p(out_size), out_redist(out_size);

    const auto hin = to_heffte(in_boxes), hout = to_heffte(out_boxes);
    std::unique_ptr<heffte::reshape3d_base<int>> a2av, p2p;
    double t0 = MPI_Wtime();
    a2av = heffte::make_reshape3d_alltoallv<heffte::tag::cpu, heffte::direct_packer, int>(nullptr, hin, hout, false,
                                                                                          MPI_COMM_WORLD);
    const double plan_a2av = slowest(MPI_Wtime() - t0);
    t0 = MPI_Wtime();
    p2p = heffte::make_reshape3d_pointtopoint<heffte::tag::cpu, heffte::direct_packer, int>(
        nullptr, hin, hout, heffte::reshape_algorithm::p2p_plined, false, MPI_COMM_WORLD);
    const double plan_p2p = slowest(MPI_Wtime() - t0);
    std::vector<cplx> ws_a2av(std::max<size_t>(a2av->size_workspace(), 1));
    std::vector<cplx> ws_p2p(std::max<size_t>(p2p->size_workspace(), 1));

    t0 = MPI_Wtime();
    redist::transform_plan plan = redist::make_reshape_plan(MPI_COMM_WORLD,
                                                            {redist::reshape_job{redist::box_layout(out_boxes, rank),
                                                                                 redist::box_layout(in_boxes, rank),
                                                                                 {},
                                                                                 false,
                                                                                 redist::element_type::c64,
                                                                                 {}}},
                                                            redist_options());
    const double plan_redist = slowest(MPI_Wtime() - t0);
    c.redist_strategy = redist::to_string(plan.strategy());
    c.bytes_moved = bytes_moved(plan);
    // redist with heFFTe's default exchange (one MPI_Alltoallv): what the packing alone is worth.
    t0 = MPI_Wtime();
    redist::transform_plan plan_a2av_redist =
        redist::make_reshape_plan(MPI_COMM_WORLD,
                                  {redist::reshape_job{redist::box_layout(out_boxes, rank),
                                                       redist::box_layout(in_boxes, rank),
                                                       {},
                                                       false,
                                                       redist::element_type::c64,
                                                       {}}},
                                  redist_options(redist::exchange_strategy::alltoallv));
    const double plan_redist_a2av = slowest(MPI_Wtime() - t0);
    std::vector<cplx> out_redist_a2av(out_size);

    std::vector<std::function<void()>> runs = {
        [&] { a2av->apply(1, source.data(), out_a2av.data(), ws_a2av.data()); },
        [&] { p2p->apply(1, source.data(), out_p2p.data(), ws_p2p.data()); },
        [&] { plan.execute(out_redist.data(), source.data()); },
        [&] { plan_a2av_redist.execute(out_redist_a2av.data(), source.data()); }};
    c.methods = {{"heffte_alltoallv", true, -1, plan_a2av, {}},
                 {"heffte_p2p_plined", true, -1, plan_p2p, {}},
                 {"redist", false, -1, plan_redist, {}},
                 {"redist_alltoallv", false, -1, plan_redist_a2av, {}}};
    const std::vector<cplx>* outs[4] = {&out_a2av, &out_p2p, &out_redist, &out_redist_a2av};
    auto expected = [n](std::int64_t i, std::int64_t j, std::int64_t k) { return value(n, i, j, k); };
    for (size_t m = 0; m < runs.size(); ++m) {
      runs[m]();
      c.methods[m].wrong_elements = count_wrong(out_box, outs[m]->data(), expected);
    }
    time_interleaved(repetitions, c.methods, runs);
    results.push_back(std::move(c));
  }
  return results;
}
#endif

#if REDIST_PEERS_FFTW_MPI
std::vector<case_result> fftw_cases(int n, int repetitions, bool measure) {
  const int rank = world_rank(), ranks = world_size();
  const ptrdiff_t nn[2] = {n, n};
  const ptrdiff_t howmany = 2 * static_cast<ptrdiff_t>(n);  // a row of n complex numbers as 2n doubles
  ptrdiff_t local_n0 = 0, local_0_start = 0, local_n1 = 0, local_1_start = 0;
  const ptrdiff_t alloc =
      fftw_mpi_local_size_many_transposed(2, nn, howmany, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK,
                                          MPI_COMM_WORLD, &local_n0, &local_0_start, &local_n1, &local_1_start);
  double* in = fftw_alloc_real(static_cast<size_t>(std::max<ptrdiff_t>(alloc, 2)));
  double* out = fftw_alloc_real(static_cast<size_t>(std::max<ptrdiff_t>(alloc, 2)));
  if (!in || !out) throw std::runtime_error("fftw_alloc_real failed");
  double t0 = MPI_Wtime();
  fftw_plan fplan = fftw_mpi_plan_many_transpose(n, n, howmany, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK, in, out,
                                                 MPI_COMM_WORLD, measure ? FFTW_MEASURE : FFTW_ESTIMATE);
  const double plan_fftw = slowest(MPI_Wtime() - t0);
  if (!fplan) throw std::runtime_error("fftw_mpi_plan_many_transpose returned no plan");

  // FFTW's split, as it reports it, for redist's boxes.
  const std::int64_t mine[4] = {local_0_start, local_n0, local_1_start, local_n1};
  std::vector<std::int64_t> all(4 * static_cast<size_t>(ranks));
  BASELINE_MPI_CHECK(MPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, MPI_COMM_WORLD));
  std::vector<redist::box> in_boxes, out_boxes;
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t* a = &all[4 * static_cast<size_t>(r)];
    in_boxes.push_back({{a[0], 0, 0}, {a[0] + a[1], n, n}});   // N0 x N1 x N2, rows a[0] .. of axis 0
    out_boxes.push_back({{a[2], 0, 0}, {a[2] + a[3], n, n}});  // N1 x N0 x N2, rows a[2] .. of axis 1
  }
  const redist::box& in_box = in_boxes[static_cast<size_t>(rank)];
  const redist::box& out_box = out_boxes[static_cast<size_t>(rank)];

  case_result c;
  c.library = "fftw";
  c.name = "slab_transpose";
  c.n = n;
  c.source_description = "slabs along axis 0, FFTW's blocks (ceil(N/P))";
  c.target_description = "slabs along axis 1, axes 0 and 1 swapped in memory (N1 x N0 x N2)";
  c.bytes = std::int64_t(n) * n * n * static_cast<std::int64_t>(sizeof(cplx));

  t0 = MPI_Wtime();
  redist::transform_plan plan = redist::make_reshape_plan(MPI_COMM_WORLD,
                                                          {redist::reshape_job{redist::box_layout(out_boxes, rank),
                                                                               redist::box_layout(in_boxes, rank),
                                                                               {1, 0, 2},
                                                                               false,
                                                                               redist::element_type::c64,
                                                                               {}}},
                                                          redist_options());
  const double plan_redist = slowest(MPI_Wtime() - t0);
  c.redist_strategy = redist::to_string(plan.strategy());
  c.bytes_moved = bytes_moved(plan);
  t0 = MPI_Wtime();
  redist::transform_plan plan_a2av = redist::make_reshape_plan(MPI_COMM_WORLD,
                                                               {redist::reshape_job{redist::box_layout(out_boxes, rank),
                                                                                    redist::box_layout(in_boxes, rank),
                                                                                    {1, 0, 2},
                                                                                    false,
                                                                                    redist::element_type::c64,
                                                                                    {}}},
                                                               redist_options(redist::exchange_strategy::alltoallv));
  const double plan_redist_a2av = slowest(MPI_Wtime() - t0);

  cplx* source = reinterpret_cast<cplx*>(in);  // fftw_complex and std::complex<double> share their layout
  const cplx* fftw_out = reinterpret_cast<const cplx*>(out);
  std::vector<cplx> out_redist(static_cast<size_t>(std::max<std::int64_t>(out_box.elements(), 1)));
  std::vector<cplx> out_redist_a2av(out_redist.size());
  auto fill = [&] {
    for_each_in_box(
        in_box, [&](std::int64_t l, std::int64_t i, std::int64_t j, std::int64_t k) { source[l] = value(n, i, j, k); });
  };
  std::vector<std::function<void()>> runs = {[&] { fftw_execute(fplan); },
                                             [&] { plan.execute(out_redist.data(), source); },
                                             [&] { plan_a2av.execute(out_redist_a2av.data(), source); }};
  c.methods = {{"fftw_mpi_transpose", true, -1, plan_fftw, {}},
               {"redist", false, -1, plan_redist, {}},
               {"redist_alltoallv", false, -1, plan_redist_a2av, {}}};
  // A(j, i, k) = B(i, j, k). The input is refilled before each method (FFTW may use it as scratch).
  auto expected = [n](std::int64_t j, std::int64_t i, std::int64_t k) { return value(n, i, j, k); };
  fill();
  runs[0]();
  c.methods[0].wrong_elements = count_wrong(out_box, fftw_out, expected);
  fill();
  runs[1]();
  c.methods[1].wrong_elements = count_wrong(out_box, out_redist.data(), expected);
  fill();
  runs[2]();
  c.methods[2].wrong_elements = count_wrong(out_box, out_redist_a2av.data(), expected);
  std::int64_t differ = 0;
  for (std::int64_t l = 0; l < out_box.elements(); ++l) differ += fftw_out[l] != out_redist[static_cast<size_t>(l)];
  BASELINE_MPI_CHECK(MPI_Allreduce(&differ, &c.differences_peer_redist, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  fill();
  time_interleaved(repetitions, c.methods, runs);

  fftw_destroy_plan(fplan);
  fftw_free(in);
  fftw_free(out);
  return {c};
}
#endif

const char* mpi_name() {
#if defined(OPEN_MPI)
  return "openmpi";
#elif defined(MPICH)
  return "mpich";
#else
  return "unknown";
#endif
}

std::string to_json(const bench_options& o, const std::vector<case_result>& results) {
  json_writer w;
  w.begin_object();
  w.field("benchmark", "reshape_peers");
  w.field("mpi", mpi_name());
  w.field("ranks", world_size());
  w.field("repetitions", o.repetitions);
  w.field("element", "complex<double>");
  w.field("fftw_flags", o.fftw_measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE");
  w.key("cases");
  w.begin_array();
  for (const auto& c : results) {
    w.begin_object();
    w.field("library", c.library);
    w.field("case", c.name);
    w.field("n", c.n);
    w.field("source", c.source_description);
    w.field("target", c.target_description);
    w.field("bytes", c.bytes);
    w.field("bytes_moved", c.bytes_moved);
    w.field("redist_strategy", c.redist_strategy);
    w.field("verified", c.verified());
    if (c.differences_peer_redist >= 0) w.field("differences_peer_redist", c.differences_peer_redist);
    const double redist_median = c.redist().execute.median;
    const double redist_a2av_median = c.method("redist_alltoallv").execute.median;
    w.key("methods");
    w.begin_array();
    for (const auto& m : c.methods) {
      w.begin_object();
      w.field("method", m.name);
      w.field("wrong_elements", m.wrong_elements);
      w.field("plan_seconds", m.plan_seconds);
      w.field("median_seconds", m.execute.median);
      w.field("best_seconds", m.execute.best);
      w.array_field("seconds", m.execute.seconds);
      if (m.peer) {
        w.field("ratio_peer_over_redist", m.execute.median / redist_median);
        w.field("ratio_peer_over_redist_alltoallv", m.execute.median / redist_a2av_median);
      }
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.text();
}

std::string table(const std::vector<case_result>& results) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-7s %-16s %6s %-19s %12s %12s %8s %s\n", "library", "case", "N", "method",
                "median [s]", "best [s]", "ratio", "verified");
  out << line;
  for (const auto& c : results) {
    const double r = c.redist().execute.median;
    for (const auto& m : c.methods) {
      std::snprintf(line, sizeof line, "%-7s %-16s %6d %-19s %12.6f %12.6f %8.2f %s\n", c.library.c_str(),
                    c.name.c_str(), c.n, m.name.c_str(), m.execute.median, m.execute.best, m.execute.median / r,
                    m.wrong_elements == 0 ? "yes" : "NO");
      out << line;
    }
  }
  return out.str();
}

std::string summary_line(const std::vector<case_result>& results) {
  std::ostringstream out;
  out << "SUMMARY reshape_peers: " << mpi_name() << " np=" << world_size() << ":";
  bool all_verified = true, first = true;
  char item[160];
  for (const auto& c : results) {
    const double r = c.redist().execute.median;
    for (const auto& m : c.methods) {
      if (!m.peer) continue;
      std::snprintf(item, sizeof item, "%s %s/redist %s N=%d %.2fx (%.2fx vs redist_alltoallv)", first ? "" : ",",
                    m.name.c_str(), c.name.c_str(), c.n, m.execute.median / r,
                    m.execute.median / c.method("redist_alltoallv").execute.median);
      out << item;
      first = false;
    }
    all_verified = all_verified && c.verified();
  }
  out << (all_verified ? "; all verified" : "; VERIFICATION FAILED");
  return out.str();
}

int run(int argc, char** argv) {
  const bench_options o = parse_options(argc, argv);
  std::vector<case_result> results;
  for (int n : o.sizes) {
#if REDIST_PEERS_HEFFTE
    for (auto& c : heffte_cases(n, o.repetitions)) results.push_back(std::move(c));
#endif
#if REDIST_PEERS_FFTW_MPI
    for (auto& c : fftw_cases(n, o.repetitions, o.fftw_measure)) results.push_back(std::move(c));
#endif
  }
  bool verified = true;
  for (const auto& c : results) verified = verified && c.verified();
  if (world_rank() == 0) {
    const std::string json = to_json(o, results);
    if (o.json_path.empty()) {
      std::cout << json << "\n";
    } else {
      std::ofstream f(o.json_path);
      f << json << "\n";
      if (!f) throw std::runtime_error("cannot write " + o.json_path);
      std::cout << table(results);
    }
    std::cout << summary_line(results) << std::endl;
  }
  return verified ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Init_thread failed\n");
    return 2;
  }
#if REDIST_PEERS_FFTW_MPI
  fftw_mpi_init();
#endif
  int status = 2;
  try {
    status = run(argc, argv);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
    status = 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reshape_peers (rank %d): %s\n", world_rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#if REDIST_PEERS_FFTW_MPI
  fftw_mpi_cleanup();
#endif
  if (MPI_Finalize() != MPI_SUCCESS) return 2;
  return status;
}
