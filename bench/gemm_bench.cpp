// SPDX-License-Identifier: BSD-3-Clause
// gemm_bench: ScaLAPACK's pdgemm against redist's multiply on the same block-cyclic matrices, in the same run.
//
//   mpiexec.mpich -n 4 bench_gemm_bench [--shapes square1500,tall400x30000,...] [--block 128] [--reps 3]
//                                        [--json out.json] [--cosma /path/to/libcosma_prefixed_pxgemm.so]
//
// --cosma adds COSMA (github eth-cscs/COSMA, built separately: never a build dependency) as a third library:
// its ScaLAPACK-API library is dlopen()ed at run time and cosma_pdgemm_ (or, from libcosma_pxgemm.so, its own
// pdgemm_) is timed like the other two (first call, then --reps repetitions), in the order ScaLAPACK, COSMA,
// redist at every shape, into its own C, which is compared element by element with ScaLAPACK's. Without --cosma
// nothing is loaded and the output is unchanged. (COSMA_DIM_THRESHOLD above 0 would make COSMA hand shapes
// with a dimension below it to ScaLAPACK's pdgemm_; its default, 0, never does.)
//
// Shapes: NAME=MxNxK or the predefined names square1500, square2000, square4000, largek (1000x1000x100000),
// tall (400x400x30000), largem (30000x400x400), flat (2000x2000x200); default: square1500,tall,largem,flat.
// A (m x k), B (k x n) and C (m x n) are block-cyclic with square blocks (--block, default 128) on a
// near-square BLACS grid over all ranks; C = A * B (alpha 1, beta 0). redist runs through redist_pdgemm,
// the entry point libredist_scalapack's pdgemm_ forwards to (first call plans, repetitions reuse the cached
// plan). Per shape: times (best and median of --reps, slowest rank), speedup, elements communicated per
// rank by the multiply and the paper's I/O vs the Eq. 33 lower bound, bytes moved by the layout transforms,
// and flop rate per rank as a percentage of the single-rank BLAS rate measured in the same run (every rank
// multiplying a 1500^3 local problem at once), and where a plan execution spends its time
// (redist_phase_seconds, the slowest rank per phase, and redist_phase_seconds_by_rank: transforms in and out,
// BLAS, panel waits, reduction; gemm_execution_profile) and how
// long that plan took to make, step by step (redist_planning_seconds; gemm_planning_profile). Both results are
// compared element by element.
// Output: JSON (stdout, or --json FILE with a table on stdout), then one SUMMARY line. Exit status 1 when a
// verification fails, 2 on errors.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "peers.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "usage.hpp"

extern "C" {
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, std::size_t, std::size_t);
}

