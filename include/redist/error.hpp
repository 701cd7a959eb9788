#pragma once
// The redist::error hierarchy. Every message says what was wrong and what was expected.
#include <stdexcept>
#include <string>

namespace redist {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A layout description is inconsistent (splits, owners, local blocks, leading dimensions).
class invalid_layout : public error {
 public:
  using error::error;
};

// Shapes of the operands do not fit together (e.g. op(B) is not the shape of A).
class dimension_mismatch : public error {
 public:
  using error::error;
};

// An argument outside its domain (negative size, unknown option value, ...).
class invalid_argument : public error {
 public:
  using error::error;
};

// A communicator without the topology the call needs (e.g. not a distributed-graph communicator).
class invalid_topology : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

// Ranks passed different global descriptions of the same object.
class inconsistent_ranks : public error {
 public:
  using error::error;
};

// A size does not fit the integer type that must carry it.
class overflow_error : public error {
 public:
  using error::error;
};

// A computation cannot run within the memory it was given; the message says how much it needs.
class insufficient_memory : public error {
 public:
  using error::error;
};

// An MPI call returned an error code.
class mpi_error : public error {
 public:
  mpi_error(const std::string& call, int code);
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace redist
