// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the transform options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/transform/plan.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<region_shape> {
  static constexpr const char* option = "region shape";
  static constexpr std::array<spelling<region_shape>, 3> current{
      {{region_shape::all, "all"}, {region_shape::upper, "upper"}, {region_shape::lower, "lower"}}};
};

template <>
struct table<exchange_strategy> {
  static constexpr const char* option = "exchange strategy";
  static constexpr std::array<spelling<exchange_strategy>, 5> current{
      {{exchange_strategy::automatic, "auto"},
       {exchange_strategy::point_to_point, "point_to_point"},
       {exchange_strategy::alltoallv, "alltoallv"},
       {exchange_strategy::shared_memory, "shared_memory"},
       {exchange_strategy::torus_routed, "torus_routed"}}};
};

template <>
struct table<store_policy> {
  static constexpr const char* option = "store policy";
  static constexpr std::array<spelling<store_policy>, 3> current{
      {{store_policy::automatic, "auto"}, {store_policy::cached, "cached"}, {store_policy::streaming, "streaming"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(region_shape)
REDIST_NAMED_ENUM(exchange_strategy)
REDIST_NAMED_ENUM(store_policy)

const char* to_string(region_shape s) { return name_in_table(s); }
const char* to_string(exchange_strategy s) { return name_in_table(s); }
const char* to_string(store_policy s) { return name_in_table(s); }

}  // namespace redist
