// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// --help / -h for the benchmark programs, alike in all of them: the option parser throws usage_requested with the
// program's usage text, and main() catches it, prints the text on standard output (rank 0 only in MPI programs:
// every rank parses the same arguments and throws alike) and exits 0 after finalizing MPI as on success.
// usage_requested derives from nothing, so that the programs' `catch (const std::exception&)` error paths
// (status 2, MPI_Abort in some) can never take it for an error, whatever the order of the catch clauses.
#include <cstdio>
#include <string>

namespace redist_baseline {

struct usage_requested {
  std::string text;
};

inline bool is_help_argument(const std::string& arg) { return arg == "--help" || arg == "-h"; }

inline void print_usage(const usage_requested& usage) { std::fputs(usage.text.c_str(), stdout); }

}  // namespace redist_baseline
