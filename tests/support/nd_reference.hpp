// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The serial reference of an N-d layout's storage: which block holds a global index and where that block's owner
// keeps it, from the layout's description alone (splits, local starts, strides, listed blocks), independent of the
// engine's runs and tiles.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "redist/layout/nd_layout.hpp"

namespace redist::testing {

inline std::vector<std::int64_t> block_of(const redist::nd_layout& l, const std::vector<std::int64_t>& g) {
  std::vector<std::int64_t> b;
  for (int k = 0; k < l.ndim(); ++k) {
    const auto& s = l.splits(k);
    b.push_back(std::upper_bound(s.begin(), s.end(), g[static_cast<size_t>(k)]) - s.begin() - 1);
  }
  return b;
}

// Where global index g lies in l's local storage (l as g's owner builds it); -1 when its block is not listed there.
inline std::int64_t offset_of(const redist::nd_layout& l, const std::vector<std::int64_t>& g) {
  const std::vector<std::int64_t> b = block_of(l, g);
  std::int64_t off = 0;
  if (l.kind() == redist::storage_kind::regular) {
    for (int k = 0; k < l.ndim(); ++k) {
      const size_t ks = static_cast<size_t>(k), bk = static_cast<size_t>(b[ks]);
      off += (l.local_start(k)[bk] + g[ks] - l.splits(k)[bk]) * l.local_strides()[ks];
    }
    return off;
  }
  for (const redist::nd_local_block& lb : l.local_blocks())
    if (lb.block == b) {
      off = lb.offset;
      for (int k = 0; k < l.ndim(); ++k) {
        const size_t ks = static_cast<size_t>(k), bk = static_cast<size_t>(b[ks]);
        off += (g[ks] - l.splits(k)[bk]) * lb.strides[ks];
      }
      return off;
    }
  return -1;
}

}  // namespace redist::testing
