// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The vocabulary every capability shares: op, element types and their MPI datatypes, type-erased scalars.
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

namespace redist {

/// op(B) in A = alpha * op(B) + beta * A.
enum class op : std::uint8_t { identity = 0, transpose = 1, conj_transpose = 2 };

/// Element types the transform engine moves. Integer types support plain copies only
/// (alpha = 1, beta = 0, op identity or transpose).
enum class element_type : std::uint8_t { f32 = 0, f64 = 1, c32 = 2, c64 = 3, i32 = 4, i64 = 5 };

/// Bytes per element of type t; 0 for a value outside the enum. Throws nothing.
std::size_t element_size(element_type t);
/// The MPI datatype of an element type, the one map the library uses everywhere: MPI_C_FLOAT_COMPLEX and
/// MPI_C_DOUBLE_COMPLEX for the complex types (C's, which every MPI's C interface has), MPI_INT32_T and
/// MPI_INT64_T for the integers.
/// @throws invalid_argument a value outside the enum
MPI_Datatype mpi_datatype(element_type t);
/// The spelling of t (redist/names.hpp: "float", "double", ...); "?" for a value outside the enum. Throws nothing.
const char* to_string(element_type t);
/// The spelling of o (redist/names.hpp); "?" for a value outside the enum. Throws nothing.
const char* to_string(op o);

template <class T>
struct element_type_of;
template <>
struct element_type_of<float> {
  static constexpr element_type value = element_type::f32;
};
template <>
struct element_type_of<double> {
  static constexpr element_type value = element_type::f64;
};
template <>
struct element_type_of<std::complex<float>> {
  static constexpr element_type value = element_type::c32;
};
template <>
struct element_type_of<std::complex<double>> {
  static constexpr element_type value = element_type::c64;
};
template <>
struct element_type_of<std::int32_t> {
  static constexpr element_type value = element_type::i32;
};
template <>
struct element_type_of<std::int64_t> {
  static constexpr element_type value = element_type::i64;
};
template <class T>
inline constexpr element_type element_type_v = element_type_of<T>::value;

/// A type-erased scalar (alpha, beta); converted to the job's element type at execution.
using scalar = std::complex<double>;

/// The type-erased form of a typed alpha or beta. Throws nothing.
template <class T>
scalar to_scalar(T v) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return scalar(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  else
    return scalar(static_cast<double>(v), 0.0);
}

}  // namespace redist
