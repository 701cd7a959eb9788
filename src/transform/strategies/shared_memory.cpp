// SPDX-License-Identifier: BSD-3-Clause
// The shared_memory strategy: messages to node peers stream through rings in a shared window (node_arena.hpp),
// chunk by chunk, while off-node messages go point-to-point (point_to_point.hpp); where every node rank's B lies
// in one node_buffer, node peers read it in place instead.
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "machine/cache_line.hpp"
#include "mpi/agreement.hpp"
#include "mpi/compat.hpp"
#include "mpi/node_arena.hpp"
#include "point_to_point.hpp"
#include "strategy.hpp"
#include "transform/detail/node_buffer_registry.hpp"

namespace redist::detail {
namespace {

// Pieces, ring slots and counters start on cache lines: aligned vector access, and no line written by two ranks.
using machine::cache_line;
using machine::round_up_to_cache_line;

// Trims runs to [first, first + count) of the tile's packed index and rebases them to the piece.
std::vector<run> trim_runs(run_range runs, std::int64_t first, std::int64_t count) {
  std::vector<run> out;
  for (const run& r : runs) {
    const std::int64_t lo = std::max(first, r.packed), hi = std::min(first + count, r.packed + r.length);
    if (lo >= hi) continue;
    run piece_run = sub_run(r, lo - r.packed, hi - lo);
    piece_run.packed -= first;
    out.push_back(piece_run);
  }
  return out;
}

// Cuts a tile into pieces of at most `max_elements` (at least one element), each a tile of its own
// (packed compactly in the job's packing order; byte_offset left to the caller), visited along A's
// order. When op(B)'s packing order and A's agree on the contiguous axis, a piece is a run of whole lines (long
// contiguous runs on both sides); when they differ the unpack transposes, and pieces are near-square on the two
// contiguous axes so that both its reads and its writes have runs of some length.
void cut_tile(const tile& t, const job_plan& jp, std::int64_t max_elements, std::vector<tile>& out) {
  if (t.elements() <= max_elements) {
    out.push_back(t);
    return;
  }
  const int d = t.ndim();
  axis_values piece{};
  std::int64_t room = max_elements;  // elements a piece may still take, per index of the axes already sized
  const auto take = [&](int k, std::int64_t wanted) {
    piece[static_cast<size_t>(k)] = std::max<std::int64_t>(1, std::min(wanted, t.extent(k)));
    room = std::max<std::int64_t>(1, room / piece[static_cast<size_t>(k)]);
  };
  const int x = jp.a_order[0], y = jp.packed_order[0];
  if (x != y) {
    const int u = std::min(x, y), v = std::max(x, y);
    const auto side =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(static_cast<double>(max_elements))));
    take(u, max_elements / std::min(t.extent(v), side));
    take(v, room);
  }
  // Whole lines of A's contiguous axes where they fit.
  for (int i = 0; i < d; ++i) {
    const int k = jp.a_order[static_cast<size_t>(i)];
    if (x == y || (k != x && k != y)) take(k, room);
  }
  // Pieces in A's order: its fastest axis varies fastest.
  axis_values start{};
  while (true) {
    tile p;
    p.job = t.job;
    for (int k = 0; k < d; ++k) {
      const size_t ks = static_cast<size_t>(k);
      const std::int64_t extent = std::min(piece[ks], t.extent(k) - start[ks]);
      p.add_axis(extent, trim_runs(t.runs(k), start[ks], extent));
    }
    out.push_back(std::move(p));
    int i = 0;
    for (; i < d; ++i) {
      const size_t k = static_cast<size_t>(jp.a_order[static_cast<size_t>(i)]);
      start[k] += piece[k];
      if (start[k] < t.extent(static_cast<int>(k))) break;
      start[k] = 0;
    }
    if (i == d) return;
  }
}

std::int64_t load_acquire(const std::int64_t* counter) { return __atomic_load_n(counter, __ATOMIC_ACQUIRE); }
void store_release(std::int64_t* counter, std::int64_t value) { __atomic_store_n(counter, value, __ATOMIC_RELEASE); }

