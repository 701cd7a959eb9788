// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// MPI_Win_allocate_shared as the library uses it: each rank's segment starts on a cache line, and the window's
// set-up does not grow with its size.
//
// Why not plain MPI_Win_allocate_shared with alloc_shared_noncontig: MPICH's ch4 device (3.4 to 4.x) first tries
// to map such a window at one address on every rank (its symmetric heap, for RMA) whenever every rank's size is a
// whole number of pages or alloc_shared_noncontig is set; its check that the address range is free makes one
// system call per page of the whole node's window. That costs ~1.5 ms per MiB per rank at 4 ranks (0.35 s for a
// 100 MiB segment per rank on the development VM), against ~0.03 s whatever the size without it. A size that is
// not a whole number of pages, without alloc_shared_noncontig, skips that attempt; other MPIs ignore the padding.
// Segments are then contiguous in rank order: where two ranks' segments meet they share one page, which is all
// the NUMA placement (first touch by the owner) gives up.
#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace redist::mpi {

// Collective over `node` (a shared-memory communicator): this rank's segment of `bytes` bytes (0 allowed),
// 64-byte aligned, at *base (null for 0 bytes where the MPI gives no address). Returns the MPI error code and
// never throws, so that it can be the one call of an agreement's collective step; *window is the window made
// (MPI_WIN_NULL where none was) and the caller frees it.
int allocate_shared_window(std::int64_t bytes, MPI_Comm node, std::byte** base, MPI_Win* window) noexcept;

// The segment of `rank` (in the window's group) of a window from allocate_shared_window, as that rank sees its
// own *base. Returns the MPI error code.
int shared_window_segment(MPI_Win window, int rank, std::byte** base) noexcept;

}  // namespace redist::mpi
