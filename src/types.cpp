// SPDX-License-Identifier: BSD-3-Clause
#include "redist/types.hpp"

#include <string>

#include "redist/error.hpp"
#include "redist/names.hpp"

namespace redist {

std::size_t element_size(element_type t) {
  switch (t) {
    case element_type::f32:
      return 4;
    case element_type::f64:
      return 8;
    case element_type::c32:
      return 8;
    case element_type::c64:
      return 16;
    case element_type::i32:
      return 4;
    case element_type::i64:
      return 8;
  }
  return 0;
}

MPI_Datatype mpi_datatype(element_type t) {
  switch (t) {
    case element_type::f32:
      return MPI_FLOAT;
    case element_type::f64:
      return MPI_DOUBLE;
    case element_type::c32:
      return MPI_C_FLOAT_COMPLEX;
    case element_type::c64:
      return MPI_C_DOUBLE_COMPLEX;
    case element_type::i32:
      return MPI_INT32_T;
    case element_type::i64:
      return MPI_INT64_T;
  }
  throw invalid_argument("element type " + std::to_string(static_cast<int>(t)) + " has no MPI datatype; expected " +
                         spelled_choices<element_type>());
}

}  // namespace redist
