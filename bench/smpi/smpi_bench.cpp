// SPDX-License-Identifier: BSD-3-Clause
// redist at scale under SimGrid's SMPI: one measured variant per run, one JSON line from rank 0.
//   smpi_bench transform|neighbor --n N --variant V --platform NAME --link-bandwidth BYTES_PER_S [--reps R]
//                        [--verify 0|1] [--region RANKS] [--cost-model calibrate|platform|defaults]
//                        [--case study|equal] [--torus X,Y,Z] [--torus-routing sdr|direct|automatic]
//                        [--torus-beta CHUNKS] [--torus-phases sequential|concurrent]
//                        [--torus-hardware uniform_shortest|simgrid_torus|...]
// transform variants: redist:auto, redist:point_to_point, redist:alltoallv, redist:torus_routed (needs --torus and
// the equal case), mpi:alltoallv:<selector> (SMPI's MPI_Alltoallv of the same per-peer bytes; the selector is
// smpirun's --cfg=smpi/coll-selector, named here for the record). neighbor (a 27-point halo, N the subdomain's
// edge): redist:auto, redist:standard, redist:aggregate, redist:dedup (regions of --region ranks),
// mpi:neighbor_alltoallv (every receive and send posted at once, as MPICH's and Open MPI's default). gemm (C = A * B,
// N x N block-cyclic on the most nearly square grid): redist:auto, redist:two_sided, redist:one_sided (the plan's
// panel communication), mpi:summa:<selector> (a SUMMA on the same layout, as pdgemm: one MPI_Bcast per panel),
// scalapack:pdgemm (ScaLAPACK's own, where the build has it: smpi_pdgemm.cpp).
// MPI_Wtime is the simulated clock. Without --verify the matrices and redist's own buffers of 1 MiB or more live in
// SMPI_SHARED_MALLOC memory (every rank's buffers share pages: contents meaningless, timing only); with it every
// element of the result is checked.
#include <mpi.h>
#include <smpi/smpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <redist/redist.hpp>

#include "../../src/machine/pages.hpp"  // the library's seam for fake buffers (use_page_source)
#include "smpi_common.hpp"

namespace smpi_bench {

void grid_dims(int p, int& rows, int& cols) {
  rows = 1;
  while ((rows + 1) * (rows + 1) <= p) ++rows;
  while (p % rows != 0) --rows;
  cols = p / rows;
}

// The communicator has seen a collective, as an application's has (SMPI's mpich selector builds node-aware
// sub-communicators on the first one); returns the cost of one bare MPI_Comm_dup, for comparison with the plans.
double warm_up_and_time_a_duplicate() {
  double ignored = 0;
  MPI_Allreduce(MPI_IN_PLACE, &ignored, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return timed([] {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);
  });
}
}  // namespace smpi_bench

