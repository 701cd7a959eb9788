// SPDX-License-Identifier: BSD-3-Clause
#include "fault_injection.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace redist::fault {

#ifdef REDIST_FAULT_INJECTION
namespace {
std::atomic<long> reached{0};
std::atomic<long> armed{-1};  // -1: not read from the environment yet
thread_local int open_windows = 0;

long armed_point() {
  long n = armed.load();
  if (n != -1) return n;
  // REDIST_FAULT_INJECT="r:n": only world rank r is armed.
  n = 0;
  if (const char* text = std::getenv("REDIST_FAULT_INJECT")) {
    const std::string spec(text);
    const auto colon = spec.find(':');
    int initialized = 0, rank = -1;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (colon != std::string::npos && std::atol(spec.substr(0, colon).c_str()) == rank)
      n = std::atol(spec.c_str() + colon + 1);
  }
  long expected = -1;
  armed.compare_exchange_strong(expected, n);
  return armed.load();
}
}  // namespace

bool hit() {
  const long n = ++reached;
  const long target = armed_point();
  return target > 0 && n == target;
}

void open_window() noexcept { ++open_windows; }
void close_window() noexcept { --open_windows; }
bool window_open() noexcept { return open_windows > 0; }

void arm(long n) noexcept {
  reached = 0;
  armed = n > 0 ? n : 0;
}
long points() noexcept { return reached.load(); }
#else
void arm(long) noexcept {}
long points() noexcept { return 0; }
#endif

}  // namespace redist::fault
