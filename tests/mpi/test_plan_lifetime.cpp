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

}  // namespace