// Messages to and from node peers stream through a ring of `ring_slots` slots in the sender's window segment,
// chunk by chunk: the receiver unpacks a chunk while it is still in the cache, the sender refills the slot once it
// is read (counters, no barrier), and the window stays small whatever the message sizes. A chunk is a run of whole
// pieces (tiles cut along their packing order's outer dimension); sender and receiver cut their copies of a message
// identically.
class shared_memory_executor final : public transform_executor {
 public:
  // Each collective of the set-up is a step of `set_up`, made by every rank whatever failed before (the failure
  // is raised by the set-up's conclusion); a rank decides from the steps' results, which it keeps also where its
  // step failed after the call, so that the ranks of a node make the same collectives.
  shared_memory_executor(transform_plan::impl& plan, MPI_Comm caller, mpi::agreement& set_up);
  // Not set up: the plan may only reuse cached windows (transform_plan::impl::reuses_window_only) and some node
  // found no room in its own (agreed over the plan's communicator).
  bool declined = false;
  // Publishes where this rank's B of each job is (window header); the minima decide which jobs node peers read in
  // place.
  std::vector<std::uint64_t> before_agreement(const std::vector<job_buffers>* buffers) const override;
  void reduce_without_agreement(std::vector<std::uint64_t>& values) const override;
  void execute(const tile_ops& ops, const std::vector<std::uint64_t>& agreed) const override;

 private:
  static constexpr std::int64_t ring_slots = 4;
  struct stream_chunk {
    std::size_t first_piece = 0, end_piece = 0;
  };
  struct message_stream {
    std::vector<tile> pieces;  // byte_offset: from the start of the piece's chunk
    std::vector<stream_chunk> chunks;
    std::int64_t slot_bytes = 0;
    std::int64_t slots = 0;             // min(ring_slots, chunks): a short message needs no more
    std::byte* ring = nullptr;          // in the sender's segment
    std::int64_t* published = nullptr;  // chunks written, counted over all executions (sender's segment)
    std::int64_t* consumed = nullptr;   // chunks read, likewise (receiver's segment)
  };

  void set_up_streams(transform_plan::impl& plan, MPI_Comm caller, const std::vector<int>& node_ranks,
                      mpi::agreement& set_up);
  // The node part of an execution: streams chunks to and from node peers and runs the local pieces, calling
  // poll_off_node (true when it unpacked a message) while it waits.
  void stream_on_node(const tile_ops& ops, const std::vector<char>& direct,
                      const std::function<bool()>& poll_off_node) const;
  // Per job read in place, where a node peer's B is and how it is stored.
  void locate_peer_sources(const std::byte* peer_segment_base, const std::vector<char>& direct,
                           std::vector<const void*>& peer_b, std::vector<storage_view>& peer_view) const;

  // Segment layout of every rank: a header of int64 words (per node rank d: where my ring for d starts or -1, and
  // how many chunks my message to d has; per job its op(B) storage strides (max_axes words; fixed at planning); per job
  // where its B is this execution (rank in its node_buffer's window, byte offset in that segment; read by peers
  // only for jobs agreed to be read directly)), then one cache line per node rank for `published`, one per node
  // rank for `consumed`, then the rings.
  std::int64_t header_words() const {
    return 2 * node_size + (max_axes + 2) * static_cast<std::int64_t>(plan_.job_plans.size());
  }
  std::size_t ring_offset_slot(int node_rank) const { return static_cast<std::size_t>(node_rank); }
  std::size_t chunk_count_slot(int node_rank) const { return static_cast<std::size_t>(node_size + node_rank); }
  std::size_t storage_slot(std::size_t job) const { return static_cast<std::size_t>(2 * node_size) + max_axes * job; }
  std::size_t location_slot(std::size_t job) const {
    return static_cast<std::size_t>(2 * node_size) + max_axes * plan_.job_plans.size() + 2 * job;
  }
  template <class Byte>
  static Byte* header_slot(Byte* segment, std::size_t word) {
    return segment + word * sizeof(std::int64_t);
  }
  std::int64_t counters_offset() const { return round_up_to_cache_line(header_words() * 8); }
  std::int64_t* published_counter(std::byte* segment, int to_node_rank) const {
    return reinterpret_cast<std::int64_t*>(segment + counters_offset() + to_node_rank * cache_line);
  }
  std::int64_t* consumed_counter(std::byte* segment, int from_node_rank) const {
    return reinterpret_cast<std::int64_t*>(segment + counters_offset() + (node_size + from_node_rank) * cache_line);
  }

