// SPDX-License-Identifier: BSD-3-Clause
// redist-gemm-stats: the statistics mode of the distributed multiply. Prints the COSMA schedule that
// redist's gemm would use for C (m x n) = op(A) (m x k) * op(B) (k x n) on P ranks (grid, sequential steps,
// rounds, memory, volume, I/O against the lower bound of the paper's Eq. 33), for any P, in one process
// and without MPI.
//
//   redist-gemm-stats --m M --n N --k K --ranks P[,P2,...] [--memory S | --memory-bytes B [--element-bytes 8]]
//                     [--idle 0.03] [--rounds R] [--no-overlap] [--json FILE]
//
// Sizes take an optional K, M or G suffix (powers of 1024, as REDIST_GEMM_MEMORY). Exit status: 0 done,
// 2 a wrong argument (with the usage), 1 no schedule fits the memory limit (with the error) or the search would
// need more memory than this machine has (with the amount).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "memory_check.hpp"
#include "redist/error.hpp"
#include "redist/gemm/schedule.hpp"

namespace {

constexpr const char* kUsage =
    "usage: redist-gemm-stats --m M --n N --k K --ranks P[,P2,...]\n"
    "                         [--memory S | --memory-bytes B [--element-bytes E]] [--idle F] [--rounds R]\n"
    "                         [--no-overlap] [--json FILE]\n"
    "  --m, --n, --k     C is m x n, op(A) m x k, op(B) k x n (>= 0)\n"
    "  --ranks           one or more rank counts, comma-separated (>= 1)\n"
    "  --memory          S: elements per rank for the multiply's buffers (default 0 = no limit)\n"
    "  --memory-bytes    S in bytes, divided by --element-bytes (default 8)\n"
    "  --idle            largest fraction of idle ranks for a better grid, in [0, 1) (default 0.03)\n"
    "  --rounds          rounds along k, 0 = automatic (default 0)\n"
    "  --no-overlap      single round buffers (no communication of round t+1 during round t)\n"
    "  --json FILE       also write the schedules as a JSON array to FILE\n"
    "  sizes may end in K, M or G (powers of 1024)\n";

// A command-line mistake: reported on stderr with the usage, exit status 2.
struct usage_error {
  std::string message;
};

// A non-negative integer with an optional K, M or G suffix (powers of 1024).
std::int64_t parse_size(const std::string& text, const std::string& option) {
  const std::string expected = "a non-negative integer, optionally followed by K, M or G";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || text.size() - digits > 1)
    throw usage_error{option + " '" + text + "' is not valid: expected " + expected};
  std::int64_t scale = 1;
  if (digits < text.size()) {
    switch (text[digits]) {
      case 'K':
      case 'k':
        scale = std::int64_t{1} << 10;
        break;
      case 'M':
      case 'm':
        scale = std::int64_t{1} << 20;
        break;
      case 'G':
      case 'g':
        scale = std::int64_t{1} << 30;
        break;
      default:
        throw usage_error{option + " '" + text + "' is not valid: expected " + expected};
    }
  }
  errno = 0;
  const unsigned long long value = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  const auto limit = static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max() / scale);
  if (errno == ERANGE || value > limit)
    throw usage_error{option + " '" + text + "' is too large: expected at most 2^63-1 after the suffix"};
  return static_cast<std::int64_t>(value) * scale;
}

int parse_ranks(const std::string& text) {
  const std::int64_t value = parse_size(text, "--ranks");
  if (value < 1 || value > std::numeric_limits<int>::max())
    throw usage_error{"--ranks '" + text + "' is not valid: expected a rank count from 1 to 2147483647"};
  return static_cast<int>(value);
}

double parse_fraction(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0 && value < 1))
    throw usage_error{"--idle '" + text + "' is not valid: expected a fraction in [0, 1)"};
  return value;
}

