// Execution of transform plans: packing, the exchange strategies, and unpacking with the transformation
// applied on receipt while other messages are still in flight.
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "../mpi/agreement.hpp"
#include "../memory/pages.hpp"
#include "../mpi/compat.hpp"
#include "redist/error.hpp"
#include "detail/node_buffer_registry.hpp"
#include "detail/plan_impl.hpp"
#include "redist/transform/kernels.hpp"

namespace redist {

using detail::job_plan;
using detail::peer_message;
using detail::placement;
using detail::run;
using detail::tile;
using detail::storage_view;

namespace {

constexpr int exchange_tag = 7301;

template <class T>
T from_scalar(scalar s) {
  if constexpr (std::is_same_v<T, std::complex<float>>)
    return T(static_cast<float>(s.real()), static_cast<float>(s.imag()));
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return s;
  else
    return static_cast<T>(s.real());
}

template <class F>
void with_type(element_type t, F&& f) {
  switch (t) {
    case element_type::f32: f(float{}); return;
    case element_type::f64: f(double{}); return;
    case element_type::c32: f(std::complex<float>{}); return;
    case element_type::c64: f(std::complex<double>{}); return;
    case element_type::i32: f(std::int32_t{}); return;
    case element_type::i64: f(std::int64_t{}); return;
  }
}

// Strides of a packed tile (rows x cols in op(B)'s orientation, op(B)'s packing order).
kernels::strided packed_strides(storage_order order, std::int64_t rows, std::int64_t cols) {
  return order == storage_order::col_major ? kernels::strided{1, rows} : kernels::strided{cols, 1};
}

// Visits every (row run, column run) piece of a tile, walking the destination along its contiguous
// dimension: for a column-major destination the column runs are cut into panels of a few columns and,
// within a panel, the row runs go down the columns (so reads and writes advance through memory
// instead of striding across whole local arrays); row-major symmetrically. Panels are independent,
// so large tiles spread them over OpenMP threads.
constexpr std::int64_t panel_width = 64;

run sub_run(const run& r, std::int64_t skip, std::int64_t length) {
  run s = r;
  s.a_local += skip;
  s.b_local += skip;
  s.packed += skip;
  s.length = length;
  return s;
}

template <class F>
void for_each_piece(const tile& t, storage_order dst_order, F&& piece) {
  const bool col_major = dst_order == storage_order::col_major;
  const std::vector<run>& outer = col_major ? t.col_runs : t.row_runs;
  const std::vector<run>& inner = col_major ? t.row_runs : t.col_runs;
  std::vector<run> panels;
  for (const run& o : outer)
    for (std::int64_t k = 0; k < o.length; k += panel_width) panels.push_back(sub_run(o, k, std::min(panel_width, o.length - k)));
  auto one_panel = [&](const run& o) {
    for (const run& i : inner) {
      if (col_major)
        piece(i, o);
      else
        piece(o, i);
    }
  };
  if (panels.size() >= 2 && t.rows * t.cols >= kernels::parallel_threshold && !omp_in_parallel() &&
      omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(dynamic)
    for (std::size_t k = 0; k < panels.size(); ++k) one_panel(panels[k]);
  } else {
    for (const run& o : panels) one_panel(o);
  }
}

// A(i,j) = alpha * op(B)(i,j) + beta * A(i,j) where op(B) is given in A's orientation by `bt`/`bt_s`:
// the kernel takes B in its own orientation, so the strides are swapped back for (conj-)transposes.
template <class T>
void apply(const job_plan& jp, T* dst, kernels::strided dst_s, const T* bt, kernels::strided bt_s, std::int64_t rows,
           std::int64_t cols, T alpha, T beta, kernels::store_hint stores) {
  if (jp.operation == op::identity)
    kernels::transform_block(dst, dst_s, bt, bt_s, rows, cols, op::identity, alpha, beta, stores);
  else
    kernels::transform_block(dst, dst_s, bt, kernels::strided{bt_s.cs, bt_s.rs}, rows, cols, jp.operation, alpha,
                             beta, stores);
}

template <class T>
void pack_tile(const job_plan& jp, const tile& t, const T* b_base, std::byte* message, kernels::store_hint stores) {
  T* packed = reinterpret_cast<T*>(message + t.byte_offset);
  const kernels::strided ps = packed_strides(jp.packed_order, t.rows, t.cols);
  for_each_piece(t, jp.packed_order, [&](const run& r, const run& c) {
    const placement src = jp.b_view.at(r.b_block, c.b_block, r.b_local, c.b_local);
    kernels::copy_block(packed + r.packed * ps.rs + c.packed * ps.cs, ps, b_base + src.offset, src.strides, r.length,
                        c.length, stores);
  });
}

template <class T>
void unpack_tile(const job_plan& jp, const tile& t, T* a_base, const std::byte* message, T alpha, T beta,
                 kernels::store_hint stores) {
  const T* packed = reinterpret_cast<const T*>(message + t.byte_offset);
  const kernels::strided ps = packed_strides(jp.packed_order, t.rows, t.cols);
  for_each_piece(t, jp.a_order, [&](const run& r, const run& c) {
    const placement dst = jp.a_view.at(r.a_block, c.a_block, r.a_local, c.a_local);
    apply(jp, a_base + dst.offset, dst.strides, packed + r.packed * ps.rs + c.packed * ps.cs, ps, r.length, c.length,
          alpha, beta, stores);
  });
}

// A tile transformed straight from op(B)'s storage into A: this rank's own B (local tiles), or a node
// peer's B in a node_buffer (b_view is then the peer's storage).
template <class T>
void direct_tile(const job_plan& jp, const tile& t, T* a_base, const T* b_base, const storage_view& b_view, T alpha,
                 T beta, kernels::store_hint stores) {
  for_each_piece(t, jp.a_order, [&](const run& r, const run& c) {
    const placement dst = jp.a_view.at(r.a_block, c.a_block, r.a_local, c.a_local);
    const placement src = b_view.at(r.b_block, c.b_block, r.b_local, c.b_local);
    // alpha == 0 allows a null B: the kernel does not read it, so no address is formed from it.
    const T* b = b_base ? b_base + src.offset : nullptr;
    apply(jp, a_base + dst.offset, dst.strides, b, src.strides, r.length, c.length, alpha, beta, stores);
  });
}

// Typed dispatch of the three tile operations for the tile's job.
struct tile_ops {
  const std::vector<job_plan>& plans;
  const std::vector<job_buffers>& buffers;
  kernels::store_hint pack_stores;    // writing messages
  kernels::store_hint result_stores;  // writing A

