// SPDX-License-Identifier: BSD-3-Clause
// pdgemm_crossover: where redist's p?gemm overtakes ScaLAPACK's, which decides the default of
// REDIST_PDGEMM_DELEGATE_BELOW (libredist_scalapack hands smaller multiplies to the user's ScaLAPACK). Times
// Debian's pdgemm_ and redist_pdgemm (what libredist_scalapack runs above the threshold) on identical data:
// C (m x n) = A (m x k) * B (k x n), all three block-cyclic with square blocks on one P x Q grid over every
// rank, for m = a*s, n = b*s, k = c*s over a list of s (--shape a:b:c, default cubes).
//
//   OMP_NUM_THREADS=1 mpiexec.mpich -n 4 bench_pdgemm_crossover [--s 16,32,48,64,96,128] [--shape 1:1:1]
//                                                               [--block 32] [--reps 20] [--json out.json]
//
// Per size: ScaLAPACK's median, redist's first call (it plans) and its median over the repeated calls after it
// (cached plan, as a program repeating a call sees). Both C are compared element by element (within a rounding
// tolerance: the sums run in different orders). Output: a table (stderr), JSON (stdout, or --json FILE) and one
// SUMMARY line with the smallest multiply-add count (m*n*k) from which redist's cached calls are faster at
// every larger size measured. Exit status 1 when the results differ, 2 on errors.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.h"
#include "usage.hpp"

extern "C" void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                        const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                        const double*, double*, const int*, const int*, const int*);

namespace {

using namespace redist_baseline;

struct crossover_options {
  std::vector<int> scales{16, 24, 32, 48, 64, 96, 128, 192};
  int shape_m = 1, shape_n = 1, shape_k = 1;
  int block = 32;
  int repetitions = 20;
  std::string json_path;
};

constexpr const char* usage_text =
    "usage: bench_pdgemm_crossover [--s 16,24,32,48,64,96,128,192] [--shape 1:1:1] [--block 32] [--reps 20] "
    "[--json FILE]\n"
    "  --s LIST          scales s, comma-separated: C (m x n) = A (m x k) * B (k x n) with m = a*s, n = b*s, k = c*s\n"
    "  --shape a:b:c     the ratios of m, n and k to s (default cubes)\n"
    "  --block B         square blocks of A, B and C on one P x Q grid over every rank\n"
    "  --reps R          repeated calls after the first (medians; redist's reuse the cached plan)\n"
    "  --json FILE       write the JSON to FILE instead of stdout (the table goes to stderr)\n";

crossover_options parse(int argc, char** argv) {
  crossover_options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++k];
    };
    if (is_help_argument(arg)) {
      throw usage_requested{usage_text};
    } else if (arg == "--s") {
      o.scales = parse_int_list(next());
    } else if (arg == "--shape") {
      std::string text = next();
      std::replace(text.begin(), text.end(), ':', ',');
      const std::vector<int> ratio = parse_int_list(text);
      if (ratio.size() != 3) throw std::invalid_argument("--shape needs three ratios a:b:c");
      o.shape_m = ratio[0], o.shape_n = ratio[1], o.shape_k = ratio[2];
    } else if (arg == "--block") {
      o.block = parse_positive_int(next(), "--block");
    } else if (arg == "--reps") {
      o.repetitions = parse_positive_int(next(), "--reps");
    } else if (arg == "--json") {
      o.json_path = next();
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "' (--s, --shape, --block, --reps, --json)");
    }
  }
  return o;
}

struct point {
  int m = 0, n = 0, k = 0;
  timing scalapack, redist;
  double redist_first_call = 0;  // includes planning
  std::int64_t differences = 0;
  std::int64_t multiply_adds() const { return std::int64_t{m} * n * k; }
};

