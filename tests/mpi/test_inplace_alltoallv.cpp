// SPDX-License-Identifier: BSD-3-Clause
// redist-test-ranks: 1 2 3 4 6
// (no 7: odd and not a power of two like 3, and 7 oversubscribed ranks took the suite 2 minutes)
// The in-place variable-size alltoallv (include/redist/exchange/inplace.hpp) against MPICH's out-of-place
// MPI_Alltoallv on the same data: every algorithm (automatic, chunked, pairwise, bitonic) on the paper's four
// count patterns (Zhuang, Nakashima and Nagamochi, Section 4), random counts with zeros and send total !=
// receive total, one rank sending everything to one peer, everybody sending to rank 0; elements of 1, 8 and
// 16 bytes and a struct with holes (extent > size: only the data bytes are compared); the 64 KiB work buffer
// (pieces stream) and the default; recvcounts given and null; sub-communicators. The report: the same
// algorithm on every rank, the one asked for, bytes and messages when data leave the rank, work_bytes as
// asked. chunked may refuse an input it cannot schedule: then it must refuse on every rank with the buffer
// untouched (automatic, run on every input too, must succeed). Bad input (a negative count, a capacity too
// small, recvcounts that do not match the senders, a work buffer size out of range, a type with lb != 0 or
// data beyond its extent, bitonic without its capacity, an unknown algorithm) is refused with redist::invalid_argument
// (or its subclass for counts, buffers and datatypes) on every rank, also when only one rank is wrong, with nothing
// moved; ranks asking for different algorithms or passing different pairwise guards with
// redist::inconsistent_ranks. The cached private communicator is freed with
// the caller's. Plans (make_inplace_plan, make_alltoall_inplace_plan, make_inplace_plan_symmetric): executed
// several times on new random data in new buffers, each result matches MPI and the one-call form, the counters
// repeat; bad input refused at make time on every rank with the same message; an empty plan refused locally.
#include "inplace_test_cases.hpp"

namespace {

// ---- the tests -------------------------------------------------------------------------------------------------

TEST(InplaceAlltoallv, DefaultOptionsAreTheDocumentedOnes) {
  const ex::inplace_options o;
  EXPECT_EQ(o.algorithm, ex::inplace_algorithm::automatic);
  EXPECT_EQ(o.work_bytes, std::int64_t{4} << 20);
  EXPECT_STREQ(ex::to_string(ex::inplace_algorithm::chunked), "chunked");
  EXPECT_STREQ(ex::to_string(ex::inplace_algorithm::pairwise), "pairwise");
  EXPECT_STREQ(ex::to_string(ex::inplace_algorithm::bitonic), "bitonic");
}

// The paper's four cases, N = 24000 elements of 8 bytes per rank (192 KB: pieces stream through the 64 KiB
// work buffer), with the small and the default work buffer.
TEST(InplaceAlltoallv, PaperCasesEveryAlgorithmMatchesMpi) {
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const int p = world_size();
  int refusals = 0;
  for (int which = 1; which <= 4; ++which)
    for (std::int64_t work : {small_work, default_work}) {
      const counts_matrix c = paper_case(which, p, 24000);
      refusals += check_every_algorithm(c, t, work, /*pass_recvcounts=*/which % 2 == 0, MPI_COMM_WORLD,
                                        "paper case " + std::to_string(which));
      // Case 1 is symmetric: chunked always fits (docs: "the symmetric case always fits").
      if (which == 1) EXPECT_EQ(refusals, 0) << "chunked refused the symmetric case";
    }
  if (world_rank() == 0) std::printf("[info] paper cases at %d ranks: chunked refused %d of 8 inputs\n", p, refusals);
}

// Random counts with zeros, send total != receive total per rank, every element type, recvcounts given and
// null, the small work buffer.
TEST(InplaceAlltoallv, RandomCountsEveryTypeEveryAlgorithmMatchesMpi) {
  owned_types types;
  const int p = world_size();
  int refusals = 0, inputs = 0;
  for (int seed = 0; seed < 3; ++seed) {
    const counts_matrix c = random_counts(p, test_seed(1000 + static_cast<std::uint64_t>(seed)), 3000);
    for (const element_type& t : types.list) {
      refusals += check_every_algorithm(c, t, small_work, seed % 2 == 0, MPI_COMM_WORLD,
                                        "random counts, seed " + std::to_string(seed));
      ++inputs;
    }
  }
  if (world_rank() == 0)
    std::printf("[info] random counts at %d ranks: chunked refused %d of %d inputs\n", p, refusals, inputs);
}

// More random patterns at the default work buffer, including heavily skewed ones, with capacity to spare.
TEST(InplaceAlltoallv, RandomCountsWithSlackMatchMpi) {
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const int p = world_size();
  for (int seed = 0; seed < 4; ++seed) {
    const counts_matrix c = random_counts(p, test_seed(2000 + static_cast<std::uint64_t>(seed)), 1 + 500 * seed);
    for (ex::inplace_algorithm a : all_algorithms) {
      case_options co = options_for(a, default_work, seed % 2 == 1);
      co.slack = 17 * seed;
      check_case(c, t, co, MPI_COMM_WORLD, "random with slack, seed " + std::to_string(seed));
    }
  }
}

TEST(InplaceAlltoallv, OneRankSendsEverythingToOnePeer) {
  owned_types types;
  const int p = world_size();
  const counts_matrix c = one_rank_to_one_peer(p, test_seed(3000), 30000);
  for (const element_type& t : types.list)
    check_every_algorithm(c, t, small_work, true, MPI_COMM_WORLD, "rank 0 sends all to rank P-1");
  check_every_algorithm(c, types.list[1], default_work, false, MPI_COMM_WORLD, "rank 0 sends all to rank P-1");
}

TEST(InplaceAlltoallv, EverybodySendsToRankZero) {
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const counts_matrix c = all_to_rank_zero(world_size(), 5000);
  check_every_algorithm(c, t, small_work, true, MPI_COMM_WORLD, "gather to rank 0");
  check_every_algorithm(c, t, default_work, false, MPI_COMM_WORLD, "gather to rank 0");
  // ... and back: rank 0 scatters.
  counts_matrix back = c;
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = 0; j < c.size(); ++j) back[i][j] = c[j][i];
  check_every_algorithm(back, t, small_work, true, MPI_COMM_WORLD, "scatter from rank 0");
}

