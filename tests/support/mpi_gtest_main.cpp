// SPDX-License-Identifier: BSD-3-Clause
// main() for MPI GoogleTest programs: every rank runs the tests; rank 0 prints the usual report,
// the other ranks print only their failures (prefixed with the rank). The exit code is non-zero on
// every rank when any test failed on any rank, so mpiexec (and ctest) report the failure. The base seed of
// the randomized tests is rank 0's (test_main.hpp), and rank 0 ends with the count of skipped tests for ctest.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "test_main.hpp"

namespace {

class rank_failure_printer : public ::testing::EmptyTestEventListener {
 public:
  explicit rank_failure_printer(int rank) : rank_(rank) {}
  // The test's name is remembered here: asking UnitTest for the current test from inside
  // OnTestPartResult would take a mutex GoogleTest already holds there.
  void OnTestStart(const ::testing::TestInfo& info) override {
    current_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] FAILED %s at %s:%d\n%s\n", rank_, current_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    std::fflush(stderr);
  }

 private:
  int rank_;
  std::string current_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Rank 0's seed (or its complaint about REDIST_TEST_SEED), so that every rank draws the same cases.
  std::string error;
  const auto seed = rank == 0 ? redist::testing::seed_from_environment(error) : std::nullopt;
  std::uint64_t agreed[2] = {seed.value_or(0), seed ? 1u : 0u};
  MPI_Bcast(agreed, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (agreed[1] == 0) {
    if (rank == 0) std::fprintf(stderr, "%s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new rank_failure_printer(rank));
  }
  redist::testing::use_base_seed(agreed[0], rank == 0, rank == 0 ? "" : "[rank " + std::to_string(rank) + "] ");
  const int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const auto* unit = ::testing::UnitTest::GetInstance();
  int counts[2] = {local_failed, unit->successful_test_count()};  // failed ranks, tests passed on any rank
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int failed_ranks = counts[0];
  if (rank == 0) {
    std::printf("[mpi] %d rank(s) of %d reported failures\n", failed_ranks, size);
    redist::testing::print_skip_summary(unit->skipped_test_count(), unit->test_to_run_count(),
                                        failed_ranks == 0 && counts[1] == 0);
  }
  MPI_Finalize();
  return failed_ranks == 0 ? 0 : 1;
}
