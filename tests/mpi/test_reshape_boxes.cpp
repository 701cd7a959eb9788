// SPDX-License-Identifier: BSD-3-Clause
// make_reshape_plan(comm, my_input_boxes, my_output_boxes, type, options), the FFT libraries' calling model, against
// a serial reference written from the boxes alone: random index spaces of 1-4 axes at random origins (negative
// ones too), each side cut by recursive bisection into random boxes dealt to random ranks (several, none, empty
// ones), random axis permutations, each rank its own storage orders, relabeling on and off, every element type;
// bad boxes and disagreeing ranks rejected on every rank.
// redist-test-ranks: 1 2 3 4 7
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
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

std::string text(const index_vector& v) {
  std::string s = "(";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + ")";
}

// Cuts b into `parts` boxes along random axes (recursive bisection: not a product grid).
void bisect(rng_t& g, const box& b, int parts, std::vector<box>& out) {
  std::vector<size_t> cuttable;
  for (size_t k = 0; k < b.lo.size(); ++k)
    if (b.hi[k] - b.lo[k] >= 2) cuttable.push_back(k);
  if (parts <= 1 || cuttable.empty()) {
    out.push_back(b);
    return;
  }
  const size_t k = cuttable[static_cast<size_t>(uniform(g, 0, static_cast<std::int64_t>(cuttable.size()) - 1))];
  box left = b, right = b;
  left.hi[k] = right.lo[k] = uniform(g, b.lo[k] + 1, b.hi[k] - 1);
  const int left_parts = static_cast<int>(uniform(g, 1, parts - 1));
  bisect(g, left, left_parts, out);
  bisect(g, right, parts - left_parts, out);
}

// The space [lo, hi) cut into random boxes, dealt to random ranks in random order, an empty box here and there.
std::vector<std::vector<box>> deal(rng_t& g, const box& space, int nranks) {
  std::vector<box> cut;
  bisect(g, space, static_cast<int>(uniform(g, 1, 2 * nranks)), cut);
  std::vector<std::vector<box>> of_rank(static_cast<size_t>(nranks));
  for (const box& b : cut) of_rank[static_cast<size_t>(uniform(g, 0, nranks - 1))].push_back(b);
  for (auto& boxes : of_rank) {
    std::shuffle(boxes.begin(), boxes.end(), g);
    if (uniform(g, 0, 5) == 0) {
      box empty = space;
      empty.hi[0] = empty.lo[0];
      boxes.insert(boxes.begin() + uniform(g, 0, static_cast<std::int64_t>(boxes.size())), empty);
    }
  }
  return of_rank;
}

std::vector<int> random_permutation(rng_t& g, int d) {
  std::vector<int> p(static_cast<size_t>(d));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}

// Calls f(offset, global index) for every element of `boxes` stored one after another, each dense in `order` (axes
// fastest first; empty: C order): the storage the plan promises, written out independently of the library.
template <class F>
void for_each_stored(const std::vector<box>& boxes, std::vector<int> order, F&& f) {
  std::int64_t base = 0;
  for (const box& b : boxes) {
    const int d = static_cast<int>(b.lo.size());
    if (order.empty()) order = c_order(d);
    if (b.empty()) continue;
    index_vector g = b.lo;
    while (true) {
      std::int64_t offset = 0, stride = 1;
      for (int j = 0; j < d; ++j) {
        const auto k = static_cast<size_t>(order[static_cast<size_t>(j)]);
        offset += (g[k] - b.lo[k]) * stride;
        stride *= b.hi[k] - b.lo[k];
      }
      f(base + offset, g);
      int k = d - 1;
      for (; k >= 0; --k) {
        if (++g[static_cast<size_t>(k)] < b.hi[static_cast<size_t>(k)]) break;
        g[static_cast<size_t>(k)] = b.lo[static_cast<size_t>(k)];
      }
      if (k < 0) break;
    }
    base += b.elements();
  }
}

