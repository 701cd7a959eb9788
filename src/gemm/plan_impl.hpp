// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The state of a gemm_plan: built by make_gemm_plan (gemm.cpp), the round loop's part laid out and run by
// rounds.cpp.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/checked.hpp"
#include "mpi/node_arena.hpp"
#include "native_layout.hpp"
#include "redist/gemm/gemm.hpp"
#include "rounds.hpp"

namespace redist {

struct gemm_plan::impl {
  gemm_description description;
  mutable bool in_progress = false;  // between start() and wait() (mutable: execution state of a const plan)
  gemm_options options;
  gemm_statistics stats;
  mpi::comm_handle comm;
  std::int64_t m = 0, n = 0, k = 0;
  std::size_t element_bytes = 0;
  MPI_Datatype mpi_type = MPI_DATATYPE_NULL;

  // Native layouts and the transforms through them.
  grid_layout a_native, b_native, c_native;
  transform_plan into_native;  // op(A) -> A native, op(B) -> B native (absent when k == 0 or C is empty)
  // C = C native + beta * C where C is not written in place, one job per rectangle of it (absent when C is empty or
  // all written in place).
  transform_plan out_of_native;
  std::size_t out_jobs = 0;
  bool has_into = false, has_out = false;
  // C written in place (grid_k = 1): the part of each native C part the user's C holds on the part's rank (a row
  // span of its row part times a column span of its column part, agreed over the ranks holding each part; see
  // gemm_detail::held_span), written by the multiply with the user's beta. c_in_place: all of C;
  // c_partly_in_place: some of it on some rank (agreed).
  std::vector<gemm_detail::held_span> c_row_spans, c_col_spans;
  std::int64_t c_user_ld = 0;
  bool c_in_place = false, c_partly_in_place = false;

  // The multiply (this rank's part; empty when idle).
  bool idle = true;
  gemm_detail::grid_coordinates me;
  // The grid's lines (gemm.cpp, split_grid_lines), shared with the other plans on the same communicator that
  // place the same grid alike. Null on idle ranks and along a grid dimension of extent 1 (nothing travels there).
  std::shared_ptr<const gemm_detail::grid_lines> lines;
  MPI_Comm row_comm() const {
    return lines ? lines->row.get() : MPI_COMM_NULL;
  }  // ranks (i, *, l): gather op(A) panels
  MPI_Comm col_comm() const {
    return lines ? lines->col.get() : MPI_COMM_NULL;
  }  // ranks (*, j, l): gather op(B) panels
  MPI_Comm layer_comm() const { return lines ? lines->layer.get() : MPI_COMM_NULL; }  // ranks (i, j, *): sum C along k
  std::vector<gemm_detail::round_step> steps;
  std::vector<gemm_detail::c_block> c_blocks;  // in (s, t) order
  std::int64_t a_panel_capacity = 0, b_panel_capacity = 0, accumulator_elements = 0;
  mutable gemm_detail::buffer a_store, b_store, c_store, accumulator, a_panels, b_panels;
  mutable gemm_execution_profile last_execution;
  // one_sided: the panels' windows, each in a passive epoch (lock_all) while the plan lives; a round's puts are
  // completed by flushes and a watched barrier of the line (complete_puts), not by fences.
  MPI_Win a_window = MPI_WIN_NULL, b_window = MPI_WIN_NULL;
  bool a_window_locked = false, b_window_locked = false;
  // shared_memory (stats.communication): the native A and B of every rank of the node in one segment (its A where
  // its grid row shares A, then its B where its column shares B) of the node's arena (mpi/node_arena.hpp) where
  // it has room, else of a window of the plan's own; either window (native_shared) stays in a passive epoch
  // (lock_all) while the plan lives. a_members (b_members): where each member of this rank's grid row (column)
  // keeps its A (B), by position in the line.
  detail::arena_segment native_segment;
  MPI_Win own_native_window = MPI_WIN_NULL;
  bool own_native_window_locked = false;
  MPI_Win native_shared = MPI_WIN_NULL;
  bool shares_a = false, shares_b = false;  // this rank's row reads A in place (grid_n > 1), its column B
  std::vector<std::byte*> a_members, b_members;

  ~impl() {
    if (mpi::finalized()) return;
    free_panel_windows();
    if (own_native_window_locked) MPI_Win_unlock_all(own_native_window);
    if (own_native_window != MPI_WIN_NULL) MPI_Win_free(&own_native_window);
  }

  std::byte* at(gemm_detail::buffer& b, std::int64_t elements) const {
    return b.data() + elements * static_cast<std::int64_t>(element_bytes);
  }

  // Plan time, on a rank with a grid position: the steps and C blocks in execution order with the sizes of the
  // panel and accumulator buffers (`parts` and `mine` place this rank's native blocks), then the statistics'
  // counts of the traffic they cause.
  void lay_out_rounds(const gemm_detail::cuts& cut, const gemm_detail::native_parts& parts,
                      const gemm_detail::part_orders& mine);
  void count_multiply_traffic();
  // Plan time, after lay_out_rounds: the accumulator and the panels the steps gather into (throws bad_alloc).
  void allocate_round_buffers();
  // Plan time, collective over comm: the one-sided panel windows.
  // False (on every rank) when MPI could not make a window on some rank: none is kept, and the panels travel
  // two-sided (Debian's Open MPI 4.1 with its stock osc/rdma fails on one-rank lines and on sibling communicators,
  // docs/mpi.md). `why` then holds the lowest failing rank's MPI error.
  bool make_panel_windows(std::string& why);
  // Closes the panel windows' epochs and frees them (collective over each line; local where none was made).
  void free_panel_windows();
  // The two-sided panel gathers' arguments (local; may allocate): made with the rounds, or where the windows failed.
  void prepare_panel_gathers();
  // Plan time, collective over comm: the segment of the node's arena that holds the native A and B
  // (shared_memory). caller: the communicator make_gemm_plan was given (its node communicator and arena are
  // cached there).
  void make_shared_stores(MPI_Comm caller);

  // Fills last_execution's multiply, panel_wait and reduction. `c` and beta: the user's C (where written in place).
  void multiply(void* c, scalar alpha, scalar beta) const;
  // Columns [col, col + width) of block cb += alpha * a (cb.rows x depth, lda) * b (depth x width, ldb), written
  // into each of the block's rectangles they cross. `first`: the block's first product, which overwrites the
  // native storage and the accumulator and scales the user's C by beta.
  void multiply_into(const gemm_detail::c_block& cb, void* c, std::int64_t col, std::int64_t width, std::int64_t depth,
                     scalar alpha, const std::byte* a, std::int64_t lda, const std::byte* b, std::int64_t ldb,
                     bool first, scalar beta) const;
  void start_gather(const gemm_detail::round_step& step, int slot, std::vector<MPI_Request>& requests) const;
  void put_panels(const gemm_detail::round_step& step, int slot) const;
  // shared_memory: one step's product from the pieces where the line's ranks keep them.
  void multiply_shared(const gemm_detail::round_step& step, void* c, bool first, scalar alpha, scalar beta) const;
};

}  // namespace redist
