// SPDX-License-Identifier: BSD-3-Clause
// The native layouts: dimension orders, the parts of op(A), op(B) and C, and the grid_layouts built from them.
#include "native_layout.hpp"

#include <algorithm>

namespace redist::gemm_detail {

dimension_order dimension_order::identity(std::int64_t n) {
  dimension_order o;
  o.runs.push_back({0, n});
  o.run_position.push_back(0);
  return o;
}

dimension_order dimension_order::grouped(const std::vector<std::int64_t>& splits, const std::vector<int>& owner_line,
                                         gemm_native_order choice) {
  const std::int64_t blocks = static_cast<std::int64_t>(splits.size()) - 1, n = splits.empty() ? 0 : splits.back();
  if (blocks <= 1 || choice == gemm_native_order::contiguous ||
      (choice == gemm_native_order::automatic && n < min_mean_run * blocks))
    return identity(n);
  std::vector<std::int64_t> by_owner(static_cast<size_t>(blocks));
  for (std::int64_t b = 0; b < blocks; ++b) by_owner[static_cast<size_t>(b)] = b;
  std::stable_sort(by_owner.begin(), by_owner.end(), [&](std::int64_t x, std::int64_t y) {
    return owner_line[static_cast<size_t>(x)] < owner_line[static_cast<size_t>(y)];
  });
  dimension_order o;
  std::int64_t position = 0;
  for (std::int64_t b : by_owner) {
    const range block{splits[static_cast<size_t>(b)],
                      splits[static_cast<size_t>(b) + 1] - splits[static_cast<size_t>(b)]};
    if (!o.runs.empty() && o.runs.back().begin + o.runs.back().size == block.begin)
      o.runs.back().size += block.size;
    else {
      o.runs.push_back(block);
      o.run_position.push_back(position);
    }
    position += block.size;
  }
  return o;
}

std::vector<std::pair<range, std::int64_t>> dimension_order::pieces(range r) const {
  std::vector<std::pair<range, std::int64_t>> out;
  if (r.size == 0) return out;
  size_t x =
      static_cast<size_t>(std::upper_bound(run_position.begin(), run_position.end(), r.begin) - run_position.begin()) -
      1;
  for (std::int64_t done = 0; done < r.size; ++x) {
    const std::int64_t skip = r.begin + done - run_position[x];
    const std::int64_t take = std::min(runs[x].size - skip, r.size - done);
    out.push_back({{runs[x].begin + skip, take}, done});
    done += take;
  }
  return out;
}

namespace {

// The order of a dimension taken from the layout of op(X) along it: `rows` selects op(X)'s rows.
dimension_order order_from(const grid_layout& x, op o, bool rows, gemm_native_order choice) {
  const bool layout_rows = rows == (o == op::identity);
  return layout_rows ? dimension_order::grouped(x.row_splits(), x.row_proc(), choice)
                     : dimension_order::grouped(x.col_splits(), x.col_proc(), choice);
}

}  // namespace

dimension_orders choose_orders(const gemm_description& d, std::int64_t m, std::int64_t n, std::int64_t k,
                               gemm_native_order choice) {
  dimension_orders o;
  o.m = k > n ? order_from(d.a, d.op_a, true, choice) : order_from(d.c, op::identity, true, choice);
  o.n = k > m ? order_from(d.b, d.op_b, false, choice) : order_from(d.c, op::identity, false, choice);
  o.k = n > m ? order_from(d.b, d.op_b, true, choice) : order_from(d.a, d.op_a, false, choice);
  return o;
}

namespace {

// Sizes the process grid of `parts` and names the grid label at each of its positions.
template <class LabelAt>
void label_grid(layout_parts& parts, int proc_rows, int proc_cols, LabelAt label_at) {
  parts.proc_rows = proc_rows;
  parts.proc_cols = proc_cols;
  parts.labels.resize(static_cast<size_t>(proc_rows) * static_cast<size_t>(proc_cols));
  for (int pr = 0; pr < proc_rows; ++pr)
    for (int pc = 0; pc < proc_cols; ++pc) parts.labels[static_cast<size_t>(pr) * proc_cols + pc] = label_at(pr, pc);
}

// The sub-parts (i, s) of m on process row i: the rows of native op(A) and C.
std::vector<std::pair<range, int>> m_parts(const cuts& cut) {
  std::vector<std::pair<range, int>> rows;
  for (int i = 0; i < cut.s.grid_m; ++i)
    for (int sub = 0; sub < cut.s.sequential_m; ++sub) rows.push_back({cut.m_sub(i, sub), i});
  return rows;
}

}  // namespace

// Parts over grid labels (label x = position (i, j, l) with x = (i*grid_n + j)*grid_k + l), as partition.hpp
// describes them.
native_parts native_parts_of(const cuts& cut) {
  const gemm_schedule& s = cut.s;
  native_parts p;
  p.a.rows = m_parts(cut);
  for (int l = 0; l < s.grid_k; ++l)
    for (std::int64_t r = 0; r < s.rounds; ++r)
      for (int j = 0; j < s.grid_n; ++j)
        p.a.cols.push_back({sub_range(cut.k_round(l, r), s.grid_n, j), l * s.grid_n + j});
  label_grid(p.a, s.grid_m, s.grid_k * s.grid_n,
             [&](int pr, int pc) { return cut.label(pr, pc % s.grid_n, pc / s.grid_n); });

  for (int l = 0; l < s.grid_k; ++l)
    for (std::int64_t r = 0; r < s.rounds; ++r) p.b.rows.push_back({cut.k_round(l, r), l});
  for (int j = 0; j < s.grid_n; ++j)
    for (int sub = 0; sub < s.sequential_n; ++sub)
      for (int i = 0; i < s.grid_m; ++i)
        p.b.cols.push_back({sub_range(cut.n_sub(j, sub), s.grid_m, i), j * s.grid_m + i});
  label_grid(p.b, s.grid_k, s.grid_n * s.grid_m,
             [&](int pr, int pc) { return cut.label(pc % s.grid_m, pc / s.grid_m, pr); });

  p.c.rows = m_parts(cut);
  for (int j = 0; j < s.grid_n; ++j)
    for (int sub = 0; sub < s.sequential_n; ++sub)
      for (int l = 0; l < s.grid_k; ++l)
        p.c.cols.push_back({sub_range(cut.n_sub(j, sub), s.grid_k, l), j * s.grid_k + l});
  label_grid(p.c, s.grid_m, s.grid_n * s.grid_k,
             [&](int pr, int pc) { return cut.label(pr, pc / s.grid_k, pc % s.grid_k); });
  return p;
}

// Part indices in size_t: a dimension may have more parts than an int counts (k in rounds times grid_n pieces).
part_orders part_orders_at(const cuts& cut, grid_coordinates at) {
  const gemm_schedule& s = cut.s;
  const auto ix = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  const std::size_t i = ix(at.i), j = ix(at.j), l = ix(at.l), rounds = ix(s.rounds);
  const std::size_t seq_m = ix(s.sequential_m), seq_n = ix(s.sequential_n);
  part_orders o;
  for (std::size_t sub = 0; sub < seq_m; ++sub)
    for (std::size_t r = 0; r < rounds; ++r) o.a.push_back({i * seq_m + sub, (l * rounds + r) * ix(s.grid_n) + j});
  for (std::size_t r = 0; r < rounds; ++r)
    for (std::size_t sub = 0; sub < seq_n; ++sub) o.b.push_back({l * rounds + r, (j * seq_n + sub) * ix(s.grid_m) + i});
  for (std::size_t sm = 0; sm < seq_m; ++sm)
    for (std::size_t sn = 0; sn < seq_n; ++sn) o.c.push_back({i * seq_m + sm, (j * seq_n + sn) * ix(s.grid_k) + l});
  return o;
}

std::vector<std::int64_t> part_offsets(const layout_parts& parts, const part_order& order) {
  std::vector<std::int64_t> offsets;
  std::int64_t offset = 0;
  for (const auto& [rx, cx] : order) {
    offsets.push_back(offset);
    offset += parts.rows[rx].first.size * parts.cols[cx].first.size;
  }
  return offsets;
}

namespace {

struct split_dimension {
  std::vector<std::int64_t> splits{0};
  std::vector<int> procs;
  // Per part: its pieces as (layout block index, offset within the part).
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> part_blocks;
};

split_dimension split_along(const std::vector<std::pair<range, int>>& parts, const dimension_order& order) {
  struct run {
    range global;
    int proc;
    size_t part;
    std::int64_t offset;
  };
  std::vector<run> runs;
  for (size_t x = 0; x < parts.size(); ++x)
    for (const auto& [global, offset] : order.pieces(parts[x].first))
      runs.push_back({global, parts[x].second, x, offset});
  std::sort(runs.begin(), runs.end(), [](const run& a, const run& b) { return a.global.begin < b.global.begin; });
  split_dimension d;
  d.part_blocks.resize(parts.size());
  for (const run& r : runs) {
    d.part_blocks[r.part].push_back({static_cast<std::int64_t>(d.procs.size()), r.offset});
    d.splits.push_back(r.global.begin + r.global.size);
    d.procs.push_back(r.proc);
  }
  return d;
}

// Parts are (row range x column range) in the dimensions' orders; a part is stored column-major with its own
// height as leading dimension, this rank's parts one after another in `mine`. A part made of several global
// runs becomes one layout block per pair of runs, each at its place inside the part's storage.
grid_layout make_native_layout(const layout_parts& parts, const dimension_order& row_order,
                               const dimension_order& col_order, const std::vector<int>& rank_of_label, int my_rank,
                               const part_order& mine) {
  split_dimension rows = split_along(parts.rows, row_order), cols = split_along(parts.cols, col_order);
  std::vector<int> grid_ranks;
  for (const int label : parts.labels) grid_ranks.push_back(rank_of_label[static_cast<size_t>(label)]);
  const std::vector<std::int64_t> offsets = part_offsets(parts, mine);
  std::vector<local_block> blocks;
  for (size_t x = 0; x < mine.size(); ++x) {
    const auto [rx, cx] = mine[x];
    const range r = parts.rows[rx].first, c = parts.cols[cx].first;
    if (r.size == 0 || c.size == 0) continue;
    for (const auto& [col_block, col_offset] : cols.part_blocks[cx])
      for (const auto& [row_block, row_offset] : rows.part_blocks[rx])
        blocks.push_back(
            {{row_block, col_block}, offsets[x] + col_offset * r.size + row_offset, r.size, storage_order::col_major});
  }
  return grid_layout(std::move(rows.splits), std::move(cols.splits), std::move(rows.procs), std::move(cols.procs),
                     parts.proc_rows, parts.proc_cols, std::move(grid_ranks), storage_order::col_major,
                     storage_kind::explicit_blocks, {}, {}, 1, std::move(blocks), my_rank);
}

}  // namespace

native_layouts make_native_layouts(const native_parts& parts, const dimension_orders& orders,
                                   const std::vector<int>& rank_of_label, int my_rank, const part_orders& mine) {
  return {make_native_layout(parts.a, orders.m, orders.k, rank_of_label, my_rank, mine.a),
          make_native_layout(parts.b, orders.k, orders.n, rank_of_label, my_rank, mine.b),
          make_native_layout(parts.c, orders.m, orders.n, rank_of_label, my_rank, mine.c)};
}

namespace {

std::int64_t block_at(const std::vector<std::int64_t>& splits, std::int64_t g) {
  return static_cast<std::int64_t>(std::upper_bound(splits.begin(), splits.end(), g) - splits.begin()) - 1;
}

}  // namespace

std::vector<held_span> held_spans(const std::vector<std::pair<range, int>>& parts, const dimension_order& order,
                                  const grid_layout& user, bool rows, const std::vector<std::size_t>& mine) {
  std::vector<held_span> spans(parts.size());
  if (user.kind() != storage_kind::regular || user.packing_order() != storage_order::col_major) return spans;
  const std::vector<grid_position> at = user.my_positions();
  if (at.size() != 1) return spans;
  const int line = rows ? at[0].row : at[0].col;
  const std::vector<std::int64_t>& splits = rows ? user.row_splits() : user.col_splits();
  const std::vector<int>& procs = rows ? user.row_proc() : user.col_proc();
  const std::vector<std::int64_t>& starts = rows ? user.local_row_start() : user.local_col_start();
  for (const std::size_t x : mine) {
    held_span best, run;
    bool open = false;  // `run` ends where the walk is
    for (const auto& [global, offset] : order.pieces(parts[x].first)) {
      const std::int64_t end = global.begin + global.size;
      for (std::int64_t g = global.begin, b = block_at(splits, g); g < end; ++b) {
        const auto bx = static_cast<std::size_t>(b);
        const std::int64_t next = std::min(splits[bx + 1], end), t = offset + (g - global.begin);
        if (procs[bx] == line) {
          const std::int64_t local = starts[bx] + (g - splits[bx]);
          if (open && run.begin + run.size == t && run.local + run.size == local)
            run.size += next - g;
          else
            run = {t, next - g, local};
          open = true;
          if (run.size > best.size) best = run;
        } else {
          open = false;
        }
        g = next;
      }
    }
    spans[x] = best;
  }
  return spans;
}

span_runs runs_of_spans(const std::vector<std::pair<range, int>>& parts, const dimension_order& order,
                        const std::vector<held_span>& spans, std::int64_t extent) {
  span_runs out;
  for (std::size_t x = 0; x < parts.size(); ++x) {
    if (spans[x].size == 0) continue;
    for (const auto& piece : order.pieces({parts[x].first.begin + spans[x].begin, spans[x].size}))
      out.inside.push_back(piece.first);
  }
  std::sort(out.inside.begin(), out.inside.end(), [](range a, range b) { return a.begin < b.begin; });
  std::vector<range> merged;
  for (const range r : out.inside) {
    if (!merged.empty() && merged.back().begin + merged.back().size == r.begin)
      merged.back().size += r.size;
    else
      merged.push_back(r);
  }
  out.inside = std::move(merged);
  std::int64_t from = 0;
  for (const range r : out.inside) {
    if (r.begin > from) out.outside.push_back({from, r.begin - from});
    from = r.begin + r.size;
  }
  if (extent > from) out.outside.push_back({from, extent - from});
  return out;
}

namespace {

// One dimension of a layout cut down to some runs: the new blocks, each a piece of one of the layout's blocks.
struct cut_dimension {
  std::vector<std::int64_t> splits{0};
  std::vector<int> procs;
  std::vector<std::int64_t> block, first;  // per new block: the layout's block and the global index it starts at
};

cut_dimension cut_along(const std::vector<std::int64_t>& splits, const std::vector<int>& procs,
                        const std::vector<range>& runs) {
  cut_dimension d;
  for (const range r : runs)
    for (std::int64_t g = r.begin, b = block_at(splits, g); g < r.begin + r.size; ++b) {
      const std::int64_t next = std::min(splits[static_cast<std::size_t>(b) + 1], r.begin + r.size);
      d.splits.push_back(d.splits.back() + next - g);
      d.procs.push_back(procs[static_cast<std::size_t>(b)]);
      d.block.push_back(b);
      d.first.push_back(g);
      g = next;
    }
  return d;
}

}  // namespace

grid_layout restricted(const grid_layout& x, const std::vector<range>& rows, const std::vector<range>& cols) {
  const cut_dimension r = cut_along(x.row_splits(), x.row_proc(), rows);
  const cut_dimension c = cut_along(x.col_splits(), x.col_proc(), cols);
  const std::vector<std::int64_t>&xr = x.row_splits(), &xc = x.col_splits();
  std::vector<local_block> blocks;
  // Where element (global row g, column h) of a block stored at (offset, ld, order) from its corner (r0, c0) is.
  const auto place = [](std::int64_t offset, std::int64_t ld, storage_order order, std::int64_t dr, std::int64_t dc) {
    return order == storage_order::col_major ? offset + dr + dc * ld : offset + dr * ld + dc;
  };
  const auto at = [](const std::vector<std::int64_t>& v, std::int64_t i) { return v[static_cast<std::size_t>(i)]; };
  if (x.kind() == storage_kind::regular) {
    for (const grid_position pos : x.my_positions())
      for (std::size_t i = 0; i + 1 < r.splits.size(); ++i) {
        if (r.procs[i] != pos.row) continue;
        const std::int64_t rb = r.block[i], lr = at(x.local_row_start(), rb) + (r.first[i] - at(xr, rb));
        for (std::size_t j = 0; j + 1 < c.splits.size(); ++j) {
          if (c.procs[j] != pos.col) continue;
          const std::int64_t cb = c.block[j], lc = at(x.local_col_start(), cb) + (c.first[j] - at(xc, cb));
          blocks.push_back({{static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)},
                            place(0, x.local_ld(), x.packing_order(), lr, lc),
                            x.local_ld(),
                            x.packing_order()});
        }
      }
  } else {
    // The new blocks cut from each of the layout's block rows and columns.
    std::vector<std::vector<std::size_t>> rows_of(static_cast<std::size_t>(x.block_rows())),
        cols_of(static_cast<std::size_t>(x.block_cols()));
    for (std::size_t i = 0; i + 1 < r.splits.size(); ++i) rows_of[static_cast<std::size_t>(r.block[i])].push_back(i);
    for (std::size_t j = 0; j + 1 < c.splits.size(); ++j) cols_of[static_cast<std::size_t>(c.block[j])].push_back(j);
    for (const local_block& b : x.local_blocks())
      for (const std::size_t i : rows_of[static_cast<std::size_t>(b.block.row)])
        for (const std::size_t j : cols_of[static_cast<std::size_t>(b.block.col)])
          blocks.push_back(
              {{static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)},
               place(b.offset, b.ld, b.order, r.first[i] - at(xr, b.block.row), c.first[j] - at(xc, b.block.col)),
               b.ld,
               b.order});
  }
  return grid_layout(r.splits, c.splits, r.procs, c.procs, x.proc_rows(), x.proc_cols(), x.grid_ranks(),
                     x.packing_order(), storage_kind::explicit_blocks, {}, {}, 1, std::move(blocks), x.my_rank());
}

}  // namespace redist::gemm_detail
