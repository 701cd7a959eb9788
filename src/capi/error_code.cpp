// SPDX-License-Identifier: BSD-3-Clause
#include "error_code.hpp"

#include <mpi.h>

#include <string>

#include "mpi/agreement.hpp"
#include "redist/redist.h"

namespace redist::capi {
namespace {
thread_local std::string last_error;  // redist_last_error_message
}

int current_error_code() noexcept {
  const mpi::failure f = mpi::current_failure();
  try {
    last_error = f.message;
  } catch (...) {
    last_error.clear();  // no memory for the text: at least no stale reason
  }
  switch (f.kind) {
#define REDIST_ERROR_C_CODE(name, cls, mpi_class, ...) \
  case mpi::error_kind::name:                          \
    return mpi_class;
    REDIST_ERROR_TABLE(REDIST_ERROR_C_CODE)
#undef REDIST_ERROR_C_CODE
    case mpi::error_kind::mpi: {
      int error_class = MPI_ERR_OTHER;
      return MPI_Error_class(f.mpi_code, &error_class) == MPI_SUCCESS ? error_class : MPI_ERR_OTHER;
    }
    case mpi::error_kind::internal:
    case mpi::error_kind::none:
      break;
  }
  return MPI_ERR_OTHER;
}

}  // namespace redist::capi

extern "C" const char* redist_last_error_message(void) { return redist::capi::last_error.c_str(); }