  const transform_plan::impl& plan_;
  mpi::comm_handle node_comm;
  int node_size = 0;
  // This rank's segment, cut from the window of the caller's node; it goes back to the window with the executor
  // (the last plan holding a window the communicator's cache no longer does frees it, collectively over the node:
  // plans are destroyed in the same order on every rank, as any MPI object shared by a communicator).
  arena_segment segment;
  MPI_Win window = MPI_WIN_NULL;             // that window (not owned)
  std::vector<message_stream> send_streams;  // per sends[i] (empty for peers on other nodes)
  std::vector<message_stream> recv_streams;  // per recvs[i]
  std::vector<tile> local_pieces;            // local tiles cut likewise: work between chunks
  mutable std::int64_t executions = 0;       // completed executions: the counters' base
  bool node_messages = false;                // any rank of the node sends to a node peer (who may read its B)
  std::byte* my_segment = nullptr;
  std::vector<const std::byte*> recv_segment;  // per recvs[i]: the sender's segment (nullptr off node)
  // Where this rank's B of each job is this execution: from before_agreement to execute (a plan is not executed by
  // two threads at once).
  mutable std::vector<node_segment> my_b_segment_;
};

shared_memory_executor::shared_memory_executor(transform_plan::impl& plan, MPI_Comm caller, mpi::agreement& set_up)
    : plan_(plan) {
  set_up.collective([&] { node_comm = mpi::node_duplicate(caller); });
  set_up.on_failure([caller] { mpi::forget_node_communicator(caller); });
  // Without it (MPI failed to make it here) this rank cannot take part in its node's collectives; an injected
  // failure follows a duplicate made for real, which the rank keeps.
  if (node_comm.get() == MPI_COMM_NULL) return;
  // Node rank of every rank of comm (or MPI_UNDEFINED): O(P) per rank, computed once.
  std::vector<int> node_ranks;
  set_up.attempt([&] {
    mpi::group_handle world_group, node_group;
    REDIST_MPI_CHECK_LOCAL(MPI_Comm_group(plan.comm.get(), world_group.out()));
    REDIST_MPI_CHECK_LOCAL(MPI_Comm_group(node_comm.get(), node_group.out()));
    std::vector<int> world_ranks(static_cast<size_t>(plan.nranks));
    node_ranks.resize(static_cast<size_t>(plan.nranks));
    for (int r = 0; r < plan.nranks; ++r) world_ranks[static_cast<size_t>(r)] = r;
    REDIST_MPI_CHECK_LOCAL(MPI_Group_translate_ranks(world_group.get(), plan.nranks, world_ranks.data(),
                                                     node_group.get(), node_ranks.data()));
  });
  set_up_streams(plan, caller, node_ranks, set_up);
}

