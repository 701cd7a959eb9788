// SPDX-License-Identifier: BSD-3-Clause
// redist-demo: redist's ScaLAPACK drop-in next to ScaLAPACK itself on the same data, in well under a minute.
//
//   mpiexec.mpich -n 4 redist-demo [--n 4000] [--reps 3] [--threads 1] [--json FILE]
//
// The program is written the ScaLAPACK way and linked the way a user relinks: libredist_scalapack ahead of
// ScaLAPACK, so its calls of pdgemr2d_ and pdtran_ reach redist. ScaLAPACK's own routines are reached in the
// same run through its library's handle (Cpdgemr2d, pdtran_). An N x N matrix of doubles in 32x32 blocks on
// a 2x2 process grid is
//   1. redistributed to 128x128 blocks (pdgemr2d), and
//   2. transposed into 128x128 blocks, C = A^T (pdtran),
// each result checked element by element against ScaLAPACK's and against the analytic values; bytes and
// messages are those of the plan the drop-in runs. Two more rows show the C++ API with B allocated in a
// redist::node_buffer (one copy). Then a target that may be relabeled (the same blocks on a column-major
// numbered grid) shows what process relabeling saves. Times: best of --reps (after a first call that
// plans, and for the drop-in the calls by which it has replaced its one-shot plan), each after MPI_Barrier,
// slowest rank. --json FILE writes the table for tools/redist-demo-plot.py.
// Exit status 0 when everything verified, 1 when a verification failed, 2 on errors.
#include <dlfcn.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.hpp"

namespace {

using namespace redist_baseline;

struct demo_options {
  int n = 4000;
  int repetitions = 3;
  int threads = 1;
  std::string json_path;
};

demo_options parse_options(int argc, char** argv) {
  demo_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n")
      o.n = parse_positive_int(next(), "--n");
    else if (arg == "--reps")
      o.repetitions = parse_positive_int(next(), "--reps");
    else if (arg == "--threads")
      o.threads = parse_positive_int(next(), "--threads");
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg +
                                  "'; usage: redist-demo [--n 4000] [--reps 3] [--threads 1] [--json FILE]");
  }
  return o;
}

std::string bytes_text(double bytes) {
  char text[32];
  if (bytes >= 1e9)
    std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  else if (bytes >= 1e3)
    std::snprintf(text, sizeof text, "%.1f kB", bytes / 1e3);
  else
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

// The file a symbol's address lies in.
std::string library_of(const void* address) {
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname) return "(not found)";
  const std::string path = info.dli_fname;
  return path.substr(path.rfind('/') + 1);
}

// ScaLAPACK's own routines, looked up in ScaLAPACK's library (already loaded: the program links it). Its
// pdgemr2d_ forwards to Cpdgemr2d through the symbol table, which the drop-in interposes, so the reference
// redistribution is called as Cpdgemr2d itself; its pdtran_ calls nothing the drop-in defines.
struct scalapack_reference {
  using cpdgemr2d_fn = void (*)(int m, int n, const double* a, int ia, int ja, const int* desca, double* b, int ib,
                                int jb, const int* descb, int ictxt);
  using pdtran_fn = void (*)(const int* m, const int* n, const double* alpha, const double* a, const int* ia,
                             const int* ja, const int* desca, const double* beta, double* c, const int* ic,
                             const int* jc, const int* descc);
  cpdgemr2d_fn gemr2d = nullptr;
  pdtran_fn tran = nullptr;
  std::string library;

  scalapack_reference() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<const void*>(&numroc_), &info) || !info.dli_fname)
      throw std::runtime_error("cannot find the ScaLAPACK library this program is linked with");
    void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) throw std::runtime_error(std::string("dlopen of ScaLAPACK failed: ") + dlerror());
    gemr2d = reinterpret_cast<cpdgemr2d_fn>(dlsym(handle, "Cpdgemr2d"));
    tran = reinterpret_cast<pdtran_fn>(dlsym(handle, "pdtran_"));
    dlclose(handle);  // the library stays: the program links it
    if (!gemr2d || !tran) throw std::runtime_error("ScaLAPACK's Cpdgemr2d or pdtran_ not found");
    library = library_of(reinterpret_cast<const void*>(gemr2d));
    if (library_of(reinterpret_cast<const void*>(&pdgemr2d_)) == library)
      throw std::runtime_error("pdgemr2d_ resolves into ScaLAPACK itself: link libredist_scalapack ahead of it");
  }
};

