// SPDX-License-Identifier: BSD-3-Clause
#include "redist/transform/relabel_targets.hpp"

#include <cstdint>

#include "field_hash.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "relabel/gathered.hpp"

namespace redist {
namespace {

// Rank 0 solves for everyone: every rank must ask for the same assignment (cost model, prices, nodes, solver).
void add_cost_and_solver(field_hash& hash, const relabel::relabel_cost& cost, relabel::solver solver) {
  hash.add_all(cost.model, cost.prices.intra_latency, cost.prices.intra_seconds_per_byte, cost.prices.inter_latency,
               cost.prices.inter_seconds_per_byte, cost.node_of, solver);
}

// Both entry points: every rank computes the packages its own label receives (make_packages(nranks, rank)); rank 0
// gathers them, solves and broadcasts its answer. Every rank must describe the same jobs (jobs_hash), cost and
// solver: the one permutation is rank 0's answer. A rank whose inputs fail makes every rank throw before the
// gather, a failed solve before the broadcast.
template <class MakePackages>
relabel::relabeling solve_for_everyone(MPI_Comm comm, field_hash jobs_hash, const char* differing,
                                       const relabel::relabel_cost& cost, relabel::solver solver,
                                       MakePackages make_packages) {
  const int nranks = mpi::size(comm), rank = mpi::rank(comm);
  mpi::agreement agreed(comm);
  add_cost_and_solver(jobs_hash, cost, solver);
  agreed.require_same(jobs_hash.value(), differing);
  relabel::label_graph mine;
  agreed.attempt([&] {
    mine = make_packages(nranks, rank);
    // Only rank 0 solves: every rank checks the solver and the cost model, as a solve would.
    relabel::check_request(cost, solver, nranks);
  });
  const std::size_t largest = agreed.reduce_max(mine.package_count());
  agreed.conclude();
  return relabel::find_relabeling_gathered(comm, mine, agreed.max(largest), cost, solver);
}

}  // namespace

relabeled_targets relabel_targets(MPI_Comm comm, const std::vector<job_description>& jobs,
                                  const relabel::relabel_cost& cost, relabel::solver solver) {
  field_hash hash;
  hash.add(jobs.size());
  for (const auto& j : jobs) hash.add_all(j.a.global_hash(), j.b.global_hash(), j.operation, j.type);
  relabeled_targets out;
  out.result = solve_for_everyone(
      comm, hash,
      "ranks passed different jobs (layouts, ops or element types), costs or solvers to relabel_targets; every rank "
      "must describe the same jobs",
      cost, solver, [&](int nranks, int rank) {
        // The communication graph weighs whole rectangles; a trapezoid would be weighed wrongly.
        std::vector<relabel::layout_pair> pairs;
        for (const auto& j : jobs) {
          if (j.region.shape != region_shape::all)
            throw invalid_argument(
                "relabel_targets: jobs with an element_region other than region_shape::all are not supported "
                "(relabel the full job, then plan with the region)");
          pairs.push_back({&j.a, &j.b, j.operation, element_size(j.type)});
        }
        return relabel::incoming_packages(pairs, nranks, rank, rank + 1);
      });
  for (const auto& j : jobs) out.a_layouts.push_back(j.a.relabeled(out.result.new_rank_of));
  return out;
}

relabeled_reshape_targets relabel_reshape_targets(MPI_Comm comm, const std::vector<reshape_job>& jobs,
                                                  const relabel::relabel_cost& cost, relabel::solver solver) {
  field_hash hash;
  hash.add(jobs.size());
  for (const auto& j : jobs) hash.add_all(j.a.global_hash(), j.b.global_hash(), j.type, j.axes);
  relabeled_reshape_targets out;
  out.result = solve_for_everyone(
      comm, hash,
      "ranks passed different jobs (layouts, axes or element types), costs or solvers to relabel_reshape_targets; "
      "every rank must describe the same jobs",
      cost, solver, [&](int nranks, int rank) {
        std::vector<relabel::nd_layout_pair> pairs;
        for (const auto& j : jobs) {
          if (j.region.shape != region_shape::all)
            throw invalid_argument(
                "relabel_reshape_targets: jobs with an element_region other than region_shape::all are not "
                "supported (relabel the full job, then plan with the region)");
          pairs.push_back({&j.a, &j.b, j.axes, element_size(j.type)});
        }
        return relabel::incoming_packages(pairs, nranks, rank, rank + 1);
      });
  for (const auto& j : jobs) out.a_layouts.push_back(j.a.relabeled(out.result.new_rank_of));
  return out;
}

}  // namespace redist