void shared_memory_executor::set_up_streams(transform_plan::impl& plan, MPI_Comm caller,
                                            const std::vector<int>& node_ranks, mpi::agreement& set_up) {
  node_size = mpi::size(node_comm.get());
  const int node_rank = mpi::rank(node_comm.get());
  std::int64_t chunk_bytes = plan.options.stream_chunk_bytes;
  // Automatic only: the piece sizes for tiles whose unpack transposes (0: cut like any other tile).
  std::int64_t transpose_piece_bytes = 0, large_transpose_piece_bytes = 0;
  if (chunk_bytes == 0) {
    // Both ends of a stream must cut it alike, so the inputs are agreed over the node: the largest thread
    // count, and the CPUs the node's ranks may run on (the union of their affinity masks).
    std::int64_t threads = plan.threads;
    set_up.collective([&] {
      REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &threads, 1, MPI_INT64_T, MPI_MAX, node_comm.get()));
    });
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_ZERO(&cpus);
    static_assert(sizeof(cpu_set_t) % sizeof(unsigned long) == 0, "cpu_set_t is a bit array of longs");
    set_up.collective([&] {
      const int words = static_cast<int>(sizeof(cpus) / sizeof(unsigned long));
      REDIST_MPI_CHECK(
          mpi::allreduce_yielding(MPI_IN_PLACE, &cpus, words, MPI_UNSIGNED_LONG, MPI_BOR, node_comm.get()));
    });
    const std::int64_t node_cpus = CPU_COUNT(&cpus);
    // 256 KiB per thread keeps a chunk in the cache between packing and unpacking, also where the node runs up
    // to twice as many threads as it has CPUs (4 ranks on 2 cores, N = 8000, steady calls: pdgemr2d 0.25 s with
    // 2 MiB chunks against 0.18 s, pdtran 0.22 against 0.16). Beyond that, a rank waiting for a descheduled peer
    // gives its core away so often that each switch costs more than small chunks save: 2 MiB per thread (8 ranks
    // on 2 cores, reshapes of 256^3: 256 KiB chunks took 1.1-1.4x as long). Not for a one-shot plan: its rings
    // are mostly fresh shared memory, and faulting in 4 slots of 2 MiB per node peer cost more than small chunks
    // lose in one execution (pdgemr2d N = 8000 there: 0.2 s against 0.03 s).
    const bool oversubscribed = node_cpus > 0 && node_size * threads > node_cpus;
    const bool crowded = node_cpus > 0 && node_size * threads > 2 * node_cpus;
    chunk_bytes = (std::int64_t(crowded && !plan.options.one_shot ? 2048 : 256) << 10) * threads;
    plan.stats.one_shot_choices = plan.stats.one_shot_choices || (crowded && plan.options.one_shot);
    // Pieces whose unpack transposes are near-square on the two contiguous axes, and the streaming stores write
    // runs one side long. 1 MiB per thread where the tile allows a square that large (sides of 256
    // complex<double>: 4 KiB runs): 2 ranks, 512^3 x- to y-pencils, the storage-order change cost 1.31x a plain
    // reshape with 256 KiB pieces and 1.11x with these. Growing one side only, where the tile is narrower than
    // that, made the unpack slower (256^3: 1.14x -> 1.21x), so such tiles get 256 KiB pieces, also within the
    // 2 MiB chunks of a crowded node (8 ranks on 2 cores, 256^3: 1.31x -> 1.11x). Not for a one-shot plan, which
    // would fault in the larger slots, nor in the 256 KiB chunks of an oversubscribed node, where pieces larger
    // than the chunks made pdtran N = 8000 slower (4 ranks on 2 cores: 0.165 s against 0.14 s).
    transpose_piece_bytes = (std::int64_t(256) << 10) * threads;
    if (!plan.options.one_shot && (!oversubscribed || crowded))
      large_transpose_piece_bytes = (std::int64_t(1024) << 10) * threads;
  }
  plan.stats.stream_chunk_bytes = chunk_bytes;
  auto elem_size_of = [&](const tile& t) {
    return static_cast<std::int64_t>(plan.job_plans[static_cast<size_t>(t.job)].elem_size);
  };
  // A stream's own format: the message's tiles cut into pieces, each packed compactly, 64-byte aligned,
  // in chunks of consecutive pieces up to chunk_bytes (at least one piece; a transposing piece may be larger).
  // Sender and receiver derive it from the same global knowledge (tile extents, runs, orders), so they cut alike.
  auto chunk_elements = [&](const tile& t) { return std::max<std::int64_t>(1, chunk_bytes / elem_size_of(t)); };
  auto elements_in = [&](const tile& t) {
    const job_plan& jp = plan.job_plans[static_cast<size_t>(t.job)];
    const int x = jp.a_order[0], y = jp.packed_order[0];
    if (x == y || transpose_piece_bytes == 0) return chunk_elements(t);
    const std::int64_t large = large_transpose_piece_bytes / elem_size_of(t);
    const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(large)));
    if (large > 0 && std::min(t.extent(x), t.extent(y)) >= side) return large;
    return std::max<std::int64_t>(1, transpose_piece_bytes / elem_size_of(t));
  };
  auto make_stream = [&](const peer_message& m) {
    message_stream st;
    for (const tile& t : m.tiles) cut_tile(t, plan.job_plans[static_cast<size_t>(t.job)], elements_in(t), st.pieces);
    for (size_t first = 0; first < st.pieces.size();) {
      std::int64_t offset = 0;
      size_t last = first;
      while (last < st.pieces.size()) {
        tile& p = st.pieces[last];
        const std::int64_t bytes = p.elements() * elem_size_of(p);
        if (last > first && offset + bytes > chunk_bytes) break;
        p.byte_offset = offset;
        offset = round_up_to_cache_line(offset + bytes);
        ++last;
      }
      st.chunks.push_back({first, last});
      st.slot_bytes = std::max(st.slot_bytes, offset);
      first = last;
    }
    st.slots = std::min<std::int64_t>(ring_slots, static_cast<std::int64_t>(st.chunks.size()));
    return st;
  };
  std::vector<std::int64_t> ring_offset(static_cast<size_t>(node_size), -1),
      chunk_count(static_cast<size_t>(node_size), 0);
  std::int64_t segment_bytes = counters_offset() + 2 * node_size * cache_line;
  set_up.attempt([&] {
    send_streams.assign(plan.sends.size(), message_stream{});
    recv_streams.assign(plan.recvs.size(), message_stream{});
    for (size_t i = 0; i < plan.sends.size(); ++i) {
      const int d = node_ranks[static_cast<size_t>(plan.sends[i].rank)];
      if (d == MPI_UNDEFINED) continue;
      plan.send_on_node[i] = 1;
      ++plan.stats.peers_on_node;
      send_streams[i] = make_stream(plan.sends[i]);
      ring_offset[static_cast<size_t>(d)] = segment_bytes;
      chunk_count[static_cast<size_t>(d)] = static_cast<std::int64_t>(send_streams[i].chunks.size());
      segment_bytes += send_streams[i].slots * send_streams[i].slot_bytes;
    }
    for (size_t i = 0; i < plan.recvs.size(); ++i) {
      if (node_ranks[static_cast<size_t>(plan.recvs[i].rank)] == MPI_UNDEFINED) continue;
      plan.recv_on_node[i] = 1;
      recv_streams[i] = make_stream(plan.recvs[i]);
    }
    // Local pieces are only work between chunks: 16 chunks' worth each, so that the kernels' long runs and wide
    // streaming-transpose tiles keep more of their length (2 ranks, 256^3 and 512^3 complex<double> pencils: the
    // local-only reshapes 5% faster, the storage-order change 2-4%).
    for (const tile& t : plan.local_tiles)
      cut_tile(t, plan.job_plans[static_cast<size_t>(t.job)], 16 * chunk_elements(t), local_pieces);
  });
  // Where every node rank's segment starts in its part of the window, whether it sends to node peers (where none
  // does, no one reads another's B in place) and whether it has its segment: gathered once every header is written.
  std::vector<std::int64_t> gathered_values(3 * static_cast<size_t>(node_size));

  // False alike on the node's ranks where one of them had failed before (then the node makes no window).
  const bool reserved =
      reserve_node_segment(caller, node_comm.get(), segment_bytes, segment, !plan.reuses_window_only, &set_up);
  if (plan.reuses_window_only) {
    // The plan may not make a window: it streams where every node found room in its cached one, or nowhere (the
    // segments reserved go back with this executor).
    std::int64_t missing = reserved ? 0 : 1;
    set_up.collective([&] {
      REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &missing, 1, MPI_INT64_T, MPI_MAX, plan.comm.get()));
    });
    if (missing != 0) {
      declined = true;
      return;
    }
  }
  if (!reserved) return;
  // Null where this rank's part of a new window could not be made (its error is the set-up's).
  const bool has_segment = segment.arena != nullptr;
  std::byte* base = nullptr;
  if (has_segment) {
    window = segment.arena->window();
    base = segment.arena->segment(node_rank) + segment.offset;
    // Touched here so that page faults are paid by planning, not by the first execution; counters start at 0.
    std::memset(base, 0, static_cast<size_t>(segment_bytes));
    for (int d = 0; d < node_size; ++d) {
      std::memcpy(header_slot(base, ring_offset_slot(d)), &ring_offset[static_cast<size_t>(d)], sizeof(std::int64_t));
      std::memcpy(header_slot(base, chunk_count_slot(d)), &chunk_count[static_cast<size_t>(d)], sizeof(std::int64_t));
    }
    for (size_t j = 0; j < plan.job_plans.size(); ++j) {
      const storage_view& v = plan.job_plans[j].b_view;
      std::memcpy(header_slot(base, storage_slot(j)), v.strides.data(), sizeof(v.strides));
    }
    my_segment = base;
    plan.stats.window_bytes = segment_bytes;
    plan.stats.window_reused = segment.reused;
    REDIST_MPI_CHECK_LOCAL(MPI_Win_sync(window));
  }
  const std::int64_t mine[3] = {
      segment.offset,
      std::any_of(plan.send_on_node.begin(), plan.send_on_node.end(), [](char on_node) { return on_node != 0; }),
      has_segment ? 1 : 0};
  set_up.collective([&] {
    // Checked once complete, as one call: no failure may leave the request writing into gathered_values.
    mpi::check(mpi::allgather_yielding(mine, 3, MPI_INT64_T, gathered_values.data(), 3, MPI_INT64_T, node_comm.get()),
               "MPI_Allgather(segment offsets, node)");
  });
  // A node rank without its segment: no rank of the node wires its streams (the set-up fails on every rank).
  for (int d = 0; d < node_size; ++d)
    if (gathered_values[3 * static_cast<size_t>(d) + 2] == 0) return;
  REDIST_MPI_CHECK_LOCAL(MPI_Win_sync(window));
  for (int d = 0; d < node_size; ++d) node_messages = node_messages || gathered_values[3 * static_cast<size_t>(d) + 1];

  auto segment_of = [&](int peer_node_rank) {
    return segment.arena->segment(peer_node_rank) + gathered_values[3 * static_cast<size_t>(peer_node_rank)];
  };
  for (size_t i = 0; i < plan.sends.size(); ++i) {
    if (!plan.send_on_node[i]) continue;
    const int d = node_ranks[static_cast<size_t>(plan.sends[i].rank)];
    message_stream& st = send_streams[i];
    st.ring = base + ring_offset[static_cast<size_t>(d)];
    st.published = published_counter(base, d);
    st.consumed = consumed_counter(segment_of(d), node_rank);
  }
  recv_segment.assign(plan.recvs.size(), nullptr);
  for (size_t i = 0; i < plan.recvs.size(); ++i) {
    if (!plan.recv_on_node[i]) continue;
    const int s = node_ranks[static_cast<size_t>(plan.recvs[i].rank)];
    std::byte* peer = segment_of(s);
    std::int64_t offset = -1, chunks = 0;
    std::memcpy(&offset, header_slot(peer, ring_offset_slot(node_rank)), sizeof(offset));
    std::memcpy(&chunks, header_slot(peer, chunk_count_slot(node_rank)), sizeof(chunks));
    message_stream& st = recv_streams[i];
    if (offset < 0 || chunks != static_cast<std::int64_t>(st.chunks.size()))
      set_up.fail(mpi::error_kind::invalid_argument,
                  "node peer " + std::to_string(plan.recvs[i].rank) + " streams " + std::to_string(chunks) +
                      " chunks to this rank, which expects " + std::to_string(st.chunks.size()) +
                      " (were ranks given different transform_options::stream_chunk_bytes?)");
    st.ring = peer + offset;
    st.published = published_counter(peer, node_rank);
    st.consumed = consumed_counter(base, s);
    recv_segment[i] = peer;
  }
}