namespace {

using namespace redist_baseline;

struct shape {
  std::string name;
  int m = 0, n = 0, k = 0;
};

struct bench_options {
  std::vector<shape> shapes;
  int block = 128;
  int repetitions = 3;
  std::string json_path;
  std::string cosma_path;  // empty: no COSMA
};

shape parse_shape(const std::string& text) {
  static const std::map<std::string, shape> known = {{"square1500", {"square1500", 1500, 1500, 1500}},
                                                     {"square2000", {"square2000", 2000, 2000, 2000}},
                                                     {"square4000", {"square4000", 4000, 4000, 4000}},
                                                     {"largek", {"largek", 1000, 1000, 100000}},
                                                     {"tall", {"tall", 400, 400, 30000}},
                                                     {"largem", {"largem", 30000, 400, 400}},
                                                     {"flat", {"flat", 2000, 2000, 200}}};
  if (auto it = known.find(text); it != known.end()) return it->second;
  const auto eq = text.find('=');
  if (eq != std::string::npos) {
    shape s;
    s.name = text.substr(0, eq);
    if (std::sscanf(text.c_str() + eq + 1, "%dx%dx%d", &s.m, &s.n, &s.k) == 3 && s.m > 0 && s.n > 0 && s.k > 0)
      return s;
  }
  throw std::invalid_argument("unknown shape '" + text +
                              "' (square1500, square2000, square4000, largek, tall, largem, flat, or NAME=MxNxK)");
}

constexpr const char* usage_text =
    "usage: bench_gemm_bench [--shapes square1500,tall,largem,flat] [--block 128] [--reps 3] [--json FILE] "
    "[--cosma LIBRARY]\n"
    "  --shapes LIST     shapes of C = A * B, comma-separated: NAME=MxNxK or square1500, square2000, square4000,\n"
    "                    largek (1000x1000x100000), tall (400x400x30000), largem (30000x400x400), flat\n"
    "                    (2000x2000x200)\n"
    "  --block B         square blocks of A, B and C on a near-square BLACS grid over all ranks\n"
    "  --reps R          timed repetitions after the first call (best and median, slowest rank)\n"
    "  --json FILE       write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n"
    "  --cosma LIBRARY   also time COSMA, its ScaLAPACK-API library dlopen()ed (e.g. libcosma_prefixed_pxgemm.so)\n";

bench_options parse(int argc, char** argv) {
  bench_options o;
  std::string shapes = "square1500,tall,largem,flat";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++a];
    };
    if (is_help_argument(arg))
      throw usage_requested{usage_text};
    else if (arg == "--shapes")
      shapes = next();
    else if (arg == "--block")
      o.block = parse_positive_int(next(), "--block");
    else if (arg == "--reps")
      o.repetitions = parse_positive_int(next(), "--reps");
    else if (arg == "--json")
      o.json_path = next();
    else if (arg == "--cosma")
      o.cosma_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg + "' (--shapes, --block, --reps, --json, --cosma)");
  }
  size_t start = 0;
  while (start <= shapes.size()) {
    const size_t comma = shapes.find(',', start);
    const std::string item = shapes.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) o.shapes.push_back(parse_shape(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (o.shapes.empty()) throw std::invalid_argument("--shapes lists no shape");
  return o;
}

// COSMA (github eth-cscs/COSMA): cosma_pdgemm_ from libcosma_prefixed_pxgemm.so, or its own pdgemm_ from
// libcosma_pxgemm.so, loaded at run time (peers.hpp).
struct cosma_library {
  using pdgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                             const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                             const double*, double*, const int*, const int*, const int*);
  peer_library library;
  pdgemm_fn pdgemm = nullptr;
  std::string pdgemm_symbol;
  bool loaded() const noexcept { return library.loaded(); }
  const std::string& path() const noexcept { return library.path(); }
};

// Empty path: nothing loaded.
cosma_library load_cosma(const std::string& path) {
  cosma_library cosma;
  if (path.empty()) return cosma;
  cosma.library = peer_library("--cosma", path);
  cosma.pdgemm = reinterpret_cast<cosma_library::pdgemm_fn>(
      cosma.library.symbol({"cosma_pdgemm_", "pdgemm_"}, reinterpret_cast<const void*>(&pdgemm_), cosma.pdgemm_symbol));
  return cosma;
}

// Small exact values, so that sums of products differ between libraries only by rounding order.
double a_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 7 + j * 13) % 17 - 8) / 8.0; }
double b_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 11 + j * 5) % 19 - 9) / 8.0; }

struct result {
  shape s;
  timing scalapack, cosma, redist;  // cosma: empty without --cosma
  double redist_first_call = 0;
  double cosma_first_call = 0;  // COSMA's first call on this data
  std::int64_t mismatches = 0;
  std::int64_t cosma_mismatches = 0;  // COSMA's C against ScaLAPACK's
  double max_difference = 0;
  redist::gemm_statistics stats;
  // Max over ranks of each phase of the plan's second execution, and of each step of its make_gemm_plan.
  std::vector<std::pair<const char*, double>> phases, planning;
  // Every rank's phases of that execution (rank-major, in the order of `phases`) and C elements written in
  // place: the slowest rank per phase hides which ranks wait for which (rank 0 only).
  std::vector<double> phases_by_rank;
  std::vector<std::int64_t> c_elements_in_place_by_rank;
  std::int64_t transform_bytes_max = 0;    // max over ranks of bytes sent by the transforms in and out
  std::int64_t c_elements_in_place = 0;    // summed over ranks (gemm_statistics::c_elements_in_place)
  std::int64_t multiply_bytes_max = 0;     // max over ranks of bytes received in the multiply
  double scalapack_elements_per_rank = 0;  // SUMMA on the P x Q grid: panels of A and B a rank receives
  double percent_of_peak = 0;              // redist's flop rate per rank / the single-rank BLAS rate
  double speedup() const { return scalapack.best / redist.best; }
  double speedup_vs_cosma() const { return cosma.best / redist.best; }
};

