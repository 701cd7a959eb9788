// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Shared pieces of the Python bindings: communicators from mpi4py (its C API), NumPy dtypes and arrays
// (checked, never copied), and the option spellings Python users pass.
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist/layout/grid_layout.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/layout/nd_layout.hpp"
#include "redist/names.hpp"
#include "redist/transform/plan.hpp"

namespace redist::python {

namespace nb = nanobind;

// Arrays as the bindings take them: any dtype, shape and strides (checked at run time, so that a wrong
// array gets a message saying what is expected instead of a silent copy). `writable_array` refuses
// read-only arrays.
using writable_array = nb::ndarray<nb::device::cpu>;
using readable_array = nb::ndarray<nb::ro, nb::device::cpu>;

// Imports mpi4py's C API (and with mpi4py.MPI, initialises MPI); the module does it once at import.
void import_mpi4py_api();
// The MPI_Comm inside an mpi4py.MPI.Comm; TypeError for anything else, ValueError for MPI.COMM_NULL.
MPI_Comm communicator(nb::handle comm);

// numpy.dtype(x).name -> element_type; TypeError naming the supported dtypes otherwise.
element_type element_type_of_dtype(nb::handle dtype);
// NumPy's name of an element type ("float64", ...).
const char* dtype_name(element_type t);
// The numpy.dtype of an element type.
nb::object numpy_dtype(element_type t);

// 'N'/'T'/'C' (or 'identity', 'transpose', 'conj_transpose'); ValueError otherwise.
op parse_op(const std::string& s);
// 'F' (column-major) or 'C' (row-major); ValueError otherwise.
storage_order parse_storage(const std::string& s);
const char* storage_name(storage_order o);

// The value of an option enum by its name (redist/names.hpp, the names C++, C and the tools use); an unknown one
// raises ValueError("<label> 'x': expected 'a', 'b' or 'c'").
template <class E>
E parse_option(const std::string& text, const char* label) {
  try {
    return parse_name<E>(text);
  } catch (const redist::invalid_argument&) {
    throw nb::value_error((std::string(label) + " '" + text + "': expected " + spelled_choices<E>("'")).c_str());
  }
}

// What the checks need of an array, from either kind of ndarray.
struct array_view {
  void* data = nullptr;
  nb::dlpack::dtype dtype{};
  std::vector<std::int64_t> shape, strides;  // strides in elements
  std::int64_t size() const;
  bool c_contiguous() const;
  bool f_contiguous() const;
};
template <class Array>
array_view view_of(const Array& a) {
  array_view v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.dtype = a.dtype();
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    v.shape.push_back(static_cast<std::int64_t>(a.shape(d)));
    v.strides.push_back(static_cast<std::int64_t>(a.stride(d)));
  }
  return v;
}
// The element type of an array's dtype; TypeError naming `name` and the supported dtypes otherwise.
element_type element_type_of(const array_view& a, const char* name);

// Checks that `a` can be the local storage of `layout` for elements of type t, without a copy: dtype, C- or
// Fortran-contiguous, and large enough (a 2-D array on a regular layout must also have the layout's leading
// dimension and order). Raises TypeError/ValueError naming `name` and what was expected.
void check_local_array(const array_view& a, const grid_layout& layout, element_type t, const char* name);

// The local array shape of a layout (see Layout.local_shape in the stubs): (lld, local columns) for
// column-major regular storage, (local rows, lld) for row-major, (local_elements,) for explicit blocks.
std::vector<std::int64_t> local_shape(const grid_layout& layout);

// This rank's local storage of an N-d layout as one NumPy array: regular storage is an array of `shape` (one
// extent per axis, in axis order) with `strides` (elements), whatever the storage order; explicit blocks are a
// flat array of local_elements (shape (local_elements,), stride 1). `elements`: the memory that array spans.
struct nd_local_form {
  std::vector<std::int64_t> shape, strides;
  std::int64_t elements = 0;
};
nd_local_form local_form(const nd_layout& layout);

// check_local_array for N-d layouts: dtype, and either an array of the layout's local form (NdLayout.empty,
// NdLayout.local_view: its shape and strides) or a C- or Fortran-contiguous array of any other shape holding at
// least the local elements (a flat buffer).
void check_local_nd_array(const array_view& a, const nd_layout& layout, element_type t, const char* name);

// order=: None (empty: C order, the builders' default), 'C' (last axis fastest), 'F' (first axis fastest), or the
// axes fastest first.
std::vector<int> parse_axis_order(nb::handle order, int ndim);
// A box (lo, hi) or a list of them; TypeError naming `where` otherwise.
std::vector<box> boxes_of(nb::handle value, const std::string& where);
// Boxes as a list of (lo, hi) tuples.
nb::list box_list(const std::vector<box>& boxes);

// TypeError "<where>complex alpha or beta for <what> of <dtype>" when alpha or beta has an imaginary part and t
// is not complex (where: "" or e.g. "job 2: "; what: "a transform", "a multiply").
void check_real_scalars(element_type t, std::complex<double> alpha, std::complex<double> beta, const std::string& where,
                        const char* what);

// Benchmark helpers (_execute_repeatedly and friends): runs `call` `repetitions` times with the GIL released
// and returns the mean seconds per call on this rank.
template <class Call>
double mean_seconds_per_call(int repetitions, Call&& call) {
  nb::gil_scoped_release release;
  const double start = MPI_Wtime();
  for (int k = 0; k < repetitions; ++k) call();
  return (MPI_Wtime() - start) / repetitions;
}

// A Python value as T (options dicts, batch tuples); TypeError naming `where` (e.g. "torus['alpha']") and what
// was expected otherwise.
template <class T>
T cast_argument(nb::handle value, const std::string& where, const char* expected) {
  T out{};
  if (!nb::try_cast(value, out))
    throw nb::type_error(
        (where + ": expected " + expected + ", got " + nb::cast<std::string>(nb::repr(value))).c_str());
  return out;
}

// Runs `check` (argument parsing and array checks that may raise TypeError/ValueError on this rank only)
// and agrees on the outcome over comm before anything collective starts, so that a bad argument on one
// rank cannot leave the others waiting in a collective: the failing rank re-raises its own exception,
// the others raise redist.InvalidArgument naming the lowest failing rank and its message. One allreduce.
void agree_on_arguments(MPI_Comm comm, const std::function<void()>& check);

// A plan's timeout_seconds argument: None is the process's timeout (-1); otherwise a number >= 0 (ValueError).
double timeout_of(const std::optional<double>& seconds);

// What a plan moves from this rank per execution, as a dict (TransformPlan.statistics, gemm's transform_in/out).
// The fields of redist/statistics.hpp under the same names (the base of every statistics dict).
nb::dict traffic_dict(const traffic_statistics& s);
nb::dict plan_statistics_dict(const plan_statistics& s);

// A whole array as a flat buffer of its elements: supported dtype and C- or Fortran-contiguous (any shape),
// else TypeError/ValueError naming `name`.
struct flat_buffer {
  void* data = nullptr;
  std::int64_t elements = 0;
  element_type type = element_type::f64;
};
flat_buffer flat_buffer_of(const array_view& a, const char* name);

void register_settings(nb::module_& m);
void register_errors(nb::module_& m);
void register_layout(nb::module_& m);
void register_nd_layout(nb::module_& m);
void register_transform(nb::module_& m);
void register_exchange(nb::module_& m);
void register_gemm(nb::module_& m);
void register_node_buffer(nb::module_& m);

}  // namespace redist::python
