// SPDX-License-Identifier: BSD-3-Clause
// The distributed multiply against a serial reference: random layouts of A, B and C (block-cyclic, blocked,
// custom, on subsets of the ranks), every op pair and element type, the shapes square / largeK (m = n << k) /
// largeM / flat (m = n >> k) / tiny / empty, alpha and beta including 0 and 1 (C full of NaN when beta = 0),
// two-sided, one-sided and node-shared panels (the last on one node, and refused where grid lines span the
// simulated nodes), overlap on and off, memory limits that force sequential steps, idle ranks, relabeling on
// and off. Every element of C's local storage is checked; storage that is not C's must stay untouched.
// redist-test-ranks: 1 2 3 4 5 7 8
// redist-test-nodes: 4:2
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.hpp"
#include "test_seed.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

template <class T>
T random_scalar(rng_t& g) {
  const int pick = static_cast<int>(uniform(g, 0, 5));
  const double re = pick == 0 ? 0.0 : pick == 1 ? 1.0 : static_cast<double>(uniform(g, -20, 20)) / 8.0;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return pick <= 1 ? T(static_cast<typename T::value_type>(re))
                     : T(static_cast<typename T::value_type>(re),
                         static_cast<typename T::value_type>(uniform(g, -8, 8) / 4.0));
  else
    return static_cast<T>(re);
}

template <class T>
T nan_value() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::quiet_NaN();
  else
    return T(std::numeric_limits<typename T::value_type>::quiet_NaN(), 0);
}

template <class T>
double epsilon() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>)
    return std::numeric_limits<float>::epsilon();
  else
    return std::numeric_limits<double>::epsilon();
}

struct problem {
  std::int64_t m = 0, n = 0, k = 0;
  op op_a = op::identity, op_b = op::identity;
};

// Element (i, j) of op(X) where X has contents `id`.
template <class T>
T op_value(std::uint64_t id, op o, std::int64_t i, std::int64_t j) {
  if (o == op::identity) return element_value<T>(id, i, j);
  return conj_if(element_value<T>(id, j, i), o == op::conj_transpose);
}

// The execution profile's parts are measured inside its total, and an idle rank never multiplies.
void expect_consistent_profile(const gemm_statistics& stats) {
  const gemm_execution_profile& e = stats.last_execution;
  for (const double part : {e.transform_in, e.multiply, e.panel_wait, e.reduction, e.transform_out})
    EXPECT_GE(part, 0.0);
  EXPECT_GT(e.total, 0.0);
  EXPECT_LE(e.transform_in + e.multiply + e.panel_wait + e.reduction + e.transform_out, e.total * (1 + 1e-9));
  if (stats.idle) EXPECT_EQ(e.multiply + e.panel_wait + e.reduction, 0.0);
  // Likewise the planning profile's steps inside make_gemm_plan's total (steps an empty C or k skips stay 0).
  const gemm_planning_profile& g = stats.planning;
  for (const double part : {g.agreement, g.placement, g.transforms, g.storage, g.grid_lines, g.rounds})
    EXPECT_GE(part, 0.0);
  EXPECT_GT(g.agreement, 0.0);
  EXPECT_LE(g.agreement + g.placement + g.transforms + g.storage + g.grid_lines + g.rounds, g.total * (1 + 1e-9));
}

// Multiplies with the given layouts and options; returns the number of wrong elements of C on this rank
// (against the serial reference) plus touched non-C storage. `plan_out` receives the statistics.
template <class T>
std::int64_t run_and_count_wrong(const problem& pb, const grid_layout& la, const grid_layout& lb, const grid_layout& lc,
                                 T alpha, T beta, const gemm_options& options, gemm_statistics* stats_out = nullptr,
                                 int executions = 1) {
  const T sentinel = T(-4242);
  std::vector<T> a(static_cast<size_t>(la.local_elements()) + 3, sentinel),
      b(static_cast<size_t>(lb.local_elements()) + 3, sentinel);
  std::vector<T> c(static_cast<size_t>(lc.local_elements()) + 3, sentinel);
  std::vector<char> c_is_element(c.size(), 0);
  for_each_local_element(la, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    a[static_cast<size_t>(off)] = element_value<T>(11, i, j);
  });
  for_each_local_element(lb, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    b[static_cast<size_t>(off)] = element_value<T>(12, i, j);
  });
  const gemm_plan plan =
      make_gemm_plan(MPI_COMM_WORLD, gemm_description{la, lb, lc, pb.op_a, pb.op_b, element_type_v<T>}, options);
  if (stats_out) *stats_out = plan.statistics();
  EXPECT_EQ(plan.statistics().last_execution.total, 0.0) << "a profile before any execution";
  std::int64_t wrong = 0;
  for (int e = 0; e < executions; ++e) {
    // Each execution with new values of C (and, from the second on, of A's first element) in the same buffers.
    const std::uint64_t c_id = 13 + static_cast<std::uint64_t>(e);
    for_each_local_element(lc, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
      c[static_cast<size_t>(off)] = beta == T(0) ? nan_value<T>() : element_value<T>(c_id, i, j);
      c_is_element[static_cast<size_t>(off)] = 1;
    });
    plan.execute(c.data(), a.data(), b.data(), alpha, beta);
    expect_consistent_profile(plan.statistics());
    const double scale = std::abs(alpha) * static_cast<double>(pb.k) * 125.0 * 125.0 + std::abs(beta) * 125.0 + 1.0;
    const double tol = 64.0 * epsilon<T>() * scale;
    for_each_local_element(lc, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
      T sum(0);
      for (std::int64_t p = 0; p < pb.k; ++p) sum += op_value<T>(11, pb.op_a, i, p) * op_value<T>(12, pb.op_b, p, j);
      const T expected = alpha * sum + (beta == T(0) ? T(0) : beta * element_value<T>(c_id, i, j));
      const T got = c[static_cast<size_t>(off)];
      if (is_nan_value(got) || abs_diff(got, expected) > tol) ++wrong;
    });
    for (size_t x = 0; x < c.size(); ++x)
      if (!c_is_element[x] && c[x] != sentinel) ++wrong;
  }
  return wrong;
}

