// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Checked MPI calls and small RAII helpers used throughout the library.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "redist/error.hpp"

namespace redist::mpi {

// Throws redist::mpi_error naming the call when code != MPI_SUCCESS.
void check(int code, const char* call);

#define REDIST_MPI_CHECK(call) ::redist::mpi::check((call), #call)

// The same check for local calls (communicator queries, attribute caching, keyvals), which fail only for an
// invalid handle: no fault-injection point (fault_injection.hpp), since a rank failing in a local call just
// before a collective would skip the collective the other ranks enter, and an injected failure of a call made
// for real (an attribute set) would free what MPI holds.
void check_local(int code, const char* call);

#define REDIST_MPI_CHECK_LOCAL(call) ::redist::mpi::check_local((call), #call)

// The same check for calls that make an MPI object collectively (a communicator, a shared window): no injection
// point either. An injected failure of a creation made for real would leave this rank without the object its peers
// keep and use in their next collective; the collective step that wraps the creation (agreement::collective) is
// its injection point, once the object is owned.
inline void check_creation(int code, const char* call) { check_local(code, call); }

#define REDIST_MPI_CHECK_CREATION(call) ::redist::mpi::check_creation((call), #call)

int rank(MPI_Comm comm);
int size(MPI_Comm comm);

// True once MPI_Finalize has been called: MPI objects owned by library handles (plans kept in globals,
// say) can then no longer be freed, and destructors leave them to the finished MPI library.
bool finalized() noexcept;

struct duplicate_pool;

// Owns a communicator created by the library (MPI_Comm_free on destruction). One from plan_duplicate() goes back to
// its pool instead, once returnable() was said and unless discard() was said since.
class comm_handle {
 public:
  comm_handle() = default;
  explicit comm_handle(MPI_Comm c) : comm_(c) {}
  comm_handle(const comm_handle&) = delete;
  comm_handle& operator=(const comm_handle&) = delete;
  comm_handle(comm_handle&& o) noexcept;
  comm_handle& operator=(comm_handle&& o) noexcept;
  ~comm_handle();
  MPI_Comm get() const noexcept { return comm_; }
  // Gives up ownership (for a communicator kept elsewhere, an attribute say).
  MPI_Comm release() noexcept {
    const MPI_Comm c = comm_;
    comm_ = MPI_COMM_NULL;
    pool_.reset();
    return c;
  }
  // A pooled duplicate may go back to its pool: its owner finished setting up. Every rank says it in the same call.
  void returnable() noexcept { returnable_ = true; }
  // A pooled duplicate must not go back: messages may be left on it (an exchange that ended in an error).
  void discard() const noexcept { returnable_ = false; }

