// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Internals of the in-place alltoallv (include/redist/exchange/inplace.hpp): the validated problem every
// algorithm starts from, the local block operations they share, and the algorithms' entry points.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "machine/pages.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "redist/exchange/inplace.hpp"

namespace redist::exchange::inplace_detail {

// ---- Local block operations (inplace_local.cpp) ----------------------------------------------------------
// A rank's buffer is a sequence of blocks laid end to end from its start: each block is a run of consecutive
// bytes that moves as a unit, ordered by `key` (the final position of its first element). The operations
// rearrange the bytes in place with no memory beyond the caller's work buffer (any size >= 1 byte; larger
// is faster) and return the number of bytes they moved, for the report.

struct block {
  std::int64_t key = 0;
  std::int64_t bytes = 0;
};

// Exchanges the adjacent byte ranges [first, first+left) and [first+left, first+left+right).
std::int64_t rotate_bytes(std::byte* first, std::int64_t left, std::int64_t right, std::byte* work,
                          std::int64_t work_bytes);

// blocks[0, middle) and blocks[middle, end) are each sorted by key (non-decreasing) and lie end to end from
// `base`. Afterwards blocks is sorted by key, stable (of equal keys the first run's blocks come first, each
// run keeping its order), and the bytes follow.
std::int64_t merge_blocks(std::byte* base, std::vector<block>& blocks, std::size_t middle, std::byte* work,
                          std::int64_t work_bytes);

// Stable sort of all the blocks by key, bytes following.
std::int64_t sort_blocks(std::byte* base, std::vector<block>& blocks, std::byte* work, std::int64_t work_bytes);

// ---- Front end (inplace.cpp) ------------------------------------------------------------------------------
// ---- The validated problem -----------------------------------------------------------------------------
// Everything is checked and agreed on by all ranks before an algorithm runs: counts are non-negative, every
// rank's capacity holds its send and its receive total, recvcounts match the senders.
struct problem {
  MPI_Comm comm = MPI_COMM_NULL;  // a private duplicate: any tag is free
  int rank = 0;
  int size = 1;
  std::byte* buf = nullptr;
  std::int64_t extent = 1;                   // bytes per element; elements are moved as whole extents
  std::int64_t capacity = 0;                 // elements of buf, this rank
  std::vector<std::int64_t> sendcounts;      // s(rank, j), elements
  std::vector<std::int64_t> recvcounts;      // s(j, rank)
  std::vector<std::int64_t> offset_in_dest;  // sum of s(k, j) over k < rank: where s(rank, j) starts in S(j)
                                             // (pairwise and bitonic only: compute_offsets_in_dest)
  std::vector<std::int64_t> send_totals;     // every rank's sum of sendcounts
  std::vector<std::int64_t> recv_totals;     // every rank's sum of recvcounts
  std::vector<std::int64_t> capacities;      // every rank's capacity
  std::byte* work = nullptr;
  std::int64_t work_bytes = 0;
};

using chunked_fit_flags = std::array<std::int64_t, 6>;  // see chunked_fits_here

// The work buffer, left uninitialised (zeroing would only add a pass), on huge pages where it can be: an
// execution touches its whole buffer, which on 4 KiB pages costs about as much as streaming the data through
// it. A plan faults it in once when it is made (touch), so that executions pay no faults.
class work_buffer {
 public:
  explicit work_buffer(std::int64_t bytes) : data_(machine::allocate_pages(bytes)), bytes_(bytes) {}
  std::byte* get() const { return data_.get(); }
  void touch() { machine::touch_pages(data_.get(), bytes_); }

