// SPDX-License-Identifier: BSD-3-Clause
// BLACS looked up at run time (see blacs.hpp).
#include "blacs.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace redist::scalapack::blacs {

namespace {

// Debian's libscalapack-mpich: BLACS "Int" is int, MPI_Comm is MPICH's int handle.
using gridinfo_fn = void (*)(int, int*, int*, int*, int*);
using get_fn = void (*)(int, int, int*);
using sys_handle_fn = MPI_Comm (*)(int);
using pxerbla_fn = void (*)(const int*, const char*, const int*, std::size_t);
using abort_fn = void (*)(int, int);

struct functions {
  gridinfo_fn gridinfo = nullptr;
  get_fn get = nullptr;
  sys_handle_fn to_comm = nullptr;
  pxerbla_fn pxerbla = nullptr;  // optional
  abort_fn abort = nullptr;      // optional
  std::string missing;
};

template <class F>
F find(const char* name, std::string& missing) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (!p && missing.empty()) missing = name;
  return reinterpret_cast<F>(p);
}

const functions& blacs_functions() {
  static const functions f = [] {
    functions r;
    r.gridinfo = find<gridinfo_fn>("Cblacs_gridinfo", r.missing);
    r.get = find<get_fn>("Cblacs_get", r.missing);
    r.to_comm = find<sys_handle_fn>("Cblacs2sys_handle", r.missing);
    std::string ignored;
    r.pxerbla = find<pxerbla_fn>("pxerbla_", ignored);
    r.abort = find<abort_fn>("Cblacs_abort", ignored);
    return r;
  }();
  return f;
}

}  // namespace

bool available() { return blacs_functions().missing.empty(); }

std::string unavailable_reason() {
  const std::string& m = blacs_functions().missing;
  return m.empty() ? std::string()
                   : "BLACS function " + m + " not found in the process (link the program with ScaLAPACK/BLACS)";
}

process_grid grid_info(int context) {
  process_grid g;
  if (context < 0) return g;
  int rows = -1, cols = -1, row = -1, col = -1;
  blacs_functions().gridinfo(context, &rows, &cols, &row, &col);
  if (rows < 1 || cols < 1) return g;  // BLACS reports -1 for a context this process is not part of
  g.proc_rows = rows;
  g.proc_cols = cols;
  if (row >= 0 && row < rows && col >= 0 && col < cols) {
    g.my_row = row;
    g.my_col = col;
  }
  return g;
}

MPI_Comm communicator(int context) {
  // Cblacs_get's WHAT = 10 (SGET_BLACSCONTXT) gives the system handle of the context's communicator.
  int handle = -1;
  blacs_functions().get(context, 10, &handle);
  return blacs_functions().to_comm(handle);
}

void report_error(int context, const char* routine, int info) {
  const auto& f = blacs_functions();
  if (f.pxerbla) {
    const int positive = -info;
    f.pxerbla(&context, routine, &positive, std::strlen(routine));
  } else {
    std::fprintf(stderr, "{%s} parameter number %d had an illegal value\n", routine, -info);
  }
}

void report_problem(const char* routine, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", routine, message.c_str());
}

bool holds_me(int context) {
  // Cblacs_gridinfo checks the handle against BLACS's table (range and exited contexts) before using it.
  return available() && grid_info(context).contains_me();
}

void fail_after_checks(int context, const char* routine, int info, const std::string& why) {
  const char* mode = std::getenv("REDIST_SCALAPACK_ON_ERROR");
  const bool return_instead = mode != nullptr && std::strcmp(mode, "return") == 0;
  std::fprintf(stderr, "%s: %s (%s)\n", routine, why.c_str(),
               return_instead ? "REDIST_SCALAPACK_ON_ERROR=return: the output is undefined"
                              : "aborting; REDIST_SCALAPACK_ON_ERROR=return reports it through PXERBLA instead");
  std::fflush(stderr);
  if (return_instead) {
    report_error(context, routine, info);
    return;
  }
  const auto& f = blacs_functions();
  if (f.abort != nullptr && holds_me(context)) f.abort(context, 1);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace redist::scalapack::blacs