template <class T>
grid_layout operand_layout(rng_t& g, std::int64_t rows, std::int64_t cols, bool transposed) {
  return transposed ? random_layout(g, cols, rows, world_size(), world_rank())
                    : random_layout(g, rows, cols, world_size(), world_rank());
}

problem random_problem(rng_t& g, int shape) {
  problem pb;
  switch (shape) {
    case 0:
      pb.m = uniform(g, 8, 48);
      pb.n = uniform(g, 8, 48);
      pb.k = uniform(g, 8, 48);
      break;  // square-ish
    case 1:
      pb.m = pb.n = uniform(g, 2, 12);
      pb.k = uniform(g, 100, 400);
      break;  // largeK
    case 2:
      pb.m = uniform(g, 100, 300);
      pb.n = uniform(g, 2, 10);
      pb.k = uniform(g, 2, 10);
      break;  // largeM
    case 3:
      pb.m = pb.n = uniform(g, 40, 90);
      pb.k = uniform(g, 1, 4);
      break;  // flat
    case 4:
      pb.m = uniform(g, 1, 3);
      pb.n = uniform(g, 1, 3);
      pb.k = uniform(g, 1, 3);
      break;  // tiny
    default:  // an empty dimension
      pb.m = uniform(g, 0, 9);
      pb.n = uniform(g, 0, 9);
      pb.k = uniform(g, 0, 9);
      switch (uniform(g, 0, 2)) {
        case 0:
          pb.m = 0;
          break;
        case 1:
          pb.n = 0;
          break;
        default:
          pb.k = 0;
          break;
      }
  }
  static const op ops[] = {op::identity, op::transpose, op::conj_transpose};
  pb.op_a = ops[uniform(g, 0, 2)];
  pb.op_b = ops[uniform(g, 0, 2)];
  return pb;
}

// The smallest memory limit (bytes) the schedule accepts, searched downwards from the unlimited schedule's
// need: it forces sequential steps or more rounds.
std::int64_t tight_memory_limit(const problem& pb, std::size_t element_bytes, bool overlap) {
  gemm_schedule_options so;
  so.double_buffering = overlap;
  const gemm_schedule free = plan_gemm_schedule(pb.m, pb.n, pb.k, world_size(), so);
  std::int64_t limit = std::max<std::int64_t>(free.memory_elements, 1);
  for (;;) {
    so.memory_limit_elements = limit * 3 / 4;
    if (so.memory_limit_elements < 1) break;
    try {
      plan_gemm_schedule(pb.m, pb.n, pb.k, world_size(), so);
    } catch (const insufficient_memory&) {
      break;
    }
    limit = so.memory_limit_elements;
  }
  return limit * static_cast<std::int64_t>(element_bytes);
}

// A limit a little above the smallest that still forces more than one step: tens of steps where the
// smallest gives hundreds, which make the 16 combinations below slow on oversubscribed ranks (the random
// cases take the smallest itself).
std::int64_t stepping_memory_limit(const problem& pb, std::size_t element_bytes, bool overlap) {
  const std::int64_t tight = tight_memory_limit(pb, element_bytes, overlap);
  gemm_schedule_options so;
  so.double_buffering = overlap;
  for (const std::int64_t percent : {150, 125, 110}) {
    so.memory_limit_elements = tight / static_cast<std::int64_t>(element_bytes) * percent / 100;
    const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, world_size(), so);
    if (s.sequential_m * s.sequential_n * s.rounds > 1)
      return so.memory_limit_elements * static_cast<std::int64_t>(element_bytes);
  }
  return tight;
}

template <class T>
void random_cases(std::uint64_t seed, int cases) {
  rng_t g(test_seed(seed));
  for (int c = 0; c < cases; ++c) {
    const problem pb = random_problem(g, c % 6);
    const grid_layout la = operand_layout<T>(g, pb.m, pb.k, pb.op_a != op::identity);
    const grid_layout lb = operand_layout<T>(g, pb.k, pb.n, pb.op_b != op::identity);
    const grid_layout lc = random_layout(g, pb.m, pb.n, world_size(), world_rank());
    const T alpha = random_scalar<T>(g), beta = random_scalar<T>(g);
    gemm_options options;
    const gemm_communication ways[] = {gemm_communication::two_sided, gemm_communication::one_sided,
                                       gemm_communication::automatic};
    options.communication = ways[uniform(g, 0, 2)];
    options.overlap = uniform(g, 0, 1) != 0;
    options.relabel = uniform(g, 0, 3) != 0;
    options.native_order = static_cast<gemm_native_order>(uniform(g, 0, 2));
    if (uniform(g, 0, 2) == 0) options.max_idle_fraction = 0.4;
    if (uniform(g, 0, 2) == 0) options.memory_limit_bytes = tight_memory_limit(pb, sizeof(T), options.overlap);
    gemm_statistics stats;
    const std::int64_t wrong = run_and_count_wrong<T>(pb, la, lb, lc, alpha, beta, options, &stats);
    EXPECT_EQ(global_sum(wrong), 0) << "case " << c << ": " << pb.m << "x" << pb.n << "x" << pb.k << " op_a "
                                    << to_string(pb.op_a) << " op_b " << to_string(pb.op_b) << ", "
                                    << stats.schedule.describe() << ", " << to_string(options.communication) << " ("
                                    << to_string(stats.communication) << ")"
                                    << (options.overlap ? ", overlap" : ", no overlap") << ", native order "
                                    << to_string(options.native_order);
    // Why the panels travel as they do: the request, or for automatic the way it resolved to.
    const std::string said_why = pb.m * pb.n == 0 ? "no element"
                                 : options.communication == gemm_communication::automatic
                                     ? to_string(stats.communication)
                                     : "requested";
    EXPECT_NE(stats.communication_reason.find(said_why), std::string::npos) << stats.communication_reason;
    // The schedule counts what the rank at grid position (0, 0, 0) receives in the multiply.
    const bool origin = stats.position_m == 0 && stats.position_n == 0 && stats.position_k == 0;
    const std::int64_t counted = pb.m * pb.n > 0 && pb.k > 0 ? stats.schedule.communicated_elements : 0;
    EXPECT_TRUE(all_ranks(!origin || stats.multiply.bytes_received == counted * static_cast<std::int64_t>(sizeof(T))))
        << stats.schedule.describe();
    // Every byte and message the multiply sends is received somewhere.
    EXPECT_EQ(global_sum(stats.multiply.bytes_sent), global_sum(stats.multiply.bytes_received))
        << stats.schedule.describe();
    EXPECT_EQ(global_sum(stats.multiply.messages_sent), global_sum(stats.multiply.messages_received))
        << stats.schedule.describe();
  }
}

