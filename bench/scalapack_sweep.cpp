// SPDX-License-Identifier: BSD-3-Clause
// scalapack_sweep: ScaLAPACK's pdgemr2d and pdtran against redist's ScaLAPACK entry points (redist_pdgemr2d,
// redist_pdtran: what a program relinked with libredist_scalapack runs) over matrix sizes and source block
// sizes (COSTA paper, Fig. 2: b x b blocks -> 128 x 128 blocks, both on a 2x2 grid, or the --grid given).
//
//   mpiexec.mpich -n 4 bench_scalapack_sweep [--n 2000,4000,8000] [--blocks 16,32,64] [--reps 5] [--json out.json]
//                                            [--costa /path/to/libcosta_prefixed_scalapack.so] [--grid 2x2]
//                                            [--layouts K]
//
// --costa adds COSTA (github eth-cscs/COSTA, built separately: never a build dependency) as a third library:
// its ScaLAPACK-API library is dlopen()ed at run time, costa_pdgemr2d_ / costa_pdtran_ (or, from
// libcosta_scalapack.so, its own pdgemr2d_ / pdtran_) are timed and checked like the other two, in the order
// ScaLAPACK, COSTA, redist at every point. Without --costa nothing is loaded and the output is unchanged.
//
// Per point and routine, both libraries run the same call on identical data in the same run; both results
// are checked element by element against the analytic values. Each library's first call on the data (redist: a
// one-shot plan and its execution) is timed on its own (first_call_seconds, scalapack_first_call_seconds), and so
// is its second call (second_call_seconds, scalapack_second_call_seconds: redist's may replace a one-shot plan
// with the repeated-call plan, docs/scalapack.md); the repetitions after them (for redist, after untimed calls up
// to the one by which the drop-in has replaced its one-shot plan) reuse the cached plan, as a program calling the
// routine repeatedly does. Output: one JSON object (stdout, or --json FILE with a table on stdout),
// then one SUMMARY line.
// --layouts K adds, per N, K distinct pdgemr2d calls (source blocks 8, 9, ..., 8 + K - 1 -> 128 x 128), each
// library's first calls one after the other as a program converting between many pairs of layouts makes them:
// their summed time, every result verified, and how much each library's calls grew the resident set (redist keeps
// up to 16 plans per context; ScaLAPACK keeps nothing).
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
#include "peers.hpp"
#include "redist/redist.h"
#include "usage.hpp"

namespace {

using namespace redist_baseline;

struct sweep_options {
  std::vector<int> sizes{2000, 4000, 8000};
  std::vector<int> blocks{16, 32, 64};
  int repetitions = 5;
  std::string json_path;
  std::string costa_path;            // empty: no COSTA
  int grid_rows = 2, grid_cols = 2;  // --grid RxC (row-major); needs at least R*C ranks
  int layouts = 0;                   // --layouts K: K distinct pdgemr2d layouts per N (0: none)
};

// "RxC" with R, C >= 1.
void parse_grid(const std::string& text, sweep_options& o) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) throw std::invalid_argument("--grid wants RxC (e.g. 2x2), got '" + text + "'");
  o.grid_rows = parse_positive_int(text.substr(0, x), "--grid rows");
  o.grid_cols = parse_positive_int(text.substr(x + 1), "--grid columns");
}

constexpr const char* usage_text =
    "usage: bench_scalapack_sweep [--n 2000,4000,8000] [--blocks 16,32,64] [--reps 5] [--json FILE] "
    "[--costa LIBRARY] [--grid 2x2] [--layouts K]\n"
    "  --n LIST          matrix sizes N (N x N doubles), comma-separated\n"
    "  --blocks LIST     source block sizes b, comma-separated: b x b blocks -> 128 x 128 blocks\n"
    "  --reps R          timed repetitions after the first and second calls (reusing the cached plan)\n"
    "  --json FILE       write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n"
    "  --costa LIBRARY   also time COSTA, its ScaLAPACK-API library dlopen()ed (e.g. libcosta_prefixed_scalapack.so)\n"
    "  --grid RxC        the process grid of both operands, row-major (needs at least R*C ranks)\n"
    "  --layouts K       also K distinct pdgemr2d layouts per N (source blocks 8 .. 8 + K - 1 -> 128 x 128), first\n"
    "                    calls one after the other: summed time and resident set growth (default: none)\n";

