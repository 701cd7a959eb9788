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
relabeled_reshape_targets relabel_reshape_targets(MPI_Comm comm, const std::vector<reshape_job>& jobs,
                                                  const relabel::relabel_cost& cost = {},
                                                  relabel::solver solver = relabel::solver::exact);

}  // namespace redist