  bool skips_source(int job) const { return buffers[static_cast<size_t>(job)].alpha == scalar(0.0, 0.0); }

  void pack(const tile& t, std::byte* message) const {
    if (skips_source(t.job)) return;  // alpha == 0: B is not read; the receiver does not read the bytes either
    const job_plan& jp = plans[static_cast<size_t>(t.job)];
    with_type(jp.type, [&](auto tag) {
      using T = decltype(tag);
      pack_tile<T>(jp, t, static_cast<const T*>(buffers[static_cast<size_t>(t.job)].b), message, pack_stores);
    });
  }
  void unpack(const tile& t, const std::byte* message) const {
    const job_plan& jp = plans[static_cast<size_t>(t.job)];
    const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
    with_type(jp.type, [&](auto tag) {
      using T = decltype(tag);
      unpack_tile<T>(jp, t, static_cast<T*>(jb.a), message, from_scalar<T>(jb.alpha), from_scalar<T>(jb.beta),
                     result_stores);
    });
  }
  void local(const tile& t) const {
    const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
    direct(t, jb.b, plans[static_cast<size_t>(t.job)].b_view);
  }
  void direct(const tile& t, const void* b, const storage_view& b_view) const {
    const job_plan& jp = plans[static_cast<size_t>(t.job)];
    const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
    with_type(jp.type, [&](auto tag) {
      using T = decltype(tag);
      direct_tile<T>(jp, t, static_cast<T*>(jb.a), static_cast<const T*>(b), b_view, from_scalar<T>(jb.alpha),
                     from_scalar<T>(jb.beta), result_stores);
    });
  }
};

// Problems with the buffers of one execution on this rank (empty when fine).
std::string check_buffers(const transform_plan::impl& p, const std::vector<job_buffers>& buffers) {
  if (buffers.size() != p.jobs.size())
    return "execute got " + std::to_string(buffers.size()) + " job buffers for a plan of " +
           std::to_string(p.jobs.size()) + " jobs";
  for (size_t k = 0; k < buffers.size(); ++k) {
    const auto& j = p.jobs[k];
    const auto& b = buffers[k];
    const std::string where = "job " + std::to_string(k) + ": ";
    if ((j.type == element_type::i32 || j.type == element_type::i64) &&
        (b.alpha != scalar(1.0, 0.0) || b.beta != scalar(0.0, 0.0)))
      return where + "integer elements support plain copies only (alpha = 1, beta = 0)";
    if ((j.type == element_type::f32 || j.type == element_type::f64) &&
        (b.alpha.imag() != 0.0 || b.beta.imag() != 0.0))
      return where + "real elements need real alpha and beta";
    if (b.a == nullptr && j.a.local_elements() > 0)
      return where + "A's buffer is null on a rank that holds " + std::to_string(j.a.local_elements()) +
             " elements of A";
    if (b.b == nullptr && b.alpha != scalar(0.0, 0.0) && j.b.local_elements() > 0)
      return where + "B's buffer is null on a rank that holds " + std::to_string(j.b.local_elements()) +
             " elements of B (only alpha = 0 allows that)";
  }
  return {};
}

}  // namespace

namespace {

// This core's share of the largest cache it uses: the cache's size over the CPUs sharing it, read from
// Linux's sysfs (glibc's sysconf reports the whole package's L3 on some virtual machines). 1 MiB where
// the system does not say.
std::int64_t read_cache_share() {
  std::int64_t best = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream size_file(dir + "size"), type_file(dir + "type"), shared_file(dir + "shared_cpu_list");
    if (!size_file) break;
    std::string size_text, type, shared;
    size_file >> size_text;
    type_file >> type;
    shared_file >> shared;
    if (type == "Instruction" || size_text.empty()) continue;
    std::int64_t bytes = std::strtoll(size_text.c_str(), nullptr, 10);
    if (size_text.back() == 'K') bytes <<= 10;
    if (size_text.back() == 'M') bytes <<= 20;
    // "0-7,64-71": count the CPUs.
    std::int64_t cpus = 0;
    std::istringstream ranges(shared);
    for (std::string range; std::getline(ranges, range, ',');) {
      const auto dash = range.find('-');
      cpus += dash == std::string::npos
                  ? 1
                  : std::strtoll(range.c_str() + dash + 1, nullptr, 10) - std::strtoll(range.c_str(), nullptr, 10) + 1;
    }
    if (bytes > 0) best = std::max(best, bytes / std::max<std::int64_t>(cpus, 1));
  }
  return best > 0 ? best : std::int64_t(1) << 20;
}

std::int64_t cache_share_bytes() {
  static const std::int64_t share = read_cache_share();
  return share;
}

}  // namespace

