#pragma once
// Checked MPI calls and small RAII helpers used throughout the library.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "redist/error.hpp"

namespace redist::mpi {

// Throws redist::mpi_error naming the call when code != MPI_SUCCESS.
void check(int code, const char* call);

#define REDIST_MPI_CHECK(call) ::redist::mpi::check((call), #call)

int rank(MPI_Comm comm);
int size(MPI_Comm comm);

// Collective error agreement: every rank passes its local error text (empty when fine).
// If any rank failed, all ranks throw the same exception type carrying the message of the
// lowest failing rank, so that no rank proceeds into communication that others skip.
enum class error_kind : int {
  none = 0,
  invalid_layout,
  dimension_mismatch,
  invalid_argument,
  inconsistent_ranks,
  overflow,
  insufficient_memory
};
// The kind of a redist::error (what agree_on_errors rethrows it as).
error_kind kind_of(const error& e);
void agree_on_errors(MPI_Comm comm, error_kind kind, const std::string& message);
// The same, and in the same reduction replaces every entry of `reduce_min` by its minimum over the ranks
// (callers piggyback small agreements on the error check instead of paying another collective).
void agree_on_errors(MPI_Comm comm, error_kind kind, const std::string& message,
                     std::vector<std::uint64_t>& reduce_min);
[[noreturn]] void throw_error(error_kind kind, const std::string& message);

// True once MPI_Finalize has been called: MPI objects owned by library handles (plans kept in globals,
// say) can then no longer be freed, and destructors leave them to the finished MPI library.
bool finalized() noexcept;

// Owns a communicator created by the library (MPI_Comm_free on destruction).
class comm_handle {
 public:
  comm_handle() = default;
  explicit comm_handle(MPI_Comm c) : comm_(c) {}
  comm_handle(const comm_handle&) = delete;
  comm_handle& operator=(const comm_handle&) = delete;
  comm_handle(comm_handle&& o) noexcept : comm_(o.comm_) { o.comm_ = MPI_COMM_NULL; }
  comm_handle& operator=(comm_handle&& o) noexcept;
  ~comm_handle();
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Owns a committed MPI datatype.
class datatype_handle {
 public:
  datatype_handle() = default;
  explicit datatype_handle(MPI_Datatype t) : type_(t) {}
  datatype_handle(const datatype_handle&) = delete;
  datatype_handle& operator=(const datatype_handle&) = delete;
  datatype_handle(datatype_handle&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  datatype_handle& operator=(datatype_handle&& o) noexcept;
  ~datatype_handle();
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A (count, datatype) pair that describes `bytes` contiguous bytes even when bytes > INT_MAX:
// MPI_BYTE for small messages, otherwise a struct of 1 GiB chunks plus a remainder, so that a
// message of any size is still a single MPI message.
struct byte_message {
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  datatype_handle owned;  // set when a derived type was built
};
byte_message describe_bytes(std::int64_t bytes);

// The communicator of the ranks that share memory with this one (MPI_COMM_TYPE_SHARED).
comm_handle split_shared(MPI_Comm comm);

}  // namespace redist::mpi
