// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Relabeling solved on one rank: every rank computes the packages its own labels receive, rank 0 gathers them as
// one graph by label, solves, and broadcasts the answer. The other ranks hold O(their packages + nranks).
#include <mpi.h>

#include <cstdint>

#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"

namespace redist::relabel {

// The most packages rank 0 receives per gather round (12 bytes each), by default.
inline constexpr std::int64_t gather_stage_packages = std::int64_t{1} << 20;

// Collective. Rank k's share holds the packages of label k (incoming_packages(pairs, nranks, k, k + 1)), with
// nranks the size of comm, a precondition every caller meets by construction; largest_share is the largest
// package count of any rank, the same on every rank. Returns the whole graph on `root` (an empty graph
// elsewhere). Packages travel in rounds of at most stage_packages in all, so counts and displacements stay
// within MPI's int whatever the graph's size. Every rank makes every call even after one failed on it;
// then throws the first mpi_error.
label_graph gather_label_graph(const label_graph& mine, std::int64_t largest_share, int root, MPI_Comm comm,
                               std::int64_t stage_packages = gather_stage_packages);

// Throws what find_relabeling throws for these arguments before it looks at the graph (a solver or cost model
// that is not an enumerator, a node_of of the wrong size), so that ranks that do not solve check them too.
void check_request(const relabel_cost& cost, solver s, int nranks);

// The relabeling of the gathered graph: solved on rank 0 (find_relabeling on the graph by label), the
// permutation and the figures broadcast, so every rank returns rank 0's answer. Collective; runs under its own
// agreement, so an error on rank 0's solve (or a failed gather) is raised on every rank.
relabeling find_relabeling_gathered(MPI_Comm comm, const label_graph& mine, std::int64_t largest_share,
                                    const relabel_cost& cost, solver s);

}  // namespace redist::relabel
