// SPDX-License-Identifier: BSD-3-Clause
#include "checked.hpp"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "comm_attribute.hpp"
#include "fault_injection.hpp"
#include "watchdog.hpp"

namespace redist {

static std::string mpi_error_text(const std::string& call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  return "MPI call failed: " + call + " returned " + std::to_string(code) + " (" + std::string(text, len) + ")";
}

mpi_error::mpi_error(const std::string& call, int code) : error(mpi_error_text(call, code)), code_(code) {}

mpi_error mpi_error::described(int code, const std::string& message) { return {described_tag{}, code, message}; }

int mpi_error::error_class() const noexcept {
  int cls = MPI_ERR_OTHER;
  if (MPI_Error_class(code_, &cls) != MPI_SUCCESS) return MPI_ERR_OTHER;
  return cls;
}

namespace mpi {

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw mpi_error(call, code);
  // Tests: the call was made, and now fails on this rank only.
  if (fault::window_open() && fault::hit()) throw mpi_error(std::string(call) + " (injected)", MPI_ERR_OTHER);
}

void check_local(int code, const char* call) {
  if (code != MPI_SUCCESS) throw mpi_error(call, code);
}

int rank(MPI_Comm comm) {
  int r = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_rank(comm, &r));
  return r;
}

int size(MPI_Comm comm) {
  int s = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_size(comm, &s));
  return s;
}

bool finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

// The duplicates plans gave back, per slot (MPI_COMM_NULL: held by a plan), cached on the caller's communicator.
// Slots are numbered alike on every rank: a slot is added only when every rank makes a new duplicate (64 at most,
// the allreduce's mask; later plans' duplicates are not pooled). Plans may die on any thread: a mutex.
struct duplicate_pool {
  std::mutex mutex;
  std::vector<MPI_Comm> given_back;
  ~duplicate_pool() {
    for (MPI_Comm& c : given_back)
      if (c != MPI_COMM_NULL && !finalized()) MPI_Comm_free(&c);
  }
};

comm_handle::comm_handle(comm_handle&& o) noexcept
    : comm_(o.comm_), pool_(std::move(o.pool_)), slot_(o.slot_), returnable_(o.returnable_) {
  o.comm_ = MPI_COMM_NULL;
}

void comm_handle::close() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  if (returnable_)
    if (const std::shared_ptr<duplicate_pool> pool = pool_.lock()) {
      const std::lock_guard<std::mutex> lock(pool->mutex);
      pool->given_back[slot_] = comm_;
      comm_ = MPI_COMM_NULL;
      return;
    }
  // A destructor cannot throw; a failing free leaves nothing to recover.
  if (!finalized()) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

comm_handle& comm_handle::operator=(comm_handle&& o) noexcept {
  if (this != &o) {
    close();
    comm_ = o.comm_;
    pool_ = std::move(o.pool_);
    slot_ = o.slot_;
    returnable_ = o.returnable_;
    o.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

comm_handle::~comm_handle() { close(); }

datatype_handle& datatype_handle::operator=(datatype_handle&& o) noexcept {
  if (this != &o) {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    type_ = o.type_;
    o.type_ = MPI_DATATYPE_NULL;
  }
  return *this;
}

datatype_handle::~datatype_handle() {
  if (type_ != MPI_DATATYPE_NULL && !finalized()) MPI_Type_free(&type_);
}

group_handle::~group_handle() {
  if (group_ != MPI_GROUP_NULL && !finalized()) MPI_Group_free(&group_);
}

byte_message describe_bytes(std::int64_t bytes) {
  byte_message m;
  if (bytes <= INT_MAX) {
    m.count = static_cast<int>(bytes);
    return m;
  }
  constexpr std::int64_t chunk = std::int64_t(1) << 30;
  const std::int64_t chunks = bytes / chunk;
  const std::int64_t rest = bytes % chunk;
  if (chunks > INT_MAX) throw overflow_error("message of " + std::to_string(bytes) + " bytes exceeds 2^61 bytes");
  MPI_Datatype chunk_type;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_contiguous(static_cast<int>(chunk), MPI_BYTE, &chunk_type));
  datatype_handle chunk_owner(chunk_type);
  int lengths[2] = {static_cast<int>(chunks), static_cast<int>(rest)};
  MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(chunks * chunk)};
  MPI_Datatype types[2] = {chunk_type, MPI_BYTE};
  MPI_Datatype whole;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_struct(rest > 0 ? 2 : 1, lengths, displs, types, &whole));
  REDIST_MPI_CHECK_LOCAL(MPI_Type_commit(&whole));
  m.owned = datatype_handle(whole);
  m.type = whole;
  m.count = 1;
  return m;
}

