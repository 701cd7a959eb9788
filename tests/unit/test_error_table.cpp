// SPDX-License-Identifier: BSD-3-Clause
// The error table (src/mpi/error_table.hpp) is the one list of error kinds: every redist::error class of
// include/redist/error.hpp is a row; each row's class goes through the agreement's failure record and comes back
// as itself, gives its C code, and derives from the class of its Python base; docs/errors.md's table of error
// classes lists each class with its Python exception and C code.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capi/error_code.hpp"
#include "mpi/agreement.hpp"
#include "redist/error.hpp"

namespace {

using namespace redist;

struct row {
  std::string kind, cpp_class, mpi_class_name;
  int mpi_class;
  std::string python_name, python_base;
  mpi::error_kind value;
  std::function<void(const std::string&)> throw_one;  // throws the row's class
  std::function<bool(const error&)> is;               // whether an error is of the row's class
};

std::vector<row> table() {
  std::vector<row> rows;
#define REDIST_ERROR_ROW(name, cls, mpi_class, python_name, python_base, builtin_base)                     \
  rows.push_back(row{#name, #cls, #mpi_class, mpi_class, python_name, #python_base, mpi::error_kind::name, \
                     [](const std::string& m) { throw cls(m); },                                           \
                     [](const error& e) { return dynamic_cast<const cls*>(&e) != nullptr; }});
  REDIST_ERROR_TABLE(REDIST_ERROR_ROW)
#undef REDIST_ERROR_ROW
  return rows;
}

const row* find_kind(const std::vector<row>& rows, const std::string& kind) {
  for (const row& r : rows)
    if (r.kind == kind) return &r;
  return nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ErrorTable, EveryErrorClassOfThePublicHeaderIsARow) {
  const std::string header = read_file(REDIST_INCLUDE_DIR "/redist/error.hpp");
  ASSERT_FALSE(header.empty()) << REDIST_INCLUDE_DIR "/redist/error.hpp";
  const std::regex declaration("class ([a-z_]+) : public ([a-z_:]+)");
  std::set<std::string> classes;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), declaration); it != std::sregex_iterator(); ++it)
    classes.insert((*it)[1]);
  classes.erase("error");      // the base: the `internal` kind
  classes.erase("mpi_error");  // the `mpi` kind, with the failed call's own code
  ASSERT_GE(classes.size(), 10u);
  std::set<std::string> listed;
  for (const row& r : table()) listed.insert(r.cpp_class);
  EXPECT_EQ(classes, listed);
}

TEST(ErrorTable, EachClassTravelsAsItselfAndGivesItsCode) {
  const std::vector<row> rows = table();
  for (const row& r : rows) {
    mpi::failure f;
    int code = 0;
    try {
      r.throw_one("what was wrong");
    } catch (...) {
      f = mpi::current_failure();
      code = capi::current_error_code();
    }
    EXPECT_EQ(f.kind, r.value) << r.cpp_class;
    EXPECT_EQ(f.message, "what was wrong") << r.cpp_class;
    EXPECT_EQ(code, r.mpi_class) << r.cpp_class << ": expected " << r.mpi_class_name;
    try {
      mpi::raise(f);
    } catch (const error& e) {
      EXPECT_TRUE(r.is(e)) << r.cpp_class << " came back as another class";
      EXPECT_EQ(mpi::current_failure().kind, r.value) << r.cpp_class << " came back as another kind";
    }
  }
}

TEST(ErrorTable, PythonBasesAreTheClassesBases) {
  const std::vector<row> rows = table();
  for (size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    if (r.python_base == "none") continue;
    const row* base = find_kind(rows, r.python_base);
    ASSERT_NE(base, nullptr) << r.kind << ": Python base " << r.python_base << " is not a kind";
    EXPECT_LT(base - rows.data(), static_cast<std::ptrdiff_t>(i)) << r.kind << ": its base must come first";
    try {
      r.throw_one("");
    } catch (const error& e) {
      EXPECT_TRUE(base->is(e)) << r.cpp_class << " does not derive from " << base->cpp_class;
    }
  }
}

TEST(ErrorTable, TheDocsListEachClassWithItsPythonExceptionAndCode) {
  std::ifstream docs(REDIST_DOCS_DIR "/errors.md");
  ASSERT_TRUE(docs) << REDIST_DOCS_DIR "/errors.md";
  std::vector<std::string> table_lines;
  std::string line;
  bool in_table = false;
  while (std::getline(docs, line)) {
    if (line.rfind("## Error classes", 0) == 0)
      in_table = true;
    else if (in_table && line.rfind("## ", 0) == 0)
      break;
    else if (in_table && line.rfind("| `", 0) == 0)
      table_lines.push_back(line);
  }
  ASSERT_FALSE(table_lines.empty()) << "docs/errors.md has no table under '## Error classes'";
  for (const row& r : table()) {
    bool found = false;
    for (const std::string& l : table_lines) {
      // | C++ | Python | C |
      const size_t first = l.find('|', 1), second = l.find('|', first + 1);
      if (first == std::string::npos || second == std::string::npos) continue;
      // The classes a row is about, without "(an `base`)" remarks.
      const std::regex remark(" ?\\([^)]*\\)");
      const std::string cpp = std::regex_replace(l.substr(1, first - 1), remark, ""),
                        python = l.substr(first + 1, second - first - 1), c = l.substr(second + 1);
      if (cpp.find("`" + r.cpp_class + "`") == std::string::npos) continue;
      found = true;
      EXPECT_NE(python.find("`" + r.python_name + "`"), std::string::npos) << l;
      EXPECT_NE(c.find("`" + r.mpi_class_name + "`"), std::string::npos) << l;
    }
    EXPECT_TRUE(found) << "docs/errors.md lists no `" << r.cpp_class << "`";
  }
}

}  // namespace
