// SPDX-License-Identifier: BSD-3-Clause
// transform_bench: redist against ScaLAPACK's pdgemr2d and pdtran (COSTA paper, Section 7.1) on the same data.
//
//   mpiexec.mpich -n 4 bench_transform_bench [--n 4000,8000] [--reps 5] [--json out.json] [--threads 1]
//                                            [--cases pdgemr2d,pdgemr2d_grid,pdtran_beta0,pdtran_beta1,pdgemr2d_local]
//                                            [--strategies auto,point_to_point,alltoallv,shared_memory]
//                                            [--stores auto|cached|streaming] [--chunk-bytes 0]
//                                            [--costa /path/to/libcosta_prefixed_scalapack.so]
//
// Cases (N x N doubles):
//   pdgemr2d       32x32 -> 128x128 blocks, both on a 2x2 grid (row-major)
//   pdgemr2d_grid  32x32 blocks on a 2x2 grid -> 128x128 blocks on a 4x1 grid (block size and grid change)
//   pdtran_beta0   C = A^T (alpha = 1, beta = 0), A in 32x32 blocks, C in 128x128 blocks, both on 2x2
//   pdtran_beta1   C = C + A^T (alpha = 1, beta = 1), same layouts
//   pdgemr2d_local 32x32 -> 32x32 blocks on the same 2x2 grid: nothing leaves its rank (against memcpy)
// Every case runs ScaLAPACK and redist (each exchange strategy) on identical data in the same run, checks
// every element of redist's result against ScaLAPACK's and against the analytic values, and measures a
// plain memcpy of each rank's share as the one-node floor. Times are the best of --reps repetitions (each
// after an MPI_Barrier, the slowest rank's time); medians are reported too. Before the strategies, a one-shot
// call (transform_options::one_shot, automatic: plan, one execution and the plan's release, timed together, as
// redist::transform and the drop-in's first call of a layout pair run it) gives one_shot_first_call_seconds;
// each strategy's first_call_seconds is its repeated-call plan's planning plus first execution.
// --costa adds COSTA (github eth-cscs/COSTA, built separately: never a build dependency) as a third library, as
// bench_scalapack_sweep does: its ScaLAPACK-API library is dlopen()ed at run time and costa_pdgemr2d_ /
// costa_pdtran_ (or, from libcosta_scalapack.so, its own pdgemr2d_ / pdtran_) run every case's call with
// ScaLAPACK's arguments (pdtran: the case's alpha and beta; pdgemr2d: the context of the grid both operands
// share, the only one COSTA 2.3.2 reads the layout from; pdgemr2d_grid, a change of grid, runs without COSTA and
// says so in costa_skipped) into a target of its own, reset as ScaLAPACK's is, in the order ScaLAPACK, COSTA,
// redist. Its first call on the data is timed on
// its own (costa_first_call_seconds, against redist's planning plus first execution), then --reps repetitions;
// its result is checked element by element against the analytic values. Without --costa nothing is loaded and
// the output is unchanged.
// Output: one JSON object (stdout, or --json FILE with a table on stdout), then one SUMMARY line.
// Exit status 1 when any verification fails, 2 on errors.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baseline.hpp"
#include "peers.hpp"
#include "redist/redist.hpp"
#include "usage.hpp"