// Block-cyclic over a 1 x p grid of MPI_COMM_WORLD's ranks (blocks of 8).
grid_layout column_cyclic(std::int64_t rows, std::int64_t cols) {
  block_cyclic_params bc;
  bc.m = rows;
  bc.n = cols;
  bc.mb = bc.nb = 8;
  bc.proc_cols = world_size();
  return block_cyclic(bc, world_rank());
}

// C = op(A) op(B) (identity ops, beta 0, C full of NaN before) by `plan` on column_cyclic operands, checked
// element by element against the serial reference: the wrong elements over all ranks.
std::int64_t wrong_products(const gemm_plan& plan, const problem& pb) {
  const grid_layout la = column_cyclic(pb.m, pb.k), lb = column_cyclic(pb.k, pb.n), lc = column_cyclic(pb.m, pb.n);
  std::vector<double> a(static_cast<size_t>(la.local_elements())), b(static_cast<size_t>(lb.local_elements()));
  std::vector<double> c(static_cast<size_t>(lc.local_elements()), nan_value<double>());
  for_each_local_element(la, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    a[static_cast<size_t>(off)] = element_value<double>(11, i, j);
  });
  for_each_local_element(lb, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    b[static_cast<size_t>(off)] = element_value<double>(12, i, j);
  });
  plan.execute(c.data(), a.data(), b.data(), 1.0, 0.0);
  std::int64_t wrong = 0;
  for_each_local_element(lc, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    double sum = 0;
    for (std::int64_t q = 0; q < pb.k; ++q) sum += element_value<double>(11, i, q) * element_value<double>(12, q, j);
    if (!(std::abs(c[static_cast<size_t>(off)] - sum) <=
          64.0 * epsilon<double>() * (static_cast<double>(pb.k) * 125.0 * 125.0 + 1.0)))
      ++wrong;
  });
  return global_sum(wrong);
}

// Whether MPI_COMM_WORLD's ranks share one node's memory (not where MPIR_CVAR_NUM_CLIQUES simulates several).
bool all_ranks_on_one_node() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  return all_ranks(node_size == world_size());
}

gemm_description column_cyclic_product(const problem& pb) {
  return {column_cyclic(pb.m, pb.k), column_cyclic(pb.k, pb.n), column_cyclic(pb.m, pb.n), pb.op_a, pb.op_b,
          element_type::f64};
}

}  // namespace

TEST(Gemm, RandomCasesDouble) { random_cases<double>(8101, 12); }
TEST(Gemm, RandomCasesFloat) { random_cases<float>(8102, 6); }
TEST(Gemm, RandomCasesComplexFloat) { random_cases<std::complex<float>>(8103, 6); }
TEST(Gemm, RandomCasesComplexDouble) { random_cases<std::complex<double>>(8104, 6); }

// Random layouts of op(A), op(B) and C for one problem (op(A) stored transposed when op_a is not identity).
struct random_operands {
  grid_layout la, lb, lc;
  random_operands(std::uint64_t seed, const problem& pb) {
    rng_t g(test_seed(seed));
    la = operand_layout<double>(g, pb.m, pb.k, pb.op_a != op::identity);
    lb = operand_layout<double>(g, pb.k, pb.n, pb.op_b != op::identity);
    lc = random_layout(g, pb.m, pb.n, world_size(), world_rank());
  }
};

// One problem through every combination of communication, overlap, memory limit and relabeling (contiguous
// native order without it, grouped with it; the random cases mix the two freely): each must give the
// reference result, and the limited schedules must really cut the problem in time.
TEST(Gemm, EveryCombinationGivesTheSameResult) {
  const problem pb{37, 29, 61, op::transpose, op::identity};
  const random_operands operands(8105, pb);
  const grid_layout &la = operands.la, &lb = operands.lb, &lc = operands.lc;
  for (gemm_communication communication :
       {gemm_communication::two_sided, gemm_communication::one_sided, gemm_communication::automatic})
    for (bool overlap : {false, true})
      for (bool limited : {false, true})
        for (bool relabel : {false, true}) {
          gemm_options options;
          options.communication = communication;
          options.overlap = overlap;
          options.relabel = relabel;
          options.native_order = relabel ? gemm_native_order::grouped : gemm_native_order::contiguous;
          if (limited) options.memory_limit_bytes = stepping_memory_limit(pb, sizeof(double), overlap);
          gemm_statistics stats;
          EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, 1.5, -0.5, options, &stats, 2)), 0)
              << to_string(communication) << " overlap " << overlap << " limited " << limited << " relabel " << relabel
              << " " << to_string(options.native_order) << ": " << stats.schedule.describe();
          if (limited && world_size() > 1) {  // one rank must hold everything: no limit below that fits
            const gemm_schedule& s = stats.schedule;
            EXPECT_GT(s.sequential_m * s.sequential_n * s.rounds, 1) << s.describe();
            EXPECT_LE(s.memory_elements * 8, options.memory_limit_bytes) << s.describe();
          }
        }
}

