// SPDX-License-Identifier: BSD-3-Clause
// Planner of the transform engine: validates the jobs, overlays the grids of A and op(B) = permute(B, axes) axis by
// axis, and derives, for this rank only, the tiles it sends, receives and copies locally. Matrix jobs are the
// d = 2 case: make_transform_plan turns them into reshape jobs and both entry points share everything after validation.
#include "redist/transform/plan.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include <omp.h>

#include "detail/plan_impl.hpp"
#include "field_hash.hpp"
#include "job_summary.hpp"
#include "layout/grid_view.hpp"
#include "machine/cache_line.hpp"
#include "machine/host.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "overlay.hpp"
#include "redist/error.hpp"
#include "redist/names.hpp"
#include "trace/recorder.hpp"

namespace redist {

using detail::block_index;
using detail::clamped;
using detail::dim_side;
using detail::group_length;
using detail::group_segments;
using detail::make_runs;
using detail::overlay;
using detail::placement;
using detail::run;
using detail::segment;
using detail::side_a;
using detail::side_b;
using detail::storage_view;
using detail::tile;

namespace {

storage_view make_view(const nd_layout& l) {
  storage_view v;
  v.kind = l.kind();
  v.ndim = l.ndim();
  for (int k = 0; k < l.ndim(); ++k) v.block_counts[static_cast<size_t>(k)] = l.blocks(k);
  if (l.kind() == storage_kind::regular) {
    std::copy(l.local_strides().begin(), l.local_strides().end(), v.strides.begin());
  } else {
    for (const auto& b : l.local_blocks()) {
      std::array<block_index, max_axes> block;
      placement where;
      where.offset = b.offset;
      for (int k = 0; k < l.ndim(); ++k) {
        block[static_cast<size_t>(k)] = block_index(b.block[static_cast<size_t>(k)]);
        where.strides[static_cast<size_t>(k)] = b.strides[static_cast<size_t>(k)];
      }
      v.blocks[v.block_key(block.data())] = where;
    }
  }
  return v;
}

detail::axis_order to_axis_order(const std::vector<int>& order) {
  detail::axis_order o{};
  std::copy(order.begin(), order.end(), o.begin());
  return o;
}

bool is_identity(const std::vector<int>& axes) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int>(i)) return false;
  return true;
}

// A position's index in its grid, C order: orders tiles as the tuple of its entries would.
std::int64_t flat_position(const std::array<int, max_axes>& position, const std::vector<int>& grid_shape) {
  std::int64_t flat = 0;
  for (size_t k = 0; k < grid_shape.size(); ++k) flat = flat * grid_shape[k] + position[k];
  return flat;
}

// Key that orders the tiles inside a message identically on sender and receiver.
struct tile_key {
  int job;
  std::int64_t a_position, b_position;
  std::int64_t piece;  // the rectangle's rank among its tile's (region cuts)
  bool operator<(const tile_key& o) const {
    return std::tie(job, a_position, b_position, piece) < std::tie(o.job, o.a_position, o.b_position, o.piece);
  }
};
using tiles_by_peer = std::map<int, std::map<tile_key, tile>>;

// One job's local check: its problem (kind none: fine), the rank its layouts describe, its global hash.
struct job_check {
  mpi::error_kind kind;
  std::string message;
  int my_rank;
  std::uint64_t global_hash;
};

// A job's check: its problem, the rank its layouts describe and one hash of what every rank must pass alike.
job_check checked_job(mpi::error_kind kind, std::string message, const reshape_job& j, MPI_Comm comm) {
  const int my_rank = j.a.my_rank() != mpi::rank(comm) ? j.a.my_rank() : j.b.my_rank();
  return job_check{
      kind, std::move(message), my_rank,
      field_hash()
          .add_all(j.a.global_hash(), j.b.global_hash(), j.type, j.conjugate, j.region.shape, j.region.diagonal, j.axes)
          .value()};
}

