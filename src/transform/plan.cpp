// Planner of the transform engine: validates the jobs, overlays the grids of A and op(B) row-wise and
// column-wise, and derives, for this rank only, the tiles it sends, receives and copies locally.
#include "redist/transform/plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "../mpi/agreement.hpp"
#include "redist/error.hpp"
#include "../mpi/checked.hpp"
#include "detail/plan_impl.hpp"
#include "overlay.hpp"
#include "redist/names.hpp"

namespace redist {

using detail::block_index;
using detail::clamped;
using detail::dim_side;
using detail::group_length;
using detail::group_segments;
using detail::make_runs;
using detail::overlay;
using detail::side_a;
using detail::side_b;
using detail::placement;
using detail::run;
using detail::segment;
using detail::storage_view;
using detail::tile;

namespace {

storage_view make_view(const grid_layout& l) {
  storage_view v;
  v.kind = l.kind();
  v.block_cols = l.block_cols();
  if (l.kind() == storage_kind::regular) {
    v.strides = kernels::strides(l.packing_order(), l.local_ld());
  } else {
    for (const auto& b : l.local_blocks())
      v.blocks[v.block_key(block_index(b.block.row), block_index(b.block.col))] = placement{b.offset, kernels::strides(b.order, b.ld)};
  }
  return v;
}

// Key that orders the tiles inside a message identically on sender and receiver.
struct tile_key {
  int job, a_row, a_col, b_row, b_col;
  std::int64_t piece;  // the rectangle's rank among its tile's (for_each_piece's order)
  bool operator<(const tile_key& o) const {
    return std::tie(job, a_row, a_col, b_row, b_col, piece) <
           std::tie(o.job, o.a_row, o.a_col, o.b_row, o.b_col, o.piece);
  }
};

constexpr std::int64_t tile_alignment = 64;  // bytes; keeps every packed tile aligned for vector loads
std::int64_t align_up(std::int64_t v) { return (v + tile_alignment - 1) / tile_alignment * tile_alignment; }

// Validates one job locally; returns the kind and text of the first problem.
std::pair<mpi::error_kind, std::string> validate_job(const job_description& j, size_t index, int comm_size) {
  const std::string where = "job " + std::to_string(index) + ": ";
  if (j.operation != op::identity && j.operation != op::transpose && j.operation != op::conj_transpose)
    return {mpi::error_kind::invalid_argument, where + "op is " + std::to_string(static_cast<int>(j.operation)) +
                                                   "; expected op::identity, transpose or conj_transpose"};
  if (std::string(to_string(j.type)) == "?")
    return {mpi::error_kind::invalid_argument, where + "element_type is " + std::to_string(static_cast<int>(j.type)) +
                                                   "; expected f32, f64, c32, c64, i32 or i64"};
  try {
    j.a.validate_global(comm_size);
    j.b.validate_global(comm_size);
  } catch (const error& e) {
    return {mpi::error_kind::invalid_layout, where + e.what()};
  }
  const bool t = j.operation != op::identity;
  const std::int64_t b_rows = t ? j.b.cols() : j.b.rows();
  const std::int64_t b_cols = t ? j.b.rows() : j.b.cols();
  if (j.a.rows() != b_rows || j.a.cols() != b_cols)
    return {mpi::error_kind::dimension_mismatch,
            where + "A is " + std::to_string(j.a.rows()) + "x" + std::to_string(j.a.cols()) + " but op(B) = " +
                to_string(j.operation) + "(B) is " + std::to_string(b_rows) + "x" + std::to_string(b_cols) +
                "; they must have the same shape"};
  try {
    j.a.validate_local();
  } catch (const error& e) {
    return {mpi::error_kind::invalid_layout, where + "A: " + e.what()};
  }
  try {
    j.b.validate_local();
  } catch (const error& e) {
    return {mpi::error_kind::invalid_layout, where + "B: " + e.what()};
  }
  if (j.region.shape != region_shape::all && j.region.shape != region_shape::upper &&
      j.region.shape != region_shape::lower)
    return {mpi::error_kind::invalid_argument,
            where + "element_region::shape is " + std::to_string(static_cast<int>(j.region.shape)) +
                "; expected region_shape::all, upper or lower"};
  if (j.a.my_rank() < 0 || j.b.my_rank() < 0)
    return {mpi::error_kind::invalid_argument,
            where + "layouts passed to make_plan must describe this rank's storage (built with my_rank >= 0)"};
  return {mpi::error_kind::none, {}};
}

}  // namespace

transform_plan::transform_plan() = default;
transform_plan::~transform_plan() = default;
transform_plan::transform_plan(transform_plan&&) noexcept = default;
transform_plan& transform_plan::operator=(transform_plan&&) noexcept = default;
transform_plan::transform_plan(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

const std::vector<job_description>& transform_plan::jobs() const { return impl_->jobs; }
plan_statistics transform_plan::statistics() const { return impl_->stats; }
exchange_strategy transform_plan::strategy() const { return impl_->strategy; }
MPI_Comm transform_plan::communicator() const { return impl_->comm.get(); }

std::string transform_plan::single_job_problem(element_type t) const {
  if (!impl_) return {};  // execute_agreed says so
  if (impl_->jobs.size() != 1)
    return "the single-job execute needs a plan of one job; this plan has " + std::to_string(impl_->jobs.size()) +
           " (pass one job_buffers per job)";
  if (impl_->jobs.front().type != t)
    return std::string("plan was built for ") + to_string(impl_->jobs.front().type) +
           " elements but execute was called with " + to_string(t);
  return {};
}

transform_plan transform_plan::inverse() const {
  if (!impl_) throw invalid_argument("inverse of an empty transform_plan");
  std::vector<job_description> swapped;
  for (const auto& j : impl_->jobs)
    swapped.push_back({j.b, j.a, j.operation, j.type, j.operation == op::identity ? j.region : j.region.transposed()});
  // The forward plan's options, check_consistency included: it also guards every execution's buffers.
  return make_plan(impl_->comm.get(), std::move(swapped), impl_->options);
}

transform_plan make_plan(MPI_Comm comm, const grid_layout& a, const grid_layout& b, op operation, element_type type,
                         const transform_options& options) {
  return make_plan(comm, std::vector<job_description>{{a, b, operation, type}}, options);
}

transform_plan make_plan(MPI_Comm comm, std::vector<job_description> jobs, const transform_options& options) {
  const seconds_since started;
  const int me = mpi::rank(comm);
  const int nranks = mpi::size(comm);

  // ---- validation, agreed collectively before anything else happens ----
  mpi::agreement agreed(comm);
  // The plan's own communicator first: a failure to make it is agreed on with the arguments' checks.
  mpi::comm_handle owned_comm;
  agreed.collective([&] { owned_comm = mpi::duplicate(comm); });
  std::uint64_t hash = 0;
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
    agreed.fail(mpi::error_kind::invalid_argument,
                "transform_options::stream_chunk_bytes is " + std::to_string(options.stream_chunk_bytes) +
                    "; expected 0 (automatic) or a positive byte count");
  for (size_t k = 0; k < jobs.size() && !agreed.failed(); ++k) {
    const auto& j = jobs[k];
    auto [kind, message] = validate_job(j, k, nranks);
    agreed.fail(kind, std::move(message));
    if (!agreed.failed() && (j.a.my_rank() != me || j.b.my_rank() != me))
      agreed.fail(mpi::error_kind::invalid_argument,
                  "job " + std::to_string(k) + ": layouts describe the storage of rank " +
                      std::to_string(j.a.my_rank() != me ? j.a.my_rank() : j.b.my_rank()) + " but this is rank " +
                      std::to_string(me));
    if (options.check_consistency)
      hash = hash * 1000003u ^ j.a.global_hash() ^ (j.b.global_hash() * 31u) ^
             (static_cast<std::uint64_t>(j.operation) << 8) ^ static_cast<std::uint64_t>(j.type) ^
             (static_cast<std::uint64_t>(j.region.shape) << 16) ^
             (static_cast<std::uint64_t>(j.region.diagonal) * 131u);
  }
  if (options.check_consistency)
    hash = ((hash * 1000003u ^ static_cast<std::uint64_t>(options.strategy) ^ jobs.size()) * 1000003u ^
            static_cast<std::uint64_t>(options.stream_chunk_bytes)) * 1000003u ^
           (options.one_shot ? 1u : 0u);
  // check_consistency itself must be the same everywhere: a rank without the check would skip the execute
  // agreement the others wait in.
  const std::size_t checking_min = agreed.reduce_min(options.check_consistency ? 1 : 0);
  const std::size_t checking_max = agreed.reduce_max(options.check_consistency ? 1 : 0);
  if (options.check_consistency)
    agreed.require_same(hash,
                        "ranks passed different global descriptions (layouts, ops, element types, strategy or one_shot) to "
                        "make_plan; every rank must describe the same splits, owners and jobs");
  agreed.conclude();
  if (agreed.min(checking_min) != agreed.max(checking_max))
    throw inconsistent_ranks("transform_options::check_consistency is true on some ranks and false on others; every "
                             "rank must pass the same");

  auto p = std::make_unique<transform_plan::impl>();
  p->comm = std::move(owned_comm);
  p->rank = me;
  p->nranks = nranks;
  p->options = options;
  p->stats.plan_agreement_seconds = started.elapsed();

  // ---- tiles, per job ----
  const seconds_since tiles_started;
  std::map<int, std::map<tile_key, tile>> sends, recvs;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const job_description& j = jobs[k];
    const int job = static_cast<int>(k);
    const grid_layout& A = j.a;
    const grid_layout bt_storage = j.operation == op::identity ? j.b : j.b.transposed();
    const grid_layout& Bt = bt_storage;  // op(B) seen in A's orientation, addressing B's memory

    detail::job_plan jp;
    jp.operation = j.operation;
    jp.type = j.type;
    jp.elem_size = element_size(j.type);
    jp.a_view = make_view(A);
    jp.b_view = make_view(Bt);
    jp.packed_order = Bt.packing_order();
    jp.a_order = A.packing_order();

    const auto row_segs = overlay(A.row_splits(), A.row_proc(), Bt.row_splits(), Bt.row_proc());
    const auto col_segs = overlay(A.col_splits(), A.col_proc(), Bt.col_splits(), Bt.col_proc());
    const auto row_groups = group_segments(row_segs);
    const auto col_groups = group_segments(col_segs);
    const dim_side a_rows{{A.row_splits(), A.row_proc(), A.local_row_start()}, A.kind() == storage_kind::regular};
    const dim_side a_cols{{A.col_splits(), A.col_proc(), A.local_col_start()}, A.kind() == storage_kind::regular};
    const dim_side b_rows{{Bt.row_splits(), Bt.row_proc(), Bt.local_row_start()}, Bt.kind() == storage_kind::regular};
    const dim_side b_cols{{Bt.col_splits(), Bt.col_proc(), Bt.local_col_start()}, Bt.kind() == storage_kind::regular};
    const element_region region = clamped(j.region, A.rows(), A.cols());
    // Pieces of a tile cut by the region are whole lines of op(B)'s packing order where possible.
    const bool columns_outer = Bt.packing_order() == storage_order::col_major;
    using segments = std::vector<const segment*>;
    const auto for_each_rectangle = [&](const segments& rsegs, const segments& csegs, const auto& emit) {
      detail::for_each_region_rectangle(rsegs, csegs, region, columns_outer, emit);
    };
    // The tile of rectangle prows x pcols, its runs contiguous in the storage of `sides`.
    const auto make_tile = [&](const segments& prows, const segments& pcols, int sides) {
      tile t;
      t.job = job;
      t.rows = group_length(prows);
      t.cols = group_length(pcols);
      t.row_runs = make_runs(prows, a_rows, b_rows, sides);
      t.col_runs = make_runs(pcols, a_cols, b_cols, sides);
      return t;
    };

    // Sender side (and local tiles): my positions in op(B).
    for (const grid_position bp : Bt.my_positions())
      for (const auto& [rkey, rsegs] : row_groups) {
        if (rkey.first != bp.row) continue;
        for (const auto& [ckey, csegs] : col_groups) {
          if (ckey.first != bp.col) continue;
          const grid_position ap{rkey.second, ckey.second};
          const int dest = A.grid_rank(ap);
          std::int64_t piece = 0;
          for_each_rectangle(rsegs, csegs, [&](const segments& prows, const segments& pcols) {
            tile t = make_tile(prows, pcols, dest == me ? (side_a | side_b) : side_b);
            const std::int64_t bytes = t.rows * t.cols * static_cast<std::int64_t>(jp.elem_size);
            if (dest == me) {
              p->stats.bytes_local += bytes;
              p->local_tiles.push_back(std::move(t));
            } else {
              sends[dest][{job, ap.row, ap.col, bp.row, bp.col, piece++}] = std::move(t);
            }
          });
        }
      }
    // Receiver side: my positions in A, from other ranks.
    for (const grid_position ap : A.my_positions())
      for (const auto& [rkey, rsegs] : row_groups) {
        if (rkey.second != ap.row) continue;
        for (const auto& [ckey, csegs] : col_groups) {
          if (ckey.second != ap.col) continue;
          const grid_position bp{rkey.first, ckey.first};
          const int src = Bt.grid_rank(bp);
          if (src == me) continue;  // a local tile, planned above
          std::int64_t piece = 0;
          for_each_rectangle(rsegs, csegs, [&](const segments& prows, const segments& pcols) {
            // With regular B storage the runs also address the sender's B (local indices are global
            // knowledge), so that node peers can read it directly from a node_buffer.
            tile t = make_tile(prows, pcols, Bt.kind() == storage_kind::regular ? (side_a | side_b) : side_a);
            recvs[src][{job, ap.row, ap.col, bp.row, bp.col, piece++}] = std::move(t);
          });
        }
      }
    p->job_plans.push_back(std::move(jp));
  }

  p->stats.plan_tiles_seconds = tiles_started.elapsed();

  // ---- messages: one per peer, tiles in key order, offsets aligned ----
  const seconds_since messages_started;
  auto build_messages = [&](std::map<int, std::map<tile_key, tile>>& by_peer, std::vector<detail::peer_message>& out,
                            std::int64_t& total) {
    total = 0;
    for (auto& [peer, tiles] : by_peer) {
      detail::peer_message m;
      m.rank = peer;
      m.byte_offset = total;
      std::int64_t off = 0;
      for (auto& [key, t] : tiles) {
        t.byte_offset = off;
        off = align_up(off + t.rows * t.cols * static_cast<std::int64_t>(p->job_plans[t.job].elem_size));
        m.tiles.push_back(std::move(t));
      }
      m.bytes = off;
      total += off;
      out.push_back(std::move(m));
    }
  };
  build_messages(sends, p->sends, p->send_bytes);
  build_messages(recvs, p->recvs, p->recv_bytes);
  for (const auto& m : p->sends)
    for (const auto& t : m.tiles) p->stats.bytes_sent += t.rows * t.cols * static_cast<std::int64_t>(p->job_plans[t.job].elem_size);
  for (const auto& m : p->recvs)
    for (const auto& t : m.tiles)
      p->stats.bytes_received += t.rows * t.cols * static_cast<std::int64_t>(p->job_plans[t.job].elem_size);
  p->stats.messages_sent = static_cast<std::int64_t>(p->sends.size());
  p->stats.messages_received = static_cast<std::int64_t>(p->recvs.size());
  // Send to peers after me first, so that not every rank starts with rank 0.
  p->send_order.resize(p->sends.size());
  std::iota(p->send_order.begin(), p->send_order.end(), std::size_t(0));
  std::stable_partition(p->send_order.begin(), p->send_order.end(),
                        [&](std::size_t idx) { return p->sends[idx].rank > me; });

  p->stats.plan_messages_seconds = messages_started.elapsed();

  p->jobs = std::move(jobs);
  p->setup_exchange(comm);
  p->stats.plan_seconds = started.elapsed();
  return transform_plan(std::move(p));
}

}  // namespace redist
