// SPDX-License-Identifier: BSD-3-Clause
// redist_p?gemr2d (the prefixed twins of ScaLAPACK's REDIST p?gemr2d) on random cases: random grids of
// random shapes on random subsets of the ranks in random order (BLACS gridmap), A and B on different
// contexts, a global context of another shape, random descriptors (their DTYPE unset on one rank or on all,
// as ScaLAPACK's own REDIST testers leave it) and sub-matrices. Checked element by element against the
// analytic values (every element of B's local array: the sub-matrix gets A's values, everything else keeps
// its own), and against Debian's reference p?gemr2d on the same data.
// redist-test-ranks: 1 2 3 4 6 8
// (no 7: a 1 x 7 grid is prime like 3's, and 7 oversubscribed ranks cost the suite a minute per program)
// redist-test-needs: scalapack
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "redist/scalapack/descriptor.hpp"
#include "scalapack/plan_cache.hpp"
#include "scalapack_cases.hpp"
#include "test_seed.hpp"

extern "C" {
void pigemr2d_(const int*, const int*, const int*, const int*, const int*, const int*, int*, const int*, const int*,
               const int*, const int*);
void psgemr2d_(const int*, const int*, const float*, const int*, const int*, const int*, float*, const int*, const int*,
               const int*, const int*);
void pdgemr2d_(const int*, const int*, const double*, const int*, const int*, const int*, double*, const int*,
               const int*, const int*, const int*);
void pcgemr2d_(const int*, const int*, const std::complex<float>*, const int*, const int*, const int*,
               std::complex<float>*, const int*, const int*, const int*, const int*);
void pzgemr2d_(const int*, const int*, const std::complex<double>*, const int*, const int*, const int*,
               std::complex<double>*, const int*, const int*, const int*, const int*);
}

using namespace redist::testing;
namespace sl = redist::scalapack;

namespace {

template <class T>
void call_redist(int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb, const int* descb,
                 int ctxt) {
  if constexpr (std::is_same_v<T, int>) redist_pigemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>) redist_psgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>) redist_Cpdgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    redist_pcgemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    redist_pzgemr2d(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
}
template <class T>
void call_reference(int m, int n, const T* a, int ia, int ja, const int* desca, T* b, int ib, int jb, const int* descb,
                    int ctxt) {
  if constexpr (std::is_same_v<T, int>) pigemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, float>) psgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, double>) pdgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<float>>)
    pcgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
  if constexpr (std::is_same_v<T, std::complex<double>>)
    pzgemr2d_(&m, &n, a, &ia, &ja, desca, b, &ib, &jb, descb, &ctxt);
}