namespace {
// Calls `test` (an MPI_Test* call returning MPI's code and setting `done`) until it reports completion or an
// error. A few tests first: on a core of its own a rank rarely waits long, and a yield costs a system call. Watched
// (watchdog.hpp) once it yields: `comm` is the requests' communicator, MPI_COMM_NULL where unknown; `collective`:
// the wait is a collective's on comm. Where waits_block(), the blocking call `blocking()` instead.
template <class Test, class Blocking>
int test_yielding(Test test, Blocking blocking, MPI_Comm comm, bool collective = false) {
  if (waits_block()) return blocking();
  constexpr int polls_before_yielding = 16;
  watched_wait watch(comm, collective);
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int code = test(done);
    if (code != MPI_SUCCESS || done) return code;
    if (polls >= polls_before_yielding) {
      sched_yield();
      watch.poll();
    }
  }
}
}  // namespace

int wait_yielding(MPI_Request& request, MPI_Comm comm) {
  // A null request is complete; it is not passed to MPI_Test, whose flag SimGrid's SMPI leaves unset for one.
  if (request == MPI_REQUEST_NULL) return MPI_SUCCESS;
  return test_yielding([&](int& done) { return MPI_Test(&request, &done, MPI_STATUS_IGNORE); },
                       [&] { return MPI_Wait(&request, MPI_STATUS_IGNORE); }, comm);
}

int wait_collective_yielding(MPI_Request& request, MPI_Comm comm) {
  if (request == MPI_REQUEST_NULL) return MPI_SUCCESS;
  return test_yielding([&](int& done) { return MPI_Test(&request, &done, MPI_STATUS_IGNORE); },
                       [&] { return MPI_Wait(&request, MPI_STATUS_IGNORE); }, comm, true);
}

int wait_all_yielding(int count, MPI_Request* requests, MPI_Comm comm) {
  return test_yielding([&](int& done) { return MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE); },
                       [&] { return MPI_Waitall(count, requests, MPI_STATUSES_IGNORE); }, comm);
}

int mprobe_yielding(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return test_yielding([&](int& done) { return MPI_Improbe(source, tag, comm, &done, message, status); },
                       [&] { return MPI_Mprobe(source, tag, comm, message, status); }, comm);
}

int wait_some_yielding(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Comm comm) {
  return test_yielding(
      [&](int& done) {
        const int code = MPI_Testsome(count, requests, outcount, indices, MPI_STATUSES_IGNORE);
        done = *outcount != 0;  // some completed, or none active (MPI_UNDEFINED)
        return code;
      },
      [&] { return MPI_Waitsome(count, requests, outcount, indices, MPI_STATUSES_IGNORE); }, comm);
}

int wait_any_yielding(int count, MPI_Request* requests, int* index) {
  return test_yielding([&](int& done) { return MPI_Testany(count, requests, index, &done, MPI_STATUS_IGNORE); },
                       [&] { return MPI_Waitany(count, requests, index, MPI_STATUS_IGNORE); }, MPI_COMM_NULL);
}

namespace {
// A collective: its nonblocking form started by `start(&request)` (MPI's code), then waited on through
// wait_collective_yielding; where collectives_block(), the blocking form, `blocking()`.
template <class Start, class Blocking>
int started_and_waited(MPI_Comm comm, Start&& start, Blocking&& blocking) {
  if (collectives_block()) return blocking();
  MPI_Request request = MPI_REQUEST_NULL;
  const int started = start(&request);
  return started != MPI_SUCCESS ? started : wait_collective_yielding(request, comm);
}
}  // namespace

int allreduce_yielding(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return started_and_waited(
      comm, [&](MPI_Request* r) { return MPI_Iallreduce(send, receive, count, type, op, comm, r); },
      [&] { return MPI_Allreduce(send, receive, count, type, op, comm); });
}

int allgather_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                       MPI_Datatype receive_type, MPI_Comm comm) {
  return started_and_waited(
      comm,
      [&](MPI_Request* r) {
        return MPI_Iallgather(send, send_count, send_type, receive, receive_count, receive_type, comm, r);
      },
      [&] { return MPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm); });
}

int barrier_yielding(MPI_Comm comm) {
  return started_and_waited(
      comm, [&](MPI_Request* r) { return MPI_Ibarrier(comm, r); }, [&] { return MPI_Barrier(comm); });
}

int bcast_yielding(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return started_and_waited(
      comm, [&](MPI_Request* r) { return MPI_Ibcast(buffer, count, type, root, comm, r); },
      [&] { return MPI_Bcast(buffer, count, type, root, comm); });
}

int alltoall_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                      MPI_Datatype receive_type, MPI_Comm comm) {
  return started_and_waited(
      comm,
      [&](MPI_Request* r) {
        return MPI_Ialltoall(send, send_count, send_type, receive, receive_count, receive_type, comm, r);
      },
      [&] { return MPI_Alltoall(send, send_count, send_type, receive, receive_count, receive_type, comm); });
}

int exscan_yielding(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return started_and_waited(
      comm, [&](MPI_Request* r) { return MPI_Iexscan(send, receive, count, type, op, comm, r); },
      [&] { return MPI_Exscan(send, receive, count, type, op, comm); });
}

int gather_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                    MPI_Datatype receive_type, int root, MPI_Comm comm) {
  return started_and_waited(
      comm,
      [&](MPI_Request* r) {
        return MPI_Igather(send, send_count, send_type, receive, receive_count, receive_type, root, comm, r);
      },
      [&] { return MPI_Gather(send, send_count, send_type, receive, receive_count, receive_type, root, comm); });
}

