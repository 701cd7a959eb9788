// SPDX-License-Identifier: BSD-3-Clause
// exchange_bench: redist's persistent neighborhood alltoallv (standard, aggregate, dedup, auto) against MPICH's
// MPI_Neighbor_alltoallv_init on SpMV halo exchanges, in the same run.
//
//   MPIR_CVAR_NUM_CLIQUES=4 mpiexec.mpich -n 16 bench_exchange_bench [--patterns diffusion128,matrices,...]
//       [--matrix-dir DIR] [--region-size N] [--iterations 100] [--rounds 5] [--json out.json]
//
// Patterns: diffusionN (the rotated anisotropic diffusion matrix of the paper on an N x N grid, 45 degrees,
// anisotropy 0.001), a Matrix Market file name in --matrix-dir (default: the repository's tests/data/matrices)
// or a path, `matrices` (every .mtx there); a suffix `:shuffled` renumbers rows and columns by a fixed random
// permutation first (an unstructured partition: every rank then talks to many, as on coarse multigrid
// levels). Rows and vector entries are split in contiguous blocks over the ranks; each rank's halo is the
// exchange (ids: global column indices). Regions: blocks of --region-size ranks, default 0 = the node (run
// with MPIR_CVAR_NUM_CLIQUES to emulate nodes, so that inter-region messages leave shared memory).
// Per pattern and strategy (and auto with the built-in figures of a typical cluster instead of this
// machine's, to show what it would choose there): time per exchange (median and best of --rounds rounds of --iterations
// start/wait cycles, slowest rank; the variants interleave within a round), init time, messages and bytes
// between and within regions (max per rank, total). auto is judged twice: by its own runs, and by the fixed
// variant of the strategy it chose (the same plan, timed separately: the choice without the timing noise of
// an extra variant). Results are checked against MPI's element by element.
// Output: JSON (stdout, or --json FILE with a table on stdout), then one SUMMARY line. Exit status 1 when a
// verification fails, 2 on errors.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/exchange/neighbor.hpp"
#include "redist_tools/patterns.hpp"
#include "usage.hpp"

namespace {

using namespace redist_baseline;
namespace ex = redist::exchange;

struct bench_options {
  std::vector<std::string> patterns;
  std::string matrix_dir = REDIST_MATRIX_DIR;
  int region_size = 0;
  int iterations = 100;
  int rounds = 5;
  std::string json_path;
};

constexpr const char* default_patterns = "diffusion64,diffusion128,diffusion256,diffusion64:shuffled,matrices";

const std::string usage_text =
    std::string("usage: bench_exchange_bench [--patterns ") + default_patterns +
    "] [--matrix-dir DIR] [--region-size 0] [--iterations 100] [--rounds 5] [--json FILE]\n"
    "  --patterns LIST    halo patterns, comma-separated: diffusionN (the paper's rotated anisotropic diffusion\n"
    "                     matrix on an N x N grid), a Matrix Market file in --matrix-dir or a path, matrices (every\n"
    "                     .mtx there); suffix :shuffled renumbers rows and columns by a fixed random permutation\n"
    "  --matrix-dir DIR   where Matrix Market names are found (default " REDIST_MATRIX_DIR
    ")\n"
    "  --region-size N    ranks per region, 0 = the node (MPIR_CVAR_NUM_CLIQUES emulates nodes)\n"
    "  --iterations N     start/wait cycles per round\n"
    "  --rounds N         timed rounds (median and best per exchange, slowest rank)\n"
    "  --json FILE        write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n";

bench_options parse(int argc, char** argv) {
  bench_options o;
  std::string patterns = default_patterns;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const auto next = [&]() -> std::string {
      if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++a];
    };
    if (is_help_argument(arg))
      throw usage_requested{usage_text};
    else if (arg == "--patterns")
      patterns = next();
    else if (arg == "--matrix-dir")
      o.matrix_dir = next();
    else if (arg == "--region-size")
      o.region_size = std::stoi(next());
    else if (arg == "--iterations")
      o.iterations = parse_positive_int(next(), "--iterations");
    else if (arg == "--rounds")
      o.rounds = parse_positive_int(next(), "--rounds");
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg +
                                  "' (--patterns, --matrix-dir, --region-size, --iterations, --rounds, --json)");
  }
  size_t begin = 0;
  while (begin <= patterns.size()) {
    const size_t end = std::min(patterns.find(',', begin), patterns.size());
    const std::string name = patterns.substr(begin, end - begin);
    if (name == "matrices") {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(o.matrix_dir))
        if (entry.path().extension() == ".mtx") files.push_back(entry.path().filename().string());
      std::sort(files.begin(), files.end());
      o.patterns.insert(o.patterns.end(), files.begin(), files.end());
    } else if (!name.empty()) {
      o.patterns.push_back(name);
    }
    begin = end + 1;
  }
  if (o.region_size < 0) throw std::invalid_argument("--region-size must be >= 0");
  return o;
}

