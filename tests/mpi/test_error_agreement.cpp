// SPDX-License-Identifier: BSD-3-Clause
// One rank's bad argument, differing options or bad handle: the same error on every rank, nothing moved, and
// the next valid call works. Covers the agreement (src/mpi/agreement.hpp) through the C and C++ entry points
// that had none or a partial one.
// redist-test-ranks: 2 3 4
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "expect_rejected.hpp"
#include "mpi/agreement.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

// A ring: each rank sends `count` doubles to the next rank and receives as many from the previous one.
struct ring {
  int next = 0, previous = 0;
  int count = 3, zero = 0;
  std::vector<double> send, recv;
  ring() {
    const int p = world_size(), me = world_rank();
    next = (me + 1) % p;
    previous = (me + p - 1) % p;
    send.assign(static_cast<std::size_t>(count), me + 0.5);
    recv.assign(static_cast<std::size_t>(count), -1.0);
  }
  int init(MPI_Info info, redist_request* request, MPI_Datatype type = MPI_DOUBLE) {
    return redist_neighbor_alltoallv_init_lists(1, &previous, 1, &next, send.data(), &count, &zero, type, recv.data(),
                                                &count, &zero, type, MPI_COMM_WORLD, info, request);
  }
  bool untouched() const { return recv == std::vector<double>(recv.size(), -1.0); }
  bool delivered() const { return recv == std::vector<double>(recv.size(), previous + 0.5); }
};

// The code every rank got, or -1 when ranks got different codes.
int same_code(int code) { return -global_max(-code) == global_max(code) ? code : -1; }

MPI_Info info_with(const char* key, const char* value) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, key, value);
  return info;
}

// The last rank passes `odd` for key, the others `usual` (nullptr: the key is not set).
void expect_differing_info_refused(const char* key, const char* usual, const char* odd) {
  ring r;
  const bool last = world_rank() == world_size() - 1;
  const char* value = last ? odd : usual;
  MPI_Info info = value ? info_with(key, value) : MPI_INFO_NULL;
  redist_request request = REDIST_REQUEST_NULL;
  const int code = r.init(info, &request);
  EXPECT_EQ(same_code(code), MPI_ERR_ARG) << key << ": rank " << world_rank() << " got " << code;
  EXPECT_EQ(request, REDIST_REQUEST_NULL);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  // The next valid call works and delivers.
  ASSERT_EQ(r.init(MPI_INFO_NULL, &request), MPI_SUCCESS);
  ASSERT_EQ(redist_start(&request), MPI_SUCCESS);
  ASSERT_EQ(redist_wait(&request), MPI_SUCCESS);
  EXPECT_TRUE(all_ranks(r.delivered()));
  EXPECT_EQ(redist_request_free(&request), MPI_SUCCESS);
}

}  // namespace

TEST(ErrorAgreementC, DifferentStrategyOnOneRank) {
  expect_differing_info_refused("redist_strategy", "standard", "aggregate");
}

TEST(ErrorAgreementC, AutoOnSomeRanksOnly) { expect_differing_info_refused("redist_strategy", "standard", nullptr); }

TEST(ErrorAgreementC, DifferentCostModelOnOneRank) {
  expect_differing_info_refused("redist_cost_model", "defaults", "1e-6,1e-7,1e-9,2e-6,5e-7,1e-9,1e-9,1e-9");
}

TEST(ErrorAgreementC, DifferentRegionSizeOnOneRank) { expect_differing_info_refused("redist_region_size", "1", "2"); }

TEST(ErrorAgreementC, NullDatatypeOnOneRank) {
  ring r;
  redist_request request = REDIST_REQUEST_NULL;
  const bool last = world_rank() == world_size() - 1;
  const int code = r.init(MPI_INFO_NULL, &request, last ? MPI_DATATYPE_NULL : MPI_DOUBLE);
  EXPECT_EQ(same_code(code), MPI_ERR_TYPE) << "rank " << world_rank() << " got " << code;
  EXPECT_EQ(request, REDIST_REQUEST_NULL);
  EXPECT_TRUE(all_ranks(r.untouched()));
}

