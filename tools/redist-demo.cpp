// redist-demo: redist next to ScaLAPACK on the same data, in well under a minute.
//
//   mpiexec.mpich -n 4 redist-demo [--n 4000] [--reps 3] [--threads 1]
//
// An N x N matrix of doubles in 32x32 blocks on a 2x2 process grid is
//   1. redistributed to 128x128 blocks (ScaLAPACK pdgemr2d vs a redist plan), and
//   2. transposed into 128x128 blocks, C = A^T (ScaLAPACK pdtran vs a redist plan with op::transpose),
// each result checked element by element against ScaLAPACK's and against the analytic values. Then a
// target that may be relabeled (the same blocks on a column-major numbered grid) shows what process
// relabeling saves. Times: best of --reps, each after MPI_Barrier, slowest rank.
// Exit status 0 when everything verified, 1 when a verification failed, 2 on errors.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
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
    else
      throw std::invalid_argument("unknown argument '" + arg + "'; usage: redist-demo [--n 4000] [--reps 3] [--threads 1]");
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

std::int64_t sum_over_ranks(std::int64_t mine) {
  std::int64_t total = 0;
  for (const std::int64_t v : gather_all(MPI_COMM_WORLD, mine)) total += v;
  return total;
}

struct row {
  std::string operation;
  double scalapack_seconds = 0, redist_seconds = 0, plan_seconds = 0;
  std::int64_t bytes_moved = 0, messages = 0;
  std::string strategy;
  bool verified = false;
};

// One operation: ScaLAPACK and redist on identical copies of the same data, both checked. With
// `one_copy`, redist's B is a copy of the source in a node_buffer (node peers read it directly).
row compare(const std::string& name, bool transpose, const distributed_matrix& source,
            const distributed_matrix& target_initial, const blacs_grid& grid, const demo_options& opt,
            bool one_copy = false) {
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

  row r;
  r.operation = name;
  r.scalapack_seconds =
      time_repeated(
          MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(scalapack_target, target_initial); },
          [&] {
            if (!grid.holds_me()) return;  // ranks beyond the 2x2 grid take no part
            if (!transpose)
              pdgemr2d_(&n, &n, source_data, &one, &one, source.desc.data(), scalapack_data, &one, &one,
                        scalapack_target.desc.data(), &context);
            else
              pdtran_(&n, &n, &alpha, source_data, &one, &one, source.desc.data(), &beta, scalapack_data, &one, &one,
                      scalapack_target.desc.data());
          })
          .best;

  redist::transform_options options;
  options.num_threads = opt.threads;
  redist::node_buffer shared_source;
  const double* b_data = source.data();
  if (one_copy) {
    options.strategy = redist::exchange_strategy::shared_memory;
    shared_source = redist::node_buffer(MPI_COMM_WORLD, source.local_bytes());
    if (source.local_bytes() > 0) std::memcpy(shared_source.data(), source.data(), static_cast<size_t>(source.local_bytes()));
    b_data = shared_source.as<double>();
  }
  redist::transform_plan plan;
  r.plan_seconds = time_once(MPI_COMM_WORLD, [&] {
    plan = redist::make_plan(MPI_COMM_WORLD, layout_of(redist_target, rank), layout_of(source, rank),
                             transpose ? redist::op::transpose : redist::op::identity, redist::element_type::f64,
                             options);
  });
  r.redist_seconds = time_repeated(
                         MPI_COMM_WORLD, opt.repetitions, [&] { copy_local(redist_target, target_initial); },
                         [&] { plan.execute(redist_target.data(), b_data, alpha, beta); })
                         .best;
  const redist::plan_statistics stats = plan.statistics();
  r.bytes_moved = sum_over_ranks(stats.bytes_sent);
  r.messages = sum_over_ranks(stats.messages_sent);
  r.strategy = std::string(redist::to_string(plan.strategy())) + (one_copy ? "+node_buffer" : "");
  r.verified = count_wrong_elements(scalapack_target, expected) == 0 &&
               count_wrong_elements(redist_target, expected) == 0 &&
               count_differences(redist_target, scalapack_target) == 0;
  return r;
}

