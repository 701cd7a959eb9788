// SPDX-License-Identifier: BSD-3-Clause
// shared_window_bench: what a node-shared window costs to create, redist's (redist::node_buffer, made as
// src/mpi/shared_window.hpp asks MPI for its windows: the same call the transform's arenas and the GEMM's native
// A and B make) against MPI_Win_allocate_shared as an application calls it (a whole number of pages per rank,
// alloc_shared_noncontig = true), over the segment sizes per rank.
//
//   mpiexec.mpich -n 4 bench_shared_window_bench [--mib 8,32,128,256] [--reps 5] [--json out.json]
//
// Per size, --reps interleaved rounds, each creating and freeing one window of each kind (creation timed, the
// slowest rank's, MPI_Barrier first; freeing and the node communicator's split not timed); medians and bests.
// Every window is checked: each rank marks its segment (a byte per page) and reads the marks back, of its node
// peers' too for the application's window (after MPI_Win_sync and a barrier). On MPICH's ch4 device the application's window grows with its size (a symmetric-heap
// attempt that probes the address range page by page); redist's does not. Output: JSON (stdout, or --json FILE
// with a table on stdout), then one SUMMARY line. Exit status 1 when a check fails, 2 on errors.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.hpp"
#include "usage.hpp"

namespace {

using namespace redist_baseline;

struct options {
  std::vector<int> mib{8, 32, 128, 256};
  int repetitions = 5;
  std::string json_path;
};

constexpr const char* usage_text =
    "usage: bench_shared_window_bench [--mib 8,32,128,256] [--reps 5] [--json FILE]\n"
    "  --mib LIST        segment sizes per rank in MiB, comma-separated\n"
    "  --reps R          interleaved rounds per size, each creating and freeing one window of each kind (medians\n"
    "                    and bests of the creation, slowest rank)\n"
    "  --json FILE       write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n";

options parse(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++k];
    };
    if (is_help_argument(arg))
      throw usage_requested{usage_text};
    else if (arg == "--mib")
      o.mib = parse_int_list(next());
    else if (arg == "--reps")
      o.repetitions = parse_positive_int(next(), "--reps");
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg + "' (--mib, --reps, --json)");
  }
  return o;
}

unsigned char mark(int node_rank, std::int64_t at) { return static_cast<unsigned char>((node_rank * 29 + at) & 0xff); }

// The application's window: each rank marks a byte per page of its segment, then reads its node peers' marks
// (bases from MPI_Win_shared_query). Returns the wrong ones.
std::int64_t check_segments(MPI_Win window, MPI_Comm node, unsigned char* mine, std::int64_t bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  for (std::int64_t at = 0; at < bytes; at += 4096) mine[at] = mark(rank, at);
  MPI_Win_sync(window);
  MPI_Barrier(node);
  MPI_Win_sync(window);
  std::int64_t wrong = 0;
  for (int r = 0; r < size; ++r) {
    MPI_Aint peer_bytes = 0;
    int unit = 0;
    unsigned char* peer = nullptr;
    check_mpi(MPI_Win_shared_query(window, r, &peer_bytes, &unit, &peer), "MPI_Win_shared_query");
    for (std::int64_t at = 0; at < bytes; at += 4096) wrong += peer[at] != mark(r, at);
  }
  MPI_Barrier(node);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const options o = parse(argc, argv);
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "split");
    struct row {
      int mib = 0;
      timing application, redist;
      std::int64_t wrong = 0;
    };
    std::vector<row> rows;
    for (const int mib : o.mib) {
      const std::int64_t bytes = std::int64_t(mib) << 20;
      row r;
      r.mib = mib;
      std::vector<double> application, mine;
      for (int k = 0; k < o.repetitions; ++k) {
        // The application's window: a whole number of pages per rank, each rank's on its own pages.
        MPI_Info info;
        check_mpi(MPI_Info_create(&info), "MPI_Info_create");
        check_mpi(MPI_Info_set(info, "alloc_shared_noncontig", "true"), "MPI_Info_set");
        unsigned char* base = nullptr;
        MPI_Win window = MPI_WIN_NULL;
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double start = MPI_Wtime();
        check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, node, &base, &window),
                  "MPI_Win_allocate_shared");
        application.push_back(MPI_Wtime() - start);
        MPI_Info_free(&info);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
        r.wrong += check_segments(window, node, base, bytes);
        MPI_Win_unlock_all(window);
        MPI_Win_free(&window);
        // redist's, through the public node_buffer (collective, agreed on like every entry point).
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        start = MPI_Wtime();
        {
          redist::node_buffer buffer(MPI_COMM_WORLD, bytes);
          mine.push_back(MPI_Wtime() - start);
          // Its own segment only (node_buffer shows peers' to the transform, whose tests read them).
          auto* data = static_cast<unsigned char*>(buffer.data());
          for (std::int64_t at = 0; at < bytes; at += 4096) data[at] = mark(0, at);
          for (std::int64_t at = 0; at < bytes; at += 4096) r.wrong += data[at] != mark(0, at);
        }
      }
      r.application = summarize(MPI_COMM_WORLD, application);
      r.redist = summarize(MPI_COMM_WORLD, mine);
      std::int64_t wrong_total = 0;
      check_mpi(MPI_Allreduce(&r.wrong, &wrong_total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
      r.wrong = wrong_total;
      rows.push_back(r);
    }
    MPI_Comm_free(&node);
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "shared_window");
      json.field("ranks", world_size());
      json.field("repetitions", o.repetitions);
      json.key("points").begin_array();
      bool verified = true;
      double lowest = 1e300;
      std::string summary;
      for (const row& r : rows) {
        const double speedup = r.application.median / r.redist.median;
        json.begin_object();
        json.field("mib_per_rank", r.mib);
        json.field("application_median_seconds", r.application.median);
        json.field("application_best_seconds", r.application.best);
        json.field("redist_median_seconds", r.redist.median);
        json.field("redist_best_seconds", r.redist.best);
        json.field("speedup", speedup);
        json.field("wrong_bytes", r.wrong);
        json.end_object();
        verified = verified && r.wrong == 0;
        lowest = std::min(lowest, speedup);
        summary += (summary.empty() ? "" : ", ") + std::to_string(r.mib) + " MiB " +
                   std::to_string(speedup).substr(0, 5) + "x";
      }
      json.end_array();
      json.field("min_speedup", lowest);
      json.field("verified", verified);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        std::printf("%8s %16s %12s %9s\n", "MiB/rank", "application_s", "redist_s", "speedup");
        for (const row& r : rows)
          std::printf("%8d %16.4f %12.4f %8.2fx\n", r.mib, r.application.median, r.redist.median,
                      r.application.median / r.redist.median);
      }
      std::printf(
          "SUMMARY shared_window: window creation, %d ranks, medians of %d: %s; min speedup %.2fx; verified %s\n",
          world_size(), o.repetitions, summary.c_str(), lowest, verified ? "yes" : "no");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_window_bench (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