TEST(InplaceAlltoallv, NothingToSendAndOnlyToSelf) {
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const int p = world_size();
  const counts_matrix zero(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  check_every_algorithm(zero, t, small_work, true, MPI_COMM_WORLD, "all counts zero");
  check_every_algorithm(zero, t, small_work, false, MPI_COMM_WORLD, "all counts zero");
  counts_matrix self = zero;
  for (int i = 0; i < p; ++i) self[static_cast<size_t>(i)][static_cast<size_t>(i)] = 1000 + 10 * i;
  check_every_algorithm(self, t, small_work, true, MPI_COMM_WORLD, "only to self");
}

// Counts are 64-bit throughout; here elements of one byte whose per-rank totals are over a MiB (more bytes
// than the work buffer many times over), with counts held and passed as int64.
TEST(InplaceAlltoallv, SixtyFourBitCountsOfBytes) {
  const element_type t = predefined("1 byte", MPI_UINT8_T);
  const int p = world_size();
  const std::int64_t n = (std::int64_t{1} << 20) + 12345;  // not a multiple of anything
  for (int which : {1, 3}) {
    const counts_matrix c = paper_case(which, p, n);
    for (ex::inplace_algorithm a : all_algorithms)
      check_case(c, t, options_for(a, small_work, true), MPI_COMM_WORLD,
                 "int64 counts, paper case " + std::to_string(which));
  }
}

// Two sub-communicators at once (even and odd ranks), each its own exchange.
TEST(InplaceAlltoallv, SubCommunicatorsMatchMpi) {
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const std::uint64_t seed = test_seed(4000);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &half);
  const counts_matrix c = random_counts(comm_size(half), seed + static_cast<std::uint64_t>(world_rank() % 2), 2000);
  for (ex::inplace_algorithm a : all_algorithms)
    check_case(c, t, options_for(a, small_work, true), half, "half of the ranks");
  MPI_Comm_free(&half);
}

// The private duplicate each call uses is cached on the caller's communicator and must be freed with it: MPICH
// has about 2046 communicator contexts per process, so a duplicate leaked per communicator (or per call) makes
// this loop fail. Communicators of MPI_COMM_SELF keep it local and fast at any rank count.
TEST(InplaceAlltoallv, PrivateCommunicatorIsFreedWithTheCallers) {
  std::vector<std::uint64_t> buf{11, 22};
  for (int round = 0; round < 2200; ++round) {
    MPI_Comm own = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &own), MPI_SUCCESS);
    for (int call = 0; call < 2; ++call)  // the second call finds the cached duplicate
      ASSERT_NO_THROW(ex::alltoall_inplace(buf.data(), 2, MPI_UINT64_T, own, ex::inplace_options{})) << round;
    ASSERT_EQ(MPI_Comm_free(&own), MPI_SUCCESS);
  }
  EXPECT_EQ(buf, (std::vector<std::uint64_t>{11, 22}));
}

// ---- bad input ----------------------------------------------------------------------------------------------

