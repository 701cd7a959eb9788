// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One spelling per value of every option enum, both ways. C++, the C info keys, the Python bindings, the
// command-line tools and the docs all read these tables (src/<area>/names.cpp), so a name means the same through
// every door. The spellings: `auto` for every automatic choice, otherwise the enumerator's own name.
#include <string>
#include <string_view>
#include <vector>

namespace redist {

/// The value `text` names (exact, case-sensitive spelling).
/// E: op, element_type, region_shape, exchange_strategy, trace::trace_mode, timeout_action, store_policy,
/// gemm_communication, gemm_native_order, gemm_dimension, exchange::neighbor_strategy, exchange::inplace_algorithm,
/// relabel::solver, torus::hardware_routing, torus::routing_mode, torus::phase_schedule, torus::intermediate_choice
/// (each area header declares its to_string, which returns "?" for a value outside E); torus::traffic_pattern and
/// torus::mapping_kind are the redist_tools library's (redist_tools/torus_study.hpp). Another E does not link; the
/// same holds for the three functions below.
/// @throws invalid_argument unknown text (the message names the option and every spelling it takes)
template <class E>
E parse_name(std::string_view text);

/// The spellings of E's values, in the order of its enumerators. Throws nothing.
template <class E>
std::vector<std::string> names_of();

/// What E chooses, for messages ("exchange strategy"). Throws nothing.
template <class E>
const char* option_of();

/// "a, b or c": the spellings of E as messages and usage texts list them; `quote` wraps each in it. Throws nothing.
/// @pre quote is a null-terminated string (not null)
template <class E>
std::string spelled_choices(const char* quote = "");

}  // namespace redist
