#pragma once
// Large private buffers that a call fills whole (message buffers, work buffers): allocated so that their first
// touch is cheap.
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace redist::memory {

// Owns bytes from allocate_pages (freed with std::free).
using page_buffer = std::unique_ptr<std::byte, void (*)(void*)>;

// `bytes` uninitialised bytes (none: null). From 2 MiB on they start on a 2 MiB boundary and are offered
// transparent huge pages (madvise; a no-op where THP is off): a fresh 4 KiB page costs a fault of several
// microseconds on first touch, so a 48 MB buffer took 83-142 ms to touch on 4 KiB pages against 18-38 ms on
// huge pages (4 ranks on 2 cores). Allocated through the C heap, so that sanitizers still guard its ends.
// Throws std::bad_alloc.
page_buffer allocate_pages(std::int64_t bytes);

// Faults every page of [data, data + bytes) in with one write per 4 KiB (the kernel zeroes fresh pages; a
// memset would add a pass): planning pays the faults, not the first execution.
void touch_pages(std::byte* data, std::int64_t bytes);

}  // namespace redist::memory