namespace {

using namespace redist_baseline;

const std::vector<std::string> all_case_names = {"pdgemr2d", "pdgemr2d_grid", "pdtran_beta0", "pdtran_beta1",
                                                 "pdgemr2d_local"};
const std::vector<redist::exchange_strategy> all_strategies = {
    redist::exchange_strategy::automatic, redist::exchange_strategy::point_to_point,
    redist::exchange_strategy::alltoallv, redist::exchange_strategy::shared_memory};

struct bench_options {
  std::vector<int> sizes{4000, 8000};
  int repetitions = 5;
  std::string json_path;
  int threads = 1;
  std::vector<std::string> cases = all_case_names;
  std::vector<redist::exchange_strategy> strategies = all_strategies;
  redist::store_policy stores = redist::store_policy::automatic;
  std::int64_t stream_chunk_bytes = 0;  // 0 = the engine's automatic choice
  std::string costa_path;               // empty: no COSTA
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

constexpr const char* usage_text =
    "usage: bench_transform_bench [--n 4000,8000] [--reps 5] [--json FILE] [--threads 1] "
    "[--cases pdgemr2d,pdgemr2d_grid,pdtran_beta0,pdtran_beta1,pdgemr2d_local] "
    "[--strategies auto,point_to_point,alltoallv,shared_memory] [--stores auto] [--chunk-bytes BYTES] "
    "[--costa LIBRARY]\n"
    "  --n LIST            matrix sizes N (N x N doubles), comma-separated\n"
    "  --reps R            timed repetitions (best and median, slowest rank)\n"
    "  --json FILE         write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n"
    "  --threads T         OpenMP threads per rank\n"
    "  --cases LIST        comma-separated: pdgemr2d (32x32 -> 128x128 blocks on 2x2), pdgemr2d_grid (2x2 -> 4x1\n"
    "                      grid, 128x128 blocks), pdtran_beta0 (C = A^T), pdtran_beta1 (C = C + A^T),\n"
    "                      pdgemr2d_local (32x32 -> 32x32 on the same grid, against memcpy)\n"
    "  --strategies LIST   redist's exchange strategies to run, comma-separated\n"
    "  --stores NAME       redist's store policy: auto, cached or streaming\n"
    "  --chunk-bytes B     shared_memory's chunk size of streamed messages (default: the engine's automatic choice)\n"
    "  --costa LIBRARY     also time COSTA, its ScaLAPACK-API library dlopen()ed\n"
    "                      (e.g. libcosta_prefixed_scalapack.so)\n"
    "  (needs at least 4 MPI ranks: 2x2 and 4x1 grids)\n";

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
    } else if (arg == "--threads") {
      o.threads = parse_positive_int(next(), "--threads");
    } else if (arg == "--cases") {
      o.cases = split_list(next());
      for (const auto& c : o.cases)
        if (std::find(all_case_names.begin(), all_case_names.end(), c) == all_case_names.end())
          throw std::invalid_argument("unknown case '" + c + "'");
    } else if (arg == "--strategies") {
      o.strategies.clear();
      for (const auto& s : split_list(next())) o.strategies.push_back(redist::parse_name<redist::exchange_strategy>(s));
    } else if (arg == "--stores") {
      o.stores = redist::parse_name<redist::store_policy>(next());
    } else if (arg == "--chunk-bytes") {
      o.stream_chunk_bytes = parse_positive_int(next(), "--chunk-bytes");
    } else if (arg == "--costa") {
      o.costa_path = next();
    } else {
      throw std::invalid_argument("unknown argument '" + arg +
                                  "' (--n, --reps, --json, --threads, --cases, --strategies, --stores, "
                                  "--chunk-bytes, --costa; see --help)");
    }
  }
  if (o.strategies.empty()) throw std::invalid_argument("--strategies needs at least one strategy");
  return o;
}

// Why a case runs without COSTA: COSTA 2.3.2's pdgemr2d takes the grid of both operands from its context argument,
// so a change of grid (pdgemr2d_grid) cannot be expressed through it.
const char* const costa_grid_change =
    "COSTA 2.3.2's pdgemr2d takes both operands' grid from its context argument: no change of grid";

// The BLACS grids of all cases, alive for the whole run.
struct grids {
  blacs_grid square{2, 2, redist::grid_order::row_major};
  blacs_grid tall{4, 1, redist::grid_order::row_major};
  blacs_grid everyone{1, world_size(), redist::grid_order::row_major};  // pdgemr2d's context: both grids' union
};

struct case_spec {
  std::string name;
  const blacs_grid* source_grid;
  int source_block;
  const blacs_grid* target_grid;
  int target_block;
  bool transpose;
  double beta;
};

case_spec spec_of(const std::string& name, const grids& g) {
  if (name == "pdgemr2d") return {name, &g.square, 32, &g.square, 128, false, 0.0};
  if (name == "pdgemr2d_grid") return {name, &g.square, 32, &g.tall, 128, false, 0.0};
  if (name == "pdtran_beta0") return {name, &g.square, 32, &g.square, 128, true, 0.0};
  // Identical layouts: every element stays on its rank (a local copy; memcpy of the share is the floor).
  if (name == "pdgemr2d_local") return {name, &g.square, 32, &g.square, 32, false, 0.0};
  return {name, &g.square, 32, &g.square, 128, true, 1.0};
}