// A valid random problem whose pieces the bad-input tests spoil one at a time.
struct problem {
  counts_matrix c;
  element_type t = predefined("8 bytes", MPI_UINT64_T);
  int me = world_rank(), p = world_size();
  std::vector<std::int64_t> sendcounts, recvcounts;
  std::int64_t capacity = 0;
  std::vector<unsigned char> buf, original;

  explicit problem(std::uint64_t seed, std::int64_t slack = 0) {
    c = random_counts(p, test_seed(seed), 500);
    for (auto& row : c) row[0] = std::max<std::int64_t>(row[0], 1);  // every total > 0
    sendcounts = c[static_cast<size_t>(me)];
    for (int i = 0; i < p; ++i) recvcounts.push_back(c[static_cast<size_t>(i)][static_cast<size_t>(me)]);
    capacity = std::max(row_total(c, me), column_total(c, me)) + slack;
    // 8 spare elements: a capacity one more than needed is real memory.
    buf = make_buffer(c, me, t, capacity + 8, test_seed(99));
    original = buf;
  }
  bool last() const { return me == p - 1; }
};

// The call must throw redist::invalid_argument on every rank and leave the buffer as it was.
void expect_refused_everywhere(const std::function<ex::inplace_report()>& call, const std::vector<unsigned char>& buf,
                               const std::vector<unsigned char>& original, const std::string& what) {
  SCOPED_TRACE(what);
  const call_result r = call_inplace(call);
  const agreement a = agree(r, MPI_COMM_WORLD);
  EXPECT_EQ(a.refused, world_size()) << "refused on " << a.refused << " rank(s), returned on " << a.ok
                                     << ", other exceptions on " << a.other << (r.other ? ": " + r.message : "");
  EXPECT_TRUE(buf == original) << "the buffer changed";
  if (r.refused) EXPECT_FALSE(r.message.empty());
}

TEST(InplaceAlltoallvErrors, NegativeCountOnOneRank) {
  for (bool with_recvcounts : {false, true}) {
    problem x(5000);
    if (x.last()) x.sendcounts[0] = -1;
    expect_refused_everywhere(
        [&] {
          return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(),
                                       with_recvcounts ? x.recvcounts.data() : nullptr, x.t.type, MPI_COMM_WORLD);
        },
        x.buf, x.original, with_recvcounts ? "negative sendcount, recvcounts given" : "negative sendcount");
  }
  problem x(5001);
  if (x.last()) x.recvcounts[0] = -1;
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), x.recvcounts.data(), x.t.type,
                                     MPI_COMM_WORLD);
      },
      x.buf, x.original, "negative recvcount");
}

TEST(InplaceAlltoallvErrors, CapacityTooSmallOnOneRank) {
  for (auto a : all_algorithms) {
    problem x(5100);
    if (x.last()) x.capacity -= 1;
    ex::inplace_options o;
    o.algorithm = a;
    expect_refused_everywhere(
        [&] {
          return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD,
                                       o);
        },
        x.buf, x.original, std::string("capacity one short, ") + ex::to_string(a));
  }
  problem x(5101);
  if (x.last()) x.capacity = -1;
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD);
      },
      x.buf, x.original, "negative capacity");
}

TEST(InplaceAlltoallvErrors, RecvcountsNotMatchingTheSendersOnOneRank) {
  problem x(5200, /*slack=*/4);  // room for the extra element: the capacity is not what is wrong
  if (x.last()) x.recvcounts[0] += 1;
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), x.recvcounts.data(), x.t.type,
                                     MPI_COMM_WORLD);
      },
      x.buf, x.original, "recvcounts[0] one too many on the last rank");
  if (world_size() >= 2) {
    // Same totals, wrong split: two entries swapped.
    problem y(5201, 4);
    if (y.last()) {
      if (y.recvcounts[1] > 0) {
        y.recvcounts[0] += 1;
        y.recvcounts[1] -= 1;
      } else if (y.recvcounts[0] > 0) {
        y.recvcounts[0] -= 1;
        y.recvcounts[1] += 1;
      } else {
        y.recvcounts[0] = 1;  // (then the total differs too)
      }
    }
    expect_refused_everywhere(
        [&] {
          return ex::alltoallv_inplace(y.buf.data(), y.capacity, y.sendcounts.data(), y.recvcounts.data(), y.t.type,
                                       MPI_COMM_WORLD);
        },
        y.buf, y.original, "recvcounts with the right total but the wrong split");
  }
}

