// SPDX-License-Identifier: BSD-3-Clause
#include "pages.hpp"

#include "byte_count.hpp"
#include "cache_line.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define REDIST_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDIST_SANITIZED_HEAP 1
#endif
#endif

namespace redist::machine {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t small_page = std::size_t{4} << 10;
// From here on blocks are page-aligned and kept when released. Below it glibc's heap serves them from pages it
// already has; from 128 KiB on it maps fresh ones (a fault per 4 KiB page: 0.24 ms of the 0.28 ms plan of a
// 400^2 pdtran on 2 ranks of a 2-core VM, whose execution took 0.1 ms).
constexpr std::size_t kept_from = std::size_t{64} << 10;

constexpr std::size_t default_cache_limit = std::size_t{256} << 20;

// A virtio balloon (device 0x0005) that negotiated free page reporting (feature bit 5) hands free blocks of
// 2 MiB and up back to the hypervisor: a huge page taken from them is faulted back in by the host on first
// touch. On such a VM (Firecracker's, this project's development machine) 48 MiB per rank on huge pages took
// 0.27-0.28 s to touch after 30 s idle, 0.014-0.026 s right after another run, and 0.035-0.041 s on 4 KiB pages
// either way (4 ranks sharing 2 cores): a process's first pdgemr2d N = 4000 took 0.31 s instead of 0.09 s.
bool free_memory_reported_to_host() {
  std::error_code failed;
  for (const auto& device : std::filesystem::directory_iterator("/sys/bus/virtio/devices", failed)) {
    std::ifstream id(device.path() / "device"), features(device.path() / "features");
    std::string id_text, feature_bits;
    if (!(id >> id_text) || !(features >> feature_bits)) continue;
    if (id_text == "0x0005" && feature_bits.size() > 5 && feature_bits[5] == '1') return true;
  }
  return false;
}

// REDIST_BUFFER_CACHE (bytes, K/M/G suffix as REDIST_GEMM_MEMORY); a malformed value keeps nothing rather than
// holding memory nobody asked for.
std::size_t cache_limit_from_environment() {
#ifdef REDIST_SANITIZED_HEAP
  return 0;
#else
  const char* text = std::getenv("REDIST_BUFFER_CACHE");
  if (text == nullptr || *text == '\0') return default_cache_limit;
  const std::int64_t bytes = parse_byte_count(text);
  return bytes < 0 ? 0 : static_cast<std::size_t>(bytes);
#endif
}

// Every live or kept block from kept_from on, by address, with its size; kept blocks also in `kept` (oldest first).
struct page_cache {
  std::mutex lock;
  std::unordered_map<void*, std::size_t> sizes;
  std::vector<void*> kept;
  std::size_t kept_bytes = 0;
  const std::size_t limit = cache_limit_from_environment();
  page_source source;                     // use_page_source's (allocate null: none)
  std::unordered_set<void*> from_source;  // live blocks of the source
};

page_cache& cache() {
  static page_cache* c = new page_cache;  // never destroyed: buffers may be released during static destruction
  return *c;
}

void* take_kept(std::size_t size) {
  page_cache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  std::size_t best = c.kept.size();
  for (std::size_t k = 0; k < c.kept.size(); ++k) {
    const std::size_t have = c.sizes[c.kept[k]];
    if (have >= size && have / 2 <= size && (best == c.kept.size() || have < c.sizes[c.kept[best]])) best = k;
  }
  if (best == c.kept.size()) return nullptr;
  void* data = c.kept[best];
  c.kept.erase(c.kept.begin() + static_cast<std::ptrdiff_t>(best));
  c.kept_bytes -= c.sizes[data];
  return data;
}
}  // namespace

void use_page_source(const page_source& source) {
  page_cache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  c.source = source;
}

