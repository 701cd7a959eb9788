// SPDX-License-Identifier: BSD-3-Clause
// oversubscribed_calls: repeated calls as a program makes them, one after another with no barrier between, on a
// node that may run more processes than it has cores (7 on 2 here), redist against the MPI or ScaLAPACK call an
// application would make instead, in the same run. Per call kind: the median call time and the longest call of
// the slowest rank (a stall: a wait that did not get the core), for both.
//
//   mpiexec.mpich -n 7 bench_oversubscribed_calls [--calls 400] [--rounds 3] [--json out.json]
//
// Kinds (each round runs every kind's MPI calls, then redist's; --calls per kind and side, node buffers a tenth):
//   barrier       MPI_Barrier / MPI_Ibarrier completed by MPI_Test and sched_yield (what redist's waits do)
//   pdgemr2d      ScaLAPACK's pdgemr2d / redist_Cpdgemr2d, 64 x 64 from 8 x 8 blocks on P x 1 to 1 x P
//   alltoall      MPI_Alltoall(MPI_IN_PLACE) / redist::exchange::alltoall_inplace, 8 doubles per peer
//   neighbor      MPI_Dist_graph_create_adjacent + MPI_Neighbor_alltoallv + MPI_Comm_free / a redist neighbor
//                 plan made, started, waited and freed (standard strategy), a ring both ways
//   node_buffer   MPI_Comm_split_type + MPI_Win_allocate_shared + MPI_Win_free / redist::node_buffer, 4 KiB
// Results are checked (pdgemr2d against ScaLAPACK's, the exchanges against the expected values). Output: JSON
// (stdout, or --json FILE with a table on stdout), then one SUMMARY line. Exit status 1 when a check fails, 2 on
// errors.
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "usage.hpp"

namespace {

using namespace redist_baseline;

struct options {
  int calls = 400;
  int rounds = 3;
  std::string json_path;
};

constexpr const char* usage_text =
    "usage: bench_oversubscribed_calls [--calls 400] [--rounds 3] [--json FILE]\n"
    "  --calls N         calls per kind, side and round (node buffers: N/10, at least 2)\n"
    "  --rounds R        rounds, each running every kind's MPI calls then redist's\n"
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
    else if (arg == "--calls")
      o.calls = parse_positive_int(next(), "--calls");
    else if (arg == "--rounds")
      o.rounds = parse_positive_int(next(), "--rounds");
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg + "' (--calls, --rounds, --json)");
  }
  return o;
}

// Each call's duration on this rank, the calls made back to back.
void time_calls(int calls, const std::function<void()>& call, std::vector<double>& seconds) {
  double previous = MPI_Wtime();
  for (int k = 0; k < calls; ++k) {
    call();
    const double now = MPI_Wtime();
    seconds.push_back(now - previous);
    previous = now;
  }
}

struct side_figures {
  double median = 0;   // the slowest rank's median call
  double longest = 0;  // the longest call of any rank
};

