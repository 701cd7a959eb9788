// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the torus options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/torus/routing.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<torus::hardware_routing> {
  using E = torus::hardware_routing;
  static constexpr const char* option = "hardware routing";
  static constexpr std::array<spelling<E>, 4> current{{{E::dimension_order, "dimension_order"},
                                                       {E::uniform_shortest, "uniform_shortest"},
                                                       {E::random_direction, "random_direction"},
                                                       {E::simgrid_torus, "simgrid_torus"}}};
};

template <>
struct table<torus::phase_schedule> {
  using E = torus::phase_schedule;
  static constexpr const char* option = "torus phase schedule";
  static constexpr std::array<spelling<E>, 2> current{{{E::sequential, "sequential"}, {E::concurrent, "concurrent"}}};
};

template <>
struct table<torus::routing_mode> {
  using E = torus::routing_mode;
  static constexpr const char* option = "torus routing mode";
  static constexpr std::array<spelling<E>, 3> current{{{E::direct, "direct"}, {E::sdr, "sdr"}, {E::automatic, "auto"}}};
};

template <>
struct table<torus::intermediate_choice> {
  using E = torus::intermediate_choice;
  static constexpr const char* option = "torus intermediate choice";
  static constexpr std::array<spelling<E>, 3> current{
      {{E::automatic, "auto"}, {E::shortest, "shortest"}, {E::all_but_longest, "all_but_longest"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(torus::hardware_routing)
REDIST_NAMED_ENUM(torus::phase_schedule)
REDIST_NAMED_ENUM(torus::routing_mode)
REDIST_NAMED_ENUM(torus::intermediate_choice)

namespace torus {
const char* to_string(hardware_routing r) { return name_in_table(r); }
const char* to_string(phase_schedule s) { return name_in_table(s); }
const char* to_string(routing_mode m) { return name_in_table(m); }
const char* to_string(intermediate_choice c) { return name_in_table(c); }
}  // namespace torus

}  // namespace redist
