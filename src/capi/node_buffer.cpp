// SPDX-License-Identifier: BSD-3-Clause
// C entry points of node-shared input buffers (redist::node_buffer, the one-copy path of the shared-memory
// strategy): handles and error codes (never throw).
#include <cstdint>
#include <memory>

#include "error_code.hpp"
#include "handle_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/watchdog.hpp"
#include "redist/redist.h"
#include "redist/transform/node_buffer.hpp"

namespace {

auto& buffers() { return redist::capi::registry_of<redist::node_buffer, redist_node_buffer>(); }

}  // namespace

extern "C" {

int redist_node_buffer_create(MPI_Comm comm, int64_t bytes, redist_node_buffer* buffer) {
  const redist::mpi::wait_label label("redist_node_buffer_create", nullptr);
  std::uintptr_t slot = 0;
  try {
    std::unique_ptr<redist::node_buffer> owned;
    {
      // What can fail on one rank alone (a null pointer, memory for the handle and its registry slot) is agreed
      // before the collective allocation, which agrees on its own steps (the size, the node communicator, the
      // window); the slot is filled after it.
      redist::mpi::agreement agreed(comm);
      agreed.attempt([&] {
        if (buffer == nullptr) throw redist::invalid_argument("buffer is a null pointer");
        owned = std::make_unique<redist::node_buffer>();
        slot = buffers().reserve();
      });
      agreed.conclude();
    }
    *owned = redist::node_buffer(comm, bytes);
    *buffer = buffers().fill(slot, std::move(owned));
    return MPI_SUCCESS;
  } catch (...) {
    if (slot != 0) buffers().release(slot);
    if (buffer != nullptr) *buffer = REDIST_NODE_BUFFER_NULL;
    return redist::capi::current_error_code();
  }
}

void* redist_node_buffer_data(redist_node_buffer buffer) {
  const redist::node_buffer* b = buffers().find(buffer);
  return b == nullptr ? nullptr : b->data();
}

int redist_node_buffer_free(redist_node_buffer* buffer) {
  try {
    if (buffer == nullptr) throw redist::invalid_argument("redist_node_buffer_free: buffer is a null pointer");
    if (*buffer == REDIST_NODE_BUFFER_NULL) return MPI_SUCCESS;
    std::unique_ptr<redist::node_buffer> taken = buffers().take(*buffer);
    *buffer = REDIST_NODE_BUFFER_NULL;
    if (taken == nullptr) throw redist::invalid_argument("redist_node_buffer_free: the buffer is freed or unknown");
    taken.reset();  // collective: MPI_Win_free over the node
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

}  // extern "C"