// The segment goes back to its window; the last plan holding a window that the communicator's cache no longer
// does frees it, collectively over the node: plans must be destroyed in the same order on every rank (as any MPI
// object shared by a communicator).
transform_plan::impl::~impl() = default;

void transform_plan::impl::setup_exchange(MPI_Comm caller) {
  const seconds_since started;
  strategy = options.strategy;
  if (strategy == exchange_strategy::automatic) {
    // Shared memory saves two copies per byte when peers share the node; it pays off once messages are
    // large enough to amortise the two node barriers, and for a single execution once they are large enough
    // to amortise the window's creation too. Decided collectively so that all ranks agree.
    std::int64_t total = 0;
    REDIST_MPI_CHECK(mpi::allreduce_yielding(&send_bytes, &total, 1, MPI_INT64_T, MPI_SUM, comm.get()));
    const std::int64_t per_rank = total / std::max(nranks, 1);
    std::int64_t shared_from = std::int64_t(1) << 20;
    if (options.one_shot && nranks > 1)
      shared_from = mpi::hosts_oversubscribed(caller) ? one_shot_window_bytes_oversubscribed : one_shot_window_bytes;
    strategy = nranks > 1 && per_rank >= shared_from ? exchange_strategy::shared_memory
                                                     : exchange_strategy::point_to_point;
    stats.one_shot_choices = strategy == exchange_strategy::point_to_point && per_rank >= (std::int64_t(1) << 20);
  }
  // Without MPI-4 large counts, whether some rank's messages exceed int (then MPI_Alltoallw carries them):
  // decided here, the same on every rank. The totals bound every count and displacement.
  if (strategy == exchange_strategy::alltoallv && !mpi::has_large_counts())
    alltoallv_wide = mpi::on_any_rank(comm.get(), std::max(send_bytes, recv_bytes) > mpi::int_limit());

  std::int64_t node_send_bytes = 0, node_recv_bytes = 0;
  send_on_node.assign(sends.size(), 0);
  recv_on_node.assign(recvs.size(), 0);
  if (strategy == exchange_strategy::shared_memory) {
    node_comm = mpi::node_duplicate(caller);
    // Node rank of every rank of comm (or MPI_UNDEFINED): O(P) per rank, computed once.
    MPI_Group world_group, node_group;
    REDIST_MPI_CHECK(MPI_Comm_group(comm.get(), &world_group));
    REDIST_MPI_CHECK(MPI_Comm_group(node_comm.get(), &node_group));
    std::vector<int> world_ranks(static_cast<size_t>(nranks)), node_ranks(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) world_ranks[static_cast<size_t>(r)] = r;
    REDIST_MPI_CHECK(MPI_Group_translate_ranks(world_group, nranks, world_ranks.data(), node_group, node_ranks.data()));
    REDIST_MPI_CHECK(MPI_Group_free(&world_group));
    REDIST_MPI_CHECK(MPI_Group_free(&node_group));
    setup_streams(caller, node_ranks);
    for (size_t i = 0; i < sends.size(); ++i)
      if (send_on_node[i]) node_send_bytes += sends[i].bytes;
    for (size_t i = 0; i < recvs.size(); ++i)
      if (recv_on_node[i]) node_recv_bytes += recvs[i].bytes;
  }
  stats.plan_exchange_seconds = started.elapsed();
  const seconds_since buffers_started;
  // Private buffers for everything that does not go through the window.
  const std::int64_t private_send = send_bytes - node_send_bytes;
  const std::int64_t private_recv = recv_bytes - node_recv_bytes;
  // Touched here so that page faults are paid by planning, not by the first execution.
  send_buffer = memory::allocate_pages(private_send);
  memory::touch_pages(send_buffer.get(), private_send);
  recv_buffer = memory::allocate_pages(private_recv);
  memory::touch_pages(recv_buffer.get(), private_recv);
  stats.plan_buffers_seconds = buffers_started.elapsed();
  choose_stores();
  // Message offsets inside the private buffers skip messages that go through the window.
  std::int64_t off = 0;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (send_on_node[i]) continue;
    sends[i].byte_offset = off;
    off += sends[i].bytes;
  }
  off = 0;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recv_on_node[i]) continue;
    recvs[i].byte_offset = off;
    off += recvs[i].bytes;
  }
}