TEST(InplaceAlltoallvErrors, WorkBytesOutOfRange) {
  for (std::int64_t w : {std::int64_t{65535}, (std::int64_t{1} << 30) + 1, std::int64_t{-4096}, std::int64_t{1}}) {
    problem x(5300);
    ex::inplace_options o;
    o.work_bytes = w;
    expect_refused_everywhere(
        [&] {
          return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD,
                                       o);
        },
        x.buf, x.original, "work_bytes " + std::to_string(w) + " on every rank");
  }
  // On one rank only: the refusal must still be collective.
  problem x(5301);
  ex::inplace_options o;
  if (x.last()) o.work_bytes = 1000;
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD,
                                     o);
      },
      x.buf, x.original, "work_bytes 1000 on the last rank only");
}

// Options are part of the collective contract: a rank asking for another algorithm is refused everywhere, with
// inconsistent_ranks (as every entry point's options that differ between ranks).
TEST(InplaceAlltoallvErrors, AlgorithmDifferingBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  problem x(5310);
  ex::inplace_options o;
  o.algorithm = x.last() ? ex::inplace_algorithm::pairwise : ex::inplace_algorithm::automatic;
  const call_result r = call_inplace([&] {
    return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD, o);
  });
  const agreement a = agree(r, MPI_COMM_WORLD);
  EXPECT_EQ(a.inconsistent, world_size()) << "inconsistent_ranks on " << a.inconsistent << " rank(s), returned on "
                                          << a.ok << ", invalid_argument on " << a.refused << ": " << r.message;
  EXPECT_NE(r.message.find("passed other options"), std::string::npos) << r.message;
  EXPECT_TRUE(x.buf == x.original) << "the buffer changed";
}

// pairwise_guard decides whether an explicit pairwise runs bitonic instead; ranks passing different guards
// must not run different algorithms (before main 1a4ab74 they did, and hung).
TEST(InplaceAlltoallvErrors, PairwiseGuardDifferingBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  // The paper's worst case for pairwise (Section 3.3): rank 0 holds S(P-1), rank i the block for i-1.
  const int p = world_size(), me = world_rank();
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  c[0][static_cast<size_t>(p - 1)] = 1000;
  for (int i = 1; i < p; ++i) c[static_cast<size_t>(i)][static_cast<size_t>(i - 1)] = 1000;
  const std::int64_t capacity = largest_total(c);  // bitonic fits
  std::vector<unsigned char> buf = make_buffer(c, me, t, capacity, 3);
  const std::vector<unsigned char> original = buf;
  const std::vector<unsigned char> expected = mpi_reference(c, original, t, MPI_COMM_WORLD);
  std::vector<std::int64_t> sendcounts = c[static_cast<size_t>(me)];
  ex::inplace_options o;
  o.algorithm = ex::inplace_algorithm::pairwise;
  o.pairwise_guard = me == 0 ? 1e-9 : 1e30;  // rank 0 would switch to bitonic, the others not
  const call_result r = call_inplace([&] {
    return ex::alltoallv_inplace(buf.data(), capacity, sendcounts.data(), nullptr, t.type, MPI_COMM_WORLD, o);
  });
  const agreement a = agree(r, MPI_COMM_WORLD);
  // Either refused everywhere as options that differ (inconsistent_ranks, nothing moved) or the same algorithm
  // everywhere with the right result.
  if (a.inconsistent > 0 || a.refused > 0) {
    EXPECT_EQ(a.inconsistent, p) << r.message;
    EXPECT_TRUE(buf == original);
  } else {
    ASSERT_EQ(a.ok, p);
    const std::int64_t alg = static_cast<std::int64_t>(r.report.algorithm);
    EXPECT_EQ(global_max(alg), -global_max(-alg));
    EXPECT_EQ(count_wrong_bytes(buf, expected, column_total(c, me), t, "differing guards"), 0);
  }
}

TEST(InplaceAlltoallvErrors, UnsuitableTypes) {
  problem x(5400);
  // Lower bound 8: elements would not start at the buffer.
  MPI_Datatype lb8 = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_UINT64_T, 8, 16, &lb8);
  MPI_Type_commit(&lb8);
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity / 2, x.sendcounts.data(), nullptr, lb8, MPI_COMM_WORLD);
      },
      x.buf, x.original, "type with lb 8");
  MPI_Type_free(&lb8);
  // Data beyond the extent: an 8-byte value with extent 4.
  MPI_Datatype short_extent = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_UINT64_T, 0, 4, &short_extent);
  MPI_Type_commit(&short_extent);
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, short_extent,
                                     MPI_COMM_WORLD);
      },
      x.buf, x.original, "type whose data lie beyond its extent");
  MPI_Type_free(&short_extent);
}

