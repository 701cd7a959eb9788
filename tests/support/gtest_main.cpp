// main() for the serial GoogleTest programs (tests/unit): sets and prints the base seed of the randomized
// tests (test_main.hpp), then runs them.
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
  return RUN_ALL_TESTS();
}