namespace {

std::int64_t align_to_line(std::int64_t bytes) {
  return (bytes + transform_plan::impl::cache_line - 1) / transform_plan::impl::cache_line *
         transform_plan::impl::cache_line;
}

// Trims runs to [first, first + count) of the tile's packed index and rebases them to the piece.
std::vector<run> trim_runs(const std::vector<run>& runs, std::int64_t first, std::int64_t count) {
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
// order. When op(B)'s packing order and A's agree, a piece is a run of whole lines (long contiguous
// runs on both sides); when they differ the unpack transposes, and pieces are near-square blocks so
// that both its reads and its writes have runs of some length.
void cut_tile(const tile& t, const job_plan& jp, std::int64_t max_elements, std::vector<tile>& out) {
  if (t.rows * t.cols <= max_elements) {
    out.push_back(t);
    return;
  }
  const bool a_col_major = jp.a_order == storage_order::col_major;
  std::int64_t piece_rows, piece_cols;
  if (jp.packed_order == jp.a_order) {
    // Whole lines of A's contiguous dimension where they fit.
    if (a_col_major) {
      piece_rows = std::min(t.rows, max_elements);
      piece_cols = std::max<std::int64_t>(1, max_elements / piece_rows);
    } else {
      piece_cols = std::min(t.cols, max_elements);
      piece_rows = std::max<std::int64_t>(1, max_elements / piece_cols);
    }
  } else {
    const auto side = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(static_cast<double>(max_elements))));
    const std::int64_t cols0 = std::min(t.cols, side);
    piece_rows = std::min(t.rows, std::max<std::int64_t>(1, max_elements / cols0));
    piece_cols = std::max<std::int64_t>(1, max_elements / piece_rows);
  }
  piece_rows = std::min(piece_rows, t.rows);
  piece_cols = std::min(piece_cols, t.cols);
  auto one_piece = [&](std::int64_t r0, std::int64_t c0) {
    tile p;
    p.job = t.job;
    p.rows = std::min(piece_rows, t.rows - r0);
    p.cols = std::min(piece_cols, t.cols - c0);
    p.row_runs = trim_runs(t.row_runs, r0, p.rows);
    p.col_runs = trim_runs(t.col_runs, c0, p.cols);
    out.push_back(std::move(p));
  };
  if (a_col_major) {
    for (std::int64_t c0 = 0; c0 < t.cols; c0 += piece_cols)
      for (std::int64_t r0 = 0; r0 < t.rows; r0 += piece_rows) one_piece(r0, c0);
  } else {
    for (std::int64_t r0 = 0; r0 < t.rows; r0 += piece_rows)
      for (std::int64_t c0 = 0; c0 < t.cols; c0 += piece_cols) one_piece(r0, c0);
  }
}

}  // namespace

