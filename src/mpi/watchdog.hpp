// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One watchdog for redist's waits: a wait inside redist (an agreement, an exchange's completion) that lasts
// REDIST_TIMEOUT seconds (default 300; 0: never) is reported once on stderr, naming where it waits (entry point,
// phase, what the call was given, the communicator's size and this process's rank in it); with REDIST_TIMEOUT_ACTION=abort the job then
// ends (MPI_Abort on MPI_COMM_WORLD), with `warn` (the default) the wait goes on: a slow peer is no error.
// A process that does not enter a collective the others entered (a context of -1 on one rank, another
// communicator) otherwise leaves them waiting without a word. docs/errors.md.
//
// On redist's private duplicates (mark_private: no message there is the application's), a collective's wait that
// reaches the limit holds a roll call: it asks every other process of the communicator, which answers from
// any wait of its own on that communicator, and after roll_call_seconds names those that did not answer (not
// waiting in redist on it: the call skipped, another call, or that much slower). On the caller's own
// communicators (the agreements of plan making and of the drop-in's calls) no message is sent: the application's
// receives could match it.
//
// Cost when nothing waits long: a wait reads the clock only once it yields the core (completion polled first); on
// a private duplicate, a wait longer than answer_interval_seconds also looks for questions (MPI_Iprobe) that often.
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace redist::mpi {

// What this thread is doing inside redist, named in the watchdog's message: an entry point sets it for its
// duration; nested labels (a phase of an entry point) name the outermost entry point and the innermost phase.
// A label may carry a plan's own timeout (its options' timeout_seconds: >= 0 replaces the process's for the
// waits inside it, the innermost such label winning; negative or NaN: none).
class wait_label {
 public:
  wait_label(const char* entry_point, const char* phase, double timeout_seconds = -1) noexcept;
  wait_label(const wait_label&) = delete;
  wait_label& operator=(const wait_label&) = delete;
  ~wait_label();

  // What the call was given, for the message: `describe` writes a summary of `arguments` into `out` (at most
  // `size` bytes, terminated). Called only when a wait is reported, so an entry point pays two stores for it; the
  // outermost label that has one is used (what the caller gave: a C or ScaLAPACK entry point's own arguments rather
  // than those of the plan it makes of them). `arguments` must outlive the label, or be withdrawn first
  // (describe(nullptr, nullptr)) where it is moved away.
  using describe_fn = void (*)(const void* arguments, char* out, std::size_t size) noexcept;
  void describe(describe_fn describe, const void* arguments) noexcept {
    describe_ = describe;
    arguments_ = arguments;
  }

 private:
  const char* entry_point_;
  const char* phase_;
  double timeout_seconds_;  // >= 0: this label's timeout; -1: none
  describe_fn describe_ = nullptr;
  const void* arguments_ = nullptr;
  wait_label* outer_;
  friend class watched_wait;
};

// The limits in force: REDIST_TIMEOUT / REDIST_TIMEOUT_ACTION as read at the first wait, or as set_timeout left
// them (include/redist/timeout.hpp).
double timeout_seconds() noexcept;
bool timeout_aborts() noexcept;

// Marks `comm` as one of redist's private duplicates (mpi::duplicate), where roll calls may be held. Local.
void mark_private(MPI_Comm comm) noexcept;

// How long a roll call waits for answers, and how often a wait on a private duplicate looks for questions.
constexpr double roll_call_seconds = 1.0;
constexpr double answer_interval_seconds = 0.1;

// One wait, watched: `poll()` after each unsuccessful completion test once the wait yields the core. `comm` is the
// communicator of the wait's requests, or MPI_COMM_NULL where the wait does not know it (requests of several
// peers); `collective`: the wait is a collective's on `comm`, which every process of comm must enter (a roll call
// is held only then).
class watched_wait {
 public:
  watched_wait(MPI_Comm comm, bool collective) noexcept : comm_(comm), collective_(collective) {}
  void poll() noexcept {
    if (!done_) check();
  }

 private:
  void check() noexcept;
  bool on_private_duplicate() noexcept;  // comm_ is one (looked up once)
  bool start_roll_call(double now) noexcept;
  void collect_answers() noexcept;
  void report(double now, bool roll_called) noexcept;
  MPI_Comm comm_;
  bool collective_;
  bool done_ = false;  // reported, and no questions to answer
  bool reported_ = false;
  int private_ = -1;        // whether comm_ is a private duplicate (-1: not asked yet)
  double started_ = -1;     // the steady clock, in seconds, at the first poll (-1: none yet)
  double next_answer_ = 0;  // when this wait next looks for questions (private duplicates)
  double limit_ = 0;        // the limit reached, and whether it was a plan's own
  bool plan_limit_ = false;
  double roll_call_ends_ = -1;  // this wait's roll call collects answers until then (-1: none)
  int roll_call_number_ = 0;    // its number on this process, which the answers carry back
  std::vector<char> answered_;  // per rank of comm_: answered (or is this process)
};

}  // namespace redist::mpi