// The first problem with A's or B's local storage on this rank (kind none: fine).
std::pair<mpi::error_kind, std::string> local_storage_problem(const nd_layout& a, const nd_layout& b,
                                                              const std::string& where) {
  for (const auto& [layout, name] : {std::pair<const nd_layout*, const char*>{&a, "A: "}, {&b, "B: "}}) {
    try {
      layout->validate_local();
    } catch (const error& e) {
      return {mpi::error_kind::invalid_layout, where + name + e.what()};
    }
  }
  return {mpi::error_kind::none, {}};
}

// One reshape job's checks of its global description (type, layouts, shapes, axes, region); returns the kind and
// text of the first problem.
std::pair<mpi::error_kind, std::string> global_problem(const reshape_job& j, size_t index, int comm_size) {
  const std::string where = "job " + std::to_string(index) + ": ";
  if (std::string(to_string(j.type)) == "?")
    return {mpi::error_kind::invalid_argument, where + "element_type is " + std::to_string(static_cast<int>(j.type)) +
                                                   "; expected f32, f64, c32, c64, i32 or i64"};
  try {
    j.a.validate_global(comm_size);
  } catch (const error& e) {
    return {mpi::error_kind::invalid_layout, where + "A: " + e.what()};
  }
  try {
    j.b.validate_global(comm_size);
  } catch (const error& e) {
    return {mpi::error_kind::invalid_layout, where + "B: " + e.what()};
  }
  const int d = j.a.ndim();
  if (j.b.ndim() != d)
    return {mpi::error_kind::dimension_mismatch, where + "A has " + std::to_string(d) + " axes but B has " +
                                                     std::to_string(j.b.ndim()) + "; they must have the same number"};
  if (!j.axes.empty()) {
    std::vector<char> seen(static_cast<size_t>(d), 0);
    bool permutation = j.axes.size() == static_cast<size_t>(d);
    for (size_t i = 0; permutation && i < j.axes.size(); ++i) {
      const int a = j.axes[i];
      permutation = a >= 0 && a < d && !seen[static_cast<size_t>(a)];
      if (permutation) seen[static_cast<size_t>(a)] = 1;
    }
    if (!permutation) {
      std::string given;
      for (int a : j.axes) given += (given.empty() ? "" : ", ") + std::to_string(a);
      return {mpi::error_kind::invalid_argument, where + "axes are {" + given + "}; expected a permutation of 0.." +
                                                     std::to_string(d - 1) + " (or none for the identity)"};
    }
  }
  for (int i = 0; i < d; ++i) {
    const int from = j.axes.empty() ? i : j.axes[static_cast<size_t>(i)];
    if (j.a.extent(i) != j.b.extent(from))
      return {mpi::error_kind::dimension_mismatch,
              where + "axis " + std::to_string(i) + " of A has extent " + std::to_string(j.a.extent(i)) +
                  " but it is axis " + std::to_string(from) + " of B, of extent " + std::to_string(j.b.extent(from)) +
                  "; permute(B, axes) must have A's shape"};
  }
  if (j.region.shape != region_shape::all &&
      (d != 2 || (j.region.shape != region_shape::upper && j.region.shape != region_shape::lower)))
    return {
        mpi::error_kind::invalid_argument,
        where + "element_region::shape is " + std::to_string(static_cast<int>(j.region.shape)) +
            (d == 2 ? "; expected region_shape::all, upper or lower"
                    : "; triangular regions need d = 2 (this job has " + std::to_string(d) + " axes): expected all")};
  return {mpi::error_kind::none, {}};
}

// One reshape job's checks of this rank's storage; the global description passed global_problem.
std::pair<mpi::error_kind, std::string> local_problem(const reshape_job& j, size_t index, const char* entry_point) {
  const std::string where = "job " + std::to_string(index) + ": ";
  if (auto problem = local_storage_problem(j.a, j.b, where); problem.first != mpi::error_kind::none) return problem;
  if (j.a.my_rank() < 0 || j.b.my_rank() < 0)
    return {mpi::error_kind::invalid_argument, where + "layouts passed to " + entry_point +
                                                   " must describe this rank's storage (built with my_rank >= 0)"};
  return {mpi::error_kind::none, {}};
}

