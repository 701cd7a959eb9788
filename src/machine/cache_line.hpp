// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The cache line the library lays shared and packed data out on: no line written by two ranks, aligned vector
// access, no false sharing between neighbouring pieces.
#include <cstddef>
#include <cstdint>

namespace redist::machine {

constexpr std::int64_t cache_line = 64;

// `bytes` rounded up to whole cache lines.
constexpr std::int64_t round_up_to_cache_line(std::int64_t bytes) {
  return (bytes + cache_line - 1) / cache_line * cache_line;
}

// The first cache-line boundary at or after `p` (null stays null).
inline std::byte* align_to_cache_line(void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const auto line = static_cast<std::uintptr_t>(cache_line);
  return p == nullptr ? nullptr : reinterpret_cast<std::byte*>((address + line - 1) / line * line);
}

}  // namespace redist::machine