// Block-cyclic inputs on the process grid the schedule picks (a flat problem: grid_m x grid_n x 1), sizes
// that give every process row and column as many indices as a native part: with grouped native parts and
// relabeling, C and op(A) stay where they are (only B, cut differently, moves); contiguous parts move more.
TEST(Gemm, GroupedPartsOfAMatchingGridKeepCAndAInPlace) {
  const int p = world_size(), me = world_rank();
  const problem pb{768, 768, 192, op::identity, op::identity};  // 24 x 24 x 6 blocks of 32
  const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, p, {});
  if (s.grid_k != 1 || s.ranks_used != p || 24 % s.grid_m != 0 || 6 % s.grid_n != 0) GTEST_SKIP() << s.describe();
  const auto on_grid = [&](std::int64_t rows, std::int64_t cols) {
    block_cyclic_params bc;
    bc.m = rows;
    bc.n = cols;
    bc.mb = bc.nb = 32;
    bc.proc_rows = s.grid_m;
    bc.proc_cols = s.grid_n;
    return block_cyclic(bc, me);
  };
  const grid_layout la = on_grid(pb.m, pb.k), lb = on_grid(pb.k, pb.n), lc = on_grid(pb.m, pb.n);
  std::int64_t moved_grouped = 0;
  for (gemm_native_order order : {gemm_native_order::grouped, gemm_native_order::contiguous})
    for (const double beta : {0.5, 0.0}) {  // beta = 0: C starts as NaN, which an in-place multiply must not read
      gemm_options options;
      options.native_order = order;
      gemm_statistics stats;
      EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, -1.5, beta, options, &stats, 2)), 0)
          << to_string(order) << " beta " << beta;
      const std::int64_t in = global_sum(stats.transform_in.bytes_sent),
                         out = global_sum(stats.transform_out.bytes_sent);
      if (order == gemm_native_order::grouped) {
        // C's storage is the native C on every rank: the multiply writes it in place.
        EXPECT_TRUE(stats.c_in_place) << s.describe();
        EXPECT_EQ(out, 0) << s.describe();
        EXPECT_LE(in, pb.k * pb.n * 8) << s.describe();
        moved_grouped = in + out;
      } else if (p > 1) {
        EXPECT_FALSE(stats.c_in_place) << s.describe();
        EXPECT_GT(in + out, moved_grouped) << s.describe();
      }
    }
}

// C in place whatever its leading dimension: with one rank's C stored with a wider leading dimension than its
// local rows, every rank still writes all of its C in place, and the result is right. One of a multiple of
// 4 KiB (512 doubles) keeps that rank's rows out of place (cache-set aliasing), with the same result.
TEST(Gemm, CInPlaceWhateverTheLeadingDimension) {
  const int p = world_size(), me = world_rank();
  const problem pb{96, 96, 24, op::identity, op::identity};
  const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, p, {});
  // 12 x 12 blocks of 8: each process row and column of the schedule's grid must hold a native part's share.
  if (s.grid_k != 1 || s.ranks_used != p || 12 % s.grid_m != 0 || 12 % s.grid_n != 0)
    GTEST_SKIP() << "no grid_m x grid_n process grid holds the native C: " << s.describe();
  block_cyclic_params bc;
  bc.mb = bc.nb = 8;
  bc.proc_rows = s.grid_m;
  bc.proc_cols = s.grid_n;
  const auto on_grid = [&](std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    block_cyclic_params b = bc;
    b.m = rows;
    b.n = cols;
    if (ld > 0) b.lld = ld;
    return block_cyclic(b, me);
  };
  const grid_layout la = on_grid(pb.m, pb.k, 0), lb = on_grid(pb.k, pb.n, 0);
  const std::int64_t local_rows = on_grid(pb.m, pb.n, 0).local_ld();
  for (const std::int64_t wide_ld : {std::int64_t(0), local_rows + 3, std::int64_t(512)}) {
    const grid_layout lc = on_grid(pb.m, pb.n, me == p - 1 ? wide_ld : 0);
    gemm_options grouped;  // blocks of 8 are too short for the automatic order to group them
    grouped.native_order = gemm_native_order::grouped;
    gemm_statistics stats;
    EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, 2.0, 0.5, grouped, &stats)), 0);
    const bool aliasing = wide_ld == 512;
    EXPECT_EQ(stats.c_in_place, !aliasing) << "rank " << p - 1 << " with ld " << wide_ld << "; " << s.describe();
    const std::int64_t mine = (pb.m / s.grid_m) * (pb.n / s.grid_n);
    if (!aliasing)
      EXPECT_EQ(stats.c_elements_in_place, mine) << "ld " << wide_ld << "; " << s.describe();
    else if (me == p - 1)
      EXPECT_EQ(stats.c_elements_in_place, 0) << "ld 512; " << s.describe();
  }
}

