// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Relabeling the target layouts of a batch before planning (opt-in): the owners of every A layout are
// permuted by one communication-optimal permutation. The caller receives the new layouts and the
// permutation and may refuse them; the data of A must then be stored according to the new layouts.
#include <mpi.h>

#include <vector>

#include "redist/relabel/relabel.hpp"
#include "redist/transform/plan.hpp"

namespace redist {

struct relabeled_targets {
  std::vector<grid_layout> a_layouts;  ///< one per job, owners relabeled, local storage of this rank rebuilt
  relabel::relabeling result;          ///< permutation (new_rank_of) and volumes before/after
};

/// Collective. Every rank computes from the global descriptions only the packages its own label receives; rank
/// 0 gathers them, solves, and broadcasts the permutation and the figures, so rank 0 holds the graph (12 bytes per
/// package) and the other ranks O(their packages + nranks). The answer is find_relabeling's on the whole graph.
/// Jobs must cover all of A (element_region region_shape::all; throws invalid_argument otherwise).
/// @pre collective: every rank of comm calls it with the same jobs, cost and solver (checked, except cost.pair_cost,
///   which cannot be compared: rank 0's is used for the solve)
/// @throws inconsistent_ranks ranks passed different jobs (layouts, ops or element types), costs or solvers
/// @throws invalid_argument a job whose region is not all or whose element type is not an enumerator, a solver or
///   cost model that is not an enumerator, a node_of of the wrong size, or a pair_cost problem above
///   dense_assignment_limit ranks
/// @throws invalid_layout a layout communication_graph refuses
/// @throws dimension_mismatch op(B) of a job is not the shape of its A
/// @throws overflow_error a job whose size in bytes overflows 64 bits
/// @throws insufficient_memory an allocation failed on some rank
/// @throws mpi_error an MPI call failed
relabeled_targets relabel_targets(MPI_Comm comm, const std::vector<job_description>& jobs,
                                  const relabel::relabel_cost& cost = {},
                                  relabel::solver solver = relabel::solver::exact);

/// The same for N-dimensional jobs: every A layout's owners permuted by one communication-optimal permutation (the
/// same solver, any d). Collective, solved on rank 0 from the ranks' packages as above. Jobs must cover all of A
/// (region all).
struct relabeled_reshape_targets {
  std::vector<nd_layout> a_layouts;  ///< one per job, owners relabeled, local storage of this rank rebuilt
  relabel::relabeling result;
};
/// relabel_targets for N-dimensional jobs (see relabeled_reshape_targets).
/// @pre collective: every rank of comm calls it with the same jobs, cost and solver (checked, except cost.pair_cost,
///   which cannot be compared: rank 0's is used for the solve)
/// @throws inconsistent_ranks ranks passed different jobs (layouts, axes, element types), costs or solvers
/// @throws invalid_argument a job whose region is not all, axes that are not a permutation, a solver or cost model
///   that is not an enumerator, a node_of of the wrong size, or a pair_cost problem above dense_assignment_limit
///   ranks
/// @throws invalid_layout a layout that fails nd_layout::validate_global
/// @throws dimension_mismatch permute(B, axes) of a job is not the shape of its A
/// @throws overflow_error a job whose size in bytes overflows 64 bits
/// @throws insufficient_memory an allocation failed on some rank
/// @throws mpi_error an MPI call failed
relabeled_reshape_targets relabel_reshape_targets(MPI_Comm comm, const std::vector<reshape_job>& jobs,
                                                  const relabel::relabel_cost& cost = {},
                                                  relabel::solver solver = relabel::solver::exact);

}  // namespace redist