// Each case makes its call `calls` times on the same contexts (B anew each time): the first call builds the
// copy's plan (none for an empty copy), the others reuse it.
template <class T>
void random_cases(std::uint64_t seed, int cases, int calls = 1) {
  const int nranks = world_size();
  rng_t g(test_seed(seed));
  for (int k = 0; k < cases; ++k) {
    const auto [shape_a, ranks_a] = random_grid(g, nranks);
    const auto [shape_b, ranks_b] = random_grid(g, nranks);
    const auto [global_shape, all] = random_full_grid(g, nranks);
    blacs_context ga(shape_a.first, shape_a.second, ranks_a);
    blacs_context gb(shape_b.first, shape_b.second, ranks_b);
    blacs_context global(global_shape.first, global_shape.second, all);
    // DTYPE as the REDIST testers leave it: 1 everywhere, unset (garbage) on one process, or garbage everywhere;
    // REDIST reads every descriptor as 9 DTYPE 1 entries, and so does redist.
    const int dtype_garbage = static_cast<int>(uniform(g, 0, 2));
    const int dtype_garbage_rank = static_cast<int>(uniform(g, 0, nranks - 1));
    const int m = static_cast<int>(uniform(g, 0, 3) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const int n = static_cast<int>(uniform(g, 0, 3) == 0 ? uniform(g, 0, 1) : uniform(g, 1, 40));
    const int ia = static_cast<int>(uniform(g, 1, 6)), ja = static_cast<int>(uniform(g, 1, 6));
    const int ib = static_cast<int>(uniform(g, 1, 6)), jb = static_cast<int>(uniform(g, 1, 6));
    const matrix_case ca = random_matrix(g, 1, ia - 1 + m, ja - 1 + n, shape_a.first, shape_a.second);
    const matrix_case cb = random_matrix(g, 1, ib - 1 + m, jb - 1 + n, shape_b.first, shape_b.second);
    std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
    if (dtype_garbage == 2 || (dtype_garbage == 1 && world_rank() == dtype_garbage_rank)) {
      desca[0] = 0x5eed + k;  // any value: 2 (DTYPE 2) and unknown types are read as DTYPE 1 alike
      descb[0] = k % 2 == 0 ? 2 : -1;
    }
    const std::vector<T> a = make_local<T>(ca, ga, desca, 0);
    const auto where = [&] {
      return "case " + std::to_string(k) + ": m " + std::to_string(m) + " n " + std::to_string(n) + " DTYPE garbage " +
             std::to_string(dtype_garbage) + " A grid " + std::to_string(shape_a.first) + "x" +
             std::to_string(shape_a.second) + " B grid " + std::to_string(shape_b.first) + "x" +
             std::to_string(shape_b.second) + " global " + std::to_string(global_shape.first) + "x" +
             std::to_string(global_shape.second);
    };
    const std::size_t made_before = sl::plans_made(), promoted_before = sl::plans_promoted();
    for (int call = 0; call < calls; ++call) {
      std::vector<T> b = make_local<T>(cb, gb, descb, 1);
      std::vector<T> reference = b;
      call_redist<T>(m, n, a.data(), ia, ja, desca.data(), b.data(), ib, jb, descb.data(), global.context);
      call_reference<T>(m, n, a.data(), ia, ja, desca.data(), reference.data(), ib, jb, descb.data(), global.context);
      // Plans are cached on the global context's communicator, new in this case.
      const std::size_t made = sl::plans_made() - made_before, expected_made = m > 0 && n > 0 ? 1 : 0;
      // These copies are small (under 1 MiB per rank): the first call's one-shot plan is what a repeated call
      // would plan, so it is kept (OneShotPlanReplacedOnlyWhereARepeatedPlanDiffers covers the replacement).
      const std::size_t promoted = sl::plans_promoted() - promoted_before, expected_promoted = 0;

      std::int64_t wrong = 0, differ = 0;
      if (gb.holds_me()) {
        const std::int64_t lld = descb[8];
        const std::int64_t rows = sl::numroc(cb.M, cb.imb, cb.mb, gb.my_row, cb.rsrc, gb.rows);
        const std::int64_t cols = sl::numroc(cb.N, cb.inb, cb.nb, gb.my_col, cb.csrc, gb.cols);
        for (std::int64_t lj = 0; lj < std::max<std::int64_t>(cols, 1); ++lj)
          for (std::int64_t li = 0; li < lld; ++li) {
            const size_t at = static_cast<size_t>(li + lj * lld);
            T expected = value_of<T>(-7, -7, 1);  // padding
            if (li < rows && lj < cols) {
              const std::int64_t i = global_index(li, cb.imb, cb.mb, cb.rsrc, gb.rows, gb.my_row);
              const std::int64_t j = global_index(lj, cb.inb, cb.nb, cb.csrc, gb.cols, gb.my_col);
              const bool inside = i >= ib - 1 && i < ib - 1 + m && j >= jb - 1 && j < jb - 1 + n;
              expected =
                  inside ? value_of<T>(i - (ib - 1) + (ia - 1), j - (jb - 1) + (ja - 1), 0) : value_of<T>(i, j, 1);
            }
            if (b[at] != expected) ++wrong;
            if (b[at] != reference[at]) ++differ;
          }
      }
      EXPECT_EQ(global_sum(wrong), 0) << where() << " call " << call;
      EXPECT_EQ(global_sum(differ), 0) << where() << " call " << call << " (against the reference pdgemr2d)";
      EXPECT_TRUE(all_ranks(made == expected_made)) << where() << " call " << call << ": " << made << " plan(s) built";
      EXPECT_TRUE(all_ranks(promoted == expected_promoted))
          << where() << " call " << call << ": " << promoted << " one-shot plan(s) replaced";
    }
  }
}

}  // namespace

