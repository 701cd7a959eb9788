// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Helpers of the in-place alltoallv's MPI tests (included by tests/mpi/test_inplace_alltoallv.cpp only): count
// patterns, element types, the data and MPI's out-of-place reference, one call agreed over the ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/error.hpp"
#include "redist/exchange/inplace.hpp"
#include "test_seed.hpp"

namespace ex = redist::exchange;
using namespace redist::testing;

namespace {

// c[i][j] = |s(i, j)|, elements rank i sends to rank j; the same matrix on every rank of the communicator.
using counts_matrix = std::vector<std::vector<std::int64_t>>;

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}
std::int64_t sum_over(MPI_Comm comm, std::int64_t v) { return global_sum(v, comm); }

std::int64_t row_total(const counts_matrix& c, int i) {
  std::int64_t s = 0;
  for (std::int64_t x : c[static_cast<size_t>(i)]) s += x;
  return s;
}
std::int64_t column_total(const counts_matrix& c, int j) {
  std::int64_t s = 0;
  for (const auto& row : c) s += row[static_cast<size_t>(j)];
  return s;
}
// The largest send or receive total over all ranks (bitonic's capacity).
std::int64_t largest_total(const counts_matrix& c) {
  std::int64_t m = 0;
  for (int i = 0; i < static_cast<int>(c.size()); ++i) m = std::max({m, row_total(c, i), column_total(c, i)});
  return m;
}
bool symmetric(const counts_matrix& c) {
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = 0; j < c.size(); ++j)
      if (c[i][j] != c[j][i]) return false;
  return true;
}

// ---- count patterns ----------------------------------------------------------------------------------------

// The paper's Section 4, with N elements per rank and integer division (P need not be a power of two):
// d = (j - i) mod P;
//   case 1: N/P everywhere
//   case 2: 0 for d < P/4, N/P for P/4 <= d < P-1, N/4 for d = P-1
//   case 3: 0 for d < P/2, N/P for P/2 <= d < P-1, N/2 for d = P-1
//   case 4: N for d = P-1, else 0
counts_matrix paper_case(int which, int p, std::int64_t n) {
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      const int d = ((j - i) % p + p) % p;
      std::int64_t v = 0;
      switch (which) {
        case 1:
          v = n / p;
          break;
        case 2:
          v = d < p / 4 ? 0 : d < p - 1 ? n / p : n / 4;
          break;
        case 3:
          v = d < p / 2 ? 0 : d < p - 1 ? n / p : n / 2;
          break;
        case 4:
          v = d == p - 1 ? n : 0;
          break;
        default:
          ADD_FAILURE() << "no paper case " << which;
      }
      c[static_cast<size_t>(i)][static_cast<size_t>(j)] = v;
    }
  return c;
}

// Random counts 0 .. max_count, about a quarter of them zero; rows and columns of unequal totals. The seed
// must be the same on every rank.
counts_matrix random_counts(int p, std::uint64_t seed, std::int64_t max_count) {
  std::mt19937_64 g(seed);
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  for (auto& row : c) {
    // Some rows much heavier than others, so that send and receive totals differ per rank.
    const std::int64_t row_max = 1 + static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(max_count));
    for (auto& x : row) x = g() % 4 == 0 ? 0 : static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(row_max + 1));
  }
  return c;
}

// Rank 0 sends all of its n elements to rank P-1 (itself at P = 1); the others send random counts.
counts_matrix one_rank_to_one_peer(int p, std::uint64_t seed, std::int64_t n) {
  counts_matrix c = random_counts(p, seed, std::max<std::int64_t>(1, n / p));
  std::fill(c[0].begin(), c[0].end(), 0);
  c[0][static_cast<size_t>(p - 1)] = n;
  return c;
}

// Everybody sends n elements to rank 0 only (a gather: rank 0 receives P*n).
counts_matrix all_to_rank_zero(int p, std::int64_t n) {
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  for (auto& row : c) row[0] = n;
  return c;
}

// ---- element types ----------------------------------------------------------------------------------------

struct element_type {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t extent = 0;
  std::int64_t size = 0;
  std::vector<char> data_byte;  // per byte of the extent: whether it carries data (compared)
  bool owned = false;

