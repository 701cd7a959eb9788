// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Whether released message buffers are kept for the next allocation (src/machine/pages.hpp): not in sanitized
// builds (they free every block, so that a use after release is caught), nor where REDIST_BUFFER_CACHE is set.
#include <cstdlib>

namespace redist::testing {

inline bool buffer_cache_on() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return std::getenv("REDIST_BUFFER_CACHE") == nullptr;
}

}  // namespace redist::testing
