// SPDX-License-Identifier: BSD-3-Clause
#include "redist/names.hpp"

#include "names_table.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/exchange/neighbor.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/gemm/schedule.hpp"
#include "redist/relabel/relabel.hpp"
#include "redist/timeout.hpp"
#include "redist/torus/routing.hpp"
#include "redist/trace.hpp"
#include "redist/transform/plan.hpp"
#include "redist/types.hpp"

namespace redist {
namespace names_detail {

template <>
struct table<op> {
  static constexpr const char* option = "op";
  static constexpr std::array<spelling<op>, 3> current{
      {{op::identity, "identity"}, {op::transpose, "transpose"}, {op::conj_transpose, "conj_transpose"}}};
};

template <>
struct table<element_type> {
  static constexpr const char* option = "element type";
  static constexpr std::array<spelling<element_type>, 6> current{{{element_type::f32, "float"},
                                                                  {element_type::f64, "double"},
                                                                  {element_type::c32, "complex<float>"},
                                                                  {element_type::c64, "complex<double>"},
                                                                  {element_type::i32, "int32"},
                                                                  {element_type::i64, "int64"}}};
};

template <>
struct table<region_shape> {
  static constexpr const char* option = "region shape";
  static constexpr std::array<spelling<region_shape>, 3> current{
      {{region_shape::all, "all"}, {region_shape::upper, "upper"}, {region_shape::lower, "lower"}}};
};

template <>
struct table<trace::trace_mode> {
  static constexpr const char* option = "trace mode";
  static constexpr std::array<spelling<trace::trace_mode>, 3> current{
      {{trace::trace_mode::off, "off"}, {trace::trace_mode::summary, "summary"}, {trace::trace_mode::calls, "calls"}}};
};

template <>
struct table<timeout_action> {
  static constexpr const char* option = "timeout action";
  static constexpr std::array<spelling<timeout_action>, 2> current{
      {{timeout_action::warn, "warn"}, {timeout_action::abort, "abort"}}};
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

template <>
struct table<gemm_communication> {
  static constexpr const char* option = "gemm communication";
  static constexpr std::array<spelling<gemm_communication>, 4> current{
      {{gemm_communication::automatic, "auto"},
       {gemm_communication::two_sided, "two_sided"},
       {gemm_communication::one_sided, "one_sided"},
       {gemm_communication::shared_memory, "shared_memory"}}};
};

template <>
struct table<gemm_native_order> {
  static constexpr const char* option = "gemm native order";
  static constexpr std::array<spelling<gemm_native_order>, 3> current{{{gemm_native_order::automatic, "auto"},
                                                                       {gemm_native_order::contiguous, "contiguous"},
                                                                       {gemm_native_order::grouped, "grouped"}}};
};

template <>
struct table<gemm_dimension> {
  static constexpr const char* option = "gemm dimension";
  static constexpr std::array<spelling<gemm_dimension>, 3> current{
      {{gemm_dimension::m, "m"}, {gemm_dimension::n, "n"}, {gemm_dimension::k, "k"}}};
};

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

template <>
struct table<relabel::solver> {
  using E = relabel::solver;
  static constexpr const char* option = "relabeling solver";
  static constexpr std::array<spelling<E>, 3> current{{{E::none, "none"}, {E::exact, "exact"}, {E::greedy, "greedy"}}};
};

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

REDIST_NAMED_ENUM(op)
REDIST_NAMED_ENUM(element_type)
REDIST_NAMED_ENUM(region_shape)
REDIST_NAMED_ENUM(exchange_strategy)
REDIST_NAMED_ENUM(trace::trace_mode)
REDIST_NAMED_ENUM(timeout_action)
REDIST_NAMED_ENUM(store_policy)
REDIST_NAMED_ENUM(gemm_communication)
REDIST_NAMED_ENUM(gemm_native_order)
REDIST_NAMED_ENUM(gemm_dimension)
REDIST_NAMED_ENUM(exchange::neighbor_strategy)
REDIST_NAMED_ENUM(exchange::inplace_algorithm)
REDIST_NAMED_ENUM(relabel::solver)
REDIST_NAMED_ENUM(torus::hardware_routing)
REDIST_NAMED_ENUM(torus::routing_mode)
REDIST_NAMED_ENUM(torus::phase_schedule)
REDIST_NAMED_ENUM(torus::intermediate_choice)

const char* to_string(op o) { return name_in_table(o); }
const char* to_string(element_type t) { return name_in_table(t); }
const char* to_string(region_shape s) { return name_in_table(s); }
const char* to_string(exchange_strategy s) { return name_in_table(s); }
const char* to_string(timeout_action a) { return name_in_table(a); }
const char* to_string(store_policy s) { return name_in_table(s); }
const char* to_string(gemm_communication c) { return name_in_table(c); }
const char* to_string(gemm_native_order o) { return name_in_table(o); }
const char* to_string(gemm_dimension d) { return name_in_table(d); }

namespace exchange {
const char* to_string(neighbor_strategy s) noexcept { return name_in_table(s); }
const char* to_string(inplace_algorithm a) noexcept { return name_in_table(a); }
}  // namespace exchange

namespace trace {
const char* to_string(trace_mode m) { return name_in_table(m); }
}  // namespace trace

namespace relabel {
const char* to_string(solver s) { return name_in_table(s); }
}  // namespace relabel

namespace torus {
const char* to_string(hardware_routing r) { return name_in_table(r); }
const char* to_string(routing_mode m) { return name_in_table(m); }
const char* to_string(phase_schedule s) { return name_in_table(s); }
const char* to_string(intermediate_choice c) { return name_in_table(c); }
}  // namespace torus

}  // namespace redist
