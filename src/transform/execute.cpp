// Execution of transform plans: packing, the exchange strategies, and unpacking with the transformation
// applied on receipt while other messages are still in flight.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "redist/error.hpp"
#include "redist/transform/detail/node_buffer_registry.hpp"
#include "redist/transform/detail/plan_impl.hpp"
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
  kernels::store_hint stores;

  bool skips_source(int job) const { return buffers[static_cast<size_t>(job)].alpha == scalar(0.0, 0.0); }

  void pack(const tile& t, std::byte* message) const {
    if (skips_source(t.job)) return;  // alpha == 0: B is not read; the receiver does not read the bytes either
    const job_plan& jp = plans[static_cast<size_t>(t.job)];
    with_type(jp.type, [&](auto tag) {
      using T = decltype(tag);
      pack_tile<T>(jp, t, static_cast<const T*>(buffers[static_cast<size_t>(t.job)].b), message, stores);
    });
  }
  void unpack(const tile& t, const std::byte* message) const {
    const job_plan& jp = plans[static_cast<size_t>(t.job)];
    const job_buffers& jb = buffers[static_cast<size_t>(t.job)];
    with_type(jp.type, [&](auto tag) {
      using T = decltype(tag);
      unpack_tile<T>(jp, t, static_cast<T*>(jb.a), message, from_scalar<T>(jb.alpha), from_scalar<T>(jb.beta),
                     stores);
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
                     from_scalar<T>(jb.beta), stores);
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

transform_plan::impl::~impl() {
  // Freeing a shared window is collective over the node: plans using it must be destroyed in the same
  // order on every rank (as any MPI object shared by a communicator).
  if (window != MPI_WIN_NULL && !mpi::finalized()) {
    MPI_Win_unlock_all(window);
    MPI_Win_free(&window);
  }
}

void transform_plan::impl::setup_exchange() {
  strategy = options.strategy;
  if (strategy == exchange_strategy::automatic) {
    // Shared memory saves two copies per byte when peers share the node; it pays off once messages are
    // large enough to amortise the two node barriers. Decided collectively so that all ranks agree.
    std::int64_t total = 0;
    REDIST_MPI_CHECK(MPI_Allreduce(&send_bytes, &total, 1, MPI_INT64_T, MPI_SUM, comm.get()));
    const std::int64_t per_rank = total / std::max(nranks, 1);
    strategy = nranks > 1 && per_rank >= (std::int64_t(1) << 20) ? exchange_strategy::shared_memory
                                                                  : exchange_strategy::point_to_point;
  }
  if (strategy == exchange_strategy::alltoallv) {
#if MPI_VERSION < 4
    if (send_bytes > INT_MAX || recv_bytes > INT_MAX)
      throw overflow_error("the alltoallv strategy needs MPI-4 large-count collectives for " +
                           std::to_string(std::max(send_bytes, recv_bytes)) + " bytes; use point_to_point");
#endif
  }

  std::int64_t node_send_bytes = 0, node_recv_bytes = 0;
  send_shared.assign(sends.size(), nullptr);
  recv_shared.assign(recvs.size(), nullptr);
  recv_segment.assign(recvs.size(), nullptr);
  if (strategy == exchange_strategy::shared_memory) {
    node_comm = mpi::split_shared(comm.get());
    const int node_size = mpi::size(node_comm.get());
    const int node_rank = mpi::rank(node_comm.get());
    // Node rank of every rank of comm (or MPI_UNDEFINED): O(P) per rank, computed once.
    MPI_Group world_group, node_group;
    REDIST_MPI_CHECK(MPI_Comm_group(comm.get(), &world_group));
    REDIST_MPI_CHECK(MPI_Comm_group(node_comm.get(), &node_group));
    std::vector<int> world_ranks(static_cast<size_t>(nranks)), node_ranks(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) world_ranks[static_cast<size_t>(r)] = r;
    REDIST_MPI_CHECK(MPI_Group_translate_ranks(world_group, nranks, world_ranks.data(), node_group, node_ranks.data()));
    REDIST_MPI_CHECK(MPI_Group_free(&world_group));
    REDIST_MPI_CHECK(MPI_Group_free(&node_group));

    // Segment: a header (see plan_impl.hpp: where my message to node rank d starts, or -1; my op(B)
    // storage per job; my B's node_buffer location per job), then data.
    this->node_size = node_size;
    const std::int64_t header = header_words() * static_cast<std::int64_t>(sizeof(std::int64_t));
    std::vector<std::int64_t> offsets(static_cast<size_t>(node_size), -1);
    std::int64_t data = header;
    for (const auto& m : sends) {
      const int d = node_ranks[static_cast<size_t>(m.rank)];
      if (d == MPI_UNDEFINED) continue;
      offsets[static_cast<size_t>(d)] = data;
      data += m.bytes;
      ++stats.peers_on_node;
      node_send_bytes += m.bytes;
    }
    MPI_Info info;
    REDIST_MPI_CHECK(MPI_Info_create(&info));
    REDIST_MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    std::byte* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(data), 1, info, node_comm.get(), &base, &window);
    MPI_Info_free(&info);
    REDIST_MPI_CHECK(rc);
    REDIST_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, window));
    // Touched here so that page faults are paid by planning, not by the first execution.
    std::memset(base, 0, static_cast<size_t>(data));
    std::memcpy(base, offsets.data(), offsets.size() * sizeof(std::int64_t));
    my_segment = base;
    for (size_t j = 0; j < job_plans.size(); ++j) {
      const storage_view& v = job_plans[j].b_view;
      const std::int64_t storage[2] = {v.strides.rs, v.strides.cs};
      std::memcpy(header_slot(base, storage_slot(j)), storage, sizeof(storage));
    }
    for (size_t i = 0; i < sends.size(); ++i) {
      const int d = node_ranks[static_cast<size_t>(sends[i].rank)];
      if (d != MPI_UNDEFINED) send_shared[i] = base + offsets[static_cast<size_t>(d)];
    }
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(MPI_Barrier(node_comm.get()));
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    for (size_t i = 0; i < recvs.size(); ++i) {
      const int s = node_ranks[static_cast<size_t>(recvs[i].rank)];
      if (s == MPI_UNDEFINED) continue;
      MPI_Aint size = 0;
      int disp = 0;
      std::byte* peer = nullptr;
      REDIST_MPI_CHECK(MPI_Win_shared_query(window, s, &size, &disp, &peer));
      std::int64_t off = -1;
      std::memcpy(&off, peer + static_cast<std::ptrdiff_t>(node_rank) * static_cast<std::ptrdiff_t>(sizeof(std::int64_t)),
                  sizeof(off));
      if (off < 0) throw error("internal: node peer " + std::to_string(recvs[i].rank) + " has no message for this rank");
      recv_shared[i] = peer + off;
      recv_segment[i] = peer;
      node_recv_bytes += recvs[i].bytes;
    }
  }
  // Private buffers for everything that does not go through the window.
  const std::int64_t private_send = send_bytes - node_send_bytes;
  const std::int64_t private_recv = recv_bytes - node_recv_bytes;
  // Touched here so that page faults are paid by planning, not by the first execution.
  if (private_send > 0) {
    send_buffer.reset(new std::byte[static_cast<size_t>(private_send)]);
    std::memset(send_buffer.get(), 0, static_cast<size_t>(private_send));
  }
  if (private_recv > 0) {
    recv_buffer.reset(new std::byte[static_cast<size_t>(private_recv)]);
    std::memset(recv_buffer.get(), 0, static_cast<size_t>(private_recv));
  }
  choose_stores();
  // Message offsets inside the private buffers skip messages that go through the window.
  std::int64_t off = 0;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (send_shared[i]) continue;
    sends[i].byte_offset = off;
    off += sends[i].bytes;
  }
  off = 0;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recv_shared[i]) continue;
    recvs[i].byte_offset = off;
    off += recvs[i].bytes;
  }
}

