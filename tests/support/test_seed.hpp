// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The seeds of the randomized tests, serial and MPI. One base seed per run: REDIST_TEST_SEED (an unsigned
// decimal integer) when set, else time-based, so that property tests see new cases on every run. The test
// mains (gtest_main.cpp, mpi_gtest_main.cpp; see test_main.hpp) set it before any test runs, the same on
// every rank, print it first, and print it again with every failed test, so that a failure's log says how to
// reproduce it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace redist::testing {

// splitmix64's finalizer: nearby inputs (salts 1, 2, 3, ...) give unrelated outputs.
inline std::uint64_t mix_seed(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The run's base seed, set by the test main.
inline std::optional<std::uint64_t>& base_seed() {
  static std::optional<std::uint64_t> seed;
  return seed;
}

// The seed of one random stream: the run's base seed mixed with the caller's own constant, so that each
// test (and each stream within a test) draws differently, and one REDIST_TEST_SEED reproduces them all,
// whichever tests --gtest_filter selects. The same on every rank of an MPI program.
inline std::uint64_t test_seed(std::uint64_t salt) {
  if (!base_seed()) {  // a stream drawn before main set the base (a static initializer) would not be reproducible
    std::fprintf(stderr, "test_seed(%llu) called before the test main set the base seed\n",
                 static_cast<unsigned long long>(salt));
    std::abort();
  }
  return mix_seed(*base_seed() ^ mix_seed(salt));
}

}  // namespace redist::testing