void transform_plan::impl::setup_streams(MPI_Comm caller, const std::vector<int>& node_ranks) {
  node_size = mpi::size(node_comm.get());
  const int node_rank = mpi::rank(node_comm.get());
  std::int64_t chunk_bytes = options.stream_chunk_bytes;
  if (chunk_bytes == 0) {
    // Both ends of a stream must cut it alike, so the inputs are agreed over the node: the largest thread
    // count, and the CPUs the node's ranks may run on (the union of their affinity masks).
    std::int64_t threads = options.num_threads > 0 ? options.num_threads : omp_get_max_threads();
    REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &threads, 1, MPI_INT64_T, MPI_MAX, node_comm.get()));
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_ZERO(&cpus);
    static_assert(sizeof(cpu_set_t) % sizeof(unsigned long) == 0, "cpu_set_t is a bit array of longs");
    REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, &cpus, static_cast<int>(sizeof(cpus) / sizeof(unsigned long)),
                                   MPI_UNSIGNED_LONG, MPI_BOR, node_comm.get()));
    const std::int64_t node_cpus = CPU_COUNT(&cpus);
    // 256 KiB per thread keeps a chunk in the cache between packing and unpacking. When the node runs
    // more threads than it has CPUs, a rank waiting for a descheduled peer gives its core away, and each
    // such switch costs more than small chunks save: 2 MiB per thread (measured on 4 ranks sharing 2 cores:
    // 256 KiB chunks took 1.15-1.2x as long as whole messages, 2 MiB chunks 1.0-1.05x). Not for a one-shot
    // plan: its rings are mostly fresh shared memory, and faulting in 4 slots of 2 MiB per node peer cost more
    // than small chunks lose in one execution (pdgemr2d N = 8000 there: 0.2 s against 0.03 s).
    const bool oversubscribed = node_cpus > 0 && node_size * threads > node_cpus;
    chunk_bytes = (std::int64_t(oversubscribed && !options.one_shot ? 2048 : 256) << 10) * threads;
    stats.one_shot_choices = stats.one_shot_choices || (oversubscribed && options.one_shot);
  }
  stats.stream_chunk_bytes = chunk_bytes;
  auto elem_size_of = [&](const tile& t) {
    return static_cast<std::int64_t>(job_plans[static_cast<size_t>(t.job)].elem_size);
  };
  // A stream's own format: the message's tiles cut into pieces, each packed compactly, 64-byte aligned,
  // in chunks of consecutive pieces up to chunk_bytes (at least one piece). Sender and receiver derive it
  // from the same global knowledge (tile extents, runs, orders), so they cut alike.
  auto elements_in = [&](const tile& t) { return std::max<std::int64_t>(1, chunk_bytes / elem_size_of(t)); };
  auto make_stream = [&](const peer_message& m) {
    message_stream st;
    for (const tile& t : m.tiles) cut_tile(t, job_plans[static_cast<size_t>(t.job)], elements_in(t), st.pieces);
    for (size_t first = 0; first < st.pieces.size();) {
      std::int64_t offset = 0;
      size_t last = first;
      while (last < st.pieces.size()) {
        tile& p = st.pieces[last];
        const std::int64_t bytes = p.rows * p.cols * elem_size_of(p);
        if (last > first && offset + bytes > chunk_bytes) break;
        p.byte_offset = offset;
        offset = align_to_line(offset + bytes);
        ++last;
      }
      st.chunks.push_back({first, last});
      st.slot_bytes = std::max(st.slot_bytes, offset);
      first = last;
    }
    st.slots = std::min<std::int64_t>(ring_slots, static_cast<std::int64_t>(st.chunks.size()));
    return st;
  };
  send_streams.assign(sends.size(), message_stream{});
  recv_streams.assign(recvs.size(), message_stream{});
  std::vector<std::int64_t> ring_offset(static_cast<size_t>(node_size), -1), chunk_count(static_cast<size_t>(node_size), 0);
  std::int64_t segment_bytes = counters_offset() + 2 * node_size * cache_line;
  for (size_t i = 0; i < sends.size(); ++i) {
    const int d = node_ranks[static_cast<size_t>(sends[i].rank)];
    if (d == MPI_UNDEFINED) continue;
    send_on_node[i] = 1;
    ++stats.peers_on_node;
    send_streams[i] = make_stream(sends[i]);
    ring_offset[static_cast<size_t>(d)] = segment_bytes;
    chunk_count[static_cast<size_t>(d)] = static_cast<std::int64_t>(send_streams[i].chunks.size());
    segment_bytes += send_streams[i].slots * send_streams[i].slot_bytes;
  }
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (node_ranks[static_cast<size_t>(recvs[i].rank)] == MPI_UNDEFINED) continue;
    recv_on_node[i] = 1;
    recv_streams[i] = make_stream(recvs[i]);
  }
  for (const tile& t : local_tiles) cut_tile(t, job_plans[static_cast<size_t>(t.job)], elements_in(t), local_pieces);

  detail::reserve_node_segment(caller, node_comm.get(), segment_bytes, segment);
  window = segment.arena->window();
  std::byte* base = segment.arena->segment(node_rank) + segment.offset;
  // Touched here so that page faults are paid by planning, not by the first execution; counters start at 0.
  std::memset(base, 0, static_cast<size_t>(segment_bytes));
  for (int d = 0; d < node_size; ++d) {
    std::memcpy(header_slot(base, ring_offset_slot(d)), &ring_offset[static_cast<size_t>(d)], sizeof(std::int64_t));
    std::memcpy(header_slot(base, chunk_count_slot(d)), &chunk_count[static_cast<size_t>(d)], sizeof(std::int64_t));
  }
  for (size_t j = 0; j < job_plans.size(); ++j) {
    const storage_view& v = job_plans[j].b_view;
    const std::int64_t storage[2] = {v.strides.rs, v.strides.cs};
    std::memcpy(header_slot(base, storage_slot(j)), storage, sizeof(storage));
  }
  my_segment = base;
  stats.window_bytes = segment_bytes;
  stats.window_reused = segment.reused;
  // Where every node rank's segment starts in its part of the window; gathered once every header is written.
  REDIST_MPI_CHECK(MPI_Win_sync(window));
  std::vector<std::int64_t> segment_offsets(static_cast<size_t>(node_size));
  MPI_Request gathered = MPI_REQUEST_NULL;
  REDIST_MPI_CHECK(MPI_Iallgather(&segment.offset, 1, MPI_INT64_T, segment_offsets.data(), 1, MPI_INT64_T,
                                  node_comm.get(), &gathered));
  REDIST_MPI_CHECK(mpi::wait_yielding(gathered));
  REDIST_MPI_CHECK(MPI_Win_sync(window));

  auto segment_of = [&](int peer_node_rank) {
    return segment.arena->segment(peer_node_rank) + segment_offsets[static_cast<size_t>(peer_node_rank)];
  };
  for (size_t i = 0; i < sends.size(); ++i) {
    if (!send_on_node[i]) continue;
    const int d = node_ranks[static_cast<size_t>(sends[i].rank)];
    message_stream& st = send_streams[i];
    st.ring = base + ring_offset[static_cast<size_t>(d)];
    st.published = published_counter(base, d);
    st.consumed = consumed_counter(segment_of(d), node_rank);
  }
  recv_segment.assign(recvs.size(), nullptr);
  std::string mismatch;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (!recv_on_node[i]) continue;
    const int s = node_ranks[static_cast<size_t>(recvs[i].rank)];
    std::byte* peer = segment_of(s);
    std::int64_t offset = -1, chunks = 0;
    std::memcpy(&offset, header_slot(peer, ring_offset_slot(node_rank)), sizeof(offset));
    std::memcpy(&chunks, header_slot(peer, chunk_count_slot(node_rank)), sizeof(chunks));
    message_stream& st = recv_streams[i];
    if (offset < 0 || chunks != static_cast<std::int64_t>(st.chunks.size()))
      mismatch = "node peer " + std::to_string(recvs[i].rank) + " streams " + std::to_string(chunks) +
                 " chunks to this rank, which expects " + std::to_string(st.chunks.size()) +
                 " (were ranks given different transform_options::stream_chunk_bytes?)";
    st.ring = peer + offset;
    st.published = published_counter(peer, node_rank);
    st.consumed = consumed_counter(base, s);
    recv_segment[i] = peer;
  }
  mpi::agree_on(comm.get(), mpi::error_kind::invalid_argument, mismatch);
}