// ScaLAPACK operands on the schedule's grid whose sizes leave the process rows and columns uneven (random
// sizes, blocks and leading dimensions, beta 0 on NaN or not): the multiply writes in place all of C but the
// edges where a native part and C's blocks disagree, the transform out moves only those, and the result is
// right. Every element of C is written once: in place on its rank, or by the transform out. k (8-15) stays
// below every part's rows (m of 64 or more on at most 4 grid rows): row parts with edges are written in place.
TEST(Gemm, CPartlyInPlaceWhereTheSizesDoNotDivide) {
  const int p = world_size(), me = world_rank();
  rng_t g(test_seed(8107));
  int run = 0, partly = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t block = 4 + static_cast<std::int64_t>(g() % 5);
    const std::int64_t m = 64 + static_cast<std::int64_t>(g() % 60), n = 64 + static_cast<std::int64_t>(g() % 60);
    const problem pb{m, n, 8 + static_cast<std::int64_t>(g() % 8), op::identity, op::identity};
    const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, p, {});
    if (s.grid_k != 1 || s.ranks_used != p || pb.k >= pb.m / s.grid_m) continue;
    const std::int64_t extra_ld = static_cast<std::int64_t>(g() % 3);
    const auto on_grid = [&](std::int64_t rows, std::int64_t cols, std::int64_t extra) {
      block_cyclic_params b;
      b.m = rows;
      b.n = cols;
      b.mb = b.nb = block;
      b.proc_rows = s.grid_m;
      b.proc_cols = s.grid_n;
      if (extra > 0) b.lld = block_cyclic(b, me).local_ld() + extra;
      return block_cyclic(b, me);
    };
    const grid_layout la = on_grid(pb.m, pb.k, 0), lb = on_grid(pb.k, pb.n, 0), lc = on_grid(pb.m, pb.n, extra_ld);
    const double beta = trial % 2 == 0 ? 0.0 : -0.75;
    gemm_options grouped;
    grouped.native_order = gemm_native_order::grouped;
    gemm_statistics stats;
    EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, 1.25, beta, grouped, &stats, 2)), 0)
        << "trial " << trial << " blocks of " << block << ", extra ld " << extra_ld << ": " << s.describe();
    const std::int64_t in_place = global_sum(stats.c_elements_in_place);
    const std::int64_t moved_out = global_sum(stats.transform_out.bytes_sent + stats.transform_out.bytes_local) / 8;
    EXPECT_GT(in_place, 0) << s.describe();
    EXPECT_EQ(in_place + moved_out, pb.m * pb.n) << "trial " << trial << ": " << s.describe();
    EXPECT_EQ(stats.c_in_place, moved_out == 0) << s.describe();
    ++run;
    if (moved_out > 0) ++partly;
  }
  if (run == 0) GTEST_SKIP() << "no trial's schedule had a grid_m x grid_n x 1 grid of all ranks";
  if (me == 0) std::printf("[partly in place] %d of %d trials moved edges out\n", partly, run);
}

// A row part of C that a rank holds only in part (4 x 11 rows on 2 process rows: 24 and 20 local rows, native
// parts of 22) is written in place while k is below its rows, and goes through the native storage from k at
// least its rows on (its edge rows would need BLAS calls of their own, repacking B): the ranks of the process
// row with 20 rows then write nothing in place, the others still do, and the result is right both ways.
TEST(Gemm, RowPartsWithEdgesGoThroughTheNativeStorageFromKAtLeastTheirRows) {
  const int p = world_size(), me = world_rank();
  const std::int64_t m = 44, n = 44;
  const gemm_schedule probe = plan_gemm_schedule(m, n, 8, p, {});
  if (probe.grid_m != 2 || probe.grid_k != 1 || probe.ranks_used != p)
    GTEST_SKIP() << "the rule is checked on a 2 x Q grid of all ranks: " << probe.describe();
  for (const std::int64_t k : {std::int64_t(8), std::int64_t(44)}) {
    const problem pb{m, n, k, op::identity, op::identity};
    const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, p, {});
    if (s.grid_m != 2 || s.grid_k != 1 || s.ranks_used != p) GTEST_SKIP() << "k " << k << ": " << s.describe();
    const auto on_grid = [&](std::int64_t rows, std::int64_t cols) {
      block_cyclic_params b;
      b.m = rows;
      b.n = cols;
      b.mb = b.nb = 4;
      b.proc_rows = s.grid_m;
      b.proc_cols = s.grid_n;
      return block_cyclic(b, me);
    };
    const grid_layout la = on_grid(pb.m, pb.k), lb = on_grid(pb.k, pb.n), lc = on_grid(pb.m, pb.n);
    gemm_options grouped;
    grouped.native_order = gemm_native_order::grouped;
    for (const double beta : {0.0, 0.5}) {
      gemm_statistics stats;
      EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, 1.5, beta, grouped, &stats, 2)), 0)
          << "k " << k << " beta " << beta << ": " << s.describe();
      const std::int64_t moved_out = global_sum(stats.transform_out.bytes_sent + stats.transform_out.bytes_local) / 8;
      EXPECT_EQ(global_sum(stats.c_elements_in_place) + moved_out, m * n) << "k " << k << ": " << s.describe();
      const bool fewer_rows = lc.local_ld() < 24;  // the process row of 20 rows: its row part has 2 edge rows
      if (fewer_rows && k >= 22)
        EXPECT_EQ(stats.c_elements_in_place, 0) << "k " << k << ": " << s.describe();
      else
        EXPECT_GT(stats.c_elements_in_place, 0)
            << "k " << k << (fewer_rows ? ", 20 rows: " : ", 24 rows: ") << s.describe();
    }
  }
}

