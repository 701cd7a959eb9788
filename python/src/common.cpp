// SPDX-License-Identifier: BSD-3-Clause
#include "common.hpp"

#include <mpi4py/mpi4py.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>

#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/watchdog.hpp"
#include "redist/error.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/names.hpp"
#include "redist/timeout.hpp"
#include "redist/trace.hpp"

namespace redist::python {

// mpi4py's C API lives in static pointers of each translation unit that includes mpi4py.h: this one is the
// only user, and imports it here.
void import_mpi4py_api() {
  if (import_mpi4py() < 0) throw nb::python_error();
}

MPI_Comm communicator(nb::handle comm) {
  if (!PyObject_TypeCheck(comm.ptr(), &PyMPIComm_Type))
    throw nb::type_error(
        ("expected an mpi4py.MPI.Comm (e.g. MPI.COMM_WORLD), got " + nb::cast<std::string>(nb::str(comm.type())))
            .c_str());
  MPI_Comm* c = PyMPIComm_Get(comm.ptr());
  if (c == nullptr) throw nb::python_error();
  if (*c == MPI_COMM_NULL) throw nb::value_error("the communicator is MPI.COMM_NULL");
  return *c;
}

namespace {

struct dtype_entry {
  const char* name;
  element_type type;
  std::uint8_t code;  // nb::dlpack::dtype_code
  std::uint8_t bits;
};
constexpr dtype_entry dtypes[] = {
    {"float32", element_type::f32, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 32},
    {"float64", element_type::f64, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 64},
    {"complex64", element_type::c32, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Complex), 64},
    {"complex128", element_type::c64, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Complex), 128},
    {"int32", element_type::i32, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int), 32},
    {"int64", element_type::i64, static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int), 64},
};
constexpr const char* supported = "float32, float64, complex64, complex128, int32 or int64";

}  // namespace

element_type element_type_of_dtype(nb::handle dtype) {
  nb::object numpy_dtype_type = nb::module_::import_("numpy").attr("dtype");
  std::string name;
  try {
    name = nb::cast<std::string>(numpy_dtype_type(dtype).attr("name"));
  } catch (const nb::python_error&) {
    throw nb::type_error(
        ("dtype " + nb::cast<std::string>(nb::repr(dtype)) + " is not a NumPy dtype; expected " + supported).c_str());
  }
  for (const dtype_entry& e : dtypes)
    if (name == e.name) return e.type;
  throw nb::type_error(("dtype " + name + " is not supported; expected " + std::string(supported)).c_str());
}

const char* dtype_name(element_type t) {
  for (const dtype_entry& e : dtypes)
    if (e.type == t) return e.name;
  return "unknown";
}

nb::object numpy_dtype(element_type t) {
  for (const dtype_entry& e : dtypes)
    if (e.type == t) return nb::module_::import_("numpy").attr("dtype")(e.name);
  throw nb::value_error("unknown element type");
}

std::int64_t array_view::size() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