TEST(ScalapackGemr2d, RandomCasesDouble) { random_cases<double>(7101, 12); }
TEST(ScalapackGemr2d, RandomCasesInt) { random_cases<int>(7102, 5); }
TEST(ScalapackGemr2d, RandomCasesFloat) { random_cases<float>(7103, 5); }
TEST(ScalapackGemr2d, RandomCasesComplexFloat) { random_cases<std::complex<float>>(7104, 5); }
TEST(ScalapackGemr2d, RandomCasesComplexDouble) { random_cases<std::complex<double>>(7105, 5); }

// The same call repeated reuses its plan (no other is built) and stays correct (the cache is keyed by
// everything the ranks agreed on).
TEST(ScalapackGemr2d, RepeatedCallsReusePlans) { random_cases<double>(7106, 4, 3); }

// A key's first call is planned for one execution; a later call replaces that plan, once, where a plan for
// repeated calls differs (from 1 MiB sent per rank on several ranks: point_to_point for one call, shared_memory
// for many), and never where it would not (a small copy: re-planning would cost about one more execution). The
// replacement comes on the third call where the process has made none yet, otherwise on the call by which the
// one-shot plan's executions have cost what the latest replacement did, by the 16th at the latest: a second large
// key (its target's blocks 96 x 96) is replaced somewhere from its second to its 16th call, on every rank at once.
// 32 x 32 blocks on a 1 x P grid -> 128 x 128 blocks on P x 1, each case on new contexts, every call checked.
TEST(ScalapackGemr2d, OneShotPlanReplacedOnlyWhereARepeatedPlanDiffers) {
  const int nranks = world_size();
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  // 1200^2 doubles: 0.9-2.9 MB sent per rank at 2-8 ranks (between the 1 MiB and 12 MiB thresholds).
  for (const auto& [size, target_block] : {std::pair<int, int>{40, 128}, {1200, 128}, {1200, 96}}) {
    // Fresh contexts: no shared window on their communicator yet, so the large one-shot plans take point_to_point.
    blacs_context row(1, nranks, ranks), column(nranks, 1, ranks);
    matrix_case ca, cb;
    ca.M = ca.N = cb.M = cb.N = size;
    ca.mb = ca.nb = ca.imb = ca.inb = 32;
    cb.mb = cb.nb = cb.imb = cb.inb = target_block;
    const std::vector<int> desca = make_descriptor(ca, row), descb = make_descriptor(cb, column);
    const std::vector<double> a = make_local<double>(ca, row, desca, 0);
    const bool replaced = size == 1200 && nranks > 1;
    const std::size_t made_before = sl::plans_made(), promoted_before = sl::plans_promoted();
    int replaced_on = 0;            // 1-based call
    bool first_in_process = false;  // the process had replaced none before this key's second call
    for (int call = 1; call <= sl::latest_replacement_call + 1; ++call) {
      // Whether the process had replaced none before this call (the same on every rank: replacements are
      // collective); on the second call, that makes the third call the one that replaces.
      const bool none_before = global_max(sl::latest_replacement_planning_seconds() > 0 ? 1 : 0) == 0;
      if (call == 2) first_in_process = replaced && none_before;
      std::vector<double> b = make_local<double>(cb, column, descb, 1);
      redist_Cpdgemr2d(size, size, a.data(), 1, 1, desca.data(), b.data(), 1, 1, descb.data(), row.context);
      const std::vector<double> expected = make_local<double>(cb, column, descb, 0);
      std::int64_t wrong = 0;
      for (std::size_t k = 0; k < b.size(); ++k) wrong += b[k] != expected[k] ? 1 : 0;
      const std::string where = "size " + std::to_string(size) + ", blocks " + std::to_string(target_block) +
                                ", call " + std::to_string(call);
      EXPECT_EQ(global_sum(wrong), 0) << where;
      EXPECT_TRUE(all_ranks(sl::plans_made() - made_before == 1)) << where << ": one plan built";
      const std::size_t promoted = sl::plans_promoted() - promoted_before;
      EXPECT_EQ(-global_max(-static_cast<std::int64_t>(promoted)), global_max(static_cast<std::int64_t>(promoted)))
          << where << ": ranks replaced on different calls";
      EXPECT_LE(promoted, replaced ? 1u : 0u) << where;
      if (promoted == 1 && replaced_on == 0) replaced_on = call;
      if (call == 3 && first_in_process) EXPECT_EQ(replaced_on, 3) << where << ": the process's first replacement";
    }
    if (replaced) {
      EXPECT_GE(replaced_on, 2) << "size " << size << ", blocks " << target_block;
      EXPECT_LE(replaced_on, sl::latest_replacement_call) << "size " << size << ", blocks " << target_block;
    } else {
      EXPECT_EQ(replaced_on, 0) << "size " << size;
    }
    if (world_rank() == 0)
      std::printf("[ info ] size %d, blocks %d: one-shot plan replaced on call %d (0: never)\n", size, target_block,
                  replaced_on);
  }
}

