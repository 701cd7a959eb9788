// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The watchdog of redist's waits (docs/errors.md, "A wait that is never silent"): a wait inside redist that lasts
// the timeout is reported once on stderr, with where it waits; with timeout_action::abort the job then ends.
// The environment sets it for a process (REDIST_TIMEOUT: seconds, default 300, 0 never; REDIST_TIMEOUT_ACTION: warn
// or abort); set_timeout replaces both for this process from now on.
#include "redist/error.hpp"

namespace redist {

enum class timeout_action {
  warn,   ///< report the wait and go on waiting (a slow peer is no error)
  abort,  ///< report it and end the job (MPI_Abort on MPI_COMM_WORLD)
};
const char* to_string(timeout_action a);  ///< "warn", "abort" (redist/names.hpp parses them); else "?". Throws nothing.

/// Sets this process's timeout (seconds; 0: never) and its action, in place of REDIST_TIMEOUT and
/// REDIST_TIMEOUT_ACTION, from now on; a plan's transform_options::timeout_seconds still overrides the seconds.
/// Each rank's own: ranks need not agree.
/// @throws invalid_argument seconds negative, NaN or infinite
void set_timeout(double seconds, timeout_action action = timeout_action::warn);
/// The timeout in force, in seconds (0: waits are never reported).
double timeout() noexcept;

}  // namespace redist
