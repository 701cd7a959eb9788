// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Torus and mesh networks of 1 to 3 dimensions, and where MPI ranks sit on them (one rank per node).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace redist::torus {

/// A node's position: one coordinate per dimension, X first (dimensions a topology lacks are 0).
using coordinate = std::array<int, 3>;

class topology {
 public:
  /// extents: the lengths N_X, N_Y, N_Z of 1 to 3 dimensions, each >= 1. wraps: per dimension, true for a
  /// ring (torus), false for a line (mesh); empty means every dimension wraps.
  /// @throws invalid_argument no or more than 3 extents, an extent below 1, more than 2^30 nodes, or wraps neither
  /// empty nor one flag per extent
  explicit topology(std::vector<int> extents, std::vector<bool> wraps = {});
  /// "16x8", "8x16x16" (lengths joined by 'x'); mesh = true: no dimension wraps.
  /// @throws invalid_argument text that is not positive decimal lengths (digits only: no sign or space) of at most
  /// INT_MAX joined by 'x', or lengths the constructor rejects
  static topology parse(const std::string& dims, bool mesh = false);

  int dimensions() const noexcept { return dims_; }  ///< 1 to 3
  /// Length of dim (1 beyond dimensions()).
  /// @pre dim >= 0
  int extent(int dim) const noexcept { return dim < dims_ ? extents_[static_cast<size_t>(dim)] : 1; }
  /// Whether dim is a ring (false beyond dimensions()).
  /// @pre dim >= 0
  bool wraps(int dim) const noexcept { return dim < dims_ && wraps_[static_cast<size_t>(dim)]; }
  int nodes() const noexcept { return extents_[0] * extents_[1] * extents_[2]; }  ///< N_X * N_Y * N_Z
  /// Node index of a coordinate: X varies slowest, Z fastest, node = (x * N_Y + y) * N_Z + z.
  /// @pre every coordinate inside its dimension (0 <= c[d] < extent(d)); not checked
  int node(const coordinate& c) const noexcept { return (c[0] * extents_[1] + c[1]) * extents_[2] + c[2]; }
  /// The coordinate of a node index (the inverse of node()).
  /// @pre 0 <= node < nodes(); not checked
  coordinate coordinates(int node) const noexcept {
    return {node / (extents_[1] * extents_[2]), (node / extents_[2]) % extents_[1], node % extents_[2]};
  }
  /// Hops between positions a and b along dim: the shorter way round when the dimension wraps.
  /// @pre dim >= 0 and a, b inside the dimension (0 to extent(dim) - 1); not checked
  int distance(int dim, int a, int b) const noexcept;
  /// Hops of a shortest path between two nodes (sum over the dimensions).
  /// @pre both nodes in 0 to nodes() - 1; not checked
  int distance(int node_a, int node_b) const noexcept;
  /// The dimensions ordered from longest to shortest (ties: the lower index first).
  std::array<int, 3> by_length() const noexcept;
  /// Directed links along dim: 2 per node and ring, fewer on a mesh line; 0 for a dimension of length 1.
  /// @pre dim >= 0
  std::int64_t links(int dim) const noexcept;
  /// "16x8", "8x16x16", with " mesh" appended when no dimension wraps and "(wraps 1,0)" when only some do.
  /// Throws nothing.
  std::string to_string() const;

  bool operator==(const topology& o) const noexcept {
    return dims_ == o.dims_ && extents_ == o.extents_ && wraps_ == o.wraps_;
  }

 private:
  std::array<int, 3> extents_{1, 1, 1};
  std::array<bool, 3> wraps_{false, false, false};
  int dims_ = 1;
};

/// Which node each MPI rank runs on: a bijection between ranks 0..nodes-1 and the nodes.
class rank_mapping {
 public:
  /// The dimension-ordered ("default") mapping: `order` names the dimensions from the slowest to the fastest
  /// varying with the rank. "XYZ": z = r mod N_Z, y = (r / N_Z) mod N_Y, x = r / (N_Z N_Y) (the node index);
  /// "ZXY": y varies fastest, then x, then z. 2D topologies take 2-letter orders ("XY", "YX"), 1D ones "X".
  /// @throws invalid_argument order is not a permutation of the first t.dimensions() letters of "XYZ"
  static rank_mapping dimension_ordered(const topology& t, const std::string& order);
  /// The dimensions in order ("X", "XY" or "XYZ" as t has 1 to 3): rank r runs on node r. Throws nothing.
  static rank_mapping dimension_ordered(const topology& t);
  /// A uniformly random bijection, the same on every rank for the same seed. Throws nothing.
  static rank_mapping random(const topology& t, std::uint64_t seed);
  /// node_of_rank: a permutation of 0..t.nodes()-1.
  /// @throws invalid_argument node_of_rank does not hold t.nodes() entries, or is no permutation of the nodes
  static rank_mapping user(const topology& t, std::vector<int> node_of_rank);

  int ranks() const noexcept { return static_cast<int>(node_of_rank_.size()); }  ///< the topology's nodes
  /// The node rank runs on. Throws nothing.
  /// @pre 0 <= rank < ranks(); not checked
  int node_of_rank(int rank) const { return node_of_rank_[static_cast<size_t>(rank)]; }
  /// The rank on node. Throws nothing.
  /// @pre 0 <= node < ranks(); not checked
  int rank_of_node(int node) const { return rank_of_node_[static_cast<size_t>(node)]; }

 private:
  explicit rank_mapping(std::vector<int> node_of_rank);
  std::vector<int> node_of_rank_;
  std::vector<int> rank_of_node_;
};

}  // namespace redist::torus
