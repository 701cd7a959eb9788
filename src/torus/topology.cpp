// SPDX-License-Identifier: BSD-3-Clause
#include "redist/torus/topology.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "redist/error.hpp"

namespace redist::torus {

topology::topology(std::vector<int> extents, std::vector<bool> wraps) {
  if (extents.empty() || extents.size() > 3)
    throw invalid_argument("torus topology: " + std::to_string(extents.size()) + " dimensions given, expected 1 to 3");
  if (!wraps.empty() && wraps.size() != extents.size())
    throw invalid_argument("torus topology: " + std::to_string(wraps.size()) + " wrap flags for " +
                           std::to_string(extents.size()) + " dimensions, expected one per dimension or none");
  std::int64_t total = 1;
  for (std::size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] < 1)
      throw invalid_argument("torus topology: dimension " + std::to_string(d) + " has length " +
                             std::to_string(extents[d]) + ", expected >= 1");
    total *= extents[d];
    if (total > (std::int64_t(1) << 30)) throw invalid_argument("torus topology: more than 2^30 nodes");
    extents_[d] = extents[d];
    wraps_[d] = wraps.empty() ? true : static_cast<bool>(wraps[d]);
  }
  dims_ = static_cast<int>(extents.size());
}

topology topology::parse(const std::string& dims, bool mesh) {
  const auto fail = [&] {
    throw invalid_argument("torus dimensions '" + dims +
                           "': expected positive decimal lengths (digits only) joined by 'x', e.g. 16x8 or 8x16x16");
  };
  std::vector<int> extents;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = dims.find('x', start);
    const std::size_t end = x == std::string::npos ? dims.size() : x;
    if (end == start) fail();
    // By hand, not std::stoi: it skips leading spaces, takes a sign and throws std::out_of_range on huge numbers.
    std::int64_t value = 0;
    for (std::size_t i = start; i < end; ++i) {
      if (dims[i] < '0' || dims[i] > '9') fail();
      value = value * 10 + (dims[i] - '0');
      if (value > std::numeric_limits<int>::max()) fail();
    }
    if (value == 0) fail();
    extents.push_back(static_cast<int>(value));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return topology(extents, std::vector<bool>(extents.size(), !mesh));
}

int topology::distance(int dim, int a, int b) const noexcept {
  const int d = a > b ? a - b : b - a;
  return wraps(dim) ? std::min(d, extent(dim) - d) : d;
}

int topology::distance(int node_a, int node_b) const noexcept {
  const coordinate a = coordinates(node_a), b = coordinates(node_b);
  return distance(0, a[0], b[0]) + distance(1, a[1], b[1]) + distance(2, a[2], b[2]);
}

std::array<int, 3> topology::by_length() const noexcept {
  std::array<int, 3> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return extent(a) > extent(b); });
  return order;
}

std::int64_t topology::links(int dim) const noexcept {
  const std::int64_t n = extent(dim);
  if (n == 1) return 0;
  const std::int64_t lines = nodes() / n;
  return 2 * lines * (wraps(dim) ? n : n - 1);
}

std::string topology::to_string() const {
  std::ostringstream s;
  bool all_wrap = true, none_wrap = true;
  for (int d = 0; d < dims_; ++d) {
    s << (d ? "x" : "") << extents_[static_cast<size_t>(d)];
    all_wrap = all_wrap && wraps_[static_cast<size_t>(d)];
    none_wrap = none_wrap && !wraps_[static_cast<size_t>(d)];
  }
  if (none_wrap) {
    s << " mesh";
  } else if (!all_wrap) {
    s << " (wraps";
    for (int d = 0; d < dims_; ++d) s << (d ? "," : " ") << wraps_[static_cast<size_t>(d)];
    s << ")";
  }
  return s.str();
}

rank_mapping::rank_mapping(std::vector<int> node_of_rank) : node_of_rank_(std::move(node_of_rank)) {
  rank_of_node_.assign(node_of_rank_.size(), -1);
  for (std::size_t r = 0; r < node_of_rank_.size(); ++r) {
    const int n = node_of_rank_[r];
    if (n < 0 || static_cast<std::size_t>(n) >= node_of_rank_.size() || rank_of_node_[static_cast<size_t>(n)] >= 0)
      throw invalid_argument("rank mapping: rank " + std::to_string(r) + " maps to node " + std::to_string(n) +
                             ", expected a permutation of the nodes 0.." + std::to_string(node_of_rank_.size() - 1));
    rank_of_node_[static_cast<size_t>(n)] = static_cast<int>(r);
  }
}

rank_mapping rank_mapping::dimension_ordered(const topology& t, const std::string& order) {
  const std::string all = "XYZ";
  std::string expected = all.substr(0, static_cast<size_t>(t.dimensions()));
  std::string sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != expected)
    throw invalid_argument("rank mapping order '" + order + "' for a " + std::to_string(t.dimensions()) +
                           "-dimensional topology (" + t.to_string() + "): expected a permutation of " + expected +
                           ", one letter per dimension from the slowest to the fastest varying");
  std::vector<int> node_of_rank(static_cast<size_t>(t.nodes()));
  for (int r = 0; r < t.nodes(); ++r) {
    coordinate c{0, 0, 0};
    int rest = r;
    for (int k = t.dimensions() - 1; k >= 0; --k) {  // the last letter varies fastest
      const int dim = order[static_cast<size_t>(k)] - 'X';
      c[static_cast<size_t>(dim)] = rest % t.extent(dim);
      rest /= t.extent(dim);
    }
    node_of_rank[static_cast<size_t>(r)] = t.node(c);
  }
  return rank_mapping(std::move(node_of_rank));
}

rank_mapping rank_mapping::dimension_ordered(const topology& t) {
  return dimension_ordered(t, std::string("XYZ").substr(0, static_cast<size_t>(t.dimensions())));
}

rank_mapping rank_mapping::random(const topology& t, std::uint64_t seed) {
  std::vector<int> node_of_rank(static_cast<size_t>(t.nodes()));
  std::iota(node_of_rank.begin(), node_of_rank.end(), 0);
  // Fisher-Yates with a fixed generator and our own index draw: std::shuffle's use of the engine is
  // implementation-defined, and every rank must get the same mapping.
  std::mt19937_64 gen(seed);
  for (std::size_t i = node_of_rank.size(); i > 1; --i) std::swap(node_of_rank[i - 1], node_of_rank[gen() % i]);
  return rank_mapping(std::move(node_of_rank));
}

rank_mapping rank_mapping::user(const topology& t, std::vector<int> node_of_rank) {
  if (static_cast<int>(node_of_rank.size()) != t.nodes())
    throw invalid_argument("rank mapping: " + std::to_string(node_of_rank.size()) + " entries for a " + t.to_string() +
                           " torus, expected " + std::to_string(t.nodes()) + " (one rank per node)");
  return rank_mapping(std::move(node_of_rank));
}

}  // namespace redist::torus
