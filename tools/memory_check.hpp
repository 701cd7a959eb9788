// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The memory check of the command-line tools: each tool estimates, from its arguments alone, the bytes its run
// will allocate, and refuses sizes this machine cannot hold with one line naming that amount, before allocating
// anything (an allocation that fails deep in a search or a simulation would otherwise come after minutes of
// work, or not at all when the system overcommits and starts swapping).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace redist::tools {

// Estimates saturate instead of wrapping: any size past 2^64 bytes is simply far too large.
using byte_count = std::uint64_t;
inline constexpr byte_count kSaturatedBytes = std::numeric_limits<byte_count>::max();

inline byte_count add_saturated(byte_count a, byte_count b) {
  byte_count sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturatedBytes : sum;
}

inline byte_count multiply_saturated(byte_count a, byte_count b) {
  byte_count product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturatedBytes : product;
}

// Physical memory of this machine in bytes; 0 when the system does not say (then nothing is refused).
inline byte_count physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return multiply_saturated(static_cast<byte_count>(pages), static_cast<byte_count>(page_size));
}

// "23.4 GiB", "512.0 MiB", "300 bytes". Amounts of a GiB and more stay in GiB, so that the estimate and the
// machine's memory in one message compare at a glance ("8192.0 GiB ... 23.4 GiB").
inline std::string human_bytes(byte_count bytes) {
  constexpr double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  const auto value = static_cast<double>(bytes);
  char text[48];
  if (bytes < 1024)
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (value < mib)
    std::snprintf(text, sizeof text, "%.1f KiB", value / kib);
  else if (value < gib)
    std::snprintf(text, sizeof text, "%.1f MiB", value / mib);
  else if (value < 1000 * gib)
    std::snprintf(text, sizeof text, "%.1f GiB", value / gib);
  else
    std::snprintf(text, sizeof text, "%.0f GiB", value / gib);
  return text;
}

// "needs about 80.0 GiB of memory", or "more than" where the estimate saturated.
inline std::string needs_text(byte_count estimate) {
  return estimate == kSaturatedBytes ? "needs more than " + human_bytes(estimate) + " of memory"
                                     : "needs about " + human_bytes(estimate) + " of memory";
}

// When `estimate` exceeds this machine's physical memory, prints
//   TOOL: WHAT needs about 80.0 GiB of memory (this machine has 23.4 GiB)
// on stderr and returns true: the caller exits with status 1 before allocating.
inline bool refuse_if_too_large(const char* tool, const std::string& what, byte_count estimate) {
  const byte_count available = physical_memory_bytes();
  if (available == 0 || estimate <= available) return false;
  std::fprintf(stderr, "%s: %s %s (this machine has %s)\n", tool, what.c_str(), needs_text(estimate).c_str(),
               human_bytes(available).c_str());
  return true;
}

// The std::bad_alloc fallback, for runs that passed the check but found less memory free than installed (other
// processes, a ulimit): one line naming the estimate all the same.
inline void report_out_of_memory(const char* tool, const std::string& what, byte_count estimate) {
  std::fprintf(stderr, "%s: out of memory: %s %s, more than could be allocated (this machine has %s)\n", tool,
               what.c_str(), needs_text(estimate).c_str(), human_bytes(physical_memory_bytes()).c_str());
}

}  // namespace redist::tools