void shared_memory_executor::reduce_without_agreement(std::vector<std::uint64_t>& values) const {
  // Node peers must agree on which jobs they read in place; the node is whom that concerns.
  REDIST_MPI_CHECK(MPI_Win_sync(window));
  REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T,
                                           MPI_MIN, node_comm.get()));
}

void shared_memory_executor::execute(const tile_ops& ops, const std::vector<std::uint64_t>& agreed) const {
  // Jobs whose B sits in one node_buffer on every rank: node peers read it directly.
  std::vector<char> direct(plan_.job_plans.size(), 0);
  bool any_direct = false;
  REDIST_MPI_CHECK(MPI_Win_sync(window));  // peers' headers are visible from here
  for (size_t j = 0; j < plan_.job_plans.size(); ++j) {
    const std::uint64_t lowest = agreed[2 * j], highest = ~agreed[2 * j + 1];
    direct[j] = lowest != 0 && lowest == highest;
    any_direct = any_direct || direct[j];
  }
  posted_messages off_node(plan_, ops);
  stream_on_node(ops, direct, [&] { return off_node.unpack_next_arrival(false); });
  off_node.finish();
  if (any_direct && node_messages) {
    // Node peers read this rank's B until here: the caller may modify B once execute returns.
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(mpi::barrier_yielding(node_comm.get()));
  }
}