namespace {
using namespace smpi_bench;

using benchmark_function = measured (*)(const arguments&, int rank, int size);
struct benchmark_entry {
  const char* name;
  benchmark_function run;
  const char* default_case;  // --case when not given
};
constexpr benchmark_entry benchmarks[] = {{"transform", transform, "study"},
                                          {"neighbor", neighbor, "halo27"},
                                          {"inplace", inplace, "variable"},
                                          {"reshape", reshape, "x_to_y_pencil"},
                                          {"gemm", gemm, "square"}};

const benchmark_entry& entry_of(const std::string& name) {
  for (const auto& b : benchmarks)
    if (name == b.name) return b;
  throw std::invalid_argument("benchmark " + name + ": expected transform, neighbor, inplace, reshape or gemm");
}
benchmark_function benchmark_of(const std::string& name) { return entry_of(name).run; }
const char* default_case(const std::string& name) { return entry_of(name).default_case; }

arguments parse(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("usage: smpi_bench transform --n N --variant V ...");
  arguments a;
  a.benchmark = argv[1];
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--n")
      a.n = std::stoll(value);
    else if (key == "--variant")
      a.variant = value;
    else if (key == "--platform")
      a.platform = value;
    else if (key == "--link-bandwidth")
      a.link_bandwidth = std::stod(value);
    else if (key == "--reps")
      a.reps = std::max(1, std::stoi(value));
    else if (key == "--verify")
      a.verify = value == "1";
    else if (key == "--case")
      a.layout_case = value;
    else if (key == "--torus")
      a.torus = value;
    else if (key == "--torus-routing")
      a.torus_routing = value;
    else if (key == "--torus-beta")
      a.torus_beta = std::stoll(value);
    else if (key == "--torus-phases")
      a.torus_phases = value;
    else if (key == "--torus-hardware")
      a.torus_hardware = value;
    else if (key == "--region")
      a.region = std::stoi(value);
    else if (key == "--cost-model")
      a.cost_model = value;
    else
      throw std::invalid_argument("unknown option " + key);
  }
  benchmark_of(a.benchmark);  // known?
  if (a.layout_case.empty()) a.layout_case = default_case(a.benchmark);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const arguments a = parse(argc, argv);
    // Timing only: redist's own large buffers (messages, staging) in SMPI's shared pages too, so that thousands of
    // simulated ranks with large N fit in this machine's memory (and SMPI skips copying their payloads).
    if (!a.verify)
      redist::machine::use_page_source({std::size_t(1) << 20,
                                        [](std::size_t bytes) { return SMPI_SHARED_MALLOC(bytes); },
                                        [](void* data) { SMPI_SHARED_FREE(data); }});
    const auto wall0 = std::chrono::steady_clock::now();
    const measured m = benchmark_of(a.benchmark)(a, rank, size);
    // Totals and the busiest rank's bytes in or out: the link-rate bound is that rank's bytes over one link.
    const std::int64_t mine[3] = {m.bytes_sent, m.messages, m.correct ? 0 : 1};
    std::int64_t total[3] = {0, 0, 0};
    MPI_Reduce(mine, total, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    const std::int64_t busiest_mine = m.problem_bytes >= 0 ? m.problem_bytes : std::max(m.bytes_sent, m.bytes_received);
    std::int64_t busiest = 0;
    MPI_Reduce(&busiest_mine, &busiest, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (rank == 0) {
      std::printf(
          "{\"benchmark\": \"%s\", \"platform\": \"%s\", \"ranks\": %d, \"n\": %lld, \"case\": \"%s\", "
          "\"variant\": \"%s\", \"simulated_seconds\": %.9g, \"first_simulated_seconds\": %.9g, ",
          a.benchmark.c_str(), a.platform.c_str(), size, static_cast<long long>(a.n), a.layout_case.c_str(),
          a.variant.c_str(), m.best, m.first);
      if (a.variant.rfind("redist:", 0) == 0)
        std::printf("\"plan_simulated_seconds\": %.9g, \"strategy\": \"%s\", ", m.plan, m.chosen.c_str());
      if (a.variant.rfind("redist:", 0) == 0)
        std::printf("\"second_plan_simulated_seconds\": %.9g, \"comm_dup_simulated_seconds\": %.9g, ", m.plan_again,
                    m.comm_dup);
      if (a.benchmark == "neighbor")
        std::printf("\"region\": %d, \"cost_model\": \"%s\", ", a.region, a.cost_model.c_str());
      std::printf("%s", m.extra_json.c_str());
      std::printf(
          "\"bound_seconds\": %.9g, \"bytes_off_rank\": %lld, \"busiest_rank_bytes\": %lld, \"messages\": %lld, "
          "\"verified\": %s, \"reps\": %d, \"wall_seconds_rank0\": %.3f}\n",
          static_cast<double>(busiest) / a.link_bandwidth, static_cast<long long>(total[0]),
          static_cast<long long>(busiest), static_cast<long long>(total[1]),
          m.verified && total[2] == 0 ? "true" : "false", a.reps, wall);
      if (m.verified && total[2] != 0) {
        std::fprintf(stderr, "smpi_bench: WRONG result on %lld rank(s)\n", static_cast<long long>(total[2]));
        status = 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smpi_bench (rank %d): %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
