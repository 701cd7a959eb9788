// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Fault injection for tests, compiled in only with -DREDIST_FAULT_INJECTION=ON. Injection points are the
// places where a call can fail before its agreement decides: every step an agreement runs (acquiring a
// resource, a local check) and every checked MPI call made while an agreement is open. Each rank counts the
// points it reaches; an armed rank fails its n-th point: a step throws insufficient_memory, an MPI call
// (made for real, so that the other ranks are not held up) throws mpi_error. Both messages say "injected".
// Armed by fault::arm() (tests) or by REDIST_FAULT_INJECT="r:n" (world rank r fails its n-th point,
// counted from MPI_Init).
namespace redist::fault {

#ifdef REDIST_FAULT_INJECTION
constexpr bool compiled_in = true;
// Counts a point on this rank; true when it is the armed one (the caller then fails).
bool hit();
// Steps of agreements open on this thread (MPI calls count only inside them).
void open_window() noexcept;
void close_window() noexcept;
bool window_open() noexcept;
#else
constexpr bool compiled_in = false;
constexpr bool hit() { return false; }
inline void open_window() noexcept {}
inline void close_window() noexcept {}
constexpr bool window_open() noexcept { return false; }
#endif

// For tests (no-ops when not compiled in): restart the count at 0 and fail the n-th point from now on
// (n <= 0: count only); the number of points reached since the last arm().
void arm(long n) noexcept;
long points() noexcept;

}  // namespace redist::fault