// Validates one reshape job locally; returns the kind and text of the first problem.
std::pair<mpi::error_kind, std::string> validate_reshape_job(const reshape_job& j, size_t index, int comm_size) {
  auto problem = global_problem(j, index, comm_size);
  return problem.first != mpi::error_kind::none ? problem : local_problem(j, index, "make_reshape_plan");
}

// A matrix job is checked as its engine job (the d = 2 case), after what only a matrix job can get wrong: its op,
// its shape (said in rows and columns), and the rules of grid_layout's ScaLAPACK-style storage.
std::pair<mpi::error_kind, std::string> validate_job(const job_description& j, const reshape_job& engine_job,
                                                     size_t index, int comm_size) {
  const std::string where = "job " + std::to_string(index) + ": ";
  if (j.operation != op::identity && j.operation != op::transpose && j.operation != op::conj_transpose)
    return {mpi::error_kind::invalid_argument, where + "op is " + std::to_string(static_cast<int>(j.operation)) +
                                                   "; expected op::identity, transpose or conj_transpose"};
  const bool t = j.operation != op::identity;
  const std::int64_t b_rows = t ? j.b.cols() : j.b.rows();
  const std::int64_t b_cols = t ? j.b.rows() : j.b.cols();
  if (j.a.rows() != b_rows || j.a.cols() != b_cols)
    return {mpi::error_kind::dimension_mismatch,
            where + "A is " + std::to_string(j.a.rows()) + "x" + std::to_string(j.a.cols()) +
                " but op(B) = " + to_string(j.operation) + "(B) is " + std::to_string(b_rows) + "x" +
                std::to_string(b_cols) + "; they must have the same shape"};
  if (auto problem = global_problem(engine_job, index, comm_size); problem.first != mpi::error_kind::none)
    return problem;
  for (const auto& [layout, name] : {std::pair<const grid_layout*, const char*>{&j.a, "A: "}, {&j.b, "B: "}}) {
    try {
      detail::check_regular_matrix_global(*layout);
      detail::check_regular_matrix_local(*layout);
    } catch (const error& e) {
      return {mpi::error_kind::invalid_layout, where + name + e.what()};
    }
  }
  return local_problem(engine_job, index, "make_transform_plan");
}