TEST(InplaceAlltoallvErrors, BitonicWithoutItsCapacity) {
  if (world_size() < 2) GTEST_SKIP() << "one rank always holds the largest total";
  // Everybody sends to rank 0: rank 0 receives P*n, the others hold n; bitonic needs P*n everywhere.
  const element_type t = predefined("8 bytes", MPI_UINT64_T);
  const counts_matrix c = all_to_rank_zero(world_size(), 100);
  const int me = world_rank();
  const std::int64_t capacity = std::max(row_total(c, me), column_total(c, me));
  std::vector<unsigned char> buf = make_buffer(c, me, t, capacity, 5);
  const std::vector<unsigned char> original = buf;
  const std::vector<std::int64_t> sendcounts = c[static_cast<size_t>(me)];
  ex::inplace_options o;
  o.algorithm = ex::inplace_algorithm::bitonic;
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(buf.data(), capacity, sendcounts.data(), nullptr, t.type, MPI_COMM_WORLD, o);
      },
      buf, original, "bitonic, capacity = own totals");
}

TEST(InplaceAlltoallvErrors, UnknownAlgorithm) {
  problem x(5500);
  ex::inplace_options o;
  o.algorithm = static_cast<ex::inplace_algorithm>(17);
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD,
                                     o);
      },
      x.buf, x.original, "algorithm 17");
}

// Counts whose sum does not fit in 64 bits: refused (no capacity can hold them), not wrapped around.
TEST(InplaceAlltoallvErrors, CountsWhoseSumOverflows) {
  problem x(5600);
  if (x.last() && x.p >= 2) {
    x.sendcounts[0] = std::numeric_limits<std::int64_t>::max() / 2 + 1;
    x.sendcounts[1] = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  } else if (x.last()) {
    x.sendcounts[0] = std::numeric_limits<std::int64_t>::max();  // times the extent overflows
  }
  expect_refused_everywhere(
      [&] {
        return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, x.t.type, MPI_COMM_WORLD);
      },
      x.buf, x.original, "sendcounts summing past 2^63 on the last rank");
}

// ---- plans ------------------------------------------------------------------------------------------------

// Random bytes for the send part (the rest of the capacity too): new data for each execution.
std::vector<unsigned char> random_buffer(std::int64_t capacity, const element_type& t, std::uint64_t seed) {
  std::vector<unsigned char> buf(static_cast<size_t>(std::max<std::int64_t>(1, capacity * t.extent)));
  std::mt19937_64 g(seed);
  for (auto& x : buf) x = static_cast<unsigned char>(g());
  return buf;
}

bool same_on_every_rank(const std::string& text, MPI_Comm comm = MPI_COMM_WORLD) {
  const auto h = static_cast<std::int64_t>(std::hash<std::string>{}(text) >> 1);
  return global_max(h, comm) == -global_max(-h, comm);
}

