// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Bad-input assertions for MPI GoogleTest programs: a rejected call must throw the same exception type on
// every rank, with a message that says what was wrong.
#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "mpi_test_support.hpp"

namespace redist::testing {

// Runs f; expects exception E on every rank with `needle` in its message.
template <class E, class F>
void expect_rejected(F&& f, const std::string& needle) {
  bool thrown = false;
  std::string what;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    what = e.what();
  } catch (const std::exception& e) {
    what = std::string("wrong exception type: ") + e.what();
  }
  EXPECT_TRUE(all_ranks(thrown)) << "rank " << world_rank() << ": " << what;
  EXPECT_NE(what.find(needle), std::string::npos) << "message: " << what;
}

}  // namespace redist::testing