// The arguments' checks of both entry points, agreed over the ranks before anything is built: the options, each
// job (check_job(k) returns its problem and its global hash) and, with check_consistency, that every rank passed
// the same. Returns the plan's own communicator.
template <class CheckJob>
mpi::comm_handle agree_on_arguments(MPI_Comm comm, const transform_options& options, std::size_t job_count,
                                    const char* entry_point, CheckJob&& check_job) {
  const int me = mpi::rank(comm);
  mpi::agreement agreed(comm);
  // The plan's own communicator first: a failure to make it is agreed on with the arguments' checks.
  mpi::comm_handle owned_comm;
  agreed.collective([&] { owned_comm = mpi::plan_duplicate(comm); });
  // The host share that sizes the plan's OpenMP team is gathered once per communicator: on the first plan, here,
  // where a failure of its allgather is agreed on too (and forgotten by every rank). A step of its own, so that
  // every rank makes it.
  agreed.collective([&] { machine::host_share_of(comm); });
  agreed.on_failure([comm] { machine::forget_host_share(comm); });
  field_hash hash;
  if (std::string(to_string(options.strategy)) == "?")
    agreed.fail(mpi::error_kind::invalid_argument, "transform_options::strategy is " +
                                                       std::to_string(static_cast<int>(options.strategy)) +
                                                       "; expected an exchange_strategy");
  if (std::string(to_string(options.stores)) == "?")
    agreed.fail(mpi::error_kind::invalid_argument, "transform_options::stores is " +
                                                       std::to_string(static_cast<int>(options.stores)) +
                                                       "; expected " + spelled_choices<store_policy>());
  if (options.num_threads < 0)
    agreed.fail(mpi::error_kind::invalid_argument, "transform_options::num_threads is " +
                                                       std::to_string(options.num_threads) +
                                                       "; expected 0 (the OpenMP default) or a positive count");
  if (options.stream_chunk_bytes < 0)
    agreed.fail(mpi::error_kind::invalid_argument, "transform_options::stream_chunk_bytes is " +
                                                       std::to_string(options.stream_chunk_bytes) +
                                                       "; expected 0 (automatic) or a positive byte count");
  for (size_t k = 0; k < job_count && !agreed.failed(); ++k) {
    const job_check c = check_job(k);
    agreed.fail(c.kind, c.message);
    if (!agreed.failed() && c.my_rank != me)
      agreed.fail(mpi::error_kind::invalid_argument,
                  "job " + std::to_string(k) + ": layouts describe the storage of rank " + std::to_string(c.my_rank) +
                      " but this is rank " + std::to_string(me));
    if (options.check_consistency) hash.add(c.global_hash);
  }
  if (options.check_consistency)
    hash.add_all(options.strategy, job_count, options.stream_chunk_bytes, options.one_shot);
  // check_consistency itself must be the same everywhere: a rank without the check would skip the execute
  // agreement the others wait in.
  const std::size_t checking_min = agreed.reduce_min(options.check_consistency ? 1 : 0);
  const std::size_t checking_max = agreed.reduce_max(options.check_consistency ? 1 : 0);
  if (options.check_consistency)
    agreed.require_same(hash.value(),
                        std::string("ranks passed different global descriptions (layouts, ops, axes, element "
                                    "types, strategy or one_shot) to ") +
                            entry_point + "; every rank must describe the same splits, owners and jobs");
  agreed.conclude();
  if (agreed.min(checking_min) != agreed.max(checking_max))
    throw inconsistent_ranks(
        "transform_options::check_consistency is true on some ranks and false on others; every "
        "rank must pass the same");
  return owned_comm;
}