void shared_memory_executor::stream_on_node(const tile_ops& ops, const std::vector<char>& direct,
                                            const std::function<bool()>& poll_off_node) const {
  // Packing into a ring slot uses ordinary stores whatever the policy: the point is that the receiver
  // finds the chunk in the cache.
  const tile_ops ring_ops{ops.plans, ops.buffers, kernels::store_hint::cached};
  const bool any_direct = std::any_of(direct.begin(), direct.end(), [](char d) { return d != 0; });
  std::vector<std::vector<const void*>> peer_b(plan_.recvs.size());
  std::vector<std::vector<storage_view>> peer_view(plan_.recvs.size());
  if (any_direct)
    for (size_t i = 0; i < plan_.recvs.size(); ++i) {
      if (!plan_.recv_on_node[i]) continue;
      peer_b[i].assign(plan_.job_plans.size(), nullptr);
      peer_view[i].resize(plan_.job_plans.size());
      locate_peer_sources(recv_segment[i], direct, peer_b[i], peer_view[i]);
    }
  // A chunk whose pieces are all read directly from B carries no data: it needs no slot. Without direct
  // jobs every chunk carries data; with them the answer is kept per stream until the stream moves on, so
  // that waiting passes do not rescan the chunk's pieces.
  std::vector<signed char> send_data(plan_.sends.size(), -1), recv_data(plan_.recvs.size(), -1);
  auto carries_data = [&](const message_stream& st, const stream_chunk& ch, signed char& known) {
    if (!any_direct) return true;
    if (known < 0) {
      known = 0;
      for (size_t k = ch.first_piece; k < ch.end_piece && !known; ++k)
        known = !direct[static_cast<size_t>(st.pieces[k].job)];
    }
    return known != 0;
  };
  auto slot_of = [](const message_stream& st, std::int64_t serial) {
    return st.ring + (serial % st.slots) * st.slot_bytes;
  };
  // A chunk's number over all executions, which the counters count.
  auto serial_of = [&](const message_stream& st, std::size_t chunk) {
    return executions * static_cast<std::int64_t>(st.chunks.size()) + static_cast<std::int64_t>(chunk);
  };
  std::vector<std::size_t> produced(plan_.sends.size(), 0), consumed(plan_.recvs.size(), 0);
  std::size_t next_local = 0;
  // Every rank of the node runs this loop in the same execution; each pass moves at most one chunk per
  // stream, so that what a peer packs is read soon after. Nothing here blocks: a sender waits for a free
  // slot and a receiver for a published chunk by polling, doing local work or off-node messages instead.
  for (;;) {
    bool progress = false, pending = false;
    for (size_t i : plan_.send_order) {
      if (!plan_.send_on_node[i] || produced[i] == send_streams[i].chunks.size()) continue;
      pending = true;
      const message_stream& st = send_streams[i];
      const stream_chunk& ch = st.chunks[produced[i]];
      const std::int64_t serial = serial_of(st, produced[i]);
      const bool data = carries_data(st, ch, send_data[i]);
      if (data && serial - load_acquire(st.consumed) >= st.slots) continue;  // the ring is full
      if (data) {
        std::byte* slot = slot_of(st, serial);
        for (size_t k = ch.first_piece; k < ch.end_piece; ++k)
          if (!direct[static_cast<size_t>(st.pieces[k].job)]) ring_ops.pack(st.pieces[k], slot);
      }
      store_release(st.published, serial + 1);
      ++produced[i];
      send_data[i] = -1;
      progress = true;
    }
    for (size_t i = 0; i < plan_.recvs.size(); ++i) {
      if (!plan_.recv_on_node[i] || consumed[i] == recv_streams[i].chunks.size()) continue;
      pending = true;
      const message_stream& st = recv_streams[i];
      const stream_chunk& ch = st.chunks[consumed[i]];
      const std::int64_t serial = serial_of(st, consumed[i]);
      const bool data = carries_data(st, ch, recv_data[i]);
      if (data && load_acquire(st.published) <= serial) continue;  // not written yet
      const std::byte* slot = slot_of(st, serial);
      for (size_t k = ch.first_piece; k < ch.end_piece; ++k) {
        const tile& piece = st.pieces[k];
        const auto j = static_cast<size_t>(piece.job);
        if (direct[j])
          ops.direct(piece, peer_b[i][j], peer_view[i][j]);
        else
          ops.unpack(piece, slot);
      }
      store_release(st.consumed, serial + 1);
      ++consumed[i];
      recv_data[i] = -1;
      progress = true;
    }
    if (!progress && next_local < local_pieces.size()) {
      ops.local(local_pieces[next_local++]);
      progress = true;
    }
    if (!pending && next_local == local_pieces.size()) break;
    // Oversubscribed nodes: let the peer this rank waits for run.
    if (!progress && !poll_off_node()) sched_yield();
  }
  ++executions;
}

