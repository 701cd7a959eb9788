// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Live objects behind a C handle type, by number: a number never reused (not an address), so a handle kept past its
// free, or any value create never returned, is refused instead of touching freed memory. A slot can be reserved
// (empty) before a collective creation that may fail on one rank alone, and filled after it, which cannot fail.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace redist::capi {

template <class Object, class Handle>
class handle_registry {
 public:
  std::uintptr_t reserve() {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uintptr_t id = next_++;
    objects_.emplace(id, nullptr);
    return id;
  }
  Handle fill(std::uintptr_t slot, std::unique_ptr<Object> object) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.find(slot)->second = std::move(object);
    return reinterpret_cast<Handle>(slot);
  }
  Handle add(std::unique_ptr<Object> object) { return fill(reserve(), std::move(object)); }
  void release(std::uintptr_t slot) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.erase(slot);
  }
  // The object of a live handle, or null (a reserved slot is not live yet); used outside the lock (one thread per
  // object at a time).
  Object* find(Handle handle) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = objects_.find(reinterpret_cast<std::uintptr_t>(handle));
    return it == objects_.end() ? nullptr : it->second.get();
  }
  // Takes a live handle's object out of the registry (null for any other value).
  std::unique_ptr<Object> take(Handle handle) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = objects_.find(reinterpret_cast<std::uintptr_t>(handle));
    if (it == objects_.end() || it->second == nullptr) return nullptr;
    std::unique_ptr<Object> taken = std::move(it->second);
    objects_.erase(it);
    return taken;
  }

 private:
  std::mutex mutex_;
  std::uintptr_t next_ = 1;  // 0 is the handle type's NULL
  std::map<std::uintptr_t, std::unique_ptr<Object>> objects_;
};

// The registry of one handle type; never destroyed, so usable from atexit code.
template <class Object, class Handle>
handle_registry<Object, Handle>& registry_of() {
  static auto* registry = new handle_registry<Object, Handle>;
  return *registry;
}

}  // namespace redist::capi
