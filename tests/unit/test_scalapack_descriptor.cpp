// SPDX-License-Identifier: BSD-3-Clause
// ScaLAPACK descriptors (redist::scalapack): parsing, layouts against ScaLAPACK's own index formulas, and
// every error code of the reference's argument checks.
//
// The reference mapping below is written from ScaLAPACK's formulas (INDXG2P, and NUMROC generalised to a
// first block IMB: the local index of a global index is the number of earlier indices its process holds),
// independently of src/layout/builders.cpp and src/scalapack/descriptor.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist/layout/grid_layout.hpp"
#include "redist/scalapack/descriptor.hpp"
#include "test_seed.hpp"

namespace {

namespace sl = redist::scalapack;
using redist::grid_layout;
using redist::testing::test_seed;
using index = std::int64_t;

// ---- reference formulas --------------------------------------------------------------------------------

// ScaLAPACK's NUMROC (DTYPE 1): n indices in blocks of nb, dealt from isrc over nprocs.
index ref_numroc1(index n, index nb, index iproc, index isrc, index nprocs) {
  const index mydist = (nprocs + iproc - isrc) % nprocs;
  const index nblocks = n / nb;
  index count = (nblocks / nprocs) * nb;
  const index extra = nblocks % nprocs;
  if (mydist < extra)
    count += nb;
  else if (mydist == extra)
    count += n % nb;
  return count;
}

// With a first block of imb: the first block on isrc, the rest dealt in blocks of nb from the next process.
index ref_numroc(index n, index imb, index nb, index iproc, index isrc, index nprocs) {
  if (n <= 0) return 0;
  if (n <= imb) return iproc == isrc ? n : 0;
  return (iproc == isrc ? imb : 0) + ref_numroc1(n - imb, nb, iproc, (isrc + 1) % nprocs, nprocs);
}

// INDXG2P with a first block (g 0-based).
index ref_owner(index g, index imb, index nb, index isrc, index nprocs) {
  return g < imb ? isrc : (isrc + 1 + (g - imb) / nb) % nprocs;
}

// INDXG2L with a first block: earlier indices held by the same process.
index ref_local(index g, index imb, index nb, index isrc, index nprocs) {
  return ref_numroc(g, imb, nb, ref_owner(g, imb, nb, isrc, nprocs), isrc, nprocs);
}

// ---- helpers -------------------------------------------------------------------------------------------

std::array<int, 9> raw1(int ctxt, int m, int n, int mb, int nb, int rsrc, int csrc, int lld) {
  return {1, ctxt, m, n, mb, nb, rsrc, csrc, lld};
}
std::array<int, 11> raw2(int ctxt, int m, int n, int imb, int inb, int mb, int nb, int rsrc, int csrc, int lld) {
  return {2, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld};
}

sl::process_grid make_grid(int rows, int cols, int my_row, int my_col, std::vector<int> ranks = {}) {
  sl::process_grid g;
  g.proc_rows = rows;
  g.proc_cols = cols;
  g.my_row = my_row;
  g.my_col = my_col;
  if (ranks.empty()) {
    ranks.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
    std::iota(ranks.begin(), ranks.end(), 0);
  }
  g.position_ranks = std::move(ranks);
  return g;
}

index block_of(const std::vector<index>& splits, index g) {
  return static_cast<index>(std::upper_bound(splits.begin(), splits.end(), g) - splits.begin()) - 1;
}

// ---- parsing -------------------------------------------------------------------------------------------

TEST(ScalapackDescriptor, ParsesDtype1) {
  const auto raw = raw1(7, 100, 80, 16, 8, 1, 2, 64);
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  EXPECT_EQ(d.dtype, 1);
  EXPECT_TRUE(d.known_type());
  EXPECT_EQ(d.ctxt, 7);
  EXPECT_EQ(d.m, 100);
  EXPECT_EQ(d.n, 80);
  EXPECT_EQ(d.imb, 16);
  EXPECT_EQ(d.inb, 8);
  EXPECT_EQ(d.mb, 16);
  EXPECT_EQ(d.nb, 8);
  EXPECT_EQ(d.rsrc, 1);
  EXPECT_EQ(d.csrc, 2);
  EXPECT_EQ(d.lld, 64);
  const std::array<int, 11> pos{1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9};
  EXPECT_EQ(d.position, pos);
  const std::array<index, 11> norm{2, 7, 100, 80, 16, 8, 16, 8, 1, 2, 64};
  EXPECT_EQ(d.normalized(), norm);
  EXPECT_EQ(d.value(sl::desc_entry::rsrc), 1);
  EXPECT_EQ(d.position_of(sl::desc_entry::lld), 9);
}

TEST(ScalapackDescriptor, ParsesDtype2) {
  const auto raw = raw2(3, 50, 60, 5, 7, 4, 6, 0, 1, 30);
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  EXPECT_EQ(d.dtype, 2);
  EXPECT_EQ(d.ctxt, 3);
  EXPECT_EQ(d.m, 50);
  EXPECT_EQ(d.n, 60);
  EXPECT_EQ(d.imb, 5);
  EXPECT_EQ(d.inb, 7);
  EXPECT_EQ(d.mb, 4);
  EXPECT_EQ(d.nb, 6);
  EXPECT_EQ(d.rsrc, 0);
  EXPECT_EQ(d.csrc, 1);
  EXPECT_EQ(d.lld, 30);
  for (int e = 0; e < 11; ++e) EXPECT_EQ(d.position[static_cast<size_t>(e)], e + 1);
  const std::array<index, 11> norm{2, 3, 50, 60, 5, 7, 4, 6, 0, 1, 30};
  EXPECT_EQ(d.normalized(), norm);
}

TEST(ScalapackDescriptor, Parses64BitDescriptors) {
  const std::array<std::int64_t, 11> raw{2, 1, std::int64_t{1} << 40, 9, 3, 2, 5, 4, 1, 0, std::int64_t{1} << 35};
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  EXPECT_EQ(d.m, std::int64_t{1} << 40);
  EXPECT_EQ(d.lld, std::int64_t{1} << 35);
  const std::array<std::int64_t, 9> raw_1{1, 4, 10, 11, 2, 3, 0, 0, 10};
  EXPECT_EQ(sl::parse_descriptor(raw_1.data()).inb, 3);
}

TEST(ScalapackDescriptor, UnknownTypeReadsOnlyTypeAndContext) {
  const int raw[2] = {5, 9};  // only two entries may be read
  const sl::descriptor d = sl::parse_descriptor(raw);
  EXPECT_EQ(d.dtype, 5);
  EXPECT_FALSE(d.known_type());
  EXPECT_EQ(d.ctxt, 9);
  EXPECT_EQ(d.m, 0);
  EXPECT_EQ(d.n, 0);
  EXPECT_EQ(d.mb, 1);
  EXPECT_EQ(d.lld, 1);
  EXPECT_EQ(d.position_of(sl::desc_entry::dtype), 1);
  EXPECT_EQ(d.position_of(sl::desc_entry::ctxt), 2);
  EXPECT_EQ(d.position_of(sl::desc_entry::m), 0);
  EXPECT_EQ(d.normalized()[0], 5);  // kept, as PBLAS does
}

TEST(ScalapackDescriptor, UnknownTypeReadAsType1ForRedist) {
  const int raw[9] = {0, 4, 10, 12, 3, 2, 1, 0, 6};
  const sl::descriptor d = sl::parse_descriptor(raw, sl::dtype_fallback::read_as_type1);
  EXPECT_EQ(d.dtype, 1);
  EXPECT_EQ(d.m, 10);
  EXPECT_EQ(d.imb, 3);
  EXPECT_EQ(d.nb, 2);
  EXPECT_EQ(d.rsrc, 1);
  EXPECT_EQ(d.lld, 6);
  EXPECT_EQ(d.position_of(sl::desc_entry::lld), 9);
}

// REDIST reads 9 entries whatever DTYPE says, 2 included: a DTYPE 2 array's IMB and INB are read as MB and NB.
TEST(ScalapackDescriptor, Type2ReadAsType1ForRedist) {
  const int raw[11] = {2, 4, 10, 12, 3, 2, 5, 5, 1, 0, 6};
  const sl::descriptor d = sl::parse_descriptor(raw, sl::dtype_fallback::read_as_type1);
  EXPECT_EQ(d.dtype, 1);
  EXPECT_EQ(d.mb, 3);
  EXPECT_EQ(d.imb, 3);
  EXPECT_EQ(d.nb, 2);
  EXPECT_EQ(d.rsrc, 5);
  EXPECT_EQ(d.csrc, 5);
  EXPECT_EQ(d.lld, 1);
}

TEST(ScalapackDescriptor, NullDescriptorThrows) {
  EXPECT_THROW(sl::parse_descriptor(static_cast<const int*>(nullptr)), redist::invalid_argument);
  EXPECT_THROW(sl::parse_descriptor(static_cast<const std::int64_t*>(nullptr)), redist::invalid_argument);
}

TEST(ScalapackDescriptor, EntryNames) {
  EXPECT_STREQ(sl::entry_name(sl::desc_entry::dtype), "DTYPE");
  EXPECT_STREQ(sl::entry_name(sl::desc_entry::imb), "IMB");
  EXPECT_STREQ(sl::entry_name(sl::desc_entry::lld), "LLD");
}

// ---- NUMROC --------------------------------------------------------------------------------------------

TEST(ScalapackDescriptor, NumrocMatchesFormulasAndDealing) {
  for (index n = 0; n <= 40; ++n)
    for (index first = 1; first <= 9; ++first)
      for (index nb = 1; nb <= 6; ++nb)
        for (index nprocs = 1; nprocs <= 4; ++nprocs)
          for (index src = 0; src < nprocs; ++src) {
            // Deal the indices one by one.
            std::vector<index> dealt(static_cast<size_t>(nprocs), 0);
            for (index g = 0; g < n; ++g) ++dealt[static_cast<size_t>(ref_owner(g, first, nb, src, nprocs))];
            for (index p = 0; p < nprocs; ++p) {
              const index expect = dealt[static_cast<size_t>(p)];
              ASSERT_EQ(ref_numroc(n, first, nb, p, src, nprocs), expect);
              ASSERT_EQ(sl::numroc(n, first, nb, p, src, nprocs), expect)
                  << "n=" << n << " first=" << first << " nb=" << nb << " p=" << p << " src=" << src << "/" << nprocs;
            }
          }
  // Replicated (src -1) or a single process: everything.
  EXPECT_EQ(sl::numroc(17, 3, 2, 1, -1, 4), 17);
  EXPECT_EQ(sl::numroc(17, 3, 2, 0, 0, 1), 17);
  EXPECT_EQ(sl::numroc(index{1} << 40, 7, 5, 2, 1, 3), ref_numroc(index{1} << 40, 7, 5, 2, 1, 3));
}

// ---- layouts against the reference mapping --------------------------------------------------------------

struct layout_case {
  int dtype;
  index m_, n_, imb, inb, mb, nb;
  int rsrc, csrc;
  int rows, cols;
  std::vector<int> ranks;        // position -> communicator rank
  int nranks;                    // communicator size (some ranks may be outside the grid)
  index m, n, ia, ja;            // sub-matrix
  std::vector<index> lld_extra;  // per communicator rank: LLD = max(1, local rows) + extra
};

std::string describe(const layout_case& c) {
  std::string s = "dtype=" + std::to_string(c.dtype) + " M_=" + std::to_string(c.m_) + " N_=" + std::to_string(c.n_) +
                  " imb=" + std::to_string(c.imb) + " inb=" + std::to_string(c.inb) + " mb=" + std::to_string(c.mb) +
                  " nb=" + std::to_string(c.nb) + " src=(" + std::to_string(c.rsrc) + "," + std::to_string(c.csrc) +
                  ") grid=" + std::to_string(c.rows) + "x" + std::to_string(c.cols) + " ranks=";
  for (int r : c.ranks) s += std::to_string(r) + " ";
  s += "sub=" + std::to_string(c.m) + "x" + std::to_string(c.n) + " at (" + std::to_string(c.ia) + "," +
       std::to_string(c.ja) + ")";
  return s;
}

void check_layout_case(const layout_case& c) {
  SCOPED_TRACE(describe(c));
  for (int rank = -1; rank < c.nranks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    int my_row = -1, my_col = -1;
    for (size_t k = 0; k < c.ranks.size(); ++k)
      if (c.ranks[k] == rank) my_row = static_cast<int>(k) / c.cols, my_col = static_cast<int>(k) % c.cols;
    const sl::process_grid grid = make_grid(c.rows, c.cols, my_row, my_col, c.ranks);
    index lld = 1;
    if (my_row >= 0)
      lld = std::max<index>(1, ref_numroc(c.m_, c.imb, c.mb, my_row, c.rsrc, c.rows)) +
            c.lld_extra[static_cast<size_t>(rank)];
    sl::descriptor d;
    if (c.dtype == 1) {
      const auto raw = raw1(0, static_cast<int>(c.m_), static_cast<int>(c.n_), static_cast<int>(c.mb),
                            static_cast<int>(c.nb), c.rsrc, c.csrc, static_cast<int>(lld));
      d = sl::parse_descriptor(raw.data());
    } else {
      const auto raw =
          raw2(0, static_cast<int>(c.m_), static_cast<int>(c.n_), static_cast<int>(c.imb), static_cast<int>(c.inb),
               static_cast<int>(c.mb), static_cast<int>(c.nb), c.rsrc, c.csrc, static_cast<int>(lld));
      d = sl::parse_descriptor(raw.data());
    }
    if (my_row >= 0 && c.m > 0 && c.n > 0) {
      ASSERT_EQ(sl::check_matrix(grid, 0, c.m, 1, c.n, 2, c.ia, c.ja, d, 5), 0) << "a valid case";
      ASSERT_EQ(sl::check_gemr2d_operand(c.m, c.n, c.ia, c.ja, d, grid), sl::gemr2d_problem::none);
    }
    const grid_layout l = sl::layout_of(c.m, c.n, c.ia, c.ja, d, grid, rank);
    ASSERT_NO_THROW(l.validate_global(c.nranks));
    ASSERT_NO_THROW(l.validate_local());
    ASSERT_EQ(l.rows(), c.m);
    ASSERT_EQ(l.cols(), c.n);
    ASSERT_EQ(l.my_rank(), rank);
    ASSERT_EQ(l.proc_rows(), c.rows);
    ASSERT_EQ(l.proc_cols(), c.cols);
    ASSERT_EQ(l.grid_ranks(), c.ranks);
    ASSERT_EQ(l.packing_order(), redist::storage_order::col_major);
    const auto positions = l.my_positions();
    if (my_row < 0) {
      EXPECT_TRUE(positions.empty());
      EXPECT_EQ(l.local_elements(), 0);
    } else {
      ASSERT_EQ(positions.size(), 1u);
      EXPECT_EQ(positions[0].row, my_row);
      EXPECT_EQ(positions[0].col, my_col);
    }
    if (c.m == 0 || c.n == 0) {
      EXPECT_EQ(l.local_elements(), 0);
      continue;
    }
    index max_offset = -1;
    for (index i = 0; i < c.m; ++i)
      for (index j = 0; j < c.n; ++j) {
        const index gi = c.ia - 1 + i, gj = c.ja - 1 + j;
        const index pr = ref_owner(gi, c.imb, c.mb, c.rsrc, c.rows);
        const index pc = ref_owner(gj, c.inb, c.nb, c.csrc, c.cols);
        const int owner = c.ranks[static_cast<size_t>(pr * c.cols + pc)];
        const index bi = block_of(l.row_splits(), i), bj = block_of(l.col_splits(), j);
        ASSERT_EQ(l.row_proc()[static_cast<size_t>(bi)], pr) << "row " << gi;
        ASSERT_EQ(l.col_proc()[static_cast<size_t>(bj)], pc) << "column " << gj;
        ASSERT_EQ(l.owner({bi, bj}), owner);
        if (owner != rank) continue;
        const index lr = l.local_row_start()[static_cast<size_t>(bi)] + i - l.row_splits()[static_cast<size_t>(bi)];
        const index lc = l.local_col_start()[static_cast<size_t>(bj)] + j - l.col_splits()[static_cast<size_t>(bj)];
        const index offset = lr + lc * l.local_ld();
        const index expected =
            ref_local(gi, c.imb, c.mb, c.rsrc, c.rows) + ref_local(gj, c.inb, c.nb, c.csrc, c.cols) * lld;
        ASSERT_EQ(offset, expected) << "element (" << gi + 1 << "," << gj + 1 << ")";
        max_offset = std::max(max_offset, expected);
      }
    EXPECT_EQ(l.local_elements(), max_offset + 1);
    if (my_row >= 0) {  // inside ScaLAPACK's local array of LLD x LOCc(N_)
      EXPECT_LE(l.local_elements(), lld * ref_numroc(c.n_, c.inb, c.nb, my_col, c.csrc, c.cols));
    }
  }
}

TEST(ScalapackLayout, HandComputedDtype2) {
  // 10 x 7, IMB=2 INB=3 MB=3 NB=2 on a 2x2 grid from (1,0), ranks placed {(0,0)=3,(0,1)=0,(1,0)=2,(1,1)=1}.
  // Rows: 0-1 -> p1 (local 0-1), 2-4 -> p0 (0-2), 5-7 -> p1 (2-4), 8-9 -> p0 (3-4).
  // Columns: 0-2 -> q0 (0-2), 3-4 -> q1 (0-1), 5-6 -> q0 (3-4).
  const auto raw = raw2(0, 10, 7, 2, 3, 3, 2, 1, 0, 6);
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  const sl::process_grid grid = make_grid(2, 2, 1, 0, {3, 0, 2, 1});
  // A(6:9, 3:6): rows 5-8, columns 2-5.
  const grid_layout l = sl::layout_of(4, 4, 6, 3, d, grid, 2);
  EXPECT_EQ(l.row_splits(), (std::vector<index>{0, 3, 4}));
  EXPECT_EQ(l.col_splits(), (std::vector<index>{0, 1, 3, 4}));
  EXPECT_EQ(l.row_proc(), (std::vector<int>{1, 0}));
  EXPECT_EQ(l.col_proc(), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(l.local_row_start(), (std::vector<index>{2, 3}));
  EXPECT_EQ(l.local_col_start(), (std::vector<index>{2, 0, 3}));
  EXPECT_EQ(l.local_ld(), 6);
  EXPECT_EQ(l.owner({0, 0}), 2);
  EXPECT_EQ(l.owner({1, 1}), 0);
  // Rank 2 holds A(6:8, 3) at local (2:4, 2) and A(6:8, 6) at local (2:4, 3): last element 4 + 3*6.
  EXPECT_EQ(l.local_elements(), 4 + 3 * 6 + 1);
}

TEST(ScalapackLayout, RandomDescriptorsMatchScalapackFormulas) {
  std::mt19937_64 rng(test_seed(20261122));
  auto uni = [&](index lo, index hi) { return std::uniform_int_distribution<index>(lo, hi)(rng); };
  for (int iter = 0; iter < 400; ++iter) {
    layout_case c;
    c.dtype = static_cast<int>(uni(1, 2));
    c.rows = static_cast<int>(uni(1, 4));
    c.cols = static_cast<int>(uni(1, 4));
    c.nranks = c.rows * c.cols + static_cast<int>(uni(0, 2));
    std::vector<int> perm(static_cast<size_t>(c.nranks));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    c.ranks.assign(perm.begin(), perm.begin() + c.rows * c.cols);
    c.m_ = uni(0, 9) == 0 ? 0 : uni(1, 40);
    c.n_ = uni(0, 9) == 0 ? 0 : uni(1, 40);
    c.mb = uni(1, 7);
    c.nb = uni(1, 7);
    c.imb = c.dtype == 1 ? c.mb : uni(1, 12);
    c.inb = c.dtype == 1 ? c.nb : uni(1, 12);
    c.rsrc = static_cast<int>(uni(0, c.rows - 1));
    c.csrc = static_cast<int>(uni(0, c.cols - 1));
    // Sub-matrix: sometimes empty, sometimes the whole matrix, else random.
    const index kind = uni(0, 9);
    if (kind == 0) {
      c.m = 0;
      c.n = uni(0, c.n_);
      c.ia = uni(1, 50);  // not checked for an empty sub-matrix
      c.ja = uni(1, c.n_ - c.n + 1);
    } else if (kind == 1) {
      c.n = 0;
      c.m = uni(0, c.m_);
      c.ia = uni(1, c.m_ - c.m + 1);
      c.ja = uni(1, 50);
    } else if (kind == 2) {
      c.m = c.m_, c.n = c.n_, c.ia = 1, c.ja = 1;
    } else {
      c.m = uni(0, c.m_);
      c.n = uni(0, c.n_);
      c.ia = uni(1, c.m_ - c.m + 1);
      c.ja = uni(1, c.n_ - c.n + 1);
    }
    c.lld_extra.resize(static_cast<size_t>(c.nranks));
    for (auto& e : c.lld_extra) e = uni(0, 1) == 0 ? 0 : uni(1, 5);
    check_layout_case(c);
    if (HasFatalFailure()) return;
  }
}

TEST(ScalapackLayout, EmptySubMatrixIgnoresTheDescriptor) {
  const auto raw = raw2(0, -5, 3, 0, 0, 0, 0, 9, 9, 0);  // nonsense everywhere
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  const sl::process_grid grid = make_grid(2, 2, 0, 0);
  for (int rank = -1; rank < 5; ++rank) {
    const grid_layout a = sl::layout_of(0, 6, 100, 100, d, grid, rank);
    EXPECT_EQ(a.rows(), 0);
    EXPECT_EQ(a.cols(), 6);
    EXPECT_EQ(a.local_elements(), 0);
    EXPECT_NO_THROW(a.validate_global(5));
    EXPECT_NO_THROW(a.validate_local());
    const grid_layout b = sl::layout_of(3, 0, 1, 1, d, grid, rank);
    EXPECT_EQ(b.rows(), 3);
    EXPECT_EQ(b.cols(), 0);
    EXPECT_EQ(b.local_elements(), 0);
  }
  const int unknown[2] = {7, 0};
  EXPECT_NO_THROW(sl::layout_of(0, 0, 1, 1, sl::parse_descriptor(unknown), grid, 0));
}

TEST(ScalapackLayout, SmallLeadingDimensionAllowedWhereNothingIsStored) {
  // 4 x 4 in one block at (0,0) of a 2x2 grid: ranks 1, 2, 3 hold nothing and may pass LLD 0.
  const sl::process_grid grid = make_grid(2, 2, 1, 1);
  const auto raw = raw1(0, 4, 4, 4, 4, 0, 0, 0);
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  for (int rank = 1; rank < 4; ++rank) {
    const grid_layout l = sl::layout_of(4, 4, 1, 1, d, grid, rank);
    EXPECT_EQ(l.local_elements(), 0);
    EXPECT_GE(l.local_ld(), 1);
  }
  EXPECT_THROW(sl::layout_of(4, 4, 1, 1, d, grid, 0), redist::invalid_argument);
  // A rank outside the grid ignores its LLD.
  EXPECT_NO_THROW(sl::layout_of(4, 4, 1, 1, d, grid, 9));
}

TEST(ScalapackLayout, RejectsWhatItCannotDescribe) {
  const sl::process_grid grid = make_grid(2, 3, 0, 0);
  const auto good = raw2(0, 20, 30, 3, 4, 5, 6, 1, 2, 40);
  const sl::descriptor ok = sl::parse_descriptor(good.data());
  ASSERT_NO_THROW(sl::layout_of(4, 5, 2, 3, ok, grid, 0));
  auto with = [&](int entry, int value) {
    auto raw = good;
    raw[static_cast<size_t>(entry - 1)] = value;
    return sl::parse_descriptor(raw.data());
  };
  auto throws = [&](std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja, const sl::descriptor& d,
                    const sl::process_grid& g, int rank) {
    EXPECT_THROW(sl::layout_of(m, n, ia, ja, d, g, rank), redist::invalid_argument)
        << m << "x" << n << " at " << ia << "," << ja;
  };
  throws(-1, 5, 2, 3, ok, grid, 0);
  throws(4, -1, 2, 3, ok, grid, 0);
  const int unknown[2] = {3, 0};
  throws(4, 5, 2, 3, sl::parse_descriptor(unknown), grid, 0);
  throws(4, 5, 2, 3, with(5, 0), grid, 0);   // IMB
  throws(4, 5, 2, 3, with(6, 0), grid, 0);   // INB
  throws(4, 5, 2, 3, with(7, 0), grid, 0);   // MB
  throws(4, 5, 2, 3, with(8, -2), grid, 0);  // NB
  throws(4, 5, 2, 3, with(9, -1), grid, 0);  // RSRC replicated
  throws(4, 5, 2, 3, with(9, 2), grid, 0);   // RSRC beyond the grid
  throws(4, 5, 2, 3, with(10, -1), grid, 0);
  throws(4, 5, 2, 3, with(10, 3), grid, 0);
  throws(4, 5, 0, 3, ok, grid, 0);           // IA < 1
  throws(4, 5, 18, 3, ok, grid, 0);          // IA+M-1 = 21 > 20
  throws(4, 5, 2, 0, ok, grid, 0);           // JA < 1
  throws(4, 5, 2, 27, ok, grid, 0);          // JA+N-1 = 31 > 30
  throws(4, 5, 2, 3, with(11, 1), grid, 0);  // LLD below the local rows of rank 0 (position (0,0))
  // Invalid grids.
  sl::process_grid g = grid;
  g.position_ranks.pop_back();
  throws(4, 5, 2, 3, ok, g, 0);
  g = grid;
  g.position_ranks[1] = g.position_ranks[0];
  throws(4, 5, 2, 3, ok, g, 0);
  g = grid;
  g.position_ranks[2] = -3;
  throws(4, 5, 2, 3, ok, g, 0);
  g = make_grid(0, 3, -1, -1, {});
  throws(4, 5, 2, 3, ok, g, 0);
  g = grid;
  g.my_row = 2;
  throws(4, 5, 2, 3, ok, g, 0);
  g = grid;
  g.my_col = -1;  // half outside
  throws(4, 5, 2, 3, ok, g, 0);
}

TEST(ScalapackLayout, GridValidateAcceptsOutsideProcesses) {
  EXPECT_NO_THROW(make_grid(2, 2, -1, -1).validate());
  EXPECT_NO_THROW(make_grid(1, 1, 0, 0, {5}).validate());
}

// ---- PBLAS checks (PB_Cchkmat) ---------------------------------------------------------------------------

// A 2x3 grid, this process at (1, 2); context 7. A valid DTYPE 2 operand checked with DESC at position 7,
// M at 1 and N at 2 (so IA at 5, JA at 6), as p?tran checks its A.
struct chk_fixture {
  sl::process_grid grid = make_grid(2, 3, 1, 2);
  std::array<int, 11> raw = raw2(7, 20, 30, 3, 4, 5, 6, 1, 2, 0);
  index m = 4, n = 5, ia = 2, ja = 3;

  chk_fixture() {
    raw[10] = static_cast<int>(std::max<index>(1, ref_numroc(20, 3, 5, 1, 1, 2)));  // minimal LLD
  }
  sl::descriptor desc() const { return sl::parse_descriptor(raw.data()); }
  int check(int info = 0, sl::entry_numbering num = sl::entry_numbering::pblas) const {
    return sl::check_matrix(grid, 7, m, 1, n, 2, ia, ja, desc(), 7, info, num);
  }
};

TEST(ScalapackCheckMatrix, ValidOperand) {
  chk_fixture f;
  EXPECT_EQ(f.check(), 0);
  // Replicated rows/columns (-1) are legal for PBLAS; LLD must then hold all M_ rows.
  f.raw[8] = -1;
  f.raw[10] = 20;
  EXPECT_EQ(f.check(), 0);
  f.raw[9] = -1;
  EXPECT_EQ(f.check(), 0);
}

TEST(ScalapackCheckMatrix, ScalarArguments) {
  chk_fixture f;
  f.m = -1;
  EXPECT_EQ(f.check(), -1);
  f = chk_fixture{};
  f.n = -3;
  EXPECT_EQ(f.check(), -2);
  f = chk_fixture{};
  f.ia = 0;
  EXPECT_EQ(f.check(), -5);
  f = chk_fixture{};
  f.ja = -4;
  EXPECT_EQ(f.check(), -6);
  f = chk_fixture{};
  f.ia = 17;  // IA+M-1 = 20 fits, 18 does not
  EXPECT_EQ(f.check(), 0);
  f.ia = 18;
  EXPECT_EQ(f.check(), -5);
  f = chk_fixture{};
  f.ja = 27;
  EXPECT_EQ(f.check(), -6);
  f.ja = 26;
  EXPECT_EQ(f.check(), 0);
}

TEST(ScalapackCheckMatrix, DescriptorEntries) {
  auto code = [](int entry, int value) {
    chk_fixture f;
    f.raw[static_cast<size_t>(entry - 1)] = value;
    return f.check();
  };
  EXPECT_EQ(code(1, 3), -701);  // DTYPE
  EXPECT_EQ(code(1, 0), -701);
  EXPECT_EQ(code(2, 8), -702);   // CTXT differs from the operation's
  EXPECT_EQ(code(3, 0), -703);   // M_ < 1 for a non-empty operand
  EXPECT_EQ(code(4, 0), -704);   // N_ < 1
  EXPECT_EQ(code(5, 0), -705);   // IMB
  EXPECT_EQ(code(6, 0), -706);   // INB
  EXPECT_EQ(code(7, -1), -707);  // MB
  EXPECT_EQ(code(8, 0), -708);   // NB
  EXPECT_EQ(code(9, -2), -709);  // RSRC < -1
  EXPECT_EQ(code(9, 2), -709);   // RSRC >= grid rows
  EXPECT_EQ(code(10, 3), -710);  // CSRC >= grid columns
  EXPECT_EQ(code(10, -5), -710);
  EXPECT_EQ(code(11, 0), -711);  // LLD < 1
  chk_fixture f;
  f.raw[10] -= 1;  // one below this process's local rows, and it holds columns
  ASSERT_GT(ref_numroc(30, 4, 6, 2, 2, 3), 0);
  EXPECT_EQ(f.check(), -711);
}

TEST(ScalapackCheckMatrix, ProcessOutsideTheGridIsAContextError) {
  chk_fixture f;
  f.grid.my_row = f.grid.my_col = -1;
  EXPECT_EQ(f.check(), -702);
}

TEST(ScalapackCheckMatrix, EmptyOperandRelaxesChecks) {
  chk_fixture f;
  f.m = 0;
  f.ia = 100;  // out of bounds, not checked
  f.raw[10] = 1;
  EXPECT_EQ(f.check(), 0);
  f.raw[2] = 0;  // M_ = 0 is fine
  EXPECT_EQ(f.check(), 0);
  f.raw[2] = -1;
  EXPECT_EQ(f.check(), -703);
  f = chk_fixture{};
  f.n = 0;
  f.raw[3] = -1;
  EXPECT_EQ(f.check(), -704);
  f = chk_fixture{};
  f.n = 0;
  f.raw[10] = 0;
  EXPECT_EQ(f.check(), -711);
  // Block sizes, sources and IA >= 1 are still checked.
  f = chk_fixture{};
  f.m = 0;
  f.raw[6] = 0;
  EXPECT_EQ(f.check(), -707);
  f.raw[6] = 5;
  f.ia = 0;
  EXPECT_EQ(f.check(), -5);
}

TEST(ScalapackCheckMatrix, LeadingDimensionOnlyMattersWhereColumnsAre) {
  // N_ = 4 in one block column at grid column 0: this process (column 2) holds no columns.
  chk_fixture f;
  f.raw[3] = 4;
  f.raw[5] = 4;
  f.raw[9] = 0;
  f.n = 2;
  f.ja = 1;
  ASSERT_EQ(ref_numroc(4, 4, 6, 2, 0, 3), 0);
  f.raw[10] = 1;  // far below the local rows, still legal
  EXPECT_EQ(f.check(), 0);
  f.raw[10] = 0;  // but never below 1
  EXPECT_EQ(f.check(), -711);
}

TEST(ScalapackCheckMatrix, SmallestPositionWins) {
  chk_fixture f;
  f.raw[4] = 0;  // IMB  -> 705
  f.raw[8] = 9;  // RSRC -> 709
  EXPECT_EQ(f.check(), -705);
  f.ja = 0;  // -> 6
  EXPECT_EQ(f.check(), -6);
  f.m = -1;  // -> 1
  EXPECT_EQ(f.check(), -1);
  // A wrong DTYPE stops the descriptor checks but the scalars before it still count.
  f = chk_fixture{};
  f.raw[0] = 9;
  f.raw[4] = 0;
  EXPECT_EQ(f.check(), -701);
  f.ia = 0;
  EXPECT_EQ(f.check(), -5);
}

TEST(ScalapackCheckMatrix, ContextMismatchHidesTheBoundsCheck) {
  // As in the reference: the context test returns before IA+M-1 > M_ is examined.
  chk_fixture f;
  f.ia = 19;
  EXPECT_EQ(f.check(), -5);
  f.raw[1] = 99;
  EXPECT_EQ(f.check(), -702);
  f.ia = 0;  // IA < 1 is examined before the context
  EXPECT_EQ(f.check(), -5);
}

TEST(ScalapackCheckMatrix, LeadingDimensionSkippedAfterEarlierErrors) {
  chk_fixture f;
  f.raw[10] = 1;  // below the local rows
  ASSERT_GT(ref_numroc(20, 3, 5, 1, 1, 2), 1);
  EXPECT_EQ(f.check(), -711);
  EXPECT_EQ(f.check(-1), -1);
  // LLD is only examined when no error has been found at all, even one at a later position.
  EXPECT_EQ(f.check(-1203), -1203);
  f.ia = 0;
  EXPECT_EQ(f.check(), -5);
}

TEST(ScalapackCheckMatrix, IncomingInfoIsMerged) {
  chk_fixture f;
  EXPECT_EQ(f.check(-3), -3);
  EXPECT_EQ(f.check(-702), -702);
  f.raw[4] = 0;                     // -705
  EXPECT_EQ(f.check(-1203), -705);  // smaller position wins
  EXPECT_EQ(f.check(-704), -704);
  EXPECT_EQ(f.check(-8), -705);  // position 8 > 7
  EXPECT_EQ(f.check(-6), -6);
}

TEST(ScalapackCheckMatrix, Dtype1EntryNumbering) {
  // 9-entry descriptor: PBLAS reports entries of the normalized 11-entry form.
  const sl::process_grid grid = make_grid(2, 3, 1, 2);
  const index np = ref_numroc(20, 5, 5, 1, 1, 2);
  auto code = [&](int entry, int value, sl::entry_numbering num) {
    auto raw = raw1(7, 20, 30, 5, 6, 1, 2, static_cast<int>(np));
    raw[static_cast<size_t>(entry - 1)] = value;
    return sl::check_matrix(grid, 7, 4, 1, 5, 2, 2, 3, sl::parse_descriptor(raw.data()), 7, 0, num);
  };
  const auto pblas = sl::entry_numbering::pblas, caller = sl::entry_numbering::caller;
  EXPECT_EQ(code(1, 4, pblas), -701);
  EXPECT_EQ(code(1, 4, caller), -701);
  EXPECT_EQ(code(2, 1, pblas), -702);
  EXPECT_EQ(code(3, 0, pblas), -703);
  EXPECT_EQ(code(3, 0, caller), -703);
  EXPECT_EQ(code(4, 0, caller), -704);
  EXPECT_EQ(code(5, 0, pblas), -705);  // MB: found as IMB (entry 5), which is MB's own position too
  EXPECT_EQ(code(5, 0, caller), -705);
  EXPECT_EQ(code(6, 0, pblas), -706);  // NB: found as INB
  EXPECT_EQ(code(6, 0, caller), -706);
  EXPECT_EQ(code(7, 2, pblas), -709);  // RSRC
  EXPECT_EQ(code(7, 2, caller), -707);
  EXPECT_EQ(code(8, 3, pblas), -710);  // CSRC
  EXPECT_EQ(code(8, 3, caller), -708);
  EXPECT_EQ(code(9, 0, pblas), -711);  // LLD
  EXPECT_EQ(code(9, 0, caller), -709);
  // Unknown types read with the PBLAS fallback: DTYPE.
  const int unknown[2] = {6, 7};
  EXPECT_EQ(sl::check_matrix(grid, 7, 4, 1, 5, 2, 2, 3, sl::parse_descriptor(unknown), 7), -701);
}

TEST(ScalapackCheckMatrix, Dtype2CallerNumberingIsTheSame) {
  for (int entry : {5, 6, 7, 8, 9, 10, 11}) {
    chk_fixture f;
    f.raw[static_cast<size_t>(entry - 1)] = entry == 9 ? 5 : entry == 10 ? 5 : 0;
    EXPECT_EQ(f.check(0, sl::entry_numbering::caller), -(700 + entry)) << "entry " << entry;
  }
}

// ---- p?tran ----------------------------------------------------------------------------------------------

// sub( C ) (m x n) := beta*sub( C ) + alpha*sub( A )'; A is n x m. A: 12 x 9, C: 9 x 12, DTYPE 1 and 2.
struct tran_fixture {
  sl::process_grid grid = make_grid(2, 2, 0, 1);
  std::array<int, 9> a = raw1(4, 12, 9, 3, 2, 0, 1, 0);
  std::array<int, 11> c = raw2(4, 9, 12, 1, 5, 2, 3, 1, 0, 0);
  index m = 9, n = 12, ia = 1, ja = 1, ic = 1, jc = 1;
  tran_fixture() {
    a[8] = static_cast<int>(std::max<index>(1, ref_numroc(12, 3, 3, 0, 0, 2)));
    c[10] = static_cast<int>(std::max<index>(1, ref_numroc(9, 1, 2, 0, 1, 2)));
  }
  int check() const {
    return sl::check_tran(grid, m, n, ia, ja, sl::parse_descriptor(a.data()), ic, jc, sl::parse_descriptor(c.data()));
  }
};

TEST(ScalapackCheckTran, ValidAndEachErrorCode) {
  tran_fixture t;
  EXPECT_EQ(t.check(), 0);
  {
    tran_fixture u;
    u.grid.my_row = u.grid.my_col = -1;  // A's context not valid here
    u.m = -1;                            // and it wins over everything else
    EXPECT_EQ(u.check(), -702);
  }
  {
    tran_fixture u;
    u.m = -1;
    EXPECT_EQ(u.check(), -1);
  }
  {
    tran_fixture u;
    u.n = -1;
    EXPECT_EQ(u.check(), -2);
  }
  {
    tran_fixture u;
    u.ia = 0;
    EXPECT_EQ(u.check(), -5);
  }
  {
    tran_fixture u;
    u.ja = 0;
    EXPECT_EQ(u.check(), -6);
  }
  {
    tran_fixture u;
    u.n = 12;
    u.ia = 2;
    EXPECT_EQ(u.check(), -5);
  }  // A is N x M: IA+N-1 = 13 > 12
  {
    tran_fixture u;
    u.ja = 2;
    EXPECT_EQ(u.check(), -6);
  }  // JA+M-1 = 10 > 9
  {
    tran_fixture u;
    u.a[0] = 3;
    EXPECT_EQ(u.check(), -701);
  }
  {
    tran_fixture u;
    u.a[4] = 0;
    EXPECT_EQ(u.check(), -705);
  }
  {
    tran_fixture u;
    u.a[6] = 2;
    EXPECT_EQ(u.check(), -709);
  }
  {
    tran_fixture u;
    u.a[8] = 0;
    EXPECT_EQ(u.check(), -711);
  }
  {
    tran_fixture u;
    u.ic = 0;
    EXPECT_EQ(u.check(), -10);
  }
  {
    tran_fixture u;
    u.jc = 0;
    EXPECT_EQ(u.check(), -11);
  }
  {
    tran_fixture u;
    u.ic = 2;
    EXPECT_EQ(u.check(), -10);
  }  // IC+M-1 = 10 > 9
  {
    tran_fixture u;
    u.jc = 2;
    EXPECT_EQ(u.check(), -11);
  }
  {
    tran_fixture u;
    u.c[0] = 0;
    EXPECT_EQ(u.check(), -1201);
  }
  {
    tran_fixture u;
    u.c[1] = 5;
    EXPECT_EQ(u.check(), -1202);
  }  // C in another context
  {
    tran_fixture u;
    u.c[4] = 0;
    EXPECT_EQ(u.check(), -1205);
  }
  {
    tran_fixture u;
    u.c[5] = 0;
    EXPECT_EQ(u.check(), -1206);
  }
  {
    tran_fixture u;
    u.c[9] = 2;
    EXPECT_EQ(u.check(), -1210);
  }
  {
    tran_fixture u;
    u.c[10] = 0;
    EXPECT_EQ(u.check(), -1211);
  }
  // The first operand's error wins; M and N rank before everything.
  {
    tran_fixture u;
    u.a[4] = 0;
    u.c[1] = 5;
    EXPECT_EQ(u.check(), -705);
  }
  {
    tran_fixture u;
    u.jc = 0;
    u.c[4] = 0;
    EXPECT_EQ(u.check(), -11);
  }
  {
    tran_fixture u;
    u.c[4] = 0;
    u.n = -1;
    EXPECT_EQ(u.check(), -2);
  }
  // DTYPE 1 caller numbering for A's LLD.
  {
    tran_fixture u;
    u.a[8] = 0;
    EXPECT_EQ(sl::check_tran(u.grid, u.m, u.n, u.ia, u.ja, sl::parse_descriptor(u.a.data()), u.ic, u.jc,
                             sl::parse_descriptor(u.c.data()), sl::entry_numbering::caller),
              -709);
  }
  // Empty operation: bounds relaxed.
  {
    tran_fixture u;
    u.m = 0;
    u.ic = 50;
    u.ja = 50;
    EXPECT_EQ(u.check(), 0);
  }
}

TEST(ScalapackCheckTran, DescribeInfo) {
  EXPECT_EQ(sl::describe_info(0), "no error");
  EXPECT_NE(sl::describe_info(-5).find("argument 5"), std::string::npos);
  EXPECT_NE(sl::describe_info(-1211).find("argument 12, entry 11"), std::string::npos);
  EXPECT_NE(sl::describe_info(3).find("positive"), std::string::npos);
}

// ---- p?gemm -------------------------------------------------------------------------------------------------

// sub( C ) (m x n) := alpha*op( sub( A ) )*op( sub( B ) ) + beta*sub( C ), op( sub( A ) ) m x k, op( sub( B ) )
// k x n. A: 9 x 7 (TRANSA N), B: 7 x 12 (TRANSB N), C: 9 x 12; A and C DTYPE 1, B DTYPE 2; process (0, 1) of 2x2.
struct gemm_fixture {
  sl::process_grid grid = make_grid(2, 2, 0, 1);
  char transa = 'N', transb = 'n';
  std::array<int, 9> a = raw1(4, 9, 7, 3, 2, 0, 1, 0);
  std::array<int, 11> b = raw2(4, 7, 12, 1, 5, 2, 3, 1, 0, 0);
  std::array<int, 9> c = raw1(4, 9, 12, 2, 2, 1, 1, 0);
  index m = 9, n = 12, k = 7, ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
  gemm_fixture() {
    a[8] = static_cast<int>(std::max<index>(1, ref_numroc(9, 3, 3, 0, 0, 2)));
    b[10] = static_cast<int>(std::max<index>(1, ref_numroc(7, 1, 2, 0, 1, 2)));
    c[8] = static_cast<int>(std::max<index>(1, ref_numroc(9, 2, 2, 0, 1, 2)));
  }
  int check(sl::entry_numbering numbering = sl::entry_numbering::pblas) const {
    return sl::check_gemm(grid, transa, transb, m, n, k, ia, ja, sl::parse_descriptor(a.data()), ib, jb,
                          sl::parse_descriptor(b.data()), ic, jc, sl::parse_descriptor(c.data()), numbering);
  }
};

TEST(ScalapackCheckGemm, ValidAndEachErrorCode) {
  EXPECT_EQ(gemm_fixture().check(), 0);
  {
    gemm_fixture u;
    u.grid.my_row = u.grid.my_col = -1;  // A's context not valid here
    u.transa = 'X';                      // and it wins over everything else
    EXPECT_EQ(u.check(), -1002);
  }
  {
    gemm_fixture u;
    u.transa = 'X';
    EXPECT_EQ(u.check(), -1);
  }
  {
    gemm_fixture u;
    u.transb = 'x';
    EXPECT_EQ(u.check(), -2);
  }
  {
    gemm_fixture u;
    u.transa = 'Y';
    u.transb = 'Z';
    EXPECT_EQ(u.check(), -1);
  }  // TRANSA first
  {
    gemm_fixture u;
    u.transb = '?';
    u.m = -1;
    EXPECT_EQ(u.check(), -2);
  }  // TRANS before M
  {
    gemm_fixture u;
    u.m = -1;
    EXPECT_EQ(u.check(), -3);
  }
  {
    gemm_fixture u;
    u.n = -1;
    EXPECT_EQ(u.check(), -4);
  }
  {
    gemm_fixture u;
    u.k = -1;
    EXPECT_EQ(u.check(), -5);
  }
  {
    gemm_fixture u;
    u.ia = 0;
    EXPECT_EQ(u.check(), -8);
  }
  {
    gemm_fixture u;
    u.ja = 2;
    EXPECT_EQ(u.check(), -9);
  }  // JA+K-1 = 8 > 7
  {
    gemm_fixture u;
    u.k = 8;
    EXPECT_EQ(u.check(), -9);
  }  // K beyond A's columns (B's rows too: A first)
  {
    gemm_fixture u;
    u.a[0] = 3;
    EXPECT_EQ(u.check(), -1001);
  }
  {
    gemm_fixture u;
    u.a[5] = 0;
    EXPECT_EQ(u.check(), -1006);
  }  // DTYPE 1 NB is INB, entry 6
  {
    gemm_fixture u;
    u.a[8] = 1;
    EXPECT_EQ(u.check(), -1011);
  }
  {
    gemm_fixture u;
    u.ib = 2;
    EXPECT_EQ(u.check(), -12);
  }  // IB+K-1 = 8 > 7
  {
    gemm_fixture u;
    u.jb = 0;
    EXPECT_EQ(u.check(), -13);
  }
  {
    gemm_fixture u;
    u.b[1] = 5;
    EXPECT_EQ(u.check(), -1402);
  }  // B in another context
  {
    gemm_fixture u;
    u.b[9] = 2;
    EXPECT_EQ(u.check(), -1410);
  }
  {
    gemm_fixture u;
    u.b[10] = 0;
    EXPECT_EQ(u.check(), -1411);
  }
  {
    gemm_fixture u;
    u.ic = 2;
    EXPECT_EQ(u.check(), -17);
  }  // IC+M-1 = 10 > 9
  {
    gemm_fixture u;
    u.jc = 0;
    EXPECT_EQ(u.check(), -18);
  }
  {
    gemm_fixture u;
    u.c[1] = 5;
    EXPECT_EQ(u.check(), -1902);
  }  // C in another context
  {
    gemm_fixture u;
    u.c[4] = 0;
    EXPECT_EQ(u.check(), -1905);
  }
  {
    gemm_fixture u;
    u.c[8] = 0;
    EXPECT_EQ(u.check(), -1911);
  }
  // The smallest position wins: a descriptor entry of argument 14 before a scalar argument 18.
  {
    gemm_fixture u;
    u.b[1] = 5;
    u.c[4] = 0;
    EXPECT_EQ(u.check(), -1402);
  }
  {
    gemm_fixture u;
    u.jc = 0;
    u.b[10] = 0;
    EXPECT_EQ(u.check(), -1411);
  }
  {
    gemm_fixture u;
    u.c[8] = 0;
    u.n = -1;
    EXPECT_EQ(u.check(), -4);
  }
  // DTYPE 1 caller numbering for C's LLD.
  {
    gemm_fixture u;
    u.c[8] = 0;
    EXPECT_EQ(u.check(sl::entry_numbering::caller), -1909);
  }
  // Empty operation: bounds relaxed (A and B are 9 x 0 and 0 x 12; C's bounds still count).
  {
    gemm_fixture u;
    u.k = 0;
    u.ja = 50;
    u.ib = 50;
    EXPECT_EQ(u.check(), 0);
  }
  {
    gemm_fixture u;
    u.m = 0;
    u.ia = 50;
    u.ic = 50;
    EXPECT_EQ(u.check(), 0);
  }
}

// A transposed operand is checked in its stored shape: op( sub( A ) ) = sub( A )' is M x K, so sub( A ) is K x M.
TEST(ScalapackCheckGemm, TransposedOperandsAreCheckedAsStored) {
  for (const char t : {'T', 't', 'C', 'c'}) {
    gemm_fixture u;
    u.transa = t;
    u.a = raw1(4, 7, 9, 3, 2, 0, 1, 0);  // K x M
    u.a[8] = static_cast<int>(ref_numroc(7, 3, 3, 0, 0, 2));
    EXPECT_EQ(u.check(), 0) << t;
    u.ja = 2;  // JA+M-1 = 10 > 9
    EXPECT_EQ(u.check(), -9) << t;
    gemm_fixture v;
    v.transb = t;
    v.b = raw2(4, 12, 7, 1, 5, 2, 3, 1, 0, 0);  // N x K
    v.b[10] = static_cast<int>(ref_numroc(12, 1, 2, 0, 1, 2));
    EXPECT_EQ(v.check(), 0) << t;
    v.ib = 2;  // IB+N-1 = 13 > 12
    EXPECT_EQ(v.check(), -12) << t;
  }
  // A wrong TRANSA is reported first, and A is looked at as K x M (as the reference does).
  gemm_fixture u;
  u.transa = 'Q';
  u.m = 4;
  u.k = 7;
  EXPECT_EQ(u.check(), -1);
}

// ---- REDIST p?gemr2d checks ------------------------------------------------------------------------------

TEST(ScalapackGemr2d, EachProblem) {
  const sl::process_grid in = make_grid(2, 2, 1, 0), out = make_grid(2, 2, -1, -1);
  auto raw = raw1(0, 10, 8, 3, 2, 1, 0, 0);
  const index np = ref_numroc(10, 3, 3, 1, 1, 2);  // process row 1 holds the first block
  raw[8] = static_cast<int>(np);
  auto check = [&](index m, index n, index ia, index ja, const std::array<int, 9>& r, const sl::process_grid& g) {
    return sl::check_gemr2d_operand(m, n, ia, ja, sl::parse_descriptor(r.data()), g);
  };
  using P = sl::gemr2d_problem;
  EXPECT_EQ(check(4, 3, 2, 6, raw, in), P::none);
  EXPECT_EQ(check(10, 8, 1, 1, raw, out), P::none);
  // Empty: nothing looked at.
  auto junk = raw;
  junk[4] = 0;
  junk[6] = 7;
  EXPECT_EQ(check(0, 3, -4, 99, junk, in), P::none);
  EXPECT_EQ(check(5, 0, -4, 99, junk, in), P::none);
  // First process coordinates (replication -1 included), on every process.
  for (const auto* g : {&in, &out}) {
    auto r = raw;
    r[6] = -1;
    EXPECT_EQ(check(4, 3, 2, 6, r, *g), P::source_process);
    r[6] = 2;
    EXPECT_EQ(check(4, 3, 2, 6, r, *g), P::source_process);
    r = raw;
    r[7] = 2;
    EXPECT_EQ(check(4, 3, 2, 6, r, *g), P::source_process);
    EXPECT_EQ(check(4, 3, 0, 6, raw, *g), P::submatrix);
    EXPECT_EQ(check(4, 3, 2, 0, raw, *g), P::submatrix);
    EXPECT_EQ(check(4, 3, 8, 6, raw, *g), P::submatrix);  // IA+M-1 = 11 > 10
    EXPECT_EQ(check(4, 3, 2, 7, raw, *g), P::submatrix);  // JA+N-1 = 9 > 8
    r = raw;
    r[4] = 0;
    EXPECT_EQ(check(4, 3, 2, 6, r, *g), P::block_size);
    r = raw;
    r[5] = -1;
    EXPECT_EQ(check(4, 3, 2, 6, r, *g), P::block_size);
  }
  // Source coordinates are examined before the sub-matrix.
  auto r = raw;
  r[6] = 5;
  EXPECT_EQ(check(4, 3, 0, 0, r, in), P::source_process);
  // Leading dimension: only on the grid, and whatever the local columns.
  r = raw;
  r[8] = static_cast<int>(np) - 1;
  EXPECT_EQ(check(4, 3, 2, 6, r, in), P::leading_dimension);
  EXPECT_EQ(check(4, 3, 2, 6, r, out), P::none);
  r[8] = 0;
  auto no_cols = r;  // 10 x 1: grid column 1 holds no columns; REDIST still wants LLD >= local rows
  no_cols[3] = 1;
  const sl::process_grid in_col1 = make_grid(2, 2, 1, 1);
  EXPECT_EQ(check(4, 1, 2, 1, no_cols, in_col1), P::leading_dimension);
  // The reference has no test of M < 0 or N < 0.
  EXPECT_EQ(check(-1, 3, 2, 6, raw, in), P::none);
}

TEST(ScalapackGemr2d, Messages) {
  const sl::process_grid g = make_grid(2, 2, 1, 0);
  const auto raw = raw1(0, 10, 8, 3, 2, 5, 0, 1);
  const sl::descriptor d = sl::parse_descriptor(raw.data());
  for (auto p : {sl::gemr2d_problem::none, sl::gemr2d_problem::source_process, sl::gemr2d_problem::submatrix,
                 sl::gemr2d_problem::block_size, sl::gemr2d_problem::leading_dimension})
    EXPECT_FALSE(sl::describe_gemr2d_problem(p, "A", 4, 3, 2, 6, d, g).empty());
  EXPECT_NE(sl::describe_gemr2d_problem(sl::gemr2d_problem::source_process, "B", 4, 3, 2, 6, d, g).find("matrix B"),
            std::string::npos);
}

}  // namespace