// This rank's tiles of one job: what it sends (by destination), receives (by source) and keeps.
void plan_job_tiles(transform_plan::impl& p, int job, const reshape_job& j, tiles_by_peer& sends,
                    tiles_by_peer& recvs) {
  const int me = p.rank;
  const nd_layout& A = j.a;
  const nd_layout bt_storage = is_identity(j.axes) ? j.b : j.b.permuted(j.axes);
  const nd_layout& Bt = bt_storage;  // op(B) seen in A's axes, addressing B's memory
  const int d = A.ndim();

  detail::job_plan jp;
  jp.conjugate = j.conjugate;
  jp.type = j.type;
  jp.elem_size = element_size(j.type);
  jp.ndim = d;
  jp.a_view = make_view(A);
  jp.b_view = make_view(Bt);
  jp.packed_order = to_axis_order(Bt.packing_order());
  jp.a_order = to_axis_order(A.packing_order());

  using segments = std::vector<const segment*>;
  using group_list = std::vector<std::pair<std::pair<int, int>, segments>>;  // (op(B) position, A position)
  static const std::vector<std::int64_t> no_local_starts;
  std::vector<std::vector<segment>> segs(static_cast<size_t>(d));
  std::vector<group_list> groups(static_cast<size_t>(d));
  std::vector<dim_side> a_dims, b_dims;
  for (int k = 0; k < d; ++k) {
    const size_t ks = static_cast<size_t>(k);
    segs[ks] = overlay(A.splits(k), A.procs(k), Bt.splits(k), Bt.procs(k));
    for (auto& g : group_segments(segs[ks])) groups[ks].push_back(std::move(g));
    const bool a_regular = A.kind() == storage_kind::regular, b_regular = Bt.kind() == storage_kind::regular;
    a_dims.push_back({{A.splits(k), A.procs(k), a_regular ? A.local_start(k) : no_local_starts}, a_regular});
    b_dims.push_back({{Bt.splits(k), Bt.procs(k), b_regular ? Bt.local_start(k) : no_local_starts}, b_regular});
  }
  const element_region region = d == 2 ? clamped(j.region, A.extent(0), A.extent(1)) : element_region{};
  // Pieces of a tile cut by the region are whole lines of op(B)'s packing order where possible.
  const bool columns_outer = d == 2 && Bt.packing_order().front() == 0;
  using axis_groups = std::array<const segments*, max_axes>;
  const auto for_each_rectangle = [&](const axis_groups& parts, const auto& emit) {
    if (d != 2) return emit(parts);
    detail::for_each_region_rectangle(*parts[0], *parts[1], region, columns_outer,
                                      [&](const segments& rows, const segments& cols) {
                                        emit(axis_groups{&rows, &cols});
                                      });
  };
  // The tile of box `parts`, its runs contiguous in the storage of `sides`.
  const auto make_tile = [&](const axis_groups& parts, int sides) {
    tile t;
    t.job = job;
    for (int k = 0; k < d; ++k) {
      const size_t ks = static_cast<size_t>(k);
      t.add_axis(group_length(*parts[ks]), make_runs(*parts[ks], a_dims[ks], b_dims[ks], sides));
    }
    return t;
  };
  // Calls visit(groups per axis, other side's position) for every combination of the groups whose position on
  // this side (first: op(B), second: A) is `mine`.
  const auto for_each_partner = [&](const std::vector<int>& mine, bool mine_is_b, const auto& visit) {
    std::vector<std::vector<const std::pair<std::pair<int, int>, segments>*>> candidates(static_cast<size_t>(d));
    for (int k = 0; k < d; ++k)
      for (const auto& g : groups[static_cast<size_t>(k)])
        if ((mine_is_b ? g.first.first : g.first.second) == mine[static_cast<size_t>(k)])
          candidates[static_cast<size_t>(k)].push_back(&g);
    for (const auto& c : candidates)
      if (c.empty()) return;
    std::array<size_t, max_axes> pick{};
    while (true) {
      axis_groups parts{};
      std::array<int, max_axes> other{};
      for (int k = 0; k < d; ++k) {
        const auto* g = candidates[static_cast<size_t>(k)][pick[static_cast<size_t>(k)]];
        parts[static_cast<size_t>(k)] = &g->second;
        other[static_cast<size_t>(k)] = mine_is_b ? g->first.second : g->first.first;
      }
      visit(parts, other);
      int k = d - 1;
      for (; k >= 0; --k) {
        if (++pick[static_cast<size_t>(k)] < candidates[static_cast<size_t>(k)].size()) break;
        pick[static_cast<size_t>(k)] = 0;
      }
      if (k < 0) return;
    }
  };
  const auto as_array = [&](const std::vector<int>& v) {
    std::array<int, max_axes> a{};
    std::copy(v.begin(), v.end(), a.begin());
    return a;
  };

  // Sender side (and local tiles): my positions in op(B).
  for (const std::vector<int>& bp : Bt.my_positions()) {
    const std::int64_t b_flat = flat_position(as_array(bp), Bt.grid_shape());
    for_each_partner(bp, true, [&](const axis_groups& parts, const std::array<int, max_axes>& ap) {
      const int dest = A.grid_rank(ap.data());
      const std::int64_t a_flat = flat_position(ap, A.grid_shape());
      std::int64_t piece = 0;
      for_each_rectangle(parts, [&](const axis_groups& box) {
        tile t = make_tile(box, dest == me ? (side_a | side_b) : side_b);
        if (dest == me) {
          p.stats.bytes_local += t.elements() * static_cast<std::int64_t>(jp.elem_size);
          p.local_tiles.push_back(std::move(t));
        } else {
          sends[dest][{job, a_flat, b_flat, piece++}] = std::move(t);
        }
      });
    });
  }
  // Receiver side: my positions in A, from other ranks.
  for (const std::vector<int>& ap : A.my_positions()) {
    const std::int64_t a_flat = flat_position(as_array(ap), A.grid_shape());
    for_each_partner(ap, false, [&](const axis_groups& parts, const std::array<int, max_axes>& bp) {
      const int src = Bt.grid_rank(bp.data());
      if (src == me) return;  // a local tile, planned above
      const std::int64_t b_flat = flat_position(bp, Bt.grid_shape());
      std::int64_t piece = 0;
      for_each_rectangle(parts, [&](const axis_groups& box) {
        // With regular B storage the runs also address the sender's B (local indices are global knowledge), so
        // that node peers can read it directly from a node_buffer.
        tile t = make_tile(box, Bt.kind() == storage_kind::regular ? (side_a | side_b) : side_a);
        recvs[src][{job, a_flat, b_flat, piece++}] = std::move(t);
      });
    });
  }
  p.job_plans.push_back(std::move(jp));
}