 private:
  friend comm_handle plan_duplicate(MPI_Comm comm);
  void close() noexcept;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::weak_ptr<duplicate_pool> pool_;
  std::size_t slot_ = 0;
  mutable bool returnable_ = false;
};

// Owns a committed MPI datatype.
class datatype_handle {
 public:
  datatype_handle() = default;
  explicit datatype_handle(MPI_Datatype t) : type_(t) {}
  datatype_handle(const datatype_handle&) = delete;
  datatype_handle& operator=(const datatype_handle&) = delete;
  datatype_handle(datatype_handle&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  datatype_handle& operator=(datatype_handle&& o) noexcept;
  ~datatype_handle();
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// Discards `comm` (comm_handle::discard) when the scope it guards is left by an exception: an exchange that throws
// may leave messages on its communicator, which then must not serve another plan.
class discard_if_thrown {
 public:
  explicit discard_if_thrown(const comm_handle& comm) noexcept : comm_(comm) {}
  discard_if_thrown(const discard_if_thrown&) = delete;
  discard_if_thrown& operator=(const discard_if_thrown&) = delete;
  ~discard_if_thrown() {
    if (std::uncaught_exceptions() > thrown_before_) comm_.discard();
  }

 private:
  const comm_handle& comm_;
  const int thrown_before_ = std::uncaught_exceptions();
};

// Owns an MPI group, freed however the code that made it ends (a failed call after it throws). Filled through
// out(): `MPI_Comm_group(comm, g.out())`.
class group_handle {
 public:
  group_handle() = default;
  group_handle(const group_handle&) = delete;
  group_handle& operator=(const group_handle&) = delete;
  ~group_handle();
  MPI_Group get() const noexcept { return group_; }
  MPI_Group* out() noexcept { return &group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

// A (count, datatype) pair that describes `bytes` contiguous bytes even when bytes > INT_MAX:
// MPI_BYTE for small messages, otherwise a struct of 1 GiB chunks plus a remainder, so that a
// message of any size is still a single MPI message.
struct byte_message {
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  datatype_handle owned;  // set when a derived type was built
};
byte_message describe_bytes(std::int64_t bytes);

// A private duplicate of comm for the library's messages. Its MPI calls return errors (MPI_ERRORS_RETURN;
// communicators made from it inherit that) so that they reach the caller as redist::mpi_error; the
// caller's communicator keeps its own error handler.
comm_handle duplicate(MPI_Comm comm);

// A private duplicate of comm (as duplicate()) for a plan, which keeps it for its life: one that an earlier plan on
// comm gave back where every rank has it back (one allreduce of a bit mask over comm), else a new one, which goes
// back to comm's pool when its handle dies (after returnable(), unless discarded). A duplicate is where
// communicators cost (one MPI_Comm_dup, a context id of the few thousand an MPI has; under SimGrid's SMPI linear in
// the ranks), so that plans made and dropped over and over pay it once. Collective over comm.
comm_handle plan_duplicate(MPI_Comm comm);

// A private duplicate of comm, made once per comm and cached on it (owned by the cache, freed with comm), for
// messages that start and complete within one library call (a plan's set-up exchanging what each rank needs):
// later calls pay no duplicate. Collective over comm the first time.
MPI_Comm call_duplicate(MPI_Comm comm);

// Drops comm's cached call_duplicate (local): called on every rank when the agreement around its making failed.
void forget_call_duplicate(MPI_Comm comm);

// The communicator of the ranks that share memory with this one (MPI_COMM_TYPE_SHARED), returning errors.
comm_handle split_shared(MPI_Comm comm);

// split_shared(comm), made once per comm and cached on it (owned by the cache, freed with comm): for collectives
// that complete within one library call (a window's creation, an allgather). Collective over comm the first time.
MPI_Comm node_communicator(MPI_Comm comm);

// A private duplicate of node_communicator(comm), for an object that keeps talking over the node: later calls pay
// one duplicate instead of a split (MPI_Comm_split_type gathers every rank's node: 40-80 ms against 5 ms for a
// duplicate with 4 ranks on 2 cores). Collective over comm.
comm_handle node_duplicate(MPI_Comm comm);

// Drops comm's cached node communicator (local): called on every rank when the agreement around a node_duplicate
// failed, so that no rank keeps a split that the others will make again.
void forget_node_communicator(MPI_Comm comm);

// Whether redist makes its collectives (and communicator duplicates) in their blocking forms: configured with
// REDIST_MPI_BLOCKING_COLLECTIVES (cmake/mpi_compat.cmake; on by default under SimGrid's SMPI, whose nonblocking
// collectives post every message at once and whose MPI_Comm_idup is missing). The watchdog (watchdog.hpp) then
// watches no collective wait: a process that never arrives leaves the others waiting in MPI.
constexpr bool collectives_block() noexcept {
#ifdef REDIST_MPI_BLOCKING_COLLECTIVES
  return true;
#else
  return false;
#endif
}

// Whether redist's waits block in MPI (MPI_Wait*, MPI_Mprobe) instead of testing in a loop: configured with
// REDIST_MPI_BLOCKING_WAITS (cmake/mpi_compat.cmake; on by default under SimGrid's SMPI, where every test is a step
// of the simulation, so that a polled wait of simulated milliseconds costs minutes of wall time at 1024 ranks). The
// watchdog (watchdog.hpp) then watches no wait and answers no roll call: REDIST_TIMEOUT has no effect.
constexpr bool waits_block() noexcept {
#ifdef REDIST_MPI_BLOCKING_WAITS
  return true;
#else
  return false;
#endif
}

// Completes `request` (MPI_Test in a loop), giving the core away between tests after a few: on a node with
// more ranks than cores, a rank spinning in a blocking collective holds the core its peers need to reach it,
// and each collective then costs scheduler time slices (an 8-byte allreduce on 4 ranks sharing 2 cores:
// 9-10 ms blocking, 2-3 ms yielding; a communicator duplicate 14-20 ms against 5 ms); MPI_Wait where
// waits_block(). Returns MPI's code.
// Watched by the watchdog (watchdog.hpp), which names `comm` where given: the requests' communicator.
int wait_yielding(MPI_Request& request, MPI_Comm comm = MPI_COMM_NULL);
// The same for MPI_Waitall, MPI_Waitany (index as MPI_Waitany sets it), MPI_Waitsome (outcount and indices as
// MPI_Waitsome sets them), and the collectives (their nonblocking forms, waited on): every collective redist makes
// goes through these, so that none waits unwatched. A call that has no nonblocking form (a communicator split, a
// window's creation) comes after barrier_yielding: once every process has arrived there, the call itself cannot
// wait for a missing one.
int wait_all_yielding(int count, MPI_Request* requests, MPI_Comm comm = MPI_COMM_NULL);
// wait_yielding for a collective's request on `comm`, which every process of comm must enter: on redist's private
// duplicates the watchdog then holds a roll call (watchdog.hpp).
int wait_collective_yielding(MPI_Request& request, MPI_Comm comm);
int wait_some_yielding(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Comm comm = MPI_COMM_NULL);
int mprobe_yielding(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int wait_any_yielding(int count, MPI_Request* requests, int* index);
int allreduce_yielding(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int allgather_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                       MPI_Datatype receive_type, MPI_Comm comm);
int barrier_yielding(MPI_Comm comm);
int bcast_yielding(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int alltoall_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                      MPI_Datatype receive_type, MPI_Comm comm);
int exscan_yielding(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int gather_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                    MPI_Datatype receive_type, int root, MPI_Comm comm);
int gatherv_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int* receive_counts,
                     const int* displacements, MPI_Datatype receive_type, int root, MPI_Comm comm);

}  // namespace redist::mpi
