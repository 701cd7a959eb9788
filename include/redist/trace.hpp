// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Call tracing: what redist did with the calls a program made, per entry point (a ScaLAPACK routine of the
// drop-in, a C++ plan kind), aggregated over ranks; optionally one JSON line per call per rank, with every
// argument a replay needs. See docs/trace.md.
//
//   REDIST_TRACE=summary  at MPI_Finalize, rank 0 of MPI_COMM_WORLD prints one table aggregated over all ranks
//                         to stderr (every rank must run with the same REDIST_TRACE: the table is gathered)
//   REDIST_TRACE=calls    the same, and one JSON line per call per rank to REDIST_TRACE_FILE (%r becomes the
//                         rank in MPI_COMM_WORLD; default redist-trace.%r.jsonl)
//   REDIST_TRACE=off      the default: nothing recorded, no collective, no allocation
//
// REDIST_TRACE is read when the library is loaded; set_mode changes it for this process. Tracing never changes
// what a call computes. A trace file that cannot be written is reported once on stderr, and the calls go on.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace redist::trace {

enum class trace_mode : std::uint8_t { off, summary, calls };
/// "off", "summary", "calls" (redist/names.hpp parses them); "?" for a value outside the enum. Throws nothing.
const char* to_string(trace_mode m);

/// This process's mode (REDIST_TRACE, or the latest set_mode). Throws nothing.
trace_mode mode();
/// For this process from now on (every rank of a program should trace alike; the summary is collective).
/// Throws nothing.
/// @pre at MPI_Finalize, either every rank of MPI_COMM_WORLD traces (summary or calls) or none does
void set_mode(trace_mode m);

/// One row of the summary: an entry point and the path its calls took there.
struct entry_totals {
  std::string entry_point;  ///< "PDGEMM", "PDGEMR2D", ..., "transform_plan", "gemm_plan", "neighbor_plan", ...
  /// "redist/<strategy>" (transform: its exchange strategy; gemm: how panels travel), "delegated" (to the next
  /// p?gemm in the link chain: ScaLAPACK's), "local" (nothing to move: PBLAS's quick returns, beta scaling) or
  /// "rejected" (an argument error, reported through PXERBLA)
  std::string path;
  std::int64_t calls = 0;            ///< calls (C++ plans: executions)
  std::int64_t plan_cache_hits = 0;  ///< calls served by a cached plan
  std::int64_t plans_made = 0;     ///< plans made (cache misses and one-shot plans replaced; C++: make_transform_plan)
  double plan_seconds = 0;         ///< looking up and making plans
  double execution_seconds = 0;    ///< executing them (delegated: the time in ScaLAPACK's routine)
  std::int64_t bytes_sent = 0;     ///< payload bytes sent to other ranks
  std::int64_t messages_sent = 0;  ///< point-to-point messages sent to other ranks
};

/// This process's totals since the start or the last reset, in the summary's order (entry point, path).
/// Throws nothing.
std::vector<entry_totals> totals();
/// Forgets this process's totals (the calls file, if any, goes on). Throws nothing.
void reset();

/// The summary table over the ranks of comm: calls, plan-cache outcomes and plans per rank (the maximum over
/// ranks), seconds as the maximum over ranks of each rank's total, bytes and messages summed over ranks.
/// Collective; the text on comm's rank 0, empty elsewhere. What MPI_Finalize prints under REDIST_TRACE=summary is
/// this over MPI_COMM_WORLD.
/// @pre every rank of comm calls it (whatever its mode); MPI is initialized and not finalized
/// @throws error comm is not a valid communicator, or the gather failed (only where comm's error handler returns
///   errors; under MPI_ERRORS_ARE_FATAL, MPI aborts)
std::string summary(MPI_Comm comm);

/// Writes out the calls file's buffered lines (also done at MPI_Finalize and at exit). Throws nothing.
void flush();

}  // namespace redist::trace
