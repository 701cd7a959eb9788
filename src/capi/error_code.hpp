// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The one mapping from a redist error to the code every C entry point returns.
namespace redist::capi {

// The MPI error code for the exception in flight; call only inside a catch block. An MPI failure returns
// its MPI error class; the library's own errors map by kind (error_code.cpp; docs/errors.md). Records the
// exception's message for redist_last_error_message on this thread.
int current_error_code() noexcept;

}  // namespace redist::capi
