// SPDX-License-Identifier: BSD-3-Clause
// redist._redist: the compiled part of the Python package (see python/redist/__init__.py).
#include "common.hpp"
#include "redist/version.hpp"

NB_MODULE(_redist, m) {
  redist::python::import_mpi4py_api();
  m.doc() = "redist: communication-optimal data movement between MPI processes (compiled core)";
  m.attr("__version__") = REDIST_VERSION_STRING;
  redist::python::register_errors(m);
  redist::python::register_settings(m);
  redist::python::register_layout(m);
  redist::python::register_nd_layout(m);
  redist::python::register_transform(m);
  redist::python::register_exchange(m);
  redist::python::register_gemm(m);
  redist::python::register_node_buffer(m);
}
