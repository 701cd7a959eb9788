// SPDX-License-Identifier: BSD-3-Clause
// Plan assembly after the messages are known: the exchange strategy (resolved and set up through the registry,
// src/transform/strategies/), the private message buffers, and the store policy.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "detail/plan_impl.hpp"
#include "machine/pages.hpp"
#include "strategies/strategy.hpp"

namespace redist {

namespace {

// The contents of a small sysfs file, or "" (plain POSIX reads: a plan reads up to 20 of them, once per process,
// and std::ifstream took about 10 us per file, 0.4-0.6 ms of a small first plan's 1.2 ms on a 2-core VM).
std::string read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[256];
  const ssize_t got = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  return got > 0 ? std::string(text, static_cast<std::size_t>(got)) : std::string();
}

// Per CPU, the sizes of the caches over the CPUs sharing each, read from Linux's sysfs (glibc's sysconf reports
// the whole package's L3 on some virtual machines), in one pass: the largest share of any data cache this CPU
// uses, and the level-2 share. 1 MiB for either where the system does not say.
struct cache_shares {
  std::int64_t largest = 0, level2 = 0;
};
cache_shares read_cache_shares() {
  cache_shares found;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string size_text = read_small_file(dir + "size");
    if (size_text.empty()) break;
    if (read_small_file(dir + "type").rfind("Instruction", 0) == 0) continue;
    const std::int64_t cache_level = std::strtoll(read_small_file(dir + "level").c_str(), nullptr, 10);
    char* unit = nullptr;
    std::int64_t bytes = std::strtoll(size_text.c_str(), &unit, 10);
    if (*unit == 'K') bytes <<= 10;
    if (*unit == 'M') bytes <<= 20;
    // "0-7,64-71": count the CPUs.
    std::int64_t cpus = 0;
    std::istringstream ranges(read_small_file(dir + "shared_cpu_list"));
    for (std::string range; std::getline(ranges, range, ',');) {
      const auto dash = range.find('-');
      cpus += dash == std::string::npos
                  ? 1
                  : std::strtoll(range.c_str() + dash + 1, nullptr, 10) - std::strtoll(range.c_str(), nullptr, 10) + 1;
    }
    if (bytes <= 0) continue;
    const std::int64_t share = bytes / std::max<std::int64_t>(cpus, 1);
    found.largest = std::max(found.largest, share);
    if (cache_level == 2) found.level2 = std::max(found.level2, share);
  }
  const std::int64_t unknown = std::int64_t(1) << 20;
  if (found.largest == 0) found.largest = unknown;
  if (found.level2 == 0) found.level2 = unknown;
  return found;
}

const cache_shares& this_cpu_cache_shares() {
  static const cache_shares shares = read_cache_shares();
  return shares;
}

// This core's share of the last-level cache, and of its level-2 cache (its own on most CPUs).
std::int64_t cache_share_bytes() { return this_cpu_cache_shares().largest; }
std::int64_t level2_share_bytes() { return this_cpu_cache_shares().level2; }
// Below any core's: its largest share is at least its level-2 share (128 KiB and more on current CPUs).
constexpr std::int64_t smallest_share = std::int64_t{64} << 10;
constexpr std::int64_t smallest_level2_share = std::int64_t{8} << 10;

}  // namespace

transform_plan::impl::impl() = default;
transform_plan::impl::~impl() {
  // A plan dropped between start() and wait() (an exception in the caller's work between them) completes its
  // exchange first: its receives write into the caller's A, and its peers' messages must be consumed.
  if (in_progress) {
    try {
      wait();
    } catch (...) {
    }
  }
}

void transform_plan::impl::setup_exchange(MPI_Comm caller, mpi::agreement& planned) {
  const seconds_since started;
  // What point_to_point needs, before the choice: where it is chosen, nothing that can fail is left after the
  // agreement (another strategy replaces the executor and lays the buffers out again).
  planned.attempt([&] {
    send_on_node.assign(sends.size(), 0);
    recv_on_node.assign(recvs.size(), 0);
    lay_out_private_buffers();
    choose_stores();
    executor = detail::make_point_to_point_executor(*this, caller, planned);
  });
  const detail::strategy_figures figures = detail::strategy_figures::ride_in(planned, *this, caller);
  planned.conclude();
  strategy = detail::resolve_strategy(*this, caller, planned, figures);
  if (strategy != exchange_strategy::point_to_point) {
    mpi::agreement set_up(comm.get());
    std::unique_ptr<detail::transform_executor> made = detail::make_executor(strategy, *this, caller, set_up);
    set_up.conclude();
    if (made != nullptr) {
      executor = std::move(made);
      lay_out_private_buffers();  // without the messages the strategy moves through node memory
    } else {
      // A one-shot plan that could only reuse cached windows found no room in some node's (agreed): point_to_point,
      // whose set-up is cheaper than a new window for one execution.
      send_on_node.assign(sends.size(), 0);
      recv_on_node.assign(recvs.size(), 0);
      stats.peers_on_node = 0;
      stats.stream_chunk_bytes = 0;
      stats.one_shot_choices = true;
      stats.reason += "; no room in some node's cached window: point_to_point";
      strategy = exchange_strategy::point_to_point;
    }
  }
  stats.start_overlaps = executor->start_overlaps();
  // The profile's phases are disjoint: the buffers' layouts (one or two) are not part of the strategy's set-up.
  stats.plan_exchange_seconds = std::max(0.0, started.elapsed() - stats.plan_buffers_seconds);
}

