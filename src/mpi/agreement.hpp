// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The one agreement every collective entry point runs before it writes anything: each rank contributes its
// local outcome (fine, or a failure: what kind, the MPI code where there is one, a message), optionally a hash
// of the arguments that must be identical on every rank, and small values to reduce; one allreduce decides,
// and on any failure every rank throws the same exception (kind and message of the lowest failing rank).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "error_table.hpp"
#include "fault_injection.hpp"
#include "redist/error.hpp"

namespace redist::mpi {

// One kind per redist::error class (error_table.hpp lists them with their C codes and Python exceptions).
enum class error_kind : int {
  none = 0,
  mpi,       // an MPI call failed: `mpi_code` holds its code
  internal,  // anything else a rank threw (a bug, or an exception from user code)
#define REDIST_ERROR_KIND(name, ...) name,
  REDIST_ERROR_TABLE(REDIST_ERROR_KIND)
#undef REDIST_ERROR_KIND
};

// What one rank found.
struct failure {
  error_kind kind = error_kind::none;
  int mpi_code = 0;  // for error_kind::mpi
  std::string message;
  // Raised on every rank by an agreement (its message names the rank that failed first): an outer agreement that
  // records it raises it as it is.
  bool agreed = false;
  bool failed() const noexcept { return kind != error_kind::none; }
};

// The failure the exception in flight describes; call only inside a catch block.
failure current_failure() noexcept;
// Throws the redist::error subclass of f.kind (mpi_error with f.mpi_code) carrying f.message (and f.agreed, which
// current_failure reads back).
[[noreturn]] void raise(const failure& f);

class agreement {
 public:
  explicit agreement(MPI_Comm comm) : comm_(comm) { fault::open_window(); }
  agreement(const agreement&) = delete;
  agreement& operator=(const agreement&) = delete;
  ~agreement() {
    if (!concluded_) fault::close_window();
  }

  // This rank's failure; the first one recorded is kept (later ones are usually consequences of it).
  void fail(error_kind kind, std::string message);
  void fail(failure f);
  bool failed() const noexcept { return local_.failed(); }
  // Runs a local step (a check, or acquiring a resource that can fail) unless this rank has already failed;
  // whatever it throws becomes this rank's failure instead of leaving the other ranks in a collective.
  template <class Step>
  void attempt(Step&& step) {
    if (failed()) return;
    if (fault::hit()) return fail(error_kind::insufficient_memory, "injected failure of a step");
    try {
      std::forward<Step>(step)();
    } catch (...) {
      fail(current_failure());
    }
  }

  // Runs `undo` on every rank when the agreement fails, before the error is raised: for a collective step whose
  // result is cached on a communicator, which the ranks whose step succeeded would otherwise keep while the
  // others make it again on their next call (a collective only some ranks enter).
  void on_failure(std::function<void()> undo) { undos_.push_back(std::move(undo)); }

  // A collective step every rank must make even after a local failure (creating a communicator, a window):
  // it always runs; what it throws becomes this rank's failure unless one is already recorded.
  template <class Step>
  void collective(Step&& step) {
    try {
      std::forward<Step>(step)();
    } catch (...) {
      fail(current_failure());
    }
    if (fault::hit()) fail(error_kind::insufficient_memory, "injected failure of a collective step");
  }

  // Arguments that must be the same on every rank, as a hash; when they differ (and no rank failed), every
  // rank throws inconsistent_ranks with `message`.
  void require_same(std::uint64_t hash, std::string message);
  // Values reduced in the same allreduce; read with min()/max() after conclude(). Returns the slot.
  std::size_t reduce_min(std::int64_t value);
  std::size_t reduce_max(std::int64_t value);

  // Collective over the communicator: one allreduce (plus two broadcasts when some rank failed). Throws the
  // lowest failing rank's error on every rank, prefixed with "rank r: " unless an inner agreement raised it.
  void conclude();
  std::int64_t min(std::size_t slot) const { return words_.at(slot); }
  std::int64_t max(std::size_t slot) const { return -words_.at(slot); }

 private:
  MPI_Comm comm_;
  bool concluded_ = false;
  failure local_;
  bool check_hash_ = false;
  std::uint64_t hash_ = 0;
  std::string hash_message_;
  std::vector<std::int64_t> words_;  // riders, as minima (maxima negated)
  std::vector<std::function<void()>> undos_;
  void undo() noexcept;
};

// Shorthand for a check whose outcome is already known: this rank failed with `kind` when `problem` is not
// empty.
void agree_on(MPI_Comm comm, error_kind kind, const std::string& problem);

}  // namespace redist::mpi
