// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) A wall-clock timer for the planning and execution profiles every capability reports: below the
// capabilities, so that none includes another's private headers for it.
#include <chrono>

namespace redist {

// Wall-clock seconds since construction.
class seconds_since {
 public:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace redist