  void release() {
    if (owned && type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    type = MPI_DATATYPE_NULL;
  }
};

element_type predefined(const char* name, MPI_Datatype t) {
  element_type e;
  e.name = name;
  e.type = t;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(t, &lb, &extent);
  int size = 0;
  MPI_Type_size(t, &size);
  e.extent = extent;
  e.size = size;
  e.data_byte.assign(static_cast<size_t>(extent), 1);
  return e;
}

// 16 bytes: two uint64 in a row.
element_type sixteen_bytes() {
  element_type e;
  e.name = "16 bytes";
  MPI_Type_contiguous(2, MPI_UINT64_T, &e.type);
  MPI_Type_commit(&e.type);
  e.owned = true;
  e.extent = 16;
  e.size = 16;
  e.data_byte.assign(16, 1);
  return e;
}

// struct { int32 a; /* 4-byte hole */ double b; char c; /* 7-byte hole */ }: size 13, extent 24, lb 0.
element_type struct_with_holes() {
  element_type e;
  e.name = "struct with holes";
  const int lengths[3] = {1, 1, 1};
  const MPI_Aint displacements[3] = {0, 8, 16};
  const MPI_Datatype types[3] = {MPI_INT32_T, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype s = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(3, lengths, displacements, types, &s);
  MPI_Type_create_resized(s, 0, 24, &e.type);
  MPI_Type_free(&s);
  MPI_Type_commit(&e.type);
  e.owned = true;
  e.extent = 24;
  int size = 0;
  MPI_Type_size(e.type, &size);
  e.size = size;
  e.data_byte.assign(24, 0);
  for (int b = 0; b < 4; ++b) e.data_byte[static_cast<size_t>(b)] = 1;
  for (int b = 8; b < 17; ++b) e.data_byte[static_cast<size_t>(b)] = 1;
  return e;
}

// ---- data ---------------------------------------------------------------------------------------------------

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

// Byte b of element k of s(i, j): distinct enough that any misplaced element or byte shows.
unsigned char data_value(int i, int j, std::int64_t k, std::int64_t b) {
  const std::uint64_t h = mix((static_cast<std::uint64_t>(i) << 48) ^ (static_cast<std::uint64_t>(j) << 32) ^
                              static_cast<std::uint64_t>(k) ^ (static_cast<std::uint64_t>(b / 8) << 40));
  return static_cast<unsigned char>(h >> (8 * (b % 8)));
}

// This rank's buffer: s(me, 0) .. s(me, P-1) in the first S elements (holes of the type and the rest of the
// capacity hold garbage).
std::vector<unsigned char> make_buffer(const counts_matrix& c, int me, const element_type& t, std::int64_t capacity,
                                       std::uint64_t garbage_seed) {
  std::vector<unsigned char> buf(static_cast<size_t>(std::max<std::int64_t>(1, capacity * t.extent)));
  std::mt19937_64 g(garbage_seed);
  for (auto& x : buf) x = static_cast<unsigned char>(g());
  std::int64_t at = 0;
  for (int j = 0; j < static_cast<int>(c.size()); ++j)
    for (std::int64_t k = 0; k < c[static_cast<size_t>(me)][static_cast<size_t>(j)]; ++k, ++at)
      for (std::int64_t b = 0; b < t.extent; ++b)
        if (t.data_byte[static_cast<size_t>(b)]) buf[static_cast<size_t>(at * t.extent + b)] = data_value(me, j, k, b);
  return buf;
}

std::vector<int> to_int(const std::vector<std::int64_t>& v) {
  std::vector<int> out;
  for (std::int64_t x : v) {
    EXPECT_LE(x, std::numeric_limits<int>::max());
    out.push_back(static_cast<int>(x));
  }
  return out;
}
std::vector<int> prefix(const std::vector<int>& v) {
  std::vector<int> d(v.size(), 0);
  for (size_t k = 1; k < v.size(); ++k) d[k] = d[k - 1] + v[k - 1];
  return d;
}

// MPICH's out-of-place MPI_Alltoallv of the send part of `send`: the reference result (R elements).
std::vector<unsigned char> mpi_reference(const counts_matrix& c, const std::vector<unsigned char>& send,
                                         const element_type& t, MPI_Comm comm) {
  const int me = comm_rank(comm), p = comm_size(comm);
  std::vector<std::int64_t> sc(c[static_cast<size_t>(me)]), rc(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) rc[static_cast<size_t>(i)] = c[static_cast<size_t>(i)][static_cast<size_t>(me)];
  const std::vector<int> sci = to_int(sc), rci = to_int(rc), sd = prefix(sci), rd = prefix(rci);
  std::vector<unsigned char> recv(static_cast<size_t>(std::max<std::int64_t>(1, column_total(c, me) * t.extent)), 0xEE);
  MPI_Alltoallv(send.data(), sci.data(), sd.data(), t.type, recv.data(), rci.data(), rd.data(), t.type, comm);
  return recv;
}

// Data bytes of the first `elements` elements that differ; the first few are printed.
std::int64_t count_wrong_bytes(const std::vector<unsigned char>& got, const std::vector<unsigned char>& expected,
                               std::int64_t elements, const element_type& t, const std::string& what) {
  std::int64_t wrong = 0;
  for (std::int64_t e = 0; e < elements; ++e)
    for (std::int64_t b = 0; b < t.extent; ++b) {
      const size_t at = static_cast<size_t>(e * t.extent + b);
      if (t.data_byte[static_cast<size_t>(b)] && got[at] != expected[at]) {
        if (wrong < 3)
          ADD_FAILURE() << what << ": element " << e << " byte " << b << " is " << int(got[at])
                        << ", MPI_Alltoallv gives " << int(expected[at]);
        ++wrong;
      }
    }
  return wrong;
}

// ---- one call, agreed over the ranks -------------------------------------------------------------------------

struct call_result {
  bool ok = false;            // returned
  bool refused = false;       // threw redist::invalid_argument
  bool other = false;         // threw anything else
  bool inconsistent = false;  // of those, redist::inconsistent_ranks (options that differ between ranks)
  std::string message;
  ex::inplace_report report;
};

call_result call_inplace(const std::function<ex::inplace_report()>& call) {
  call_result r;
  try {
    r.report = call();
    r.ok = true;
  } catch (const redist::invalid_argument& e) {
    r.refused = true;
    r.message = e.what();
  } catch (const redist::inconsistent_ranks& e) {
    r.other = r.inconsistent = true;
    r.message = e.what();
  } catch (const std::exception& e) {
    r.other = true;
    r.message = e.what();
  }
  return r;
}

struct agreement {
  std::int64_t ok = 0, refused = 0, other = 0, inconsistent = 0;
};
agreement agree(const call_result& r, MPI_Comm comm) {
  return {sum_over(comm, r.ok), sum_over(comm, r.refused), sum_over(comm, r.other), sum_over(comm, r.inconsistent)};
}

enum class verdict { done, refused, failed };

struct case_options {
  ex::inplace_options options;
  bool pass_recvcounts = true;
  bool full_capacity = false;  // every rank's capacity = the largest total over all ranks (bitonic needs it)
  std::int64_t slack = 0;      // elements of capacity beyond what is needed
  std::uint64_t garbage_seed = test_seed(7);
};

// Runs the in-place call on counts `c` and compares with MPI_Alltoallv. Collective over comm.
verdict check_case(const counts_matrix& c, const element_type& t, const case_options& co, MPI_Comm comm,
                   const std::string& label) {
  SCOPED_TRACE(label + ", " + t.name + ", algorithm " + ex::to_string(co.options.algorithm) + ", work " +
               std::to_string(co.options.work_bytes) + (co.pass_recvcounts ? ", recvcounts" : ", no recvcounts"));
  const int me = comm_rank(comm), p = comm_size(comm);
  const std::int64_t send_total = row_total(c, me), recv_total = column_total(c, me);
  const std::int64_t capacity = (co.full_capacity ? largest_total(c) : std::max(send_total, recv_total)) + co.slack;
  std::vector<unsigned char> buf = make_buffer(c, me, t, capacity, co.garbage_seed + static_cast<std::uint64_t>(me));
  const std::vector<unsigned char> original = buf;
  const std::vector<unsigned char> expected = mpi_reference(c, original, t, comm);
  std::vector<std::int64_t> sendcounts(c[static_cast<size_t>(me)]), recvcounts(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) recvcounts[static_cast<size_t>(i)] = c[static_cast<size_t>(i)][static_cast<size_t>(me)];

  const call_result r = call_inplace([&] {
    return ex::alltoallv_inplace(buf.data(), capacity, sendcounts.data(),
                                 co.pass_recvcounts ? recvcounts.data() : nullptr, t.type, comm, co.options);
  });
  const agreement a = agree(r, comm);
  if (a.other > 0) {
    ADD_FAILURE() << "unexpected exception on " << a.other << " rank(s)" << (r.other ? ": " + r.message : "");
    return verdict::failed;
  }
  if (a.refused > 0) {
    EXPECT_EQ(a.refused, p) << "the refusal must be collective: refused on " << a.refused << " of " << p << " ranks"
                            << (r.refused ? " (here: " + r.message + ")" : "");
    EXPECT_TRUE(buf == original) << "a refused call changed the buffer";
    const bool may_refuse = co.options.algorithm == ex::inplace_algorithm::chunked;
    EXPECT_TRUE(may_refuse) << "refused valid input: " << r.message;
    return a.refused == p && may_refuse && buf == original ? verdict::refused : verdict::failed;
  }

  // The result.
  const std::int64_t wrong = count_wrong_bytes(buf, expected, recv_total, t, label);
  EXPECT_EQ(wrong, 0);

  // The report: one algorithm everywhere, the one asked for, counters.
  const ex::inplace_report& rep = r.report;
  const std::int64_t alg = static_cast<std::int64_t>(rep.algorithm);
  EXPECT_EQ(global_max(alg, comm), -global_max(-alg, comm)) << "ranks report different algorithms";
  if (co.options.algorithm == ex::inplace_algorithm::automatic) {
    EXPECT_NE(rep.algorithm, ex::inplace_algorithm::automatic) << "the report must name the algorithm that ran";
    EXPECT_FALSE(rep.reason.empty()) << "automatic should say why";
  } else {
    EXPECT_EQ(rep.algorithm, co.options.algorithm) << "reason: " << rep.reason;
  }
  EXPECT_EQ(rep.work_bytes, co.options.work_bytes);
  std::int64_t off_rank = 0;
  for (int j = 0; j < p; ++j)
    if (j != me) off_rank += c[static_cast<size_t>(me)][static_cast<size_t>(j)];
  if (off_rank > 0) {
    EXPECT_GE(rep.bytes_sent, off_rank * t.size) << "every element that leaves the rank is sent at least once";
    EXPECT_GT(rep.messages_sent, 0);
  }
  if (rep.algorithm == ex::inplace_algorithm::chunked)  // each block straight to its owner, once
    EXPECT_LE(rep.bytes_sent, off_rank * t.extent);
  EXPECT_GE(rep.bytes_local, 0);
  std::int64_t off_rank_in = 0;
  for (int i = 0; i < p; ++i)
    if (i != me) off_rank_in += c[static_cast<size_t>(i)][static_cast<size_t>(me)];
  if (off_rank_in > 0) {
    EXPECT_GE(rep.bytes_received, off_rank_in * t.size) << "every element that arrives is received at least once";
    EXPECT_GT(rep.messages_received, 0);
  }
  // Whatever one rank sends another receives: the sums over the ranks match.
  EXPECT_EQ(global_sum(rep.bytes_sent, comm), global_sum(rep.bytes_received, comm));
  EXPECT_EQ(global_sum(rep.messages_sent, comm), global_sum(rep.messages_received, comm));
  EXPECT_GE(rep.metadata_bytes, 0);
  EXPECT_LE(rep.metadata_bytes, std::int64_t{1} << 20) << "bookkeeping should be O(P) words";
  return all_ranks(wrong == 0, comm) ? verdict::done : verdict::failed;
}

const ex::inplace_algorithm all_algorithms[] = {ex::inplace_algorithm::automatic, ex::inplace_algorithm::chunked,
                                                ex::inplace_algorithm::pairwise, ex::inplace_algorithm::bitonic};

case_options options_for(ex::inplace_algorithm a, std::int64_t work_bytes, bool pass_recvcounts) {
  case_options co;
  co.options.algorithm = a;
  co.options.work_bytes = work_bytes;
  co.pass_recvcounts = pass_recvcounts;
  co.full_capacity = a == ex::inplace_algorithm::bitonic;
  // pairwise's guard would run bitonic instead on the paper's worst cases; here we want pairwise itself.
  if (a == ex::inplace_algorithm::pairwise) co.options.pairwise_guard = 1e30;
  return co;
}

// Every algorithm on one input; chunked may refuse (collectively, nothing moved), automatic may not.
// Returns the number of chunked refusals (0 or 1).
int check_every_algorithm(const counts_matrix& c, const element_type& t, std::int64_t work_bytes, bool pass_recvcounts,
                          MPI_Comm comm, const std::string& label) {
  int refusals = 0;
  for (ex::inplace_algorithm a : all_algorithms) {
    const verdict v = check_case(c, t, options_for(a, work_bytes, pass_recvcounts), comm, label);
    if (v == verdict::refused) ++refusals;
  }
  return refusals;
}

constexpr std::int64_t small_work = std::int64_t{64} << 10;
constexpr std::int64_t default_work = std::int64_t{4} << 20;

struct owned_types {
  std::vector<element_type> list;
  owned_types() {
    list.push_back(predefined("1 byte", MPI_UINT8_T));
    list.push_back(predefined("8 bytes", MPI_UINT64_T));
    list.push_back(sixteen_bytes());
    list.push_back(struct_with_holes());
  }
  ~owned_types() {
    for (auto& t : list) t.release();
  }
};

}  // namespace
