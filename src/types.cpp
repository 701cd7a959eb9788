// SPDX-License-Identifier: BSD-3-Clause
#include "redist/types.hpp"

#include <string>

#include "names_table.hpp"
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

// The spellings of op and element_type (redist/names.hpp).
namespace names_detail {

template <>
struct table<op> {
  static constexpr const char* option = "op";
  static constexpr std::array<spelling<op>, 3> current{
      {{op::identity, "identity"}, {op::transpose, "transpose"}, {op::conj_transpose, "conj_transpose"}}};
};

template <>
struct table<element_type> {
  static constexpr const char* option = "element type";
  static constexpr std::array<spelling<element_type>, 6> current{{{element_type::f32, "float"},
                                                                  {element_type::f64, "double"},
                                                                  {element_type::c32, "complex<float>"},
                                                                  {element_type::c64, "complex<double>"},
                                                                  {element_type::i32, "int32"},
                                                                  {element_type::i64, "int64"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(op)
REDIST_NAMED_ENUM(element_type)

const char* to_string(op o) { return name_in_table(o); }
const char* to_string(element_type t) { return name_in_table(t); }

}  // namespace redist