// This rank's tiles of every job, gathered into one message per peer (tiles in key order, offsets aligned).
void plan_messages(transform_plan::impl& p, const std::vector<reshape_job>& jobs) {
  // ---- tiles, per job ----
  const seconds_since tiles_started;
  tiles_by_peer sends, recvs;
  for (size_t k = 0; k < jobs.size(); ++k) plan_job_tiles(p, static_cast<int>(k), jobs[k], sends, recvs);
  p.stats.plan_tiles_seconds = tiles_started.elapsed();

  // ---- messages: one per peer, tiles in key order, offsets aligned ----
  const seconds_since messages_started;
  const auto tile_bytes = [&](const tile& t) {
    return t.elements() * static_cast<std::int64_t>(p.job_plans[static_cast<size_t>(t.job)].elem_size);
  };
  auto build_messages = [&](tiles_by_peer& by_peer, std::vector<detail::peer_message>& out, std::int64_t& total) {
    total = 0;
    for (auto& [peer, tiles] : by_peer) {
      detail::peer_message m;
      m.rank = peer;
      m.byte_offset = total;
      std::int64_t off = 0;
      for (auto& [key, t] : tiles) {
        t.byte_offset = off;
        off = machine::round_up_to_cache_line(off + tile_bytes(t));  // every packed tile aligned for vector loads
        m.tiles.push_back(std::move(t));
      }
      m.bytes = off;
      total += off;
      out.push_back(std::move(m));
    }
  };
  build_messages(sends, p.sends, p.send_bytes);
  build_messages(recvs, p.recvs, p.recv_bytes);
  for (const auto& m : p.sends)
    for (const auto& t : m.tiles) p.stats.bytes_sent += tile_bytes(t);
  for (const auto& m : p.recvs)
    for (const auto& t : m.tiles) p.stats.bytes_received += tile_bytes(t);
  p.stats.messages_sent = static_cast<std::int64_t>(p.sends.size());
  p.stats.messages_received = static_cast<std::int64_t>(p.recvs.size());
  // Send to peers after me first, so that not every rank starts with rank 0.
  const int me = p.rank;
  p.send_order.resize(p.sends.size());
  std::iota(p.send_order.begin(), p.send_order.end(), std::size_t(0));
  std::stable_partition(p.send_order.begin(), p.send_order.end(),
                        [&](std::size_t idx) { return p.sends[idx].rank > me; });
  p.stats.plan_messages_seconds = messages_started.elapsed();
}