sweep_options parse(int argc, char** argv) {
  sweep_options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++k];
    };
    if (is_help_argument(arg))
      throw usage_requested{usage_text};
    else if (arg == "--n")
      o.sizes = parse_int_list(next());
    else if (arg == "--blocks")
      o.blocks = parse_int_list(next());
    else if (arg == "--reps")
      o.repetitions = parse_positive_int(next(), "--reps");
    else if (arg == "--json")
      o.json_path = next();
    else if (arg == "--costa")
      o.costa_path = next();
    else if (arg == "--grid")
      parse_grid(next(), o);
    else if (arg == "--layouts")
      o.layouts = parse_positive_int(next(), "--layouts");
    else
      throw std::invalid_argument("unknown argument '" + arg +
                                  "' (--n, --blocks, --reps, --json, --costa, --grid, --layouts)");
  }
  return o;
}

struct point {
  std::string routine;
  int n = 0, block = 0;
  timing scalapack, costa, redist;  // costa: empty without --costa
  double scalapack_first_call = 0;  // ScaLAPACK's first call on this data
  double costa_first_call = 0;      // COSTA's first call on this data
  double redist_first_call = 0;     // includes planning
  // Each library's second call: redist's may replace a one-shot plan with the repeated-call plan
  // (docs/scalapack.md), which a program that calls twice pays; the steady figures are the repetitions after
  // redist's plan has settled.
  double scalapack_second_call = 0, costa_second_call = 0, redist_second_call = 0;
  std::int64_t scalapack_wrong = 0, costa_wrong = 0, redist_wrong = 0;
  double speedup() const { return scalapack.best / redist.best; }
  double first_call_speedup() const { return scalapack_first_call / redist_first_call; }
  double speedup_vs_costa() const { return costa.best / redist.best; }
  double first_call_speedup_vs_costa() const { return costa_first_call / redist_first_call; }
};

constexpr int target_block = 128;

point run_point(const blacs_grid& grid, const costa_library& costa, const std::string& routine, int n, int block,
                int repetitions) {
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
  auto call_costa = [&] {
    if (transpose) {
      double costa_alpha = alpha;
      costa.pdtran(&n, &n, &costa_alpha, a.data(), &one, &one, a.desc.data(), &beta, target.data(), &one, &one,
                   target.desc.data());
    } else {
      costa.pdgemr2d(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(),
                     &context);
    }
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
  reset();
  p.scalapack_second_call = time_once(MPI_COMM_WORLD, call_scalapack);
  p.scalapack = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_scalapack);
  p.scalapack_wrong = count_wrong_elements(target, expected);
  // The order ScaLAPACK, COSTA, redist is the same at every point, so whatever a place in it costs or gains
  // (caches, pages of the target already touched) is alike across points.
  if (costa.loaded()) {
    reset();
    p.costa_first_call = time_once(MPI_COMM_WORLD, call_costa);
    reset();
    p.costa_second_call = time_once(MPI_COMM_WORLD, call_costa);
    p.costa = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_costa);
    p.costa_wrong = count_wrong_elements(target, expected);
  }
  reset();
  p.redist_first_call = time_once(MPI_COMM_WORLD, call_redist);
  reset();
  p.redist_second_call = time_once(MPI_COMM_WORLD, call_redist);
  settle_drop_in_plan(2, call_redist);
  p.redist = time_repeated(MPI_COMM_WORLD, repetitions, reset, call_redist);
  p.redist_wrong = count_wrong_elements(target, expected);
  return p;
}

// K distinct layout pairs at one N: each library's K first calls.
struct layouts_point {
  int n = 0, keys = 0;
  double scalapack_seconds = 0, costa_seconds = 0, redist_seconds = 0;
  // Growth of the resident set over each library's K calls, the largest over the ranks.
  std::int64_t scalapack_resident_growth = 0, costa_resident_growth = 0, redist_resident_growth = 0;
  std::int64_t scalapack_wrong = 0, costa_wrong = 0, redist_wrong = 0;
};

