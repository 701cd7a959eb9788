// SPDX-License-Identifier: BSD-3-Clause
// Layout descriptions (grid_layout and its builders) against independent naive models.
//
// The block-cyclic model deals the elements of each dimension out one by one: a first block of
// `first` elements, then blocks of `nb`, going round the process coordinates from `src`; an element's
// local index is the number of elements its process received before it. That is ScaLAPACK's
// distribution (DTYPE 1, and DTYPE 2 with IMB/INB) written as a simulation rather than as formulas, so
// it shares no arithmetic with src/layout/builders.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist/layout/builders.hpp"
#include "redist/layout/grid_layout.hpp"
#include "test_seed.hpp"

namespace {

using redist::block_coord;
using redist::block_cyclic_params;
using redist::grid_layout;
using redist::grid_order;
using redist::grid_position;
using redist::local_block;
using redist::storage_kind;
using redist::storage_order;
using redist::testing::test_seed;
using index = std::int64_t;

// ---- naive models -----------------------------------------------------------------------------------

struct naive_dim {
  std::vector<int> owner;    // process coordinate of each global index
  std::vector<index> local;  // local index on that process
  std::vector<index> block;  // global block number of each index
  std::vector<index> count;  // elements held by each process coordinate (NUMROC)
};

naive_dim deal(index n, index first, index nb, int src, int nprocs) {
  naive_dim d;
  d.count.assign(static_cast<size_t>(nprocs), 0);
  index k = 0, used = 0, size = first;
  for (index g = 0; g < n; ++g) {
    if (used == size) {
      ++k;
      used = 0;
      size = nb;
    }
    const int p = static_cast<int>((src + k) % nprocs);
    d.owner.push_back(p);
    d.local.push_back(d.count[static_cast<size_t>(p)]++);
    d.block.push_back(k);
    ++used;
  }
  return d;
}

// Rank at a grid position under a block_cyclic_params description.
int naive_rank(const block_cyclic_params& p, int prow, int pcol) {
  if (!p.grid_ranks.empty()) return p.grid_ranks[static_cast<size_t>(prow * p.proc_cols + pcol)];
  return p.ordering == grid_order::row_major ? prow * p.proc_cols + pcol : pcol * p.proc_rows + prow;
}

// ---- queries on a grid_layout, written from the header's documentation ----------------------------

index block_of(const std::vector<index>& splits, index g) {
  return static_cast<index>(std::upper_bound(splits.begin(), splits.end(), g) - splits.begin()) - 1;
}

// Memory offset (from the local base pointer) of element (r, c), on its owner == layout's my_rank.
index local_offset(const grid_layout& l, index r, index c) {
  const index i = block_of(l.row_splits(), r), j = block_of(l.col_splits(), c);
  const index dr = r - l.row_splits()[static_cast<size_t>(i)], dc = c - l.col_splits()[static_cast<size_t>(j)];
  if (l.kind() == storage_kind::regular) {
    const index lr = l.local_row_start()[static_cast<size_t>(i)] + dr;
    const index lc = l.local_col_start()[static_cast<size_t>(j)] + dc;
    return l.packing_order() == storage_order::col_major ? lr + lc * l.local_ld() : lr * l.local_ld() + lc;
  }
  for (const local_block& b : l.local_blocks())
    if (b.block == block_coord{i, j})
      return b.order == storage_order::col_major ? b.offset + dr + dc * b.ld : b.offset + dr * b.ld + dc;
  ADD_FAILURE() << "element (" << r << "," << c << ") has no local block on rank " << l.my_rank();
  return -1;
}

int element_owner(const grid_layout& l, index r, index c) {
  return l.owner({block_of(l.row_splits(), r), block_of(l.col_splits(), c)});
}

// ---- block-cyclic against the model -----------------------------------------------------------------

std::string describe(const block_cyclic_params& p) {
  std::string s =
      "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " mb=" + std::to_string(p.mb) +
      " nb=" + std::to_string(p.nb) + " imb=" + std::to_string(p.first_mb) + " inb=" + std::to_string(p.first_nb) +
      " src=(" + std::to_string(p.rsrc) + "," + std::to_string(p.csrc) + ") grid=" + std::to_string(p.proc_rows) + "x" +
      std::to_string(p.proc_cols) + (p.ordering == grid_order::row_major ? " R" : " C") +
      (p.grid_ranks.empty() ? "" : " explicit-ranks") + " lld=" + std::to_string(p.lld) +
      (p.order == storage_order::col_major ? " col-major" : " row-major") + " sub=(" + std::to_string(p.sub_row) + "," +
      std::to_string(p.sub_col) + ") " + std::to_string(p.sub_m) + "x" + std::to_string(p.sub_n);
  return s;
}

// Checks every element of the described (sub-)matrix on every rank.
void check_block_cyclic(const block_cyclic_params& p) {
  SCOPED_TRACE(describe(p));
  const index first_mb = p.first_mb > 0 ? p.first_mb : p.mb;
  const index first_nb = p.first_nb > 0 ? p.first_nb : p.nb;
  const naive_dim rows = deal(p.m, first_mb, p.mb, p.rsrc, p.proc_rows);
  const naive_dim cols = deal(p.n, first_nb, p.nb, p.csrc, p.proc_cols);
  const index sub_m = p.sub_m < 0 ? p.m - p.sub_row : p.sub_m;
  const index sub_n = p.sub_n < 0 ? p.n - p.sub_col : p.sub_n;
  const int nranks = p.proc_rows * p.proc_cols;

  // NUMROC generalised, against the model's counts.
  for (int pr = 0; pr < p.proc_rows; ++pr)
    ASSERT_EQ(redist::block_cyclic_local_count(p.m, first_mb, p.mb, pr, p.rsrc, p.proc_rows),
              rows.count[static_cast<size_t>(pr)])
        << "rows of process row " << pr;
  for (int pc = 0; pc < p.proc_cols; ++pc)
    ASSERT_EQ(redist::block_cyclic_local_count(p.n, first_nb, p.nb, pc, p.csrc, p.proc_cols),
              cols.count[static_cast<size_t>(pc)])
        << "columns of process column " << pc;

  for (int rank = -1; rank < nranks; ++rank) {
    SCOPED_TRACE("my_rank " + std::to_string(rank));
    const grid_layout l = redist::block_cyclic(p, rank);
    ASSERT_NO_THROW(l.validate_global(nranks));
    ASSERT_NO_THROW(l.validate_local());
    ASSERT_EQ(l.rows(), sub_m);
    ASSERT_EQ(l.cols(), sub_n);
    ASSERT_EQ(l.proc_rows(), p.proc_rows);
    ASSERT_EQ(l.proc_cols(), p.proc_cols);
    ASSERT_EQ(l.kind(), storage_kind::regular);
    ASSERT_EQ(l.packing_order(), p.order);
    ASSERT_EQ(l.my_rank(), rank);
    for (int pr = 0; pr < p.proc_rows; ++pr)
      for (int pc = 0; pc < p.proc_cols; ++pc) ASSERT_EQ(l.grid_rank({pr, pc}), naive_rank(p, pr, pc));

    // One layout block per ScaLAPACK block that meets the sub-matrix: no needless splitting.
    if (sub_m > 0 && sub_n > 0) {
      const auto& rb = rows.block;
      const auto& cb = cols.block;
      ASSERT_EQ(l.block_rows(),
                rb[static_cast<size_t>(p.sub_row + sub_m - 1)] - rb[static_cast<size_t>(p.sub_row)] + 1);
      ASSERT_EQ(l.block_cols(),
                cb[static_cast<size_t>(p.sub_col + sub_n - 1)] - cb[static_cast<size_t>(p.sub_col)] + 1);
    }

    // Where this rank sits, and its leading dimension: the full local array, as in ScaLAPACK.
    int my_prow = -1, my_pcol = -1;
    for (int pr = 0; pr < p.proc_rows; ++pr)
      for (int pc = 0; pc < p.proc_cols; ++pc)
        if (naive_rank(p, pr, pc) == rank) my_prow = pr, my_pcol = pc;
    const auto positions = l.my_positions();
    if (my_prow >= 0) {
      ASSERT_EQ(positions.size(), 1u);
      EXPECT_EQ(positions[0].row, my_prow);
      EXPECT_EQ(positions[0].col, my_pcol);
      const index minimal =
          std::max<index>(1, p.order == storage_order::col_major ? rows.count[static_cast<size_t>(my_prow)]
                                                                 : cols.count[static_cast<size_t>(my_pcol)]);
      EXPECT_EQ(l.local_ld(), p.lld > 0 ? p.lld : minimal);
    } else {
      EXPECT_TRUE(positions.empty());
    }

    index max_offset = -1;
    for (index r = 0; r < sub_m; ++r)
      for (index c = 0; c < sub_n; ++c) {
        const size_t gr = static_cast<size_t>(p.sub_row + r), gc = static_cast<size_t>(p.sub_col + c);
        const index i = block_of(l.row_splits(), r), j = block_of(l.col_splits(), c);
        ASSERT_EQ(l.row_proc()[static_cast<size_t>(i)], rows.owner[gr]) << "row " << r;
        ASSERT_EQ(l.col_proc()[static_cast<size_t>(j)], cols.owner[gc]) << "column " << c;
        ASSERT_EQ(l.owner({i, j}), naive_rank(p, rows.owner[gr], cols.owner[gc])) << "element " << r << "," << c;
        ASSERT_EQ(l.local_row_start()[static_cast<size_t>(i)] + r - l.row_splits()[static_cast<size_t>(i)],
                  rows.local[gr])
            << "local row of row " << r;
        ASSERT_EQ(l.local_col_start()[static_cast<size_t>(j)] + c - l.col_splits()[static_cast<size_t>(j)],
                  cols.local[gc])
            << "local column of column " << c;
        if (l.owner({i, j}) == rank) {
          const index ld = l.local_ld();
          const index expected = p.order == storage_order::col_major ? rows.local[gr] + cols.local[gc] * ld
                                                                     : rows.local[gr] * ld + cols.local[gc];
          ASSERT_EQ(local_offset(l, r, c), expected);
          max_offset = std::max(max_offset, expected);
        }
      }
    EXPECT_EQ(l.local_elements(), max_offset + 1);
  }
}

TEST(BlockCyclic, HandComputedScalapackExample) {
  // 10 rows, blocks of 3 over 2 process rows starting at process row 1:
  // rows 0-2 -> p1 (local 0-2), 3-5 -> p0 (0-2), 6-8 -> p1 (3-5), 9 -> p0 (3).
  block_cyclic_params p;
  p.m = 10;
  p.n = 1;
  p.mb = 3;
  p.rsrc = 1;
  p.proc_rows = 2;
  const grid_layout l = redist::block_cyclic(p, 0);
  EXPECT_EQ(l.row_splits(), (std::vector<index>{0, 3, 6, 9, 10}));
  EXPECT_EQ(l.row_proc(), (std::vector<int>{1, 0, 1, 0}));
  EXPECT_EQ(l.local_row_start(), (std::vector<index>{0, 0, 3, 3}));
  EXPECT_EQ(l.local_ld(), 4);
  EXPECT_EQ(redist::block_cyclic_local_count(10, 3, 3, 0, 1, 2), 4);
  EXPECT_EQ(redist::block_cyclic_local_count(10, 3, 3, 1, 1, 2), 6);
  // DTYPE 2: a first block of 2, then 3: rows 0-1 -> p0, 2-4 -> p1, 5-7 -> p0, 8-9 -> p1.
  p.first_mb = 2;
  p.rsrc = 0;
  const grid_layout d2 = redist::block_cyclic(p, 1);
  EXPECT_EQ(d2.row_splits(), (std::vector<index>{0, 2, 5, 8, 10}));
  EXPECT_EQ(d2.row_proc(), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(d2.local_row_start(), (std::vector<index>{0, 0, 2, 3}));
  EXPECT_EQ(d2.local_ld(), 5);
}

TEST(BlockCyclic, GridOrderings) {
  block_cyclic_params p;
  p.m = 4;
  p.n = 6;
  p.mb = 2;
  p.nb = 2;
  p.proc_rows = 2;
  p.proc_cols = 3;
  p.ordering = grid_order::row_major;
  EXPECT_EQ(redist::block_cyclic(p, 0).grid_ranks(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  p.ordering = grid_order::col_major;
  EXPECT_EQ(redist::block_cyclic(p, 0).grid_ranks(), (std::vector<int>{0, 2, 4, 1, 3, 5}));
  p.grid_ranks = {5, 3, 1, 4, 2, 0};  // overrides the ordering
  EXPECT_EQ(redist::block_cyclic(p, 0).grid_ranks(), p.grid_ranks);
  EXPECT_EQ(redist::block_cyclic(p, 0).ranks_needed(), 6);
}

TEST(BlockCyclic, FixedCasesMatchModel) {
  std::vector<block_cyclic_params> cases;
  auto base = [] {
    block_cyclic_params p;
    p.m = 13;
    p.n = 11;
    p.mb = 3;
    p.nb = 2;
    p.proc_rows = 2;
    p.proc_cols = 3;
    return p;
  };
  cases.push_back(base());
  {
    auto p = base();  // DTYPE 2 first blocks and non-zero sources
    p.first_mb = 1;
    p.first_nb = 4;
    p.rsrc = 1;
    p.csrc = 2;
    cases.push_back(p);
  }
  {
    auto p = base();  // column-major grid numbering, row-major storage with padding
    p.ordering = grid_order::col_major;
    p.order = storage_order::row_major;
    p.lld = 20;
    cases.push_back(p);
  }
  {
    auto p = base();  // explicit ranks and a sub-matrix starting mid-block
    p.grid_ranks = {4, 0, 2, 5, 1, 3};
    p.sub_row = 4;
    p.sub_col = 3;
    p.sub_m = 7;
    p.sub_n = 5;
    p.first_mb = 5;
    cases.push_back(p);
  }
  {
    auto p = base();  // first blocks larger than the matrix
    p.first_mb = 50;
    p.first_nb = 40;
    cases.push_back(p);
  }
  {
    auto p = base();  // empty matrix and empty sub-matrices
    p.m = 0;
    cases.push_back(p);
    p = base();
    p.sub_row = 5;
    p.sub_m = 0;
    cases.push_back(p);
    p = base();
    p.sub_col = 11;
    cases.push_back(p);
  }
  {
    auto p = base();  // more processes than blocks: some ranks hold nothing
    p.m = 2;
    p.n = 3;
    p.proc_rows = 3;
    p.proc_cols = 2;
    p.mb = 1;
    p.nb = 5;
    cases.push_back(p);
  }
  for (const auto& p : cases) check_block_cyclic(p);
}

TEST(BlockCyclic, RandomCasesMatchModel) {
  std::mt19937 gen(test_seed(2024));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  for (int trial = 0; trial < 400; ++trial) {
    block_cyclic_params p;
    p.m = pick(0, 40);
    p.n = pick(0, 40);
    p.mb = pick(1, 7);
    p.nb = pick(1, 7);
    p.first_mb = pick(0, 3) == 0 ? pick(1, 9) : 0;
    p.first_nb = pick(0, 3) == 0 ? pick(1, 9) : 0;
    p.proc_rows = pick(1, 3);
    p.proc_cols = pick(1, 3);
    p.rsrc = pick(0, p.proc_rows - 1);
    p.csrc = pick(0, p.proc_cols - 1);
    p.ordering = pick(0, 1) ? grid_order::row_major : grid_order::col_major;
    if (pick(0, 4) == 0) {
      p.grid_ranks.resize(static_cast<size_t>(p.proc_rows * p.proc_cols));
      std::iota(p.grid_ranks.begin(), p.grid_ranks.end(), 0);
      std::shuffle(p.grid_ranks.begin(), p.grid_ranks.end(), gen);
    }
    p.order = pick(0, 1) ? storage_order::col_major : storage_order::row_major;
    if (pick(0, 3) == 0) p.lld = 45 + pick(0, 5);
    if (pick(0, 1)) {
      p.sub_row = pick(0, static_cast<int>(p.m));
      p.sub_col = pick(0, static_cast<int>(p.n));
      p.sub_m = pick(0, 2) == 0 ? -1 : pick(0, static_cast<int>(p.m - p.sub_row));
      p.sub_n = pick(0, 2) == 0 ? -1 : pick(0, static_cast<int>(p.n - p.sub_col));
    }
    check_block_cyclic(p);
    if (HasFailure()) return;
  }
}

TEST(BlockCyclic, LocalCountMatchesModel) {
  for (index n : {0, 1, 2, 5, 17, 64, 100})
    for (index nb : {1, 2, 3, 8, 200})
      for (index first : {index{1}, index{2}, nb, index{7}, index{150}})
        for (int nprocs : {1, 2, 3, 5})
          for (int src = 0; src < nprocs; ++src) {
            const naive_dim d = deal(n, first, nb, src, nprocs);
            for (int proc = 0; proc < nprocs; ++proc)
              ASSERT_EQ(redist::block_cyclic_local_count(n, first, nb, proc, src, nprocs),
                        d.count[static_cast<size_t>(proc)])
                  << "n=" << n << " first=" << first << " nb=" << nb << " proc=" << proc << " src=" << src
                  << " nprocs=" << nprocs;
          }
}

TEST(BlockCyclic, InvalidParametersThrow) {
  auto expect_bad = [](const std::function<void(block_cyclic_params&)>& change, const std::string& fragment) {
    block_cyclic_params p;
    p.m = 10;
    p.n = 10;
    p.mb = 2;
    p.nb = 2;
    p.proc_rows = 2;
    p.proc_cols = 2;
    change(p);
    try {
      redist::block_cyclic(p, 0);
      ADD_FAILURE() << "expected redist::invalid_argument mentioning '" << fragment << "'";
    } catch (const redist::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_bad([](auto& p) { p.m = -1; }, "extent");
  expect_bad([](auto& p) { p.mb = 0; }, "block size");
  expect_bad([](auto& p) { p.proc_cols = 0; }, "process count");
  expect_bad([](auto& p) { p.rsrc = 2; }, "source process");
  expect_bad([](auto& p) { p.sub_row = 8, p.sub_m = 3; }, "not inside");
  expect_bad([](auto& p) { p.sub_col = 11; }, "not inside");
  expect_bad([](auto& p) { p.grid_ranks = {0, 1, 2}; }, "grid_ranks has 3 entries");
}

// ---- blocked and custom ------------------------------------------------------------------------

TEST(Blocked, OwnersStorageAndLocalElements) {
  const std::vector<index> rs{0, 3, 10}, cs{0, 4, 5, 9};
  const std::vector<int> ranks{5, 4, 3, 2, 1, 0};  // block (i, j) -> ranks[i*3 + j]
  for (storage_order order : {storage_order::col_major, storage_order::row_major})
    for (int rank = 0; rank < 6; ++rank) {
      const grid_layout l = redist::blocked(rs, cs, ranks, rank, 0, order);
      ASSERT_NO_THROW(l.validate_global(6));
      ASSERT_NO_THROW(l.validate_local());
      const index i = (5 - rank) / 3, j = (5 - rank) % 3;
      const index h = rs[static_cast<size_t>(i) + 1] - rs[static_cast<size_t>(i)];
      const index w = cs[static_cast<size_t>(j) + 1] - cs[static_cast<size_t>(j)];
      for (index bi = 0; bi < 2; ++bi)
        for (index bj = 0; bj < 3; ++bj) EXPECT_EQ(l.owner({bi, bj}), ranks[static_cast<size_t>(bi * 3 + bj)]);
      EXPECT_EQ(l.local_ld(), order == storage_order::col_major ? h : w);
      EXPECT_EQ(l.local_elements(), h * w);
      // The rank's block starts at offset 0 of its array.
      EXPECT_EQ(local_offset(l, rs[static_cast<size_t>(i)], cs[static_cast<size_t>(j)]), 0);
      EXPECT_EQ(local_offset(l, rs[static_cast<size_t>(i)] + h - 1, cs[static_cast<size_t>(j)] + w - 1), h * w - 1);
    }
  // An explicit leading dimension is kept.
  EXPECT_EQ(redist::blocked(rs, cs, ranks, 0, 50).local_ld(), 50);
  // A rank without a block holds nothing.
  EXPECT_EQ(redist::blocked(rs, cs, ranks, 7).local_elements(), 0);
}

TEST(Custom, LocalElementsAndOffsets) {
  // 2x2 blocks of a 5x7 matrix; rank 1 owns (0,1) and (1,0), stored in different orders.
  const std::vector<index> rs{0, 2, 5}, cs{0, 3, 7};
  const std::vector<int> owners{0, 1, 1, 0};
  std::vector<local_block> mine;
  mine.push_back({{0, 1}, 100, 2, storage_order::col_major});  // 2x4: ends at 100 + 3*2 + 2 = 108
  mine.push_back({{1, 0}, 10, 5, storage_order::row_major});   // 3x3: ends at 10 + 2*5 + 3 = 23
  const grid_layout l = redist::custom(rs, cs, owners, mine, 1);
  ASSERT_NO_THROW(l.validate_global(2));
  ASSERT_NO_THROW(l.validate_local());
  EXPECT_EQ(l.kind(), storage_kind::explicit_blocks);
  EXPECT_EQ(l.local_elements(), 108);
  EXPECT_EQ(local_offset(l, 1, 4), 100 + 1 + 1 * 2);
  EXPECT_EQ(local_offset(l, 4, 2), 10 + 2 * 5 + 2);
  EXPECT_EQ(element_owner(l, 4, 6), 0);
  EXPECT_EQ(l.ranks_needed(), 2);
  EXPECT_EQ(redist::custom(rs, cs, owners, {}, 5).local_elements(), 0);
}

// ---- validation messages -----------------------------------------------------------------------

void expect_invalid_layout(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected redist::invalid_layout mentioning '" << fragment << "'";
  } catch (const redist::invalid_layout& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << fragment << "'";
  }
}

TEST(Validation, GlobalDescriptionErrors) {
  const std::vector<int> owners4{0, 1, 1, 0};
  expect_invalid_layout(
      [&] {
        redist::custom({1, 4}, {0, 2}, {0}, {}, -1).validate_global(2);
      },
      "axis 0 (rows): splits must start at 0");
  expect_invalid_layout(
      [&] {
        redist::custom({0, 4}, {0, 2, 2}, {0, 1}, {}, -1).validate_global(2);
      },
      "axis 1 (columns): splits must increase");
  expect_invalid_layout(
      [&] {
        redist::custom({0, 4, 3}, {0, 2}, {0, 1}, {}, -1).validate_global(2);
      },
      "axis 0 (rows): splits must increase");
  expect_invalid_layout(
      [&] {
        redist::custom({0, 2, 4}, {0, 2, 4}, {0, 1, 2, 0}, {}, -1).validate_global(2);
      },
      "owner rank 2");
  expect_invalid_layout(
      [&] {
        redist::custom({0, 2, 4}, {0, 2, 4}, {0, -1, 1, 0}, {}, -1).validate_global(2);
      },
      "outside the communicator of 2 ranks");
  // Regular storage keeps one local array per rank: a rank may hold only one grid position.
  block_cyclic_params p;
  p.m = p.n = 8;
  p.mb = p.nb = 2;
  p.proc_rows = 2;
  p.proc_cols = 2;
  p.grid_ranks = {0, 1, 2, 1};
  expect_invalid_layout([&] { redist::block_cyclic(p, 0).validate_global(3); }, "rank 1 holds two positions");
  expect_invalid_layout(
      [&] {
        redist::blocked({0, 2, 4}, {0, 4}, {0, 0}, 0).validate_global(1);
      },
      "rank 0 holds two positions");
  // Shape errors are caught at construction.
  expect_invalid_layout([&] { redist::custom({0, 2, 4}, {0, 2}, {0, 1, 1}, {}, -1); }, "needs 2 owners, got 3");
  expect_invalid_layout([&] { redist::blocked({0, 2}, {0, 2, 4}, {0}, 0); }, "needs 2 owner ranks, got 1");
  expect_invalid_layout(
      [&] {
        grid_layout({0, 2}, {0, 2}, {0, 0}, {0}, 1, 1, {0}, storage_order::col_major, storage_kind::explicit_blocks, {},
                    {}, 1, {}, -1);
      },
      "row_proc has 2 entries");
  expect_invalid_layout(
      [&] {
        grid_layout({0, 2}, {0, 2}, {1}, {0}, 1, 1, {0}, storage_order::col_major, storage_kind::explicit_blocks, {},
                    {}, 1, {}, -1);
      },
      "outside the process grid");
  expect_invalid_layout(
      [&] {
        grid_layout({0, 2}, {0, 2}, {0}, {0}, 1, 2, {0}, storage_order::col_major, storage_kind::explicit_blocks, {},
                    {}, 1, {}, -1);
      },
      "needs 2 ranks, got 1");
}

TEST(Validation, LocalStorageErrors) {
  // 2x2 blocks of 4x6; rank 0 owns (0,0) and (1,1).
  const std::vector<index> rs{0, 1, 4}, cs{0, 2, 6};
  const std::vector<int> owners{0, 1, 1, 0};
  const local_block b00{{0, 0}, 0, 1, storage_order::col_major};
  const local_block b11{{1, 1}, 10, 3, storage_order::col_major};
  auto make = [&](std::vector<local_block> blocks) { return redist::custom(rs, cs, owners, std::move(blocks), 0); };
  EXPECT_NO_THROW(make({b00, b11}).validate_local());
  expect_invalid_layout([&] { make({b00}).validate_local(); }, "owns block (1,1) but does not list it");
  expect_invalid_layout([&] { make({b00, b11, b00}).validate_local(); }, "(0,0) is listed twice");
  expect_invalid_layout(
      [&] {
        make({b00, b11, {{0, 1}, 40, 1, storage_order::col_major}}).validate_local();
      },
      "owned by rank 1");
  expect_invalid_layout(
      [&] {
        make({b00, {{1, 1}, 10, 2, storage_order::col_major}}).validate_local();
      },
      "stride 2 of axis 1 (columns) is smaller than the 3 elements axis 0 (rows)");
  expect_invalid_layout(
      [&] {
        make({b00, {{1, 1}, 10, 3, storage_order::row_major}}).validate_local();
      },
      "stride 3 of axis 0 (rows) is smaller than the 4 elements axis 1 (columns)");
  expect_invalid_layout(
      [&] {
        make({b00, b11, {{2, 0}, 50, 3, storage_order::col_major}}).validate_local();
      },
      "coordinate 0 is outside the 2 blocks of axis 0 (rows)");
  expect_invalid_layout(
      [&] {
        make({{{0, 0}, -4, 1, storage_order::col_major}, b11}).validate_local();
      },
      "negative offset");
  // Two blocks sharing memory (b00 spans elements [0, 2); b11 would start at 1).
  expect_invalid_layout(
      [&] {
        make({b00, {{1, 1}, 1, 3, storage_order::col_major}}).validate_local();
      },
      "local blocks (0,0) and (1,1) on rank 0 overlap in memory");
  // Regular storage: a leading dimension below the local rows.
  block_cyclic_params p;
  p.m = 10;
  p.n = 4;
  p.mb = 2;
  p.nb = 2;
  p.proc_rows = 2;
  p.lld = 4;  // each process row holds 6 or 4 rows; rank 0 holds 6
  expect_invalid_layout([&] { redist::block_cyclic(p, 0).validate_local(); },
                        "local leading dimension 4 on rank 0 is smaller than the 6 local rows");
  EXPECT_NO_THROW(redist::block_cyclic(p, 1).validate_local());
}

// ---- derived layouts -----------------------------------------------------------------------------

// Same memory, rows and columns swapped: every element (r, c) on its owner sits where (c, r) of the
// transposed layout does.
void check_transposed(const grid_layout& l, int comm_size) {
  const grid_layout t = l.transposed();
  ASSERT_NO_THROW(t.validate_global(comm_size));
  ASSERT_NO_THROW(t.validate_local());
  EXPECT_EQ(t.rows(), l.cols());
  EXPECT_EQ(t.cols(), l.rows());
  EXPECT_EQ(t.row_splits(), l.col_splits());
  EXPECT_EQ(t.col_splits(), l.row_splits());
  EXPECT_EQ(t.proc_rows(), l.proc_cols());
  EXPECT_EQ(t.proc_cols(), l.proc_rows());
  EXPECT_NE(t.packing_order(), l.packing_order());
  EXPECT_EQ(t.kind(), l.kind());
  EXPECT_EQ(t.my_rank(), l.my_rank());
  EXPECT_EQ(t.local_elements(), l.local_elements());
  EXPECT_TRUE(t.transposed() == l);
  EXPECT_EQ(t.transposed().global_hash(), l.global_hash());
  for (index i = 0; i < l.block_rows(); ++i)
    for (index j = 0; j < l.block_cols(); ++j) ASSERT_EQ(t.owner({j, i}), l.owner({i, j}));
  for (index r = 0; r < l.rows(); ++r)
    for (index c = 0; c < l.cols(); ++c)
      if (element_owner(l, r, c) == l.my_rank()) {
        ASSERT_EQ(local_offset(t, c, r), local_offset(l, r, c)) << "element (" << r << "," << c << ")";
      }
}

TEST(Derived, TransposedKeepsMemoryAndOwners) {
  block_cyclic_params p;
  p.m = 13;
  p.n = 9;
  p.mb = 3;
  p.nb = 2;
  p.first_mb = 2;
  p.rsrc = 1;
  p.proc_rows = 2;
  p.proc_cols = 3;
  p.sub_row = 1;
  p.sub_col = 2;
  for (storage_order order : {storage_order::col_major, storage_order::row_major})
    for (int rank = 0; rank < 6; ++rank) {
      p.order = order;
      check_transposed(redist::block_cyclic(p, rank), 6);
    }
  std::vector<local_block> mine{{{0, 1}, 100, 2, storage_order::col_major}, {{1, 0}, 10, 5, storage_order::row_major}};
  check_transposed(redist::custom({0, 2, 5}, {0, 3, 7}, {0, 1, 1, 0}, mine, 1), 2);
  check_transposed(redist::blocked({0, 3, 10}, {0, 4, 5, 9}, {5, 4, 3, 2, 1, 0}, 2), 6);
}

TEST(Derived, RelabeledMovesOwnersAndRebuildsStorage) {
  block_cyclic_params p;
  p.m = 11;
  p.n = 10;
  p.mb = 2;
  p.nb = 3;
  p.proc_rows = 2;
  p.proc_cols = 2;
  const std::vector<int> new_rank_of{2, 0, 3, 1};
  for (storage_order order : {storage_order::col_major, storage_order::row_major})
    for (int rank = 0; rank < 4; ++rank) {
      p.order = order;
      p.grid_ranks.clear();
      p.lld = 40;  // the relabeled layout uses the minimal leading dimension instead
      const grid_layout l = redist::block_cyclic(p, rank);
      const grid_layout r = l.relabeled(new_rank_of);
      ASSERT_NO_THROW(r.validate_global(4));
      ASSERT_NO_THROW(r.validate_local());
      EXPECT_EQ(r.my_rank(), rank);
      EXPECT_EQ(r.row_splits(), l.row_splits());
      EXPECT_EQ(r.col_splits(), l.col_splits());
      EXPECT_EQ(r.local_row_start(), l.local_row_start());
      EXPECT_EQ(r.local_col_start(), l.local_col_start());
      for (index i = 0; i < l.block_rows(); ++i)
        for (index j = 0; j < l.block_cols(); ++j)
          ASSERT_EQ(r.owner({i, j}), new_rank_of[static_cast<size_t>(l.owner({i, j}))]);
      // The same as describing the relabeled grid directly with minimal storage.
      p.grid_ranks = r.grid_ranks();
      p.lld = 0;
      const grid_layout direct = redist::block_cyclic(p, rank);
      EXPECT_TRUE(r == direct);
      EXPECT_EQ(r.local_ld(), direct.local_ld());
      EXPECT_EQ(r.local_elements(), direct.local_elements());
    }

  // Explicit storage: this rank's new blocks, one after another, each with a minimal leading dimension.
  const std::vector<index> rs{0, 2, 5}, cs{0, 3, 7};
  const grid_layout c = redist::custom(
      rs, cs, {0, 1, 1, 0}, {{{0, 0}, 0, 2, storage_order::col_major}, {{1, 1}, 6, 3, storage_order::col_major}}, 0,
      storage_order::row_major);
  const grid_layout swapped = c.relabeled({1, 0});  // rank 0 now owns (0,1) and (1,0)
  ASSERT_NO_THROW(swapped.validate_global(2));
  ASSERT_NO_THROW(swapped.validate_local());
  ASSERT_EQ(swapped.local_blocks().size(), 2u);
  std::set<index> offsets;
  index total = 0;
  for (const local_block& b : swapped.local_blocks()) {
    EXPECT_EQ(swapped.owner(b.block), 0);
    EXPECT_EQ(b.order, storage_order::row_major);
    const index h = rs[static_cast<size_t>(b.block.row) + 1] - rs[static_cast<size_t>(b.block.row)];
    const index w = cs[static_cast<size_t>(b.block.col) + 1] - cs[static_cast<size_t>(b.block.col)];
    EXPECT_EQ(b.ld, w);
    offsets.insert(b.offset);
    total += h * w;
  }
  EXPECT_EQ(offsets, (std::set<index>{0, 2 * 4}));  // (0,1) is 2x4, then (1,0)
  EXPECT_EQ(swapped.local_elements(), total);

  try {
    (void)c.relabeled({0});
    ADD_FAILURE() << "a relabeling shorter than the ranks in use must throw";
  } catch (const redist::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("relabeling has 1 entries but the layout uses rank 1"), std::string::npos)
        << e.what();
  }
}

// ---- global hash -----------------------------------------------------------------------------------

TEST(GlobalHash, EqualForEqualDescriptionsDifferentOtherwise) {
  block_cyclic_params p;
  p.m = 20;
  p.n = 17;
  p.mb = 3;
  p.nb = 4;
  p.proc_rows = 2;
  p.proc_cols = 3;
  const std::uint64_t h = redist::block_cyclic(p, 0).global_hash();
  // Local storage is not part of the global description.
  for (int rank = -1; rank < 6; ++rank) EXPECT_EQ(redist::block_cyclic(p, rank).global_hash(), h);
  {
    auto q = p;
    q.lld = 99;
    EXPECT_EQ(redist::block_cyclic(q, 1).global_hash(), h);
  }
  EXPECT_TRUE(redist::block_cyclic(p, 0) == redist::block_cyclic(p, 3));

  std::vector<std::pair<std::string, std::function<void(block_cyclic_params&)>>> changes = {
      {"m", [](auto& q) { q.m = 21; }},
      {"n", [](auto& q) { q.n = 16; }},
      {"mb", [](auto& q) { q.mb = 2; }},
      {"nb", [](auto& q) { q.nb = 5; }},
      {"first_mb", [](auto& q) { q.first_mb = 1; }},
      {"first_nb", [](auto& q) { q.first_nb = 2; }},
      {"rsrc", [](auto& q) { q.rsrc = 1; }},
      {"csrc", [](auto& q) { q.csrc = 2; }},
      {"grid shape", [](auto& q) { q.proc_rows = 3, q.proc_cols = 2; }},
      {"grid ordering", [](auto& q) { q.ordering = grid_order::col_major; }},
      {"explicit ranks", [](auto& q) { q.grid_ranks = {0, 1, 2, 3, 5, 4}; }},
      {"storage order", [](auto& q) { q.order = storage_order::row_major; }},
      {"sub-matrix start", [](auto& q) { q.sub_row = 1, q.sub_m = 19; }},
      {"sub-matrix columns", [](auto& q) { q.sub_col = 1; }},
  };
  std::set<std::uint64_t> seen{h};
  for (const auto& [what, change] : changes) {
    auto q = p;
    change(q);
    const grid_layout l = redist::block_cyclic(q, 0);
    EXPECT_NE(l.global_hash(), h) << "changing " << what;
    EXPECT_TRUE(l != redist::block_cyclic(p, 0)) << "changing " << what;
    seen.insert(l.global_hash());
  }
  EXPECT_EQ(seen.size(), changes.size() + 1) << "two different descriptions share a hash";

  // Custom layouts: owners and splits count.
  const grid_layout a = redist::custom({0, 2, 5}, {0, 3}, {0, 1}, {}, -1);
  EXPECT_EQ(a.global_hash(), redist::custom({0, 2, 5}, {0, 3}, {0, 1}, {}, -1).global_hash());
  EXPECT_NE(a.global_hash(), redist::custom({0, 2, 5}, {0, 3}, {1, 0}, {}, -1).global_hash());
  EXPECT_NE(a.global_hash(), redist::custom({0, 3, 5}, {0, 3}, {0, 1}, {}, -1).global_hash());
  EXPECT_NE(a.global_hash(), a.transposed().global_hash());
}

TEST(Helpers, EvenSplitsAndDescribe) {
  EXPECT_EQ(redist::even_splits(10, 3), (std::vector<index>{0, 3, 6, 10}));
  EXPECT_EQ(redist::even_splits(2, 4), (std::vector<index>{0, 0, 1, 1, 2}));
  EXPECT_THROW(redist::even_splits(5, 0), redist::invalid_argument);
  block_cyclic_params p;
  p.m = 100;
  p.n = 80;
  p.mb = 25;
  p.nb = 40;
  p.proc_rows = 2;
  p.proc_cols = 2;
  const std::string d = redist::block_cyclic(p, 0).describe();
  EXPECT_NE(d.find("100x80"), std::string::npos) << d;
  EXPECT_NE(d.find("2x2"), std::string::npos) << d;
}

}  // namespace