// Elements of the shares of x and y (same descriptor) further apart than `tolerance`, summed over all ranks.
std::int64_t count_far(const distributed_matrix& x, const distributed_matrix& y, double tolerance) {
  std::int64_t far = 0;
  for (size_t i = 0; i < x.local.size(); ++i) far += !(std::abs(x.local[i] - y.local[i]) <= tolerance);
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&far, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

point run_point(const blacs_grid& grid, int m, int n, int k, int block, int repetitions) {
  point p;
  p.m = m, p.n = n, p.k = k;
  distributed_matrix a = make_matrix(grid, m, k, block, block);
  distributed_matrix b = make_matrix(grid, k, n, block, block);
  distributed_matrix c_scalapack = make_matrix(grid, m, n, block, block);
  distributed_matrix c_redist = make_matrix(grid, m, n, block, block);
  // Values in [-1, 1): the products' sums stay small, so their rounding is comparable.
  const auto small = [](std::int64_t i, std::int64_t j) {
    return static_cast<double>((i * 7 + j * 13) % 17) / 8.5 - 1.0;
  };
  fill(a, small);
  fill(b, [&](std::int64_t i, std::int64_t j) { return small(j, i); });
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  p.scalapack = time_repeated(
      MPI_COMM_WORLD, repetitions, [] {},
      [&] {
        pdgemm_("N", "N", &m, &n, &k, &alpha, a.data(), &one, &one, a.desc.data(), b.data(), &one, &one, b.desc.data(),
                &beta, c_scalapack.data(), &one, &one, c_scalapack.desc.data());
      });
  const auto call_redist = [&] {
    redist_pdgemm("N", "N", &m, &n, &k, &alpha, a.data(), &one, &one, a.desc.data(), b.data(), &one, &one,
                  b.desc.data(), &beta, c_redist.data(), &one, &one, c_redist.desc.data());
  };
  p.redist_first_call = time_once(MPI_COMM_WORLD, call_redist);
  p.redist = time_repeated(
      MPI_COMM_WORLD, repetitions, [] {}, call_redist);
  p.differences = count_far(c_redist, c_scalapack, 4.0 * (k + 2) * 1.1e-16 * (k + 1));
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const crossover_options o = parse(argc, argv);
    const int ranks = world_size();
    int rows = 1;
    for (int r = 1; r * r <= ranks; ++r)
      if (ranks % r == 0) rows = r;
    std::vector<point> points;
    {
      blacs_grid grid(rows, ranks / rows, redist::grid_order::row_major);
      for (int s : o.scales) {
        points.push_back(run_point(grid, o.shape_m * s, o.shape_n * s, o.shape_k * s, o.block, o.repetitions));
        const point& p = points.back();
        if (world_rank() == 0)
          std::fprintf(stderr,
                       "  %4d x %4d x %4d (%9lld multiply-adds): ScaLAPACK %9.1f us, redist %9.1f us (%.2fx), "
                       "first call %9.1f us\n",
                       p.m, p.n, p.k, static_cast<long long>(p.multiply_adds()), p.scalapack.median * 1e6,
                       p.redist.median * 1e6, p.scalapack.median / p.redist.median, p.redist_first_call * 1e6);
      }
    }
    blacs_exit_keep_mpi();
    // The smallest size from which redist's cached calls win at every larger size measured.
    std::int64_t crossover = -1;
    for (size_t i = points.size(); i-- > 0;) {
      if (points[i].redist.median >= points[i].scalapack.median) break;
      crossover = points[i].multiply_adds();
    }
    bool verified = true;
    for (const point& p : points) verified = verified && p.differences == 0;
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "pdgemm_crossover");
      json.field("ranks", ranks);
      json.field("grid", std::to_string(rows) + "x" + std::to_string(ranks / rows) + " row-major, all operands");
      json.field("block", o.block);
      json.field("repetitions", o.repetitions);
      json.key("points").begin_array();
      for (const point& p : points) {
        json.begin_object();
        json.field("m", p.m).field("n", p.n).field("k", p.k).field("multiply_adds", p.multiply_adds());
        json.field("scalapack_median_s", p.scalapack.median).field("scalapack_best_s", p.scalapack.best);
        json.field("redist_median_s", p.redist.median).field("redist_best_s", p.redist.best);
        json.field("redist_first_call_s", p.redist_first_call);
        json.field("differences", p.differences);
        json.end_object();
      }
      json.end_array();
      json.field("crossover_multiply_adds", crossover);
      json.field("verified", verified);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
      }
      std::printf("SUMMARY pdgemm_crossover ranks=%d block=%d crossover_multiply_adds=%lld verified=%s\n", ranks,
                  o.block, static_cast<long long>(crossover), verified ? "yes" : "no");
    }
    if (!verified) status = 1;
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pdgemm_crossover: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
