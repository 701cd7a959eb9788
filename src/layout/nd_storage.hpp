// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) Index arithmetic shared by the N-d layout's checks and builders: 64-bit products and sums that
// throw overflow_error instead of wrapping, and dense strides in a given axis order.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "redist/error.hpp"

namespace redist::detail {

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw overflow_error(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                         " does not fit in 64 bits");
  return r;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw overflow_error(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                         " does not fit in 64 bits");
  return r;
}

// Strides of an array of these extents stored densely with axes order[0] (fastest) .. order[d-1]. Zero extents
// count as 1, so that strides stay positive (valid) for an array that holds nothing.
inline std::vector<std::int64_t> dense_strides(const std::vector<std::int64_t>& extents,
                                               const std::vector<int>& order) {
  std::vector<std::int64_t> strides(extents.size(), 1);
  std::int64_t s = 1;
  for (int a : order) {
    strides[static_cast<size_t>(a)] = s;
    s = checked_mul(s, std::max<std::int64_t>(extents[static_cast<size_t>(a)], 1), "dense local strides");
  }
  return strides;
}

}  // namespace redist::detail