std::int64_t sum_over_ranks(std::int64_t mine) {
  std::int64_t total = 0;
  for (const std::int64_t v : gather_all(MPI_COMM_WORLD, mine)) total += v;
  return total;
}

struct row {
  std::string operation;
  double scalapack_seconds = 0, redist_seconds = 0, plan_seconds = 0;  // plan: first call's extra time
  std::int64_t bytes_sent = 0, messages_sent = 0;                      // summed over the ranks
  std::string strategy;
  bool verified = false;
};

// The plan the drop-in runs for these operands (the same layouts, op and options): its traffic.
redist::plan_statistics drop_in_traffic(const distributed_matrix& target, const distributed_matrix& source,
                                        bool transpose) {
  const int rank = world_rank();
  return redist::make_transform_plan(MPI_COMM_WORLD, layout_of(target, rank), layout_of(source, rank),
                                     transpose ? redist::op::transpose : redist::op::identity,
                                     redist::element_type::f64)
      .statistics();
}

// One operation: ScaLAPACK and redist on identical copies of the same data, both checked. redist runs
// through the drop-in symbols (pdgemr2d_, pdtran_), or, with `one_copy`, through the C++ API with B copied
// into a node_buffer (node peers read it directly).
row compare(const std::string& name, bool transpose, const distributed_matrix& source,
            const distributed_matrix& target_initial, const blacs_grid& grid, const scalapack_reference& reference,
            const demo_options& opt, bool one_copy = false) {
  const int rank = world_rank();
  const int n = static_cast<int>(source.rows()), one = 1, context = grid.context();
  const double alpha = 1.0, beta = 0.0;
  distributed_matrix scalapack_target = target_initial;
  distributed_matrix redist_target = target_initial;
  auto expected = [transpose](std::int64_t i, std::int64_t j) {
    return transpose ? source_value(j, i) : source_value(i, j);
  };
  double unused_element = 0;
  const double* source_data = source.data() ? source.data() : &unused_element;
  double* scalapack_data = scalapack_target.data() ? scalapack_target.data() : &unused_element;
  double* redist_data = redist_target.data() ? redist_target.data() : &unused_element;

  row r;
  r.operation = name;
  r.scalapack_seconds = time_repeated(
                            MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(scalapack_target, target_initial); },
                            [&] {
                              if (!grid.holds_me()) return;  // ranks beyond the 2x2 grid take no part
                              if (!transpose)
                                reference.gemr2d(n, n, source_data, 1, 1, source.desc.data(), scalapack_data, 1, 1,
                                                 scalapack_target.desc.data(), context);
                              else
                                reference.tran(&n, &n, &alpha, source_data, &one, &one, source.desc.data(), &beta,
                                               scalapack_data, &one, &one, scalapack_target.desc.data());
                            })
                            .best;

  if (!one_copy) {
    // What the user's program calls: libredist_scalapack's symbols.
    auto call = [&] {
      if (!grid.holds_me()) return;
      if (!transpose)
        pdgemr2d_(&n, &n, source_data, &one, &one, source.desc.data(), redist_data, &one, &one,
                  redist_target.desc.data(), &context);
      else
        pdtran_(&n, &n, &alpha, source_data, &one, &one, source.desc.data(), &beta, redist_data, &one, &one,
                redist_target.desc.data());
    };
    const double first_call = time_once(MPI_COMM_WORLD, call);
    settle_drop_in_plan(1, call);
    r.redist_seconds = time_repeated(
                           MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(redist_target, target_initial); }, call)
                           .best;
    r.plan_seconds = std::max(0.0, first_call - r.redist_seconds);
    const redist::plan_statistics stats = drop_in_traffic(redist_target, source, transpose);
    r.bytes_sent = sum_over_ranks(stats.bytes_sent);
    r.messages_sent = sum_over_ranks(stats.messages_sent);
    r.strategy = std::string("drop-in ") + (transpose ? "pdtran_" : "pdgemr2d_");
  } else {
    redist::transform_options options;
    options.num_threads = opt.threads;
    options.strategy = redist::exchange_strategy::shared_memory;
    redist::node_buffer shared_source(MPI_COMM_WORLD, source.local_bytes());
    if (source.local_bytes() > 0)
      std::memcpy(shared_source.data(), source.data(), static_cast<size_t>(source.local_bytes()));
    redist::transform_plan plan;
    r.plan_seconds = time_once(MPI_COMM_WORLD, [&] {
      plan = redist::make_transform_plan(MPI_COMM_WORLD, layout_of(redist_target, rank), layout_of(source, rank),
                                         transpose ? redist::op::transpose : redist::op::identity,
                                         redist::element_type::f64, options);
    });
    r.redist_seconds = time_repeated(
                           MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(redist_target, target_initial); },
                           [&] { plan.execute(redist_target.data(), shared_source.as<double>(), alpha, beta); })
                           .best;
    const redist::plan_statistics stats = plan.statistics();
    r.bytes_sent = sum_over_ranks(stats.bytes_sent);
    r.messages_sent = sum_over_ranks(stats.messages_sent);
    r.strategy = "C++ API, B in node_buffer";
  }
  r.verified = count_wrong_elements(scalapack_target, expected) == 0 &&
               count_wrong_elements(redist_target, expected) == 0 &&
               count_differences(redist_target, scalapack_target) == 0;
  return r;
}

