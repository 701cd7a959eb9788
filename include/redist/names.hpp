// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One spelling per value of every option enum, both ways. C++, the C info keys, the Python bindings, the
// command-line tools and the docs all read these tables (src/<area>/names.cpp), so a name means the same through
// every door. The spellings: `auto` for every automatic choice, otherwise the enumerator's own name.
#include <string>
#include <string_view>
#include <vector>

namespace redist {

/// The value `text` names. Unknown text throws invalid_argument naming the option and every spelling it takes.
/// E: op, element_type, region_shape, exchange_strategy, trace::trace_mode, timeout_action, store_policy,
/// gemm_communication, gemm_native_order, gemm_dimension, exchange::neighbor_strategy, exchange::inplace_algorithm,
/// relabel::solver, torus::hardware_routing, torus::routing_mode, torus::phase_schedule, torus::intermediate_choice,
/// torus::traffic_pattern, torus::mapping_kind (each area header declares its to_string, which returns "?" for a value
/// outside E).
template <class E>
E parse_name(std::string_view text);

/// The spellings of E's values, in the order of its enumerators.
template <class E>
std::vector<std::string> names_of();

/// What E chooses, for messages ("exchange strategy").
template <class E>
const char* option_of();

/// "a, b or c": the spellings of E as messages and usage texts list them; `quote` wraps each in it.
template <class E>
std::string spelled_choices(const char* quote = "");

}  // namespace redist