// Wrong arguments are reported (PXERBLA, as ScaLAPACK does) and nothing is written on any rank, also when
// only one rank's argument is wrong (its LLD): the ranks agree before anything moves.
TEST(ScalapackGemr2d, WrongArgumentsWriteNothing) {
  const int nranks = world_size(), me = world_rank();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context grid(1, nranks, all);
  matrix_case c;
  c.M = c.N = 20;
  c.mb = c.nb = c.imb = c.inb = 3;
  const std::vector<int> desc = make_descriptor(c, grid);
  const std::vector<double> a = make_local<double>(c, grid, desc, 0);
  const std::vector<double> b_initial = make_local<double>(c, grid, desc, 1);
  struct bad_case {
    const char* what;
    int m, n, ia, ja, ib, jb;
    std::vector<int> desca, descb;
  };
  std::vector<int> bad_rsrc = desc, bad_block = desc, bad_lld_here = desc, nb_here = desc, m_here = desc;
  bad_rsrc[6] = 1;                            // RSRC on a 1-row grid
  bad_block[5] = 0;                           // NB
  if (me == nranks - 1) bad_lld_here[8] = 1;  // LLD too small on one rank only (its local rows are 20)
  // Arguments that must be the same everywhere, different on one rank only: the ranks would plan different
  // copies (a heap overwrite or a hang), so every rank refuses.
  if (me == nranks - 1) nb_here[5] = 4, m_here[2] = 19;
  const int m_one_rank = me == nranks - 1 ? 0 : 4;
  std::vector<bad_case> cases = {
      {"M < 0", -1, 4, 1, 1, 1, 1, desc, desc},
      {"IA < 1", 4, 4, 0, 1, 1, 1, desc, desc},
      {"JA beyond N_", 4, 4, 1, 18, 1, 1, desc, desc},
      {"IB + M - 1 > M_", 4, 4, 1, 1, 18, 1, desc, desc},
      {"RSRC outside the grid", 4, 4, 1, 1, 1, 1, bad_rsrc, desc},
      {"NB < 1", 4, 4, 1, 1, 1, 1, desc, bad_block},
      {"LLD too small on one rank", 4, 4, 1, 1, 1, 1, desc, bad_lld_here},
  };
  if (nranks > 1) {
    cases.push_back({"NB of A different on one rank", 4, 4, 1, 1, 1, 1, nb_here, desc});
    cases.push_back({"M_ of B different on one rank", 4, 4, 1, 1, 1, 1, desc, m_here});
    cases.push_back({"M zero on one rank only", m_one_rank, 4, 1, 1, 1, 1, desc, desc});
    cases.push_back({"N different on one rank", 4, m_one_rank + 1, 1, 1, 1, 1, desc, desc});
  }
  for (const bad_case& k : cases) {
    std::vector<double> b = b_initial;
    redist_Cpdgemr2d(k.m, k.n, a.data(), k.ia, k.ja, k.desca.data(), b.data(), k.ib, k.jb, k.descb.data(),
                     grid.context);
    EXPECT_TRUE(all_ranks(b == b_initial)) << k.what << ": B was written";
  }
  // DESCB null on one rank: refused everywhere (the others were given one).
  {
    std::vector<double> b = b_initial;
    redist_Cpdgemr2d(4, 4, a.data(), 1, 1, desc.data(), b.data(), 1, 1, me == 0 ? nullptr : desc.data(), grid.context);
    EXPECT_TRUE(all_ranks(b == b_initial)) << "DESCB null on rank 0: B was written";
  }
  // ICTXT negative, never created, or exited: PXERBLA instead of a crash (every rank passes the same one).
  {
    int exited = -1;
    {
      blacs_context gone(1, nranks, all);
      exited = gone.context;
    }
    for (const int context : {-1, -7, 4096, exited}) {
      std::vector<double> b = b_initial;
      redist_Cpdgemr2d(4, 4, a.data(), 1, 1, desc.data(), b.data(), 1, 1, desc.data(), context);
      EXPECT_TRUE(all_ranks(b == b_initial)) << "ICTXT " << context << ": B was written";
    }
  }
  // And a good call afterwards still works, made again takes its earlier agreement's conclusion (agreed_calls.hpp),
  // and one rank passing other arguments than it did then, while the others pass theirs again, is still refused on
  // every rank (no hang, nothing written).
  const auto copy = [&](int m, const std::vector<int>& da) {
    std::vector<double> b = b_initial;
    redist_Cpdgemr2d(m, 20, a.data(), 1, 1, da.data(), b.data(), 1, 1, desc.data(), grid.context);
    return b;
  };
  for (int call = 0; call < 3; ++call) EXPECT_TRUE(all_ranks(copy(20, desc) == a)) << "good call " << call;
  if (nranks > 1) {
    EXPECT_TRUE(all_ranks(copy(me == nranks - 1 ? 19 : 20, desc) == b_initial)) << "M on one rank after the same call";
    EXPECT_TRUE(all_ranks(copy(20, nb_here) == b_initial)) << "NB of A on one rank after the same call";
    EXPECT_TRUE(all_ranks(copy(20, desc) == a)) << "the remembered call afterwards";
  }
}