side_figures figures(std::vector<double> mine) {
  std::sort(mine.begin(), mine.end());
  const double figure[2] = {mine.empty() ? 0 : mine[mine.size() / 2], mine.empty() ? 0 : mine.back()};
  double slowest[2] = {0, 0};
  BASELINE_MPI_CHECK(MPI_Allreduce(figure, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return {slowest[0], slowest[1]};
}

struct kind {
  std::string name, mpi_call, redist_call;
  int calls = 0;
  std::function<void()> mpi, redist;
  std::vector<double> mpi_seconds, redist_seconds;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const options o = parse(argc, argv);
    const int me = world_rank(), p = world_size();
    MPI_Comm node = MPI_COMM_NULL;
    BASELINE_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int on_node = 0;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    std::int64_t wrong = 0;

    // pdgemr2d: P x 1 to 1 x P, 64 x 64 in 8 x 8 blocks.
    blacs_grid rows(p, 1, redist::grid_order::row_major), cols(1, p, redist::grid_order::row_major);
    distributed_matrix a = make_matrix(rows, 64, 64, 8, 8), b_mpi = make_matrix(cols, 64, 64, 8, 8);
    distributed_matrix b_redist = make_matrix(cols, 64, 64, 8, 8);
    fill(a, source_value);
    const int n64 = 64, one = 1, whole = rows.context();
    // alltoall: 8 doubles to and from every rank.
    std::vector<double> exchanged_mpi(static_cast<size_t>(8 * p)), exchanged_redist(exchanged_mpi.size());
    const auto reset = [&](std::vector<double>& v) {
      for (int r = 0; r < p; ++r)
        for (int k = 0; k < 8; ++k) v[static_cast<size_t>(8 * r + k)] = me * 1000 + r * 10 + k;
    };
    // neighbor: a ring both ways, 4 doubles per edge.
    const int next = (me + 1) % p, previous = (me + p - 1) % p;
    const std::vector<int> destinations{next, previous}, sources{previous, next};
    const std::vector<int> counts{4, 4}, displs{0, 4};
    std::vector<double> ring_send(8, me), ring_mpi(8, -1), ring_redist(8, -1);

    std::vector<kind> kinds;
    kinds.push_back({"barrier",
                     "MPI_Barrier",
                     "MPI_Ibarrier + sched_yield",
                     o.calls,
                     [] { BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); },
                     [] {
                       MPI_Request request;
                       BASELINE_MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
                       for (int done = 0;;) {
                         BASELINE_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
                         if (done) break;
                         sched_yield();
                       }
                     },
                     {},
                     {}});
    kinds.push_back({"pdgemr2d",
                     "ScaLAPACK pdgemr2d",
                     "redist_Cpdgemr2d",
                     o.calls,
                     [&] {
                       pdgemr2d_(&n64, &n64, a.data(), &one, &one, a.desc.data(), b_mpi.data(), &one, &one,
                                 b_mpi.desc.data(), &whole);
                     },
                     [&] {
                       redist_Cpdgemr2d(64, 64, a.data(), 1, 1, a.desc.data(), b_redist.data(), 1, 1,
                                        b_redist.desc.data(), whole);
                     },
                     {},
                     {}});
    kinds.push_back({"alltoall",
                     "MPI_Alltoall(MPI_IN_PLACE)",
                     "exchange::alltoall_inplace",
                     o.calls,
                     [&] {
                       reset(exchanged_mpi);
                       BASELINE_MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 8, MPI_DOUBLE, exchanged_mpi.data(), 8, MPI_DOUBLE,
                                                       MPI_COMM_WORLD));
                     },
                     [&] {
                       reset(exchanged_redist);
                       redist::exchange::alltoall_inplace(exchanged_redist.data(), 8, MPI_DOUBLE, MPI_COMM_WORLD);
                     },
                     {},
                     {}});
    kinds.push_back(
        {"neighbor",
         "MPI_Dist_graph_create_adjacent + MPI_Neighbor_alltoallv",
         "exchange::neighbor_alltoallv_init + start + wait",
         o.calls,
         [&] {
           MPI_Comm graph = MPI_COMM_NULL;
           BASELINE_MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources.data(), MPI_UNWEIGHTED, 2,
                                                             destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                                             &graph));
           BASELINE_MPI_CHECK(MPI_Neighbor_alltoallv(ring_send.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                                     ring_mpi.data(), counts.data(), displs.data(), MPI_DOUBLE, graph));
           MPI_Comm_free(&graph);
         },
         [&] {
           redist::exchange::exchange_options standard;
           standard.strategy = redist::exchange::neighbor_strategy::standard;
           redist::exchange::neighbor_plan plan = redist::exchange::neighbor_alltoallv_init(
               sources, destinations,
               redist::exchange::neighbor_buffers{ring_send.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                                  ring_redist.data(), counts.data(), displs.data(), MPI_DOUBLE},
               MPI_COMM_WORLD, standard);
           plan.start();
           plan.wait();
         },
         {},
         {}});
    kinds.push_back({"node_buffer",
                     "MPI_Comm_split_type + MPI_Win_allocate_shared",
                     "redist::node_buffer",
                     std::max(2, o.calls / 10),
                     [] {
                       MPI_Comm shared = MPI_COMM_NULL;
                       BASELINE_MPI_CHECK(
                           MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
                       void* base = nullptr;
                       MPI_Win window = MPI_WIN_NULL;
                       BASELINE_MPI_CHECK(MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, shared, &base, &window));
                       MPI_Win_free(&window);
                       MPI_Comm_free(&shared);
                     },
                     [] { redist::node_buffer buffer(MPI_COMM_WORLD, 4096); },
                     {},
                     {}});

    // One untimed call of each (first calls make plans and cached communicators), then the rounds.
    for (kind& k : kinds) {
      k.mpi();
      k.redist();
    }
    for (int round = 0; round < o.rounds; ++round)
      for (kind& k : kinds) {
        time_calls(k.calls, k.mpi, k.mpi_seconds);
        time_calls(k.calls, k.redist, k.redist_seconds);
      }

    wrong += count_differences(b_mpi, b_redist);
    std::int64_t mine_wrong = 0;
    for (int r = 0; r < p; ++r)
      for (int k = 0; k < 8; ++k) {
        const double expected = r * 1000 + me * 10 + k;
        mine_wrong += exchanged_mpi[static_cast<size_t>(8 * r + k)] != expected;
        mine_wrong += exchanged_redist[static_cast<size_t>(8 * r + k)] != expected;
      }
    for (int k = 0; k < 8; ++k) {
      const double expected = k < 4 ? previous : next;
      mine_wrong += ring_mpi[static_cast<size_t>(k)] != expected;
      mine_wrong += ring_redist[static_cast<size_t>(k)] != expected;
    }
    std::int64_t total_wrong = 0;
    BASELINE_MPI_CHECK(MPI_Allreduce(&mine_wrong, &total_wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    wrong += total_wrong;

    struct row {
      const kind* k;
      side_figures mpi, redist;
    };
    std::vector<row> table;
    for (const kind& k : kinds) table.push_back({&k, figures(k.mpi_seconds), figures(k.redist_seconds)});
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (me == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "oversubscribed_calls");
      json.field("ranks", p);
      json.field("processes_on_node", on_node);
      json.field("cores_online", static_cast<std::int64_t>(cores));
      json.field("rounds", o.rounds);
      json.key("kinds").begin_array();
      std::string summary;
      double longest_redist = 0;
      std::string longest_kind;
      for (const row& r : table) {
        json.begin_object();
        json.field("kind", r.k->name);
        json.field("mpi_call", r.k->mpi_call);
        json.field("redist_call", r.k->redist_call);
        json.field("calls", static_cast<std::int64_t>(r.k->calls) * o.rounds);
        json.field("mpi_median_seconds", r.mpi.median);
        json.field("mpi_longest_seconds", r.mpi.longest);
        json.field("redist_median_seconds", r.redist.median);
        json.field("redist_longest_seconds", r.redist.longest);
        json.field("ratio", r.redist.median / r.mpi.median);
        json.end_object();
        char part[160];
        std::snprintf(part, sizeof part, "%s %.3g/%.3g ms (%.3gx)", r.k->name.c_str(), r.redist.median * 1e3,
                      r.mpi.median * 1e3, r.redist.median / r.mpi.median);
        summary += (summary.empty() ? "" : ", ") + std::string(part);
        if (r.redist.longest > longest_redist) {
          longest_redist = r.redist.longest;
          longest_kind = r.k->name;
        }
      }
      json.end_array();
      json.field("verified", wrong == 0);
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        std::printf("%-12s %16s %16s %16s %16s %8s\n", "kind", "mpi_median_ms", "mpi_longest_ms", "redist_median_ms",
                    "redist_longest_ms", "ratio");
        for (const row& r : table)
          std::printf("%-12s %16.3f %16.3f %16.3f %16.3f %8.3gx\n", r.k->name.c_str(), r.mpi.median * 1e3,
                      r.mpi.longest * 1e3, r.redist.median * 1e3, r.redist.longest * 1e3,
                      r.redist.median / r.mpi.median);
      }
      std::printf(
          "SUMMARY oversubscribed_calls: %d processes on %ld cores, median call redist/MPI: %s; longest redist "
          "call %.3g ms (%s); verified %s\n",
          on_node, cores, summary.c_str(), longest_redist * 1e3, longest_kind.c_str(), wrong == 0 ? "yes" : "no");
      if (wrong != 0) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oversubscribed_calls (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  blacs_exit_keep_mpi();
  MPI_Finalize();
  return status;
}
