// SPDX-License-Identifier: BSD-3-Clause
#include "redist/layout/builders.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "redist/error.hpp"

namespace redist {

namespace {

// One dimension of a block-cyclic distribution: global extent n, first block `first`, then blocks of nb,
// dealt cyclically over nprocs starting at src.
struct cyclic_dim {
  std::int64_t n, first, nb;
  int src, nprocs;

  std::int64_t block_of(std::int64_t g) const { return g < first ? 0 : 1 + (g - first) / nb; }
  std::int64_t block_start(std::int64_t k) const { return k == 0 ? 0 : first + (k - 1) * nb; }
  int proc_of_block(std::int64_t k) const { return static_cast<int>((k + src) % nprocs); }
  // Local index (on its owner) of the first element of global block k.
  std::int64_t local_block_start(std::int64_t k) const {
    const std::int64_t t = k / nprocs;  // earlier blocks of the same owner
    const bool owner_has_first = proc_of_block(0) == proc_of_block(k);
    if (t == 0) return 0;
    return owner_has_first ? first + (t - 1) * nb : t * nb;
  }
};

void check_dim(const char* what, std::int64_t n, std::int64_t nb, std::int64_t first, int src, int nprocs) {
  if (n < 0) throw invalid_argument(std::string(what) + " extent must be >= 0, got " + std::to_string(n));
  if (nb < 1) throw invalid_argument(std::string(what) + " block size must be >= 1, got " + std::to_string(nb));
  if (first < 1)
    throw invalid_argument(std::string(what) + " first block size must be >= 1, got " + std::to_string(first));
  if (nprocs < 1)
    throw invalid_argument(std::string(what) + " process count must be >= 1, got " + std::to_string(nprocs));
  if (src < 0 || src >= nprocs)
    throw invalid_argument(std::string(what) + " source process " + std::to_string(src) + " outside [0, " +
                           std::to_string(nprocs) + ")");
}

// Splits, owner coordinates and local starts of the sub-range [s, s+len) of a block-cyclic dimension.
void sub_range(const cyclic_dim& d, std::int64_t s, std::int64_t len, std::vector<std::int64_t>& splits,
               std::vector<int>& proc, std::vector<std::int64_t>& local_start) {
  splits.assign(1, 0);
  proc.clear();
  local_start.clear();
  std::int64_t g = s;
  const std::int64_t end = s + len;
  while (g < end) {
    const std::int64_t k = d.block_of(g);
    const std::int64_t block_end = std::min(end, d.block_start(k + 1));
    proc.push_back(d.proc_of_block(k));
    local_start.push_back(d.local_block_start(k) + (g - d.block_start(k)));
    splits.push_back(block_end - s);
    g = block_end;
  }
}

// Blocks along one dimension of a blocked or custom layout, where each block is its own grid row (column):
// the grid's coordinates are ints, so at most 2^31 - 1 blocks (checked, not narrowed).
int blocks_along(const std::vector<std::int64_t>& splits, const char* dimension, const char* builder) {
  const std::int64_t blocks = static_cast<std::int64_t>(splits.size()) - 1;
  if (blocks > std::numeric_limits<int>::max())
    throw invalid_layout(std::string(builder) + " layout with " + std::to_string(blocks) + " blocks along its " +
                         dimension + "s; expected at most " + std::to_string(std::numeric_limits<int>::max()) +
                         " (merge neighbouring blocks of the same owner)");
  return static_cast<int>(blocks);
}

}  // namespace

std::int64_t block_cyclic_local_count(std::int64_t n, std::int64_t first, std::int64_t nb, int proc, int src,
                                      int nprocs) {
  if (n <= 0) return 0;
  const cyclic_dim d{n, std::min(first, n), nb, src, nprocs};
  const std::int64_t nblocks = d.block_of(n - 1) + 1;
  const std::int64_t k0 = ((proc - src) % nprocs + nprocs) % nprocs;  // first block of this proc
  if (k0 >= nblocks) return 0;
  const std::int64_t count = (nblocks - 1 - k0) / nprocs + 1;  // blocks held
  const std::int64_t last = k0 + (count - 1) * nprocs;
  const std::int64_t last_size = std::min(n, d.block_start(last + 1)) - d.block_start(last);
  return d.local_block_start(last) + last_size;
}

grid_layout block_cyclic(const block_cyclic_params& p, int my_rank) {
  const std::int64_t first_mb = p.first_mb != 0 ? p.first_mb : p.mb;
  const std::int64_t first_nb = p.first_nb != 0 ? p.first_nb : p.nb;
  check_dim("row", p.m, p.mb, first_mb, p.rsrc, p.proc_rows);
  check_dim("column", p.n, p.nb, first_nb, p.csrc, p.proc_cols);
  const std::int64_t sub_m = p.sub_m < 0 ? p.m - p.sub_row : p.sub_m;
  const std::int64_t sub_n = p.sub_n < 0 ? p.n - p.sub_col : p.sub_n;
  if (p.sub_row < 0 || sub_m < 0 || p.sub_row + sub_m > p.m)
    throw invalid_argument("sub-matrix rows [" + std::to_string(p.sub_row) + ", " + std::to_string(p.sub_row + sub_m) +
                           ") are not inside the " + std::to_string(p.m) + " rows of the matrix");
  if (p.sub_col < 0 || sub_n < 0 || p.sub_col + sub_n > p.n)
    throw invalid_argument("sub-matrix columns [" + std::to_string(p.sub_col) + ", " +
                           std::to_string(p.sub_col + sub_n) + ") are not inside the " + std::to_string(p.n) +
                           " columns of the matrix");

  const cyclic_dim rows{p.m, first_mb, p.mb, p.rsrc, p.proc_rows};
  const cyclic_dim cols{p.n, first_nb, p.nb, p.csrc, p.proc_cols};
  std::vector<std::int64_t> row_splits, col_splits, row_start, col_start;
  std::vector<int> row_proc, col_proc;
  sub_range(rows, p.sub_row, sub_m, row_splits, row_proc, row_start);
  sub_range(cols, p.sub_col, sub_n, col_splits, col_proc, col_start);

  const size_t positions = static_cast<size_t>(p.proc_rows) * static_cast<size_t>(p.proc_cols);
  std::vector<int> ranks(positions);
  if (!p.grid_ranks.empty()) {
    if (p.grid_ranks.size() != positions)
      throw invalid_argument("grid_ranks has " + std::to_string(p.grid_ranks.size()) + " entries, expected " +
                             std::to_string(positions) + " for a " + std::to_string(p.proc_rows) + "x" +
                             std::to_string(p.proc_cols) + " grid");
    ranks = p.grid_ranks;
  } else {
    for (int pr = 0; pr < p.proc_rows; ++pr)
      for (int pc = 0; pc < p.proc_cols; ++pc)
        ranks[static_cast<size_t>(pr) * p.proc_cols + pc] =
            p.ordering == grid_order::row_major ? pr * p.proc_cols + pc : pc * p.proc_rows + pr;
  }

  // Leading dimension: the full local array (not only the sub-matrix), as in ScaLAPACK.
  std::int64_t lld = p.lld;
  if (lld == 0) {
    lld = 1;
    for (size_t k = 0; k < positions; ++k)
      if (ranks[k] == my_rank) {
        const int pr = static_cast<int>(k) / p.proc_cols, pc = static_cast<int>(k) % p.proc_cols;
        const std::int64_t local = p.order == storage_order::col_major
                                       ? block_cyclic_local_count(p.m, first_mb, p.mb, pr, p.rsrc, p.proc_rows)
                                       : block_cyclic_local_count(p.n, first_nb, p.nb, pc, p.csrc, p.proc_cols);
        lld = std::max<std::int64_t>(1, local);
      }
  }
  return grid_layout(std::move(row_splits), std::move(col_splits), std::move(row_proc), std::move(col_proc),
                     p.proc_rows, p.proc_cols, std::move(ranks), p.order, storage_kind::regular, std::move(row_start),
                     std::move(col_start), lld, {}, my_rank);
}

grid_layout blocked(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, std::vector<int> ranks,
                    int my_rank, std::int64_t lld, storage_order order) {
  if (row_splits.empty() || col_splits.empty())
    throw invalid_layout("blocked layout needs non-empty row and column splits");
  const int nbr = blocks_along(row_splits, "row", "blocked");
  const int nbc = blocks_along(col_splits, "column", "blocked");
  std::vector<int> row_proc(static_cast<size_t>(nbr)), col_proc(static_cast<size_t>(nbc));
  for (int i = 0; i < nbr; ++i) row_proc[static_cast<size_t>(i)] = i;
  for (int j = 0; j < nbc; ++j) col_proc[static_cast<size_t>(j)] = j;
  if (ranks.size() != static_cast<size_t>(nbr) * static_cast<size_t>(nbc))
    throw invalid_layout("blocked layout with " + std::to_string(nbr) + "x" + std::to_string(nbc) + " blocks needs " +
                         std::to_string(static_cast<long long>(nbr) * nbc) + " owner ranks, got " +
                         std::to_string(ranks.size()));
  if (lld == 0) {
    lld = 1;
    for (size_t k = 0; k < ranks.size(); ++k)
      if (ranks[k] == my_rank) {
        const size_t i = k / static_cast<size_t>(nbc), j = k % static_cast<size_t>(nbc);
        lld = std::max<std::int64_t>(1, order == storage_order::col_major ? row_splits[i + 1] - row_splits[i]
                                                                          : col_splits[j + 1] - col_splits[j]);
      }
  }
  std::vector<std::int64_t> row_start(static_cast<size_t>(nbr), 0), col_start(static_cast<size_t>(nbc), 0);
  return grid_layout(std::move(row_splits), std::move(col_splits), std::move(row_proc), std::move(col_proc), nbr, nbc,
                     std::move(ranks), order, storage_kind::regular, std::move(row_start), std::move(col_start), lld,
                     {}, my_rank);
}

grid_layout custom(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits, std::vector<int> owners,
                   std::vector<local_block> my_blocks, int my_rank, storage_order packing_order) {
  if (row_splits.empty() || col_splits.empty())
    throw invalid_layout("custom layout needs non-empty row and column splits");
  const int nbr = blocks_along(row_splits, "row", "custom");
  const int nbc = blocks_along(col_splits, "column", "custom");
  if (owners.size() != static_cast<size_t>(nbr) * static_cast<size_t>(nbc))
    throw invalid_layout("custom layout with " + std::to_string(nbr) + "x" + std::to_string(nbc) + " blocks needs " +
                         std::to_string(static_cast<long long>(nbr) * nbc) + " owners, got " +
                         std::to_string(owners.size()));
  std::vector<int> row_proc(static_cast<size_t>(nbr)), col_proc(static_cast<size_t>(nbc));
  for (int i = 0; i < nbr; ++i) row_proc[static_cast<size_t>(i)] = i;
  for (int j = 0; j < nbc; ++j) col_proc[static_cast<size_t>(j)] = j;
  return grid_layout(std::move(row_splits), std::move(col_splits), std::move(row_proc), std::move(col_proc), nbr, nbc,
                     std::move(owners), packing_order, storage_kind::explicit_blocks, {}, {}, 1, std::move(my_blocks),
                     my_rank);
}

std::vector<std::int64_t> even_splits(std::int64_t n, int parts) {
  if (parts < 1) throw invalid_argument("even_splits needs at least one part, got " + std::to_string(parts));
  std::vector<std::int64_t> s(static_cast<size_t>(parts) + 1);
  for (int k = 0; k <= parts; ++k) s[static_cast<size_t>(k)] = n * k / parts;
  return s;
}

}  // namespace redist
