// SPDX-License-Identifier: BSD-3-Clause
// Split-phase execution of transform and reshape plans (start/wait): a pipeline that starts the reshape of batch
// i+1 while batch i is transformed locally gives exactly the results of blocking executions, with every exchange
// strategy; a second start, an execute during a start and a wait without one are errors agreed on every rank; a bad
// buffer on one rank stops every rank's start before anything is written; a plan dropped between start and wait
// completes its exchange. The multiply's start/wait (its transform out overlapping) against execute.
// redist-test-ranks: 1 2 3 4 6 8
// redist-test-nodes: 4:2
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "expect_rejected.hpp"
#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.hpp"
#include "test_seed.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

using index_vector = std::vector<std::int64_t>;
using value = std::complex<double>;

// What each rank holds of batch k's input: a value from the batch and the element's place in local storage, so
// that batches differ and nothing depends on the engine.
std::vector<value> batch_input(const nd_layout& l, int batch, std::uint64_t seed) {
  std::vector<value> v(static_cast<std::size_t>(l.local_elements()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = value(static_cast<double>((seed + 7919 * static_cast<std::uint64_t>(batch) + 31 * i) % 1009),
                 static_cast<double>(batch) - static_cast<double>(i % 17));
  return v;
}

// The local stage of the pipeline (an FFT's place): deterministic per element, so that blocking and pipelined runs
// must agree bit for bit.
void local_stage(std::vector<value>& x, int batch) {
  for (value& e : x) e = e * value(1.0 + batch, -0.5) + value(0.25 * batch, 1.0);
}

struct fft_like_layouts {
  nd_layout bricks, pencils;
};

fft_like_layouts layouts_for(rng_t& g) {
  const int nranks = world_size(), me = world_rank();
  const index_vector shape{uniform(g, 1, 12), uniform(g, 1, 10), uniform(g, 1, 9)};
  std::vector<int> dims3(3, 0), dims2(2, 0);
  MPI_Dims_create(nranks, 3, dims3.data());
  MPI_Dims_create(nranks, 2, dims2.data());
  return {box_layout(brick_boxes(shape, dims3), me), box_layout(pencil_boxes(shape, 2, dims2), me, {2, 1, 0})};
}

reshape_job bricks_to_pencils(const fft_like_layouts& l) {
  return {l.pencils, l.bricks, {}, false, element_type::c64, {}};
}

const exchange_strategy every_strategy[] = {exchange_strategy::automatic, exchange_strategy::point_to_point,
                                            exchange_strategy::alltoallv, exchange_strategy::shared_memory};

TEST(SplitPhase, PipelineOfReshapesAndLocalWorkMatchesBlockingExecution) {
  const std::uint64_t seed = test_seed(0x5b117);
  rng_t g(seed);
  const fft_like_layouts l = layouts_for(g);
  const int batches = 4;
  for (exchange_strategy strategy : every_strategy) {
    SCOPED_TRACE(std::string("strategy ") + to_string(strategy));
    transform_options options;
    options.strategy = strategy;
    const transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, {bricks_to_pencils(l)}, options);
    std::vector<std::vector<value>> in(batches), blocking(batches), pipelined(batches);
    for (int k = 0; k < batches; ++k) {
      in[static_cast<std::size_t>(k)] = batch_input(l.bricks, k, seed);
      blocking[static_cast<std::size_t>(k)].assign(static_cast<std::size_t>(l.pencils.local_elements()), value(-1));
      pipelined[static_cast<std::size_t>(k)] = blocking[static_cast<std::size_t>(k)];
    }
    for (int k = 0; k < batches; ++k) {
      plan.execute(blocking[static_cast<std::size_t>(k)].data(), in[static_cast<std::size_t>(k)].data());
      local_stage(blocking[static_cast<std::size_t>(k)], k);
    }
    plan.start(pipelined[0].data(), in[0].data());
    EXPECT_TRUE(plan.in_progress());
    plan.wait();
    for (int k = 0; k < batches; ++k) {
      if (k + 1 < batches)
        plan.start(pipelined[static_cast<std::size_t>(k + 1)].data(), in[static_cast<std::size_t>(k + 1)].data());
      local_stage(pipelined[static_cast<std::size_t>(k)], k);
      if (k + 1 < batches) plan.wait();
    }
    EXPECT_FALSE(plan.in_progress());
    EXPECT_TRUE(all_ranks(pipelined == blocking)) << "seed " << seed;
    EXPECT_EQ(plan.statistics().start_overlaps, plan.strategy() == exchange_strategy::point_to_point);
  }
}

TEST(SplitPhase, MatrixTransformStartsWithScalarsAndBatches) {
  const std::uint64_t seed = test_seed(0x7a15);
  rng_t g(seed);
  const int nranks = world_size(), me = world_rank();
  const std::int64_t m = uniform(g, 1, 40), n = uniform(g, 1, 40);
  const grid_layout a = random_layout(g, m, n, nranks, me), b = random_layout(g, n, m, nranks, me);
  const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64);
  std::vector<double> bv(static_cast<std::size_t>(b.local_elements()));
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>((seed + i * 13) % 97);
  std::vector<double> expected(static_cast<std::size_t>(a.local_elements()), 3.0), got = expected;
  plan.execute(expected.data(), bv.data(), 2.0, 0.5);
  plan.start(got.data(), bv.data(), 2.0, 0.5);
  plan.wait();
  EXPECT_TRUE(all_ranks(got == expected)) << "seed " << seed;
  // The batch form, with job_buffers.
  std::vector<double> batch(static_cast<std::size_t>(a.local_elements()), 3.0);
  plan.start({job_buffers{batch.data(), bv.data(), scalar(2.0), scalar(0.5)}});
  plan.wait();
  EXPECT_TRUE(all_ranks(batch == expected)) << "seed " << seed;
}