void transform_plan::impl::lay_out_private_buffers() {
  const seconds_since started;
  // Message offsets inside the private buffers skip messages that go through node memory.
  private_send_bytes = 0;
  private_recv_bytes = 0;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (send_on_node[i]) continue;
    sends[i].byte_offset = private_send_bytes;
    private_send_bytes += sends[i].bytes;
  }
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    if (recv_on_node[i]) continue;
    recvs[i].byte_offset = private_recv_bytes;
    private_recv_bytes += recvs[i].bytes;
  }
  stats.plan_buffers_seconds += started.elapsed();
}

void transform_plan::impl::borrow_private_buffers() const {
  if (!send_buffer) send_buffer = machine::allocate_pages(private_send_bytes);
  if (!recv_buffer) recv_buffer = machine::allocate_pages(private_recv_bytes);
}

void transform_plan::impl::return_private_buffers() const noexcept {
  // Both or neither: where the two together exceed the cache's limit, the one given back first would be dropped
  // to make room for the other and faulted in afresh by every execution.
  if (!machine::returned_after_use(private_send_bytes + private_recv_bytes)) return;
  send_buffer.reset();
  recv_buffer.reset();
}

void transform_plan::impl::choose_stores() {
  const auto all = [&](kernels::store_hint hint) {
    pack_stores = hint;
    for (detail::job_plan& jp : job_plans) jp.result_stores = hint;
  };
  switch (options.stores) {
    case store_policy::cached:
      all(kernels::store_hint::cached);
      break;
    case store_policy::streaming:
      all(kernels::store_hint::streaming);
      break;
    case store_policy::automatic: {
      // Streaming stores skip the read of every destination line (packing a whole message ran 1.6x faster
      // in isolation), but what they write comes from memory when it is read back. Messages are packed that way
      // only when far larger than this core's share of the last-level cache; shared-memory ring slots never are.
      // A job writes A that way once it writes more there than 8x this core's level-2 share (or the last-level
      // cache share, if less): then A cannot stay in this core's caches anyway. The kernels stream only runs that
      // fill whole lines (runs of 32 doubles streamed made 4-rank redistributions of 8000^2 doubles 1.4-1.9x
      // slower on a 16-core Xeon), long runs as four streams at once. Transposes: one core, 64-256 MiB of 256^3
      // complex<double> pencil planes 1.6-2x faster, 16 MiB the same; 256-512 MiB of double or float planes
      // 2.3-3.7x; 4 ranks, pdtran of 4000^2 doubles 1.1x. Plain runs: 2 ranks, 256^3 complex<double> pencils
      // (128 MiB per rank) 1.5-1.75x, 128^3 (16 MiB) the same.
      // Small plans decide without the cache sizes (a process's first read of sysfs costs 0.25 ms, more than a
      // small plan's execution): below the thresholds of the smallest shares a core could have, every answer
      // is `cached`.
      pack_stores = send_bytes > 8 * smallest_share && send_bytes > 8 * cache_share_bytes()
                        ? kernels::store_hint::streaming
                        : kernels::store_hint::cached;
      std::vector<std::int64_t> written(job_plans.size(), 0);
      for (const detail::tile& t : local_tiles) written[static_cast<std::size_t>(t.job)] += t.elements();
      for (const detail::peer_message& m : recvs)
        for (const detail::tile& t : m.tiles) written[static_cast<std::size_t>(t.job)] += t.elements();
      const auto above_threshold = [](std::int64_t bytes) {
        if (bytes <= std::min(8 * smallest_level2_share, smallest_share)) return false;
        return bytes > std::min(8 * level2_share_bytes(), cache_share_bytes());
      };
      for (std::size_t j = 0; j < job_plans.size(); ++j) {
        detail::job_plan& jp = job_plans[j];
        const std::int64_t bytes = written[j] * static_cast<std::int64_t>(jp.elem_size);
        jp.result_stores = above_threshold(bytes) ? kernels::store_hint::streaming : kernels::store_hint::cached;
      }
      break;
    }
  }
  stats.streaming_stores = pack_stores == kernels::store_hint::streaming ||
                           std::any_of(job_plans.begin(), job_plans.end(), [](const detail::job_plan& jp) {
                             return jp.result_stores == kernels::store_hint::streaming;
                           });
}

}  // namespace redist