layouts_point run_layouts(const blacs_grid& grid, const costa_library& costa, int n, int keys) {
  layouts_point p;
  p.n = n;
  p.keys = keys;
  std::vector<distributed_matrix> sources;
  for (int k = 0; k < keys; ++k) {
    sources.push_back(make_matrix(grid, n, n, 8 + k, 8 + k));
    fill(sources.back(), source_value);
  }
  distributed_matrix target = make_matrix(grid, n, n, target_block, target_block);
  const int one = 1, context = grid.context();
  const auto largest = [](std::int64_t mine) {
    std::int64_t most = 0;
    BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
    return most;
  };
  // Each library's K calls, timed one by one (as first calls are), checked after each.
  const auto run = [&](auto&& call, double& seconds, std::int64_t& growth, std::int64_t& wrong) {
    const std::int64_t before = resident_bytes();
    for (distributed_matrix& a : sources) {
      fill(target, target_initial_value);
      seconds += time_once(MPI_COMM_WORLD, [&] { call(a); });
      wrong += count_wrong_elements(target, source_value);
    }
    growth = largest(resident_bytes() - before);
  };
  run(
      [&](distributed_matrix& a) {
        pdgemr2d_(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(), &context);
      },
      p.scalapack_seconds, p.scalapack_resident_growth, p.scalapack_wrong);
  if (costa.loaded())
    run(
        [&](distributed_matrix& a) {
          costa.pdgemr2d(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(),
                         &context);
        },
        p.costa_seconds, p.costa_resident_growth, p.costa_wrong);
  run(
      [&](distributed_matrix& a) {
        redist_pdgemr2d(&n, &n, a.data(), &one, &one, a.desc.data(), target.data(), &one, &one, target.desc.data(),
                        &context);
      },
      p.redist_seconds, p.redist_resident_growth, p.redist_wrong);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const sweep_options o = parse(argc, argv);
    if (world_size() < o.grid_rows * o.grid_cols)
      throw std::invalid_argument("scalapack_sweep needs " + std::to_string(o.grid_rows * o.grid_cols) +
                                  " MPI ranks for its " + std::to_string(o.grid_rows) + "x" +
                                  std::to_string(o.grid_cols) + " grid, has " + std::to_string(world_size()));
    const costa_library costa = load_costa(o.costa_path);
    std::vector<point> points;
    std::vector<layouts_point> layouts;
    std::string grid_description;
    {
      blacs_grid grid(o.grid_rows, o.grid_cols, redist::grid_order::row_major);
      grid_description = grid.describe() + ", both operands";
      for (int n : o.sizes)
        for (int b : o.blocks)
          for (const char* routine : {"pdgemr2d", "pdtran"}) {
            points.push_back(run_point(grid, costa, routine, n, b, o.repetitions));
            const point& p = points.back();
            if (world_rank() == 0 && costa.loaded())
              std::fprintf(stderr,
                           "  %s N=%d %dx%d -> 128x128: ScaLAPACK %.4f s, COSTA %.4f s, redist %.4f s (%.2fx, %.2fx "
                           "vs COSTA)\n",
                           routine, n, b, b, p.scalapack.best, p.costa.best, p.redist.best, p.speedup(),
                           p.speedup_vs_costa());
            else if (world_rank() == 0)
              std::fprintf(stderr, "  %s N=%d %dx%d -> 128x128: ScaLAPACK %.4f s, redist %.4f s (%.2fx)\n", routine, n,
                           b, b, p.scalapack.best, p.redist.best, p.speedup());
          }
    }
    if (o.layouts > 0) {
      // A context of its own: no plan of the points above is cached on it.
      blacs_grid grid(o.grid_rows, o.grid_cols, redist::grid_order::row_major);
      for (int n : o.sizes) {
        layouts.push_back(run_layouts(grid, costa, n, o.layouts));
        const layouts_point& p = layouts.back();
        if (world_rank() == 0)
          std::fprintf(stderr,
                       "  %d pdgemr2d layouts N=%d: ScaLAPACK %.4f s, redist %.4f s (%.2fx), resident +%.1f MB\n",
                       p.keys, n, p.scalapack_seconds, p.redist_seconds, p.scalapack_seconds / p.redist_seconds,
                       static_cast<double>(p.redist_resident_growth) / 1e6);
      }
    }
    blacs_exit_keep_mpi();
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "scalapack_sweep");
      json.field("ranks", world_size());
      json.field("grid", grid_description);
      json.field("target_block", target_block);
      json.field("repetitions", o.repetitions);
      if (costa.loaded()) {
        json.field("costa_library", costa.path());
        json.field("costa_pdgemr2d_symbol", costa.pdgemr2d_symbol);
        json.field("costa_pdtran_symbol", costa.pdtran_symbol);
      }
      json.key("points").begin_array();
      double lowest = 1e300, lowest_vs_costa = 1e300;
      bool verified = true;
      std::string summary, summary_vs_costa;
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
        json.field("first_call_speedup", p.first_call_speedup());
        json.field("second_call_seconds", p.redist_second_call);
        json.field("scalapack_second_call_seconds", p.scalapack_second_call);
        json.field("speedup", p.speedup());
        json.field("scalapack_wrong_elements", p.scalapack_wrong);
        json.field("redist_wrong_elements", p.redist_wrong);
        if (costa.loaded()) {
          json.field("costa_seconds", p.costa.best);
          json.field("costa_median_seconds", p.costa.median);
          json.field("costa_first_call_seconds", p.costa_first_call);
          json.field("costa_second_call_seconds", p.costa_second_call);
          json.field("speedup_vs_costa", p.speedup_vs_costa());
          json.field("first_call_speedup_vs_costa", p.first_call_speedup_vs_costa());
          json.field("costa_wrong_elements", p.costa_wrong);
        }
        json.end_object();
        lowest = std::min(lowest, p.speedup());
        verified = verified && p.redist_wrong == 0 && p.scalapack_wrong == 0 && p.costa_wrong == 0;
        char item[128];
        std::snprintf(item, sizeof(item), "%s%s N=%d b=%d %.2fx (first call %.2fx)", summary.empty() ? "" : ", ",
                      p.routine.c_str(), p.n, p.block, p.speedup(), p.first_call_speedup());
        summary += item;
        if (costa.loaded()) {
          lowest_vs_costa = std::min(lowest_vs_costa, p.speedup_vs_costa());
          std::snprintf(item, sizeof(item), "%s%s N=%d b=%d %.2fx (first call %.2fx)",
                        summary_vs_costa.empty() ? "" : ", ", p.routine.c_str(), p.n, p.block, p.speedup_vs_costa(),
                        p.first_call_speedup_vs_costa());
          summary_vs_costa += item;
        }
      }
      json.end_array();
      std::string layouts_summary;
      if (!layouts.empty()) {
        json.key("layouts").begin_array();
        for (const layouts_point& p : layouts) {
          json.begin_object();
          json.field("n", p.n);
          json.field("keys", p.keys);
          json.field("scalapack_seconds", p.scalapack_seconds);
          json.field("redist_seconds", p.redist_seconds);
          json.field("speedup", p.scalapack_seconds / p.redist_seconds);
          json.field("scalapack_resident_growth_bytes", p.scalapack_resident_growth);
          json.field("redist_resident_growth_bytes", p.redist_resident_growth);
          json.field("scalapack_wrong_elements", p.scalapack_wrong);
          json.field("redist_wrong_elements", p.redist_wrong);
          if (costa.loaded()) {
            json.field("costa_seconds", p.costa_seconds);
            json.field("speedup_vs_costa", p.costa_seconds / p.redist_seconds);
            json.field("costa_resident_growth_bytes", p.costa_resident_growth);
            json.field("costa_wrong_elements", p.costa_wrong);
          }
          json.end_object();
          verified = verified && p.redist_wrong == 0 && p.scalapack_wrong == 0 && p.costa_wrong == 0;
          char item[160];
          std::snprintf(item, sizeof(item), "%s%d layouts N=%d %.2fx (resident +%.1f MB, ScaLAPACK +%.1f MB)",
                        layouts_summary.empty() ? "; " : ", ", p.keys, p.n, p.scalapack_seconds / p.redist_seconds,
                        static_cast<double>(p.redist_resident_growth) / 1e6,
                        static_cast<double>(p.scalapack_resident_growth) / 1e6);
          layouts_summary += item;
        }
        json.end_array();
      }
      json.field("min_speedup", lowest);
      if (costa.loaded()) json.field("min_speedup_vs_costa", lowest_vs_costa);
      json.field("verified", verified);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        // COSTA's columns follow the existing ones, so that the table without --costa is unchanged.
        std::printf("%-9s %6s %6s %12s %12s %9s %16s %14s %11s", "routine", "N", "block", "scalapack_s", "redist_s",
                    "speedup", "scalapack_first_s", "first_call_s", "first_ratio");
        if (costa.loaded())
          std::printf(" %12s %9s %14s %15s", "costa_s", "vs_costa", "costa_first_s", "first_vs_costa");
        std::printf("\n");
        for (const point& p : points) {
          std::printf("%-9s %6d %6d %12.4f %12.4f %8.2fx %16.4f %14.4f %10.2fx", p.routine.c_str(), p.n, p.block,
                      p.scalapack.best, p.redist.best, p.speedup(), p.scalapack_first_call, p.redist_first_call,
                      p.first_call_speedup());
          if (costa.loaded())
            std::printf(" %12.4f %8.2fx %14.4f %14.2fx", p.costa.best, p.speedup_vs_costa(), p.costa_first_call,
                        p.first_call_speedup_vs_costa());
          std::printf("\n");
        }
      }
      std::string vs_costa;
      if (costa.loaded()) {
        char min_item[64];
        std::snprintf(min_item, sizeof(min_item), "; min speedup vs COSTA %.2fx", lowest_vs_costa);
        vs_costa = "; vs COSTA: " + summary_vs_costa + min_item;
      }
      std::printf("SUMMARY scalapack_sweep: %s; min speedup %.2fx%s%s; verified %s\n", summary.c_str(), lowest,
                  vs_costa.c_str(), layouts_summary.c_str(), verified ? "yes" : "NO");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalapack_sweep (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