std::vector<std::uint64_t> shared_memory_executor::before_agreement(const std::vector<job_buffers>* buffers) const {
  // Per job, where this rank's B is (rank in its node_buffer's window, offset) goes into the segment
  // header, and (token, ~token) into the values whose minimum over the ranks is taken: min(token) and
  // ~max(token). A job is read directly when they agree on a nonzero token: every rank's B is in the same
  // allocation (so every rank also holds its window). Token 0: B not in a node_buffer, irregular
  // storage, alpha == 0 (B not read) or bad buffers (the execution throws anyway).
  const size_t jobs_count = plan_.job_plans.size();
  std::vector<std::uint64_t> tokens(2 * jobs_count, 0);
  my_b_segment_.assign(jobs_count, node_segment{});
  for (size_t j = 0; j < jobs_count; ++j) {
    std::int64_t location[2] = {0, 0};
    node_segment& seg = my_b_segment_[j];
    const bool readable = buffers != nullptr && (*buffers)[j].alpha != scalar(0.0, 0.0) &&
                          plan_.job_plans[j].b_view.kind == storage_kind::regular &&
                          find_node_segment((*buffers)[j].b, seg);
    if (readable) {
      location[0] = seg.rank_in_window;
      location[1] = static_cast<const std::byte*>((*buffers)[j].b) - seg.begin;
    }
    std::memcpy(header_slot(my_segment, location_slot(j)), location, sizeof(location));
    tokens[2 * j] = readable ? seg.token : 0;
    tokens[2 * j + 1] = ~tokens[2 * j];
  }
  return tokens;
}