void transform_plan::impl::choose_stores() {
  switch (options.stores) {
    case store_policy::cached: stores = kernels::store_hint::cached; break;
    case store_policy::streaming: stores = kernels::store_hint::streaming; break;
    case store_policy::automatic: {
      // Streaming stores skip the read of every destination line (packing ran 1.6x faster in isolation),
      // but what they write is certain to come from memory when read back, where ordinary stores leave
      // part of it in the last-level cache for the peers that unpack it. So only when a rank writes many
      // times its share of the cache. (In the 4-rank benchmark on 2 cores sharing a 32 MiB L3 the
      // difference was within noise at 56 and 224 MiB per rank.) Decided per rank, no communication: the
      // choice does not change results.
      const std::int64_t written = send_bytes + recv_bytes + stats.bytes_local;
      stores = written > 8 * cache_share_bytes() ? kernels::store_hint::streaming : kernels::store_hint::cached;
      break;
    }
  }
  stats.streaming_stores = stores == kernels::store_hint::streaming;
}

void transform_plan::execute(const std::vector<job_buffers>& buffers) const {
  if (!impl_) throw invalid_argument("execute on an empty transform_plan (build it with make_plan)");
  impl_->execute(buffers);
}

void transform_plan::impl::execute(const std::vector<job_buffers>& buffers) const {
  const std::string problem = check_buffers(*this, buffers);
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
    mpi::agree_on_errors(comm.get(), problem.empty() ? mpi::error_kind::none : mpi::error_kind::invalid_argument,
                         problem, source_tokens);
  } else if (!problem.empty()) {
    throw invalid_argument(problem);
  } else if (shared) {
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, source_tokens.data(), static_cast<int>(source_tokens.size()),
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
  const bool all_direct = any_direct && std::all_of(direct.begin(), direct.end(), [](char d) { return d != 0; });
  const int num_threads = options.num_threads > 0 ? options.num_threads : omp_get_max_threads();
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(num_threads);
  struct restore_threads {
    int n;
    ~restore_threads() { omp_set_num_threads(n); }
  } restore{saved_threads};

  const tile_ops ops{job_plans, buffers, stores};
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
#if MPI_VERSION >= 4
    std::vector<MPI_Count> scount(n, 0), rcount(n, 0);
    std::vector<MPI_Aint> sdispl(n, 0), rdispl(n, 0);
#else
    std::vector<int> scount(n, 0), rcount(n, 0), sdispl(n, 0), rdispl(n, 0);
#endif
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
#if MPI_VERSION >= 4
    REDIST_MPI_CHECK(MPI_Alltoallv_c(sbuf, scount.data(), sdispl.data(), MPI_BYTE, rbuf, rcount.data(), rdispl.data(),
                                     MPI_BYTE, c));
#else
    REDIST_MPI_CHECK(MPI_Alltoallv(sbuf, scount.data(), sdispl.data(), MPI_BYTE, rbuf, rcount.data(), rdispl.data(),
                                   MPI_BYTE, c));
#endif
    for (const tile& t : local_tiles) ops.local(t);
    for (size_t i = 0; i < recvs.size(); ++i) unpack_message(recvs[i], private_recv(i));
    return;
  }

  // point_to_point, and the off-node part of shared_memory.
  std::vector<MPI_Request> recv_requests;
  std::vector<size_t> recv_index;
  std::vector<mpi::byte_message> recv_types;
  recv_types.reserve(recvs.size());
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recv_shared[i]) continue;
    recv_types.push_back(mpi::describe_bytes(recvs[i].bytes));
    recv_requests.emplace_back();
    recv_index.push_back(i);
    REDIST_MPI_CHECK(MPI_Irecv(private_recv(i), recv_types.back().count, recv_types.back().type, recvs[i].rank,
                               exchange_tag, c, &recv_requests.back()));
  }
  if (shared) {
    // Node peers: pack straight into this rank's window segment; they read it after the barrier.
    for (size_t i : send_order)
      if (send_shared[i])
        for (const tile& t : sends[i].tiles)
          if (!direct[static_cast<size_t>(t.job)]) ops.pack(t, send_shared[i]);
  }
  std::vector<MPI_Request> send_requests;
  std::vector<mpi::byte_message> send_types;
  send_types.reserve(sends.size());
  for (size_t i : send_order) {
    if (send_shared[i]) continue;
    pack_message(sends[i], private_send(i));
    send_types.push_back(mpi::describe_bytes(sends[i].bytes));
    send_requests.emplace_back();
    REDIST_MPI_CHECK(MPI_Isend(private_send(i), send_types.back().count, send_types.back().type, sends[i].rank,
                               exchange_tag, c, &send_requests.back()));
  }
  if (shared && !all_direct) {  // the same decision on every rank of the node
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(MPI_Barrier(node_comm.get()));
    REDIST_MPI_CHECK(MPI_Win_sync(window));
  }
  for (const tile& t : local_tiles) ops.local(t);
  if (shared) {
    std::vector<const void*> peer_b(job_plans.size(), nullptr);
    std::vector<storage_view> peer_view(job_plans.size());
    for (size_t i = 0; i < recvs.size(); ++i) {
      if (!recv_shared[i]) continue;
      if (any_direct) locate_peer_sources(recv_segment[i], direct, my_b_segment, peer_b, peer_view);
      for (const tile& t : recvs[i].tiles) {
        const auto j = static_cast<size_t>(t.job);
        if (direct[j])
          ops.direct(t, peer_b[j], peer_view[j]);
        else
          ops.unpack(t, recv_shared[i]);
      }
    }
  }
  for (size_t done = 0; done < recv_requests.size(); ++done) {
    int which = MPI_UNDEFINED;
    REDIST_MPI_CHECK(MPI_Waitany(static_cast<int>(recv_requests.size()), recv_requests.data(), &which,
                                 MPI_STATUS_IGNORE));
    const size_t i = recv_index[static_cast<size_t>(which)];
    unpack_message(recvs[i], private_recv(i));
  }
  if (!send_requests.empty())
    REDIST_MPI_CHECK(MPI_Waitall(static_cast<int>(send_requests.size()), send_requests.data(), MPI_STATUSES_IGNORE));
  if (any_direct) {
    // Node peers read this rank's B until here: the caller may modify B once execute returns.
    REDIST_MPI_CHECK(MPI_Win_sync(window));
    REDIST_MPI_CHECK(MPI_Barrier(node_comm.get()));
  }
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