// Everything after the arguments' agreement, shared by both entry points.
std::unique_ptr<transform_plan::impl> build_plan(MPI_Comm comm, mpi::comm_handle owned_comm,
                                                 std::vector<reshape_job> jobs,
                                                 std::vector<job_description> matrix_jobs,
                                                 const transform_options& options, const seconds_since& started) {
  auto p = std::make_unique<transform_plan::impl>();
  p->comm = std::move(owned_comm);
  p->rank = mpi::rank(comm);
  p->nranks = mpi::size(comm);
  p->options = options;
  // The default team is capped at this rank's share of its host: MPI launchers bind no ranks by default, and
  // then every rank's OpenMP default is the whole host. On 4 ranks sharing 2 cores, teams of 2 made pdtran
  // N = 4000 7-9x slower than teams of 1 (spinning threads wait for descheduled ones at every barrier). The share
  // was gathered in the arguments' agreement: read from comm's cache here.
  p->threads = options.num_threads > 0 ? options.num_threads
                                       : static_cast<int>(std::min<std::int64_t>(
                                             omp_get_max_threads(), machine::host_share_of(comm).cpus_per_rank()));
  p->stats.threads = p->threads;
  p->stats.plan_agreement_seconds = started.elapsed();

  // The messages (memory for the tiles) are agreed on with the choice of strategy, whose figures ride in the same
  // allreduce; setup_exchange concludes it. A rank that fails makes every rank throw its error, instead of leaving
  // the others in the exchange's set-up.
  p->reshape_jobs = std::move(jobs);
  p->jobs = std::move(matrix_jobs);
  mpi::wait_label described(nullptr, nullptr);
  described.describe(transform_detail::describe_reshape_jobs, &p->reshape_jobs);
  mpi::agreement planned(p->comm.get());
  planned.attempt([&] { plan_messages(*p, p->reshape_jobs); });
  p->setup_exchange(comm, planned);
  p->comm.returnable();  // set up on every rank: nothing left on it for the next plan that takes it
  p->stats.plan_seconds = started.elapsed();
  return p;
}

}  // namespace