void shared_memory_executor::locate_peer_sources(const std::byte* peer_segment_base, const std::vector<char>& direct,
                                                 std::vector<const void*>& peer_b,
                                                 std::vector<storage_view>& peer_view) const {
  for (size_t j = 0; j < plan_.job_plans.size(); ++j) {
    if (!direct[j]) continue;
    std::int64_t location[2];
    std::memcpy(peer_view[j].strides.data(), header_slot(peer_segment_base, storage_slot(j)),
                sizeof(peer_view[j].strides));
    std::memcpy(location, header_slot(peer_segment_base, location_slot(j)), sizeof(location));
    // Every rank of the node found its B in the same allocation, so this rank holds its window too.
    peer_b[j] = peer_segment(my_b_segment_[j], static_cast<int>(location[0])) + location[1];
    peer_view[j].kind = storage_kind::regular;
    peer_view[j].ndim = plan_.job_plans[j].ndim;
  }
}

}  // namespace

std::unique_ptr<transform_executor> make_shared_memory_executor(transform_plan::impl& plan, MPI_Comm caller,
                                                                mpi::agreement& set_up) {
  auto executor = std::make_unique<shared_memory_executor>(plan, caller, set_up);
  if (executor->declined) return nullptr;
  return executor;
}

}  // namespace redist::detail
