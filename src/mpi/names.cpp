// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the mpi options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/timeout.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<timeout_action> {
  static constexpr const char* option = "timeout action";
  static constexpr std::array<spelling<timeout_action>, 2> current{
      {{timeout_action::warn, "warn"}, {timeout_action::abort, "abort"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(timeout_action)

const char* to_string(timeout_action a) { return name_in_table(a); }

}  // namespace redist