struct strategy_result {
  redist::exchange_strategy asked{};
  redist::exchange_strategy chosen{};
  bool node_buffer_source = false;         // B in a redist::node_buffer (one-copy shared memory)
  bool streaming_stores = false;           // rank 0's store policy
  std::int64_t window_bytes_max_rank = 0;  // shared_memory: the largest rank's segment of the plan's window
  bool window_reused = false;              // shared_memory: every rank cut its segment from an earlier plan's window
  std::int64_t stream_chunk_bytes = 0;
  double plan_seconds = 0;
  // plan_statistics' planning profile, slowest rank per phase: where a one-shot call's set-up goes.
  std::vector<std::pair<std::string, double>> plan_profile;
  timing execute;
  std::int64_t differences_from_scalapack = 0;
  std::int64_t wrong_elements = 0;  // against the analytic values
  std::vector<std::int64_t> bytes_sent, bytes_received, bytes_local, messages_sent;
  bool verified() const { return differences_from_scalapack == 0 && wrong_elements == 0; }
  std::string label() const {
    return std::string(redist::to_string(asked)) + (node_buffer_source ? "+node_buffer" : "");
  }
  // Planning plus the first execution (buffers not yet touched): what a one-shot call would cost.
  double first_call_seconds() const { return plan_seconds + execute.seconds.front(); }
};

struct case_result {
  case_spec spec;
  int n = 0;
  std::string source_description, target_description;
  timing scalapack;
  std::int64_t scalapack_wrong_elements = 0;
  bool costa_measured = false;  // --costa given
  timing costa;
  double costa_first_call = 0;  // COSTA's first call on this data
  std::int64_t costa_wrong_elements = 0;
  timing memcpy_share;
  // A one-shot call (transform_options::one_shot, automatic: what redist::transform and the drop-in's first
  // call of a key plan): planning plus its one execution, timed together.
  double one_shot_first_call = 0;
  redist::exchange_strategy one_shot_strategy{};
  std::int64_t one_shot_wrong_elements = 0;
  std::vector<strategy_result> strategies;

  std::int64_t matrix_bytes() const {
    return static_cast<std::int64_t>(n) * n * static_cast<std::int64_t>(sizeof(double));
  }
  bool verified() const {
    if (scalapack_wrong_elements != 0 || costa_wrong_elements != 0 || one_shot_wrong_elements != 0) return false;
    for (const auto& s : strategies)
      if (!s.verified()) return false;
    return true;
  }
  // The headline redist result: the automatic strategy when measured, else the first one.
  const strategy_result& headline() const {
    for (const auto& s : strategies)
      if (s.asked == redist::exchange_strategy::automatic) return s;
    return strategies.front();
  }
  // The one-copy result (B in a node_buffer), when measured.
  const strategy_result* one_copy() const {
    for (const auto& s : strategies)
      if (s.node_buffer_source) return &s;
    return nullptr;
  }
  const strategy_result& fastest() const {
    return *std::min_element(strategies.begin(), strategies.end(),
                             [](const auto& x, const auto& y) { return x.execute.best < y.execute.best; });
  }
  double speedup() const { return scalapack.best / headline().execute.best; }
  double speedup_vs_costa() const { return costa.best / headline().execute.best; }
  double first_call_speedup_vs_costa() const { return costa_first_call / headline().first_call_seconds(); }
  double one_shot_speedup_vs_costa() const { return costa_first_call / one_shot_first_call; }
};