TEST(ErrorAgreementC, ByteOffsetsPastSixtyFourBitsOnOneRank) {
  ring r;
  // A type whose extent is 2^40 bytes: a displacement of 2^30 elements is 2^70 bytes.
  MPI_Datatype huge = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_DOUBLE, 0, MPI_Aint{1} << 40, &huge);
  MPI_Type_commit(&huge);
  const bool last = world_rank() == world_size() - 1;
  int far = 1 << 30;
  redist_request request = REDIST_REQUEST_NULL;
  const int code = redist_neighbor_alltoallv_init_lists(
      1, &r.previous, 1, &r.next, r.send.data(), &r.count, last ? &far : &r.zero, last ? huge : MPI_DOUBLE,
      r.recv.data(), &r.count, &r.zero, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  EXPECT_EQ(same_code(code), MPI_ERR_COUNT) << "rank " << world_rank() << " got " << code;
  EXPECT_EQ(request, REDIST_REQUEST_NULL);
  MPI_Type_free(&huge);
}

TEST(ErrorAgreementC, StaleAndUnknownHandlesAreRefused) {
  ring r;
  redist_request request = REDIST_REQUEST_NULL;
  ASSERT_EQ(r.init(MPI_INFO_NULL, &request), MPI_SUCCESS);
  const redist_request copy = request;
  ASSERT_EQ(redist_request_free(&request), MPI_SUCCESS);
  EXPECT_EQ(request, REDIST_REQUEST_NULL);
  redist_request stale = copy;
  EXPECT_EQ(redist_start(&stale), MPI_ERR_REQUEST);
  EXPECT_EQ(redist_wait(&stale), MPI_ERR_REQUEST);
  const char* strategy = nullptr;
  EXPECT_EQ(redist_neighbor_query(stale, &strategy, nullptr), MPI_ERR_REQUEST);
  EXPECT_EQ(redist_request_free(&stale), MPI_ERR_REQUEST);
  // A value init never returned.
  redist_request made_up = reinterpret_cast<redist_request>(std::uintptr_t{0x7fff1234});
  EXPECT_EQ(redist_start(&made_up), MPI_ERR_REQUEST);
  EXPECT_EQ(redist_request_free(&made_up), MPI_ERR_REQUEST);
  // A new request never takes the freed one's handle.
  ASSERT_EQ(r.init(MPI_INFO_NULL, &request), MPI_SUCCESS);
  EXPECT_NE(request, copy);
  EXPECT_EQ(redist_request_free(&request), MPI_SUCCESS);
}

TEST(ErrorAgreementCpp, DifferentExchangeOptionsOnOneRank) {
  ring r;
  exchange::exchange_options options;
  options.strategy = world_rank() == 0 ? exchange::neighbor_strategy::standard : exchange::neighbor_strategy::automatic;
  const exchange::neighbor_buffers buffers{r.send.data(), &r.count, &r.zero, MPI_DOUBLE,
                                           r.recv.data(), &r.count, &r.zero, MPI_DOUBLE};
  expect_rejected<inconsistent_ranks>(
      [&] { exchange::neighbor_alltoallv_init({r.previous}, {r.next}, buffers, MPI_COMM_WORLD, options); },
      "different exchange options");
  EXPECT_TRUE(all_ranks(r.untouched()));
}

TEST(ErrorAgreementCpp, NodeBufferNegativeSizeOnOneRank) {
  const bool last = world_rank() == world_size() - 1;
  expect_rejected<invalid_argument>([&] { node_buffer b(MPI_COMM_WORLD, last ? -1 : 64); }, "must be >= 0");
  node_buffer fine(MPI_COMM_WORLD, 64);
  EXPECT_EQ(fine.bytes(), 64);
}

TEST(ErrorAgreementCpp, InplaceLowestFailingRankWins) {
  // Rank 0 passes a negative count, the last rank a null counts array: every rank reports rank 0's error.
  const int p = world_size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 0);
  if (world_rank() == 0) counts[0] = -1;
  std::vector<double> buf(4, 1.0);
  const bool last = world_rank() == p - 1;
  expect_rejected<invalid_count>(
      [&] {
        exchange::alltoallv_inplace(buf.data(), 4, last ? nullptr : counts.data(), nullptr, MPI_DOUBLE, MPI_COMM_WORLD);
      },
      "rank 0: ");
  EXPECT_TRUE(all_ranks(buf == std::vector<double>(4, 1.0)));
}