// Prime rank counts with a generous idle allowance leave ranks out of the grid; they still take part in
// the transforms, and the result is right.
TEST(Gemm, IdleRanksStillGiveTheResult) {
  rng_t g(test_seed(8106));
  const problem pb{64, 64, 64, op::identity, op::identity};
  const grid_layout la = operand_layout<double>(g, pb.m, pb.k, false);
  const grid_layout lb = operand_layout<double>(g, pb.k, pb.n, false);
  const grid_layout lc = random_layout(g, pb.m, pb.n, world_size(), world_rank());
  gemm_options options;
  options.max_idle_fraction = 0.5;
  gemm_statistics stats;
  EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, la, lb, lc, 1.0, 0.0, options, &stats)), 0);
  EXPECT_EQ(global_sum(stats.idle ? 1 : 0), world_size() - stats.schedule.ranks_used);
}

// The one-shot gemm() (the argument order of transform() and of Python's redist.gemm) plans and executes the
// same multiply as a plan: C identical to the last bit.
TEST(Gemm, OneShotGemmIsThePlansMultiply) {
  const problem pb{37, 29, 41, op::transpose, op::identity};
  const random_operands operands(8107, pb);
  const grid_layout &la = operands.la, &lb = operands.lb, &lc = operands.lc;
  std::vector<double> a(static_cast<size_t>(la.local_elements())), b(static_cast<size_t>(lb.local_elements()));
  std::vector<double> c0(static_cast<size_t>(lc.local_elements()));
  for_each_local_element(la, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    a[static_cast<size_t>(off)] = element_value<double>(21, i, j);
  });
  for_each_local_element(lb, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    b[static_cast<size_t>(off)] = element_value<double>(22, i, j);
  });
  for_each_local_element(lc, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    c0[static_cast<size_t>(off)] = element_value<double>(23, i, j);
  });
  std::vector<double> by_plan = c0, one_shot = c0;
  make_gemm_plan(MPI_COMM_WORLD, {la, lb, lc, pb.op_a, pb.op_b, element_type::f64})
      .execute(by_plan.data(), a.data(), b.data(), 0.5, 2.0);
  gemm(MPI_COMM_WORLD, la, a.data(), lb, b.data(), lc, one_shot.data(), 0.5, 2.0, pb.op_a, pb.op_b);
  EXPECT_TRUE(all_ranks(one_shot == by_plan));
  EXPECT_TRUE(all_ranks(c0.empty() || one_shot != c0)) << "gemm() left C as it was";
}

TEST(Gemm, BadInputIsRejectedBeforeAnythingMoves) {
  const int p = world_size(), me = world_rank();
  const grid_layout a = blocked(even_splits(10, 1), even_splits(7, 1), {p - 1}, me);
  const grid_layout b = blocked(even_splits(8, 1), even_splits(5, 1), {0}, me);
  const grid_layout c = blocked(even_splits(10, 1), even_splits(5, 1), {0}, me);
  // op(A) is 10x7 but op(B) has 8 rows.
  EXPECT_THROW(make_gemm_plan(MPI_COMM_WORLD, {a, b, c, op::identity, op::identity, element_type::f64}),
               dimension_mismatch);
  const grid_layout b_ok = blocked(even_splits(7, 1), even_splits(5, 1), {0}, me);
  EXPECT_THROW(make_gemm_plan(MPI_COMM_WORLD, {a, b_ok, c, op::identity, op::identity, element_type::i32}),
               invalid_argument);
  gemm_options tiny;
  tiny.memory_limit_bytes = 64;
  try {
    make_gemm_plan(MPI_COMM_WORLD, {a, b_ok, c, op::identity, op::identity, element_type::f64}, tiny);
    ADD_FAILURE() << "a 64-byte memory limit was accepted";
  } catch (const insufficient_memory& e) {
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
  }
  gemm_options bad_idle;
  bad_idle.max_idle_fraction = 1.0;
  EXPECT_THROW(make_gemm_plan(MPI_COMM_WORLD, {a, b_ok, c, op::identity, op::identity, element_type::f64}, bad_idle),
               invalid_argument);
  // One rank alone asks for one-sided communication: the ranks disagree, all of them throw.
  gemm_options differs;
  if (me == p - 1) differs.communication = gemm_communication::one_sided;
  if (p > 1)
    EXPECT_THROW(make_gemm_plan(MPI_COMM_WORLD, {a, b_ok, c, op::identity, op::identity, element_type::f64}, differs),
                 inconsistent_ranks);
  // A column of 3e9 rows per rank: no schedule cuts it below BLAS's 32-bit sizes without a memory limit, and
  // the plan says so on every rank before anything is allocated (nothing here stores the elements).
  const std::int64_t tall = std::int64_t{3000000000} * p;
  const grid_layout a_tall = blocked({0, tall}, {0, 1}, {0}, me), b_one = blocked({0, 1}, {0, 1}, {0}, me);
  try {
    make_gemm_plan(MPI_COMM_WORLD, {a_tall, b_one, a_tall, op::identity, op::identity, element_type::f64});
    ADD_FAILURE() << "a local multiply of more than 2^31 rows was planned";
  } catch (const overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("BLAS takes sizes up to"), std::string::npos) << e.what();
  }
}