std::int64_t elements(const std::vector<box>& boxes) {
  std::int64_t n = 0;
  for (const box& b : boxes) n += b.elements();
  return n;
}

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// Value of global element g (any origin) of array `id`.
template <class T>
T value_of(std::uint64_t id, const index_vector& g) {
  std::int64_t x = 0;
  for (std::int64_t v : g) x = x * 1009 + v;
  return element_value<T>(id, x, 7);
}

template <class T>
void one_random_case(rng_t& g, int round) {
  const int nranks = world_size(), me = world_rank();
  const int d = static_cast<int>(uniform(g, 1, 4));
  box in_space{index_vector(static_cast<size_t>(d)), index_vector(static_cast<size_t>(d))};
  for (size_t k = 0; k < static_cast<size_t>(d); ++k) {
    in_space.lo[k] = uniform(g, -5, 5);
    in_space.hi[k] = in_space.lo[k] + uniform(g, 1, d <= 2 ? 14 : 6);
  }
  box_reshape_options o;
  if (uniform(g, 0, 3) > 0) o.axes = random_permutation(g, d);
  box out_space = in_space;
  for (size_t k = 0; k < static_cast<size_t>(d); ++k) {
    const auto from = o.axes.empty() ? k : static_cast<size_t>(o.axes[k]);
    out_space.lo[k] = in_space.lo[from];
    out_space.hi[k] = in_space.hi[from];
  }
  const auto inputs = deal(g, in_space, nranks), outputs = deal(g, out_space, nranks);
  // Each rank its own storage orders (drawn by every rank alike, so that the draws stay in step).
  std::vector<std::vector<int>> in_orders, out_orders;
  for (int r = 0; r < nranks; ++r) {
    in_orders.push_back(uniform(g, 0, 2) == 0 ? std::vector<int>{} : random_permutation(g, d));
    out_orders.push_back(uniform(g, 0, 2) == 0 ? std::vector<int>{} : random_permutation(g, d));
  }
  o.input_order = in_orders[static_cast<size_t>(me)];
  o.output_order = out_orders[static_cast<size_t>(me)];
  o.relabel = uniform(g, 0, 1) == 1;
  o.conjugate = uniform(g, 0, 1) == 1 && is_complex_v<T>;
  const T alpha = std::is_integral_v<T> ? T(1) : T(2), beta = std::is_integral_v<T> ? T(0) : T(-1);
  const std::string context = "round " + std::to_string(round) + " type " + to_string(element_type_v<T>) +
                              " input space [" + text(in_space.lo) + ", " + text(in_space.hi) + ") relabel " +
                              std::to_string(o.relabel);

  const transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, inputs[static_cast<size_t>(me)],
                                                outputs[static_cast<size_t>(me)], element_type_v<T>, o);
  const int from = plan.output_boxes_passed_by();
  ASSERT_TRUE(o.relabel || from == me) << context;
  ASSERT_EQ(plan.output_boxes_held(), outputs[static_cast<size_t>(from)]) << context;
  // Relabeling is a permutation: every rank's boxes are held by exactly one rank.
  ASSERT_EQ(global_sum(std::int64_t{1} << (2 * from)), ((std::int64_t{1} << (2 * nranks)) - 1) / 3) << context;

  std::vector<T> b(static_cast<size_t>(elements(inputs[static_cast<size_t>(me)])) + 2, T(-6));
  std::vector<T> a(static_cast<size_t>(elements(plan.output_boxes_held())) + 2, T(-5));
  for_each_stored(inputs[static_cast<size_t>(me)], o.input_order,
                  [&](std::int64_t off, const index_vector& x) { b[static_cast<size_t>(off)] = value_of<T>(1, x); });
  for_each_stored(plan.output_boxes_held(), o.output_order,
                  [&](std::int64_t off, const index_vector& x) { a[static_cast<size_t>(off)] = value_of<T>(2, x); });
  plan.execute(a.data(), b.data(), alpha, beta);
  std::int64_t wrong = 0;
  std::string first;
  std::vector<char> written(a.size(), 0);
  for_each_stored(plan.output_boxes_held(), o.output_order, [&](std::int64_t off, const index_vector& x) {
    written[static_cast<size_t>(off)] = 1;
    index_vector source(x.size());
    for (size_t k = 0; k < x.size(); ++k) source[o.axes.empty() ? k : static_cast<size_t>(o.axes[k])] = x[k];
    T bv = value_of<T>(1, source);
    if constexpr (is_complex_v<T>)
      if (o.conjugate) bv = std::conj(bv);
    const T want = alpha * bv + beta * value_of<T>(2, x);
    if (abs_diff(a[static_cast<size_t>(off)], want) > tolerance<T>() * (1 + std::abs(want)) && wrong++ == 0)
      first = "element " + text(x) + " at offset " + std::to_string(off);
  });
  for (size_t k = 0; k < a.size(); ++k)
    if (!written[k] && a[k] != T(-5) && wrong++ == 0) first = "padding at offset " + std::to_string(k) + " written";
  ASSERT_EQ(global_sum(wrong), 0) << context << "\nrank " << me << ": " << wrong << " wrong, first " << first;
}