// A target that may be relabeled: the source's blocks on a 2x2 grid numbered column-major (as a library
// with a column-major BLACS grid would want). Without relabeling ranks 1 and 2 swap all their data.
// Returns the printed line and whether both executions verified.
std::pair<std::string, bool> relabeling_line(const distributed_matrix& source, const demo_options& opt) {
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
    const redist::transform_plan plan =
        redist::make_plan(MPI_COMM_WORLD, target, b, redist::op::identity, redist::element_type::f64, options);
    seconds = time_repeated(MPI_COMM_WORLD, opt.repetitions, [] {}, [&] { plan.execute(data.data(), source.data()); })
                  .best;
    return count_wrong_elements(target, data.data(), source_value) == 0;
  };
  double plain_seconds = 0, relabeled_seconds = 0;
  const bool verified = run(a, plain_seconds) && run(relabeled.a_layouts.front(), relabeled_seconds);

  char line[512];
  std::snprintf(line, sizeof line,
                "relabeling (target: the same 32x32 blocks on a column-major 2x2 grid): remote volume %s -> %s "
                "(%.0f%% less), messages %lld -> %lld, execute %.4f s -> %.4f s, verified %s",
                bytes_text(static_cast<double>(result.remote_volume_before)).c_str(),
                bytes_text(static_cast<double>(result.remote_volume_after)).c_str(), result.reduction_percent(),
                static_cast<long long>(result.messages_before), static_cast<long long>(result.messages_after),
                plain_seconds, relabeled_seconds, verified ? "yes" : "NO");
  return {line, verified};
}

int run(int argc, char** argv) {
  const demo_options opt = parse_options(argc, argv);
  omp_set_num_threads(opt.threads);
  if (world_size() < 4) throw std::invalid_argument("redist-demo needs at least 4 MPI ranks (a 2x2 grid)");
  std::vector<row> rows;
  std::string relabel_text;
  bool relabel_verified = false;
  {
    const blacs_grid grid(2, 2, redist::grid_order::row_major);
    distributed_matrix source = make_matrix(grid, opt.n, opt.n, 32, 32);
    distributed_matrix target_initial = make_matrix(grid, opt.n, opt.n, 128, 128);
    fill(source, source_value);
    fill(target_initial, target_initial_value);
    rows.push_back(compare("redistribute (pdgemr2d)", false, source, target_initial, grid, opt));
    rows.push_back(compare("transpose C = A^T (pdtran)", true, source, target_initial, grid, opt));
    rows.push_back(compare("redistribute, B one-copy", false, source, target_initial, grid, opt, true));
    rows.push_back(compare("transpose, B one-copy", true, source, target_initial, grid, opt, true));
    std::tie(relabel_text, relabel_verified) = relabeling_line(source, opt);
  }
  blacs_exit_keep_mpi();

  bool all_verified = relabel_verified;
  for (const auto& r : rows) all_verified = all_verified && r.verified;
  if (world_rank() == 0) {
    const double matrix_bytes = static_cast<double>(opt.n) * opt.n * sizeof(double);
    std::printf("redist demo: %d ranks, N = %d doubles (%s), 32x32 blocks -> 128x128 blocks on a 2x2 grid, best of %d\n\n",
                world_size(), opt.n, bytes_text(matrix_bytes).c_str(), opt.repetitions);
    std::printf("%-28s %12s %12s %8s %12s %9s %10s  %-27s %s\n", "operation", "ScaLAPACK", "redist", "speedup",
                "bytes moved", "messages", "redist plan", "strategy", "verified");
    for (const auto& r : rows)
      std::printf("%-28s %10.4f s %10.4f s %7.2fx %12s %9lld %9.4f s  %-27s %s\n", r.operation.c_str(),
                  r.scalapack_seconds, r.redist_seconds, r.scalapack_seconds / r.redist_seconds,
                  bytes_text(static_cast<double>(r.bytes_moved)).c_str(), static_cast<long long>(r.messages),
                  r.plan_seconds, r.strategy.c_str(), r.verified ? "yes" : "NO");
    std::printf("\n%s\n", relabel_text.c_str());
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