// Panels read in place from node peers (shared_memory): on one node every multiply takes it (automatic too) and
// gives the reference result, with several steps per rank (a memory limit), repeated executions with new A and C
// in the same buffers, and every element type; where some grid line spans nodes (MPIR_CVAR_NUM_CLIQUES) asking
// for it fails on every rank with invalid_argument and automatic takes two_sided.
TEST(Gemm, SharedMemoryPanels) {
  const int p = world_size();
  const bool one_node = all_ranks_on_one_node();
  // m the largest (B's pieces come from the grid column), n the largest (A's from the grid row), then both.
  const problem problems[] = {{150, 24, 40, op::identity, op::transpose},
                              {24, 150, 40, op::transpose, op::identity},
                              {53, 47, 71, op::identity, op::conj_transpose}};
  int a_shared_runs = 0, b_shared_runs = 0;
  for (const problem& pb : problems) {
    const random_operands operands(8107 + static_cast<std::uint64_t>(pb.m), pb);
    for (const bool limited : {false, true})
      for (const gemm_communication asked : {gemm_communication::shared_memory, gemm_communication::automatic}) {
        gemm_options options;
        options.communication = asked;
        options.max_idle_fraction = 0.4;  // grids with lines of several ranks also at 3, 5 and 7 ranks
        if (limited) options.memory_limit_bytes = stepping_memory_limit(pb, sizeof(double), options.overlap);
        gemm_statistics stats;
        bool refused = false;
        try {
          EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, operands.la, operands.lb, operands.lc, 0.75, -1.25,
                                                           options, &stats, 3)),
                    0)
              << to_string(asked) << " -> " << to_string(stats.communication) << ", limited " << limited << ": "
              << stats.schedule.describe();
        } catch (const invalid_argument& e) {
          refused = true;
          EXPECT_NE(std::string(e.what()).find("different nodes"), std::string::npos) << e.what();
        }
        EXPECT_TRUE(all_ranks(!refused) || all_ranks(refused)) << "refused on some ranks only";
        if (refused) {
          EXPECT_FALSE(one_node) << "shared_memory refused with every rank on one node";
          EXPECT_EQ(asked, gemm_communication::shared_memory) << "automatic must fall back, not fail";
          continue;
        }
        const gemm_schedule& s = stats.schedule;
        if (one_node && (s.grid_m > 1 || s.grid_n > 1)) {
          EXPECT_EQ(stats.communication, gemm_communication::shared_memory) << to_string(asked) << ": " << s.describe();
          a_shared_runs += s.grid_n > 1 ? 1 : 0;
          b_shared_runs += s.grid_m > 1 ? 1 : 0;
        }
        if (stats.communication == gemm_communication::shared_memory && s.grid_k == 1)  // nothing but panels
          EXPECT_EQ(stats.multiply.messages_received, 0) << s.describe();
        if (limited && p > 1) EXPECT_GT(s.sequential_m * s.sequential_n * s.rounds, 1) << s.describe();
      }
  }
  // One round, so that pieces are wide enough to be multiplied where they lie (narrow ones are copied into one
  // panel first): A's in 275-550 columns along k at 2-4 ranks (40 x 1200 x 1100), B's in 260 columns at 2 ranks
  // and A's in 260 at 4 (520^3).
  const problem wide[] = {{40, 1200, 1100, op::identity, op::identity}, {520, 520, 520, op::transpose, op::identity}};
  for (const problem& pb : wide) {
    const random_operands operands(8109 + static_cast<std::uint64_t>(pb.m), pb);
    gemm_options options;
    options.communication = one_node ? gemm_communication::shared_memory : gemm_communication::automatic;
    options.rounds = 1;
    options.max_idle_fraction = 0.4;
    gemm_statistics stats;
    EXPECT_EQ(global_sum(run_and_count_wrong<double>(pb, operands.la, operands.lb, operands.lc, -0.5, 2.0, options,
                                                     &stats, 2)),
              0)
        << to_string(stats.communication) << ": " << stats.schedule.describe();
  }
  if (one_node && p > 1) {
    EXPECT_GT(a_shared_runs, 0) << "no schedule read A's pieces from a grid row";
    EXPECT_GT(b_shared_runs, 0) << "no schedule read B's pieces from a grid column";
  }
  // Every element type through the strided products of pieces.
  if (one_node) {
    gemm_options options;
    options.communication = gemm_communication::shared_memory;
    options.max_idle_fraction = 0.4;
    rng_t g(test_seed(8108));
    const problem small{31, 26, 44, op::conj_transpose, op::identity};
    const grid_layout la = operand_layout<std::complex<float>>(g, small.m, small.k, true);
    const grid_layout lb = operand_layout<std::complex<float>>(g, small.k, small.n, false);
    const grid_layout lc = random_layout(g, small.m, small.n, p, world_rank());
    EXPECT_EQ(global_sum(run_and_count_wrong<std::complex<float>>(small, la, lb, lc, {1.5f, -0.5f}, {0.25f, 1.0f},
                                                                  options, nullptr, 2)),
              0);
    EXPECT_EQ(global_sum(run_and_count_wrong<float>(small, la, lb, lc, 2.0f, 0.0f, options, nullptr, 2)), 0);
    EXPECT_EQ(global_sum(run_and_count_wrong<std::complex<double>>(small, la, lb, lc, {1.0, 1.0}, {0.0, 0.0}, options,
                                                                   nullptr, 2)),
              0);
  }
}

TEST(Gemm, MemoryLimitFromTheEnvironment) {
  gemm_options options;
  ASSERT_EQ(setenv("REDIST_GEMM_MEMORY", "3M", 1), 0);
  EXPECT_EQ(gemm_memory_limit_bytes(options), 3 << 20);
  options.memory_limit_bytes = 1000;  // the option wins
  EXPECT_EQ(gemm_memory_limit_bytes(options), 1000);
  options.memory_limit_bytes = 0;
  ASSERT_EQ(setenv("REDIST_GEMM_MEMORY", "lots", 1), 0);
  EXPECT_THROW(gemm_memory_limit_bytes(options), invalid_argument);
  ASSERT_EQ(unsetenv("REDIST_GEMM_MEMORY"), 0);
  EXPECT_EQ(gemm_memory_limit_bytes(options), 0);
}