// GFLOP/s of one rank's dgemm while every rank multiplies at once (the rate a rank can reach in the run).
double single_rank_blas_rate() {
  const int size = 1500;
  std::vector<double> a(static_cast<size_t>(size) * size, 0.5), b(a.size(), 0.25), c(a.size(), 0.0);
  const double one = 1.0, zero = 0.0;
  double best = 1e300;
  for (int r = 0; r < 2; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    dgemm_("N", "N", &size, &size, &size, &one, a.data(), &size, b.data(), &size, &zero, c.data(), &size, 1, 1);
    best = std::min(best, MPI_Wtime() - start);
  }
  double slowest = 0;
  MPI_Allreduce(&best, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return 2.0 * size * size * static_cast<double>(size) / slowest / 1e9;
}

result run_shape(const blacs_grid& grid, const cosma_library& cosma, const shape& s, int block, int repetitions,
                 double blas_rate) {
  result out;
  out.s = s;
  distributed_matrix a = make_matrix(grid, s.m, s.k, block, block);
  distributed_matrix b = make_matrix(grid, s.k, s.n, block, block);
  distributed_matrix c_scalapack = make_matrix(grid, s.m, s.n, block, block);
  distributed_matrix c_redist = make_matrix(grid, s.m, s.n, block, block);
  fill(a, a_value);
  fill(b, b_value);
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  auto reset = [] {};
  auto call_scalapack = [&] {
    pdgemm_("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &one, &one, a.desc.data(), b.data(), &one, &one,
            b.desc.data(), &beta, c_scalapack.data(), &one, &one, c_scalapack.desc.data());
  };
  auto call_redist = [&] {
    redist_pdgemm("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &one, &one, a.desc.data(), b.data(), &one, &one,
                  b.desc.data(), &beta, c_redist.data(), &one, &one, c_redist.desc.data());
  };
  // Element-by-element comparison with ScaLAPACK's C (tolerance: k products of values below 1.2 in magnitude):
  // elements over the tolerance summed over ranks, and the largest difference on this rank.
  const double tolerance = 1e-12 * s.k;
  auto compare = [&](const distributed_matrix& c, double& largest) {
    std::int64_t mismatches = 0, total = 0;
    largest = 0;
    for (size_t x = 0; x < c.local.size(); ++x) {
      const double d = std::abs(c.local[x] - c_scalapack.local[x]);
      largest = std::max(largest, d);
      if (!(d <= tolerance)) ++mismatches;
    }
    MPI_Allreduce(&mismatches, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total;
  };
  out.scalapack = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_scalapack);
  // The order ScaLAPACK, COSMA, redist is the same at every shape. COSMA's C exists only while COSMA runs.
  if (cosma.loaded()) {
    distributed_matrix c_cosma = make_matrix(grid, s.m, s.n, block, block);
    auto call_cosma = [&] {
      cosma.pdgemm("N", "N", &s.m, &s.n, &s.k, &alpha, a.data(), &one, &one, a.desc.data(), b.data(), &one, &one,
                   b.desc.data(), &beta, c_cosma.data(), &one, &one, c_cosma.desc.data());
    };
    out.cosma_first_call = time_once(MPI_COMM_WORLD, call_cosma);
    out.cosma = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_cosma);
    double largest = 0;
    out.cosma_mismatches = compare(c_cosma, largest);
  }
  out.redist_first_call = time_once(MPI_COMM_WORLD, call_redist);
  out.redist = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_redist);

  double largest = 0;
  out.mismatches = compare(c_redist, largest);
  MPI_Allreduce(&largest, &out.max_difference, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  // The same multiply as a C++ plan, for its statistics (the drop-in's cached plan is built the same way).
  redist::gemm_description d{layout_of(a, world_rank()), layout_of(b, world_rank()), layout_of(c_redist, world_rank()),
                             redist::op::identity,       redist::op::identity,       redist::element_type::f64};
  const redist::gemm_plan plan = redist::make_gemm_plan(MPI_COMM_WORLD, d);
  // Where an execution's time goes (the second one: the first pays first touches), the slowest rank per phase.
  for (int e = 0; e < 2; ++e) {
    MPI_Barrier(MPI_COMM_WORLD);
    plan.execute(c_redist.data(), a.data(), b.data(), alpha, beta);
  }
  out.stats = plan.statistics();
  // The slowest rank of each part.
  const auto slowest = [](std::vector<std::pair<const char*, double>> parts) {
    for (auto& part : parts) MPI_Allreduce(MPI_IN_PLACE, &part.second, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return parts;
  };
  const std::vector<std::pair<const char*, double>> my_phases = redist::named_parts(out.stats.last_execution);
  std::vector<double> mine;
  for (const auto& part : my_phases) mine.push_back(part.second);
  out.phases_by_rank.resize(mine.size() * static_cast<std::size_t>(world_size()));
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, out.phases_by_rank.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  out.c_elements_in_place_by_rank.resize(static_cast<std::size_t>(world_size()));
  MPI_Gather(&out.stats.c_elements_in_place, 1, MPI_INT64_T, out.c_elements_in_place_by_rank.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  out.phases = slowest(my_phases);
  out.planning = slowest(redist::named_parts(out.stats.planning));
  const std::int64_t transform_bytes = out.stats.transform_in.bytes_sent + out.stats.transform_out.bytes_sent;
  MPI_Allreduce(&transform_bytes, &out.transform_bytes_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&out.stats.c_elements_in_place, &out.c_elements_in_place, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&out.stats.multiply.bytes_received, &out.multiply_bytes_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  const double p = grid.proc_rows(), q = grid.proc_cols();
  out.scalapack_elements_per_rank =
      static_cast<double>(s.m) / p * s.k * (q - 1) / q + static_cast<double>(s.k) * s.n / q * (p - 1) / p;
  const double flops_per_rank = 2.0 * s.m * static_cast<double>(s.n) * s.k / world_size();
  out.percent_of_peak = 100.0 * flops_per_rank / out.redist.best / 1e9 / blas_rate;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const bench_options o = parse(argc, argv);
    const cosma_library cosma = load_cosma(o.cosma_path);
    const int ranks = world_size();
    int rows = 1;
    for (int r = 1; r * r <= ranks; ++r)
      if (ranks % r == 0) rows = r;
    const double blas_rate = single_rank_blas_rate();
    std::vector<result> results;
    {
      blacs_grid grid(rows, ranks / rows, redist::grid_order::row_major);
      for (const shape& s : o.shapes) {
        results.push_back(run_shape(grid, cosma, s, o.block, o.repetitions, blas_rate));
        const result& r = results.back();
        if (world_rank() == 0 && cosma.loaded())
          std::fprintf(stderr,
                       "  %s %dx%dx%d: ScaLAPACK %.4f s, COSMA %.4f s, redist %.4f s (%.2fx, %.2fx vs COSMA), %s\n",
                       s.name.c_str(), s.m, s.n, s.k, r.scalapack.best, r.cosma.best, r.redist.best, r.speedup(),
                       r.speedup_vs_cosma(), r.stats.schedule.describe().c_str());
        else if (world_rank() == 0)
          std::fprintf(stderr, "  %s %dx%dx%d: ScaLAPACK %.4f s, redist %.4f s (%.2fx), %s\n", s.name.c_str(), s.m, s.n,
                       s.k, r.scalapack.best, r.redist.best, r.speedup(), r.stats.schedule.describe().c_str());
      }
    }
    blacs_exit_keep_mpi();
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "gemm_bench");
      json.field("ranks", ranks);
      json.field("scalapack_grid", std::to_string(rows) + "x" + std::to_string(ranks / rows) + " row-major");
      json.field("block", o.block);
      json.field("repetitions", o.repetitions);
      json.field("single_rank_blas_gflops", blas_rate);
      if (cosma.loaded()) {
        json.field("cosma_library", cosma.path());
        json.field("cosma_pdgemm_symbol", cosma.pdgemm_symbol);
      }
      json.key("shapes").begin_array();
      bool verified = true;
      double lowest_vs_cosma = 1e300;
      std::string summary, summary_vs_cosma;
      for (const result& r : results) {
        const redist::gemm_schedule& sc = r.stats.schedule;
        json.begin_object();
        json.field("name", r.s.name);
        json.field("m", r.s.m);
        json.field("n", r.s.n);
        json.field("k", r.s.k);
        json.field("scalapack_seconds", r.scalapack.best);
        json.field("scalapack_median_seconds", r.scalapack.median);
        json.field("redist_seconds", r.redist.best);
        json.field("redist_median_seconds", r.redist.median);
        json.field("first_call_seconds", r.redist_first_call);
        json.field("speedup", r.speedup());
        json.field("schedule", sc.describe());
        json.field("grid",
                   std::to_string(sc.grid_m) + "x" + std::to_string(sc.grid_n) + "x" + std::to_string(sc.grid_k));
        json.field("ranks_used", sc.ranks_used);
        json.field("rounds", sc.rounds);
        json.field("io_elements_per_rank", sc.io_elements);
        json.field("lower_bound_elements", sc.lower_bound_elements);
        json.field("ratio_to_lower_bound", sc.ratio_to_lower_bound);
        json.field("multiply_elements_received_per_rank", sc.communicated_elements);
        json.field("multiply_bytes_received_max", r.multiply_bytes_max);
        json.field("scalapack_elements_received_per_rank", r.scalapack_elements_per_rank);
        json.field("transform_bytes_sent_max", r.transform_bytes_max);
        json.field("relabel_volume_before", r.stats.relabel_volume_before);
        json.field("relabel_volume_after", r.stats.relabel_volume_after);
        json.field("percent_of_single_rank_peak", r.percent_of_peak);
        json.field("c_in_place", r.stats.c_in_place);
        json.field("c_elements_in_place", r.c_elements_in_place);
        json.key("redist_phase_seconds").begin_object();
        for (const auto& [phase, seconds] : r.phases) json.field(phase, seconds);
        json.end_object();
        json.key("redist_phase_seconds_by_rank").begin_array();
        for (std::size_t rank = 0; rank < r.c_elements_in_place_by_rank.size(); ++rank) {
          json.begin_object();
          for (std::size_t x = 0; x < r.phases.size(); ++x)
            json.field(r.phases[x].first, r.phases_by_rank[rank * r.phases.size() + x]);
          json.field("c_elements_in_place", r.c_elements_in_place_by_rank[rank]);
          json.end_object();
        }
        json.end_array();
        json.key("redist_planning_seconds").begin_object();
        for (const auto& [step, seconds] : r.planning) json.field(step, seconds);
        json.end_object();
        json.field("mismatches", r.mismatches);
        json.field("max_difference", r.max_difference);
        if (cosma.loaded()) {
          json.field("cosma_seconds", r.cosma.best);
          json.field("cosma_median_seconds", r.cosma.median);
          json.field("cosma_first_call_seconds", r.cosma_first_call);
          json.field("speedup_vs_cosma", r.speedup_vs_cosma());
          json.field("cosma_wrong_elements", r.cosma_mismatches);
        }
        json.end_object();
        verified = verified && r.mismatches == 0 && r.cosma_mismatches == 0;
        char item[160];
        std::snprintf(item, sizeof(item), "%s%s %.2fx (io/bound %.2f)", summary.empty() ? "" : ", ", r.s.name.c_str(),
                      r.speedup(), sc.ratio_to_lower_bound);
        summary += item;
        if (cosma.loaded()) {
          lowest_vs_cosma = std::min(lowest_vs_cosma, r.speedup_vs_cosma());
          std::snprintf(item, sizeof(item), "%s%s %.2fx", summary_vs_cosma.empty() ? "" : ", ", r.s.name.c_str(),
                        r.speedup_vs_cosma());
          summary_vs_cosma += item;
        }
      }
      json.end_array();
      if (cosma.loaded()) json.field("min_speedup_vs_cosma", lowest_vs_cosma);
      json.field("verified", verified);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        // COSMA's columns follow the existing ones (before the schedule), so that the table without --cosma is
        // unchanged.
        std::printf("%-11s %18s %11s %11s %8s %10s %9s %7s", "shape", "m x n x k", "scalapack_s", "redist_s", "speedup",
                    "io/bound", "%peak", "wrong");
        if (cosma.loaded()) std::printf(" %11s %9s %11s", "cosma_s", "vs_cosma", "cosma_wrong");
        std::printf("  %s\n", "schedule");
        for (const result& r : results) {
          char dims[40];
          std::snprintf(dims, sizeof(dims), "%dx%dx%d", r.s.m, r.s.n, r.s.k);
          std::printf("%-11s %18s %11.4f %11.4f %7.2fx %10.3f %8.1f%% %7lld", r.s.name.c_str(), dims, r.scalapack.best,
                      r.redist.best, r.speedup(), r.stats.schedule.ratio_to_lower_bound, r.percent_of_peak,
                      static_cast<long long>(r.mismatches));
          if (cosma.loaded())
            std::printf(" %11.4f %8.2fx %11lld", r.cosma.best, r.speedup_vs_cosma(),
                        static_cast<long long>(r.cosma_mismatches));
          std::printf("  %s\n", r.stats.schedule.describe().c_str());
        }
      }
      std::string vs_cosma;
      if (cosma.loaded()) {
        char min_item[64];
        std::snprintf(min_item, sizeof(min_item), "; min speedup vs COSMA %.2fx", lowest_vs_cosma);
        vs_cosma = "; vs COSMA: " + summary_vs_cosma + min_item;
      }
      std::printf("SUMMARY gemm_bench (%d ranks): %s%s; verified %s\n", ranks, summary.c_str(), vs_cosma.c_str(),
                  verified ? "yes" : "NO");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