int gatherv_yielding(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int* receive_counts,
                     const int* displacements, MPI_Datatype receive_type, int root, MPI_Comm comm) {
  return started_and_waited(
      comm,
      [&](MPI_Request* r) {
        return MPI_Igatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, root,
                            comm, r);
      },
      [&] {
        return MPI_Gatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, root,
                           comm);
      });
}

comm_handle duplicate(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  // Checked once complete, as one call (no injection point while the duplicate is half made: every rank
  // must complete it, and none when it is made: the step making it injects, with the duplicate kept).
  const int started = collectives_block() ? MPI_Comm_dup(comm, &dup) : MPI_Comm_idup(comm, &dup, &request);
  const int code = started != MPI_SUCCESS ? started : wait_collective_yielding(request, comm);
  comm_handle owned(code == MPI_SUCCESS ? dup : MPI_COMM_NULL);
  check_creation(code,
                 collectives_block() ? "MPI_Comm_dup(comm, &dup)" : "MPI_Comm_idup(comm, &dup) and its completion");
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  mark_private(dup);  // redist's own: the watchdog may hold roll calls there
  return owned;
}

comm_handle split_shared(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  // The split has no nonblocking form: every process arrives first, in a watched wait, so that the split cannot
  // wait for a missing one; both made whatever the first returned, and checked as one call.
  const int arrived = barrier_yielding(comm);
  const int code = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank(comm), MPI_INFO_NULL, &node);
  comm_handle owned(code == MPI_SUCCESS ? node : MPI_COMM_NULL);
  check_creation(arrived != MPI_SUCCESS ? arrived : code, "MPI_Ibarrier(comm) and MPI_Comm_split_type(comm, shared)");
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
  return owned;
}

int new_comm_keyval_with_finalize(MPI_Comm_delete_attr_function* on_free, MPI_Comm_delete_attr_function* at_finalize) {
  int keyval = MPI_KEYVAL_INVALID;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_free, &keyval, nullptr));
  int finalize_keyval = MPI_KEYVAL_INVALID;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval, nullptr));
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr));
  return keyval;
}

namespace {
const comm_attribute<std::shared_ptr<duplicate_pool>>& duplicate_pools() {
  static const comm_attribute<std::shared_ptr<duplicate_pool>> pools;
  return pools;
}
}  // namespace

comm_handle plan_duplicate(MPI_Comm comm) {
  const std::shared_ptr<duplicate_pool> pool =
      duplicate_pools().get(comm, [] { return std::make_shared<duplicate_pool>(); });
  std::uint64_t back_everywhere = 0;
  {
    const std::lock_guard<std::mutex> lock(pool->mutex);
    for (std::size_t slot = 0; slot < pool->given_back.size(); ++slot)
      if (pool->given_back[slot] != MPI_COMM_NULL) back_everywhere |= std::uint64_t(1) << slot;
  }
  // No injection point: a rank failing here alone would leave the others making a duplicate without it.
  check_creation(allreduce_yielding(MPI_IN_PLACE, &back_everywhere, 1, MPI_UINT64_T, MPI_BAND, comm),
                 "MPI_Allreduce(duplicates given back)");
  comm_handle handle;
  if (back_everywhere != 0) {
    std::size_t slot = 0;
    while ((back_everywhere >> slot & 1u) == 0) ++slot;
    const std::lock_guard<std::mutex> lock(pool->mutex);
    handle.comm_ = pool->given_back[slot];
    pool->given_back[slot] = MPI_COMM_NULL;
    handle.slot_ = slot;
    handle.pool_ = pool;
    return handle;
  }
  handle = duplicate(comm);
  const std::lock_guard<std::mutex> lock(pool->mutex);
  if (pool->given_back.size() < 64) {
    handle.slot_ = pool->given_back.size();
    pool->given_back.push_back(MPI_COMM_NULL);
    handle.pool_ = pool;
  }
  return handle;
}

namespace {
const comm_attribute<comm_handle>& call_duplicates() {
  static const comm_attribute<comm_handle> duplicates;
  return duplicates;
}
}  // namespace

MPI_Comm call_duplicate(MPI_Comm comm) {
  return call_duplicates().get(comm, [&] { return duplicate(comm); }).get();
}

void forget_call_duplicate(MPI_Comm comm) { call_duplicates().forget(comm); }

namespace {
const comm_attribute<comm_handle>& node_communicators() {
  static const comm_attribute<comm_handle> nodes;
  return nodes;
}
}  // namespace

MPI_Comm node_communicator(MPI_Comm comm) {
  // The split is made from a duplicate, whose calls return errors whatever comm's error handler is.
  return node_communicators().get(comm, [&] { return split_shared(duplicate(comm).get()); }).get();
}

void forget_node_communicator(MPI_Comm comm) { node_communicators().forget(comm); }

comm_handle node_duplicate(MPI_Comm comm) { return duplicate(node_communicator(comm)); }

}  // namespace mpi
}  // namespace redist