// shared_memory panels keep the native A and B in a segment of the node's arena (the window the transforms'
// shared_memory plans cut their segments from, cached on the caller's communicator) where it has room on every
// rank of the node, so that such a plan makes no window of its own: here after a transform plan made the arena
// (four times its own segment) on a fresh communicator, two small multiplies, one made while the other is alive.
TEST(Gemm, NativeStoresAreCutFromTheNodeArenaWhereItHasRoom) {
  if (!all_ranks_on_one_node()) GTEST_SKIP() << "ranks on several nodes";
  if (world_size() == 1) GTEST_SKIP() << "one rank: a transform has no node peer to stream to, so it makes no window";
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);  // no arena cached on it yet
  {
    // The arena: a transpose of 512^2 doubles, streamed through the window.
    const grid_layout square = column_cyclic(512, 512);
    transform_options streamed;
    streamed.strategy = exchange_strategy::shared_memory;
    const transform_plan made_the_arena =
        make_transform_plan(comm, square, square, op::transpose, element_type::f64, streamed);
    const std::int64_t window_bytes = made_the_arena.statistics().window_bytes;
    EXPECT_FALSE(made_the_arena.statistics().window_reused);
    // 48 x 40 x 56: native A and B of 2 x 48 x 56 doubles (43 KB) in all, far below three times the transform's segment.
    const problem pb{48, 40, 56, op::identity, op::identity};
    ASSERT_TRUE(all_ranks(3 * window_bytes > (pb.m * pb.k + pb.k * pb.n) * 8)) << "the arena is too small for the test";
    gemm_options options;
    options.communication = gemm_communication::shared_memory;
    const gemm_plan first = make_gemm_plan(comm, column_cyclic_product(pb), options);
    const gemm_plan second = make_gemm_plan(comm, column_cyclic_product(pb), options);
    for (const gemm_plan* plan : {&first, &second}) {
      EXPECT_EQ(plan->statistics().communication, gemm_communication::shared_memory);
      EXPECT_TRUE(all_ranks(plan->statistics().native_window_reused)) << "a plan made a window with room in the arena";
      EXPECT_EQ(wrong_products(*plan, pb), 0) << plan->statistics().schedule.describe();
    }
    EXPECT_EQ(wrong_products(first, pb), 0) << "the first plan again, after the second one wrote its segment";
  }
  MPI_Comm_free(&comm);
}

// Plans on the same communicator that place the same grid alike share its row, column and layer communicators
// (cached there): a second multiply of another depth on the same grid splits nothing, both give the reference
// result, also interleaved and after the plan that made the lines is gone; a plan on another grid splits anew.
TEST(Gemm, PlansPlacingTheSameGridShareItsLines) {
  const int p = world_size();
  gemm_options options;
  options.relabel = false;  // the placement is the identity: the grid alone decides whether lines are shared
  // Two depths on one grid, and a shape on another: the first pair found among a few candidates.
  const problem candidates[] = {{64, 64, 48}, {64, 64, 56}, {64, 64, 64}, {64, 64, 72}, {64, 64, 80}};
  const auto grid_of = [&](const problem& pb) {
    const gemm_schedule s = plan_gemm_schedule(pb.m, pb.n, pb.k, p, {});
    return std::vector<int>{s.grid_m, s.grid_n, s.grid_k, s.ranks_used};
  };
  const problem* pair[2] = {nullptr, nullptr};
  for (const problem& x : candidates)
    for (const problem& y : candidates)
      if (&x < &y && pair[0] == nullptr && grid_of(x) == grid_of(y)) {
        pair[0] = &x;
        pair[1] = &y;
      }
  if (pair[0] == nullptr) GTEST_SKIP() << "no two candidate depths share a grid at " << p << " ranks";
  const problem other{8 * std::int64_t(p) + 40, 8, 24};  // tall: a grid of its own
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);  // nothing cached on it yet
  {
    auto first = std::make_unique<gemm_plan>(make_gemm_plan(comm, column_cyclic_product(*pair[0]), options));
    const gemm_plan second = make_gemm_plan(comm, column_cyclic_product(*pair[1]), options);
    EXPECT_FALSE(first->statistics().grid_lines_reused) << "a fresh communicator had lines cached";
    EXPECT_TRUE(second.statistics().grid_lines_reused)
        << "the same grid, placed alike, was split again: " << second.statistics().schedule.describe();
    EXPECT_EQ(wrong_products(*first, *pair[0]), 0);
    EXPECT_EQ(wrong_products(second, *pair[1]), 0);
    EXPECT_EQ(wrong_products(*first, *pair[0]), 0) << "interleaved";
    first.reset();
    EXPECT_EQ(wrong_products(second, *pair[1]), 0) << "after the plan that split the lines was destroyed";
    const gemm_plan elsewhere = make_gemm_plan(comm, column_cyclic_product(other), options);
    if (grid_of(other) != grid_of(*pair[0]))
      EXPECT_FALSE(elsewhere.statistics().grid_lines_reused) << elsewhere.statistics().schedule.describe();
    EXPECT_EQ(wrong_products(elsewhere, other), 0);
  }
  MPI_Comm_free(&comm);
}

TEST(Gemm, AnEmptyPlanRefusesWhatItCannotAnswerAndReportsNothing) {
  const gemm_plan empty;
  EXPECT_THROW(empty.description(), invalid_argument);
  EXPECT_EQ(empty.communicator(), MPI_COMM_NULL);
  EXPECT_EQ(empty.statistics().position_m, -1);
  EXPECT_FALSE(empty.in_progress());
  EXPECT_THROW(empty.wait(), invalid_argument);
}
