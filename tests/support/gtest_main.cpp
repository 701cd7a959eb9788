// SPDX-License-Identifier: BSD-3-Clause
// main() for the serial GoogleTest programs (tests/unit): sets and prints the base seed of the randomized
// tests (test_main.hpp), runs them, and ends with the count of skipped tests for ctest.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_main.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string error;
  const auto seed = redist::testing::seed_from_environment(error);
  if (!seed) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  redist::testing::use_base_seed(*seed, true, "");
  const int result = RUN_ALL_TESTS();
  const auto* unit = ::testing::UnitTest::GetInstance();
  redist::testing::print_skip_summary(unit->skipped_test_count(), unit->test_to_run_count(),
                                      result == 0 && unit->successful_test_count() == 0);
  return result;
}