TEST(SplitPhase, MisuseIsAnErrorOnEveryRankAndTheStartedExchangeStillCompletes) {
  const std::uint64_t seed = test_seed(0x3e2);
  rng_t g(seed);
  const fft_like_layouts l = layouts_for(g);
  const transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, {bricks_to_pencils(l)});
  const std::vector<value> in = batch_input(l.bricks, 0, seed);
  std::vector<value> expected(static_cast<std::size_t>(l.pencils.local_elements())), out = expected, other = expected;
  plan.execute(expected.data(), in.data());

  expect_rejected<invalid_argument>([&] { plan.wait(); }, "without a start()");
  plan.start(out.data(), in.data());
  expect_rejected<invalid_argument>([&] { plan.start(other.data(), in.data()); }, "still in progress");
  expect_rejected<invalid_argument>([&] { plan.execute(other.data(), in.data()); }, "still in progress");
  EXPECT_TRUE(plan.in_progress());
  plan.wait();
  EXPECT_TRUE(all_ranks(out == expected)) << "seed " << seed;

  // A wrong element type on one rank stops every rank's start; nothing is in progress anywhere afterwards.
  std::vector<float> wrong(out.size() + 1);
  const std::vector<float> wrong_in(in.size() + 1);
  std::vector<value> untouched(out.size(), value(7));
  expect_rejected<invalid_argument>(
      [&] {
        if (world_rank() == world_size() - 1)
          plan.start(wrong.data(), wrong_in.data());
        else
          plan.start(untouched.data(), in.data());
      },
      "");
  EXPECT_FALSE(plan.in_progress());
  EXPECT_TRUE(all_ranks(untouched == std::vector<value>(out.size(), value(7))));
}

TEST(SplitPhase, PlanDroppedBetweenStartAndWaitCompletesItsExchange) {
  const std::uint64_t seed = test_seed(0xd20b);
  rng_t g(seed);
  const fft_like_layouts l = layouts_for(g);
  const std::vector<value> in = batch_input(l.bricks, 2, seed);
  std::vector<value> expected(static_cast<std::size_t>(l.pencils.local_elements())), out = expected;
  reshape(MPI_COMM_WORLD, l.pencils, expected.data(), l.bricks, in.data(), {});
  {
    const transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, {bricks_to_pencils(l)});
    plan.start(out.data(), in.data());
  }
  EXPECT_TRUE(all_ranks(out == expected)) << "seed " << seed;
}

// The multiply in two halves: start() (transforms in, multiply, the transform out started), local work, wait()
// gives execute()'s C, for random shapes (k = 0 included) and layouts; misuse is agreed as for transforms.
TEST(SplitPhase, GemmStartAndWaitMatchExecute) {
  const std::uint64_t seed = test_seed(0x6e33);
  rng_t g(seed);
  const int nranks = world_size(), me = world_rank();
  for (int round = 0; round < 4; ++round) {
    const std::int64_t m = uniform(g, 1, 30), n = uniform(g, 1, 30), k = round == 0 ? 0 : uniform(g, 1, 30);
    const gemm_description d{random_layout(g, m, k, nranks, me),
                             random_layout(g, k, n, nranks, me),
                             random_layout(g, m, n, nranks, me),
                             op::identity,
                             op::identity,
                             element_type::f64};
    const gemm_plan plan = make_gemm_plan(MPI_COMM_WORLD, d);
    std::vector<double> a(static_cast<std::size_t>(d.a.local_elements())),
        b(static_cast<std::size_t>(d.b.local_elements()));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>((seed + 3 * i) % 7) - 3;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>((seed + 5 * i) % 11) - 5;
    std::vector<double> expected(static_cast<std::size_t>(d.c.local_elements()), 1.0), got = expected;
    plan.execute(expected.data(), a.data(), b.data(), 2.0, 0.5);
    plan.start(got.data(), a.data(), b.data(), 2.0, 0.5);
    EXPECT_TRUE(plan.in_progress());
    std::vector<double> other(got.size());
    expect_rejected<invalid_argument>([&] { plan.start(other.data(), a.data(), b.data(), 1.0, 0.0); },
                                      "still in progress");
    plan.wait();
    EXPECT_FALSE(plan.in_progress());
    EXPECT_TRUE(all_ranks(got == expected)) << "seed " << seed << ", " << m << " x " << n << " x " << k;
  }
}

}  // namespace
