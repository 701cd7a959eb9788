// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Every error kind once: its C++ class (include/redist/error.hpp), the MPI error class the C entry points return
// for it, and its Python exception with that exception's bases. Expanded by the agreement's error kinds and its
// catch and raise (src/mpi/agreement.*), the C codes (src/capi/error_code.cpp) and the Python module's exceptions
// (python/src/common.cpp); tests/unit/test_error_table.cpp checks include/redist/error.hpp and docs/errors.md
// against it. A base comes before the kinds derived from it (the agreement takes the last kind whose class an
// exception is, the most derived; Python creates a base before its subclasses).
//
//   X(kind, C++ class, MPI error class, Python name, Python base kind (none: redist.Error),
//     builtin Python base (nullptr: none))
//
// Two kinds are not rows: `mpi` (redist::mpi_error, Python MPIError: the C code is the failed call's own error
// class) and `internal` (anything else a rank threw, a bug: MPI_ERR_OTHER, Python redist.Error).
#define REDIST_ERROR_TABLE(X)                                                                           \
  X(invalid_layout, invalid_layout, MPI_ERR_ARG, "InvalidLayout", none, nullptr)                        \
  X(dimension_mismatch, dimension_mismatch, MPI_ERR_ARG, "DimensionMismatch", none, nullptr)            \
  X(invalid_argument, invalid_argument, MPI_ERR_ARG, "InvalidArgument", none, nullptr)                  \
  X(invalid_topology, invalid_topology, MPI_ERR_TOPOLOGY, "InvalidTopology", invalid_argument, nullptr) \
  X(invalid_count, invalid_count, MPI_ERR_COUNT, "InvalidCount", invalid_argument, nullptr)             \
  X(invalid_buffer, invalid_buffer, MPI_ERR_BUFFER, "InvalidBuffer", invalid_argument, nullptr)         \
  X(invalid_datatype, invalid_datatype, MPI_ERR_TYPE, "InvalidDatatype", invalid_argument, nullptr)     \
  X(inconsistent_ranks, inconsistent_ranks, MPI_ERR_ARG, "InconsistentRanks", none, nullptr)            \
  X(overflow, overflow_error, MPI_ERR_COUNT, "Overflow", none, PyExc_OverflowError)                     \
  X(insufficient_memory, insufficient_memory, MPI_ERR_NO_MEM, "InsufficientMemory", none, nullptr)