page_buffer allocate_pages(std::int64_t bytes) {
  if (bytes <= 0) return page_buffer(nullptr, release_pages);
  const auto size = static_cast<std::size_t>(bytes);
  {
    page_cache& c = cache();
    std::lock_guard<std::mutex> guard(c.lock);
    if (c.source.allocate != nullptr && size >= c.source.from_bytes) {
      void* data = c.source.allocate(size);
      if (data == nullptr) throw std::bad_alloc();
      try {
        c.from_source.insert(data);
      } catch (...) {
        c.source.release(data);
        throw;
      }
      return page_buffer(static_cast<std::byte*>(data), release_pages);
    }
  }
  if (size < kept_from) {  // on a cache line: BLAS and vector copies keep their rate there (malloc gives 16 bytes)
    void* data = nullptr;
    if (posix_memalign(&data, static_cast<std::size_t>(cache_line), size) != 0) throw std::bad_alloc();
    return page_buffer(static_cast<std::byte*>(data), release_pages);
  }
  if (void* data = take_kept(size)) return page_buffer(static_cast<std::byte*>(data), release_pages);
  void* data = nullptr;
  const std::size_t alignment = size >= huge_page ? huge_page : small_page;
  // Short of memory, the kept blocks go back to the system before the allocation fails.
  if (posix_memalign(&data, alignment, size) != 0) {
    drop_cached_pages();
    if (posix_memalign(&data, alignment, size) != 0) throw std::bad_alloc();
  }
#ifdef MADV_HUGEPAGE
  // Whole huge pages only: the rest of the last one may belong to another allocation.
  if (size >= huge_page && huge_pages_offered()) madvise(data, size / huge_page * huge_page, MADV_HUGEPAGE);
#endif
  page_cache& c = cache();
  try {
    std::lock_guard<std::mutex> guard(c.lock);
    c.sizes.emplace(data, size);
  } catch (...) {
    std::free(data);
    throw;
  }
  return page_buffer(static_cast<std::byte*>(data), release_pages);
}

// Called from destructors: nothing here may throw, so blocks are freed under the lock rather than collected.
void release_pages(void* data) {
  if (data == nullptr) return;
  page_cache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  if (c.from_source.erase(data) != 0) {
    c.source.release(data);
    return;
  }
  const auto found = c.sizes.find(data);
  if (found == c.sizes.end()) {  // under kept_from: plain heap
    std::free(data);
    return;
  }
  const std::size_t size = found->second;
  bool kept = false;
  if (size <= c.limit) {
    try {
      c.kept.push_back(data);
      kept = true;
    } catch (...) {
    }
  }
  if (!kept) {
    c.sizes.erase(found);
    std::free(data);
    return;
  }
  c.kept_bytes += size;
  // Over the limit: the oldest kept blocks go back to the system.
  while (c.kept_bytes > c.limit) {
    void* oldest = c.kept.front();
    c.kept.erase(c.kept.begin());
    const auto entry = c.sizes.find(oldest);
    c.kept_bytes -= entry->second;
    c.sizes.erase(entry);
    std::free(oldest);
  }
}

bool huge_pages_offered() {
  static const bool offered = !free_memory_reported_to_host();
  return offered;
}

bool returned_after_use(std::int64_t bytes) noexcept {
#ifdef REDIST_SANITIZED_HEAP
  (void)bytes;
  return true;
#else
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0));
  return size < kept_from || size <= cache().limit;
#endif
}

void touch_pages(std::byte* data, std::int64_t bytes) {
  for (std::int64_t at = 0; at < bytes; at += static_cast<std::int64_t>(small_page)) data[at] = std::byte{0};
  if (bytes > 0) data[bytes - 1] = std::byte{0};
}

std::int64_t cached_page_bytes() {
  page_cache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  return static_cast<std::int64_t>(c.kept_bytes);
}

void drop_cached_pages() {
  page_cache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  for (void* block : c.kept) {
    c.sizes.erase(block);
    std::free(block);
  }
  c.kept.clear();
  c.kept_bytes = 0;
}

}  // namespace redist::machine
