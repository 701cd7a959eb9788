// SPDX-License-Identifier: BSD-3-Clause
// The one name table per option enum (redist/names.hpp): every spelling parses back to its value, every
// automatic choice is spelled auto, unknown text (the 0.1 development line's spellings among it) is refused with
// every accepted spelling in the message.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "redist/redist.hpp"
#include "redist_tools/torus_study.hpp"

namespace {

using namespace redist;

template <class E>
class NamedEnum : public ::testing::Test {};

using named_enums =
    ::testing::Types<op, element_type, region_shape, exchange_strategy, trace::trace_mode, timeout_action, store_policy,
                     gemm_communication, gemm_native_order, gemm_dimension, exchange::neighbor_strategy,
                     exchange::inplace_algorithm, relabel::solver, torus::hardware_routing, torus::routing_mode,
                     torus::phase_schedule, torus::intermediate_choice, torus::traffic_pattern, torus::mapping_kind>;
TYPED_TEST_SUITE(NamedEnum, named_enums);

// to_string lives in each enum's namespace (found by argument-dependent lookup).
template <class E>
std::string name(E value) {
  return to_string(value);
}

TYPED_TEST(NamedEnum, EverySpellingNamesOneValueAndComesBack) {
  using E = TypeParam;
  const std::vector<std::string> names = names_of<E>();
  ASSERT_FALSE(names.empty());
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(seen.insert(names[i]).second) << option_of<E>() << ": '" << names[i] << "' twice";
    const E value = parse_name<E>(names[i]);
    EXPECT_EQ(name(value), names[i]);
    // The table lists the enumerators in order (the tools print options in that order).
    EXPECT_EQ(static_cast<size_t>(value), i) << option_of<E>() << " '" << names[i] << "'";
  }
  EXPECT_EQ(name(static_cast<E>(200)), "?");
}

TYPED_TEST(NamedEnum, UnknownTextIsRefusedWithTheSpellings) {
  using E = TypeParam;
  for (const char* text : {"", "Auto", "no_such_value", " auto"}) {
    try {
      parse_name<E>(text);
      ADD_FAILURE() << option_of<E>() << " accepted '" << text << "'";
    } catch (const invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(option_of<E>()), std::string::npos) << message;
      EXPECT_NE(message.find(std::string("'") + text + "'"), std::string::npos) << message;
      for (const std::string& n : names_of<E>()) EXPECT_NE(message.find("'" + n + "'"), std::string::npos) << message;
    }
  }
}

// docs/names.md lists every option with all its spellings on the option's row.
TYPED_TEST(NamedEnum, TheDocsListEverySpelling) {
  using E = TypeParam;
  std::ifstream docs(REDIST_DOCS_DIR "/names.md");
  ASSERT_TRUE(docs) << REDIST_DOCS_DIR "/names.md";
  const std::string row_start = std::string("| ") + option_of<E>() + " (";
  std::string line, row;
  while (std::getline(docs, line))
    if (line.rfind(row_start, 0) == 0) row = line;
  ASSERT_FALSE(row.empty()) << "docs/names.md has no row for the " << option_of<E>();
  std::string listed;
  for (const std::string& n : names_of<E>()) listed += (listed.empty() ? "`" : ", `") + n + "`";
  EXPECT_NE(row.find(listed), std::string::npos) << "expected " << listed << " in\n" << row;
}

TEST(Names, EveryAutomaticChoiceIsSpelledAuto) {
  EXPECT_STREQ(to_string(exchange_strategy::automatic), "auto");
  EXPECT_STREQ(to_string(store_policy::automatic), "auto");
  EXPECT_STREQ(to_string(gemm_native_order::automatic), "auto");
  EXPECT_STREQ(exchange::to_string(exchange::neighbor_strategy::automatic), "auto");
  EXPECT_STREQ(exchange::to_string(exchange::inplace_algorithm::automatic), "auto");
  EXPECT_STREQ(torus::to_string(torus::routing_mode::automatic), "auto");
  EXPECT_STREQ(torus::to_string(torus::intermediate_choice::automatic), "auto");
}

// The 0.1 development line's spellings (CHANGELOG.md) are unknown text now: refused, naming what to write.
template <class E>
void expect_refused_naming(const char* old, const char* replacement) {
  try {
    parse_name<E>(old);
    ADD_FAILURE() << option_of<E>() << " accepted the earlier spelling '" << old << "'";
  } catch (const invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(std::string("'") + old + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("'") + replacement + "'"), std::string::npos) << message;
  }
}

TEST(Names, EarlierSpellingsAreRefusedWithTheirReplacementListed) {
  expect_refused_naming<exchange_strategy>("automatic", "auto");
  expect_refused_naming<store_policy>("automatic", "auto");
  expect_refused_naming<gemm_native_order>("automatic", "auto");
  expect_refused_naming<exchange::neighbor_strategy>("automatic", "auto");
  expect_refused_naming<exchange::inplace_algorithm>("automatic", "auto");
  expect_refused_naming<torus::routing_mode>("automatic", "auto");
  expect_refused_naming<torus::intermediate_choice>("all-but-longest", "all_but_longest");
  expect_refused_naming<torus::hardware_routing>("uniform", "uniform_shortest");
  expect_refused_naming<torus::hardware_routing>("dimension-order", "dimension_order");
  expect_refused_naming<torus::mapping_kind>("default", "default_order");
}

TEST(Names, ChoicesReadAsAList) {
  EXPECT_EQ(spelled_choices<gemm_communication>(), "auto, two_sided, one_sided or shared_memory");
  EXPECT_EQ(spelled_choices<exchange::neighbor_strategy>("'"), "'auto', 'standard', 'aggregate' or 'dedup'");
}

}  // namespace