// An agreement inside another's step (a set-up that agrees on its own part): the error it raised on every rank
// keeps its type and its "rank r: " (the rank that failed first, not the lowest of the ranks that all recorded
// it); a local error whose message merely looks like that is prefixed as any other.
TEST(ErrorAgreementCpp, InnerAgreementsErrorRaisedAsItIs) {
  const int p = world_size(), last = p - 1;
  const auto outer_with_inner = [&] {
    mpi::agreement outer(MPI_COMM_WORLD);
    outer.attempt([&] {
      mpi::agreement inner(MPI_COMM_WORLD);
      if (world_rank() == last) inner.fail(mpi::error_kind::invalid_layout, "inner problem");
      inner.conclude();
    });
    outer.conclude();
  };
  expect_rejected<invalid_layout>(outer_with_inner, "rank " + std::to_string(last) + ": inner problem");
  const auto local_lookalike = [&] {
    mpi::agreement outer(MPI_COMM_WORLD);
    outer.attempt([&] {
      if (world_rank() == last) throw invalid_count("rank 7: a message that looks agreed");
    });
    outer.conclude();
  };
  expect_rejected<invalid_count>(local_lookalike, "rank " + std::to_string(last) + ": rank 7: a message");
  // Ranks that disagree on a hash inside an inner agreement: the same inconsistent_ranks, unprefixed, everywhere.
  const auto inner_hashes = [&] {
    mpi::agreement outer(MPI_COMM_WORLD);
    outer.attempt([&] {
      mpi::agreement inner(MPI_COMM_WORLD);
      inner.require_same(world_rank() == last ? 2 : 1, "hashes differ");
      inner.conclude();
    });
    outer.conclude();
  };
  if (p > 1) {
    std::string what;
    try {
      inner_hashes();
    } catch (const inconsistent_ranks& e) {
      what = e.what();
    }
    EXPECT_TRUE(all_ranks(what == "hashes differ")) << "message: " << what;
  }
}

TEST(ErrorAgreementCpp, InplaceErrorCodesInC) {
  const int p = world_size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 0);
  std::vector<double> buf(4, 1.0);
  const bool last = world_rank() == p - 1;
  // A null buffer with a capacity, on the last rank only: MPI_ERR_BUFFER everywhere.
  const int code = redist_alltoallv_inplace(last ? nullptr : buf.data(), 4, counts.data(), nullptr, MPI_DOUBLE,
                                            MPI_COMM_WORLD, nullptr);
  EXPECT_EQ(same_code(code), MPI_ERR_BUFFER);
}

TEST(ErrorAgreementCpp, InversePlanStillChecksBuffers) {
  const int me = world_rank(), p = world_size();
  block_cyclic_params bp;
  bp.m = bp.n = 8;
  bp.mb = bp.nb = 2;
  bp.proc_rows = p;
  const grid_layout a = block_cyclic(bp, me);
  bp.proc_rows = 1;
  bp.proc_cols = p;
  const grid_layout b = block_cyclic(bp, me);
  const transform_plan forward = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64);
  const transform_plan backward = forward.inverse();
  std::vector<double> x(static_cast<std::size_t>(std::max<std::int64_t>(b.local_elements(), 1)), 2.0);
  std::vector<double> y(static_cast<std::size_t>(std::max<std::int64_t>(a.local_elements(), 1)), 3.0);
  // The inverse writes into b's storage from a's: a null output on the last rank (with elements) is refused
  // on every rank.
  const bool last = me == p - 1 && b.local_elements() > 0;
  const bool any = global_max(last ? 1 : 0) > 0;
  if (!any) GTEST_SKIP() << "the last rank holds no element of B";
  expect_rejected<invalid_argument>([&] { backward.execute(last ? nullptr : x.data(), y.data()); }, "rank ");
  EXPECT_TRUE(all_ranks(y == std::vector<double>(y.size(), 3.0)));
}
