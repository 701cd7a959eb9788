// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Large private buffers that a call fills whole (message buffers, work buffers): allocated so that their first
// touch is cheap, and kept for the next plan when freed.
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace redist::machine {

// Frees (or keeps for reuse) a block of allocate_pages.
void release_pages(void* data);

// Owns bytes from allocate_pages.
using page_buffer = std::unique_ptr<std::byte, void (*)(void*)>;

// `bytes` uninitialised bytes (none: null), on a 64-byte cache line at least. From 2 MiB on they start on a 2 MiB boundary and are offered
// transparent huge pages (madvise; a no-op where THP is off) where huge_pages_offered(): a fresh 4 KiB page costs
// a fault of several microseconds on first touch, so a 48 MB buffer took 83-142 ms to touch on 4 KiB pages
// against 18-38 ms on huge pages (4 ranks on 2 cores of a VM that kept its memory). Blocks from 64 KiB on (page-aligned) are not returned to the system when
// released but kept, up to `REDIST_BUFFER_CACHE` in all (default 256 MiB per process; 0 turns the cache off), and
// handed to a later allocation of 50-100% of their size: its pages are already mapped, so the next plan's buffers
// cost no faults at all (smaller blocks come from the C heap, which reuses its own pages). Allocated through the
// C heap (so that sanitizers still guard the ends; sanitized builds keep no cache, so that a use after release is
// still caught). Throws std::bad_alloc.
page_buffer allocate_pages(std::int64_t bytes);

// Whether allocate_pages offers huge pages: not on a VM whose balloon reports free memory to the hypervisor,
// where a fresh huge page is faulted back in by the host on first touch (10-20x the time of 4 KiB pages after
// an idle spell; src/machine/pages.cpp). Read once per process from /sys/bus/virtio/devices.
bool huge_pages_offered();

// Whether a borrower should release blocks of `bytes` in all after each use: the cache keeps them for the next
// allocation (cache on, `bytes` within its limit; under 64 KiB the C heap reuses its pages), or the build is
// sanitized (released blocks are freed there, so that a use after release is caught). Otherwise the borrower
// should hold them: releasing would fault them in afresh next time.
bool returned_after_use(std::int64_t bytes) noexcept;

// Faults every page of [data, data + bytes) in with one write per 4 KiB (the kernel zeroes fresh pages; a
// memset would add a pass): planning pays the faults, not the first execution.
void touch_pages(std::byte* data, std::int64_t bytes);

// Where blocks of `from_bytes` or more come from instead of the C heap: a simulator's fake memory (SimGrid's
// SMPI_SHARED_MALLOC, whose pages all ranks share, so that a simulation of thousands of ranks holds each large
// buffer once; bench/smpi/). Such blocks are never cached. Set before the first allocation, once per process.
struct page_source {
  std::size_t from_bytes = 0;
  void* (*allocate)(std::size_t bytes) = nullptr;
  void (*release)(void* data) = nullptr;
};
void use_page_source(const page_source& source);

// Bytes kept by the cache now, and returning them all to the system (for tests).
std::int64_t cached_page_bytes();
void drop_cached_pages();

}  // namespace redist::machine
