#pragma once
// One watchdog for redist's waits: a wait inside redist (an agreement, an exchange's completion) that lasts
// REDIST_TIMEOUT seconds (default 300; 0: never) is reported once on stderr, naming where it waits (entry point,
// phase, what the call was given, the communicator's size and this process's rank in it); with REDIST_TIMEOUT_ACTION=abort the job then
// ends (MPI_Abort on MPI_COMM_WORLD), with `warn` (the default) the wait goes on: a slow peer is no error.
// A process that does not enter a collective the others entered (a context of -1 on one rank, another
// communicator) otherwise leaves them waiting without a word. docs/errors.md.
//
// Cost when nothing waits long: a wait reads the clock only once it yields the core (completion polled first).
#include <mpi.h>

#include <cstddef>

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
  // innermost label that has one is used. `arguments` must outlive the label.
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

// One wait, watched: `poll()` after each unsuccessful completion test once the wait yields the core. `comm` is the
// collective's communicator, or MPI_COMM_NULL where the wait does not know it (requests of several peers).
class watched_wait {
 public:
  explicit watched_wait(MPI_Comm comm) noexcept : comm_(comm) {}
  void poll() noexcept {
    if (!reported_) check();
  }

 private:
  void check() noexcept;
  MPI_Comm comm_;
  double started_ = -1;  // the steady clock, in seconds, at the first poll (-1: none yet)
  bool reported_ = false;
};

}  // namespace redist::mpi
