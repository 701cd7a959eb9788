// SPDX-License-Identifier: BSD-3-Clause
// node_buffer: MPI shared-memory segments that transform plans read directly (see node_buffer.hpp).
#include "redist/transform/node_buffer.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "detail/node_buffer_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/shared_window.hpp"
#include "mpi/watchdog.hpp"
#include "redist/error.hpp"

namespace redist {

namespace detail {
namespace {

std::mutex registry_mutex;
std::vector<node_segment>& registry() {
  static std::vector<node_segment> segments;  // few live buffers: a linear scan is enough
  return segments;
}

}  // namespace

void register_node_segment(const node_segment& s) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry().push_back(s);
}

void unregister_node_segment(MPI_Win window) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& r = registry();
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it->window == window) {
      r.erase(it);
      return;
    }
}

bool find_node_segment(const void* p, node_segment& out) {
  if (p == nullptr) return false;
  const auto* b = static_cast<const std::byte*>(p);
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (const auto& s : registry()) {
    // An empty segment still has an address (its data()): B of a rank without elements points there.
    const bool inside = s.bytes == 0 ? b == s.begin : (b >= s.begin && b < s.begin + s.bytes);
    if (inside) {
      out = s;
      return true;
    }
  }
  return false;
}

const std::byte* peer_segment(const node_segment& mine, int rank_in_window) {
  std::byte* base = nullptr;
  REDIST_MPI_CHECK(mpi::shared_window_segment(mine.window, rank_in_window, &base));
  return base;
}

}  // namespace detail

struct node_buffer::state {
  mpi::comm_handle node_comm;
  MPI_Win window = MPI_WIN_NULL;
  void* data = nullptr;
  std::int64_t bytes = 0;
  state() = default;
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state() {
    if (window == MPI_WIN_NULL) return;
    detail::unregister_node_segment(window);
    if (!mpi::finalized()) {
      MPI_Win_unlock_all(window);  // returns an error (ignored) when the epoch never began
      MPI_Win_free(&window);
    }
  }
};

node_buffer::node_buffer() = default;
node_buffer::~node_buffer() = default;
node_buffer::node_buffer(node_buffer&&) noexcept = default;
node_buffer& node_buffer::operator=(node_buffer&&) noexcept = default;

void* node_buffer::data() const { return state_ ? state_->data : nullptr; }
std::int64_t node_buffer::bytes() const { return state_ ? state_->bytes : 0; }

namespace {
// mpi::wait_label::describe_fn for the bytes a process asked for, said by the watchdog where a wait lasts long.
void describe_request(const void* bytes, char* out, std::size_t size) noexcept {
  std::snprintf(out, size, "this process asks for %lld bytes",
                static_cast<long long>(*static_cast<const std::int64_t*>(bytes)));
}
}  // namespace

node_buffer::node_buffer(MPI_Comm comm, std::int64_t bytes) {
  mpi::wait_label label("node_buffer", "making the buffer");
  label.describe(describe_request, &bytes);
  // Agreed over comm: one rank's bad size stops every rank before any of them allocates. A size beyond the
  // machine's memory is refused here: MPI_Win_allocate_shared may fail on some ranks only, inside its own
  // collective, where the others would wait for ever.
  const std::int64_t memory = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (bytes > memory && memory > 0)
    mpi::agree_on(comm, mpi::error_kind::insufficient_memory,
                  "node_buffer of " + std::to_string(bytes) + " bytes: more than this node's memory (" +
                      std::to_string(memory) + " bytes)");
  else
    mpi::agree_on(comm, mpi::error_kind::invalid_argument,
                  bytes < 0 ? "node_buffer of " + std::to_string(bytes) + " bytes: the size must be >= 0" : "");
  // The state, the node communicator, then the window on it, each made by every rank and agreed on before the next
  // step uses it: a rank that fails to get its part (memory for its segment, say) makes every rank throw its error.
  std::unique_ptr<state> s;
  mpi::comm_handle node_comm;
  mpi::agreement split(comm);
  split.attempt([&] { s = std::make_unique<state>(); });
  // A duplicate of the node communicator cached on comm: MPI_Comm_split_type once per communicator, not per buffer
  // (its wait spins: with 7 processes on 2 cores a split took 0.2 s, a duplicate 0.05 ms).
  split.collective([&] { node_comm = mpi::node_duplicate(comm); });
  split.on_failure([comm] { mpi::forget_node_communicator(comm); });
  split.conclude();
  s->node_comm = std::move(node_comm);
  mpi::agreement acquired(comm);
  acquired.collective([&] {
    std::byte* data = nullptr;
    const int rc = mpi::allocate_shared_window(bytes, s->node_comm.get(), &data, &s->window);
    s->data = data;
    // The window returns errors (as the library's communicators do), also to the destructor's clean-up.
    if (rc == MPI_SUCCESS) MPI_Win_set_errhandler(s->window, MPI_ERRORS_RETURN);
    REDIST_MPI_CHECK(rc);
    // A passive-target epoch for the buffer's lifetime: peers access it with loads and MPI_Win_sync.
    REDIST_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->window));
  });
  acquired.conclude();
  s->bytes = bytes;
  // The token names this allocation on every rank of comm (plans agree on it over their communicator):
  // rank 0's host, process id and allocation count, so two live allocations never share one.
  static std::atomic<std::uint32_t> allocations{0};
  std::uint64_t token = 0;
  if (mpi::rank(comm) == 0) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    token = (std::hash<std::string>{}(host) << 40) ^ (static_cast<std::uint64_t>(getpid()) << 20) ^ (++allocations);
    if (token == 0) token = 1;  // 0 means "not in a node_buffer"
  }
  REDIST_MPI_CHECK(redist::mpi::bcast_yielding(&token, 1, MPI_UINT64_T, 0, comm));
  detail::register_node_segment(
      {token, mpi::rank(s->node_comm.get()), s->window, static_cast<const std::byte*>(s->data), bytes});
  state_ = std::move(s);
}

}  // namespace redist
