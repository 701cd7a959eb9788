#include "pages.hpp"

#include <sys/mman.h>

#include <new>

namespace redist::memory {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t small_page = std::size_t{4} << 10;
}  // namespace

page_buffer allocate_pages(std::int64_t bytes) {
  if (bytes <= 0) return page_buffer(nullptr, std::free);
  const auto size = static_cast<std::size_t>(bytes);
  void* data = nullptr;
  if (size < huge_page) {
    data = std::malloc(size);
  } else if (posix_memalign(&data, huge_page, size) != 0) {
    data = nullptr;
  }
  if (data == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Whole huge pages only: the rest of the last one may belong to another allocation.
  if (size >= huge_page) madvise(data, size / huge_page * huge_page, MADV_HUGEPAGE);
#endif
  return page_buffer(static_cast<std::byte*>(data), std::free);
}

void touch_pages(std::byte* data, std::int64_t bytes) {
  for (std::int64_t at = 0; at < bytes; at += static_cast<std::int64_t>(small_page)) data[at] = std::byte{0};
  if (bytes > 0) data[bytes - 1] = std::byte{0};
}

}  // namespace redist::memory
