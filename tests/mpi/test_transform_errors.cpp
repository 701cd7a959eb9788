// SPDX-License-Identifier: BSD-3-Clause
// Bad input is rejected on every rank, with the same exception and a message that says what is wrong,
// before any data moves: A is left exactly as it was.
// redist-test-ranks: 1 2 3 4
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "expect_rejected.hpp"
#include "redist/redist.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

block_cyclic_params square(std::int64_t n, std::int64_t nb) {
  block_cyclic_params p;
  p.m = p.n = n;
  p.mb = p.nb = nb;
  p.proc_rows = world_size();
  return p;
}

// Runs f; expects exception E on every rank with `needle` in its message, and A unchanged.
template <class E, class F>
void expect_rejected(F&& f, const std::vector<double>& a, const std::string& needle) {
  const std::vector<double> before = a;
  redist::testing::expect_rejected<E>(std::forward<F>(f), needle);
  EXPECT_TRUE(all_ranks(a == before)) << "A was modified before the error was raised";
}

}  // namespace

TEST(TransformErrors, ShapeMismatch) {
  const int me = world_rank();
  auto a = block_cyclic(square(10, 3), me);
  auto pb = square(10, 3);
  pb.n = 9;
  auto b = block_cyclic(pb, me);
  std::vector<double> A(static_cast<size_t>(a.local_elements()), 1.5), B(static_cast<size_t>(b.local_elements()), 2.5);
  expect_rejected<dimension_mismatch>(
      [&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0); }, A, "same shape");
  // With a transpose the shapes must match after transposition.
  expect_rejected<dimension_mismatch>(
      [&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::transpose, 1.0, 0.0); }, A, "op(B)");
}

TEST(TransformErrors, RanksDisagreeOnGlobalDescription) {
  const int me = world_rank();
  auto pa = square(12, 4);
  if (me == 0) pa.mb = 5;  // rank 0 believes in other blocks
  auto a = block_cyclic(pa, me);
  auto b = block_cyclic(square(12, 2), me);
  std::vector<double> A(static_cast<size_t>(a.local_elements() + 16), 1.0),
      B(static_cast<size_t>(b.local_elements()), 2.0);
  if (world_size() == 1) {
    transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0);  // nothing to disagree with
    return;
  }
  expect_rejected<inconsistent_ranks>(
      [&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0); }, A, "different global");
  // The check can be turned off (the caller vouches for consistency); then nothing is checked.
  // (Not executed here: inconsistent input without the check is undefined by design.)
}

// A negative size on one rank stops every rank before anything is allocated (no rank is left waiting in
// the allocation's collectives); a valid buffer can be made afterwards.
TEST(TransformErrors, NodeBufferNegativeSizeOnOneRank) {
  const int me = world_rank();
  try {
    node_buffer bad(MPI_COMM_WORLD, me == 0 ? -8 : 64);
    ADD_FAILURE() << "a node_buffer of -8 bytes on rank 0 was accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must be >= 0"), std::string::npos) << e.what();
  }
  node_buffer good(MPI_COMM_WORLD, 64);
  EXPECT_NE(good.data(), nullptr);
  EXPECT_EQ(good.bytes(), 64);
}

// Chunk sizes of the shared-memory streams: negative is rejected; ranks that disagree (both ends of a
// stream must cut it alike) are caught by the consistency check before any data moves.
TEST(TransformErrors, StreamChunkBytesNegativeOrDifferent) {
  const int me = world_rank();
  auto a = block_cyclic(square(40, 8), me);
  auto b = block_cyclic(square(40, 3), me);
  std::vector<double> A(static_cast<size_t>(a.local_elements()), 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  transform_options o;
  o.strategy = exchange_strategy::shared_memory;
  o.stream_chunk_bytes = me == 0 ? -1 : 1024;
  expect_rejected<invalid_argument>(
      [&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0, o); }, A, "stream_chunk_bytes");
  if (world_size() == 1) return;
  o.stream_chunk_bytes = me == 0 ? 512 : 1024;
  expect_rejected<inconsistent_ranks>(
      [&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0, o); }, A, "different global");
}

