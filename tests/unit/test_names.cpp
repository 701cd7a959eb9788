// The one name table per option enum (redist/names.hpp): every spelling parses back to its value, every
// automatic choice is spelled auto, old spellings still parse with a message naming the replacement, unknown
// text is refused with every accepted spelling in the message.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
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
                     gemm_communication,
                     gemm_native_order, gemm_dimension, exchange::neighbor_strategy, exchange::inplace_algorithm,
                     relabel::solver, torus::hardware_routing, torus::routing_mode, torus::phase_schedule,
                     torus::intermediate_choice,
                     torus::traffic_pattern, torus::mapping_kind>;
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
    std::string deprecation;
    const E value = parse_name<E>(names[i], &deprecation);
    EXPECT_EQ(name(value), names[i]);
    EXPECT_TRUE(deprecation.empty()) << deprecation;
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

TEST(Names, OldSpellingsParseWithTheirReplacement) {
  struct old_case {
    std::string text, replacement;
    std::function<std::string(std::string*)> parse;  // the parsed value's current name
  };
  const auto of = [](auto value) { return name(value); };
  const std::vector<old_case> cases = {
      {"automatic", "auto", [&](std::string* d) { return of(parse_name<exchange_strategy>("automatic", d)); }},
      {"automatic", "auto", [&](std::string* d) { return of(parse_name<store_policy>("automatic", d)); }},
      {"automatic", "auto", [&](std::string* d) { return of(parse_name<gemm_native_order>("automatic", d)); }},
      {"automatic", "auto",
       [&](std::string* d) { return of(parse_name<exchange::neighbor_strategy>("automatic", d)); }},
      {"automatic", "auto",
       [&](std::string* d) { return of(parse_name<exchange::inplace_algorithm>("automatic", d)); }},
      {"automatic", "auto", [&](std::string* d) { return of(parse_name<torus::routing_mode>("automatic", d)); }},
      {"all-but-longest", "all_but_longest",
       [&](std::string* d) { return of(parse_name<torus::intermediate_choice>("all-but-longest", d)); }},
      {"uniform", "uniform_shortest",
       [&](std::string* d) { return of(parse_name<torus::hardware_routing>("uniform", d)); }},
      {"dimension-order", "dimension_order",
       [&](std::string* d) { return of(parse_name<torus::hardware_routing>("dimension-order", d)); }},
      {"default", "default_order", [&](std::string* d) { return of(parse_name<torus::mapping_kind>("default", d)); }},
  };
  for (const old_case& c : cases) {
    std::string deprecation;
    EXPECT_EQ(c.parse(&deprecation), c.replacement) << c.text;
    EXPECT_NE(deprecation.find("'" + c.text + "'"), std::string::npos) << deprecation;
    EXPECT_NE(deprecation.find("write '" + c.replacement + "'"), std::string::npos) << deprecation;
  }
}

TEST(Names, WithoutACallerTheOldSpellingIsPrintedOncePerProcess) {
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(parse_name<exchange::inplace_algorithm>("automatic"), exchange::inplace_algorithm::automatic);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  const std::string line = "old spelling of 'auto'";
  const size_t first = printed.find(line);
  ASSERT_NE(first, std::string::npos) << printed;
  EXPECT_EQ(printed.find(line, first + 1), std::string::npos) << "printed more than once:\n" << printed;
  EXPECT_EQ(printed.rfind("redist: ", 0), 0u) << printed;
}

TEST(Names, ChoicesReadAsAList) {
  EXPECT_EQ(spelled_choices<gemm_communication>(), "auto, two_sided, one_sided or shared_memory");
  EXPECT_EQ(spelled_choices<exchange::neighbor_strategy>("'"), "'auto', 'standard', 'aggregate' or 'dedup'");
}

}  // namespace
