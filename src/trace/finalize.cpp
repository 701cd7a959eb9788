// SPDX-License-Identifier: BSD-3-Clause
// MPI_Finalize through MPI's profiling interface: under REDIST_TRACE the summary is gathered and printed while
// MPI still runs, then MPI finalizes. A program that links libredist ahead of MPI reaches this definition;
// libredist_scalapack carries the same (a preloaded drop-in is searched before the program's MPI).
#include <mpi.h>

#include "recorder.hpp"

extern "C" int MPI_Finalize(void) {
  redist::trace_detail::at_finalize();
  return PMPI_Finalize();
}
