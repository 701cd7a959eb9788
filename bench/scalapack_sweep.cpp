// scalapack_sweep: ScaLAPACK's pdgemr2d and pdtran against redist's ScaLAPACK entry points (redist_pdgemr2d,
// redist_pdtran: what a program relinked with libredist_scalapack runs) over matrix sizes and source block
// sizes (COSTA paper, Fig. 2: b x b blocks -> 128 x 128 blocks, both on a 2x2 grid).
//
//   mpiexec.mpich -n 4 bench_scalapack_sweep [--n 2000,4000,8000] [--blocks 16,32,64] [--reps 5] [--json out.json]
//
// Per point and routine, both libraries run the same call on identical data in the same run; both results
// are checked element by element against the analytic values. Each library's first call on the data (redist's
// plans, as a one-shot call) is timed on its own (first_call_seconds, scalapack_first_call_seconds); the
// repetitions after it reuse the cached plan, as a program calling the routine repeatedly does. Output: one JSON object (stdout, or --json FILE with a table on stdout), then one SUMMARY line.
// Exit status 1 when a verification fails, 2 on errors.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.h"

namespace {

using namespace redist_baseline;

struct sweep_options {
  std::vector<int> sizes{2000, 4000, 8000};
  std::vector<int> blocks{16, 32, 64};
  int repetitions = 5;
  std::string json_path;
};

sweep_options parse(int argc, char** argv) {
  sweep_options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++k];
    };
    if (arg == "--n")
      o.sizes = parse_int_list(next());
    else if (arg == "--blocks")
      o.blocks = parse_int_list(next());
    else if (arg == "--reps")
      o.repetitions = parse_positive_int(next(), "--reps");
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg + "' (--n, --blocks, --reps, --json)");
  }
  return o;
}

struct point {
  std::string routine;
  int n = 0, block = 0;
  timing scalapack, redist;
  double scalapack_first_call = 0;  // ScaLAPACK's first call on this data
  double redist_first_call = 0;     // includes planning
  std::int64_t scalapack_wrong = 0, redist_wrong = 0;
  double speedup() const { return scalapack.best / redist.best; }
};

constexpr int target_block = 128;

point run_point(const blacs_grid& grid, const std::string& routine, int n, int block, int repetitions) {
  point p;
  p.routine = routine;
  p.n = n;
  p.block = block;
  distributed_matrix a = make_matrix(grid, n, n, block, block);
  fill(a, source_value);
  distributed_matrix target = make_matrix(grid, n, n, target_block, target_block);
  const bool transpose = routine == "pdtran";
  auto reset = [&] { fill(target, target_initial_value); };
  auto expected = [&](std::int64_t i, std::int64_t j) { return transpose ? source_value(j, i) : source_value(i, j); };
  const int one = 1, context = grid.context();
  const double alpha = 1.0, beta = 0.0;
  auto call_scalapack = [&] {
    if (transpose)
      pdtran_(&n, &n, &alpha, a.data(), &one, &one, a.desc.data(), &beta, target.data(), &one, &one,
              target.desc.data());
    else
      pdgemr2d_(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(), &context);
  };
  auto call_redist = [&] {
    if (transpose)
      redist_pdtran(&n, &n, &alpha, a.data(), &one, &one, a.desc.data(), &beta, target.data(), &one, &one,
                    target.desc.data());
    else
      redist_pdgemr2d(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(),
                      &context);
  };
  reset();
  p.scalapack_first_call = time_once(MPI_COMM_WORLD, call_scalapack);
  p.scalapack = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_scalapack);
  p.scalapack_wrong = count_wrong_elements(target, expected);
  reset();
  p.redist_first_call = time_once(MPI_COMM_WORLD, call_redist);
  p.redist = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_redist);
  p.redist_wrong = count_wrong_elements(target, expected);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const sweep_options o = parse(argc, argv);
    if (world_size() < 4) throw std::invalid_argument("scalapack_sweep needs 4 MPI ranks (a 2x2 grid)");
    std::vector<point> points;
    {
      blacs_grid grid(2, 2, redist::grid_order::row_major);
      for (int n : o.sizes)
        for (int b : o.blocks)
          for (const char* routine : {"pdgemr2d", "pdtran"}) {
            points.push_back(run_point(grid, routine, n, b, o.repetitions));
            if (world_rank() == 0)
              std::fprintf(stderr, "  %s N=%d %dx%d -> 128x128: ScaLAPACK %.4f s, redist %.4f s (%.2fx)\n", routine,
                           n, b, b, points.back().scalapack.best, points.back().redist.best,
                           points.back().speedup());
          }
    }
    blacs_exit_keep_mpi();
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "scalapack_sweep");
      json.field("ranks", world_size());
      json.field("grid", "2x2 row-major, both operands");
      json.field("target_block", target_block);
      json.field("repetitions", o.repetitions);
      json.key("points").begin_array();
      double lowest = 1e300;
      bool verified = true;
      std::string summary;
      for (const point& p : points) {
        json.begin_object();
        json.field("routine", p.routine);
        json.field("n", p.n);
        json.field("source_block", p.block);
        json.field("scalapack_seconds", p.scalapack.best);
        json.field("scalapack_median_seconds", p.scalapack.median);
        json.field("redist_seconds", p.redist.best);
        json.field("redist_median_seconds", p.redist.median);
        json.field("first_call_seconds", p.redist_first_call);
        json.field("scalapack_first_call_seconds", p.scalapack_first_call);
        json.field("first_call_speedup", p.scalapack_first_call / p.redist_first_call);
        json.field("speedup", p.speedup());
        json.field("scalapack_wrong_elements", p.scalapack_wrong);
        json.field("redist_wrong_elements", p.redist_wrong);
        json.end_object();
        lowest = std::min(lowest, p.speedup());
        verified = verified && p.redist_wrong == 0 && p.scalapack_wrong == 0;
        char item[128];
        std::snprintf(item, sizeof(item), "%s%s N=%d b=%d %.2fx (first call %.2fx)", summary.empty() ? "" : ", ",
                      p.routine.c_str(), p.n, p.block, p.speedup(), p.scalapack_first_call / p.redist_first_call);
        summary += item;
      }
      json.end_array();
      json.field("min_speedup", lowest);
      json.field("verified", verified);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        std::printf("%-9s %6s %6s %12s %12s %9s %16s %14s %11s\n", "routine", "N", "block", "scalapack_s", "redist_s",
                    "speedup", "scalapack_first_s", "first_call_s", "first_ratio");
        for (const point& p : points)
          std::printf("%-9s %6d %6d %12.4f %12.4f %8.2fx %16.4f %14.4f %10.2fx\n", p.routine.c_str(), p.n, p.block,
                      p.scalapack.best, p.redist.best, p.speedup(), p.scalapack_first_call, p.redist_first_call,
                      p.scalapack_first_call / p.redist_first_call);
      }
      std::printf("SUMMARY scalapack_sweep: %s; min speedup %.2fx; verified %s\n", summary.c_str(), lowest,
                  verified ? "yes" : "NO");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalapack_sweep (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