// A target that may be relabeled: the source's blocks on a 2x2 grid numbered column-major (as a library
// with a column-major BLACS grid would want). Without relabeling ranks 1 and 2 swap all their data.
struct relabeling_outcome {
  std::string line;
  std::int64_t volume_before = 0, volume_after = 0, messages_before = 0, messages_after = 0;
  double seconds_before = 0, seconds_after = 0;
  bool verified = false;
};

relabeling_outcome relabeling(const distributed_matrix& source, const demo_options& opt) {
  const int rank = world_rank();
  const redist::grid_layout b = layout_of(source, rank);
  redist::block_cyclic_params p;
  p.m = source.rows();
  p.n = source.cols();
  p.mb = source.desc[mb_];
  p.nb = source.desc[nb_];
  p.proc_rows = 2;
  p.proc_cols = 2;
  p.ordering = redist::grid_order::col_major;
  const redist::grid_layout a = redist::block_cyclic(p, rank);

  const std::vector<redist::job_description> jobs{{a, b, redist::op::identity, redist::element_type::f64}};
  const redist::relabeled_targets relabeled = redist::relabel_targets(MPI_COMM_WORLD, jobs);
  const redist::relabel::relabeling& result = relabeled.result;

  redist::transform_options options;
  options.num_threads = opt.threads;
  auto run = [&](const redist::grid_layout& target, double& seconds) {
    std::vector<double> data(static_cast<size_t>(std::max<std::int64_t>(1, target.local_elements())));
    const redist::transform_plan plan = redist::make_transform_plan(MPI_COMM_WORLD, target, b, redist::op::identity,
                                                                    redist::element_type::f64, options);
    seconds = time_repeated(
                  MPI_COMM_WORLD, opt.repetitions, [] {}, [&] { plan.execute(data.data(), source.data()); })
                  .best;
    return count_wrong_elements(target, data.data(), source_value) == 0;
  };
  relabeling_outcome out;
  out.verified = run(a, out.seconds_before) && run(relabeled.a_layouts.front(), out.seconds_after);
  out.volume_before = result.remote_volume_before;
  out.volume_after = result.remote_volume_after;
  out.messages_before = result.messages_before;
  out.messages_after = result.messages_after;

  char line[512];
  std::snprintf(line, sizeof line,
                "relabeling (target: the same 32x32 blocks on a column-major 2x2 grid): remote volume %s -> %s "
                "(%.0f%% less), messages %lld -> %lld, execute %.4f s -> %.4f s, verified %s",
                bytes_text(static_cast<double>(result.remote_volume_before)).c_str(),
                bytes_text(static_cast<double>(result.remote_volume_after)).c_str(), result.reduction_percent(),
                static_cast<long long>(result.messages_before), static_cast<long long>(result.messages_after),
                out.seconds_before, out.seconds_after, out.verified ? "yes" : "NO");
  out.line = line;
  return out;
}

