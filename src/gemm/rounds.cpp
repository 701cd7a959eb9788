// SPDX-License-Identifier: BSD-3-Clause
// The round loop: laid out at plan time (steps, C blocks, buffers, windows, traffic counts) and run by every
// execution (panels gathered along the grid lines, BLAS on each step, partial C summed along k).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "local_blas.hpp"
#include "machine/cache_line.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "mpi/node_arena.hpp"
#include "mpi/shared_window.hpp"
#include "plan_impl.hpp"
#include "timer.hpp"

namespace redist {

using gemm_detail::buffer;
using gemm_detail::c_block;
using gemm_detail::c_rectangle;
using gemm_detail::c_storage;
using gemm_detail::held_span;
using gemm_detail::local_gemm;
using gemm_detail::panel_gather;
using gemm_detail::range;
using gemm_detail::round_step;
using gemm_detail::sub_range;

namespace {

// The gather of a panel of `height` rows whose `columns` are cut into one piece per member of a grid line
// (partition.hpp): piece x is `height` x its columns, at its place in the column-major panel.
panel_gather gather_of(std::int64_t height, range columns, int members, int mine, std::int64_t my_offset) {
  panel_gather g;
  g.my_offset = my_offset;
  g.my_count = height * sub_range(columns, members, mine).size;
  for (int x = 0; x < members; ++x) {
    const range piece = sub_range(columns, members, x);
    g.counts.push_back(height * piece.size);
    g.displacements.push_back(height * (piece.begin - columns.begin));
  }
  g.total = height * columns.size;
  return g;
}

// shared_memory: a line's pieces narrower than this (along k for A's, along n for B's) are first copied into
// one panel (a memcpy each from the members' segments) for a single BLAS call: a product per thin piece re-reads
// and re-writes the C block, and BLAS packs the other operand again, once per piece (largeM on 4 ranks, B in
// pieces of 100 columns: the multiply 10 % slower in place).
constexpr std::int64_t shared_piece_min = 256;
bool copies_a_pieces(const gemm_schedule& s, const round_step& step) {
  return s.grid_n > 1 && step.depth < shared_piece_min * s.grid_n;
}
bool copies_b_pieces(const gemm_schedule& s, const round_step& step) {
  return s.grid_m > 1 && step.cols < shared_piece_min * s.grid_m;
}

// Piece x of a panel of `height` rows and `width` columns cut along a grid line: its first column, its columns,
// and where it is read (member x's segment when the pieces are read in place, else the whole panel).
struct piece {
  std::int64_t first = 0, size = 0;
  const std::byte* data = nullptr;
};
piece piece_of(const panel_gather& g, bool in_pieces, std::size_t x, std::int64_t height, std::int64_t width,
               const std::vector<std::byte*>& members, const std::byte* panel, std::int64_t element_bytes) {
  if (!in_pieces) return {0, width, panel};
  return {g.displacements[x] / height, g.counts[x] / height, members[x] + g.member_offsets[x] * element_bytes};
}

// Block cb's rectangles: with grid_k > 1 all of it in the accumulator; else the span the user's C holds (`rows`
// x `cols`) in place, with the edges around it in the native storage, or all of it there.
std::vector<c_rectangle> rectangles_of(const c_block& cb, int grid_k, const held_span& rows, const held_span& cols,
                                       std::int64_t user_ld) {
  if (grid_k > 1) return {{0, 0, cb.rows, cb.cols, c_storage::accumulator, 0, cb.rows}};
  const auto native = [&](std::int64_t row, std::int64_t col, std::int64_t height, std::int64_t width) {
    return c_rectangle{row, col, height, width, c_storage::native, cb.native_offset + row + col * cb.rows, cb.rows};
  };
  if (rows.size == 0 || cols.size == 0) return {native(0, 0, cb.rows, cb.cols)};
  std::vector<c_rectangle> out{
      {rows.begin, cols.begin, rows.size, cols.size, c_storage::user, rows.local + cols.local * user_ld, user_ld}};
  const std::int64_t row_end = rows.begin + rows.size, col_end = cols.begin + cols.size;
  for (const c_rectangle& edge :
       {native(0, 0, rows.begin, cb.cols), native(row_end, 0, cb.rows - row_end, cb.cols),
        native(rows.begin, 0, rows.size, cols.begin), native(rows.begin, col_end, rows.size, cb.cols - col_end)})
    if (edge.rows > 0 && edge.cols > 0) out.push_back(edge);
  return out;
}

}  // namespace

void gemm_plan::impl::lay_out_rounds(const gemm_detail::cuts& cut, const gemm_detail::native_parts& parts,
                                     const gemm_detail::part_orders& mine) {
  const gemm_schedule& s = cut.s;
  const gemm_detail::grid_coordinates at = me;
  // Native offsets of this rank's blocks (sub, r) of op(A), (r, sub) of op(B) and (sm, sn) of C.
  const std::vector<std::int64_t> a_offsets = gemm_detail::part_offsets(parts.a, mine.a),
                                  b_offsets = gemm_detail::part_offsets(parts.b, mine.b),
                                  c_offsets = gemm_detail::part_offsets(parts.c, mine.c);
  const auto rounds = static_cast<std::size_t>(s.rounds), seq_n = static_cast<std::size_t>(s.sequential_n);
  // shared_memory: the same offsets at every member of this rank's grid row (A) and column (B), whose storage
  // the multiply reads in place.
  const bool shared = stats.communication == gemm_communication::shared_memory;
  std::vector<std::vector<std::int64_t>> a_member_offsets, b_member_offsets;
  if (shared) {
    for (int x = 0; x < s.grid_n; ++x)
      a_member_offsets.push_back(
          gemm_detail::part_offsets(parts.a, gemm_detail::part_orders_at(cut, {at.i, x, at.l}).a));
    for (int y = 0; y < s.grid_m; ++y)
      b_member_offsets.push_back(
          gemm_detail::part_offsets(parts.b, gemm_detail::part_orders_at(cut, {y, at.j, at.l}).b));
  }
  for (int sm = 0; sm < s.sequential_m; ++sm)
    for (int sn = 0; sn < s.sequential_n; ++sn) {
      const range rows = cut.m_sub(at.i, sm), cols = cut.n_sub(at.j, sn);
      c_block cb;
      cb.rows = rows.size;
      cb.cols = cols.size;
      for (int l = 0; l < s.grid_k; ++l) cb.counts.push_back(rows.size * sub_range(cols, s.grid_k, l).size);
      cb.native_offset = c_offsets[c_blocks.size()];
      const auto [row_part, col_part] = mine.c[c_blocks.size()];
      cb.rectangles = c_row_spans.empty()
                          ? rectangles_of(cb, s.grid_k, {}, {}, 0)
                          : rectangles_of(cb, s.grid_k, c_row_spans[row_part], c_col_spans[col_part], c_user_ld);
      for (const c_rectangle& r : cb.rectangles)
        if (r.where == c_storage::user) stats.c_elements_in_place += r.rows * r.cols;
      c_blocks.push_back(cb);
      accumulator_elements = std::max(accumulator_elements, rows.size * cols.size);
      for (std::int64_t r = 0; r < s.rounds; ++r) {
        const range depth = cut.k_round(at.l, r);
        const auto round = static_cast<std::size_t>(r);
        round_step step;
        step.block = c_blocks.size() - 1;
        step.rows = rows.size;
        step.cols = cols.size;
        step.depth = depth.size;
        step.a = gather_of(rows.size, depth, s.grid_n, at.j, a_offsets[static_cast<std::size_t>(sm) * rounds + round]);
        step.b = gather_of(depth.size, cols, s.grid_m, at.i, b_offsets[round * seq_n + static_cast<std::size_t>(sn)]);
        step.last_of_block = r + 1 == s.rounds;
        for (const auto& offsets : a_member_offsets)
          step.a.member_offsets.push_back(offsets[static_cast<std::size_t>(sm) * rounds + round]);
        for (const auto& offsets : b_member_offsets)
          step.b.member_offsets.push_back(offsets[round * seq_n + static_cast<std::size_t>(sn)]);
        a_panel_capacity = std::max(a_panel_capacity, step.a.total);
        b_panel_capacity = std::max(b_panel_capacity, step.b.total);
        steps.push_back(std::move(step));
      }
    }
  if (stats.communication == gemm_communication::two_sided) prepare_panel_gathers();
}

void gemm_plan::impl::prepare_panel_gathers() {
  const gemm_schedule& s = stats.schedule;
  const auto prepare = [&](panel_gather& g) {
    g.gather = mpi::allgatherv_args(g.my_count, g.counts, g.displacements, mpi_type);
  };
  for (round_step& step : steps) {
    if (s.grid_n > 1) prepare(step.a);
    if (s.grid_m > 1) prepare(step.b);
  }
}

void gemm_plan::impl::allocate_round_buffers() {
  const gemm_schedule& s = stats.schedule;
  const bool shared = stats.communication == gemm_communication::shared_memory;
  const int slots = options.overlap ? 2 : 1;
  const auto eb = static_cast<std::int64_t>(element_bytes);
  if (s.grid_k > 1) accumulator = buffer(accumulator_elements * eb);
  // shared_memory: one panel, for the steps whose pieces are copied (copies_a_pieces, copies_b_pieces).
  const auto any_step = [&](bool (*copies)(const gemm_schedule&, const round_step&)) {
    return std::any_of(steps.begin(), steps.end(), [&](const round_step& step) { return copies(s, step); });
  };
  if (s.grid_n > 1 && (!shared || any_step(copies_a_pieces)))
    a_panels = buffer((shared ? 1 : slots) * a_panel_capacity * eb);
  else
    a_panel_capacity = 0;
  if (s.grid_m > 1 && (!shared || any_step(copies_b_pieces)))
    b_panels = buffer((shared ? 1 : slots) * b_panel_capacity * eb);
  else
    b_panel_capacity = 0;
}

// Elements and messages per execution. Received: every panel piece but this rank's own, and the reduction's
// partial sums as the schedule counts them (its communicated_elements). Sent: each of this rank's pieces
// once to every rank of the line that needs it. Messages as if each piece went straight to its destination
// (the MPI's collective algorithms may route them otherwise); none for panels read in place (shared_memory).
void gemm_plan::impl::count_multiply_traffic() {
  const gemm_schedule& s = stats.schedule;
  traffic_statistics& t = stats.multiply;
  const auto others_with_data = [](const std::vector<std::int64_t>& counts, std::int64_t mine) {
    const auto with_data = std::count_if(counts.begin(), counts.end(), [](std::int64_t c) { return c > 0; });
    return static_cast<std::int64_t>(with_data) - (mine > 0 ? 1 : 0);
  };
  const auto gathered = [&](const panel_gather& g, int line) {
    if (line <= 1) return;
    t.bytes_received += g.total - g.my_count;
    t.bytes_sent += g.my_count * (line - 1);
    if (stats.communication == gemm_communication::shared_memory) return;
    t.messages_received += others_with_data(g.counts, g.my_count);
    t.messages_sent += g.my_count > 0 ? line - 1 : 0;
  };
  for (const round_step& step : steps) {
    gathered(step.a, s.grid_n);
    gathered(step.b, s.grid_m);
  }
  if (s.grid_k > 1)
    for (const c_block& cb : c_blocks) {
      const std::int64_t mine = cb.counts[static_cast<size_t>(me.l)];
      t.bytes_received += cb.rows * cb.cols - mine;
      t.bytes_sent += cb.rows * cb.cols - mine;
      t.messages_received += mine > 0 ? s.grid_k - 1 : 0;
      t.messages_sent += others_with_data(cb.counts, mine);
    }
  t.bytes_received *= static_cast<std::int64_t>(element_bytes);
  t.bytes_sent *= static_cast<std::int64_t>(element_bytes);
}

namespace {
// This process saw MPI fail to make a panel window: it makes none again (Open MPI 4.1's osc/rdma may be left
// broken by the failure, and a later window's synchronisation then never returns; docs/mpi.md).
std::atomic<bool> window_failed{false};
}  // namespace

bool gemm_plan::impl::make_panel_windows(std::string& why) {
  // Agreed first: one process that saw a window fail, or whose MPI's windows cannot be relied on (Open MPI 4.x's
  // osc/rdma: a put may spin forever, which no check here could see), keeps every process of the plan from trying.
  std::string unreliable;
  const bool reliable = mpi::created_windows_reliable(unreliable);
  mpi::agreement ready(comm.get());
  const std::size_t able = ready.reduce_min(window_failed || !reliable ? 0 : 1);
  ready.conclude();
  if (ready.min(able) == 0) {
    why = !reliable       ? unreliable
          : window_failed ? "an earlier window failed on this process"
                          : "a process of this plan cannot use MPI_Win_create windows";
    return false;
  }
  const auto window_over = [&](buffer& panels, MPI_Comm line, bool needed, MPI_Win& window, bool& locked) {
    if (!needed || line == MPI_COMM_NULL) return;
    MPI_Win made = MPI_WIN_NULL;
    // Window creation has no nonblocking form: every rank of the line arrives first, in a watched wait.
    const int arrived = mpi::barrier_yielding(line);
    const int window_created = MPI_Win_create(panels.data(), static_cast<MPI_Aint>(panels.bytes()),
                                              static_cast<int>(element_bytes), MPI_INFO_NULL, line, &made);
    const int created = window_created != MPI_SUCCESS ? window_created : arrived;
    // Owned before the check: a window that exists on every rank is freed by the plan on every rank, also
    // when the check fails on one of them (the others would wait in MPI_Win_free otherwise).
    window = made;
    mpi::check(created, "MPI_Win_create(panels, line)");
    REDIST_MPI_CHECK(MPI_Win_set_errhandler(window, MPI_ERRORS_RETURN));  // RMA calls report, as calls on comms
    // One passive epoch for the plan's life: a round's puts are completed by flushes and a watched barrier of the
    // line (complete_puts), so that no wait of an execution is a fence, which blocks unwatched and spins.
    const int epoch = MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
    locked = epoch == MPI_SUCCESS;
    mpi::check(epoch, "MPI_Win_lock_all(panels)");
  };
  // Made by every rank and agreed on: an MPI may fail to make a window on some ranks only (Open MPI 4.1's
  // osc/rdma, docs/mpi.md), and the others would then wait for them in the first round.
  const gemm_schedule& s = stats.schedule;
  mpi::agreement windows(comm.get());
  windows.collective([&] { window_over(a_panels, row_comm(), s.grid_n > 1, a_window, a_window_locked); });
  windows.collective([&] { window_over(b_panels, col_comm(), s.grid_m > 1, b_window, b_window_locked); });
  try {
    windows.conclude();
    return true;
  } catch (const mpi_error& e) {  // the same on every rank
    why = e.what();
    window_failed = true;
    free_panel_windows();
    return false;
  }
}

void gemm_plan::impl::free_panel_windows() {
  for (auto [window, locked] : {std::pair{&a_window, &a_window_locked}, std::pair{&b_window, &b_window_locked}}) {
    if (*locked) MPI_Win_unlock_all(*window);
    *locked = false;
    if (*window != MPI_WIN_NULL) MPI_Win_free(window);
  }
}

void gemm_plan::impl::make_shared_stores(MPI_Comm caller) {
  const gemm_schedule& s = stats.schedule;
  const auto eb = static_cast<std::int64_t>(element_bytes);
  shares_a = s.grid_n > 1 && row_comm() != MPI_COMM_NULL;
  shares_b = s.grid_m > 1 && col_comm() != MPI_COMM_NULL;
  const std::int64_t a_bytes = shares_a ? a_native.local_elements() * eb : 0;
  const std::int64_t b_bytes = shares_b ? b_native.local_elements() * eb : 0;
  const std::int64_t b_offset = machine::round_up_to_cache_line(a_bytes);  // B on its own cache lines
  // One segment over the node for both (every grid line lies on one node: choose_communication). Cut from the
  // node's arena cached on the caller's communicator, which the transforms' shared_memory plans use too, where an
  // earlier plan (or this plan's transform in) left room on every rank of the node: then no window is made (one
  // MPI_Win_allocate_shared synchronises the node: 0.04-0.06 s of a 0.2 s plan on 4 ranks sharing 2 cores).
  // Otherwise in a window of the plan's own, freed with it: the arena does not grow to the size of the native
  // matrices, which it would keep until the communicator is freed. The node communicator was split when the
  // choice was made.
  const MPI_Comm node = mpi::node_communicator(caller);
  const std::int64_t segment_bytes = b_offset + b_bytes;
  // The reservation first, a step of the windows' agreement: its node allreduce is made by every rank of the node,
  // and its answer is the same on all of them (kept where the step fails after the call), so they all make a
  // window below or none does.
  mpi::agreement windows(comm.get());
  const bool in_arena = detail::reserve_node_segment(caller, node, segment_bytes, native_segment, false, &windows);
  std::byte* base = nullptr;
  if (in_arena) {
    native_shared = native_segment.arena->window();
    base = native_segment.arena->segment(mpi::rank(node)) + native_segment.offset;
  }
  windows.collective([&] {
    if (in_arena) return;
    // (Nothing may throw before the collective call: the node's other ranks would wait in it.)
    MPI_Win made = MPI_WIN_NULL;
    const int created = mpi::allocate_shared_window(segment_bytes, node, &base, &made);
    // Owned before the checks, as the panel windows: every rank frees it, also when one of them fails here.
    own_native_window = native_shared = made;
    mpi::check(created, "MPI_Win_allocate_shared(native A and B, node)");
    REDIST_MPI_CHECK(MPI_Win_set_errhandler(native_shared, MPI_ERRORS_RETURN));
    // One passive epoch for the plan's life (closed by the destructor): loads and MPI_Win_sync need one.
    const int epoch = MPI_Win_lock_all(MPI_MODE_NOCHECK, native_shared);
    own_native_window_locked = epoch == MPI_SUCCESS;
    mpi::check(epoch, "MPI_Win_lock_all(native storage)");
  });
  // Where each member keeps its A (its segment's start) and its B (there, at its B offset), by node rank: a
  // collective step of the same agreement, so that every rank of the node gathers whatever failed before.
  const std::int64_t mine[2] = {in_arena ? native_segment.offset : 0, b_offset};
  std::vector<std::int64_t> offsets(2 * static_cast<std::size_t>(mpi::size(node)));
  windows.collective(
      [&] { REDIST_MPI_CHECK(mpi::allgather_yielding(mine, 2, MPI_INT64_T, offsets.data(), 2, MPI_INT64_T, node)); });
  // The grid lines' members located before the conclusion too: a rank whose (local) queries fail fails every
  // rank instead of leaving them to wait for it in the first round.
  windows.attempt([&] {
    // Where each member's segment starts (in the arena: at its offset there), by node rank.
    const auto segment_of = [&](int node_rank) {
      std::byte* segment = nullptr;
      if (in_arena)
        segment = native_segment.arena->segment(node_rank);
      else
        REDIST_MPI_CHECK(mpi::shared_window_segment(native_shared, node_rank, &segment));
      return segment;
    };
    mpi::group_handle node_group;
    REDIST_MPI_CHECK(MPI_Comm_group(node, node_group.out()));
    const auto locate = [&](MPI_Comm line, bool b_part, std::vector<std::byte*>& members) {
      mpi::group_handle line_group;
      REDIST_MPI_CHECK(MPI_Comm_group(line, line_group.out()));
      const int count = mpi::size(line);
      std::vector<int> line_ranks(static_cast<std::size_t>(count)), node_ranks(line_ranks.size());
      for (int x = 0; x < count; ++x) line_ranks[static_cast<std::size_t>(x)] = x;
      REDIST_MPI_CHECK(
          MPI_Group_translate_ranks(line_group.get(), count, line_ranks.data(), node_group.get(), node_ranks.data()));
      for (const int r : node_ranks) {
        const auto at = 2 * static_cast<std::size_t>(r);
        members.push_back(segment_of(r) + offsets[at] + (b_part ? offsets[at + 1] : 0));
      }
    };
    if (shares_a) locate(row_comm(), false, a_members);
    if (shares_b) locate(col_comm(), true, b_members);
  });
  windows.conclude();
  stats.native_window_reused = in_arena;
  if (shares_a) a_store = buffer::view(base, a_bytes);
  if (shares_b) b_store = buffer::view(base + b_offset, b_bytes);
}

void gemm_plan::impl::start_gather(const round_step& step, int slot, std::vector<MPI_Request>& requests) const {
  const auto gather = [&](const panel_gather& g, buffer& store, buffer& panels, std::int64_t capacity, MPI_Comm line) {
    MPI_Request request = MPI_REQUEST_NULL;
    g.gather.start(at(store, g.my_offset), at(panels, slot * capacity), line, &request);
    requests.push_back(request);
  };
  if (stats.schedule.grid_n > 1) gather(step.a, a_store, a_panels, a_panel_capacity, row_comm());
  if (stats.schedule.grid_m > 1) gather(step.b, b_store, b_panels, b_panel_capacity, col_comm());
}

void gemm_plan::impl::put_panels(const round_step& step, int slot) const {
  const auto put = [&](const panel_gather& g, buffer& store, std::int64_t capacity, MPI_Comm line, MPI_Win window) {
    const int members = mpi::size(line), mine = mpi::rank(line);
    if (g.my_count == 0) return;
    for (int target = 0; target < members; ++target)
      mpi::put(at(store, g.my_offset), g.my_count, mpi_type, target,
               slot * capacity + g.displacements[static_cast<size_t>(mine)], window);
  };
  if (stats.schedule.grid_n > 1) put(step.a, a_store, a_panel_capacity, row_comm(), a_window);
  if (stats.schedule.grid_m > 1) put(step.b, b_store, b_panel_capacity, col_comm(), b_window);
}

// C block columns += op(A) piece x * op(B) piece y for every piece x of the A panel (a range of the step's depth,
// from the grid row's member x) and y of the B panel (a range of its columns, from the grid column's member y),
// read where those members keep them, or from a panel they were copied into. `first`: the block's first step,
// whose first product into each column overwrites it (multiply_into). Copies count as panel time, products as
// multiply time.
void gemm_plan::impl::multiply_shared(const round_step& step, void* c, bool first, scalar alpha, scalar beta) const {
  const gemm_schedule& s = stats.schedule;
  const auto eb = static_cast<std::int64_t>(element_bytes);
  const bool copy_a = copies_a_pieces(s, step), copy_b = copies_b_pieces(s, step);
  const seconds_since copying;
  const auto copy = [&](const panel_gather& g, const std::vector<std::byte*>& members, buffer& panel) {
    for (std::size_t x = 0; x < members.size(); ++x)
      if (g.counts[x] > 0)
        std::memcpy(at(panel, g.displacements[x]), members[x] + g.member_offsets[x] * eb,
                    static_cast<std::size_t>(g.counts[x] * eb));
  };
  if (copy_a) copy(step.a, a_members, a_panels);
  if (copy_b) copy(step.b, b_members, b_panels);
  last_execution.panel_wait += copying.elapsed();
  const seconds_since multiplying;
  const bool a_in_pieces = s.grid_n > 1 && !copy_a, b_in_pieces = s.grid_m > 1 && !copy_b;
  const std::byte* a_panel = copy_a ? at(a_panels, 0) : at(a_store, step.a.my_offset);
  const std::byte* b_panel = copy_b ? at(b_panels, 0) : at(b_store, step.b.my_offset);
  for (std::size_t y = 0; y < static_cast<std::size_t>(b_in_pieces ? s.grid_m : 1); ++y) {
    const piece b = piece_of(step.b, b_in_pieces, y, step.depth, step.cols, b_members, b_panel, eb);
    if (b.size == 0) continue;
    bool first_piece = true;
    for (std::size_t x = 0; x < static_cast<std::size_t>(a_in_pieces ? s.grid_n : 1); ++x) {
      const piece a = piece_of(step.a, a_in_pieces, x, step.rows, step.depth, a_members, a_panel, eb);
      if (a.size == 0) continue;
      multiply_into(c_blocks[step.block], c, b.first, b.size, a.size, alpha, a.data, step.rows, b.data + a.first * eb,
                    step.depth, first && first_piece, beta);
      first_piece = false;
    }
  }
  last_execution.multiply += multiplying.elapsed();
}

void gemm_plan::impl::multiply_into(const c_block& cb, void* c, std::int64_t col, std::int64_t width,
                                    std::int64_t depth, scalar alpha, const std::byte* a, std::int64_t lda,
                                    const std::byte* b, std::int64_t ldb, bool first, scalar beta) const {
  const auto eb = static_cast<std::int64_t>(element_bytes);
  for (const c_rectangle& r : cb.rectangles) {
    const std::int64_t from = std::max(col, r.col), to = std::min(col + width, r.col + r.cols);
    if (from >= to) continue;
    std::byte* base = r.where == c_storage::user     ? static_cast<std::byte*>(c)
                      : r.where == c_storage::native ? at(c_store, 0)
                                                     : at(accumulator, 0);
    local_gemm(description.type, r.rows, to - from, depth, alpha, a + r.row * eb, lda, b + (from - col) * ldb * eb, ldb,
               !first                       ? scalar(1.0)
               : r.where == c_storage::user ? beta
                                            : scalar(0.0),
               base + (r.offset + (from - r.col) * r.ld) * eb, r.ld);
  }
}

// Narrowest column strip of a multiply that is cut so that pending gathers progress between strips (BLAS
// keeps its rate on strips this wide).
constexpr std::int64_t progress_strip_columns = 128;

void gemm_plan::impl::multiply(void* c, scalar alpha, scalar beta) const {
  last_execution.multiply = last_execution.panel_wait = last_execution.reduction = 0;
  if (idle || steps.empty()) return;
  const gemm_schedule& s = stats.schedule;
  const bool shared = stats.communication == gemm_communication::shared_memory;
  const bool gather_a = !shared && s.grid_n > 1, gather_b = !shared && s.grid_m > 1;
  const bool one_sided = stats.communication == gemm_communication::one_sided;
  const int slots = options.overlap ? 2 : 1;
  // one_sided, in place of fences: this rank's puts completed at their targets (flush), then a watched barrier of
  // each line (every member's puts complete, and every member done reading the panels that the next puts
  // overwrite), then MPI_Win_sync so that this rank's loads see what arrived.
  const auto complete_puts = [&](bool flush) {
    if (flush && gather_a) REDIST_MPI_CHECK(MPI_Win_flush_all(a_window));
    if (flush && gather_b) REDIST_MPI_CHECK(MPI_Win_flush_all(b_window));
    if (gather_a) REDIST_MPI_CHECK(mpi::barrier_yielding(row_comm()));
    if (gather_b) REDIST_MPI_CHECK(mpi::barrier_yielding(col_comm()));
    if (gather_a) REDIST_MPI_CHECK(MPI_Win_sync(a_window));
    if (gather_b) REDIST_MPI_CHECK(MPI_Win_sync(b_window));
  };
  std::vector<MPI_Request> pending;
  // Brings step q's panels into slot q % slots; with overlap the next step's travel while this one multiplies.
  const auto issue = [&](size_t q) {
    const int slot = static_cast<int>(q % static_cast<size_t>(slots));
    if (one_sided)
      put_panels(steps[q], slot);
    else
      start_gather(steps[q], slot, pending);
  };
  const auto complete = [&]() {
    const seconds_since waiting;
    if (one_sided) {
      complete_puts(true);
    } else if (!pending.empty()) {
      REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(pending.size()), pending.data()));
      pending.clear();
    }
    last_execution.panel_wait += waiting.elapsed();
  };
  const bool communicates = gather_a || gather_b;
  // Every member of the lines done with the previous execution's panels before they are overwritten (with
  // overlap, the previous execution ended with a barrier after its last multiply).
  if (one_sided && communicates && !options.overlap) complete_puts(false);
  // shared_memory: the line's members must have written their native A and B (the transform in) before this
  // rank reads them. They write them again only after the next execution's agreement, which every rank
  // enters after this multiply; without that agreement (transform check_consistency off) a second barrier
  // below closes the multiply.
  const auto line_barriers = [&] {
    const seconds_since waiting;
    REDIST_MPI_CHECK(MPI_Win_sync(native_shared));
    if (shares_a) REDIST_MPI_CHECK(mpi::barrier_yielding(row_comm()));
    if (shares_b) REDIST_MPI_CHECK(mpi::barrier_yielding(col_comm()));
    REDIST_MPI_CHECK(MPI_Win_sync(native_shared));
    last_execution.panel_wait += waiting.elapsed();
  };
  if (shared) line_barriers();
  if (communicates && options.overlap) {
    issue(0);
    complete();
  }
  bool block_started = false;
  for (size_t q = 0; q < steps.size(); ++q) {
    const round_step& step = steps[q];
    const int slot = static_cast<int>(q % static_cast<size_t>(slots));
    if (communicates) {
      if (options.overlap) {
        if (q + 1 < steps.size()) issue(q + 1);
      } else {
        // One buffer: a target may still multiply step q - 1 out of it until every member has passed a barrier.
        if (one_sided && q > 0) complete_puts(false);
        issue(q);
        complete();
      }
    }
    const c_block& cb = c_blocks[step.block];
    // The first round of a block overwrites it (or, in place, scales the user's C by beta), later ones add.
    if (shared && step.depth > 0 && step.rows > 0 && step.cols > 0) {
      multiply_shared(step, c, !block_started, alpha, beta);
      block_started = true;
    } else if (step.depth > 0 && step.rows > 0 && step.cols > 0) {
      const std::byte* a_panel = gather_a ? at(a_panels, slot * a_panel_capacity) : at(a_store, step.a.my_offset);
      const std::byte* b_panel = gather_b ? at(b_panels, slot * b_panel_capacity) : at(b_store, step.b.my_offset);
      // An MPI without asynchronous progress moves the next step's panels only inside MPI calls: the multiply
      // goes in column strips with a test of the gathers between them, so that their hand-shakes and copies
      // advance while this step computes instead of after it.
      const bool progress = !one_sided && !pending.empty();
      const std::int64_t strip =
          progress ? std::max<std::int64_t>(progress_strip_columns, (step.cols + 7) / 8) : step.cols;
      for (std::int64_t c0 = 0; c0 < step.cols; c0 += strip) {
        const seconds_since multiplying;
        multiply_into(cb, c, c0, std::min(strip, step.cols - c0), step.depth, alpha, a_panel, step.rows,
                      b_panel + c0 * step.depth * static_cast<std::int64_t>(element_bytes), step.depth, !block_started,
                      beta);
        last_execution.multiply += multiplying.elapsed();
        if (progress && c0 + strip < step.cols) {
          const seconds_since testing;
          int done = 0;
          REDIST_MPI_CHECK(MPI_Testall(static_cast<int>(pending.size()), pending.data(), &done, MPI_STATUSES_IGNORE));
          last_execution.panel_wait += testing.elapsed();
        }
      }
      block_started = true;
    }
    if (communicates && options.overlap) complete();  // the next step's panels (and, one-sided, the epoch)
    if (step.last_of_block) {
      if (!block_started) {  // no round of this layer had any k: the product is 0 (beta * C in place)
        const auto eb = static_cast<std::int64_t>(element_bytes);
        for (const c_rectangle& r : cb.rectangles) {
          if (r.where == c_storage::user) {
            local_gemm(description.type, r.rows, r.cols, 0, alpha, nullptr, r.rows, nullptr, 1, beta,
                       static_cast<std::byte*>(c) + r.offset * eb, r.ld);
            continue;
          }
          std::byte* base = r.where == c_storage::native ? at(c_store, r.offset) : at(accumulator, r.offset);
          for (std::int64_t col = 0; col < r.cols; ++col)
            std::memset(base + col * r.ld * eb, 0, static_cast<size_t>(r.rows * eb));
        }
      }
      if (s.grid_k > 1) {
        const seconds_since reducing;
        mpi::reduce_scatter(at(accumulator, 0), at(c_store, cb.native_offset), cb.counts.data(), mpi_type, MPI_SUM,
                            layer_comm());
        last_execution.reduction += reducing.elapsed();
      }
      block_started = false;
    }
  }
  if (shared && !options.transform.check_consistency) line_barriers();
}

}  // namespace redist