// Rows and columns renumbered by one fixed permutation (the same on every rank).
ex::sparse_matrix shuffled(const ex::sparse_matrix& a) {
  std::vector<std::int64_t> row_perm(static_cast<size_t>(a.rows)), col_perm(static_cast<size_t>(a.cols));
  std::iota(row_perm.begin(), row_perm.end(), 0);
  std::iota(col_perm.begin(), col_perm.end(), 0);
  std::mt19937_64 g(12345);
  std::shuffle(row_perm.begin(), row_perm.end(), g);
  if (a.rows == a.cols)
    col_perm = row_perm;  // a symmetric renumbering keeps the square structure
  else
    std::shuffle(col_perm.begin(), col_perm.end(), g);
  std::vector<std::int64_t> old_row_of(row_perm.size());
  for (size_t r = 0; r < row_perm.size(); ++r)
    old_row_of[static_cast<size_t>(row_perm[r])] = static_cast<std::int64_t>(r);
  ex::sparse_matrix b;
  b.rows = a.rows;
  b.cols = a.cols;
  b.row_start.push_back(0);
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const std::int64_t old = old_row_of[static_cast<size_t>(r)];
    std::vector<std::pair<std::int64_t, double>> entries;
    for (std::int64_t k = a.row_start[old]; k < a.row_start[old + 1]; ++k)
      entries.emplace_back(col_perm[static_cast<size_t>(a.column[k])], a.value.empty() ? 1.0 : a.value[k]);
    std::sort(entries.begin(), entries.end());
    for (auto [c, v] : entries) {
      b.column.push_back(c);
      b.value.push_back(v);
    }
    b.row_start.push_back(static_cast<std::int64_t>(b.column.size()));
  }
  return b;
}

ex::sparse_matrix load(const std::string& name, const bench_options& o) {
  const size_t colon = name.find(':');
  const std::string base = name.substr(0, colon);
  const std::string modifier = colon == std::string::npos ? "" : name.substr(colon + 1);
  if (!modifier.empty() && modifier != "shuffled")
    throw std::invalid_argument("pattern '" + name + "': the only modifier is ':shuffled'");
  ex::sparse_matrix a;
  if (base.rfind("diffusion", 0) == 0 && base.find('.') == std::string::npos) {
    const int n = parse_positive_int(base.substr(9), "diffusionN");
    a = ex::rotated_anisotropic_diffusion(n, M_PI / 4, 0.001);
  } else {
    const std::string path = base.find('/') == std::string::npos ? o.matrix_dir + "/" + base : base;
    a = ex::read_matrix_market(path);
  }
  return modifier.empty() ? a : shuffled(a);
}

struct per_rank {
  std::int64_t max = 0, total = 0;
};
per_rank reduce(std::int64_t mine) {
  per_rank r;
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &r.max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &r.total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return r;
}

struct variant_result {
  std::string name;      // mpi, standard, aggregate, dedup, auto
  std::string strategy;  // the one used
  std::string reason;
  double init_seconds = 0;
  std::vector<double> per_exchange;  // per round, slowest rank
  double median = 0, best = 0;
  per_rank inter_messages, inter_bytes, intra_messages, intra_bytes;
  per_rank bytes_sent, bytes_received, messages_sent, messages_received, bytes_local;
  std::int64_t wrong = 0;
};

