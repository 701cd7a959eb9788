// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The MPI calls redist makes with 64-bit counts, and what it needs of an MPI beyond MPI-3.1, in one place.
// Where the MPI has the MPI-4 large-count calls (`_c`) and MPI_Info_get_string, these use them; elsewhere
// (Open MPI 4.1, say) MPI-3.1 equivalents with the same results: counts and displacements that fit in int
// go to the int call, larger ones travel in derived datatypes. cmake/mpi_compat.cmake detects the MPI's
// calls (REDIST_HAVE_MPI_LARGE_COUNT, REDIST_HAVE_MPI_INFO_GET_STRING; REDIST_MPI_FALLBACKS=ON forces the
// equivalents, to test them on any MPI). Only compat.cpp depends on those macros.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checked.hpp"

namespace redist::mpi {

// True when the MPI-4 large-count calls are used; false: their MPI-3.1 equivalents.
bool has_large_counts() noexcept;

// Beyond this count or displacement the MPI-3.1 equivalents build derived datatypes: INT_MAX, unless the
// environment variable REDIST_MPI_INT_LIMIT (read once; tests) sets a smaller one, so that small data take
// the large-count paths. Without effect where the MPI has the large-count calls.
std::int64_t int_limit() noexcept;

// Whether `mine` holds on any rank of comm (one allreduce): the forms of an MPI-3.1 equivalent of a
// collective must be the same on every rank.
bool on_any_rank(MPI_Comm comm, bool mine);

// ---- datatypes ----

struct type_bounds {
  std::int64_t lb = 0, extent = 0;
};
std::int64_t type_size(MPI_Datatype t);
type_bounds type_extent(MPI_Datatype t);
type_bounds type_true_extent(MPI_Datatype t);

// Whether t may be used in communication: a predefined datatype, or one committed. MPI has no such query;
// MPI_Pack of no element refuses an uncommitted datatype on MPICH and Open MPI and reads no memory. comm returns
// errors (a library's private duplicate): the refusal is raised there.
bool is_committed(MPI_Datatype t, MPI_Comm comm);

// `count` elements of t from byte `displacement` on (relative to the buffer), as one committed datatype
// (count 1), for any count.
datatype_handle typed_block(MPI_Datatype t, std::int64_t count, std::int64_t displacement);

// Committed hindexed type: blocks of lengths[i] elements of `element` at byte displacements[i].
datatype_handle hindexed(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& displacements,
                         MPI_Datatype element);
// Committed hindexed type of single elements at byte displacements[i].
datatype_handle hindexed_single(const std::vector<std::int64_t>& displacements, MPI_Datatype element);

// A committed datatype with t's memory layout (lower bound and extent included) whose elements are MPI_BYTE:
// t's data bytes in t's signature order, size(t) bytes per element. Data copied through it into contiguous
// bytes is the same byte string whichever datatype of the same signature a rank uses, and does not depend on
// how an MPI packs (MPI_Pack's format is the implementation's; MPI_Pack_size is only a bound). Throws
// invalid_datatype for a datatype it cannot take apart.
datatype_handle byte_mirror(MPI_Datatype t);

// ---- point to point ----

// Persistent requests of 64-bit counts. A derived datatype built for a large count goes to `keep`, which
// must outlive the request.
MPI_Request send_init(const void* buf, std::int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      std::vector<datatype_handle>& keep);
MPI_Request recv_init(void* buf, std::int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      std::vector<datatype_handle>& keep);

// Copies `from_count` elements of from_type at `from` to `to_count` elements of to_type at `to` (the same
// signature) by a message to this rank on comm, tag 0: MPI moves the data, whatever the datatypes. comm must
// have no receive from this rank pending (a library's private duplicate).
void local_copy(const void* from, std::int64_t from_count, MPI_Datatype from_type, void* to, std::int64_t to_count,
                MPI_Datatype to_type, MPI_Comm comm);

// ---- collectives and one-sided ----

// MPI_Alltoallv with 64-bit counts and displacements (in elements of the datatypes' extents). `wide` must be
// the same on every rank: whether any rank's counts or displacements exceed int_limit() (on_any_rank); the
// MPI-3.1 equivalent is then MPI_Alltoallw with a datatype per peer. Ignored with large-count calls. Blocking, so
// not watched: Open MPI 4.1's MPI_Ialltoallv, completed, left the communicator's next MPI_Comm_idup waiting forever
// on every rank (the transform tests at 4 ranks; MPICH completes both). Its one caller is the alltoallv transform
// strategy's execution (MPI's collective, on request only), after a watched wait that every rank has left (the
// execution's agreement, or a barrier): it cannot wait there for a process that skipped the call.
void alltoallv(const void* sendbuf, const std::int64_t* sendcounts, const std::int64_t* sdispls, MPI_Datatype sendtype,
               void* recvbuf, const std::int64_t* recvcounts, const std::int64_t* rdispls, MPI_Datatype recvtype,
               MPI_Comm comm, bool wide);

// MPI_Iallgatherv's arguments (the same datatype on both sides, 64-bit counts and displacements in elements),
// in the form this MPI takes, prepared once: every rank has all counts, so all choose the same form. The
// object must outlive the requests it starts (MPI reads the arrays and datatypes until completion).
class allgatherv_args {
 public:
  allgatherv_args() = default;
  allgatherv_args(std::int64_t sendcount, const std::vector<std::int64_t>& recvcounts,
                  const std::vector<std::int64_t>& displacements, MPI_Datatype type);
  void start(const void* sendbuf, void* recvbuf, MPI_Comm comm, MPI_Request* request) const;

