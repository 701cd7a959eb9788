// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the relabel options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/relabel/relabel.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<relabel::solver> {
  using E = relabel::solver;
  static constexpr const char* option = "relabeling solver";
  static constexpr std::array<spelling<E>, 3> current{{{E::none, "none"}, {E::exact, "exact"}, {E::greedy, "greedy"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(relabel::solver)

namespace relabel {
const char* to_string(solver s) { return name_in_table(s); }
}  // namespace relabel

}  // namespace redist
