// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Node-shared storage for source matrices: the one-copy path of the shared_memory strategy.
//
// With ordinary (private) buffers, the shared_memory strategy (which `automatic` picks for large data)
// copies twice per byte: the owner packs its pieces into a shared window, the receiver transforms them
// from there into A. When B lives in a node_buffer on every rank, a receiver reads its node peers' B
// directly and transforms it into its own A: one copy per byte, nothing packed.
//
// A node_buffer is allocated collectively (MPI_Win_allocate_shared on each node of `comm`); each rank
// gets its own segment of `bytes` bytes (any value per rank, 0 included), readable by the other ranks of
// its node. Use data() as the local storage of B (e.g. the ScaLAPACK local array) and pass it to
// transform_plan::execute as usual: a job reads peers' B directly when, on every rank of the plan's
// communicator (of the node, with transform_options::check_consistency off), its B pointer lies inside
// the segment of the same node_buffer and its layout has regular storage (block-cyclic, blocked).
// Otherwise the job silently takes the packing path: results are identical. Ranks whose B has no
// elements pass data() of their (possibly empty) segment.
//
// Because peers read it during an execution, B must not be modified while an execution that reads it
// runs on any rank of the node; execute() returns only after the node's peers finished reading.
// Destruction is collective over `comm` (MPI_Win_free), and must happen before MPI_Finalize.
#include <mpi.h>

#include <cstdint>
#include <memory>

namespace redist {

class node_buffer {
 public:
  node_buffer();  ///< empty: no segment, data() null, bytes() 0; throws nothing
  /// Allocates this rank's segment of `bytes` bytes in a shared window of its node. Collective over comm; the sizes
  /// are checked and agreed before any rank allocates, so a problem on one rank throws on every rank.
  /// @pre collective: every rank of comm calls it (bytes may differ between ranks); MPI is initialized
  /// @throws invalid_argument bytes < 0 on some rank
  /// @throws insufficient_memory bytes beyond some rank's physical memory
  /// @throws mpi_error an MPI call failed (MPI_Win_allocate_shared refusing a segment included)
  node_buffer(MPI_Comm comm, std::int64_t bytes);
  /// Frees the window: collective over the ranks of the buffer's communicator on this node (MPI_Win_free).
  /// @pre those ranks destroy their node_buffers in the same order; no execution reads the buffer; before
  ///   MPI_Finalize (after it the window is left to MPI)
  ~node_buffer();
  node_buffer(node_buffer&&) noexcept;
  /// Move assignment: the buffer this one held is freed first, collectively, as by the destructor.
  node_buffer& operator=(node_buffer&&) noexcept;

  void* data() const;          ///< this rank's segment (null for an empty node_buffer); throws nothing
  std::int64_t bytes() const;  ///< the segment's size (0 for an empty node_buffer); throws nothing
  /// data() as T*. Throws nothing.
  template <class T>
  T* as() const {
    return static_cast<T*>(data());
  }

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace redist