// An element_region with an unknown shape is rejected (also when one rank alone passes it); relabeling,
// which weighs whole rectangles, refuses jobs with a region.
TEST(TransformErrors, ElementRegionShapeUnknownOrRelabeled) {
  const int me = world_rank();
  auto a = block_cyclic(square(12, 5), me);
  auto b = block_cyclic(square(12, 2), me);
  std::vector<double> A(static_cast<size_t>(a.local_elements()), 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  const element_region bad{me == world_size() - 1 ? static_cast<region_shape>(7) : region_shape::upper, 0};
  expect_rejected<invalid_argument>(
      [&] {
        make_transform_plan(MPI_COMM_WORLD, {job_description{a, b, op::identity, element_type::f64, bad}})
            .execute(std::vector<job_buffers>{job_buffers{A.data(), B.data()}});
      },
      A, "element_region::shape");
  const element_region lower{region_shape::lower, 0};
  expect_rejected<invalid_argument>(
      [&] {
        relabel_targets(MPI_COMM_WORLD, {job_description{a, b, op::identity, element_type::f64, lower}});
      },
      A, "element_region");
}

TEST(TransformErrors, LeadingDimensionTooSmallOnOneRank) {
  const int me = world_rank();
  auto pa = square(20, 4);
  auto a_ok = block_cyclic(pa, me);
  if (me == world_size() - 1) pa.lld = 1;  // too small for this rank's local rows
  auto a = block_cyclic(pa, me);
  auto b = block_cyclic(square(20, 3), me);
  std::vector<double> A(static_cast<size_t>(a_ok.local_elements()), 4.0),
      B(static_cast<size_t>(b.local_elements()), 2.0);
  expect_rejected<invalid_layout>(
      [&] {
        transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0,
                  {exchange_strategy::automatic, false});
      },
      A, "leading dimension");
}

TEST(TransformErrors, OwnerOutsideCommunicator) {
  const int me = world_rank();
  const int n = world_size();
  auto a = blocked({0, 4, 8}, {0, 8}, {0, n}, me);  // rank n does not exist
  auto b = block_cyclic(square(8, 2), me);
  std::vector<double> A(64, 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  expect_rejected<invalid_layout>([&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0); },
                                  A, "outside the communicator");
}

TEST(TransformErrors, SplitsNotIncreasing) {
  const int me = world_rank();
  auto a = blocked({0, 5, 3, 8}, {0, 8}, {0, 0, 0}, me);
  auto b = block_cyclic(square(8, 2), me);
  std::vector<double> A(64, 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  expect_rejected<invalid_layout>([&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0); },
                                  A, "splits must increase");
}

TEST(TransformErrors, CustomLayoutMissingLocalBlock) {
  const int me = world_rank();
  // Every block owned by rank 0, which forgets to list block (1,1).
  std::vector<local_block> blocks;
  if (me == 0)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 2; ++j)
        if (!(i == 1 && j == 1)) blocks.push_back({{i, j}, (i * 2 + j) * 16, 4, storage_order::col_major});
  auto a = custom({0, 4, 8}, {0, 4, 8}, {0, 0, 0, 0}, blocks, me);
  auto b = block_cyclic(square(8, 3), me);
  std::vector<double> A(64, 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  expect_rejected<invalid_layout>([&] { transform(MPI_COMM_WORLD, a, A.data(), b, B.data(), op::identity, 1.0, 0.0); },
                                  A, "does not list it");
}

TEST(TransformErrors, ExecuteRejectsBadBuffers) {
  const int me = world_rank();
  auto a = block_cyclic(square(9, 2), me);
  auto b = block_cyclic(square(9, 4), me);
  std::vector<double> A(static_cast<size_t>(a.local_elements()), 1.0), B(static_cast<size_t>(b.local_elements()), 2.0);
  auto plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64);
  // A null source with alpha != 0 on the rank that holds B data.
  expect_rejected<invalid_argument>([&] { plan.execute<double>(A.data(), me == 0 ? nullptr : B.data(), 1.0, 0.0); }, A,
                                    "null");
  // Wrong number of job buffers.
  expect_rejected<invalid_argument>([&] { plan.execute(std::vector<job_buffers>{}); }, A, "job buffers");
  // Wrong element type for the single-job convenience.
  std::vector<float> Af(A.size()), Bf(B.size());
  expect_rejected<invalid_argument>([&] { plan.execute<float>(Af.data(), Bf.data(), 1.0f, 0.0f); }, A,
                                    "built for double");
}

TEST(TransformErrors, IntegerPlansCopyOnly) {
  const int me = world_rank();
  auto a = block_cyclic(square(6, 2), me);
  auto b = block_cyclic(square(6, 3), me);
  std::vector<std::int32_t> Ai(static_cast<size_t>(a.local_elements()), 1),
      Bi(static_cast<size_t>(b.local_elements()), 2);
  auto plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::i32);
  bool thrown = false;
  try {
    plan.execute<std::int32_t>(Ai.data(), Bi.data(), 2, 0);
  } catch (const invalid_argument& e) {
    thrown = std::string(e.what()).find("plain copies") != std::string::npos;
  }
  EXPECT_TRUE(all_ranks(thrown));
  EXPECT_TRUE(all_ranks(std::all_of(Ai.begin(), Ai.end(), [](std::int32_t v) { return v == 1; })));
}
