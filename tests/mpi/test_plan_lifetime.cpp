// SPDX-License-Identifier: BSD-3-Clause
// Plans kept in globals (a common pattern: a solver caches its redistribution plans) are destroyed after
// main() returned, i.e. after MPI_Finalize. Their destructors must then leave the MPI objects (shared
// window, communicator, datatypes) alone instead of calling into a finalized MPI library, which aborts
// the process: this program's exit code (checked by ctest on every rank) catches that.
// redist-test-ranks: 1 2 4
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/redist.hpp"

using namespace redist;

namespace {

// One plan per exchange strategy, deliberately never destroyed before static destruction.
std::vector<std::unique_ptr<transform_plan>> cached_plans;

TEST(PlanLifetime, PlansCachedInGlobalsOutliveFinalize) {
  const int rank = redist::testing::world_rank(), size = redist::testing::world_size();
  block_cyclic_params pb{64, 48, 8, 8};
  pb.proc_rows = size;
  block_cyclic_params pa{64, 48, 16, 16};
  pa.proc_cols = size;
  const grid_layout b = block_cyclic(pb, rank), a = block_cyclic(pa, rank);
  for (auto strategy :
       {exchange_strategy::point_to_point, exchange_strategy::alltoallv, exchange_strategy::shared_memory}) {
    transform_options options;
    options.strategy = strategy;
    cached_plans.push_back(std::make_unique<transform_plan>(
        make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64, options)));
    std::vector<double> bv(static_cast<size_t>(b.local_elements()), 2.0);
    std::vector<double> av(static_cast<size_t>(a.local_elements()), 0.0);
    cached_plans.back()->execute(av.data(), bv.data(), 1.5, 0.0);
    for (double x : av) ASSERT_EQ(x, 3.0);
  }
}

// A moved-from (or default-constructed) plan holds nothing: its accessors answer with nothing instead of
// dereferencing the moved implementation, and executing it is refused.
TEST(PlanLifetime, AnEmptyPlanAnswersWithNothing) {
  const int rank = redist::testing::world_rank(), size = redist::testing::world_size();
  block_cyclic_params p{16, 16, 4, 4};
  p.proc_rows = size;
  const grid_layout l = block_cyclic(p, rank);
  transform_plan planned = make_transform_plan(MPI_COMM_WORLD, l, l, op::identity, element_type::f64);
  const transform_plan moved = std::move(planned);
  const auto answers_with_nothing = [](const transform_plan& e) {
    EXPECT_TRUE(e.jobs().empty());
    EXPECT_TRUE(e.reshape_jobs().empty());
    EXPECT_EQ(e.statistics().messages_sent, 0);
    EXPECT_EQ(e.strategy(), exchange_strategy::automatic);
    EXPECT_EQ(e.communicator(), MPI_COMM_NULL);
    EXPECT_TRUE(e.output_boxes_held().empty());
    EXPECT_EQ(e.output_boxes_passed_by(), -1);
    EXPECT_FALSE(e.in_progress());
    std::vector<double> x(16);
    EXPECT_THROW(e.execute(x.data(), x.data(), 1.0, 0.0), invalid_argument);
  };
  answers_with_nothing(planned);  // NOLINT(bugprone-use-after-move): what is tested
  answers_with_nothing(transform_plan());
  EXPECT_EQ(moved.jobs().size(), 1u);
  EXPECT_NE(moved.communicator(), MPI_COMM_NULL);
}

}  // namespace