void transform_plan::impl::choose_stores() {
  switch (options.stores) {
    case store_policy::cached: pack_stores = result_stores = kernels::store_hint::cached; break;
    case store_policy::streaming: pack_stores = result_stores = kernels::store_hint::streaming; break;
    case store_policy::automatic:
      // Streaming stores skip the read of every destination line (packing a whole message ran 1.6x faster
      // in isolation), but what they write comes from memory when it is read back. Only message buffers
      // far larger than this core's share of the last-level cache are written that way: A is written
      // with ordinary stores (streaming its runs made 4-rank identity redistributions of 8000^2 doubles
      // 1.4-1.9x slower on a 16-core Xeon), and shared-memory ring slots always are. Decided per rank,
      // no communication: the choice does not change results.
      result_stores = kernels::store_hint::cached;
      pack_stores = send_bytes > 8 * cache_share_bytes() ? kernels::store_hint::streaming : kernels::store_hint::cached;
      break;
  }
  stats.streaming_stores = pack_stores == kernels::store_hint::streaming || result_stores == kernels::store_hint::streaming;
}

void transform_plan::execute(const std::vector<job_buffers>& buffers) const { execute_agreed(buffers, {}); }

void transform_plan::execute_agreed(const std::vector<job_buffers>& buffers, const std::string& problem) const {
  if (!impl_) throw invalid_argument("execute on an empty transform_plan (build it with make_plan)");
  impl_->execute(buffers, problem);
}

