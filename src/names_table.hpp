// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The machinery behind redist/names.hpp: a table per option enum and the four functions over it, instantiated
// for an enum with REDIST_NAMED_ENUM where its table is defined (src/<area>/names.cpp for the library's options, the
// redist_tools library for the options of the tools' workloads). Internal: never installed.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "redist/error.hpp"
#include "redist/names.hpp"

namespace redist {
namespace names_detail {

template <class E>
struct spelling {
  E value;
  const char* name;
};

// Per enum: `option` (what it chooses) and `current` (one spelling per value, in enumerator order).
template <class E>
struct table;

template <class E>
const char* name_in_table(E value) {
  for (const auto& s : table<E>::current)
    if (s.value == value) return s.name;
  return "?";
}

}  // namespace names_detail

template <class E>
E parse_name(std::string_view text) {
  for (const auto& s : names_detail::table<E>::current)
    if (text == s.name) return s.value;
  throw invalid_argument(std::string("unknown ") + names_detail::table<E>::option + " '" + std::string(text) +
                         "': expected " + spelled_choices<E>("'"));
}

template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> names;
  for (const auto& s : names_detail::table<E>::current) names.emplace_back(s.name);
  return names;
}

template <class E>
const char* option_of() {
  return names_detail::table<E>::option;
}

template <class E>
std::string spelled_choices(const char* quote) {
  std::string text;
  const auto& current = names_detail::table<E>::current;
  for (size_t i = 0; i < current.size(); ++i) {
    if (i > 0) text += i + 1 < current.size() ? ", " : " or ";
    text += std::string(quote) + current[i].name + quote;
  }
  return text;
}

#define REDIST_NAMED_ENUM(E)                       \
  template E parse_name<E>(std::string_view);      \
  template std::vector<std::string> names_of<E>(); \
  template const char* option_of<E>();             \
  template std::string spelled_choices<E>(const char*);

}  // namespace redist
