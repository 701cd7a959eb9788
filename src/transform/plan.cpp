// Planner of the transform engine: validates the jobs, overlays the grids of A and op(B) row-wise and
// column-wise, and derives, for this rank only, the tiles it sends, receives and copies locally.
#include "redist/transform/plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "../mpi/agreement.hpp"
#include "redist/error.hpp"
#include "../mpi/checked.hpp"
#include "redist/torus/schedule.hpp"
#include "detail/plan_impl.hpp"
#include "redist/names.hpp"

namespace redist {

using detail::placement;
using detail::run;
using detail::storage_view;
using detail::tile;

placement detail::storage_view::at(std::int64_t block_row, std::int64_t block_col, std::int64_t local_row,
                                   std::int64_t local_col) const {
  if (kind == storage_kind::regular) return {local_row * strides.rs + local_col * strides.cs, strides};
  const placement& p = blocks.at(block_key(block_row, block_col));
  return {p.offset + local_row * p.strides.rs + local_col * p.strides.cs, p.strides};
}

namespace {

// One piece of the 1-D overlay of two split vectors: [lo, hi) lies in block a_block of A and block
// b_block of op(B), whose owners sit on process-grid rows (or columns) a_proc and b_proc.
struct segment {
  std::int64_t lo, hi, a_block, b_block;
  int a_proc, b_proc;
};

std::vector<segment> overlay(const std::vector<std::int64_t>& a_splits, const std::vector<int>& a_proc,
                             const std::vector<std::int64_t>& b_splits, const std::vector<int>& b_proc) {
  std::vector<segment> out;
  out.reserve(a_splits.size() + b_splits.size());
  const std::int64_t n = a_splits.back();
  size_t i = 0, j = 0;
  std::int64_t lo = 0;
  while (lo < n) {
    const std::int64_t hi = std::min(a_splits[i + 1], b_splits[j + 1]);
    out.push_back({lo, hi, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j), a_proc[i], b_proc[j]});
    lo = hi;
    if (a_splits[i + 1] == hi) ++i;
    if (b_splits[j + 1] == hi) ++j;
  }
  return out;
}

// Segments grouped by (op(B) process row/col, A process row/col), each group in increasing order.
using segment_groups = std::map<std::pair<int, int>, std::vector<const segment*>>;

segment_groups group_segments(const std::vector<segment>& segs) {
  segment_groups g;
  for (const auto& s : segs) g[{s.b_proc, s.a_proc}].push_back(&s);
  return g;
}

// How to find the local index of a global row (or column) on one side.
struct dim_side {
  const std::vector<std::int64_t>* splits;
  const std::vector<std::int64_t>* local_start;  // regular storage only
  bool regular;
  std::int64_t local(std::int64_t block, std::int64_t g) const {
    return (regular ? (*local_start)[static_cast<size_t>(block)] : 0) + g - (*splits)[static_cast<size_t>(block)];
  }
};

enum side_mask : int { side_a = 1, side_b = 2 };

// Maximal runs over a group of segments, contiguous in the storage of every side in `sides`
// (explicit storage never merges across blocks).
std::vector<run> make_runs(const std::vector<const segment*>& segs, const dim_side& a, const dim_side& b, int sides) {
  std::vector<run> runs;
  std::int64_t packed = 0;
  for (const segment* s : segs) {
    run r;
    r.a_local = (sides & side_a) ? a.local(s->a_block, s->lo) : 0;
    r.b_local = (sides & side_b) ? b.local(s->b_block, s->lo) : 0;
    r.packed = packed;
    r.length = s->hi - s->lo;
    r.a_block = s->a_block;
    r.b_block = s->b_block;
    packed += r.length;
    if (!runs.empty()) {
      run& p = runs.back();
      bool joins = true;
      if (sides & side_a) joins = joins && p.a_local + p.length == r.a_local && (a.regular || p.a_block == r.a_block);
      if (sides & side_b) joins = joins && p.b_local + p.length == r.b_local && (b.regular || p.b_block == r.b_block);
      if (joins) {
        p.length += r.length;
        continue;
      }
    }
    runs.push_back(r);
  }
  return runs;
}

std::int64_t group_length(const std::vector<const segment*>& segs) {
  std::int64_t n = 0;
  for (const segment* s : segs) n += s->hi - s->lo;
  return n;
}

// The segments covering positions [first, first + count) of a group's concatenated index, clipped.
std::vector<segment> clip(const std::vector<const segment*>& segs, std::int64_t first, std::int64_t count) {
  std::vector<segment> out;
  std::int64_t at = 0;  // concatenated index of the current segment's first element
  for (const segment* s : segs) {
    const std::int64_t lo = std::max(first, at), hi = std::min(first + count, at + (s->hi - s->lo));
    if (lo < hi) {
      segment c = *s;
      c.lo = s->lo + (lo - at);
      c.hi = s->lo + (hi - at);
      out.push_back(c);
    }
    at += s->hi - s->lo;
  }
  return out;
}

std::vector<const segment*> pointers_to(const std::vector<segment>& segs) {
  std::vector<const segment*> out;
  out.reserve(segs.size());
  for (const segment& s : segs) out.push_back(&s);
  return out;
}

// The region's diagonal moved into [-rows, cols]: beyond that an upper or lower region is all of the
// matrix or none of it either way, and index arithmetic cannot overflow.
element_region clamped(element_region r, std::int64_t rows, std::int64_t cols) {
  r.diagonal = std::clamp(r.diagonal, -rows, cols);
  return r;
}

// Calls emit(row segments, column segments) for each rectangle of the tile rsegs x csegs inside the
// region, in an order that depends only on global knowledge (sender and receiver cut alike). The cut is a
// staircase: along the outer dimension (columns when `columns_outer`), each outer index keeps a prefix
// (upper) or suffix (lower) of the inner indices, so consecutive outer indices keeping the same inner
// range form one rectangle: the tile's part away from the diagonal stays whole, and at most one
// rectangle per outer index crosses it (the fewest rectangles that cover a staircase exactly).
template <class Emit>
void for_each_piece(const std::vector<const segment*>& rsegs, const std::vector<const segment*>& csegs,
                    const element_region& region, bool columns_outer, Emit&& emit) {
  if (region.shape == region_shape::all) {
    emit(rsegs, csegs);
    return;
  }
  const std::vector<const segment*>& inner = columns_outer ? rsegs : csegs;
  const std::vector<const segment*>& outer = columns_outer ? csegs : rsegs;
  // In (inner x, outer y) coordinates the region keeps y - x >= d (upper) or y - x <= d (lower).
  const element_region r = columns_outer ? region : region.transposed();
  const bool upper = r.shape == region_shape::upper;
  // Outer index y keeps the inner indices x <= y - d (upper: a prefix) or x >= y - d, i.e. all but those
  // x <= y - d - 1 (lower: a suffix); `shift` is d or d + 1 accordingly.
  const std::int64_t shift = upper ? r.diagonal : r.diagonal + 1;
  const std::int64_t inner_total = group_length(inner);
  struct piece {
    std::int64_t first, count;  // inner range, in the concatenated index
    std::vector<segment> outer;
  };
  std::vector<piece> pieces;
  size_t cursor = 0;          // first inner segment not entirely <= the current threshold
  std::int64_t before = 0;    // inner indices in the segments before `cursor`
  for (const segment* o : outer) {
    for (std::int64_t y = o->lo; y < o->hi;) {
      const std::int64_t v = y - shift;  // threshold: inner indices <= v are counted
      for (; cursor < inner.size() && inner[cursor]->hi - 1 <= v; ++cursor)
        before += inner[cursor]->hi - inner[cursor]->lo;
      std::int64_t counted = before, y_end = o->hi;
      if (cursor < inner.size()) {
        const segment* s = inner[cursor];
        if (s->lo <= v) counted += v - s->lo + 1;
        y_end = std::min(y_end, std::max(v + 1, s->lo) + shift);  // where the next inner index is counted
      }
      const std::int64_t first = upper ? 0 : counted, count = upper ? counted : inner_total - counted;
      if (count > 0) {
        // Equal ranges are consecutive: the counts are monotone in y.
        if (pieces.empty() || pieces.back().first != first || pieces.back().count != count)
          pieces.push_back({first, count, {}});
        pieces.back().outer.push_back(segment{y, y_end, o->a_block, o->b_block, o->a_proc, o->b_proc});
      }
      y = y_end;
    }
  }
  for (const piece& p : pieces) {
    const std::vector<segment> inner_part = clip(inner, p.first, p.count);
    const std::vector<const segment*> inner_ptrs = pointers_to(inner_part), outer_ptrs = pointers_to(p.outer);
    if (columns_outer)
      emit(inner_ptrs, outer_ptrs);
    else
      emit(outer_ptrs, inner_ptrs);
  }
}

storage_view make_view(const grid_layout& l) {
  storage_view v;
  v.kind = l.kind();
  v.block_cols = l.block_cols();
  if (l.kind() == storage_kind::regular) {
    v.strides = kernels::strides(l.packing_order(), l.local_ld());
  } else {
    for (const auto& b : l.local_blocks())
      v.blocks[v.block_key(b.block.row, b.block.col)] = placement{b.offset, kernels::strides(b.order, b.ld)};
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
    const dim_side a_rows{&A.row_splits(), &A.local_row_start(), A.kind() == storage_kind::regular};
    const dim_side a_cols{&A.col_splits(), &A.local_col_start(), A.kind() == storage_kind::regular};
    const dim_side b_rows{&Bt.row_splits(), &Bt.local_row_start(), Bt.kind() == storage_kind::regular};
    const dim_side b_cols{&Bt.col_splits(), &Bt.local_col_start(), Bt.kind() == storage_kind::regular};
    const element_region region = clamped(j.region, A.rows(), A.cols());
    // Pieces of a tile cut by the region are whole lines of op(B)'s packing order where possible.
    const bool columns_outer = Bt.packing_order() == storage_order::col_major;

    // Sender side (and local tiles): my positions in op(B).
    for (const grid_position bp : Bt.my_positions())
      for (const auto& [rkey, rsegs] : row_groups) {
        if (rkey.first != bp.row) continue;
        for (const auto& [ckey, csegs] : col_groups) {
          if (ckey.first != bp.col) continue;
          const grid_position ap{rkey.second, ckey.second};
          const int dest = A.grid_rank(ap);
          std::int64_t piece = 0;
          for_each_piece(rsegs, csegs, region, columns_outer, [&](const auto& prows, const auto& pcols) {
            tile t;
            t.job = job;
            t.rows = group_length(prows);
            t.cols = group_length(pcols);
            const int sides = dest == me ? (side_a | side_b) : side_b;
            t.row_runs = make_runs(prows, a_rows, b_rows, sides);
            t.col_runs = make_runs(pcols, a_cols, b_cols, sides);
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
          for_each_piece(rsegs, csegs, region, columns_outer, [&](const auto& prows, const auto& pcols) {
            tile t;
            t.job = job;
            t.rows = group_length(prows);
            t.cols = group_length(pcols);
            // With regular B storage the runs also address the sender's B (local indices are global
            // knowledge), so that node peers can read it directly from a node_buffer.
            const int sides = Bt.kind() == storage_kind::regular ? (side_a | side_b) : side_a;
            t.row_runs = make_runs(prows, a_rows, b_rows, sides);
            t.col_runs = make_runs(pcols, a_cols, b_cols, sides);
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
  if (options.strategy == exchange_strategy::torus_routed) p->setup_torus_rounds();
  p->setup_exchange(comm);
  p->stats.plan_seconds = started.elapsed();
  return transform_plan(std::move(p));
}

void transform_plan::impl::setup_torus_rounds() {
  // What torus_routed needs, checked on every rank and agreed before anything is built: a torus, one
  // P x Q grid of all ranks under every layout, and this rank's messages only between pairs of the
  // multi-phase transpose schedule of that grid, whose rounds then carry them.
  const std::string needs = "; exchange_strategy::torus_routed needs a transpose between block-cyclic layouts with "
                            "equal blocks on one P x Q grid of all ranks (A = op(B), both on that grid)";
  std::string problem;
  const grid_layout* grid = jobs.empty() ? nullptr : &jobs.front().a;
  if (!options.torus)
    problem = "exchange_strategy::torus_routed needs transform_options::torus (the torus network and the node "
              "of every rank); it is null";
  for (std::size_t k = 0; k < jobs.size() && problem.empty(); ++k)
    for (const grid_layout* l : {&jobs[k].a, &jobs[k].b})
      if (problem.empty() && (l->proc_rows() != grid->proc_rows() || l->proc_cols() != grid->proc_cols() ||
                              l->grid_ranks() != grid->grid_ranks()))
        problem = "job " + std::to_string(k) + ": the layouts of A and B are on different process grids (" +
                  std::to_string(l->proc_rows()) + " x " + std::to_string(l->proc_cols()) + " vs " +
                  std::to_string(grid->proc_rows()) + " x " + std::to_string(grid->proc_cols()) +
                  " or other rank placement)" + needs;
  std::vector<int> grid_index(static_cast<std::size_t>(nranks), -1);  // by rank: its row-major grid position
  if (problem.empty() && grid) {
    const std::vector<int>& ranks = grid->grid_ranks();
    for (std::size_t g = 0; g < ranks.size() && problem.empty(); ++g) {
      const int r = ranks[g];
      if (r < 0 || r >= nranks || grid_index[static_cast<std::size_t>(r)] >= 0)
        problem = "the process grid places rank " + std::to_string(r) + " twice or outside the communicator" + needs;
      else
        grid_index[static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
    if (problem.empty() && static_cast<std::int64_t>(ranks.size()) != nranks)
      problem = "the process grid is " + std::to_string(grid->proc_rows()) + " x " + std::to_string(grid->proc_cols()) +
                " but the communicator has " + std::to_string(nranks) + " ranks" + needs;
  }
  std::vector<int> destination;
  std::vector<std::int64_t> bytes;
  if (problem.empty() && grid) {
    const torus::transpose_schedule schedule = torus::multiphase_transpose_schedule(grid->proc_rows(), grid->proc_cols());
    const auto me = static_cast<std::size_t>(grid_index[static_cast<std::size_t>(rank)]);
    const std::vector<int>& ranks = grid->grid_ranks();
    std::vector<std::size_t> send_of(static_cast<std::size_t>(nranks), no_message), recv_of = send_of;  // by peer
    for (std::size_t i = 0; i < sends.size(); ++i) send_of[static_cast<std::size_t>(sends[i].rank)] = i;
    for (std::size_t i = 0; i < recvs.size(); ++i) recv_of[static_cast<std::size_t>(recvs[i].rank)] = i;
    std::size_t carried_sends = 0, carried_recvs = 0;
    for (int k = 0; k < schedule.phases(); ++k) {
      const int to = ranks[static_cast<std::size_t>(schedule.send_to[static_cast<std::size_t>(k)][me])];
      const int from = ranks[static_cast<std::size_t>(schedule.receive_from[static_cast<std::size_t>(k)][me])];
      const std::size_t s = to == rank ? no_message : send_of[static_cast<std::size_t>(to)];
      const std::size_t r = from == rank ? no_message : recv_of[static_cast<std::size_t>(from)];
      carried_sends += s != no_message;
      carried_recvs += r != no_message;
      destination.push_back(to);
      bytes.push_back(s == no_message ? 0 : sends[s].bytes);
      round_send.push_back(s);
      round_recv.push_back(r);
    }
    auto position = [&](int r) {
      const int g = grid_index[static_cast<std::size_t>(r)];
      return "(" + std::to_string(g / grid->proc_cols()) + ", " + std::to_string(g % grid->proc_cols()) + ")";
    };
    // A message the schedule does not carry: name the first such peer.
    auto unscheduled = [&](const std::vector<detail::peer_message>& messages, const std::vector<std::size_t>& carried,
                           const char* verb) {
      for (std::size_t i = 0; i < messages.size(); ++i)
        if (std::find(carried.begin(), carried.end(), i) == carried.end())
          return "rank " + std::to_string(rank) + " at grid position " + position(rank) + " " + verb + " rank " +
                 std::to_string(messages[i].rank) + " at " + position(messages[i].rank) +
                 ", a pair the multi-phase transpose schedule of the " + std::to_string(grid->proc_rows()) + " x " +
                 std::to_string(grid->proc_cols()) + " grid never forms ((p, q) and (p', q') exchange only when p = q' "
                 "and q = p' mod gcd(P, Q))" + needs;
      return std::string();
    };
    if (carried_sends != sends.size())
      problem = unscheduled(sends, round_send, "sends to");
    else if (carried_recvs != recvs.size())
      problem = unscheduled(recvs, round_recv, "receives from");
  }
  mpi::agree_on(comm.get(), mpi::error_kind::invalid_argument, problem);
  torus_rounds = torus::make_routed_phases(comm.get(), *options.torus, destination, bytes, options.torus_routing);
}

}  // namespace redist
