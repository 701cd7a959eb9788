#include "agreement.hpp"

#include <limits>
#include <new>

#include "checked.hpp"

namespace redist::mpi {

failure current_failure() noexcept {
  failure f;
  try {
    throw;
  } catch (const mpi_error& e) {
    f = {error_kind::mpi, e.code(), e.what()};
  } catch (const invalid_topology& e) {
    f = {error_kind::invalid_topology, 0, e.what()};
  } catch (const invalid_count& e) {
    f = {error_kind::invalid_count, 0, e.what()};
  } catch (const invalid_buffer& e) {
    f = {error_kind::invalid_buffer, 0, e.what()};
  } catch (const invalid_datatype& e) {
    f = {error_kind::invalid_datatype, 0, e.what()};
  } catch (const invalid_argument& e) {
    f = {error_kind::invalid_argument, 0, e.what()};
  } catch (const invalid_layout& e) {
    f = {error_kind::invalid_layout, 0, e.what()};
  } catch (const dimension_mismatch& e) {
    f = {error_kind::dimension_mismatch, 0, e.what()};
  } catch (const inconsistent_ranks& e) {
    f = {error_kind::inconsistent_ranks, 0, e.what()};
  } catch (const overflow_error& e) {
    f = {error_kind::overflow, 0, e.what()};
  } catch (const insufficient_memory& e) {
    f = {error_kind::insufficient_memory, 0, e.what()};
  } catch (const std::bad_alloc&) {
    f.kind = error_kind::insufficient_memory;
    f.message = "out of memory (an allocation failed)";
  } catch (const std::exception& e) {
    f = {error_kind::internal, 0, e.what()};
  } catch (...) {
    f = {error_kind::internal, 0, "an exception that is not a std::exception"};
  }
  return f;
}

void raise(const failure& f) {
  switch (f.kind) {
    case error_kind::invalid_layout: throw invalid_layout(f.message);
    case error_kind::dimension_mismatch: throw dimension_mismatch(f.message);
    case error_kind::invalid_argument: throw invalid_argument(f.message);
    case error_kind::invalid_topology: throw invalid_topology(f.message);
    case error_kind::invalid_count: throw invalid_count(f.message);
    case error_kind::invalid_buffer: throw invalid_buffer(f.message);
    case error_kind::invalid_datatype: throw invalid_datatype(f.message);
    case error_kind::inconsistent_ranks: throw inconsistent_ranks(f.message);
    case error_kind::overflow: throw overflow_error(f.message);
    case error_kind::insufficient_memory: throw insufficient_memory(f.message);
    case error_kind::mpi: throw mpi_error::described(f.mpi_code, f.message);
    case error_kind::internal:
    case error_kind::none: break;
  }
  throw error(f.message);
}

namespace {
// An error an inner agreement raised on every rank ("rank r: ..."): an outer agreement that records it raises it as
// it is, naming the rank that failed first, not the lowest of the ranks that all recorded it.
bool already_agreed(const std::string& text) {
  if (text.rfind("rank ", 0) != 0) return false;
  std::size_t i = 5;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i > 5 && text.compare(i, 2, ": ") == 0;
}
}  // namespace

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
    int header[3] = {static_cast<int>(local_.kind), local_.mpi_code, static_cast<int>(local_.message.size())};
    REDIST_MPI_CHECK_LOCAL(MPI_Bcast(header, 3, MPI_INT, first_failing, comm_));
    std::string text = me == first_failing ? local_.message : std::string(static_cast<std::size_t>(header[2]), '\0');
    if (header[2] > 0) REDIST_MPI_CHECK_LOCAL(MPI_Bcast(text.data(), header[2], MPI_CHAR, first_failing, comm_));
    raise({static_cast<error_kind>(header[0]), header[1],
           already_agreed(text) ? text : "rank " + std::to_string(first_failing) + ": " + text});
  }
  if (hashes_differ) throw inconsistent_ranks(hash_message_);
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