// One plan per algorithm on random counts, executed three times on fresh random data in fresh buffers (so the
// address changes): every result matches MPI_Alltoallv and the one-call form on the same data, and every
// execution reports the same counters (the plan is repeatable). chunked may refuse at make time (collectively).
TEST(InplacePlan, RepeatedExecutionsMatchMpiAndTheOneCall) {
  owned_types types;
  const int me = world_rank(), p = world_size();
  for (int seed = 0; seed < 2; ++seed) {
    const counts_matrix c = random_counts(p, test_seed(6000 + static_cast<std::uint64_t>(seed)), 2000);
    for (const element_type& t : {types.list[1], types.list[3]})
      for (ex::inplace_algorithm a : all_algorithms) {
        const case_options co = options_for(a, small_work, seed == 0);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", " + t.name + ", " + ex::to_string(a));
        const std::int64_t capacity =
            (co.full_capacity ? largest_total(c) : std::max(row_total(c, me), column_total(c, me))) + 3;
        std::vector<std::int64_t> sendcounts(c[static_cast<size_t>(me)]), recvcounts(static_cast<size_t>(p));
        for (int i = 0; i < p; ++i)
          recvcounts[static_cast<size_t>(i)] = c[static_cast<size_t>(i)][static_cast<size_t>(me)];
        ex::inplace_plan plan;
        const call_result made = call_inplace([&] {
          plan = ex::make_inplace_plan(MPI_COMM_WORLD, capacity, sendcounts.data(),
                                       co.pass_recvcounts ? recvcounts.data() : nullptr, t.type, co.options);
          return plan.report();
        });
        const agreement agreed = agree(made, MPI_COMM_WORLD);
        if (agreed.refused == p && a == ex::inplace_algorithm::chunked) continue;  // chunked cannot schedule it
        ASSERT_EQ(agreed.ok, p) << "make_inplace_plan failed: " << made.message;
        ASSERT_TRUE(plan.valid());
        EXPECT_EQ(plan.capacity(), capacity);
        EXPECT_NE(plan.report().algorithm, ex::inplace_algorithm::automatic);
        EXPECT_EQ(plan.report().recvcounts, recvcounts);
        EXPECT_EQ(plan.report().bytes_sent, 0) << "the plan's report has no counters";
        ex::inplace_report first;
        for (int round = 0; round < 3; ++round) {
          const std::uint64_t data_seed =
              test_seed(7000 + 97 * static_cast<std::uint64_t>(round)) + static_cast<std::uint64_t>(me);
          std::vector<unsigned char> buf = random_buffer(capacity, t, data_seed);
          std::vector<unsigned char> once = buf;
          const std::vector<unsigned char> expected = mpi_reference(c, buf, t, MPI_COMM_WORLD);
          const call_result r = call_inplace([&] { return plan.execute(buf.data()); });
          ASSERT_EQ(agree(r, MPI_COMM_WORLD).ok, p) << "execute failed: " << r.message;
          const call_result one = call_inplace([&] {
            return ex::alltoallv_inplace(once.data(), capacity, sendcounts.data(), nullptr, t.type, MPI_COMM_WORLD,
                                         co.options);
          });
          ASSERT_EQ(agree(one, MPI_COMM_WORLD).ok, p) << "alltoallv_inplace failed: " << one.message;
          const std::string label = "round " + std::to_string(round);
          EXPECT_EQ(count_wrong_bytes(buf, expected, column_total(c, me), t, label + ": plan vs MPI"), 0);
          EXPECT_EQ(count_wrong_bytes(buf, once, column_total(c, me), t, label + ": plan vs one call"), 0);
          EXPECT_EQ(r.report.algorithm, one.report.algorithm);
          EXPECT_EQ(r.report.reason, one.report.reason);
          EXPECT_EQ(r.report.recvcounts, one.report.recvcounts);
          EXPECT_EQ(r.report.bytes_sent, one.report.bytes_sent);
          EXPECT_EQ(r.report.bytes_received, one.report.bytes_received);
          EXPECT_EQ(r.report.bytes_local, one.report.bytes_local);
          if (round == 0) {
            first = r.report;
            continue;
          }
          EXPECT_EQ(r.report.bytes_sent, first.bytes_sent) << label;
          EXPECT_EQ(r.report.bytes_received, first.bytes_received) << label;
          EXPECT_EQ(r.report.messages_sent, first.messages_sent) << label;
          EXPECT_EQ(r.report.messages_received, first.messages_received) << label;
          EXPECT_EQ(r.report.bytes_local, first.bytes_local) << label;
        }
      }
  }
}

TEST(InplacePlan, FixedSizeAndSymmetricPlansRepeat) {
  const int me = world_rank(), p = world_size();
  const std::int64_t count = 300;
  ex::inplace_plan fixed = ex::make_alltoall_inplace_plan(MPI_COMM_WORLD, count, MPI_UINT64_T);
  EXPECT_EQ(fixed.capacity(), count * p);
  // Symmetric counts, areas in reverse rank order with gaps of 3 that must stay untouched.
  counts_matrix c = random_counts(p, test_seed(7500), 400);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < i; ++j)
      c[static_cast<size_t>(i)][static_cast<size_t>(j)] = c[static_cast<size_t>(j)][static_cast<size_t>(i)];
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  int end = 3;
  for (int j = p - 1; j >= 0; --j) {
    counts[static_cast<size_t>(j)] = static_cast<int>(c[static_cast<size_t>(me)][static_cast<size_t>(j)]);
    displs[static_cast<size_t>(j)] = end;
    end += counts[static_cast<size_t>(j)] + 3;
  }
  ex::inplace_plan sym = ex::make_inplace_plan_symmetric(MPI_COMM_WORLD, counts.data(), displs.data(), MPI_UINT64_T);
  for (int round = 0; round < 3; ++round) {
    std::mt19937_64 g(test_seed(7600 + static_cast<std::uint64_t>(round)) + static_cast<std::uint64_t>(me));
    std::vector<std::uint64_t> a(static_cast<size_t>(count * p)), a_expected(a.size());
    for (auto& x : a) x = g();
    MPI_Alltoall(a.data(), static_cast<int>(count), MPI_UINT64_T, a_expected.data(), static_cast<int>(count),
                 MPI_UINT64_T, MPI_COMM_WORLD);
    fixed.execute(a.data());
    EXPECT_TRUE(a == a_expected) << "fixed-size plan, round " << round;

    std::vector<std::uint64_t> b(static_cast<size_t>(end) + 1);
    for (auto& x : b) x = g();
    const std::vector<std::uint64_t> before = b;
    // Rank j's area for me travels here: the reference from MPI_Alltoallv with the same areas, out of place.
    std::vector<std::uint64_t> b_expected = b;
    MPI_Alltoallv(before.data(), counts.data(), displs.data(), MPI_UINT64_T, b_expected.data(), counts.data(),
                  displs.data(), MPI_UINT64_T, MPI_COMM_WORLD);
    const ex::inplace_report r = sym.execute(b.data());
    EXPECT_TRUE(b == b_expected) << "symmetric plan, round " << round << " (gaps included)";
    EXPECT_EQ(global_sum(r.bytes_sent), global_sum(r.bytes_received));
  }
}