// The descriptor's DTYPE is not read (REDIST reads every descriptor as 9 DTYPE 1 entries): unset or garbage on
// one rank or on all, the copy is the reference's, and the reference runs on the same data.
TEST(ScalapackGemr2d, DescriptorTypeIsNotRead) {
  const int nranks = world_size(), me = world_rank();
  std::vector<int> all(static_cast<size_t>(nranks));
  std::iota(all.begin(), all.end(), 0);
  blacs_context ga(nranks, 1, all), gb(1, nranks, all), global(1, nranks, all);
  matrix_case ca, cb;
  ca.M = cb.M = 17;
  ca.N = cb.N = 13;
  ca.mb = ca.imb = 3, ca.nb = ca.inb = 2;
  cb.mb = cb.imb = 4, cb.nb = cb.inb = 5;
  cb.extra_lld = 3;  // LLD larger than needed, as the testers' may be
  for (const int garbage : {2, 0, -1, 12345}) {
    for (const bool everywhere : {false, true}) {
      std::vector<int> desca = make_descriptor(ca, ga), descb = make_descriptor(cb, gb);
      if (everywhere || me == nranks - 1) desca[0] = descb[0] = garbage;
      const std::vector<double> a = make_local<double>(ca, ga, desca, 0);
      std::vector<double> b = make_local<double>(cb, gb, descb, 1), reference = b;
      redist_Cpdgemr2d(15, 11, a.data(), 2, 3, desca.data(), b.data(), 3, 2, descb.data(), global.context);
      const int m = 15, n = 11, ia = 2, ja = 3, ib = 3, jb = 2;
      pdgemr2d_(&m, &n, a.data(), &ia, &ja, desca.data(), reference.data(), &ib, &jb, descb.data(), &global.context);
      EXPECT_TRUE(all_ranks(b == reference)) << "DTYPE " << garbage << (everywhere ? " everywhere" : " on one rank");
      EXPECT_FALSE(all_ranks(b == make_local<double>(cb, gb, descb, 1))) << "nothing was copied";
    }
  }
}