struct pattern_result {
  std::string name;
  std::int64_t rows = 0, nonzeros = 0;
  double graph_create_seconds = 0;
  per_rank neighbors, halo_elements;
  std::vector<variant_result> variants;
  const variant_result& get(const std::string& n) const {
    for (const auto& v : variants)
      if (v.name == n) return v;
    throw std::logic_error("no variant " + n);
  }
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

pattern_result run_pattern(const std::string& name, const bench_options& o) {
  const int ranks = world_size(), me = world_rank();
  const ex::sparse_matrix a = load(name, o);
  const auto rows = ex::block_partition(a.rows, ranks), cols = ex::block_partition(a.cols, ranks);
  const ex::halo_pattern h = ex::spmv_halo(a, rows, cols, me);

  pattern_result result;
  result.name = name;
  result.rows = a.rows;
  result.nonzeros = static_cast<std::int64_t>(a.column.size());
  result.neighbors = reduce(static_cast<std::int64_t>(h.destinations.size()));
  result.halo_elements = reduce(h.recv_total());

  std::vector<double> send(static_cast<size_t>(h.send_total()));
  for (size_t k = 0; k < send.size(); ++k) send[k] = 1.0 + 0.5 * static_cast<double>(h.send_ids[k]);
  const size_t received = static_cast<size_t>(h.recv_total());

  MPI_Comm graph = MPI_COMM_NULL;
  result.graph_create_seconds = time_once(MPI_COMM_WORLD, [&] {
    BASELINE_MPI_CHECK(MPI_Dist_graph_create_adjacent(
        MPI_COMM_WORLD, static_cast<int>(h.sources.size()), h.sources.data(), MPI_UNWEIGHTED,
        static_cast<int>(h.destinations.size()), h.destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
  });

  // Every variant has its own receive buffer, checked against MPI's after its first exchange.
  struct runner {
    variant_result r;
    std::vector<double> recv;
    MPI_Request mpi_request = MPI_REQUEST_NULL;
    std::function<void()> mpi_start;  // set for MPI's own exchange
    ex::neighbor_plan plan;
    void start() {
      if (mpi_start)
        mpi_start();
      else
        plan.start();
    }
    void wait() {
      if (mpi_start)
        BASELINE_MPI_CHECK(MPI_Wait(&mpi_request, MPI_STATUS_IGNORE));
      else
        plan.wait();
    }
  };
  // auto calibrates on this machine; auto_defaults predicts with the built-in figures of a typical cluster
  // (what auto would choose there).
  constexpr int variants = 6;
  std::vector<runner> runners(variants);
  const char* names[variants] = {"mpi", "standard", "aggregate", "dedup", "auto", "auto_defaults"};
  const ex::neighbor_strategy strategies[variants] = {
      ex::neighbor_strategy::standard, ex::neighbor_strategy::standard,  ex::neighbor_strategy::aggregate,
      ex::neighbor_strategy::dedup,    ex::neighbor_strategy::automatic, ex::neighbor_strategy::automatic};
  for (int v = 0; v < variants; ++v) {
    runner& x = runners[v];
    x.r.name = names[v];
    x.recv.assign(received, -1.0);
    if (v == 0) {
#ifdef REDIST_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT  // cmake/mpi_compat.cmake
      x.r.init_seconds = time_once(MPI_COMM_WORLD, [&] {
        BASELINE_MPI_CHECK(MPI_Neighbor_alltoallv_init(send.data(), h.sendcounts.data(), h.sdispls.data(), MPI_DOUBLE,
                                                       x.recv.data(), h.recvcounts.data(), h.rdispls.data(), MPI_DOUBLE,
                                                       graph, MPI_INFO_NULL, &x.mpi_request));
      });
      x.mpi_start = [&x] { BASELINE_MPI_CHECK(MPI_Start(&x.mpi_request)); };
      x.r.strategy = "MPI_Neighbor_alltoallv_init";
#else
      // An MPI-3.1 library has no persistent neighborhood collectives: its nonblocking one per exchange.
      x.mpi_start = [&x, &send, &h, graph] {
        BASELINE_MPI_CHECK(MPI_Ineighbor_alltoallv(send.data(), h.sendcounts.data(), h.sdispls.data(), MPI_DOUBLE,
                                                   x.recv.data(), h.recvcounts.data(), h.rdispls.data(), MPI_DOUBLE,
                                                   graph, &x.mpi_request));
      };
      x.r.strategy = "MPI_Ineighbor_alltoallv";
#endif
      continue;
    }
    ex::exchange_options options;
    options.strategy = strategies[v];
    options.region_size = o.region_size;
    if (x.r.name == "auto_defaults") options.model = ex::cost_model{};
    x.r.init_seconds = time_once(MPI_COMM_WORLD, [&] {
      x.plan = ex::neighbor_alltoallv_init(
          h.sources, h.destinations,
          ex::with_global_ids(ex::typed_buffers(send, h.sendcounts, h.sdispls, x.recv, h.recvcounts, h.rdispls),
                              h.send_ids, h.recv_ids),
          MPI_COMM_WORLD, options);
    });
    const ex::exchange_statistics& s = x.plan.statistics();
    x.r.strategy = ex::to_string(s.strategy);
    x.r.reason = s.reason;
    x.r.inter_messages = reduce(s.inter_region_messages);
    x.r.inter_bytes = reduce(s.inter_region_bytes);
    x.r.intra_messages = reduce(s.intra_region_messages);
    x.r.intra_bytes = reduce(s.intra_region_bytes);
    x.r.bytes_sent = reduce(s.bytes_sent);
    x.r.bytes_received = reduce(s.bytes_received);
    x.r.messages_sent = reduce(s.messages_sent);
    x.r.messages_received = reduce(s.messages_received);
    x.r.bytes_local = reduce(s.bytes_local);
  }
  // MPICH's neighborhood collective is point-to-point per neighbor: the standard strategy's messages.
  runners[0].r.inter_messages = runners[1].r.inter_messages;
  runners[0].r.inter_bytes = runners[1].r.inter_bytes;
  runners[0].r.intra_messages = runners[1].r.intra_messages;
  runners[0].r.intra_bytes = runners[1].r.intra_bytes;
  runners[0].r.bytes_sent = runners[1].r.bytes_sent;
  runners[0].r.bytes_received = runners[1].r.bytes_received;
  runners[0].r.messages_sent = runners[1].r.messages_sent;
  runners[0].r.messages_received = runners[1].r.messages_received;
  runners[0].r.bytes_local = runners[1].r.bytes_local;

  for (runner& x : runners) {
    x.start();
    x.wait();
  }
  for (int v = 1; v < variants; ++v) {
    std::int64_t wrong = 0;
    for (size_t k = 0; k < received; ++k) wrong += runners[v].recv[k] != runners[0].recv[k];
    for (size_t k = 0; k < received; ++k) wrong += runners[0].recv[k] != 1.0 + 0.5 * static_cast<double>(h.recv_ids[k]);
    runners[v].r.wrong = reduce(wrong).total;
  }
  for (int round = 0; round < o.rounds; ++round)
    for (runner& x : runners) {
      BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double begin = MPI_Wtime();
      for (int it = 0; it < o.iterations; ++it) {
        x.start();
        x.wait();
      }
      const double mine = (MPI_Wtime() - begin) / o.iterations;
      double slowest = 0;
      BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      x.r.per_exchange.push_back(slowest);
    }
  for (runner& x : runners) {
    x.r.median = median_of(x.r.per_exchange);
    x.r.best = *std::min_element(x.r.per_exchange.begin(), x.r.per_exchange.end());
    if (x.mpi_request != MPI_REQUEST_NULL) BASELINE_MPI_CHECK(MPI_Request_free(&x.mpi_request));
    result.variants.push_back(x.r);
  }
  BASELINE_MPI_CHECK(MPI_Comm_free(&graph));
  return result;
}

double ratio(double x, double y) { return y > 0 ? x / y : 0; }

double best_fixed_seconds(const pattern_result& r) {
  return std::min({r.get("standard").median, r.get("aggregate").median, r.get("dedup").median});
}

void write_per_rank(json_writer& json, const char* name, const per_rank& p) {
  json.key(name).begin_object();
  json.field("max", p.max);
  json.field("total", p.total);
  json.end_object();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const bench_options o = parse(argc, argv);
    const int ranks = world_size();
    std::vector<pattern_result> results;
    for (const std::string& name : o.patterns) {
      results.push_back(run_pattern(name, o));
      const pattern_result& r = results.back();
      if (world_rank() == 0)
        std::fprintf(stderr, "  %s: mpi %.1f us, standard %.1f, aggregate %.1f, dedup %.1f, auto(%s) %.1f\n",
                     name.c_str(), r.get("mpi").median * 1e6, r.get("standard").median * 1e6,
                     r.get("aggregate").median * 1e6, r.get("dedup").median * 1e6, r.get("auto").strategy.c_str(),
                     r.get("auto").median * 1e6);
    }
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "exchange_bench");
      json.field("ranks", ranks);
      json.field("region_size", o.region_size);
      json.field("iterations", o.iterations);
      json.field("rounds", o.rounds);
      json.key("patterns").begin_array();
      bool verified = true;
      double worst_auto = 0, worst_choice = 0;
      std::string worst_auto_pattern, worst_choice_pattern;
      for (const pattern_result& r : results) {
        const double best_fixed = best_fixed_seconds(r);
        const double auto_ratio = ratio(r.get("auto").median, best_fixed);
        const double choice_ratio = ratio(r.get(r.get("auto").strategy).median, best_fixed);
        if (auto_ratio > worst_auto) {
          worst_auto = auto_ratio;
          worst_auto_pattern = r.name;
        }
        if (choice_ratio > worst_choice) {
          worst_choice = choice_ratio;
          worst_choice_pattern = r.name;
        }
        json.begin_object();
        json.field("name", r.name);
        json.field("rows", r.rows);
        json.field("nonzeros", r.nonzeros);
        json.field("graph_create_seconds", r.graph_create_seconds);
        write_per_rank(json, "neighbors", r.neighbors);
        write_per_rank(json, "halo_elements", r.halo_elements);
        json.field("inter_message_cut_max", ratio(static_cast<double>(r.get("standard").inter_messages.max),
                                                  static_cast<double>(r.get("aggregate").inter_messages.max)));
        json.field("inter_message_cut_total", ratio(static_cast<double>(r.get("standard").inter_messages.total),
                                                    static_cast<double>(r.get("aggregate").inter_messages.total)));
        json.field("dedup_inter_byte_cut", 1.0 - ratio(static_cast<double>(r.get("dedup").inter_bytes.total),
                                                       static_cast<double>(r.get("aggregate").inter_bytes.total)));
        json.field("auto_over_best_fixed", auto_ratio);
        json.field("auto_choice_over_best_fixed", choice_ratio);
        json.key("variants").begin_array();
        for (const variant_result& v : r.variants) {
          verified = verified && v.wrong == 0;
          json.begin_object();
          json.field("name", v.name);
          json.field("strategy", v.strategy);
          if (!v.reason.empty()) json.field("reason", v.reason);
          json.field("init_seconds", v.init_seconds);
          json.field("seconds_per_exchange", v.median);
          json.field("best_seconds_per_exchange", v.best);
          json.array_field("round_seconds", v.per_exchange);
          json.field("speedup_vs_mpi", ratio(r.get("mpi").median, v.median));
          write_per_rank(json, "inter_region_messages", v.inter_messages);
          write_per_rank(json, "inter_region_bytes", v.inter_bytes);
          write_per_rank(json, "intra_region_messages", v.intra_messages);
          write_per_rank(json, "intra_region_bytes", v.intra_bytes);
          write_per_rank(json, "bytes_sent", v.bytes_sent);
          write_per_rank(json, "bytes_received", v.bytes_received);
          write_per_rank(json, "messages_sent", v.messages_sent);
          write_per_rank(json, "messages_received", v.messages_received);
          write_per_rank(json, "bytes_local", v.bytes_local);
          json.field("wrong_elements", v.wrong);
          json.end_object();
        }
        json.end_array();
        json.end_object();
      }
      json.end_array();
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        std::printf("%-22s %6s %9s %9s %9s %9s %9s %-9s %8s %8s %9s %11s %-9s\n", "pattern", "nbrs", "mpi_us", "std_us",
                    "aggr_us", "dedup_us", "auto_us", "auto", "msg_cut", "byte_cut", "auto/best", "choice/best",
                    "cluster");
        for (const pattern_result& r : results) {
          const double best_fixed = best_fixed_seconds(r);
          std::printf("%-22s %6lld %9.1f %9.1f %9.1f %9.1f %9.1f %-9s %7.2fx %7.1f%% %9.2f %11.2f %-9s\n",
                      r.name.c_str(), static_cast<long long>(r.neighbors.max), r.get("mpi").median * 1e6,
                      r.get("standard").median * 1e6, r.get("aggregate").median * 1e6, r.get("dedup").median * 1e6,
                      r.get("auto").median * 1e6, r.get("auto").strategy.c_str(),
                      ratio(static_cast<double>(r.get("standard").inter_messages.max),
                            static_cast<double>(r.get("aggregate").inter_messages.max)),
                      100.0 * (1.0 - ratio(static_cast<double>(r.get("dedup").inter_bytes.total),
                                           static_cast<double>(r.get("aggregate").inter_bytes.total))),
                      ratio(r.get("auto").median, best_fixed), ratio(r.get(r.get("auto").strategy).median, best_fixed),
                      r.get("auto_defaults").strategy.c_str());
        }
      }
      std::printf(
          "SUMMARY exchange_bench (%d ranks, %zu patterns): auto's choice at most %.2fx the best fixed "
          "strategy (%s), auto's own run at most %.2fx (%s); verified %s\n",
          ranks, results.size(), worst_choice, worst_choice_pattern.c_str(), worst_auto, worst_auto_pattern.c_str(),
          verified ? "yes" : "NO");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exchange_bench (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