// A plan keeps its private communicator (shared with the cache on the caller's) when the caller frees its
// communicator first, as transform and neighbor plans keep their duplicates.
TEST(InplacePlan, OutlivesTheCallersCommunicator) {
  const int p = world_size();
  const std::int64_t count = 5;
  MPI_Comm own = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &own), MPI_SUCCESS);
  ex::inplace_plan plan = ex::make_alltoall_inplace_plan(own, count, MPI_UINT64_T);
  ASSERT_EQ(MPI_Comm_free(&own), MPI_SUCCESS);
  std::vector<std::uint64_t> a(static_cast<size_t>(count * p)), expected(a.size());
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<std::uint64_t>(world_rank()) * 1000 + k;
  MPI_Alltoall(a.data(), static_cast<int>(count), MPI_UINT64_T, expected.data(), static_cast<int>(count), MPI_UINT64_T,
               MPI_COMM_WORLD);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint64_t> b = a;
    ASSERT_NO_THROW(plan.execute(b.data()));
    EXPECT_TRUE(all_ranks(b == expected)) << "round " << round;
  }
}

// The plan shape: start() runs the exchange, wait() returns, statistics() has the latest execution's counters and
// communicator() is congruent with the caller's; a second start or a wait without a start throws locally.
TEST(InplacePlan, StartWaitStatisticsAndCommunicator) {
  const int p = world_size();
  const std::int64_t count = 3;
  ex::inplace_plan plan = ex::make_alltoall_inplace_plan(MPI_COMM_WORLD, count, MPI_UINT64_T);
  int compared = MPI_UNEQUAL;
  MPI_Comm_compare(plan.communicator(), MPI_COMM_WORLD, &compared);
  EXPECT_EQ(compared, MPI_CONGRUENT);
  EXPECT_EQ(plan.statistics().bytes_sent, 0);  // before the first execution: the plan's report
  std::vector<std::uint64_t> a(static_cast<size_t>(count * p)), expected(a.size());
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<std::uint64_t>(world_rank()) * 1000 + k;
  MPI_Alltoall(a.data(), static_cast<int>(count), MPI_UINT64_T, expected.data(), static_cast<int>(count), MPI_UINT64_T,
               MPI_COMM_WORLD);
  EXPECT_THROW(plan.wait(), redist::invalid_argument);
  plan.start(a.data());
  EXPECT_TRUE(plan.in_progress());
  EXPECT_THROW(plan.start(a.data()), redist::invalid_argument);
  plan.wait();
  EXPECT_FALSE(plan.in_progress());
  EXPECT_TRUE(all_ranks(a == expected));
  const ex::inplace_report started = plan.statistics();
  EXPECT_EQ(global_sum(started.bytes_sent), global_sum(started.bytes_received));
  const ex::inplace_report executed = plan.execute(a.data());  // the same counters as the started execution's
  EXPECT_EQ(started.bytes_sent, executed.bytes_sent);
  EXPECT_EQ(started.messages_sent, executed.messages_sent);
  EXPECT_EQ(started.bytes_local, executed.bytes_local);
}

