#pragma once
// In-place variable-size all-to-all with bounded extra memory (docs/inplace.md; Zhuang, Nakashima and
// Nagamochi, "A memory-efficient algorithm and its implementation of variable-size all-to-all communication").
//
// On entry rank i's buffer holds s(i,0) .. s(i,P-1) concatenated (sendcounts[j] = |s(i,j)| elements); on exit
// it holds s(0,i) .. s(P-1,i) concatenated, in that order, each s(j,i) in its original element order.
// Extra memory: O(P) words per rank plus one work buffer of options.work_bytes, never proportional to the data.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace redist::exchange {

enum class inplace_algorithm {
  automatic,  // chunked when it fits, else the cheaper of pairwise and bitonic by their byte counts
  chunked,    // every block goes straight to its owner once, streamed through the work buffer (needs room:
              // see docs/inplace.md; the symmetric case always fits)
  pairwise,   // the paper's asymmetric pairwise exchange (Section 3.3): any counts, 2P-3 rounds
  bitonic,    // the paper's bitonic-sort algorithm (Section 3.2), any P: needs every capacity >= the largest
              // send or receive total over the ranks
};
const char* to_string(inplace_algorithm a) noexcept;

// Every rank must pass the same options (checked: refused otherwise).
struct inplace_options {
  inplace_algorithm algorithm = inplace_algorithm::automatic;
  // Bytes of the one work buffer (staging of streamed pieces and local rotations), 64 KiB .. 1 GiB.
  std::int64_t work_bytes = std::int64_t{4} << 20;
  // pairwise's worst-case guard: when its forwarding would send more than this many times the bytes of the
  // largest total (the paper's O(NP) cases), bitonic runs instead where it applies (the report says so).
  // Infinity: pairwise always.
  double pairwise_guard = 4.0;
};

// What a call did, the same algorithm on every rank; counters are this rank's.
struct inplace_report {
  inplace_algorithm algorithm = inplace_algorithm::automatic;
  std::string reason;                    // why this algorithm (automatic, fallbacks)
  std::vector<std::int64_t> recvcounts;  // what each rank sent here: the layout of the result
  std::int64_t received_elements = 0;    // their sum: the result's length
  std::int64_t bytes_sent = 0;           // payload bytes this rank sent
  std::int64_t messages_sent = 0;        // point-to-point messages this rank sent (pieces included)
  std::int64_t bytes_moved_locally = 0;  // bytes copied or rotated inside the buffer (staging included)
  std::int64_t work_bytes = 0;           // the work buffer it allocated
  std::int64_t metadata_bytes = 0;       // peak bookkeeping (count vectors, block lists), O(P)
};

// Collective over comm. capacity >= max(sum of sendcounts, sum of received counts) elements of `type`;
// recvcounts may be null (then they are computed) or must equal what the peers send. `type` may be any
// committed datatype with lower bound 0 whose data lie within its extent; elements are moved as whole
// extents. Bad input (negative counts, a capacity too small, recvcounts that do not match the senders, an
// unsuitable type, an algorithm whose requirement fails) throws redist::invalid_argument on every rank
// before any data moves.
inplace_report alltoallv_inplace(void* buf, std::int64_t capacity, const std::int64_t* sendcounts,
                                 const std::int64_t* recvcounts, MPI_Datatype type, MPI_Comm comm,
                                 const inplace_options& options = {});

// MPI_Alltoallv(MPI_IN_PLACE, ...) semantics: rank i's counts[j] elements at displacement displs[j] (in
// extents of type) are replaced by the counts[j] elements rank j has at its displs[i]. MPI's rules are checked:
// counts symmetric (rank i's counts[j] == rank j's counts[i]), non-negative, areas disjoint; bytes outside the
// areas stay untouched. Each pair of blocks swaps in place through the work buffer.
inplace_report alltoallv_inplace_symmetric(void* buf, const int* counts, const int* displs, MPI_Datatype type,
                                           MPI_Comm comm, std::int64_t work_bytes = std::int64_t{4} << 20);

// The fixed-size case: `count` elements to and from every rank, buf holding P*count.
inplace_report alltoall_inplace(void* buf, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                                const inplace_options& options = {});

}  // namespace redist::exchange
