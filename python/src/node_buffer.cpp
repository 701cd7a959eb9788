// SPDX-License-Identifier: BSD-3-Clause
// Node-shared storage for source arrays: redist::node_buffer, the one-copy path of the shared_memory strategy.
#include <memory>
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>

#include "common.hpp"
#include "redist/transform/node_buffer.hpp"

namespace redist::python {

namespace {

using namespace nb::literals;

// Freeing a node_buffer is collective (MPI_Win_free), so it happens in free() only, after the ranks agree that
// every one of them can: Python collects objects at moments that differ between ranks, and a collective there
// would hang. A NodeBuffer collected unfreed is left allocated, with a ResourceWarning.
struct py_node_buffer {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the caller's: free()'s agreement; released by free()
  std::unique_ptr<node_buffer> buffer;
  std::int64_t live_views = 0;  // arrays over the segment that Python still holds

  py_node_buffer() = default;
  py_node_buffer(const py_node_buffer&) = delete;
  py_node_buffer& operator=(const py_node_buffer&) = delete;
  ~py_node_buffer() {
    if (!buffer) return;
    (void)buffer.release();  // not freed: left to the process's end (and the duplicate communicator with it)
    if (!Py_IsInitialized()) return;
    // Collected perhaps while an exception propagates: warn without disturbing it.
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyErr_WarnEx(PyExc_ResourceWarning,
                     "redist.NodeBuffer collected without free(): its shared memory stays allocated until the "
                     "process ends (free() is collective: call it on every rank, or use a with block)",
                     1) != 0)
      PyErr_Clear();
    PyErr_Restore(type, value, traceback);
  }
};

// Owns one array's hold on the buffer: counts it and keeps the Python NodeBuffer alive.
struct view_hold {
  py_node_buffer* buffer;
  PyObject* owner;
};

void release_view(void* p) noexcept {
  auto* hold = static_cast<view_hold*>(p);
  --hold->buffer->live_views;
  Py_DECREF(hold->owner);
  delete hold;
}

void check_live(const py_node_buffer& b, const char* what) {
  if (!b.buffer) throw nb::value_error((std::string("NodeBuffer.") + what + ": the buffer was freed").c_str());
}

void free_buffer(py_node_buffer& b) {
  // A freed buffer has no communicator left: the call fails on this rank alone (it is not in any collective).
  agree_on_arguments(b.comm == MPI_COMM_NULL ? MPI_COMM_SELF : b.comm, [&] {
    check_live(b, "free");
    if (b.live_views > 0)
      throw nb::value_error(("NodeBuffer.free: " + std::to_string(b.live_views) +
                             " array(s) over this rank's segment are still alive; delete them first")
                                .c_str());
  });
  nb::gil_scoped_release release;
  b.buffer.reset();
  MPI_Comm_free(&b.comm);
}

}  // namespace

void register_node_buffer(nb::module_& m) {
  nb::class_<py_node_buffer>(m, "NodeBuffer",
                             "This rank's segment of memory that the ranks of its node can read (node_buffer(comm, "
                             "nbytes) makes one). Put a reshape's or transform's input B there (array(), then "
                             "NdLayout.local_view or Layout-shaped views of it): node peers then read it in place, "
                             "one copy per element instead of two. Free it with free() on every rank (collective), "
                             "or use it as a with block; B must not change while an execution reads it.")
      .def_prop_ro(
          "nbytes", [](const py_node_buffer& b) { return b.buffer ? b.buffer->bytes() : 0; },
          "Bytes of this rank's segment (0 once freed).")
      .def_prop_ro("freed", [](const py_node_buffer& b) { return !b.buffer; })
      .def(
          "array",
          [](nb::handle self, nb::handle dtype, std::optional<std::int64_t> count) {
            py_node_buffer& b = nb::cast<py_node_buffer&>(self);
            check_live(b, "array");
            const element_type t = element_type_of_dtype(dtype.is_none() ? numpy_dtype(element_type::f64) : dtype);
            const std::int64_t itemsize = nb::cast<std::int64_t>(numpy_dtype(t).attr("itemsize"));
            const std::int64_t fits = b.buffer->bytes() / itemsize;
            const std::int64_t n = count.value_or(fits);
            if (n < 0 || n > fits)
              throw nb::value_error(("NodeBuffer.array: count " + std::to_string(n) + " of " + dtype_name(t) +
                                     " does not fit this rank's " + std::to_string(b.buffer->bytes()) +
                                     " bytes (at most " + std::to_string(fits) + ")")
                                        .c_str());
            static std::byte empty_segment[64];  // an address for a rank with no bytes (no element is read there)
            void* data = b.buffer->data() ? b.buffer->data() : empty_segment;
            auto* hold = new view_hold{&b, self.ptr()};
            Py_INCREF(self.ptr());
            ++b.live_views;
            nb::capsule owner(hold, release_view);
            const std::size_t shape[1] = {static_cast<std::size_t>(n * itemsize)};
            nb::object bytes = nb::cast(nb::ndarray<nb::numpy, std::uint8_t>(data, 1, shape, owner));
            return bytes.attr("view")(numpy_dtype(t));
          },
          "dtype"_a = nb::none(), "count"_a = nb::none(),
          "A 1-D NumPy array of `count` elements of dtype (float64 unless given; default: as many as fit) over this "
          "rank's segment, no copy. Give it to NdLayout.local_view for an N-d view.")
      .def("free", &free_buffer,
           "Frees the buffer (collective over the communicator it was made on). Refused on every rank, with nothing "
           "freed, while any rank still holds an array over its segment.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__exit__",
          [](py_node_buffer& b, nb::handle, nb::handle, nb::handle) {
            if (b.buffer) free_buffer(b);
          },
          "type"_a.none(), "value"_a.none(), "traceback"_a.none(), "Frees the buffer (collective) unless freed.");

  m.def(
      "node_buffer",
      [](nb::handle comm, std::int64_t nbytes) {
        const MPI_Comm c = communicator(comm);
        // The arguments are agreed first: a rank whose call nanobind refused joins that agreement only. Then
        // the duplicate (free()'s communicator), its failure agreed before anything is allocated.
        agree_on_arguments(c, [&] {
          if (nbytes < 0)
            throw nb::value_error(
                ("node_buffer of " + std::to_string(nbytes) + " bytes: the size must be >= 0").c_str());
        });
        auto b = std::make_unique<py_node_buffer>();
        const int dup_rc = MPI_Comm_dup(c, &b->comm);
        try {
          agree_on_arguments(c, [&] {
            if (dup_rc != MPI_SUCCESS) throw redist::mpi_error("MPI_Comm_dup", dup_rc);
          });
          nb::gil_scoped_release release;
          // Its allocation is agreed inside: a rank that cannot get its segment fails every rank.
          b->buffer = std::make_unique<node_buffer>(c, nbytes);
        } catch (...) {
          if (b->comm != MPI_COMM_NULL) MPI_Comm_free(&b->comm);
          throw;
        }
        return b.release();
      },
      "comm"_a, "nbytes"_a, nb::rv_policy::take_ownership,
      "Allocates this rank's `nbytes` bytes (any count per rank, 0 included) of memory its node's ranks can read "
      "(MPI_Win_allocate_shared). Collective over comm.");
}

}  // namespace redist::python