void transform_plan::impl::execute(const std::vector<job_buffers>& buffers, const std::string& caller_problem) const {
  const std::string problem = caller_problem.empty() ? check_buffers(*this, buffers) : caller_problem;
  const bool shared = strategy == exchange_strategy::shared_memory;
  // shared_memory: where this rank's B is, published before the first synchronisation; after it, per job,
  // the minimum of (token, ~token) over the ranks says whether all use one node_buffer (see below).
  std::vector<detail::node_segment> my_b_segment(job_plans.size());
  std::vector<std::uint64_t> source_tokens;
  if (shared) source_tokens = publish_sources(problem.empty() ? &buffers : nullptr, my_b_segment);
  if (options.check_consistency) {
    // Agreed over all ranks, so a problem on one rank stops every rank before anything moves. Being a
    // synchronisation of all ranks, it also tells a shared-memory sender that its node peers finished
    // reading the previous execution's data from its window segment, and it carries the source tokens.
    mpi::agreement agreed(comm.get());
    if (!problem.empty()) agreed.fail(mpi::error_kind::invalid_argument, problem);
    std::vector<std::size_t> slots;
    for (std::uint64_t token : source_tokens) slots.push_back(agreed.reduce_min(static_cast<std::int64_t>(token)));
    agreed.conclude();
    // Signed minima serve as well: only "are all equal" is read from them.
    for (std::size_t k = 0; k < slots.size(); ++k) source_tokens[k] = static_cast<std::uint64_t>(agreed.min(slots[k]));
  } else if (!problem.empty()) {
    throw invalid_argument(problem);
  } else if (shared) {
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, source_tokens.data(), static_cast<int>(source_tokens.size()),
                                   MPI_UINT64_T, MPI_MIN, node_comm.get()));
  }
  // Jobs whose B sits in one node_buffer on every rank: node peers read it directly.
  std::vector<char> direct(job_plans.size(), 0);
  bool any_direct = false;
  if (shared) {
    REDIST_MPI_CHECK(MPI_Win_sync(window));  // peers' headers are visible from here
    for (size_t j = 0; j < job_plans.size(); ++j) {
      const std::uint64_t lowest = source_tokens[2 * j], highest = ~source_tokens[2 * j + 1];
      direct[j] = lowest != 0 && lowest == highest;
      any_direct = any_direct || direct[j];
    }
  }
  const int num_threads = options.num_threads > 0 ? options.num_threads : omp_get_max_threads();
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(num_threads);
  struct restore_threads {
    int n;
    ~restore_threads() { omp_set_num_threads(n); }
  } restore{saved_threads};

  const tile_ops ops{job_plans, buffers, pack_stores, result_stores};
  MPI_Comm c = comm.get();
  auto pack_message = [&](const peer_message& m, std::byte* dst) {
    for (const tile& t : m.tiles) ops.pack(t, dst);
  };
  auto unpack_message = [&](const peer_message& m, const std::byte* src) {
    for (const tile& t : m.tiles) ops.unpack(t, src);
  };
  auto private_send = [&](size_t i) { return send_buffer.get() + sends[i].byte_offset; };
  auto private_recv = [&](size_t i) { return recv_buffer.get() + recvs[i].byte_offset; };

  if (strategy == exchange_strategy::alltoallv) {
    for (size_t i = 0; i < sends.size(); ++i) pack_message(sends[i], private_send(i));
    const size_t n = static_cast<size_t>(nranks);
    std::vector<std::int64_t> scount(n, 0), rcount(n, 0), sdispl(n, 0), rdispl(n, 0);
    for (const auto& m : sends) {
      scount[static_cast<size_t>(m.rank)] = m.bytes;
      sdispl[static_cast<size_t>(m.rank)] = m.byte_offset;
    }
    for (const auto& m : recvs) {
      rcount[static_cast<size_t>(m.rank)] = m.bytes;
      rdispl[static_cast<size_t>(m.rank)] = m.byte_offset;
    }
    std::byte dummy{};
    std::byte* sbuf = send_buffer ? send_buffer.get() : &dummy;
    std::byte* rbuf = recv_buffer ? recv_buffer.get() : &dummy;
    mpi::alltoallv(sbuf, scount.data(), sdispl.data(), MPI_BYTE, rbuf, rcount.data(), rdispl.data(), MPI_BYTE, c,
                   alltoallv_wide);
    for (const tile& t : local_tiles) ops.local(t);
    for (size_t i = 0; i < recvs.size(); ++i) unpack_message(recvs[i], private_recv(i));
    return;
  }

  if (strategy == exchange_strategy::torus_routed) {
    // Every message packed up front; the rounds then move them one after another (a rank starts round
    // k + 1 once its part of round k is done), and each received message is unpacked as soon as its round
    // is done, before the next round starts.
    for (size_t i : send_order) pack_message(sends[i], private_send(i));
    for (const tile& t : local_tiles) ops.local(t);
    std::vector<const void*> round_out(round_send.size(), nullptr);
    std::vector<void*> round_in(round_recv.size(), nullptr);
    for (size_t k = 0; k < round_send.size(); ++k) {
      if (round_send[k] != no_message) round_out[k] = private_send(round_send[k]);
      if (round_recv[k] != no_message) round_in[k] = private_recv(round_recv[k]);
    }
    torus_rounds.execute(round_out, round_in, [&](int k) {
      const size_t i = round_recv[static_cast<size_t>(k)];
      if (i != no_message) unpack_message(recvs[i], private_recv(i));
    });
    return;
  }

  // point_to_point, and the off-node part of shared_memory.
  std::vector<MPI_Request> recv_requests;
  std::vector<size_t> recv_index;
  std::vector<mpi::byte_message> recv_types;
  recv_types.reserve(recvs.size());
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recv_on_node[i]) continue;
    recv_types.push_back(mpi::describe_bytes(recvs[i].bytes));
    recv_requests.emplace_back();
    recv_index.push_back(i);
    REDIST_MPI_CHECK(MPI_Irecv(private_recv(i), recv_types.back().count, recv_types.back().type, recvs[i].rank,
                               exchange_tag, c, &recv_requests.back()));
  }
  std::vector<MPI_Request> send_requests;
  std::vector<mpi::byte_message> send_types;
  send_types.reserve(sends.size());
  for (size_t i : send_order) {
    if (send_on_node[i]) continue;
    pack_message(sends[i], private_send(i));
    send_types.push_back(mpi::describe_bytes(sends[i].bytes));
    send_requests.emplace_back();
    REDIST_MPI_CHECK(MPI_Isend(private_send(i), send_types.back().count, send_types.back().type, sends[i].rank,
                               exchange_tag, c, &send_requests.back()));
  }
  size_t arrived = 0;  // off-node messages unpacked
  auto unpack_next_arrival = [&](bool wait) {
    if (arrived == recv_requests.size()) return false;
    int which = MPI_UNDEFINED, flag = 0;
    if (wait) {
      REDIST_MPI_CHECK(mpi::wait_any_yielding(static_cast<int>(recv_requests.size()), recv_requests.data(), &which));
    } else {
      REDIST_MPI_CHECK(MPI_Testany(static_cast<int>(recv_requests.size()), recv_requests.data(), &which, &flag,
                                   MPI_STATUS_IGNORE));
      if (!flag || which == MPI_UNDEFINED) return false;
    }
    const size_t i = recv_index[static_cast<size_t>(which)];
    unpack_message(recvs[i], private_recv(i));
    ++arrived;
    return true;
  };
  if (shared)
    stream_on_node(buffers, direct, my_b_segment, [&] { return unpack_next_arrival(false); });
  else
    for (const tile& t : local_tiles) ops.local(t);
  while (unpack_next_arrival(true)) {
  }
  if (!send_requests.empty())
    REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(send_requests.size()), send_requests.data()));
  if (any_direct) {
    // Node peers read this rank's B until here: the caller may modify B once execute returns.
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(mpi::barrier_yielding(node_comm.get()));
  }
}