// One typed suite over every element type the engine moves: each type its own random stream.
template <class T>
class ReshapeBoxesOfType : public ::testing::Test {};
using element_types =
    ::testing::Types<float, double, std::complex<float>, std::complex<double>, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(ReshapeBoxesOfType, element_types);

TYPED_TEST(ReshapeBoxesOfType, RandomBoxesAtAnyOriginMatchTheSerialReference) {
  rng_t g(test_seed(0xb0c5e5 + static_cast<std::uint64_t>(element_type_v<TypeParam>)));
  for (int round = 0; round < 5; ++round) {
    one_random_case<TypeParam>(g, round);
    if (this->HasFatalFailure()) return;
  }
}

TEST(ReshapeBoxes, BadBoxesAndDisagreeingRanksAreRejectedOnEveryRank) {
  const int nranks = world_size(), me = world_rank();
  const index_vector shape{4, 6, 5};
  const std::vector<box> bricks = brick_boxes(shape, {1, 1, nranks}), pencils = pencil_boxes(shape, 0, {nranks, 1});
  const box my_brick = bricks[static_cast<size_t>(me)], my_pencil = pencils[static_cast<size_t>(me)];
  const auto plan_of = [&](std::vector<box> in, std::vector<box> out, element_type t, box_reshape_options o) {
    return [=] { make_reshape_plan(MPI_COMM_WORLD, in, out, t, o); };
  };
  const auto f64 = element_type::f64;
  expect_rejected<invalid_argument>(plan_of({}, {}, f64, {}), "no rank passed a box");
  box_reshape_options o;
  o.axes = {0, 0, 1};
  expect_rejected<invalid_argument>(plan_of({my_brick}, {my_pencil}, f64, o), "axes must be a permutation");
  o = {};
  if (me == nranks - 1) o.output_order = {2, 2, 0};
  expect_rejected<invalid_argument>(plan_of({my_brick}, {my_pencil}, f64, o), "output_order must be a permutation");
  o = {};
  box inverted = my_brick;
  std::swap(inverted.lo[0], inverted.hi[0]);
  expect_rejected<invalid_argument>(plan_of({me == 0 ? inverted : my_brick}, {my_pencil}, f64, o), "> hi");
  box flat{{0, 0}, {1, 1}};
  expect_rejected<invalid_argument>(plan_of({me == 0 ? flat : my_brick}, {my_pencil}, f64, o), "axes");
  // The output space is the input's permuted, or the plan says what it expected.
  box shifted = my_pencil;
  for (auto* v : {&shifted.lo, &shifted.hi}) (*v)[1] += 1;
  expect_rejected<invalid_argument>(plan_of({my_brick}, {shifted}, f64, o), "expected the input's space");
  // Overlap: rank 0 passes its brick twice.
  if (nranks > 1) {
    std::vector<box> twice{my_brick};
    if (me == 0) twice.push_back(bricks[1]);
    expect_rejected<invalid_layout>(plan_of(twice, {my_pencil}, f64, o), "input boxes: ");
    expect_rejected<inconsistent_ranks>(plan_of({my_brick}, {my_pencil}, me == 1 ? element_type::f32 : f64, o),
                                        "every rank must pass the same");
  }
}

}  // namespace
