// C entry points of node-shared input buffers (redist::node_buffer, the one-copy path of the shared-memory
// strategy): handles and error codes (never throw).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "redist/transform/node_buffer.hpp"
#include "../mpi/agreement.hpp"
#include "error_code.hpp"
#include "redist/redist.h"

namespace {

// Live buffers by handle: a number never reused (not an address), as the reshape plans' registry. A slot is
// reserved (empty) inside the agreed step before the collective allocation, and filled after it (which cannot fail).
class buffer_registry {
 public:
  std::uintptr_t reserve() {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uintptr_t id = next_++;
    buffers_.emplace(id, nullptr);
    return id;
  }
  redist_node_buffer fill(std::uintptr_t slot, std::unique_ptr<redist::node_buffer> buffer) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    buffers_.find(slot)->second = std::move(buffer);
    return reinterpret_cast<redist_node_buffer>(slot);
  }
  void release(std::uintptr_t slot) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    buffers_.erase(slot);
  }
  // The buffer of a live handle, or null.
  redist::node_buffer* find(redist_node_buffer buffer) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = buffers_.find(reinterpret_cast<std::uintptr_t>(buffer));
    return it == buffers_.end() ? nullptr : it->second.get();
  }
  // Takes a live handle's buffer out of the registry (null for any other value).
  std::unique_ptr<redist::node_buffer> take(redist_node_buffer buffer) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = buffers_.find(reinterpret_cast<std::uintptr_t>(buffer));
    if (it == buffers_.end() || it->second == nullptr) return nullptr;
    std::unique_ptr<redist::node_buffer> taken = std::move(it->second);
    buffers_.erase(it);
    return taken;
  }

 private:
  std::mutex mutex_;
  std::uintptr_t next_ = 1;  // 0 is REDIST_NODE_BUFFER_NULL
  std::map<std::uintptr_t, std::unique_ptr<redist::node_buffer>> buffers_;
};

buffer_registry& buffers() {
  static buffer_registry* registry = new buffer_registry;  // never destroyed: usable from atexit code
  return *registry;
}

}  // namespace

extern "C" {

int redist_node_buffer_create(MPI_Comm comm, int64_t bytes, redist_node_buffer* buffer) {
  std::uintptr_t slot = 0;
  try {
    std::unique_ptr<redist::node_buffer> owned;
    {
      // What can fail on one rank alone (a null pointer, memory for the handle) is agreed before the collective
      // allocation, which agrees on its own steps (the size, the node communicator, the window).
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