void write_json(const std::string& path, const demo_options& opt, const std::vector<row>& rows,
                const relabeling_outcome& relabel, bool all_verified) {
  json_writer json;
  json.begin_object();
  json.field("demo", "redist-demo");
  json.field("ranks", world_size());
  json.field("n", opt.n);
  json.field("repetitions", opt.repetitions);
  json.key("operations").begin_array();
  for (const row& r : rows) {
    json.begin_object();
    json.field("operation", r.operation);
    json.field("redist_path", r.strategy);
    json.field("scalapack_seconds", r.scalapack_seconds);
    json.field("redist_seconds", r.redist_seconds);
    json.field("speedup", r.scalapack_seconds / r.redist_seconds);
    json.field("redist_first_call_extra_seconds", r.plan_seconds);
    json.field("bytes_sent", r.bytes_sent);
    json.field("messages_sent", r.messages_sent);
    json.field("verified", r.verified);
    json.end_object();
  }
  json.end_array();
  json.key("relabeling").begin_object();
  json.field("remote_volume_before", relabel.volume_before);
  json.field("remote_volume_after", relabel.volume_after);
  json.field("messages_before", relabel.messages_before);
  json.field("messages_after", relabel.messages_after);
  json.field("execute_seconds_before", relabel.seconds_before);
  json.field("execute_seconds_after", relabel.seconds_after);
  json.field("verified", relabel.verified);
  json.end_object();
  json.field("verified", all_verified);
  json.end_object();
  std::ofstream(path) << json.text() << "\n";
}

int run(int argc, char** argv) {
  const demo_options opt = parse_options(argc, argv);
  omp_set_num_threads(opt.threads);
  if (world_size() < 4) throw std::invalid_argument("redist-demo needs at least 4 MPI ranks (a 2x2 grid)");
  const scalapack_reference reference;
  std::vector<row> rows;
  relabeling_outcome relabel;
  {
    const blacs_grid grid(2, 2, redist::grid_order::row_major);
    distributed_matrix source = make_matrix(grid, opt.n, opt.n, 32, 32);
    distributed_matrix target_initial = make_matrix(grid, opt.n, opt.n, 128, 128);
    fill(source, source_value);
    fill(target_initial, target_initial_value);
    rows.push_back(compare("redistribute (pdgemr2d)", false, source, target_initial, grid, reference, opt));
    rows.push_back(compare("transpose C = A^T (pdtran)", true, source, target_initial, grid, reference, opt));
    rows.push_back(compare("redistribute, B one-copy", false, source, target_initial, grid, reference, opt, true));
    rows.push_back(compare("transpose, B one-copy", true, source, target_initial, grid, reference, opt, true));
    relabel = relabeling(source, opt);
  }
  blacs_exit_keep_mpi();

  bool all_verified = relabel.verified;
  for (const auto& r : rows) all_verified = all_verified && r.verified;
  if (world_rank() == 0) {
    const double matrix_bytes = static_cast<double>(opt.n) * opt.n * sizeof(double);
    std::printf(
        "redist demo: %d ranks, N = %d doubles (%s), 32x32 blocks -> 128x128 blocks on a 2x2 grid, best of %d\n",
        world_size(), opt.n, bytes_text(matrix_bytes).c_str(), opt.repetitions);
    std::printf("pdgemr2d_, pdtran_ -> %s (the drop-in); ScaLAPACK: Cpdgemr2d, pdtran_ -> %s\n\n",
                library_of(reinterpret_cast<const void*>(&pdgemr2d_)).c_str(), reference.library.c_str());
    std::printf("%-28s %12s %12s %8s %12s %9s %11s  %-26s %s\n", "operation", "ScaLAPACK", "redist", "speedup",
                "bytes moved", "messages", "1st call +", "redist through", "verified");
    for (const auto& r : rows)
      std::printf("%-28s %10.4f s %10.4f s %7.2fx %12s %9lld %9.4f s  %-26s %s\n", r.operation.c_str(),
                  r.scalapack_seconds, r.redist_seconds, r.scalapack_seconds / r.redist_seconds,
                  bytes_text(static_cast<double>(r.bytes_sent)).c_str(), static_cast<long long>(r.messages_sent),
                  r.plan_seconds, r.strategy.c_str(), r.verified ? "yes" : "NO");
    std::printf("\n%s\n", relabel.line.c_str());
    if (!opt.json_path.empty()) {
      write_json(opt.json_path, opt, rows, relabel, all_verified);
      std::printf("table written to %s\n", opt.json_path.c_str());
    }
    std::printf("%s\n", all_verified ? "all results verified" : "VERIFICATION FAILED");
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist-demo (rank %d): %s\n", world_rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (MPI_Finalize() != MPI_SUCCESS) return 2;
  return status;
}