 private:
  enum class form { large, ints, per_peer } form_ = form::ints;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::int64_t sendcount_ = 0;
  std::vector<MPI_Count> large_counts_;
  std::vector<MPI_Aint> large_displs_;
  std::vector<int> recv_counts_, displs_;              // ints; per_peer: 1 or 0 per peer, and zeros
  std::vector<int> send_counts_;                       // per_peer: 1 or 0 per peer
  std::vector<MPI_Datatype> send_types_, recv_types_;  // per_peer (handles owned below)
  std::vector<datatype_handle> owned_;
};

// MPI_Reduce_scatter with 64-bit counts (sendbuf holds the blocks one after another; not MPI_IN_PLACE).
// Beyond int, the equivalent reduces each block to its rank in pieces (MPI_Reduce): predefined operations
// are defined on predefined datatypes only. Made nonblocking and waited on through the watchdog (checked.hpp).
void reduce_scatter(const void* sendbuf, void* recvbuf, const std::int64_t* recvcounts, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm);

// MPI_Put of `count` elements to the same count and type at target_disp (in the window's displacement units).
void put(const void* origin, std::int64_t count, MPI_Datatype type, int target, std::int64_t target_disp, MPI_Win win);

// Whether windows made with MPI_Win_create (memory the caller allocated) can be relied on in this process: false
// where the MPI is Open MPI up to 4.x and its one-sided component selection (the MPI_T control variable "osc": the
// OMPI_MCA_osc variable or an MCA parameter file; Debian's default is "^ucx,pt2pt") leaves osc/rdma eligible,
// whose windows fail on some ranks and whose puts can spin forever (docs/mpi.md); `why` then says so. True
// elsewhere (MPICH, Open MPI with osc/rdma excluded, other MPIs: their creation failures are caught where the
// windows are made). Read once per process.
bool created_windows_reliable(std::string& why);

// Whether an Open MPI component selection string ("a,b": only these; "^a,b": all but these; empty: all) lets
// `component` be selected.
bool mca_selection_allows(const std::string& selection, const std::string& component);

// ---- info ----

// The value of `key` in info (false when absent); MPI_Info_get_string, or MPI_Info_get_valuelen + MPI_Info_get.
bool info_get(MPI_Info info, const char* key, std::string& value);

}  // namespace redist::mpi