std::int64_t sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }
std::int64_t max_of(const std::vector<std::int64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

void progress(const std::string& line) {
  if (world_rank() == 0) {
    std::cerr << line << std::endl;
  }
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f s", s);
  return text;
}

case_result run_case(const case_spec& spec, int n, const grids& g, const costa_library& costa,
                     const bench_options& opt) {
  const int rank = world_rank();
  case_result result;
  result.spec = spec;
  result.n = n;

  distributed_matrix source = make_matrix(*spec.source_grid, n, n, spec.source_block, spec.source_block);
  distributed_matrix target_initial = make_matrix(*spec.target_grid, n, n, spec.target_block, spec.target_block);
  fill(source, source_value);
  fill(target_initial, target_initial_value);
  distributed_matrix scalapack_target = target_initial;
  distributed_matrix redist_target = target_initial;
  result.source_description = std::to_string(spec.source_block) + "x" + std::to_string(spec.source_block) +
                              " blocks on " + spec.source_grid->describe();
  result.target_description = std::to_string(spec.target_block) + "x" + std::to_string(spec.target_block) +
                              " blocks on " + spec.target_grid->describe();

  const bool transpose = spec.transpose;
  const double alpha = 1.0, beta = spec.beta;
  auto expected = [transpose, beta](std::int64_t i, std::int64_t j) {
    const double moved = transpose ? source_value(j, i) : source_value(i, j);
    return beta == 0.0 ? moved : moved + beta * target_initial_value(i, j);
  };

  // ---- ScaLAPACK ----
  const int one = 1;
  const int all_context = g.everyone.context();
  double unused_element = 0;  // ranks outside a grid pass a valid address with no data
  const double* source_data = source.data() ? source.data() : &unused_element;
  double* scalapack_data = scalapack_target.data() ? scalapack_target.data() : &unused_element;
  const bool in_transpose_grid = spec.source_grid->holds_me();
  result.scalapack = time_repeated(
      MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(scalapack_target, target_initial); },
      [&] {
        if (!transpose) {
          pdgemr2d_(&n, &n, source_data, &one, &one, source.desc.data(), scalapack_data, &one, &one,
                    scalapack_target.desc.data(), &all_context);
        } else if (in_transpose_grid) {  // PBLAS: only the processes of the grid take part
          pdtran_(&n, &n, &alpha, source_data, &one, &one, source.desc.data(), &beta, scalapack_data, &one, &one,
                  scalapack_target.desc.data());
        }
      });
  result.scalapack_wrong_elements = count_wrong_elements(scalapack_target, expected);
  progress("  " + spec.name + " N=" + std::to_string(n) + ": ScaLAPACK " + seconds_text(result.scalapack.best) +
           (result.scalapack_wrong_elements ? " WRONG ELEMENTS: " + std::to_string(result.scalapack_wrong_elements)
                                            : std::string()));

  // ---- COSTA (--costa): the same call with ScaLAPACK's arguments, into a target of its own. The order
  // ScaLAPACK, COSTA, redist is the same in every case. ----
  const bool costa_can = transpose || spec.source_grid == spec.target_grid;
  if (costa.loaded() && !costa_can)
    progress("  " + spec.name + " N=" + std::to_string(n) + ": COSTA skipped (" + costa_grid_change + ")");
  if (costa.loaded() && costa_can) {
    distributed_matrix costa_target = target_initial;
    double* costa_data = costa_target.data() ? costa_target.data() : &unused_element;
    // COSTA 2.3.2's pxgemr2d lays out both operands on the grid of its context argument (Cblacs_gridinfo(ictxt)),
    // not on each descriptor's own, so ScaLAPACK's union context (1 x P) gives wrong elements: it gets the grid
    // both operands share.
    const int costa_context = spec.source_grid->context();
    auto call_costa = [&] {
      if (!transpose) {
        costa.pdgemr2d(&n, &n, source_data, &one, &one, source.desc.data(), costa_data, &one, &one,
                       costa_target.desc.data(), &costa_context);
      } else if (in_transpose_grid) {
        double costa_alpha = alpha;
        costa.pdtran(&n, &n, &costa_alpha, source_data, &one, &one, source.desc.data(), &beta, costa_data, &one, &one,
                     costa_target.desc.data());
      }
    };
    auto reset = [&] { copy_local(costa_target, target_initial); };
    result.costa_measured = true;
    result.costa_first_call = time_once(MPI_COMM_WORLD, call_costa);
    result.costa = time_repeated(MPI_COMM_WORLD, opt.repetitions, reset, call_costa);
    result.costa_wrong_elements = count_wrong_elements(costa_target, expected);
    progress("  " + spec.name + " N=" + std::to_string(n) + ": COSTA " + seconds_text(result.costa.best) +
             ", first call " + seconds_text(result.costa_first_call) +
             (result.costa_wrong_elements ? " WRONG ELEMENTS: " + std::to_string(result.costa_wrong_elements)
                                          : std::string()));
  }

  // ---- memcpy of each rank's share: the floor of any data movement on one node ----
  {
    std::vector<double> scratch(source.local.size());
    const size_t bytes = static_cast<size_t>(source.local_bytes());
    result.memcpy_share = time_repeated(
        MPI_COMM_WORLD, opt.repetitions, [] {},
        [&] {
          if (bytes > 0) std::memcpy(scratch.data(), source.local.data(), bytes);
        });
  }

  // ---- redist, one plan per strategy ----
  const redist::grid_layout a_layout = layout_of(redist_target, rank);
  const redist::grid_layout b_layout = layout_of(source, rank);
  const redist::op operation = transpose ? redist::op::transpose : redist::op::identity;
  // First, a one-shot call: the plan a program that redistributes once would make, and its execution.
  {
    copy_local(redist_target, target_initial);
    redist::transform_options options;
    options.one_shot = true;
    options.num_threads = opt.threads;
    options.stores = opt.stores;
    options.stream_chunk_bytes = opt.stream_chunk_bytes;
    result.one_shot_first_call = time_once(MPI_COMM_WORLD, [&] {
      const redist::transform_plan plan = redist::make_transform_plan(MPI_COMM_WORLD, a_layout, b_layout, operation,
                                                                      redist::element_type::f64, options);
      plan.execute(redist_target.data(), source.data(), alpha, beta);
      result.one_shot_strategy = plan.strategy();
    });
    result.one_shot_wrong_elements = count_wrong_elements(redist_target, expected);
    progress("  " + spec.name + " N=" + std::to_string(n) + ": redist one-shot call (" +
             redist::to_string(result.one_shot_strategy) + ") " + seconds_text(result.one_shot_first_call) +
             (result.one_shot_wrong_elements ? " WRONG ELEMENTS: " + std::to_string(result.one_shot_wrong_elements)
                                             : std::string()));
  }
  // Every strategy with B in private memory (what a relinked ScaLAPACK code gets), then shared_memory
  // with B in a node_buffer (one copy: node peers read B directly).
  std::vector<std::pair<redist::exchange_strategy, bool>> variants;
  for (const auto strategy : opt.strategies) variants.emplace_back(strategy, false);
  if (std::find(opt.strategies.begin(), opt.strategies.end(), redist::exchange_strategy::shared_memory) !=
      opt.strategies.end())
    variants.emplace_back(redist::exchange_strategy::shared_memory, true);
  for (const auto& [strategy, in_node_buffer] : variants) {
    strategy_result r;
    r.asked = strategy;
    r.node_buffer_source = in_node_buffer;
    redist::node_buffer shared_source;
    const double* b_data = source.data();
    if (in_node_buffer) {
      shared_source = redist::node_buffer(MPI_COMM_WORLD, source.local_bytes());
      if (source.local_bytes() > 0)
        std::memcpy(shared_source.data(), source.data(), static_cast<size_t>(source.local_bytes()));
      b_data = shared_source.as<double>();
    }
    redist::transform_options options;
    options.strategy = strategy;
    options.num_threads = opt.threads;
    options.stores = opt.stores;
    options.stream_chunk_bytes = opt.stream_chunk_bytes;
    redist::transform_plan plan;
    r.plan_seconds = time_once(MPI_COMM_WORLD, [&] {
      plan = redist::make_transform_plan(MPI_COMM_WORLD, a_layout, b_layout, operation, redist::element_type::f64,
                                         options);
    });
    r.chosen = plan.strategy();
    r.execute = time_repeated(
        MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(redist_target, target_initial); },
        [&] { plan.execute(redist_target.data(), b_data, alpha, beta); });
    r.differences_from_scalapack = count_differences(redist_target, scalapack_target);
    r.wrong_elements = count_wrong_elements(redist_target, expected);
    const redist::plan_statistics stats = plan.statistics();
    for (const auto& [phase, seconds] : {std::pair<const char*, double>{"agreement", stats.plan_agreement_seconds},
                                         {"tiles", stats.plan_tiles_seconds},
                                         {"messages", stats.plan_messages_seconds},
                                         {"exchange", stats.plan_exchange_seconds},
                                         {"buffers", stats.plan_buffers_seconds},
                                         {"total", stats.plan_seconds}}) {
      double slowest = 0;
      BASELINE_MPI_CHECK(MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      r.plan_profile.emplace_back(phase, slowest);
    }
    r.streaming_stores = stats.streaming_stores;
    r.window_bytes_max_rank = max_of(gather_all(MPI_COMM_WORLD, stats.window_bytes));
    int reused = stats.window_reused ? 1 : 0, everywhere = 0;
    BASELINE_MPI_CHECK(MPI_Allreduce(&reused, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    r.window_reused = everywhere == 1;
    r.stream_chunk_bytes = stats.stream_chunk_bytes;
    r.bytes_sent = gather_all(MPI_COMM_WORLD, stats.bytes_sent);
    r.bytes_received = gather_all(MPI_COMM_WORLD, stats.bytes_received);
    r.bytes_local = gather_all(MPI_COMM_WORLD, stats.bytes_local);
    r.messages_sent = gather_all(MPI_COMM_WORLD, stats.messages_sent);
    progress("  " + spec.name + " N=" + std::to_string(n) + ": redist " + r.label() +
             (strategy == redist::exchange_strategy::automatic ? std::string(" (") + redist::to_string(r.chosen) + ")"
                                                               : std::string()) +
             " " + seconds_text(r.execute.best) + ", plan " + seconds_text(r.plan_seconds) +
             (r.verified() ? ", verified"
                           : ", NOT VERIFIED: " + std::to_string(r.differences_from_scalapack) +
                                 " elements differ from ScaLAPACK, " + std::to_string(r.wrong_elements) +
                                 " from the analytic values"));
    result.strategies.push_back(std::move(r));
  }
  return result;
}

void write_timing(json_writer& json, const char* prefix, const timing& t) {
  json.field(std::string(prefix) + "_seconds", t.best);
  json.field(std::string(prefix) + "_median_seconds", t.median);
}

std::string results_json(const std::vector<case_result>& results, const bench_options& opt,
                         const costa_library& costa) {
  json_writer json;
  json.begin_object();
  json.field("benchmark", "transform_bench");
  json.field("ranks", world_size());
  json.field("omp_threads_per_rank", opt.threads);
  json.field("hardware_threads", static_cast<int>(std::thread::hardware_concurrency()));
  json.field("oversubscribed", world_size() * opt.threads > static_cast<int>(std::thread::hardware_concurrency()));
  json.field("repetitions", opt.repetitions);
  json.field("store_policy", redist::to_string(opt.stores));
  json.field("stream_chunk_bytes_option", opt.stream_chunk_bytes);
  json.field("timing", "best (and median) of the repetitions; each repetition after MPI_Barrier, slowest rank");
  json.field("bytes_per_second_basis", "matrix bytes (N*N*8) per second of the operation");
  if (costa.loaded()) {
    json.field("costa_library", costa.path());
    json.field("costa_pdgemr2d_symbol", costa.pdgemr2d_symbol);
    json.field("costa_pdtran_symbol", costa.pdtran_symbol);
  }
  json.key("cases").begin_array();
  double min_speedup = std::numeric_limits<double>::infinity();
  double min_speedup_vs_costa = std::numeric_limits<double>::infinity();
  bool all_verified = true;
  for (const auto& c : results) {
    const strategy_result& head = c.headline();
    const double matrix_bytes = static_cast<double>(c.matrix_bytes());
    min_speedup = std::min(min_speedup, c.speedup());
    if (c.costa_measured) min_speedup_vs_costa = std::min(min_speedup_vs_costa, c.speedup_vs_costa());
    all_verified = all_verified && c.verified();
    json.begin_object();
    json.field("case", c.spec.name);
    json.field("n", c.n);
    json.field("operation", c.spec.transpose ? "C = alpha * A^T + beta * C" : "B = A (pdgemr2d)");
    json.field("alpha", 1.0);
    json.field("beta", c.spec.beta);
    json.field("source", c.source_description);
    json.field("target", c.target_description);
    json.field("matrix_bytes", c.matrix_bytes());
    write_timing(json, "scalapack", c.scalapack);
    write_timing(json, "redist", head.execute);
    json.field("redist_strategy", redist::to_string(head.chosen));
    json.field("redist_streaming_stores", head.streaming_stores);
    json.field("speedup", c.speedup());
    if (const strategy_result* one = c.one_copy()) json.field("one_copy_speedup", c.scalapack.best / one->execute.best);
    json.field("redist_plan_seconds", head.plan_seconds);
    json.field("redist_first_execute_seconds", head.execute.seconds.front());
    json.field("first_call_seconds", head.first_call_seconds());
    json.field("first_call_speedup", c.scalapack.best / head.first_call_seconds());
    json.field("one_shot_first_call_seconds", c.one_shot_first_call);
    json.field("one_shot_strategy", redist::to_string(c.one_shot_strategy));
    json.field("one_shot_wrong_elements", c.one_shot_wrong_elements);
    if (costa.loaded() && !c.costa_measured) json.field("costa_skipped", costa_grid_change);
    if (c.costa_measured) {
      write_timing(json, "costa", c.costa);
      json.field("costa_first_call_seconds", c.costa_first_call);
      json.field("speedup_vs_costa", c.speedup_vs_costa());
      json.field("first_call_speedup_vs_costa", c.first_call_speedup_vs_costa());
      json.field("one_shot_speedup_vs_costa", c.one_shot_speedup_vs_costa());
    }
    json.field("bytes_sent", sum(head.bytes_sent));
    json.field("bytes_sent_max_rank", max_of(head.bytes_sent));
    json.array_field("bytes_sent_per_rank", head.bytes_sent);
    json.array_field("bytes_received_per_rank", head.bytes_received);
    json.array_field("bytes_local_per_rank", head.bytes_local);
    json.field("messages_sent", sum(head.messages_sent));
    json.array_field("messages_sent_per_rank", head.messages_sent);
    json.key("strategies").begin_array();
    for (const auto& s : c.strategies) {
      json.begin_object();
      json.field("strategy", redist::to_string(s.asked));
      json.field("source_memory", s.node_buffer_source ? "node_buffer" : "private");
      json.field("chosen", redist::to_string(s.chosen));
      json.field("plan_seconds", s.plan_seconds);
      json.key("plan_profile_seconds").begin_object();
      for (const auto& [phase, seconds] : s.plan_profile) json.field(phase, seconds);
      json.end_object();
      write_timing(json, "execute", s.execute);
      json.field("first_call_seconds", s.first_call_seconds());
      json.array_field("execute_seconds_per_rep", s.execute.seconds);
      json.field("speedup_vs_scalapack", c.scalapack.best / s.execute.best);
      json.field("bytes_sent", sum(s.bytes_sent));
      json.field("messages_sent", sum(s.messages_sent));
      json.field("window_bytes_max_rank", s.window_bytes_max_rank);
      json.field("window_reused", s.window_reused);
      json.field("stream_chunk_bytes", s.stream_chunk_bytes);
      json.field("differences_from_scalapack", s.differences_from_scalapack);
      json.field("wrong_elements", s.wrong_elements);
      json.field("verified", s.verified());
      json.end_object();
    }
    json.end_array();
    json.field("fastest_strategy", c.fastest().label());
    json.field("fastest_strategy_seconds", c.fastest().execute.best);
    write_timing(json, "memcpy", c.memcpy_share);
    json.field("memcpy_bytes_per_second", matrix_bytes / c.memcpy_share.best);
    json.field("redist_bytes_per_second", matrix_bytes / head.execute.best);
    json.field("scalapack_bytes_per_second", matrix_bytes / c.scalapack.best);
    json.field("redist_vs_memcpy", c.memcpy_share.best / head.execute.best);
    json.field("scalapack_vs_memcpy", c.memcpy_share.best / c.scalapack.best);
    if (c.costa_measured && c.spec.name == "pdgemr2d_local")
      json.field("costa_vs_memcpy", c.memcpy_share.best / c.costa.best);
    json.field("scalapack_wrong_elements", c.scalapack_wrong_elements);
    if (c.costa_measured) json.field("costa_wrong_elements", c.costa_wrong_elements);
    json.field("verified", c.verified());
    json.end_object();
  }
  json.end_array();
  json.field("min_speedup", results.empty() ? 0.0 : min_speedup);
  if (costa.loaded()) json.field("min_speedup_vs_costa", std::isinf(min_speedup_vs_costa) ? 0.0 : min_speedup_vs_costa);
  double min_one_copy = std::numeric_limits<double>::infinity();
  for (const auto& c : results)
    if (const strategy_result* one = c.one_copy())
      min_one_copy = std::min(min_one_copy, c.scalapack.best / one->execute.best);
  if (min_one_copy < std::numeric_limits<double>::infinity()) json.field("min_one_copy_speedup", min_one_copy);
  json.field("verified", all_verified);
  json.end_object();
  return json.text() + "\n";
}

std::string results_table(const std::vector<case_result>& results, const costa_library& costa) {
  std::ostringstream out;
  char line[256];
  // COSTA's columns follow the existing ones, so that the table without --costa is unchanged.
  std::snprintf(line, sizeof line, "%-14s %6s %11s %10s %8s %10s %10s %8s %10s %9s %-27s %s", "case", "N",
                "scalapack_s", "redist_s", "speedup", "plan_s", "first_call_s", "speedup1", "memcpy_s", "vs_memcpy",
                "fastest", "verified");
  out << line;
  if (costa.loaded()) {
    std::snprintf(line, sizeof line, " %10s %9s %13s %14s %15s", "costa_s", "vs_costa", "costa_first_s",
                  "first_vs_costa", "costa_vs_memcpy");
    out << line;
  }
  out << "\n";
  for (const auto& c : results) {
    const strategy_result& head = c.headline();
    std::snprintf(line, sizeof line, "%-14s %6d %11.4f %10.4f %7.2fx %10.4f %10.4f %7.2fx %10.4f %9.2f %-27s %s",
                  c.spec.name.c_str(), c.n, c.scalapack.best, head.execute.best, c.speedup(), head.plan_seconds,
                  head.first_call_seconds(), c.scalapack.best / head.first_call_seconds(), c.memcpy_share.best,
                  c.memcpy_share.best / head.execute.best, c.fastest().label().c_str(),
                  costa.loaded() ? (c.verified() ? "yes     " : "NO      ") : (c.verified() ? "yes" : "NO"));
    out << line;
    if (c.costa_measured) {
      std::snprintf(line, sizeof line, " %10.4f %8.2fx %13.4f %13.2fx %15.2f", c.costa.best, c.speedup_vs_costa(),
                    c.costa_first_call, c.first_call_speedup_vs_costa(), c.memcpy_share.best / c.costa.best);
      out << line;
    }
    out << "\n";
    for (const auto& s : c.strategies) {
      std::snprintf(line, sizeof line, "    %-27s %10.4f s  %6.2fx vs ScaLAPACK  plan %.4f s  first call %.4f s  %s\n",
                    s.label().c_str(), s.execute.best, c.scalapack.best / s.execute.best, s.plan_seconds,
                    s.first_call_seconds(), s.verified() ? "verified" : "NOT VERIFIED");
      out << line;
    }
  }
  return out.str();
}

std::string summary_line(const std::vector<case_result>& results, const costa_library& costa) {
  std::ostringstream out;
  out << "SUMMARY transform_bench:";
  double min_speedup = std::numeric_limits<double>::infinity();
  bool all_verified = true;
  char item[128];
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& c = results[k];
    std::snprintf(item, sizeof item, "%s %s N=%d %.2fx", k ? "," : "", c.spec.name.c_str(), c.n, c.speedup());
    out << item;
    min_speedup = std::min(min_speedup, c.speedup());
    all_verified = all_verified && c.verified();
  }
  std::snprintf(item, sizeof item, ", min speedup %.2fx", results.empty() ? 0.0 : min_speedup);
  out << item;
  // One copy: B allocated in a redist::node_buffer.
  double min_one_copy = std::numeric_limits<double>::infinity();
  bool first = true;
  for (const auto& c : results) {
    const strategy_result* one = c.one_copy();
    if (!one) continue;
    const double ratio = c.scalapack.best / one->execute.best;
    std::snprintf(item, sizeof item, "%s %s N=%d %.2fx", first ? "; B in node_buffer (one copy):" : ",",
                  c.spec.name.c_str(), c.n, ratio);
    out << item;
    min_one_copy = std::min(min_one_copy, ratio);
    first = false;
  }
  if (!first) {
    std::snprintf(item, sizeof item, ", min %.2fx", min_one_copy);
    out << item;
  }
  // COSTA (--costa): redist's headline time against COSTA's, and the first calls.
  if (costa.loaded()) {
    double min_vs_costa = std::numeric_limits<double>::infinity();
    bool none = true;
    for (const auto& c : results) {
      if (!c.costa_measured) continue;  // costa_skipped
      std::snprintf(item, sizeof item, "%s %s N=%d %.2fx (first call %.2fx, one-shot %.2fx)",
                    none ? "; vs COSTA:" : ",", c.spec.name.c_str(), c.n, c.speedup_vs_costa(),
                    c.first_call_speedup_vs_costa(), c.one_shot_speedup_vs_costa());
      out << item;
      min_vs_costa = std::min(min_vs_costa, c.speedup_vs_costa());
      none = false;
    }
    std::snprintf(item, sizeof item, ", min speedup vs COSTA %.2fx", none ? 0.0 : min_vs_costa);
    out << item;
  }
  out << "; verified " << (all_verified ? "yes" : "NO");
  return out.str();
}

int run(int argc, char** argv) {
  const bench_options opt = parse_options(argc, argv);
  omp_set_num_threads(opt.threads);
  if (world_size() < 4) throw std::invalid_argument("transform_bench needs at least 4 MPI ranks (2x2 and 4x1 grids)");
  const costa_library costa = load_costa(opt.costa_path);
  std::vector<case_result> results;
  {
    const grids g;
    progress("transform_bench: " + std::to_string(world_size()) + " ranks, " + std::to_string(opt.threads) +
             " OpenMP thread(s) each, best of " + std::to_string(opt.repetitions));
    for (const int n : opt.sizes)
      for (const auto& name : opt.cases) results.push_back(run_case(spec_of(name, g), n, g, costa, opt));
  }
  blacs_exit_keep_mpi();

  bool all_verified = true;
  for (const auto& c : results) all_verified = all_verified && c.verified();
  if (world_rank() == 0) {
    const std::string json = results_json(results, opt, costa);
    if (opt.json_path.empty()) {
      std::cout << json;
    } else {
      std::ofstream file(opt.json_path);
      file << json;
      if (!file) throw std::runtime_error("cannot write " + opt.json_path);
      std::cout << results_table(results, costa);
    }
    std::cout << summary_line(results, costa) << std::endl;
  }
  return all_verified ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Init_thread failed\n");
    return 2;
  }
  int status = 2;
  try {
    status = run(argc, argv);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
    status = 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transform_bench (rank %d): %s\n", world_rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (MPI_Finalize() != MPI_SUCCESS) return 2;
  return status;
}
