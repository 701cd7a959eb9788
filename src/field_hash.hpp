// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// (internal) The one hash of the fields every rank must pass alike, which an agreement's require_same compares and
// layouts' global_hash() returns: FNV-1a over 8 bytes per field. Fields are integers, enums, bools, floating-point
// values (their bits) and ranges of fields (their length, then each field).
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace redist {

class field_hash {
 public:
  template <class T>
  field_hash& add(const T& field) {
    if constexpr (std::is_floating_point_v<T>) {
      const double d = field;
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      mix(bits);
    } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
      mix(static_cast<std::uint64_t>(field));
    } else {
      mix(static_cast<std::uint64_t>(field.size()));
      for (const auto& item : field) add(item);
    }
    return *this;
  }
  template <class... T>
  field_hash& add_all(const T&... fields) {
    (add(fields), ...);
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  void mix(std::uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h_ ^= (v >> (8 * k)) & 0xffu;
      h_ *= 1099511628211ull;
    }
  }
  std::uint64_t h_ = 14695981039346656037ull;
};

}  // namespace redist
