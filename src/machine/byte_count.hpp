// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Byte counts written by users in environment variables (REDIST_GEMM_MEMORY, REDIST_BUFFER_CACHE): one syntax.
#include <cstdint>
#include <cstdlib>
#include <string>

namespace redist::machine {

// A non-negative decimal number with an optional K, M or G suffix (powers of 1024, either case), e.g. 512M;
// -1 when the text is anything else or the count overflows.
inline std::int64_t parse_byte_count(const std::string& text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return -1;
  char* end = nullptr;
  const long long number = std::strtoll(text.c_str(), &end, 10);
  const std::string suffix(end);
  std::int64_t scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = std::int64_t(1) << 10;
  else if (suffix == "M" || suffix == "m")
    scale = std::int64_t(1) << 20;
  else if (suffix == "G" || suffix == "g")
    scale = std::int64_t(1) << 30;
  else if (!suffix.empty())
    return -1;
  if (number < 0 || number > INT64_MAX / scale) return -1;
  return static_cast<std::int64_t>(number) * scale;
}

}  // namespace redist::machine
