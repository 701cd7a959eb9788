// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The recording side of redist/trace.hpp (internal). An entry point opens a call_scope; everything below it that
// learns what the call did (the plan cache, a plan's execution) notes it on the thread's innermost scope. With
// tracing off a scope is one load and one branch: no clock, no allocation.
#include <chrono>
#include <cstdint>
#include <string>

#include "mpi/watchdog.hpp"
#include "redist/trace.hpp"

namespace redist::trace_detail {

// The mode as a plain word, read on every call.
extern trace::trace_mode current_mode;
inline bool on() { return current_mode != trace::trace_mode::off; }
inline bool writing_calls() { return current_mode == trace::trace_mode::calls; }

using clock = std::chrono::steady_clock;
inline double seconds_since(clock::time_point start) {
  return std::chrono::duration<double>(clock::now() - start).count();
}

// One JSON object's fields, built only when calls are written.
class json_fields {
 public:
  void number(const char* name, std::int64_t value);
  void number(const char* name, double value);
  void text(const char* name, const std::string& value);
  void integers(const char* name, const int* values, int count);  // null values: JSON null
  void integers(const char* name, const std::int64_t* values, int count);
  void reals(const char* name, const double* values, int count);
  const std::string& str() const { return text_; }

 private:
  void key(const char* name);
  std::string text_;
};

class call_scope {
 public:
  // Opens a traced call of `entry_point` (a string literal) when tracing is on; otherwise does nothing.
  // Also names the call for the watchdog of redist's waits (src/mpi/watchdog.hpp), tracing on or off.
  explicit call_scope(const char* entry_point) noexcept : wait_label_(entry_point, nullptr) {
    if (on()) open(entry_point);
  }
  ~call_scope() {
    if (linked_) close();
  }
  call_scope(const call_scope&) = delete;
  call_scope& operator=(const call_scope&) = delete;

  // What the call was given, said by the watchdog where it waits long (mpi::wait_label::describe).
  void describe(mpi::wait_label::describe_fn describe, const void* arguments) noexcept {
    wait_label_.describe(describe, arguments);
  }
  bool active() const { return active_; }
  // The call's arguments for its JSON line (null when calls are not written).
  json_fields* arguments() { return active_ && writing_calls() ? &arguments_ : nullptr; }
  // How the call ended: "redist" with a strategy, "delegated", "local"; a scope closed without one was "rejected".
  void path(const char* path, const char* strategy = nullptr);
  // Not this process's call after all (it holds no part of the grid): nothing recorded.
  void dismiss() { active_ = false; }
  void plan_cache(bool hit, double seconds);
  void execution(double seconds, std::int64_t bytes_sent, std::int64_t messages_sent);

 private:
  void open(const char* entry_point) noexcept;
  void close() noexcept;

  mpi::wait_label wait_label_;
  bool active_ = false;
  bool linked_ = false;  // on the thread's list of open scopes (active_, or dismissed since)
  const char* entry_point_ = nullptr;
  const char* path_ = "rejected";
  const char* strategy_ = nullptr;
  call_scope* outer_ = nullptr;
  clock::time_point start_;
  bool looked_up_ = false, hit_ = false;
  double plan_seconds_ = 0, execution_seconds_ = 0;
  std::int64_t bytes_ = 0, messages_ = 0;
  json_fields arguments_;
};

// The innermost open scope of this thread (null: none, or tracing off).
call_scope* current();

// Times a C++ plan's making or execution (make_transform_plan, execute; `kind` "transform_plan" or "gemm_plan").
// Only the outermost on the thread counts (a gemm plan's own transforms are part of it): inside an entry point's
// scope its execution is that call's; outside, it is a row of its own.
class plan_event {
 public:
  plan_event() noexcept;
  ~plan_event();
  plan_event(const plan_event&) = delete;
  plan_event& operator=(const plan_event&) = delete;
  bool active() const { return active_ && outermost_; }
  void made(const char* kind, const char* strategy);
  void executed(const char* kind, const char* strategy, std::int64_t bytes_sent, std::int64_t messages_sent);
  // An execution that began before this event did (a neighborhood exchange's start to its wait): its seconds.
  void executed(const char* kind, const char* strategy, std::int64_t bytes_sent, std::int64_t messages_sent,
                double seconds);

 private:
  bool active_ = false, outermost_ = false;
  clock::time_point start_;
};

// The plan `make()` returns, its making counted by the trace as a plan of `kind` with the strategy
// `strategy_of(plan)` names (every plan kind's make functions, C API's included, go through here).
template <class Make, class StrategyOf>
auto traced_making(const char* kind, Make&& make, StrategyOf&& strategy_of) {
  const mpi::wait_label label(kind, "making the plan");
  plan_event traced;
  auto plan = make();
  if (traced.active()) traced.made(kind, strategy_of(plan));
  return plan;
}

// The summary on MPI_COMM_WORLD's rank 0 and the calls file flushed, once per process (MPI_Finalize's wrappers).
void at_finalize() noexcept;

}  // namespace redist::trace_detail
