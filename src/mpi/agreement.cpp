// SPDX-License-Identifier: BSD-3-Clause
#include "agreement.hpp"

#include <limits>
#include <new>
#include <utility>

#include "checked.hpp"
#include "watchdog.hpp"

namespace redist::mpi {

namespace {
// The type of an error that an agreement raised on every rank: the error's own type and this marker, which
// current_failure recognises (a message can say anything).
struct agreed_marker {};
template <class Error>
class agreed_error : public Error, public agreed_marker {
 public:
  explicit agreed_error(Error e) : Error(std::move(e)) {}
};

template <class Error>
[[noreturn]] void throw_error(Error e, bool agreed) {
  if (agreed) throw agreed_error<Error>(std::move(e));
  throw e;
}
}  // namespace

failure current_failure() noexcept {
  bool agreed = false;
  try {
    throw;
  } catch (const agreed_marker&) {
    agreed = true;
  } catch (...) {
  }
  failure f;
  try {
    throw;
  } catch (const mpi_error& e) {
    f = {error_kind::mpi, e.code(), e.what()};
  } catch (const error& e) {
    // The most derived kind the error is: the table lists bases first. redist::error itself is internal.
    f = {error_kind::internal, 0, e.what()};
#define REDIST_ERROR_MATCH(name, cls, ...) \
  if (dynamic_cast<const cls*>(&e) != nullptr) f.kind = error_kind::name;
    REDIST_ERROR_TABLE(REDIST_ERROR_MATCH)
#undef REDIST_ERROR_MATCH
  } catch (const std::bad_alloc&) {
    f.kind = error_kind::insufficient_memory;
    f.message = "out of memory (an allocation failed)";
  } catch (const std::exception& e) {
    f = {error_kind::internal, 0, e.what()};
  } catch (...) {
    f = {error_kind::internal, 0, "an exception that is not a std::exception"};
  }
  f.agreed = agreed;
  return f;
}

void raise(const failure& f) {
  const bool a = f.agreed;
  switch (f.kind) {
#define REDIST_ERROR_RAISE(name, cls, ...) \
  case error_kind::name:                   \
    throw_error(cls(f.message), a);
    REDIST_ERROR_TABLE(REDIST_ERROR_RAISE)
#undef REDIST_ERROR_RAISE
    case error_kind::mpi:
      throw_error(mpi_error::described(f.mpi_code, f.message), a);
    case error_kind::internal:
    case error_kind::none:
      break;
  }
  throw_error(error(f.message), a);
}

void agreement::fail(error_kind kind, std::string message) { fail(failure{kind, 0, std::move(message)}); }

void agreement::fail(failure f) {
  if (!failed() && f.failed()) local_ = std::move(f);
}

void agreement::require_same(std::uint64_t hash, std::string message) {
  check_hash_ = true;
  hash_ = hash;
  hash_message_ = std::move(message);
}

std::size_t agreement::reduce_min(std::int64_t value) {
  words_.push_back(value);
  return words_.size() - 1;
}

std::size_t agreement::reduce_max(std::int64_t value) {
  words_.push_back(-value);  // callers pass values above INT64_MIN
  return words_.size() - 1;
}

void agreement::conclude() {
  // The decision itself is no injection point, also inside an outer agreement's window (its MPI calls are checked
  // as local ones): a rank failing after it could not tell the others.
  if (!concluded_) fault::close_window();
  concluded_ = true;
  const wait_label label(nullptr, "the agreement on every process's arguments and outcome");
  const int me = rank(comm_);
  const int nranks = size(comm_);
  // Head: the lowest failing rank (nranks when none), then the hash and its complement (their minima equal
  // the hash and its complement on every rank exactly when all hashes are equal; a rank that checks nothing
  // contributes the neutral maximum).
  constexpr std::int64_t neutral = std::numeric_limits<std::int64_t>::max();
  const auto as_word = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  std::vector<std::int64_t> all = {failed() ? me : nranks, check_hash_ ? as_word(hash_) : neutral,
                                   check_hash_ ? as_word(~hash_) : neutral};
  all.insert(all.end(), words_.begin(), words_.end());
  // Completed while yielding the core: every collective entry point pays this
  // reduction, on oversubscribed nodes mostly in scheduler time slices when it blocks.
  REDIST_MPI_CHECK_LOCAL(
      allreduce_yielding(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_INT64_T, MPI_MIN, comm_));
  std::copy(all.begin() + 3, all.end(), words_.begin());
  const int first_failing = static_cast<int>(all[0]);
  const bool hashes_differ = check_hash_ && (all[1] != as_word(hash_) || all[2] != as_word(~hash_));
  if (first_failing < nranks || hashes_differ) undo();
  if (first_failing < nranks) {
    // The lowest failing rank sends its kind, code and message, so every rank raises the same error.
    // An error an inner agreement raised on every rank already names the rank that failed first.
    int header[4] = {static_cast<int>(local_.kind), local_.mpi_code, static_cast<int>(local_.message.size()),
                     local_.agreed ? 1 : 0};
    REDIST_MPI_CHECK_LOCAL(bcast_yielding(header, 4, MPI_INT, first_failing, comm_));
    std::string text = me == first_failing ? local_.message : std::string(static_cast<std::size_t>(header[2]), '\0');
    if (header[2] > 0) REDIST_MPI_CHECK_LOCAL(bcast_yielding(text.data(), header[2], MPI_CHAR, first_failing, comm_));
    failure agreed;
    agreed.kind = static_cast<error_kind>(header[0]);
    agreed.mpi_code = header[1];
    agreed.message = header[3] != 0 ? text : "rank " + std::to_string(first_failing) + ": " + text;
    agreed.agreed = true;
    raise(agreed);
  }
  if (hashes_differ) throw_error(inconsistent_ranks(hash_message_), true);
}

void agreement::undo() noexcept {
  // Local clean-ups; one that fails (an invalid handle) must not hide the error every rank is about to raise.
  for (auto& u : undos_) try {
      u();
    } catch (...) {
    }
}

void agree_on(MPI_Comm comm, error_kind kind, const std::string& problem) {
  agreement a(comm);
  if (!problem.empty()) a.fail(kind, problem);
  a.conclude();
}

}  // namespace redist::mpi