struct arguments {
  std::int64_t m = -1, n = -1, k = -1;
  std::vector<int> ranks;
  redist::gemm_schedule_options options;
  std::int64_t memory_bytes = -1;
  std::int64_t element_bytes = 8;
  bool has_memory = false;
  std::string json_file;
  bool help = false;
};

arguments parse(int argc, char** argv) {
  arguments a;
  bool has_element_bytes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() {
      if (i + 1 >= argc) throw usage_error{arg + " needs a value"};
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--m") {
      a.m = parse_size(value(), arg);
    } else if (arg == "--n") {
      a.n = parse_size(value(), arg);
    } else if (arg == "--k") {
      a.k = parse_size(value(), arg);
    } else if (arg == "--ranks") {
      const std::string list = value();
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = list.find(',', start);
        const std::size_t length = comma == std::string::npos ? std::string::npos : comma - start;
        a.ranks.push_back(parse_ranks(list.substr(start, length)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg == "--memory") {
      a.options.memory_limit_elements = parse_size(value(), arg);
      a.has_memory = true;
    } else if (arg == "--memory-bytes") {
      a.memory_bytes = parse_size(value(), arg);
    } else if (arg == "--element-bytes") {
      a.element_bytes = parse_size(value(), arg);
      has_element_bytes = true;
      if (a.element_bytes < 1) throw usage_error{"--element-bytes must be >= 1"};
    } else if (arg == "--idle") {
      a.options.max_idle_fraction = parse_fraction(value());
    } else if (arg == "--rounds") {
      a.options.rounds = parse_size(value(), arg);
    } else if (arg == "--no-overlap") {
      a.options.double_buffering = false;
    } else if (arg == "--json") {
      a.json_file = value();
    } else {
      throw usage_error{"unknown argument '" + arg + "'"};
    }
  }
  if (a.help) return a;
  if (a.m < 0 || a.n < 0 || a.k < 0) throw usage_error{"--m, --n and --k are all required"};
  if (a.ranks.empty()) throw usage_error{"--ranks is required"};
  if (a.has_memory && a.memory_bytes >= 0) throw usage_error{"give either --memory or --memory-bytes, not both"};
  if (has_element_bytes && a.memory_bytes < 0) throw usage_error{"--element-bytes needs --memory-bytes"};
  if (a.memory_bytes >= 0) {
    a.options.memory_limit_elements = a.memory_bytes / a.element_bytes;
    if (a.memory_bytes > 0 && a.options.memory_limit_elements == 0)
      throw usage_error{"--memory-bytes " + std::to_string(a.memory_bytes) + " is less than one element of " +
                        std::to_string(a.element_bytes) + " bytes"};
  }
  return a;
}

// ---- memory estimate ----
using redist::tools::add_saturated;
using redist::tools::byte_count;
using redist::tools::multiply_saturated;

// Ordered triples (a, b, c) of positive integers with a * b * c <= x: the grids gm x gn x gk of all rank counts
// up to x. Counts the triples a <= b <= c (c from b to x / (a b)) with their orderings: O(x^(2/3)), a few
// milliseconds at x = 2^31.
byte_count grids_up_to(std::int64_t x) {
  byte_count triples = 0;
  for (std::int64_t a = 1; a * a * a <= x; ++a)
    for (std::int64_t b = a; a * b * b <= x; ++b) {
      const auto larger_c = static_cast<byte_count>(x / (a * b) - b);  // c > b
      // c == b: a == b == c is one ordering, a < b == c three; each c > b: three orderings when a == b, else six.
      triples += a == b ? 1 + 3 * larger_c : 3 + 6 * larger_c;
    }
  return triples;
}

// The grids the schedule search visits for P ranks: every gm x gn x gk = used for used from P (or the most
// parts m, n and k allow) down to the fewest the idle allowance keeps, as the library's search runs them. When
// that range has no grid the search goes on below it to the first count that has one: that count's grids only,
// at most 1600^2 (no count below 2^31 has more than 1600 divisors).
byte_count candidate_grids(const arguments& a, int ranks) {
  const auto parts = [](std::int64_t extent) { return static_cast<byte_count>(std::max<std::int64_t>(1, extent)); };
  const byte_count most_parts = multiply_saturated(multiply_saturated(parts(a.m), parts(a.n)), parts(a.k));
  const auto top = static_cast<std::int64_t>(std::min<byte_count>(static_cast<byte_count>(ranks), most_parts));
  const int idle_allowed = static_cast<int>(std::floor(a.options.max_idle_fraction * ranks * (1 + 1e-12)));
  const std::int64_t fewest_used = std::max(1, ranks - idle_allowed);
  const byte_count in_range = top >= fewest_used ? grids_up_to(top) - grids_up_to(fewest_used - 1) : 0;
  const byte_count one_count = std::min<byte_count>(grids_up_to(top), 1600 * 1600);
  return std::max(in_range, one_count);
}

// An upper bound of the bytes run() allocates, from the arguments alone. Without a memory limit the search keeps
// only its best candidate and small divisor lists (64 KiB counted per rank count). With a limit it first lists
// every candidate grid with its I/O bound (24 bytes each, doubled for vector growth), and when no grid fits a
// second such list for the message saying how much memory would do: 96 bytes per grid. Rank counts are planned
// one after another, so the largest counts.
byte_count estimated_bytes(const arguments& a) {
  constexpr byte_count kPerSearch = 64 * 1024;
  byte_count largest = 0;
  for (const int ranks : a.ranks) {
    byte_count bytes = kPerSearch;
    if (a.options.memory_limit_elements > 0)
      bytes = add_saturated(bytes, multiply_saturated(96, candidate_grids(a, ranks)));
    largest = std::max(largest, bytes);
  }
  return add_saturated(largest, multiply_saturated(kPerSearch, a.ranks.size()));  // the schedules kept for JSON
}

// What the refusal names: the arguments the estimate grows with.
std::string sizes_text(const arguments& a) {
  const int most_ranks = *std::max_element(a.ranks.begin(), a.ranks.end());
  return "--ranks " + std::to_string(most_ranks) + (a.options.memory_limit_elements > 0 ? " with a memory limit" : "");
}

int run(const arguments& a) {
  std::vector<redist::gemm_schedule> schedules;
  for (const int ranks : a.ranks) {
    schedules.push_back(redist::plan_gemm_schedule(a.m, a.n, a.k, ranks, a.options));
    std::printf("%s\n", schedules.back().describe().c_str());
  }
  if (a.json_file.empty()) return 0;
  std::FILE* out = std::fopen(a.json_file.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "redist-gemm-stats: cannot write %s\n", a.json_file.c_str());
    return 1;
  }
  std::fputs("[\n", out);
  for (std::size_t i = 0; i < schedules.size(); ++i)
    std::fprintf(out, "  %s%s\n", schedules[i].to_json().c_str(), i + 1 < schedules.size() ? "," : "");
  std::fputs("]\n", out);
  const bool written = std::ferror(out) == 0;
  if (std::fclose(out) != 0 || !written) {  // a full device shows here, not at fopen
    std::fprintf(stderr, "redist-gemm-stats: writing %s failed: %s\n", a.json_file.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  arguments a;
  try {
    a = parse(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "redist-gemm-stats: %s\n%s", e.message.c_str(), kUsage);
    return 2;
  }
  if (a.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const byte_count estimate = estimated_bytes(a);
  if (redist::tools::refuse_if_too_large("redist-gemm-stats", sizes_text(a), estimate)) return 1;
  try {
    return run(a);
  } catch (const redist::invalid_argument& e) {
    std::fprintf(stderr, "redist-gemm-stats: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::bad_alloc&) {
    redist::tools::report_out_of_memory("redist-gemm-stats", sizes_text(a), estimate);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist-gemm-stats: %s\n", e.what());
    return 1;
  }
}