bool array_view::c_contiguous() const {
  if (size() == 0) return true;  // an empty array's strides are arbitrary
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

bool array_view::f_contiguous() const {
  if (size() == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

element_type element_type_of(const array_view& a, const char* name) {
  for (const dtype_entry& e : dtypes)
    if (a.dtype.code == e.code && a.dtype.bits == e.bits && a.dtype.lanes == 1) return e.type;
  throw nb::type_error((std::string(name) + ": arrays of this dtype are not supported; expected " + supported).c_str());
}

op parse_op(const std::string& s) {
  // BLAS's letters (as ScaLAPACK takes them), or the names C++ uses.
  if (s == "N" || s == "n") return op::identity;
  if (s == "T" || s == "t") return op::transpose;
  if (s == "C" || s == "c") return op::conj_transpose;
  try {
    return parse_name<op>(s);
  } catch (const redist::invalid_argument&) {
    throw nb::value_error(
        ("op '" + s + "': expected 'N' (identity), 'T' (transpose) or 'C' (conjugate transpose)").c_str());
  }
}

storage_order parse_storage(const std::string& s) {
  if (s == "F" || s == "f") return storage_order::col_major;
  if (s == "C" || s == "c") return storage_order::row_major;
  throw nb::value_error(("order '" + s + "': expected 'F' (column-major) or 'C' (row-major)").c_str());
}

const char* storage_name(storage_order o) { return o == storage_order::col_major ? "F" : "C"; }

std::vector<std::int64_t> local_shape(const grid_layout& layout) {
  if (layout.kind() == storage_kind::explicit_blocks) return {layout.local_elements()};
  std::int64_t rows = 0, cols = 0;
  for (const grid_position& p : layout.my_positions()) {
    for (std::int64_t i = 0; i < layout.block_rows(); ++i)
      if (layout.row_proc()[static_cast<std::size_t>(i)] == p.row)
        rows = std::max(rows, layout.local_row_start()[static_cast<std::size_t>(i)] +
                                  layout.row_splits()[static_cast<std::size_t>(i) + 1] -
                                  layout.row_splits()[static_cast<std::size_t>(i)]);
    for (std::int64_t j = 0; j < layout.block_cols(); ++j)
      if (layout.col_proc()[static_cast<std::size_t>(j)] == p.col)
        cols = std::max(cols, layout.local_col_start()[static_cast<std::size_t>(j)] +
                                  layout.col_splits()[static_cast<std::size_t>(j) + 1] -
                                  layout.col_splits()[static_cast<std::size_t>(j)]);
  }
  if (layout.packing_order() == storage_order::col_major) return {std::max(layout.local_ld(), rows), cols};
  return {rows, std::max(layout.local_ld(), cols)};
}

namespace {

void check_dtype(const array_view& a, element_type t, const char* name) {
  const element_type got = element_type_of(a, name);
  if (got != t)
    throw nb::type_error(
        (std::string(name) + ": dtype " + dtype_name(got) + " does not match the transform's " + dtype_name(t))
            .c_str());
}

// A contiguous array holding at least `needed` elements.
void check_flat_storage(const array_view& a, std::int64_t needed, const char* name) {
  if (!a.c_contiguous() && !a.f_contiguous())
    throw nb::value_error((std::string(name) +
                           ": the array is not contiguous; redist works on the array's memory "
                           "without copying, so pass a C- or Fortran-contiguous array (numpy.ascontiguousarray or "
                           "numpy.asfortranarray make one)")
                              .c_str());
  if (a.size() < needed)
    throw nb::value_error((std::string(name) + ": the array has " + std::to_string(a.size()) +
                           " elements, the layout stores " + std::to_string(needed) + " on this rank")
                              .c_str());
}

std::string tuple_text(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "(" + s + (v.size() == 1 ? ",)" : ")");
}

}  // namespace

void check_local_array(const array_view& a, const grid_layout& layout, element_type t, const char* name) {
  check_dtype(a, t, name);
  check_flat_storage(a, layout.local_elements(), name);
  const bool c = a.c_contiguous(), f = a.f_contiguous();
  if (a.shape.size() == 2 && layout.kind() == storage_kind::regular && a.size() > 0) {
    const std::vector<std::int64_t> expected = local_shape(layout);
    const bool col_major = layout.packing_order() == storage_order::col_major;
    const bool order_ok = col_major ? f : c;
    // The whole shape (docs/python.md): a leading dimension that matches with another count of columns (rows
    // in C order) is an array of some other layout.
    const bool shape_ok = a.shape[0] == expected[0] && a.shape[1] == expected[1];
    if (!order_ok || !shape_ok)
      throw nb::value_error((std::string(name) + ": a 2-D array of shape (" + std::to_string(a.shape[0]) + ", " +
                             std::to_string(a.shape[1]) + ") does not match the layout's local storage, expected a " +
                             (col_major ? "Fortran" : "C") + "-ordered array of shape (" + std::to_string(expected[0]) +
                             ", " + std::to_string(expected[1]) + ") (Layout.local_shape, Layout.empty)")
                                .c_str());
  }
}

nd_local_form local_form(const nd_layout& l) {
  if (l.kind() == storage_kind::explicit_blocks) return {{l.local_elements()}, {1}, l.local_elements()};
  const auto d = static_cast<std::size_t>(l.ndim());
  nd_local_form f{std::vector<std::int64_t>(d, 0), l.local_strides(), 0};
  for (const std::vector<int>& p : l.my_positions())
    for (std::size_t k = 0; k < d; ++k) {
      const auto& s = l.splits(static_cast<int>(k));
      for (std::size_t b = 0; b + 1 < s.size(); ++b)
        if (l.procs(static_cast<int>(k))[b] == p[k])
          f.shape[k] = std::max(f.shape[k], l.local_start(static_cast<int>(k))[b] + s[b + 1] - s[b]);
    }
  if (std::find(f.shape.begin(), f.shape.end(), 0) == f.shape.end()) {
    f.elements = 1;
    for (std::size_t k = 0; k < d; ++k) f.elements += (f.shape[k] - 1) * f.strides[k];
  }
  return f;
}

void check_local_nd_array(const array_view& a, const nd_layout& layout, element_type t, const char* name) {
  check_dtype(a, t, name);
  const nd_local_form f = local_form(layout);
  if (layout.kind() == storage_kind::regular && a.shape.size() == f.shape.size() && a.size() > 0) {
    bool same = a.shape == f.shape;
    for (std::size_t k = 0; same && k < f.shape.size(); ++k) same = f.shape[k] == 1 || a.strides[k] == f.strides[k];
    if (!same)
      throw nb::value_error((std::string(name) + ": an array of shape " + tuple_text(a.shape) + " and strides " +
                             tuple_text(a.strides) + " (elements) is not the layout's local storage, expected shape " +
                             tuple_text(f.shape) + " and strides " + tuple_text(f.strides) +
                             " (NdLayout.empty, NdLayout.local_view), or a contiguous array of at least " +
                             std::to_string(f.elements) + " elements of another shape")
                                .c_str());
    return;
  }
  check_flat_storage(a, std::max(f.elements, layout.local_elements()), name);
}

flat_buffer flat_buffer_of(const array_view& a, const char* name) {
  const element_type t = element_type_of(a, name);
  if (!a.c_contiguous() && !a.f_contiguous())
    throw nb::value_error((std::string(name) +
                           ": the array is not contiguous; redist sends and receives in the "
                           "array's memory without copying, so pass a C- or Fortran-contiguous array")
                              .c_str());
  return flat_buffer{a.data, a.size(), t};
}

void check_real_scalars(element_type t, std::complex<double> alpha, std::complex<double> beta, const std::string& where,
                        const char* what) {
  const bool complex_type = t == element_type::c32 || t == element_type::c64;
  if (!complex_type && (alpha.imag() != 0 || beta.imag() != 0))
    throw nb::type_error((where + "complex alpha or beta for " + what + " of " + dtype_name(t)).c_str());
}

nb::dict traffic_dict(const traffic_statistics& s) {
  nb::dict d;
  d["bytes_sent"] = s.bytes_sent;
  d["bytes_received"] = s.bytes_received;
  d["messages_sent"] = s.messages_sent;
  d["messages_received"] = s.messages_received;
  d["bytes_local"] = s.bytes_local;
  return d;
}

nb::dict plan_statistics_dict(const plan_statistics& s) {
  nb::dict d = traffic_dict(s);
  d["peers_on_node"] = s.peers_on_node;
  d["streaming_stores"] = s.streaming_stores;
  d["window_bytes"] = s.window_bytes;
  d["window_reused"] = s.window_reused;
  d["one_shot_choices"] = s.one_shot_choices;
  d["stream_chunk_bytes"] = s.stream_chunk_bytes;
  d["threads"] = s.threads;
  d["start_overlaps"] = s.start_overlaps;
  d["reason"] = s.reason;
  d["plan_seconds"] = s.plan_seconds;
  d["plan_agreement_seconds"] = s.plan_agreement_seconds;
  d["plan_tiles_seconds"] = s.plan_tiles_seconds;
  d["plan_messages_seconds"] = s.plan_messages_seconds;
  d["plan_exchange_seconds"] = s.plan_exchange_seconds;
  d["plan_buffers_seconds"] = s.plan_buffers_seconds;
  d["last_execution_seconds"] = s.last_execution_seconds;
  return d;
}

namespace {
// Read and written with the GIL held (set_argument_agreement), so a plain flag suffices.
bool argument_agreement = true;
// How many calls of this thread reached agree_on_arguments: the package's wrappers (redist/__init__.py) compare
// it before and after a call to tell a call refused before its agreement from an error the agreement raised.
thread_local std::uint64_t agreements_entered = 0;

// The communicator a refused call would have agreed on: a plan's own or an mpi4py communicator.
MPI_Comm agreement_communicator(nb::handle target) {
  if (nb::isinstance<transform_plan>(target)) return nb::cast<const transform_plan&>(target).communicator();
  if (nb::isinstance<gemm_plan>(target)) return nb::cast<const gemm_plan&>(target).communicator();
  return communicator(target);
}
}  // namespace

double timeout_of(const std::optional<double>& seconds) {
  if (!seconds) return -1;
  if (!(*seconds >= 0))
    throw nb::value_error(("timeout_seconds=" + std::to_string(*seconds) +
                           ": expected a number of seconds >= 0 (0: never reported) or None (the process's timeout)")
                              .c_str());
  return *seconds;
}

void agree_on_arguments(MPI_Comm comm, const std::function<void()>& check) {
  ++agreements_entered;
  if (!argument_agreement) {
    check();
    return;
  }
  std::string problem;
  std::exception_ptr local;
  try {
    check();
  } catch (const std::exception& e) {  // Python errors, nanobind's casts, the library's own checks
    problem = e.what();
    local = std::current_exception();
  }
  try {
    nb::gil_scoped_release release;
    // Named for the watchdog: a rank whose Python arguments never reached this call leaves the others here.
    const mpi::wait_label label("a call from Python", nullptr);
    mpi::agreement agreed(comm);
    if (local) agreed.fail(mpi::error_kind::invalid_argument, problem.empty() ? "an error without a message" : problem);
    agreed.conclude();
  } catch (const redist::error&) {
    if (local) std::rethrow_exception(local);
    throw;
  }
}

void register_settings(nb::module_& m) {
  m.def(
      "_argument_agreements_entered", [] { return agreements_entered; },
      "How many calls of this thread have reached their argument agreement (for the package's wrappers).");
  m.def(
      "_agree_on_refused_call",
      [](nb::handle target, const std::string& message) {
        const MPI_Comm c = agreement_communicator(target);
        nb::gil_scoped_release release;
        const mpi::wait_label label("a call from Python", nullptr);
        mpi::agreement agreed(c);
        agreed.fail(mpi::error_kind::invalid_argument, message);
        try {
          agreed.conclude();
        } catch (const redist::error&) {
          // Expected: this rank failed. The caller raises its own error, as agree_on_arguments does.
        }
      },
      nb::arg("target"), nb::arg("message"),
      "Joins, as a failing rank, the argument agreement that the other ranks' call of the same collective is "
      "waiting in, for a call that nanobind refused before its body ran (wrong argument types): the other ranks "
      "then raise InvalidArgument naming this rank and `message`. target: the call's communicator or plan.");
  m.def(
      "set_argument_agreement",
      [](bool enabled) {
        const bool previous = argument_agreement;
        argument_agreement = enabled;
        return previous;
      },
      nb::arg("enabled"),
      "Turns the per-call agreement on argument errors on (the default) or off, for this process; returns the "
      "previous setting. Off saves one small allreduce per call, but a rank-local argument error then raises on "
      "that rank only and the other ranks wait in the collective: turn it off only in code whose arguments are "
      "known to be right on every rank (every rank must choose the same).");
  m.def(
      "get_argument_agreement", [] { return argument_agreement; },
      "Whether argument errors are agreed over the ranks before each collective call (the default: True).");

  // The watchdog of redist's waits (redist/timeout.hpp; docs/errors.md).
  m.def(
      "set_timeout",
      [](double seconds, const std::string& action) {
        const double previous = redist::timeout();
        redist::timeout_action chosen{};
        try {
          chosen = redist::parse_name<redist::timeout_action>(action);
        } catch (const redist::invalid_argument&) {  // InvalidArgument, as a refused number of seconds
          throw redist::invalid_argument("set_timeout: action '" + action + "': expected " +
                                         redist::spelled_choices<redist::timeout_action>("'"));
        }
        redist::set_timeout(seconds, chosen);
        return previous;
      },
      nb::arg("seconds"), nb::arg("action") = "warn",
      "Sets, for this process, after how many seconds a wait inside redist is reported on stderr (0: never) and "
      "what follows: 'warn' (wait on) or 'abort' (end the job); REDIST_TIMEOUT and REDIST_TIMEOUT_ACTION set both "
      "from the environment. Returns the previous number of seconds.");
  m.def(
      "get_timeout", [] { return redist::timeout(); },
      "After how many seconds a wait inside redist is reported (0: never; REDIST_TIMEOUT, default 300).");

  // Call tracing (redist/trace.hpp; the context manager redist.trace is built on these).
  m.def(
      "get_trace_mode", [] { return std::string(to_string(trace::mode())); },
      "This process's trace mode: 'off', 'summary' or 'calls' (REDIST_TRACE when the library was loaded).");
  m.def(
      "set_trace_mode",
      [](const std::string& mode) {
        const std::string previous = to_string(trace::mode());
        trace::set_mode(parse_option<trace::trace_mode>(mode, "trace mode"));
        return previous;
      },
      nb::arg("mode"),
      "Sets this process's trace mode ('off', 'summary' or 'calls'; every rank alike); returns the previous one.");
  m.def(
      "trace_totals",
      [] {
        nb::list rows;
        for (const trace::entry_totals& r : trace::totals()) {
          nb::dict row;
          row["entry_point"] = r.entry_point;
          row["path"] = r.path;
          row["calls"] = r.calls;
          row["plan_cache_hits"] = r.plan_cache_hits;
          row["plans_made"] = r.plans_made;
          row["plan_seconds"] = r.plan_seconds;
          row["execution_seconds"] = r.execution_seconds;
          row["bytes_sent"] = r.bytes_sent;
          row["messages_sent"] = r.messages_sent;
          rows.append(row);
        }
        return rows;
      },
      "This process's traced calls since the start or the last trace_reset: one dict per entry point and path "
      "(entry_point, path, calls, plan_cache_hits, plans_made, plan_seconds, execution_seconds, bytes_sent, "
      "messages_sent).");
  m.def(
      "trace_reset", [] { trace::reset(); }, "Forgets this process's traced totals.");
  m.def(
      "trace_summary",
      [](nb::handle comm) {
        const MPI_Comm c = communicator(comm);
        nb::gil_scoped_release release;
        return trace::summary(c);
      },
      nb::arg("comm"),
      "The summary table over the ranks of comm (collective): the text on comm's rank 0, '' elsewhere.");
}

namespace {
// One exception class of the module, derived from `base` and, where given, a builtin exception too.
template <class E>
nb::object register_exception(nb::module_& m, const char* name, const nb::object& base, PyObject* builtin) {
  if (builtin == nullptr) return nb::exception<E>(m, name, base.ptr());
  const nb::object bases = nb::make_tuple(base, nb::handle(builtin));
  return nb::exception<E>(m, name, bases.ptr());
}
}  // namespace

void register_errors(nb::module_& m) {
  // Python classes mirror redist::error's hierarchy as the error table (src/mpi/error_table.hpp) lists it;
  // nanobind tries translators newest first, so a base is registered before its subclasses (the table's order).
  // Overflow is named apart from the builtin OverflowError it also derives from: `from redist import *` shadows
  // nothing.
  const nb::object base = nb::exception<redist::error>(m, "Error", PyExc_RuntimeError);
  std::map<mpi::error_kind, nb::object> registered{{mpi::error_kind::none, base}};
#define REDIST_ERROR_PYTHON(name, cls, mpi_class, python_name, python_base, builtin_base) \
  registered[mpi::error_kind::name] =                                                     \
      register_exception<redist::cls>(m, python_name, registered.at(mpi::error_kind::python_base), builtin_base);
  REDIST_ERROR_TABLE(REDIST_ERROR_PYTHON)
#undef REDIST_ERROR_PYTHON
  nb::exception<redist::mpi_error>(m, "MPIError", base.ptr());
}

}  // namespace redist::python
