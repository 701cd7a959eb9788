// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The BLACS functions redist needs, found at run time in the process (internal).
//
// libredist does not link ScaLAPACK: a program that calls the ScaLAPACK entry points already has BLACS
// loaded (its contexts come from there), so the functions are looked up with dlsym when first needed.
#include <mpi.h>

#include <string>

#include "redist/scalapack/descriptor.hpp"

namespace redist::scalapack::blacs {

// True when the BLACS functions below were found in the process.
bool available();
// Why not (names the missing function); empty when available.
std::string unavailable_reason();

// The grid of a BLACS context as seen by this process: shape and coordinates; a context this process is
// not part of (or -1) gives proc_rows = proc_cols = 0 and coordinates -1. position_ranks stays empty:
// ranks are agreed by the callers over the operation's communicator.
process_grid grid_info(int context);

// The MPI communicator of a context's grid (BLACS's own; not to be freed). Its rank of grid position
// (r, c) is Cblacs_pnum(context, r, c).
MPI_Comm communicator(int context);

// Reports a wrong argument as ScaLAPACK does: PXERBLA(context, routine, info) of the program's
// ScaLAPACK when it has one, else one line on stderr.
void report_error(int context, const char* routine, int info);
// Reports a problem that has no argument position (own message), on stderr.
void report_problem(const char* routine, const std::string& message);

// True when `context` is a live BLACS context whose grid holds this process: not negative, created and not
// exited (BLACS's own gridinfo answers -1 otherwise; its other functions would index freed memory).
bool holds_me(int context);

// Ends a call that failed after every process agreed its arguments were right (planning or execution raised,
// an operand the engine does not support): the application must not go on with B or C untouched or half
// written. Prints "ROUTINE: why" and calls Cblacs_abort(context, 1) (what PBLAS does; MPI_Abort when BLACS
// has no Cblacs_abort), unless REDIST_SCALAPACK_ON_ERROR=return, which reports `info` through PXERBLA and
// returns instead (the caller then must treat the output as undefined).
void fail_after_checks(int context, const char* routine, int info, const std::string& why);

}  // namespace redist::scalapack::blacs
