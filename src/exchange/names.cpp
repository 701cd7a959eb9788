// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the exchange options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/exchange/neighbor.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<exchange::neighbor_strategy> {
  using E = exchange::neighbor_strategy;
  static constexpr const char* option = "neighbor strategy";
  static constexpr std::array<spelling<E>, 4> current{
      {{E::automatic, "auto"}, {E::standard, "standard"}, {E::aggregate, "aggregate"}, {E::dedup, "dedup"}}};
};

template <>
struct table<exchange::inplace_algorithm> {
  using E = exchange::inplace_algorithm;
  static constexpr const char* option = "in-place algorithm";
  static constexpr std::array<spelling<E>, 4> current{
      {{E::automatic, "auto"}, {E::chunked, "chunked"}, {E::pairwise, "pairwise"}, {E::bitonic, "bitonic"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(exchange::neighbor_strategy)
REDIST_NAMED_ENUM(exchange::inplace_algorithm)

namespace exchange {
const char* to_string(neighbor_strategy s) noexcept { return name_in_table(s); }
const char* to_string(inplace_algorithm a) noexcept { return name_in_table(a); }
}  // namespace exchange

}  // namespace redist
