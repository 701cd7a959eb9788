// SPDX-License-Identifier: BSD-3-Clause
// N-d layouts (nd_layout, nd_builders) against brute force: every global index of small random arrays is looked
// up by hand (the block by searching the splits, the owner from independent models of block-cyclic and boxes),
// and each rank's storage must give its elements distinct offsets below local_elements() (exactly that many when
// the storage is dense).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nd_reference.hpp"
#include "redist/error.hpp"
#include "redist/layout/builders.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/layout/nd_layout.hpp"
#include "test_seed.hpp"

namespace {

using redist::box;
using redist::nd_layout;
using redist::nd_local_block;
using redist::storage_kind;
using redist::testing::block_of;
using redist::testing::offset_of;
using redist::testing::test_seed;
using i64 = std::int64_t;
using index = std::vector<i64>;

std::string str(const std::vector<i64>& v) {
  std::string s;
  for (i64 x : v) s += std::to_string(x) + " ";
  return s;
}
std::string str(const std::vector<int>& v) { return str(std::vector<i64>(v.begin(), v.end())); }

// Calls f(g) for every index of the shape (C order).
template <class F>
void for_each_index(const index& shape, F f) {
  for (i64 e : shape)
    if (e == 0) return;
  index g(shape.size(), 0);
  for (;;) {
    f(g);
    size_t k = shape.size();
    while (k-- > 0 && ++g[k] == shape[k]) g[k] = 0;
    if (k == static_cast<size_t>(-1)) return;
  }
}

int owner_of(const nd_layout& l, const index& g) { return l.owner(block_of(l, g).data()); }

// layouts[r] is the layout as rank r builds it: all valid and globally equal; each element stored by its owner at
// a distinct offset in [0, local_elements()); `dense`: local_elements() is the number of elements owned.
void check_storage(const std::vector<nd_layout>& layouts, bool dense) {
  const int n = static_cast<int>(layouts.size());
  for (int r = 0; r < n; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_NO_THROW(layouts[static_cast<size_t>(r)].validate_global(n));
    ASSERT_NO_THROW(layouts[static_cast<size_t>(r)].validate_local());
    EXPECT_TRUE(layouts[static_cast<size_t>(r)] == layouts[0]);
    EXPECT_EQ(layouts[static_cast<size_t>(r)].global_hash(), layouts[0].global_hash());
  }
  std::vector<std::set<i64>> used(static_cast<size_t>(n));
  for_each_index(layouts[0].shape(), [&](const index& g) {
    const int o = owner_of(layouts[0], g);
    ASSERT_TRUE(o >= 0 && o < n) << "owner " << o << " of " << str(g);
    const nd_layout& l = layouts[static_cast<size_t>(o)];
    const i64 off = offset_of(l, g);
    EXPECT_GE(off, 0) << "element " << str(g) << " not stored by its owner " << o;
    EXPECT_LT(off, l.local_elements()) << "element " << str(g);
    EXPECT_TRUE(used[static_cast<size_t>(o)].insert(off).second) << "element " << str(g) << " shares offset " << off;
  });
  if (dense)
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(layouts[static_cast<size_t>(r)].local_elements(), static_cast<i64>(used[static_cast<size_t>(r)].size()))
          << "rank " << r;
}

std::vector<int> random_order(int d, std::mt19937_64& rng) {
  if (rng() % 4 == 0) return {};  // the default, C order
  std::vector<int> o(static_cast<size_t>(d));
  std::iota(o.begin(), o.end(), 0);
  std::shuffle(o.begin(), o.end(), rng);
  return o;
}

std::vector<nd_layout> block_cyclic_all(const index& shape, const index& block, const std::vector<int>& grid,
                                        int nranks, const std::vector<int>& order, const std::vector<int>& ranks) {
  std::vector<nd_layout> out;
  for (int r = 0; r < nranks; ++r) out.push_back(redist::block_cyclic_nd(shape, block, grid, r, order, ranks));
  return out;
}

// Random block-cyclic arrays of 1 to 5 axes; ranks: a random map onto more ranks than positions (some hold none).
struct random_block_cyclic {
  index shape, block;
  std::vector<int> grid, order, ranks;
  int nranks = 0;
  std::vector<nd_layout> layouts;
  random_block_cyclic(int d, std::mt19937_64& rng) {
    for (int k = 0; k < d; ++k) {
      shape.push_back(static_cast<i64>(rng() % (d <= 3 ? 9 : 5)));
      block.push_back(1 + static_cast<i64>(rng() % 3));
      grid.push_back(1 + static_cast<int>(rng() % 3));
    }
    order = random_order(d, rng);
    const int positions = std::accumulate(grid.begin(), grid.end(), 1, std::multiplies<int>());
    nranks = positions + static_cast<int>(rng() % 3);
    if (rng() % 2) {
      std::vector<int> all(static_cast<size_t>(nranks));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      ranks.assign(all.begin(), all.begin() + positions);
    }
    layouts = block_cyclic_all(shape, block, grid, nranks, order, ranks);
  }
  std::string trace() const {
    return "shape " + str(shape) + "block " + str(block) + "grid " + str(grid) + "order " + str(order) + "ranks " +
           str(ranks);
  }
};

TEST(BlockCyclicNd, MatchesBruteForce) {
  std::mt19937_64 rng(test_seed(1));
  for (int d = 1; d <= 5; ++d)
    for (int trial = 0; trial < 40; ++trial) {
      random_block_cyclic c(d, rng);
      SCOPED_TRACE(c.trace());
      check_storage(c.layouts, true);
      // The owner by the model: block g / block along each axis, dealt round the grid.
      for_each_index(c.shape, [&](const index& g) {
        size_t flat = 0;
        for (int k = 0; k < d; ++k)
          flat = flat * static_cast<size_t>(c.grid[static_cast<size_t>(k)]) +
                 static_cast<size_t>(g[static_cast<size_t>(k)] / c.block[static_cast<size_t>(k)] %
                                     c.grid[static_cast<size_t>(k)]);
        const int model = c.ranks.empty() ? static_cast<int>(flat) : c.ranks[flat];
        ASSERT_EQ(owner_of(c.layouts[0], g), model) << "element " << str(g);
      });
    }
}

// A random cut of [0, shape) into boxes (k-d tree), dealt to random ranks, with some empty boxes mixed in.
std::vector<std::vector<box>> random_boxes(const index& shape, int nranks, std::mt19937_64& rng) {
  std::vector<box> to_cut{{index(shape.size(), 0), shape}}, leaves;
  while (!to_cut.empty()) {
    box b = to_cut.back();
    to_cut.pop_back();
    std::vector<size_t> cuttable;
    for (size_t k = 0; k < shape.size(); ++k)
      if (b.hi[k] - b.lo[k] >= 2) cuttable.push_back(k);
    if (cuttable.empty() || leaves.size() + to_cut.size() >= 12 || rng() % 4 == 0) {
      leaves.push_back(b);
      continue;
    }
    const size_t k = cuttable[rng() % cuttable.size()];
    const i64 cut = b.lo[k] + 1 + static_cast<i64>(rng() % static_cast<std::uint64_t>(b.hi[k] - b.lo[k] - 1));
    box upper = b;
    b.hi[k] = upper.lo[k] = cut;
    to_cut.push_back(b);
    to_cut.push_back(upper);
  }
  std::vector<std::vector<box>> of_rank(static_cast<size_t>(nranks));
  for (const box& b : leaves) of_rank[rng() % static_cast<size_t>(nranks)].push_back(b);
  box empty{index(shape.size(), 1), index(shape.size(), 2)};
  empty.hi[0] = 1;
  of_rank[rng() % static_cast<size_t>(nranks)].push_back(empty);
  return of_rank;
}

std::vector<nd_layout> box_layout_all(const std::vector<std::vector<box>>& boxes, const std::vector<int>& order) {
  std::vector<nd_layout> out;
  for (size_t r = 0; r < boxes.size(); ++r) out.push_back(redist::box_layout(boxes, static_cast<int>(r), order));
  return out;
}

// Every element's owner is the rank of the one box holding it.
void check_box_owners(const nd_layout& l, const std::vector<std::vector<box>>& boxes) {
  for_each_index(l.shape(), [&](const index& g) {
    int holder = -1;
    for (size_t r = 0; r < boxes.size(); ++r)
      for (const box& b : boxes[r]) {
        bool in = true;
        for (size_t k = 0; k < g.size(); ++k) in = in && b.lo[k] <= g[k] && g[k] < b.hi[k];
        if (in) holder = static_cast<int>(r);
      }
    ASSERT_EQ(owner_of(l, g), holder) << "element " << str(g);
  });
}

std::string trace(const std::vector<std::vector<box>>& boxes) {
  std::string s;
  for (size_t r = 0; r < boxes.size(); ++r) {
    s += "rank " + std::to_string(r) + ":";
    for (const box& b : boxes[r]) s += " [" + str(b.lo) + ") .. [" + str(b.hi) + ")";
    s += "\n";
  }
  return s;
}

TEST(BoxLayout, MatchesBruteForce) {
  std::mt19937_64 rng(test_seed(2));
  int regular = 0, explicit_blocks = 0;
  for (int d = 1; d <= 5; ++d)
    for (int trial = 0; trial < 40; ++trial) {
      index shape;
      for (int k = 0; k < d; ++k) shape.push_back(1 + static_cast<i64>(rng() % (d <= 3 ? 8 : 4)));
      const auto boxes = random_boxes(shape, 1 + static_cast<int>(rng() % 5), rng);
      const auto order = random_order(d, rng);
      SCOPED_TRACE(trace(boxes) + "order " + str(order));
      const auto layouts = box_layout_all(boxes, order);
      ASSERT_EQ(layouts[0].shape(), shape);
      check_storage(layouts, true);
      check_box_owners(layouts[0], boxes);
      for (const auto& l : layouts) (l.kind() == storage_kind::regular ? regular : explicit_blocks)++;
    }
  // Both storage kinds were exercised.
  EXPECT_GT(regular, 0);
  EXPECT_GT(explicit_blocks, 0);
}

// Ranks that store their boxes in orders of their own share one packing order (the global description) and keep
// dense storage in their own order.
TEST(BoxLayout, EachRankStoresInItsOwnOrder) {
  std::mt19937_64 rng(test_seed(5));
  int checked = 0;
  for (int d = 1; d <= 4; ++d)
    for (int trial = 0; trial < 30; ++trial) {
      index shape;
      for (int k = 0; k < d; ++k) shape.push_back(1 + static_cast<i64>(rng() % 6));
      const auto boxes = random_boxes(shape, 1 + static_cast<int>(rng() % 5), rng);
      auto packing = random_order(d, rng);
      if (packing.empty()) packing = redist::c_order(d);  // empty would mean each rank's own order
      std::vector<std::vector<int>> storage;
      std::vector<nd_layout> layouts;
      for (size_t r = 0; r < boxes.size(); ++r) {
        storage.push_back(random_order(d, rng));
        layouts.push_back(redist::box_layout(boxes, static_cast<int>(r), storage.back(), packing));
      }
      SCOPED_TRACE(trace(boxes) + "packing order " + str(packing));
      check_storage(layouts, true);
      for (size_t r = 0; r < boxes.size(); ++r) {
        const nd_layout& l = layouts[r];
        EXPECT_EQ(l.packing_order(), packing);
        std::vector<const box*> held;
        for (const box& b : boxes[r])
          if (!b.empty()) held.push_back(&b);
        if (held.size() != 1) continue;
        // Dense in this rank's own order: the fastest axis has stride 1, each next one the product before it.
        index expected(static_cast<size_t>(d));
        i64 stride = 1;
        for (int k : storage[r].empty() ? redist::c_order(d) : storage[r]) {
          expected[static_cast<size_t>(k)] = stride;
          stride *= held[0]->hi[static_cast<size_t>(k)] - held[0]->lo[static_cast<size_t>(k)];
        }
        SCOPED_TRACE("rank " + std::to_string(r) + " order " + str(storage[r]));
        if (l.kind() == storage_kind::regular)
          EXPECT_EQ(l.local_strides(), expected);
        else
          for (const auto& b : l.local_blocks()) EXPECT_EQ(b.strides, expected);
        ++checked;
      }
    }
  EXPECT_GT(checked, 0);
}

TEST(BoxLayout, FftDecompositionsAreRegularAndDense) {
  const index shape{7, 5, 6};
  const std::vector<std::vector<box>> decompositions{
      redist::brick_boxes(shape, {2, 2, 3}),
      redist::pencil_boxes(shape, 0, {2, 3}),
      redist::pencil_boxes(shape, 1, {3, 2}),
      redist::pencil_boxes(shape, 2, {1, 4}),
      redist::slab_boxes(shape, 1, 3),
      redist::slab_boxes(shape, 0, 9)};  // more slabs than planes: two ranks own nothing
  for (const auto& boxes : decompositions)
    for (const auto& order : {redist::c_order(3), redist::fortran_order(3), std::vector<int>{1, 0, 2}}) {
      std::vector<std::vector<box>> of_rank;
      for (const box& b : boxes) of_rank.push_back({b});
      SCOPED_TRACE(trace(of_rank) + "order " + str(order));
      std::vector<nd_layout> layouts;
      for (size_t r = 0; r < boxes.size(); ++r)
        layouts.push_back(redist::box_layout(boxes, static_cast<int>(r), order));
      for (const auto& l : layouts) EXPECT_EQ(l.kind(), storage_kind::regular);
      check_storage(layouts, true);
      check_box_owners(layouts[0], of_rank);
    }
}

// The per-axis parts of boxes cut into a grid: [lo, hi) of each part, in order.
std::vector<std::pair<i64, i64>> parts_along(const std::vector<box>& boxes, size_t k) {
  std::set<std::pair<i64, i64>> s;
  for (const box& b : boxes) s.insert({b.lo[k], b.hi[k]});
  return {s.begin(), s.end()};
}

TEST(FftBoxes, SizesRemaindersAndRankOrder) {
  const index shape{10, 7, 5};
  const auto bricks = redist::brick_boxes(shape, {3, 2, 4});
  ASSERT_EQ(bricks.size(), 24u);
  i64 total = 0;
  for (const box& b : bricks) total += b.elements();
  EXPECT_EQ(total, 350);
  // 10 in 3: 4 3 3; 7 in 2: 4 3; 5 in 4: 2 1 1 1 (the first n % p parts one longer).
  using parts = std::vector<std::pair<i64, i64>>;
  EXPECT_EQ(parts_along(bricks, 0), (parts{{0, 4}, {4, 7}, {7, 10}}));
  EXPECT_EQ(parts_along(bricks, 1), (parts{{0, 4}, {4, 7}}));
  EXPECT_EQ(parts_along(bricks, 2), (parts{{0, 2}, {2, 3}, {3, 4}, {4, 5}}));
  // C order: rank (i * 2 + j) * 4 + l holds part i, j, l.
  EXPECT_EQ(bricks[(1 * 2 + 0) * 4 + 3], (box{{4, 0, 4}, {7, 4, 5}}));
  EXPECT_EQ(bricks[(2 * 2 + 1) * 4 + 1], (box{{7, 4, 2}, {10, 7, 3}}));

  // Pencils along axis 1: axes 0 and 2 cut over a 2 x 3 grid, rank i * 3 + j.
  const auto pencils = redist::pencil_boxes(shape, 1, {2, 3});
  ASSERT_EQ(pencils.size(), 6u);
  EXPECT_EQ(pencils[1 * 3 + 2], (box{{5, 0, 4}, {10, 7, 5}}));
  EXPECT_EQ(pencils[0 * 3 + 1], (box{{0, 0, 2}, {5, 7, 4}}));
  total = 0;
  for (const box& b : pencils) total += b.elements();
  EXPECT_EQ(total, 350);

  const auto slabs = redist::slab_boxes(shape, 2, 3);
  ASSERT_EQ(slabs.size(), 3u);
  EXPECT_EQ(slabs[0], (box{{0, 0, 0}, {10, 7, 2}}));
  EXPECT_EQ(slabs[1], (box{{0, 0, 2}, {10, 7, 4}}));
  EXPECT_EQ(slabs[2], (box{{0, 0, 4}, {10, 7, 5}}));

  EXPECT_THROW(redist::brick_boxes({4, 4}, {1, 1, 1}), redist::invalid_argument);
  EXPECT_THROW(redist::pencil_boxes(shape, 3, {1, 1}), redist::invalid_argument);
  EXPECT_THROW(redist::slab_boxes(shape, 0, 0), redist::invalid_argument);
}

// The message of the error f throws, or "" when it throws none of type E.
template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(BoxLayout, RejectsBadBoxes) {
  using boxes = std::vector<box>;
  const auto layout = [](const boxes& b, std::vector<int> order = {}) {
    return [=] { redist::box_layout(b, 0, order); };
  };
  const std::string overlap =
      error_of<redist::invalid_layout>(layout({{{0, 0}, {2, 2}}, {{1, 0}, {3, 3}}, {{0, 2}, {1, 3}}}));
  EXPECT_NE(overlap.find("ranks 0 and 1 overlap at point (1,0)"), std::string::npos) << overlap;
  const std::string same_rank = error_of<redist::invalid_layout>([] {
    redist::box_layout(std::vector<boxes>{{{{0}, {2}}, {{1}, {3}}}}, 0);
  });
  EXPECT_NE(same_rank.find("two boxes of rank 0 overlap at point (1)"), std::string::npos) << same_rank;
  const std::string gap = error_of<redist::invalid_layout>(layout({{{0, 0}, {2, 2}}, {{2, 0}, {3, 1}}}));
  EXPECT_NE(gap.find("point (2,1) is in no box"), std::string::npos) << gap;
  const std::string negative = error_of<redist::invalid_argument>(layout({{{-1, 0}, {2, 2}}}));
  EXPECT_NE(negative.find("box 0 of rank 0: axis 0 is [-1, 2)"), std::string::npos) << negative;
  const std::string reversed = error_of<redist::invalid_argument>(layout({{{0, 3}, {2, 2}}}));
  EXPECT_NE(reversed.find("axis 1 is [3, 2)"), std::string::npos) << reversed;
  const std::string sizes = error_of<redist::invalid_argument>(layout({{{0, 0}, {2, 2}}, {{0}, {2}}}));
  EXPECT_NE(sizes.find("box 0 of rank 1 has 1 lower and 1 upper bounds, expected 2"), std::string::npos) << sizes;
  const std::string order = error_of<redist::invalid_argument>(layout({{{0, 0}, {2, 2}}}, {0, 0}));
  EXPECT_NE(order.find("order must be a permutation"), std::string::npos) << order;
  const std::string none = error_of<redist::invalid_argument>(layout({}));
  EXPECT_NE(none.find("no boxes"), std::string::npos) << none;
}

TEST(BlockCyclicNd, RejectsBadArguments) {
  const auto bc = [](index shape, index block, std::vector<int> grid, std::vector<int> order, std::vector<int> ranks) {
    return [=] { redist::block_cyclic_nd(shape, block, grid, 0, order, ranks); };
  };
  const std::string size = error_of<redist::invalid_argument>(bc({4, 4}, {1, 1}, {2, 2}, {}, {0, 1, 2}));
  EXPECT_NE(size.find("grid_ranks has 3 entries, expected one per grid position (4)"), std::string::npos) << size;
  const std::string twice = error_of<redist::invalid_argument>(bc({4, 4}, {1, 1}, {2, 2}, {}, {0, 1, 2, 1}));
  EXPECT_NE(twice.find("rank 1 is at grid positions 1 and 3"), std::string::npos) << twice;
  const std::string negative = error_of<redist::invalid_argument>(bc({4, 4}, {1, 1}, {2, 2}, {}, {0, 1, -2, 3}));
  EXPECT_NE(negative.find("grid_ranks[2] = -2"), std::string::npos) << negative;
  const std::string order = error_of<redist::invalid_argument>(bc({4, 4}, {1, 1}, {2, 2}, {0, 2}, {}));
  EXPECT_NE(order.find("order must be a permutation"), std::string::npos) << order;
  const std::string block = error_of<redist::invalid_argument>(bc({4, 4}, {1, 0}, {2, 2}, {}, {}));
  EXPECT_NE(block.find("axis 1: block 0, expected >= 1"), std::string::npos) << block;
  const std::string grid = error_of<redist::invalid_argument>(bc({4, 4}, {1, 1}, {2}, {}, {}));
  EXPECT_NE(grid.find("grid has 1 entries"), std::string::npos) << grid;
  const std::string axes =
      error_of<redist::invalid_argument>(bc(index(9, 1), index(9, 1), std::vector<int>(9, 1), {}, {}));
  EXPECT_NE(axes.find("9 axes, expected 1 to 8"), std::string::npos) << axes;
}

// A copy of l with other local storage.
nd_layout with_storage(const nd_layout& l, storage_kind kind, std::vector<std::vector<i64>> starts,
                       std::vector<i64> strides, std::vector<nd_local_block> blocks) {
  std::vector<std::vector<i64>> splits;
  std::vector<std::vector<int>> procs;
  for (int k = 0; k < l.ndim(); ++k) {
    splits.push_back(l.splits(k));
    procs.push_back(l.procs(k));
  }
  return nd_layout(splits, procs, l.grid_shape(), l.grid_ranks(), l.packing_order(), kind, std::move(starts),
                   std::move(strides), std::move(blocks), l.my_rank());
}

TEST(NdLayout, ValidateLocalRejectsAliasingStorage) {
  // 6 x 4 in 2 x 2 blocks on a 2 x 1 grid: rank 0 holds a 4 x 4 local array (block rows 0 and 2).
  const nd_layout l = redist::block_cyclic_nd({6, 4}, {2, 2}, {2, 1}, 0);
  ASSERT_NO_THROW(l.validate_local());
  EXPECT_EQ(l.local_elements(), 16);
  const std::vector<std::vector<i64>> starts{l.local_start(0), l.local_start(1)};
  // Padded strides are fine; a row stride below the 4 columns is not.
  EXPECT_NO_THROW(with_storage(l, storage_kind::regular, starts, {5, 1}, {}).validate_local());
  const std::string alias = error_of<redist::invalid_layout>([&] {
    with_storage(l, storage_kind::regular, starts, {3, 1}, {}).validate_local();
  });
  EXPECT_NE(alias.find("stride 3 of axis 0 (rows) is smaller than the 4 elements"), std::string::npos) << alias;
  EXPECT_THROW(with_storage(l, storage_kind::regular, starts, {4, 0}, {}).validate_local(), redist::invalid_layout);
  EXPECT_THROW(with_storage(l, storage_kind::regular, starts, {4}, {}).validate_local(), redist::invalid_layout);
  // Block rows 0 and 2 at overlapping local rows.
  auto overlapping = starts;
  overlapping[0][2] = 1;
  const std::string rows = error_of<redist::invalid_layout>([&] {
    with_storage(l, storage_kind::regular, overlapping, {4, 1}, {}).validate_local();
  });
  EXPECT_NE(rows.find("axis 0 (rows): blocks 0 and 2 on rank 0 overlap in local indices"), std::string::npos) << rows;
  auto negative = starts;
  negative[1][0] = -1;
  EXPECT_THROW(with_storage(l, storage_kind::regular, negative, {4, 1}, {}).validate_local(), redist::invalid_layout);

  // Explicit: rank 0's blocks (0,0), (0,1), (2,0), (2,1), 4 elements each.
  const std::vector<nd_local_block> good{
      {{0, 0}, 0, {2, 1}}, {{0, 1}, 4, {1, 2}}, {{2, 0}, 8, {2, 1}}, {{2, 1}, 12, {2, 1}}};
  const auto explicit_error = [&](std::vector<nd_local_block> blocks) {
    return error_of<redist::invalid_layout>(
        [&] { with_storage(l, storage_kind::explicit_blocks, {}, {}, blocks).validate_local(); });
  };
  EXPECT_EQ(explicit_error(good), "");
  EXPECT_EQ(with_storage(l, storage_kind::explicit_blocks, {}, {}, good).local_elements(), 16);
  auto b = good;
  b[1].offset = 3;
  EXPECT_NE(explicit_error(b).find("local blocks (0,0) and (0,1) on rank 0 overlap in memory"), std::string::npos)
      << explicit_error(b);
  // Interleaved cells of one 4 x 4 row-major array: no element shared; one column further, two shared.
  const std::vector<nd_local_block> cells{
      {{0, 0}, 0, {4, 1}}, {{0, 1}, 2, {4, 1}}, {{2, 0}, 8, {4, 1}}, {{2, 1}, 10, {4, 1}}};
  EXPECT_EQ(explicit_error(cells), "");
  b = cells;
  b[1].offset = 1;
  EXPECT_NE(explicit_error(b).find("local blocks (0,0) and (0,1) on rank 0 overlap in memory"), std::string::npos)
      << explicit_error(b);
  b = good;
  b[0].strides = {1, 1};
  EXPECT_NE(explicit_error(b).find("local block (0,0) on rank 0: stride 1"), std::string::npos) << explicit_error(b);
  b = good;
  b[3] = {{0, 0}, 12, {2, 1}};
  EXPECT_NE(explicit_error(b).find("listed twice"), std::string::npos) << explicit_error(b);
  b = good;
  b.pop_back();
  EXPECT_NE(explicit_error(b).find("owns block (2,1) but does not list it"), std::string::npos) << explicit_error(b);
  b = good;
  b[3].block = {1, 1};
  EXPECT_NE(explicit_error(b).find("local block (1,1) on rank 0 is owned by rank 1"), std::string::npos)
      << explicit_error(b);
  b = good;
  b[3].offset = -1;
  EXPECT_NE(explicit_error(b).find("negative offset"), std::string::npos) << explicit_error(b);
}

TEST(NdLayout, ValidateGlobalRejectsBadDescriptions) {
  const auto make = [](std::vector<std::vector<i64>> splits, std::vector<std::vector<int>> procs, std::vector<int> grid,
                       std::vector<int> ranks, std::vector<int> order) {
    return nd_layout(std::move(splits), std::move(procs), std::move(grid), std::move(ranks), std::move(order),
                     storage_kind::regular, {}, {}, {}, -1);
  };
  const auto global_error = [](const nd_layout& l, int comm_size) {
    return error_of<redist::invalid_layout>([&] { l.validate_global(comm_size); });
  };
  const nd_layout good = make({{0, 2, 4}, {0, 3}}, {{0, 1}, {0}}, {2, 1}, {1, 0}, {1, 0});
  EXPECT_EQ(global_error(good, 2), "");
  EXPECT_NE(global_error(good, 1).find("owner rank 1 at grid position 0"), std::string::npos);
  const std::string decreasing =
      global_error(make({{0, 2, 4}, {0, 3, 7, 5}}, {{0, 1}, {0, 0, 0}}, {2, 1}, {1, 0}, {1, 0}), 2);
  EXPECT_NE(decreasing.find("axis 1 (columns): splits must increase; splits[3] = 5 after splits[2] = 7"),
            std::string::npos)
      << decreasing;
  EXPECT_NE(global_error(make({{1, 2}, {0, 3}}, {{0}, {0}}, {1, 1}, {0}, {1, 0}), 1)
                .find("axis 0 (rows): splits must start at 0"),
            std::string::npos);
  EXPECT_NE(global_error(make({{0, 2, 4}, {0, 3}}, {{0, 2}, {0}}, {2, 1}, {1, 0}, {1, 0}), 2).find("procs[1] = 2"),
            std::string::npos);
  EXPECT_NE(
      global_error(make({{0, 2, 4}, {0, 3}}, {{0}, {0}}, {2, 1}, {1, 0}, {1, 0}), 2).find("axis 0 (rows): procs has 1"),
      std::string::npos);
  EXPECT_NE(global_error(make({{0, 2, 4}, {0, 3}}, {{0, 1}, {0}}, {2, 1}, {1}, {1, 0}), 2).find("grid_ranks has 1"),
            std::string::npos);
  EXPECT_NE(global_error(make({{0, 2, 4}, {0, 3}}, {{0, 1}, {0}}, {2, 1}, {1, 0}, {1, 1}), 2).find("packing_order"),
            std::string::npos);
  EXPECT_NE(global_error(make({}, {}, {}, {1}, {}), 2).find("needs 1 to 8 axes, got 0"), std::string::npos);
  // An axis of extent 0 has no blocks: valid.
  EXPECT_EQ(global_error(make({{0}, {0, 3}}, {{}, {0}}, {1, 1}, {0}, {0, 1}), 1), "");
}

TEST(NdLayout, PermutedKeepsOwnersAndOffsets) {
  std::mt19937_64 rng(test_seed(3));
  for (int d = 1; d <= 5; ++d)
    for (int trial = 0; trial < 20; ++trial) {
      index shape;
      for (int k = 0; k < d; ++k) shape.push_back(1 + static_cast<i64>(rng() % (d <= 3 ? 7 : 4)));
      const bool boxes = trial % 2 == 1;
      const auto box_set = random_boxes(shape, 3, rng);
      const random_block_cyclic c(d, rng);
      const auto layouts = boxes ? box_layout_all(box_set, random_order(d, rng)) : c.layouts;
      std::vector<int> axes(static_cast<size_t>(d));
      std::iota(axes.begin(), axes.end(), 0);
      std::shuffle(axes.begin(), axes.end(), rng);
      SCOPED_TRACE((boxes ? trace(box_set) : c.trace()) + " axes " + str(axes));
      std::vector<nd_layout> permuted;
      for (const auto& l : layouts) permuted.push_back(l.permuted(axes));
      check_storage(permuted, true);
      for_each_index(permuted[0].shape(), [&](const index& i) {
        index g(i.size());
        for (size_t j = 0; j < i.size(); ++j) g[static_cast<size_t>(axes[j])] = i[j];
        const int o = owner_of(layouts[0], g);
        ASSERT_EQ(owner_of(permuted[0], i), o) << "index " << str(i);
        ASSERT_EQ(offset_of(permuted[static_cast<size_t>(o)], i), offset_of(layouts[static_cast<size_t>(o)], g))
            << "index " << str(i);
      });
    }
  EXPECT_THROW(redist::block_cyclic_nd({2, 2}, {1, 1}, {1, 1}, 0).permuted({0, 0}), redist::invalid_argument);
}

TEST(NdLayout, RelabeledMovesOwnersAndRebuildsStorage) {
  std::mt19937_64 rng(test_seed(4));
  for (int d = 1; d <= 4; ++d)
    for (int trial = 0; trial < 20; ++trial) {
      index shape;
      for (int k = 0; k < d; ++k) shape.push_back(1 + static_cast<i64>(rng() % 6));
      const bool boxes = trial % 2 == 1;
      const auto box_set = random_boxes(shape, 4, rng);
      const random_block_cyclic c(d, rng);
      const auto layouts = boxes ? box_layout_all(box_set, random_order(d, rng)) : c.layouts;
      std::vector<int> new_rank_of(layouts.size());
      std::iota(new_rank_of.begin(), new_rank_of.end(), 0);
      std::shuffle(new_rank_of.begin(), new_rank_of.end(), rng);
      SCOPED_TRACE((boxes ? trace(box_set) : c.trace()) + " relabeling " + str(new_rank_of));
      std::vector<nd_layout> relabeled;
      for (const auto& l : layouts) relabeled.push_back(l.relabeled(new_rank_of));
      for (size_t r = 0; r < layouts.size(); ++r) EXPECT_EQ(relabeled[r].kind(), layouts[r].kind());
      check_storage(relabeled, true);
      for_each_index(layouts[0].shape(), [&](const index& g) {
        ASSERT_EQ(owner_of(relabeled[0], g), new_rank_of[static_cast<size_t>(owner_of(layouts[0], g))])
            << "element " << str(g);
      });
    }
  EXPECT_THROW(redist::block_cyclic_nd({2, 2}, {1, 1}, {1, 2}, 0).relabeled({0}), redist::invalid_argument);
}

TEST(NdLayout, FromBlockCyclicGridLayout) {
  for (const auto order : {redist::storage_order::col_major, redist::storage_order::row_major})
    for (const i64 lld : {0, 17}) {  // minimal and padded local leading dimensions
      redist::block_cyclic_params p;
      p.m = 13;
      p.n = 11;
      p.mb = 3;
      p.nb = 2;
      p.rsrc = 1;
      p.proc_rows = 2;
      p.proc_cols = 3;
      p.order = order;
      p.lld = lld;
      SCOPED_TRACE(std::string(order == redist::storage_order::col_major ? "col" : "row") + "-major, lld " +
                   std::to_string(lld));
      std::vector<nd_layout> layouts;
      for (int r = 0; r < 6; ++r) {
        const redist::grid_layout g = redist::block_cyclic(p, r);
        layouts.push_back(redist::to_nd_layout(g));
        EXPECT_EQ(layouts.back().local_elements(), g.local_elements()) << "rank " << r;
      }
      check_storage(layouts, lld == 0);
      for (i64 i = 0; i < p.m; ++i)
        for (i64 j = 0; j < p.n; ++j) {
          // The grid layout's own addressing.
          const redist::grid_layout g0 = redist::block_cyclic(p, 0);
          const auto& rs = g0.row_splits();
          const auto& cs = g0.col_splits();
          const i64 bi = std::upper_bound(rs.begin(), rs.end(), i) - rs.begin() - 1;
          const i64 bj = std::upper_bound(cs.begin(), cs.end(), j) - cs.begin() - 1;
          const int o = g0.owner({bi, bj});
          const redist::grid_layout g = redist::block_cyclic(p, o);
          const i64 lr = g.local_row_start()[static_cast<size_t>(bi)] + i - rs[static_cast<size_t>(bi)];
          const i64 lc = g.local_col_start()[static_cast<size_t>(bj)] + j - cs[static_cast<size_t>(bj)];
          const i64 off = order == redist::storage_order::col_major ? lr + lc * g.local_ld() : lr * g.local_ld() + lc;
          ASSERT_EQ(owner_of(layouts[0], {i, j}), o) << i << "," << j;
          ASSERT_EQ(offset_of(layouts[static_cast<size_t>(o)], {i, j}), off) << i << "," << j;
        }
    }
}

TEST(NdLayout, HashEqualityAndDescription) {
  const nd_layout a = redist::block_cyclic_nd({8, 6, 4}, {2, 3, 2}, {2, 1, 2}, 0);
  EXPECT_EQ(a.global_hash(), redist::block_cyclic_nd({8, 6, 4}, {2, 3, 2}, {2, 1, 2}, 3).global_hash());
  EXPECT_TRUE(a == redist::block_cyclic_nd({8, 6, 4}, {2, 3, 2}, {2, 1, 2}, 3));
  // One split moved (axis 1 in blocks of 2 rather than 3 would change the count; same count, one boundary moved).
  const nd_layout moved = redist::box_layout({box{{0, 0, 0}, {8, 2, 4}}, box{{0, 2, 0}, {8, 6, 4}}}, 0);
  const nd_layout original = redist::box_layout({box{{0, 0, 0}, {8, 3, 4}}, box{{0, 3, 0}, {8, 6, 4}}}, 0);
  EXPECT_NE(moved.global_hash(), original.global_hash());
  EXPECT_TRUE(moved != original);
  // Another owner or packing order changes the hash too.
  EXPECT_NE(redist::block_cyclic_nd({8, 6, 4}, {2, 3, 2}, {2, 1, 2}, 0, {}, {1, 0, 2, 3}).global_hash(),
            a.global_hash());
  EXPECT_NE(redist::block_cyclic_nd({8, 6, 4}, {2, 3, 2}, {2, 1, 2}, 0, redist::fortran_order(3)).global_hash(),
            a.global_hash());
  EXPECT_EQ(a.describe(), "8x6x4 in 4x2x2 blocks on a 2x1x2 grid");
  EXPECT_EQ(a.ranks_needed(), 4);
}

TEST(NdLayout, RankWithoutElements) {
  // Rank 5 is on no grid position; rank 2 owns only an empty box.
  const nd_layout bc = redist::block_cyclic_nd({4, 4}, {2, 2}, {2, 2}, 5);
  EXPECT_EQ(bc.local_elements(), 0);
  EXPECT_NO_THROW(bc.validate_local());
  const nd_layout bx = redist::box_layout({box{{0, 0}, {2, 4}}, box{{2, 0}, {4, 4}}, box{{1, 1}, {1, 3}}}, 2);
  EXPECT_EQ(bx.local_elements(), 0);
  EXPECT_EQ(bx.shape(), (index{4, 4}));
  EXPECT_NO_THROW(bx.validate_local());
  EXPECT_EQ(box({{1, 1}, {1, 3}}).elements(), 0);
  EXPECT_EQ(box({{1, 1}, {3, 4}}).elements(), 6);
  EXPECT_THROW(box({{1, 1}, {3}}).elements(), redist::invalid_argument);
}

}  // namespace
