// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What the serial and the MPI test mains (gtest_main.cpp, mpi_gtest_main.cpp) share: the base seed of the
// randomized tests (test_seed.hpp) and the summary of skipped tests that ctest reads.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "test_seed.hpp"

namespace redist::testing {

// REDIST_TEST_SEED's value, or a time-based seed when it is unset or empty; nothing (and `error` says why)
// when it is not an unsigned 64-bit decimal integer.
inline std::optional<std::uint64_t> seed_from_environment(std::string& error) {
  const char* text = std::getenv("REDIST_TEST_SEED");
  if (text == nullptr || *text == '\0') {
    const auto now = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    return mix_seed(now ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32));
  }
  std::uint64_t value = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    const auto digit = static_cast<std::uint64_t>(*c - '0');
    if (*c < '0' || *c > '9' || value > (UINT64_MAX - digit) / 10) {
      error = std::string("REDIST_TEST_SEED=") + text + " is not an unsigned 64-bit decimal integer";
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

// Prints "reproduce with REDIST_TEST_SEED=<n>" after each failed test (`prefix` names the rank in MPI runs).
class seed_on_failure_printer : public ::testing::EmptyTestEventListener {
 public:
  seed_on_failure_printer(std::uint64_t seed, std::string prefix) : seed_(seed), prefix_(std::move(prefix)) {}
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    std::printf("%s[seed] %s.%s failed: reproduce with REDIST_TEST_SEED=%llu\n", prefix_.c_str(),
                info.test_suite_name(), info.name(), static_cast<unsigned long long>(seed_));
    std::fflush(stdout);
  }

 private:
  std::uint64_t seed_;
  std::string prefix_;
};

// Sets the run's base seed, prints it when `print` (rank 0 of an MPI program), and has every failed test
// print it again, after `prefix`.
inline void use_base_seed(std::uint64_t seed, bool print, const std::string& prefix) {
  base_seed() = seed;
  if (print) {
    std::printf("[seed] REDIST_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
    std::fflush(stdout);
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new seed_on_failure_printer(seed, prefix));
}

// The skipped tests' count, last in the output. "[skip] all N test(s) skipped" (a run in which every test
// was skipped and nothing failed, on any rank) is what the GoogleTest programs' SKIP_REGULAR_EXPRESSION
// matches (cmake/redist_mpi_test.cmake); a run that also passed or failed tests prints "[skip] N of M" and
// stays passed or failed in ctest.
inline void print_skip_summary(int skipped, int total, bool only_skips) {
  if (skipped == 0) return;
  if (only_skips)
    std::printf("[skip] all %d test(s) skipped\n", skipped);
  else
    std::printf("[skip] %d of %d test(s) skipped\n", skipped, total);
  std::fflush(stdout);
}

}  // namespace redist::testing