// Misuse of a plan is this rank's alone: thrown locally, before any message (so every rank may do it here).
TEST(InplacePlan, EmptyPlanAndNullBufferThrowLocally) {
  ex::inplace_plan plan = ex::make_alltoall_inplace_plan(MPI_COMM_WORLD, 4, MPI_UINT64_T);
  ex::inplace_plan moved = std::move(plan);
  EXPECT_TRUE(moved.valid());
  EXPECT_FALSE(plan.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  std::vector<std::uint64_t> buf(static_cast<size_t>(4 * world_size()));
  EXPECT_THROW(plan.execute(buf.data()), redist::invalid_argument);
  EXPECT_THROW((void)plan.report(), redist::invalid_argument);
  EXPECT_THROW((void)ex::inplace_plan().execute(buf.data()), redist::invalid_argument);
  EXPECT_THROW(moved.execute(nullptr), redist::invalid_buffer);
  EXPECT_NO_THROW(moved.execute(buf.data()));  // the plan still works after the refusals
}

// Bad input is refused by make_inplace_plan on every rank, with the same error and message, when one rank is
// wrong; make_alltoall_inplace_plan and make_inplace_plan_symmetric likewise.
// A rank passing another datatype is refused on every rank with the same error (before 2026-12-05 the agreement
// did not compare them: that rank failed alone, later, and the others waited).
// `type` (this rank's) refused with invalid_datatype, the same message on every rank and containing `says`, the
// buffer untouched, by the one-shot call and by the MPI_IN_PLACE plan form.
void expect_datatype_refused(problem& x, MPI_Datatype type, const std::string& says, const std::string& what) {
  std::string message;
  expect_refused_everywhere(
      [&] {
        try {
          return ex::alltoallv_inplace(x.buf.data(), x.capacity, x.sendcounts.data(), nullptr, type, MPI_COMM_WORLD);
        } catch (const redist::invalid_datatype& e) {
          message = e.what();
          throw;
        }
      },
      x.buf, x.original, what);
  EXPECT_TRUE(same_on_every_rank(message)) << message;
  EXPECT_NE(message.find(says), std::string::npos) << message;
  std::vector<int> counts(static_cast<size_t>(world_size()), 0), displs(counts.size(), 0);
  EXPECT_THROW(
      (void)ex::make_inplace_plan_symmetric(MPI_COMM_WORLD, counts.data(), displs.data(), type, std::int64_t{1} << 20),
      redist::invalid_datatype)
      << "the MPI_IN_PLACE form";
}

TEST(InplaceAlltoallvErrors, DatatypeDifferingBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  problem x(5420);
  MPI_Datatype pair = MPI_DATATYPE_NULL;  // two of the problem's 8-byte elements: another size and extent
  MPI_Type_contiguous(2, x.t.type, &pair);
  MPI_Type_commit(&pair);
  const MPI_Datatype type = x.last() ? pair : x.t.type;
  if (x.last()) x.buf.resize(2 * x.buf.size()), x.original = x.buf;  // room for its counts of 16-byte elements
  expect_datatype_refused(x, type, "extents 8 to 16 bytes, sizes 8 to 16",
                          "a datatype of 16 bytes on the last rank, 8 elsewhere");
  MPI_Type_free(&pair);
}

// A datatype not committed, on the last rank or on every rank: refused alike everywhere before anything moves.
TEST(InplaceAlltoallvErrors, UncommittedDatatypeRefused) {
  for (const bool everywhere : {false, true}) {
    SCOPED_TRACE(everywhere ? "on every rank" : "on the last rank");
    problem x(5421);
    MPI_Datatype same = MPI_DATATYPE_NULL;  // the problem's element, not committed
    MPI_Type_contiguous(1, x.t.type, &same);
    expect_datatype_refused(x, everywhere || x.last() ? same : x.t.type, "not committed", "an uncommitted datatype");
    MPI_Type_free(&same);
  }
}

TEST(InplacePlan, BadInputRefusedAtMakeOnEveryRank) {
  const int p = world_size();
  const auto refused_alike = [&](const std::function<void()>& make, const std::string& what) {
    SCOPED_TRACE(what);
    std::string message = "(returned)";
    int kind = 0;
    try {
      make();
    } catch (const redist::invalid_count& e) {
      message = e.what(), kind = 1;
    } catch (const redist::invalid_argument& e) {
      message = e.what(), kind = 2;
    }
    EXPECT_EQ(global_sum(kind > 0 ? 1 : 0), p) << "refused on some ranks only; here: " << message;
    EXPECT_TRUE(same_on_every_rank(message + std::to_string(kind))) << "different errors; here: " << message;
    if (p > 1) EXPECT_NE(message.find("rank " + std::to_string(p - 1)), std::string::npos) << message;
  };
  problem x(8000);
  const auto make = [&] {
    (void)ex::make_inplace_plan(MPI_COMM_WORLD, x.capacity, x.sendcounts.data(), x.recvcounts.data(), x.t.type);
  };
  if (x.last()) x.sendcounts[0] = -1;
  refused_alike(make, "negative count on the last rank");
  x = problem(8001);
  if (x.last()) --x.capacity;
  refused_alike(make, "capacity too small on the last rank");
  x = problem(8002);
  if (x.last()) x.recvcounts[0] += 1;
  refused_alike(make, "recvcounts not matching the senders on the last rank");
  refused_alike([&] { (void)ex::make_alltoall_inplace_plan(MPI_COMM_WORLD, x.last() ? -1 : 4, MPI_UINT64_T); },
                "negative count for the fixed-size plan on the last rank");
  std::vector<int> counts(static_cast<size_t>(p), 0), displs(static_cast<size_t>(p), 0);
  refused_alike(
      [&] {
        (void)ex::make_inplace_plan_symmetric(MPI_COMM_WORLD, counts.data(), displs.data(), MPI_UINT64_T,
                                              x.last() ? 1000 : std::int64_t{4} << 20);
      },
      "work_bytes out of range for the symmetric plan on the last rank");
}

}  // namespace