transform_plan::transform_plan() = default;
transform_plan::~transform_plan() = default;
transform_plan::transform_plan(transform_plan&&) noexcept = default;
transform_plan& transform_plan::operator=(transform_plan&&) noexcept = default;
transform_plan::transform_plan(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

// An empty (default-constructed or moved-from) plan answers with nothing rather than dereferencing null.
namespace {
template <class T>
const std::vector<T>& none() {
  static const std::vector<T> empty;
  return empty;
}
}  // namespace

const std::vector<job_description>& transform_plan::jobs() const {
  return impl_ ? impl_->jobs : none<job_description>();
}
const std::vector<reshape_job>& transform_plan::reshape_jobs() const {
  return impl_ ? impl_->reshape_jobs : none<reshape_job>();
}
plan_statistics transform_plan::statistics() const {
  if (!impl_) return {};
  plan_statistics s = impl_->stats;
  s.last_execution_seconds = impl_->last_execution_seconds;
  return s;
}
exchange_strategy transform_plan::strategy() const { return impl_ ? impl_->strategy : exchange_strategy::automatic; }
MPI_Comm transform_plan::communicator() const { return impl_ ? impl_->comm.get() : MPI_COMM_NULL; }
const std::vector<box>& transform_plan::output_boxes_held() const {
  return impl_ ? impl_->output_boxes_held : none<box>();
}
int transform_plan::output_boxes_passed_by() const {
  if (!impl_) return -1;
  return impl_->output_boxes_passed_by < 0 ? impl_->rank : impl_->output_boxes_passed_by;
}

std::string transform_plan::single_job_problem(element_type t) const {
  if (!impl_) return {};  // execute_agreed says so
  if (impl_->reshape_jobs.size() != 1)
    return "the single-job execute needs a plan of one job; this plan has " +
           std::to_string(impl_->reshape_jobs.size()) + " (pass one job_buffers per job)";
  if (impl_->reshape_jobs.front().type != t)
    return std::string("plan was built for ") + to_string(impl_->reshape_jobs.front().type) +
           " elements but execute was called with " + to_string(t);
  return {};
}

transform_plan transform_plan::inverse() const {
  if (!impl_) throw invalid_argument("inverse of an empty transform_plan");
  // The forward plan's options, check_consistency included: it also guards every execution's buffers.
  if (!impl_->jobs.empty()) {
    std::vector<job_description> swapped;
    for (const auto& j : impl_->jobs)
      swapped.push_back(
          {j.b, j.a, j.operation, j.type, j.operation == op::identity ? j.region : j.region.transposed()});
    return make_transform_plan(impl_->comm.get(), std::move(swapped), impl_->options);
  }
  std::vector<reshape_job> swapped;
  for (const auto& j : impl_->reshape_jobs) {
    reshape_job s{j.b, j.a, {}, j.conjugate, j.type, j.region};
    if (!j.axes.empty()) {
      s.axes.resize(j.axes.size());
      for (size_t i = 0; i < j.axes.size(); ++i) s.axes[static_cast<size_t>(j.axes[i])] = static_cast<int>(i);
      if (!is_identity(j.axes)) s.region = j.region.transposed();  // d = 2: the transpose
    }
    swapped.push_back(std::move(s));
  }
  return make_reshape_plan(impl_->comm.get(), std::move(swapped), impl_->options);
}

transform_plan make_transform_plan(MPI_Comm comm, const grid_layout& a, const grid_layout& b, op operation,
                                   element_type type, const transform_options& options) {
  return make_transform_plan(comm, std::vector<job_description>{{a, b, operation, type}}, options);
}

namespace {
// make_transform_plan and make_reshape_plan, less their tracing.
std::unique_ptr<transform_plan::impl> make_plan_impl(MPI_Comm comm, std::vector<job_description> jobs,
                                                     const transform_options& options) {
  const seconds_since started;
  const int nranks = mpi::size(comm);
  // The jobs as given, for the watchdog's line while they are checked (build_plan names them from then on).
  mpi::wait_label described(nullptr, nullptr);
  described.describe(transform_detail::describe_matrix_jobs, &jobs);
  // The matrix jobs as the d = 2 case: rows axis 0, columns axis 1; a transpose swaps them. Checked and hashed as
  // the engine runs them (an op outside the enum is refused before its engine job is read).
  std::vector<reshape_job> engine_jobs;
  engine_jobs.reserve(jobs.size());
  for (const job_description& j : jobs)
    engine_jobs.push_back({to_nd_layout(j.a), to_nd_layout(j.b),
                           j.operation == op::identity ? std::vector<int>{} : std::vector<int>{1, 0},
                           j.operation == op::conj_transpose, j.type, j.region});
  mpi::comm_handle owned = agree_on_arguments(comm, options, jobs.size(), "make_transform_plan", [&](size_t k) {
    auto [kind, message] = validate_job(jobs[k], engine_jobs[k], k, nranks);
    return checked_job(std::move(kind), std::move(message), engine_jobs[k], comm);
  });
  described.describe(nullptr, nullptr);
  return build_plan(comm, std::move(owned), std::move(engine_jobs), std::move(jobs), options, started);
}

std::unique_ptr<transform_plan::impl> make_reshape_plan_impl(MPI_Comm comm, std::vector<reshape_job> jobs,
                                                             const transform_options& options) {
  const seconds_since started;
  const int nranks = mpi::size(comm);
  // The jobs as given, for the watchdog's line while they are checked (build_plan names them from then on).
  mpi::wait_label described(nullptr, nullptr);
  described.describe(transform_detail::describe_reshape_jobs, &jobs);
  mpi::comm_handle owned = agree_on_arguments(comm, options, jobs.size(), "make_reshape_plan", [&](size_t k) {
    auto [kind, message] = validate_reshape_job(jobs[k], k, nranks);
    return checked_job(std::move(kind), std::move(message), jobs[k], comm);
  });
  described.describe(nullptr, nullptr);
  return build_plan(comm, std::move(owned), std::move(jobs), {}, options, started);
}
}  // namespace

transform_plan make_transform_plan(MPI_Comm comm, std::vector<job_description> jobs, const transform_options& options) {
  return trace_detail::traced_making(
      "transform_plan",
      [&] {
        const mpi::wait_label limit(nullptr, nullptr, options.timeout_seconds);
        return transform_plan(make_plan_impl(comm, std::move(jobs), options));
      },
      [](const transform_plan& plan) { return to_string(plan.strategy()); });
}

transform_plan make_reshape_plan(MPI_Comm comm, std::vector<reshape_job> jobs, const transform_options& options) {
  return trace_detail::traced_making(
      "reshape_plan",
      [&] {
        const mpi::wait_label limit(nullptr, nullptr, options.timeout_seconds);
        return transform_plan(make_reshape_plan_impl(comm, std::move(jobs), options));
      },
      [](const transform_plan& plan) { return to_string(plan.strategy()); });
}

}  // namespace redist
