// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Hostile-argument suites (tests/mpi/test_hostile_*.cpp): one argument of one collective entry point made
// invalid, on every rank and on one rank only. Each time every rank must report the same outcome (C++: the
// same redist::error subclass and message; C and the drop-in: the same code or INFO), within a bounded time
// (an alarm ends a hung program), with every output and the guard zones around it untouched; afterwards the
// valid call must succeed and write nothing outside its outputs. Which rank is the "one rank" comes from
// REDIST_TEST_SEED (it varies from run to run and is printed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/error.hpp"
#include "test_seed.hpp"

namespace redist::testing {

// An output buffer with a guard zone on each side. Everything (guards and interior) starts with a known
// byte pattern; untouched() says no byte changed, guards_intact() that nothing was written outside.
class guarded_buffer {
 public:
  static constexpr std::size_t guard_words = 16;  // 128 bytes each side
  explicit guarded_buffer(std::size_t bytes) : interior_words_((bytes + 7) / 8) { reset(); }
  void reset() {
    words_.assign(interior_words_ + 2 * guard_words, 0);
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] = pattern(i);
  }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(words_.data() + guard_words);
  }
  bool untouched() const {
    for (std::size_t i = 0; i < words_.size(); ++i)
      if (words_[i] != pattern(i)) return false;
    return true;
  }
  bool guards_intact() const {
    for (std::size_t i = 0; i < guard_words; ++i)
      if (words_[i] != pattern(i) || words_[words_.size() - 1 - i] != pattern(words_.size() - 1 - i)) return false;
    return true;
  }

 private:
  // Finite doubles (exponent 0x3ff..), so that an input read as numbers is harmless.
  static std::uint64_t pattern(std::size_t i) { return 0x3ff0000000000000ull | ((i * 0x9e3779b97f4a7c15ull) >> 12); }
  std::size_t interior_words_;
  std::vector<std::uint64_t> words_;
};

// What a C++ call did: "ok", or the redist::error subclass and its message.
template <class F>
std::string outcome_of(F&& call) {
  try {
    call();
    return "ok";
  } catch (const error& e) {
    return std::string(typeid(e).name()) + ": " + e.what();
  } catch (const std::exception& e) {
    return std::string("not a redist::error (") + typeid(e).name() + "): " + e.what();
  }
}

inline std::uint64_t text_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// True on every rank iff every rank holds the same text.
inline bool same_everywhere(const std::string& text) {
  const auto h = static_cast<std::int64_t>(text_hash(text) >> 1);
  return global_max(h) == -global_max(-h);
}

// every_rank_only: an argument no call can agree over when one rank alone passes it (another communicator, a
// bad handle in a local call), just as MPI cannot.
enum class invalid_on { every_rank_and_one_rank, one_rank_only, every_rank_only };

struct hostile_case {
  std::string argument;  // what is wrong, e.g. "sendcounts[0] < 0"
  // Runs the entry point, with this rank's argument invalid when `bad`; returns its outcome (outcome_of, or
  // "code N" / "info N" for C and Fortran entry points: anything but "ok" is an error).
  std::function<std::string(bool bad)> call;
  // one_rank_only: a value that is valid when every rank passes it (a block size, a strategy) but must be the
  // same everywhere.
  invalid_on where = invalid_on::every_rank_and_one_rank;
};

namespace hostile_detail {
inline std::string& current_case() {
  static std::string name = "none";
  return name;
}
inline void on_alarm(int) {
  const std::string text =
      "[rank " + std::to_string(world_rank()) + "] no answer within 60 s: " + current_case() + "\n";
  if (write(2, text.data(), text.size()) < 0) _exit(3);
  _exit(2);
}
}  // namespace hostile_detail

// Runs every case of one entry point in both modes (one-rank mode only with 2 or more ranks). `outputs` are
// reset before each call and must be untouched after an error; `valid` (outcome "ok" expected on every rank)
// runs after each case, and must keep the guards intact. Prints "[hostile] entry: N cases" on rank 0;
// returns the number of (case, mode) runs.
inline int run_hostile(const std::string& entry, const std::vector<guarded_buffer*>& outputs,
                       const std::vector<hostile_case>& cases, const std::function<std::string()>& valid) {
  const int me = world_rank(), p = world_size();
  const int victim = static_cast<int>(test_seed(text_hash(entry)) % static_cast<std::uint64_t>(p));
  std::signal(SIGALRM, hostile_detail::on_alarm);
  const auto reset = [&] {
    for (guarded_buffer* b : outputs) b->reset();
  };
  int runs = 0, every = 0, one = 0;
  for (const hostile_case& c : cases)
    for (const bool everywhere : {true, false}) {
      if (everywhere && c.where == invalid_on::one_rank_only) continue;
      if (!everywhere && (p == 1 || c.where == invalid_on::every_rank_only)) continue;
      const std::string where = everywhere ? "on every rank" : "on rank " + std::to_string(victim) + " only";
      hostile_detail::current_case() = entry + ", " + c.argument + " " + where;
      reset();
      alarm(60);
      const std::string outcome = c.call(everywhere || me == victim);
      alarm(0);
      const std::string& name = hostile_detail::current_case();
      EXPECT_TRUE(all_ranks(outcome != "ok")) << name << ": rank " << me << " succeeded";
      EXPECT_TRUE(same_everywhere(outcome)) << name << ": outcomes differ; rank " << me << ": " << outcome;
      EXPECT_EQ(outcome.rfind("not a redist::error", 0), std::string::npos) << name << ": " << outcome;
      bool untouched = true;
      for (const guarded_buffer* b : outputs) untouched = untouched && b->untouched();
      EXPECT_TRUE(all_ranks(untouched)) << name << ": an output or its guard zone was written";
      reset();
      alarm(60);
      const std::string next = valid();
      alarm(0);
      EXPECT_TRUE(all_ranks(next == "ok")) << name << ": the next valid call failed on rank " << me << ": " << next;
      bool guards = true;
      for (const guarded_buffer* b : outputs) guards = guards && b->guards_intact();
      EXPECT_TRUE(all_ranks(guards)) << name << ": the valid call wrote outside its output";
      ++runs;
      (everywhere ? every : one)++;
      if (::testing::Test::HasFailure()) return runs;
    }
  if (me == 0) {
    std::printf("[hostile] %s: %zu arguments, %d cases (%d invalid on every rank, %d on rank %d only)\n", entry.c_str(),
                cases.size(), runs, every, one, victim);
    std::fflush(stdout);
  }
  return runs;
}

// The C entry points' outcome: "ok" or the code's MPI error class.
inline std::string code_outcome(int code) {
  if (code == 0) return "ok";
  int error_class = code;
  MPI_Error_class(code, &error_class);
  return "error class " + std::to_string(error_class);
}

}  // namespace redist::testing