namespace {
std::int64_t load_acquire(const std::int64_t* counter) { return __atomic_load_n(counter, __ATOMIC_ACQUIRE); }
void store_release(std::int64_t* counter, std::int64_t value) { __atomic_store_n(counter, value, __ATOMIC_RELEASE); }
}  // namespace

void transform_plan::impl::stream_on_node(const std::vector<job_buffers>& buffers, const std::vector<char>& direct,
                                          const std::vector<detail::node_segment>& my_b_segment,
                                          const std::function<bool()>& poll_off_node) const {
  // Packing into a ring slot uses ordinary stores whatever the policy: the point is that the receiver
  // finds the chunk in the cache.
  const tile_ops ring_ops{job_plans, buffers, kernels::store_hint::cached, result_stores};
  const tile_ops ops{job_plans, buffers, pack_stores, result_stores};
  const bool any_direct = std::any_of(direct.begin(), direct.end(), [](char d) { return d != 0; });
  std::vector<std::vector<const void*>> peer_b(recvs.size());
  std::vector<std::vector<storage_view>> peer_view(recvs.size());
  if (any_direct)
    for (size_t i = 0; i < recvs.size(); ++i) {
      if (!recv_on_node[i]) continue;
      peer_b[i].assign(job_plans.size(), nullptr);
      peer_view[i].resize(job_plans.size());
      locate_peer_sources(recv_segment[i], direct, my_b_segment, peer_b[i], peer_view[i]);
    }
  // A chunk whose pieces are all read directly from B carries no data: it needs no slot. Without direct
  // jobs every chunk carries data; with them the answer is kept per stream until the stream moves on, so
  // that waiting passes do not rescan the chunk's pieces.
  std::vector<signed char> send_data(sends.size(), -1), recv_data(recvs.size(), -1);
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
  std::vector<std::size_t> produced(sends.size(), 0), consumed(recvs.size(), 0);
  std::size_t next_local = 0;
  // Every rank of the node runs this loop in the same execution; each pass moves at most one chunk per
  // stream, so that what a peer packs is read soon after. Nothing here blocks: a sender waits for a free
  // slot and a receiver for a published chunk by polling, doing local work or off-node messages instead.
  for (;;) {
    bool progress = false, pending = false;
    for (size_t i : send_order) {
      if (!send_on_node[i] || produced[i] == send_streams[i].chunks.size()) continue;
      pending = true;
      const message_stream& st = send_streams[i];
      const stream_chunk& ch = st.chunks[produced[i]];
      const std::int64_t serial = executions * static_cast<std::int64_t>(st.chunks.size()) +
                                  static_cast<std::int64_t>(produced[i]);
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
    for (size_t i = 0; i < recvs.size(); ++i) {
      if (!recv_on_node[i] || consumed[i] == recv_streams[i].chunks.size()) continue;
      pending = true;
      const message_stream& st = recv_streams[i];
      const stream_chunk& ch = st.chunks[consumed[i]];
      const std::int64_t serial = executions * static_cast<std::int64_t>(st.chunks.size()) +
                                  static_cast<std::int64_t>(consumed[i]);
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

std::vector<std::uint64_t> transform_plan::impl::publish_sources(const std::vector<job_buffers>* buffers,
                                                                 std::vector<detail::node_segment>& my_b_segment) const {
  // Per job, where this rank's B is (rank in its node_buffer's window, offset) goes into the segment
  // header, and (token, ~token) into the values whose minimum over the ranks is taken: min(token) and
  // ~max(token). A job is read directly when they agree on a nonzero token: every rank's B is in the same
  // allocation (so every rank also holds its window). Token 0: B not in a node_buffer, irregular
  // storage, alpha == 0 (B not read) or bad buffers (the execution throws anyway).
  const size_t jobs_count = job_plans.size();
  std::vector<std::uint64_t> tokens(2 * jobs_count, 0);
  for (size_t j = 0; j < jobs_count; ++j) {
    std::int64_t location[2] = {0, 0};
    detail::node_segment& seg = my_b_segment[j];
    const bool readable = buffers != nullptr && (*buffers)[j].alpha != scalar(0.0, 0.0) &&
                          job_plans[j].b_view.kind == storage_kind::regular &&
                          detail::find_node_segment((*buffers)[j].b, seg);
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

void transform_plan::impl::locate_peer_sources(const std::byte* peer_segment_base, const std::vector<char>& direct,
                                               const std::vector<detail::node_segment>& my_b_segment,
                                               std::vector<const void*>& peer_b,
                                               std::vector<storage_view>& peer_view) const {
  for (size_t j = 0; j < job_plans.size(); ++j) {
    if (!direct[j]) continue;
    std::int64_t storage[2], location[2];
    std::memcpy(storage, header_slot(peer_segment_base, storage_slot(j)), sizeof(storage));
    std::memcpy(location, header_slot(peer_segment_base, location_slot(j)), sizeof(location));
    // Every rank of the node found its B in the same allocation, so this rank holds its window too.
    peer_b[j] = detail::peer_segment(my_b_segment[j], static_cast<int>(location[0])) + location[1];
    peer_view[j].kind = storage_kind::regular;
    peer_view[j].strides = kernels::strided{storage[0], storage[1]};
  }
}

}  // namespace redist
