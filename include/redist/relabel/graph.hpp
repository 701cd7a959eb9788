// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The communication graph of a data movement: for every (source rank, target label) the bytes that
// must go from the rank holding them in B to the rank labelled as their owner in A.
// Computed from global layout descriptions only (no MPI), so that it also works for virtual ranks.
#include <cstdint>
#include <vector>

#include "redist/layout/grid_layout.hpp"
#include "redist/layout/nd_layout.hpp"
#include "redist/types.hpp"

namespace redist::relabel {

struct edge {
  int src = 0;              ///< rank holding the data in B
  int dst = 0;              ///< owner label in A
  std::int64_t volume = 0;  ///< bytes
};

/// Sparse graph; edges sorted by (src, dst), no duplicates, no zero volumes. Self edges (src == dst)
/// are data that stays local.
struct comm_graph {
  int nranks = 0;
  std::vector<edge> edges;

  std::int64_t total_volume() const;     ///< sum of all volumes; throws nothing
  std::int64_t remote_volume() const;    ///< sum over src != dst; throws nothing
  std::int64_t remote_messages() const;  ///< edges with src != dst; throws nothing
  /// Max over ranks of max(remote bytes sent, remote bytes received). Throws nothing.
  /// @pre every edge's src and dst >= 0
  std::int64_t max_rank_volume() const;
};

/// One movement A <- op(B) of elements of `element_size` bytes.
struct layout_pair {
  const grid_layout* a = nullptr;
  const grid_layout* b = nullptr;
  op operation = op::identity;
  std::size_t element_size = 8;
};

/// Volumes of all pairs added together (a batch shares one graph). op(B) is B transposed for transpose
/// and conj_transpose. Cost: O(block rows + block cols) to overlay the splits, plus one step per
/// (row-position pair) x (column-position pair) overlap; independent of the number of elements.
/// Throws invalid_argument (null layout, element_size 0, nranks < 1), invalid_layout (an owner outside
/// [0, nranks), decreasing splits), dimension_mismatch (op(B) not the shape of A) and overflow_error.
/// @throws invalid_argument a null layout, element_size 0 or nranks < 1
/// @throws invalid_layout an owner outside [0, nranks), decreasing splits, splits that do not fit the owners, or a
///   position grid that does not fit its owner list
/// @throws dimension_mismatch op(B) is not the shape of A
/// @throws overflow_error a matrix whose size in bytes overflows 64 bits
comm_graph communication_graph(const std::vector<layout_pair>& pairs, int nranks);

/// One N-dimensional movement A <- permute(B, axes) (axis i of A is axis axes[i] of B; empty: the identity).
struct nd_layout_pair {
  const nd_layout* a = nullptr;
  const nd_layout* b = nullptr;
  std::vector<int> axes;
  std::size_t element_size = 8;
};

/// The same for N-d pairs (a matrix pair is the case d = 2): per axis the overlay of the position lists, and one
/// package per combination of the axes' position pairs. Throws as above (invalid_layout from validate_global).
/// @throws invalid_argument a null layout, element_size 0, nranks < 1, or axes that are not a permutation
/// @throws invalid_layout a layout that fails nd_layout::validate_global(nranks)
/// @throws dimension_mismatch A and B with different numbers of axes, or permute(B, axes) not the shape of A
/// @throws overflow_error an array whose size in bytes overflows 64 bits
comm_graph communication_graph(const std::vector<nd_layout_pair>& pairs, int nranks);

/// The packages of a range of target labels, compressed by label: the senders of label first_label + x are
/// src[label_start[x] .. label_start[x + 1]), ascending, with volume[...] bytes each (no zero volumes).
/// 12 bytes per package against comm_graph's 16 and already in the order the assignment solver reads, so the
/// rank that solves a large relabeling holds nothing else per package. Indices are 64-bit: a graph may hold
/// more than 2^31 packages.
struct label_graph {
  int nranks = 0;
  int first_label = 0;
  std::vector<std::int64_t> label_start{0};
  std::vector<int> src;
  std::vector<std::int64_t> volume;

  /// Labels held. Throws nothing.
  int label_count() const { return static_cast<int>(label_start.size()) - 1; }
  /// Packages held. Throws nothing.
  /// @pre label_start not empty (it starts as {0})
  std::int64_t package_count() const { return label_start.back(); }
};

/// The packages received by the labels [first_label, end_label) of the movements, from the global layouts,
/// holding only those packages: the work is the overlay of the splits (as for communication_graph) plus the
/// target positions owned by those labels and their packages. For all labels, the same packages as
/// communication_graph(pairs, nranks). Throws as communication_graph, and invalid_argument when the range is
/// not inside [0, nranks].
/// @throws invalid_argument as communication_graph, and first_label < 0, end_label < first_label or
///   end_label > nranks
/// @throws invalid_layout as communication_graph
/// @throws dimension_mismatch as communication_graph
/// @throws overflow_error as communication_graph
label_graph incoming_packages(const std::vector<layout_pair>& pairs, int nranks, int first_label, int end_label);
/// The N-d form: as incoming_packages above, with communication_graph's N-d checks.
/// @throws invalid_argument as the N-d communication_graph, and a label range as above
/// @throws invalid_layout as the N-d communication_graph
/// @throws dimension_mismatch as the N-d communication_graph
/// @throws overflow_error as the N-d communication_graph
label_graph incoming_packages(const std::vector<nd_layout_pair>& pairs, int nranks, int first_label, int end_label);

/// The graph by label (all labels), by a counting sort; edges with volume 0 are left out, duplicate
/// (src, dst) edges added up. Throws invalid_argument for an edge outside [0, nranks).
/// @throws invalid_argument nranks < 0, or an edge's src or dst outside [0, nranks)
label_graph to_label_graph(const comm_graph& g);
/// The graph as an edge list sorted by (src, dst); g must hold all labels (first_label 0, nranks labels).
/// @pre label_start, src and volume consistent (package_count() entries each)
/// @throws invalid_argument g does not hold all labels
comm_graph to_comm_graph(const label_graph& g);

/// The graph after relabeling target labels: label x becomes rank new_rank_of[x] (a permutation of
/// [0, nranks), else invalid_argument). Equal to communication_graph() of A.relabeled(new_rank_of).
/// @throws invalid_argument new_rank_of not a permutation of [0, nranks), or an edge's dst outside [0, nranks)
comm_graph relabel_graph(const comm_graph& g, const std::vector<int>& new_rank_of);

}  // namespace redist::relabel
