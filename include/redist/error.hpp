// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The redist::error hierarchy. Every message says what was wrong and what was expected.
#include <stdexcept>
#include <string>

namespace redist {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A layout description is inconsistent (splits, owners, local blocks, leading dimensions).
class invalid_layout : public error {
 public:
  using error::error;
};

/// Shapes of the operands do not fit together (e.g. op(B) is not the shape of A).
class dimension_mismatch : public error {
 public:
  using error::error;
};

/// An argument outside its domain (negative size, unknown option value, ...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// A communicator without the topology the call needs (e.g. not a distributed-graph communicator).
class invalid_topology : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A count, or a size computed from counts, outside its domain (negative, or not matching another rank's).
class invalid_count : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A buffer pointer that cannot be right (null where data must be).
class invalid_buffer : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// An MPI datatype the call cannot use (its extent, bounds or size).
class invalid_datatype : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// Ranks passed different global descriptions of the same object.
class inconsistent_ranks : public error {
 public:
  using error::error;
};

/// A size does not fit the integer type that must carry it.
class overflow_error : public error {
 public:
  using error::error;
};

/// A computation cannot run within the memory it was given; the message says how much it needs.
class insufficient_memory : public error {
 public:
  using error::error;
};

/// An MPI call returned an error code (the library's communicators return errors instead of aborting).
class mpi_error : public error {
 public:
  /// The failure of MPI call `call` with `code`; the message names the call, the code and MPI's text for it.
  /// Throws nothing.
  mpi_error(const std::string& call, int code);
  /// The same error re-raised on another rank, whose message already says which call failed. Throws nothing.
  static mpi_error described(int code, const std::string& message);
  int code() const noexcept { return code_; }
  /// The MPI error class of code() (MPI_Error_class), what the C entry points return.
  int error_class() const noexcept;

 private:
  struct described_tag {};
  mpi_error(described_tag, int code, const std::string& message) : error(message), code_(code) {}
  int code_;
};

}  // namespace redist
