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

}  // namespace

relabeled_targets relabel_targets(MPI_Comm comm, const std::vector<job_description>& jobs,
                                  const relabel::relabel_cost& cost, relabel::solver solver) {
  const int nranks = mpi::size(comm), rank = mpi::rank(comm);
  relabeled_targets out;
  // Every rank computes the packages its own label receives; rank 0 gathers them, solves and broadcasts its
  // answer. A rank whose inputs fail makes every rank throw before the gather, a failed solve before the broadcast.
  mpi::agreement agreed(comm);
  // Every rank must describe the same jobs: the one permutation is rank 0's answer.
  field_hash hash;
  hash.add(jobs.size());
  for (const auto& j : jobs) hash.add_all(j.a.global_hash(), j.b.global_hash(), j.operation, j.type);
  add_cost_and_solver(hash, cost, solver);
  agreed.require_same(hash.value(),
                      "ranks passed different jobs (layouts, ops or element types), costs or solvers to "
                      "relabel_targets; "
                      "every rank must describe the same jobs");
  relabel::label_graph mine;
  agreed.attempt([&] {
    // The communication graph weighs whole rectangles; a trapezoid would be weighed wrongly.
    for (const auto& j : jobs)
      if (j.region.shape != region_shape::all)
        throw invalid_argument(
            "relabel_targets: jobs with an element_region other than region_shape::all are not "
            "supported (relabel the full job, then plan with the region)");
    std::vector<relabel::layout_pair> pairs;
    pairs.reserve(jobs.size());
    for (const auto& j : jobs) pairs.push_back({&j.a, &j.b, j.operation, element_size(j.type)});
    mine = relabel::incoming_packages(pairs, nranks, rank, rank + 1);
    // Only rank 0 solves: every rank checks the solver and the cost model, as a solve would.
    relabel::check_request(cost, solver, nranks);
  });
  const std::size_t largest = agreed.reduce_max(mine.package_count());
  agreed.conclude();
  out.result = relabel::find_relabeling_gathered(comm, mine, agreed.max(largest), cost, solver);
  const auto& perm = out.result.new_rank_of;
  for (const auto& j : jobs) out.a_layouts.push_back(j.a.relabeled(perm));
  return out;
}

relabeled_reshape_targets relabel_reshape_targets(MPI_Comm comm, const std::vector<reshape_job>& jobs,
                                                  const relabel::relabel_cost& cost, relabel::solver solver) {
  const int nranks = mpi::size(comm), rank = mpi::rank(comm);
  relabeled_reshape_targets out;
  mpi::agreement agreed(comm);
  field_hash hash;
  hash.add(jobs.size());
  for (const auto& j : jobs) hash.add_all(j.a.global_hash(), j.b.global_hash(), j.type, j.axes);
  add_cost_and_solver(hash, cost, solver);
  agreed.require_same(hash.value(),
                      "ranks passed different jobs (layouts, axes or element types), costs or solvers to "
                      "relabel_reshape_targets; every rank must describe the same jobs");
  relabel::label_graph mine;
  agreed.attempt([&] {
    std::vector<relabel::nd_layout_pair> pairs;
    pairs.reserve(jobs.size());
    for (const auto& j : jobs) {
      if (j.region.shape != region_shape::all)
        throw invalid_argument(
            "relabel_reshape_targets: jobs with an element_region other than region_shape::all are "
            "not supported (relabel the full job, then plan with the region)");
      pairs.push_back({&j.a, &j.b, j.axes, element_size(j.type)});
    }
    mine = relabel::incoming_packages(pairs, nranks, rank, rank + 1);
    // Only rank 0 solves: every rank checks the solver and the cost model, as a solve would.
    relabel::check_request(cost, solver, nranks);
  });
  const std::size_t largest = agreed.reduce_max(mine.package_count());
  agreed.conclude();
  out.result = relabel::find_relabeling_gathered(comm, mine, agreed.max(largest), cost, solver);
  const auto& perm = out.result.new_rank_of;
  for (const auto& j : jobs) out.a_layouts.push_back(j.a.relabeled(perm));
  return out;
}

}  // namespace redist