 private:
  machine::page_buffer data_;
  std::int64_t bytes_;
};

struct validated {
  validated();
  validated(validated&&) noexcept;
  validated& operator=(validated&&) noexcept;
  ~validated();
  problem p;                                     // offset_in_dest still unset
  std::shared_ptr<const mpi::comm_handle> comm;  // p.comm's owner, shared with the cache on the caller's
  std::unique_ptr<work_buffer> work;             // p.work_bytes of it, p.work points into it
  bool symmetric = false;                        // s(i,j) == s(j,i) for every pair
  chunked_fit_flags chunked_fits_everywhere{};
};
// Collective: checks everything (the same redist::invalid_argument subclass on every rank when anything is
// wrong), acquires the private communicator and the work buffer, learns the peers' counts.
// Three collectives: an Alltoall of the counts, an Allgather of six words, one Allreduce. buf is only checked
// (not null when capacity > 0) where check_buf says so: a plan gets its buffer at each execution.
validated validate(const void* buf, bool check_buf, std::int64_t capacity, const std::int64_t* sendcounts,
                   const std::int64_t* recvcounts, MPI_Datatype type, MPI_Comm comm, const inplace_options& options);
// One MPI_Exscan on p.comm, once.
void compute_offsets_in_dest(problem& p);
// A private duplicate of comm, cached on it (made by the first call with comm): collective. Shared, so that a
// plan keeps it alive when the caller frees comm first.
std::shared_ptr<const mpi::comm_handle> private_comm(MPI_Comm comm);
// Where the datatype's extent and size ride in the agreement (their minima and maxima over the ranks).
struct datatype_slots {
  std::size_t extent_min = 0, extent_max = 0, size_min = 0, size_max = 0;
};
// The start of every in-place plan, collective: the private communicator, then the datatype's checks (lower
// bound 0, data within a positive extent) as failures of `agreed`, and its extent and size as riders (`slots`).
// Returns the extent (1 for a refused type).
std::int64_t agree_on_start(mpi::agreement& agreed, MPI_Comm comm, MPI_Datatype type,
                            std::shared_ptr<const mpi::comm_handle>& owned_comm, datatype_slots& slots);
// After `agreed` concluded: invalid_datatype on every rank alike when the ranks passed datatypes of different
// extents or sizes (a rank counting other bytes would fail alone, later, and leave the others waiting).
void refuse_differing_datatypes(const mpi::agreement& agreed, const datatype_slots& slots);
// Whether elements * extent bytes fit in 64 bits.
bool fits_bytes(std::int64_t elements, std::int64_t extent);
constexpr std::int64_t min_work_bytes = std::int64_t{64} << 10;
constexpr std::int64_t max_work_bytes = std::int64_t{1} << 30;

// This rank's counters, summed into the report (inplace_report's vocabulary).
struct counters {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t messages_sent = 0;
  std::int64_t messages_received = 0;
  std::int64_t bytes_local = 0;
  std::int64_t metadata_bytes = 0;
};

// ---- The one communication primitive (inplace.cpp) -------------------------------------------------------
// Sends the bytes [region, region+send_bytes) to peer while receiving recv_bytes from it into
// [region, region+recv_bytes), in place: pieces travel through two slots of the work buffer (the receiver picks
// the piece size and tells the sender), two in flight each way while an arrived one is copied into place once
// our bytes under it have left. The peer makes the matching call (its send_bytes = our recv_bytes). When
// recv_bytes > send_bytes the bytes past region+send_bytes must be free (they are received directly). Uses tags
// `tag` .. `tag + 3`. Blocking; counts into c. peer == own rank: the sizes must be equal, no-op.
void swap_in_place(MPI_Comm comm, int peer, int tag, std::byte* region, std::int64_t send_bytes,
                   std::int64_t recv_bytes, std::byte* work, std::int64_t work_bytes, counters& c);

// The MPI_IN_PLACE form (alltoallv_inplace_symmetric): with symmetric counts every pair of areas swaps in place,
// the rounds of a 1-factorization in batches of concurrent streams. comm: a private communicator; counts and
// displs in elements of `extent` bytes, already checked.
void run_symmetric_swaps(MPI_Comm comm, std::byte* buf, const std::vector<int>& counts, const std::vector<int>& displs,
                         std::int64_t extent, std::byte* work, std::int64_t work_bytes, counters& c);

// ---- Algorithms -----------------------------------------------------------------------------------------
// Each is collective over problem.comm and leaves buf as the result (s(0,rank) .. s(P-1,rank)).

// inplace.cpp: direct exchange, each block sent once to its owner in pieces of the work buffer.
// chunked's schedules (pairs, shift up, shift down), batched (the streams of a batch at once) and then one
// step at a time, which fits more often: chunked_fits_here says where this rank stays within its capacity
// (local); the front end agrees the flags (their minimum) in its one reduction. plan_chunked: the first that
// fits everywhere; with symmetric counts the batched pair schedule, which always fits (every step trades equal
// sizes).
enum class chunked_schedule { pairs, shift_up, shift_down };
struct chunked_plan {
  bool fits = false;
  chunked_schedule sched = chunked_schedule::pairs;
  std::size_t batch = 1;
};
chunked_fit_flags chunked_fits_here(const problem& p);
chunked_plan plan_chunked(const problem& p, bool symmetric, const chunked_fit_flags& everywhere);
void run_chunked(const problem& p, const chunked_plan& plan, counters& c);

// inplace_pairwise.cpp: the paper's Section 3.3. pairwise_max_bytes is its dry run on the counts alone
// (collective, no data moved): the largest number of bytes any rank would send.
std::int64_t pairwise_max_bytes(const problem& p);
void run_pairwise(const problem& p, counters& c);

// inplace_bitonic.cpp: the paper's Section 3.2 for any P. bitonic_fits: every capacity holds the largest
// send or receive total (the blocks of the sort all have that many slots).
bool bitonic_fits(const problem& p);
std::int64_t bitonic_max_bytes(const problem& p);  // an upper bound of the bytes a rank sends
void run_bitonic(const problem& p, counters& c);

}  // namespace redist::exchange::inplace_detail
