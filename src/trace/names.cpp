// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the trace options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/trace.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<trace::trace_mode> {
  static constexpr const char* option = "trace mode";
  static constexpr std::array<spelling<trace::trace_mode>, 3> current{
      {{trace::trace_mode::off, "off"}, {trace::trace_mode::summary, "summary"}, {trace::trace_mode::calls, "calls"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(trace::trace_mode)

namespace trace {
const char* to_string(trace_mode m) { return name_in_table(m); }
}  // namespace trace

}  // namespace redist
