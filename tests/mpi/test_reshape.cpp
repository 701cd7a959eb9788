// SPDX-License-Identifier: BSD-3-Clause
// Property tests of N-dimensional reshapes (A = alpha * permute(B, axes) + beta * A) against a serial reference:
// d = 1..5, block-cyclic layouts on d-dimensional grids and boxes (product grids, recursive bisections, several or no
// boxes per rank, empty boxes), random axis permutations and storage orders, every element type, alpha and beta
// including 0, every exchange strategy, repeated executions, batches mixing dimensions, inverse plans and
// relabeled targets; the 3-D FFT cycle brick -> x-pencils -> y-pencils -> z-pencils -> bricks; bad inputs
// rejected on every rank before anything moves.
// redist-test-nodes: 4:2 7:3
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "expect_rejected.hpp"
#include "mpi_test_support.hpp"
#include "nd_reference.hpp"
#include "random_layouts.hpp"
#include "redist/redist.hpp"
#include "test_seed.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

using index_vector = std::vector<std::int64_t>;

std::string text(const std::vector<int>& v) {
  std::string s = "{";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "}";
}

// Calls f(offset, global index) for every element of `l` this rank stores: brute force over the whole index space
// (the shapes here are small), independent of the engine's run and tile logic.
template <class F>
void for_each_local_element(const nd_layout& l, F&& f) {
  const int d = l.ndim();
  const index_vector shape = l.shape();
  for (std::int64_t e : shape)
    if (e == 0) return;
  index_vector g(static_cast<size_t>(d), 0);
  while (true) {
    if (l.owner(block_of(l, g).data()) == l.my_rank()) {
      const std::int64_t offset = offset_of(l, g);
      if (offset < 0)
        ADD_FAILURE() << "an element of a block this rank owns lies in none of its listed blocks";
      else
        f(offset, g);
    }
    int k = d - 1;
    for (; k >= 0; --k) {
      if (++g[static_cast<size_t>(k)] < shape[static_cast<size_t>(k)]) break;
      g[static_cast<size_t>(k)] = 0;
    }
    if (k < 0) return;
  }
}

std::int64_t linear(const index_vector& g, const index_vector& shape) {
  std::int64_t x = 0;
  for (size_t k = 0; k < g.size(); ++k) x = x * shape[k] + g[k];
  return x;
}

std::vector<int> random_permutation(rng_t& g, int d) {
  std::vector<int> p(static_cast<size_t>(d));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}

// A random shape of d axes with at most ~max_elements elements (axes of extent 0 now and then).
index_vector random_shape(rng_t& g, int d, std::int64_t max_elements) {
  index_vector s(static_cast<size_t>(d));
  const auto per_axis = static_cast<std::int64_t>(std::pow(static_cast<double>(max_elements), 1.0 / d));
  for (auto& e : s) e = uniform(g, 1, std::max<std::int64_t>(1, per_axis));
  if (uniform(g, 0, 30) == 0) s[static_cast<size_t>(uniform(g, 0, d - 1))] = 0;
  return s;
}

std::vector<int> random_order(rng_t& g, int d) {
  switch (uniform(g, 0, 2)) {
    case 0:
      return c_order(d);
    case 1:
      return fortran_order(d);
    default:
      return random_permutation(g, d);
  }
}

// Recursive bisection of [lo, hi) into `parts` boxes along random axes: boxes that do not form a product grid.
void bisect(rng_t& g, box b, int parts, std::vector<box>& out) {
  const int d = static_cast<int>(b.lo.size());
  std::vector<int> cuttable;
  for (int k = 0; k < d; ++k)
    if (b.hi[static_cast<size_t>(k)] - b.lo[static_cast<size_t>(k)] >= 2) cuttable.push_back(k);
  if (parts <= 1 || cuttable.empty()) {
    out.push_back(b);
    return;
  }
  const size_t k =
      static_cast<size_t>(cuttable[static_cast<size_t>(uniform(g, 0, static_cast<std::int64_t>(cuttable.size()) - 1))]);
  const std::int64_t cut = uniform(g, b.lo[k] + 1, b.hi[k] - 1);
  box left = b, right = b;
  left.hi[k] = cut;
  right.lo[k] = cut;
  const int left_parts = static_cast<int>(uniform(g, 1, parts - 1));
  bisect(g, left, left_parts, out);
  bisect(g, right, parts - left_parts, out);
}

// A random layout of `shape` over nranks ranks: block-cyclic on a d-dimensional grid, or boxes (a product grid or a
// bisection, dealt to random ranks, some ranks with several boxes or none, empty boxes added here and there).
nd_layout random_nd_layout(rng_t& g, const index_vector& shape, int nranks, int me, std::string& how) {
  const int d = static_cast<int>(shape.size());
  const std::vector<int> order = random_order(g, d);
  const bool empty_space = std::find(shape.begin(), shape.end(), 0) != shape.end();
  if (empty_space || uniform(g, 0, 2) == 0) {
    index_vector block(static_cast<size_t>(d));
    std::vector<int> grid(static_cast<size_t>(d), 1);
    int positions = 1;
    for (int k = 0; k < d; ++k) {
      block[static_cast<size_t>(k)] = uniform(g, 1, std::max<std::int64_t>(1, shape[static_cast<size_t>(k)]));
      const int most = nranks / positions;
      grid[static_cast<size_t>(k)] = static_cast<int>(uniform(g, 1, std::max(1, std::min(most, 3))));
      positions *= grid[static_cast<size_t>(k)];
    }
    std::vector<int> ranks(static_cast<size_t>(nranks));
    std::iota(ranks.begin(), ranks.end(), 0);
    std::shuffle(ranks.begin(), ranks.end(), g);
    ranks.resize(static_cast<size_t>(positions));
    how = "block_cyclic_nd grid " + text(grid) + " ranks " + text(ranks) + " order " + text(order);
    return block_cyclic_nd(shape, block, grid, me, order, ranks);
  }
  box whole{index_vector(static_cast<size_t>(d), 0), shape};
  std::vector<box> boxes;
  bisect(g, whole, static_cast<int>(uniform(g, 1, 2 * nranks)), boxes);
  std::vector<std::vector<box>> of_rank(static_cast<size_t>(nranks));
  const bool one_each = boxes.size() <= static_cast<size_t>(nranks) && uniform(g, 0, 1) == 0;
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), g);
  for (size_t b = 0; b < boxes.size(); ++b)
    of_rank[static_cast<size_t>(one_each ? ranks[b] : static_cast<int>(uniform(g, 0, nranks - 1)))].push_back(boxes[b]);
  if (uniform(g, 0, 3) == 0) {  // an empty box somewhere
    box e = boxes.front();
    e.hi[0] = e.lo[0];
    of_rank[static_cast<size_t>(uniform(g, 0, nranks - 1))].push_back(e);
  }
  // Half the time every rank stores in an order of its own; blocks travel in `order` all the same.
  const bool own_orders = uniform(g, 0, 1) == 0;
  std::vector<std::vector<int>> storage(static_cast<size_t>(nranks), order);
  if (own_orders)
    for (auto& o : storage) o = random_order(g, d);
  how = "box_layout " + std::to_string(boxes.size()) + " boxes" + (one_each ? " (one per rank)" : "") +
        " packing order " + text(order) + (own_orders ? " storage orders per rank" : "");
  if (own_orders)
    for (const auto& o : storage) how += " " + text(o);
  return box_layout(of_rank, me, storage[static_cast<size_t>(me)], order);
}

template <class T>
T value_at(std::uint64_t id, std::int64_t x) {
  return element_value<T>(id, x, 7);
}

template <class T>
T conj_of(T v) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return std::conj(v);
  else
    return v;
}

template <class T>
bool close(T got, T want) {
  if constexpr (std::is_integral_v<T>) {
    return got == want;
  } else {
    const double tol = std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>> ? 1e-4 : 1e-12;
    return std::abs(got - want) <= tol * (1.0 + std::abs(want));
  }
}

// One job's data on this rank, with padding that must stay untouched.
template <class T>
struct reshape_data {
  reshape_job job;
  std::vector<T> a, b;
  T alpha{}, beta{};
  std::uint64_t a_id = 1, b_id = 2;

  void fill() {
    const index_vector a_shape = job.a.shape(), b_shape = job.b.shape();
    a.assign(static_cast<size_t>(job.a.local_elements() + 3), T(-5));
    b.assign(static_cast<size_t>(job.b.local_elements() + 3), T(-6));
    for_each_local_element(job.b, [&](std::int64_t off, const index_vector& g) {
      b[static_cast<size_t>(off)] = value_at<T>(b_id, linear(g, b_shape));
    });
    for_each_local_element(job.a, [&](std::int64_t off, const index_vector& g) {
      a[static_cast<size_t>(off)] = value_at<T>(a_id, linear(g, a_shape));
    });
  }
  // Wrong elements of A (and touched padding) on this rank.
  std::int64_t errors(std::string& first) const {
    const index_vector a_shape = job.a.shape(), b_shape = job.b.shape();
    const int d = job.a.ndim();
    std::vector<char> is_element(a.size(), 0);
    std::int64_t wrong = 0;
    for_each_local_element(job.a, [&](std::int64_t off, const index_vector& g) {
      is_element[static_cast<size_t>(off)] = 1;
      index_vector from(static_cast<size_t>(d));
      for (int i = 0; i < d; ++i)
        from[static_cast<size_t>(job.axes.empty() ? i : job.axes[static_cast<size_t>(i)])] = g[static_cast<size_t>(i)];
      T bv = value_at<T>(b_id, linear(from, b_shape));
      if (job.conjugate) bv = conj_of(bv);
      const T old = value_at<T>(a_id, linear(g, a_shape));
      const T want = beta == T(0) ? alpha * bv : alpha * bv + beta * old;
      if (!close(a[static_cast<size_t>(off)], want) && wrong++ == 0)
        first = "element " + std::to_string(linear(g, a_shape)) + " at offset " + std::to_string(off);
    });
    for (size_t k = 0; k < a.size(); ++k)
      if (!is_element[k] && a[k] != T(-5) && wrong++ == 0)
        first = "padding at offset " + std::to_string(k) + " written";
    return wrong;
  }
};

template <class T>
void random_scalars(rng_t& g, reshape_data<T>& d) {
  if constexpr (std::is_integral_v<T>) {
    d.alpha = T(1);
    d.beta = T(0);
  } else {
    const T choices[] = {T(0), T(1), T(-1), T(0.5), T(2.25)};
    d.alpha = choices[uniform(g, 0, 4)];
    d.beta = choices[uniform(g, 0, 4)];
  }
}

exchange_strategy random_strategy(rng_t& g) {
  const exchange_strategy s[] = {exchange_strategy::automatic, exchange_strategy::point_to_point,
                                 exchange_strategy::alltoallv, exchange_strategy::shared_memory};
  return s[uniform(g, 0, 3)];
}

template <class T>
void one_random_case(rng_t& g, int round) {
  const int nranks = world_size(), me = world_rank();
  const int d = static_cast<int>(uniform(g, 1, 5));
  reshape_data<T> data;
  const index_vector a_shape = random_shape(g, d, 600);
  data.job.axes = uniform(g, 0, 3) == 0 ? std::vector<int>{} : random_permutation(g, d);
  index_vector b_shape(static_cast<size_t>(d));
  for (int i = 0; i < d; ++i)
    b_shape[static_cast<size_t>(data.job.axes.empty() ? i : data.job.axes[static_cast<size_t>(i)])] =
        a_shape[static_cast<size_t>(i)];
  std::string a_how, b_how;
  data.job.a = random_nd_layout(g, a_shape, nranks, me, a_how);
  data.job.b = random_nd_layout(g, b_shape, nranks, me, b_how);
  data.job.type = element_type_v<T>;
  data.job.conjugate = uniform(g, 0, 1) == 1;
  random_scalars(g, data);
  transform_options o;
  o.strategy = random_strategy(g);
  o.stream_chunk_bytes = uniform(g, 0, 1) ? 0 : uniform(g, 16, 4096);
  o.stores = static_cast<store_policy>(uniform(g, 0, 2));  // streaming: non-temporal complex<double> transposes too
  const std::string context = "round " + std::to_string(round) + " type " + to_string(data.job.type) + " stores " +
                              to_string(o.stores) + " d " + std::to_string(d) + " axes " + text(data.job.axes) +
                              " conj " + std::to_string(data.job.conjugate) + "\nA: " + data.job.a.describe() + " (" +
                              a_how + ")\nB: " + data.job.b.describe() + " (" + b_how + ")";
  transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, {data.job}, o);
  for (int repeat = 0; repeat < 2; ++repeat) {
    data.fill();
    plan.execute(data.a.data(), data.b.data(), data.alpha, data.beta);
    std::string first;
    const std::int64_t wrong = data.errors(first);
    ASSERT_EQ(global_sum(wrong), 0) << context << " strategy " << to_string(plan.strategy()) << " execution " << repeat
                                    << "\nrank " << me << ": " << wrong << " wrong, first " << first;
  }
  // The inverse moves A back into B's layout: B' = permute^-1(A), conjugated back.
  if (!data.job.conjugate) {
    transform_plan back = plan.inverse();
    reshape_data<T> inverse;
    inverse.job = back.reshape_jobs().front();
    inverse.alpha = T(1);
    inverse.beta = T(0);
    inverse.a_id = 3;
    inverse.b_id = 1;  // B' reads the forward A's values
    inverse.fill();
    back.execute(inverse.a.data(), inverse.b.data());
    std::string first;
    const std::int64_t wrong = inverse.errors(first);
    ASSERT_EQ(global_sum(wrong), 0) << context << " (inverse)\nrank " << me << ": first " << first;
  }
}

// One typed suite over every element type the engine moves: each type its own random stream.
template <class T>
class ReshapeOfType : public ::testing::Test {};
using element_types =
    ::testing::Types<float, double, std::complex<float>, std::complex<double>, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(ReshapeOfType, element_types);

TYPED_TEST(ReshapeOfType, RandomLayoutsAxesAndOrdersMatchTheSerialReference) {
  rng_t g(test_seed(0x5e5a9e + static_cast<std::uint64_t>(element_type_v<TypeParam>)));
  for (int round = 0; round < 6; ++round) {
    one_random_case<TypeParam>(g, round);
    if (this->HasFatalFailure()) return;
  }
}

TEST(Reshape, BatchesMixDimensionsAndMatrixJobsAgreeWithTheMatrixApi) {
  rng_t g(test_seed(0xba7c4));
  const int nranks = world_size(), me = world_rank();
  std::vector<reshape_data<double>> data(3);
  std::vector<reshape_job> jobs;
  for (size_t k = 0; k < data.size(); ++k) {
    const int d = static_cast<int>(k) + 2;
    const index_vector shape = random_shape(g, d, 400);
    data[k].job.axes = random_permutation(g, d);
    index_vector b_shape(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i)
      b_shape[static_cast<size_t>(data[k].job.axes[static_cast<size_t>(i)])] = shape[static_cast<size_t>(i)];
    std::string how;
    data[k].job.a = random_nd_layout(g, shape, nranks, me, how);
    data[k].job.b = random_nd_layout(g, b_shape, nranks, me, how);
    data[k].alpha = 2;
    data[k].beta = -1;
    data[k].a_id = 10 + k;
    data[k].b_id = 20 + k;
    data[k].fill();
    jobs.push_back(data[k].job);
  }
  transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, jobs);
  std::vector<job_buffers> buffers;
  for (auto& x : data) buffers.push_back({x.a.data(), x.b.data(), x.alpha, x.beta});
  plan.execute(buffers);
  for (size_t k = 0; k < data.size(); ++k) {
    std::string first;
    EXPECT_EQ(global_sum(data[k].errors(first)), 0) << "job " << k << ": " << first;
  }
  // A matrix transpose through make_transform_plan and through make_reshape_plan on to_nd_layout moves the same bytes.
  block_cyclic_params pa, pb;
  pa.m = 37, pa.n = 23, pa.mb = 4, pa.nb = 3, pa.proc_cols = nranks;
  pb.m = 23, pb.n = 37, pb.mb = 5, pb.nb = 2, pb.proc_rows = nranks, pb.order = storage_order::row_major;
  const grid_layout a = block_cyclic(pa, me), b = block_cyclic(pb, me);
  const transform_plan matrix = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64);
  const transform_plan nd = make_reshape_plan(
      MPI_COMM_WORLD,
      std::vector<reshape_job>{{to_nd_layout(a), to_nd_layout(b), {1, 0}, false, element_type::f64, {}}});
  EXPECT_EQ(matrix.statistics().bytes_sent, nd.statistics().bytes_sent);
  EXPECT_EQ(matrix.statistics().messages_sent, nd.statistics().messages_sent);
  EXPECT_EQ(matrix.reshape_jobs().size(), 1u);
  EXPECT_TRUE(nd.jobs().empty());
}

// brick -> x-pencils -> y-pencils -> z-pencils -> bricks, the storage order changing on the way (the pencil axis
// contiguous), returns the input exactly.
TEST(Reshape, FftCycleOfBricksAndPencilsReturnsTheInputExactly) {
  rng_t g(test_seed(0xff7));
  const int nranks = world_size(), me = world_rank();
  const index_vector shape{uniform(g, 1, 13), uniform(g, 1, 11), uniform(g, 1, 9)};
  std::vector<int> dims3(3, 0), dims2(2, 0);
  MPI_Dims_create(nranks, 3, dims3.data());
  MPI_Dims_create(nranks, 2, dims2.data());
  const nd_layout bricks = box_layout(brick_boxes(shape, dims3), me);
  const nd_layout x = box_layout(pencil_boxes(shape, 0, dims2), me, {0, 2, 1});
  const nd_layout y = box_layout(pencil_boxes(shape, 1, dims2), me, {1, 2, 0});
  const nd_layout z = box_layout(pencil_boxes(shape, 2, dims2), me);
  const std::vector<const nd_layout*> cycle{&bricks, &x, &y, &z, &bricks};
  std::vector<std::complex<double>> current(static_cast<size_t>(bricks.local_elements()));
  for_each_local_element(bricks, [&](std::int64_t off, const index_vector& gi) {
    current[static_cast<size_t>(off)] = value_at<std::complex<double>>(5, linear(gi, shape));
  });
  const std::vector<std::complex<double>> input = current;
  for (size_t step = 0; step + 1 < cycle.size(); ++step) {
    std::vector<std::complex<double>> next(static_cast<size_t>(cycle[step + 1]->local_elements()));
    reshape(MPI_COMM_WORLD, *cycle[step + 1], next.data(), *cycle[step], current.data(), {});
    current = std::move(next);
  }
  EXPECT_TRUE(all_ranks(current == input)) << "shape " << shape[0] << "x" << shape[1] << "x" << shape[2];
}

TEST(Reshape, RelabeledTargetsKeepTheDataCorrectAndMoveNoMore) {
  rng_t g(test_seed(0x4e1ab));
  const int nranks = world_size(), me = world_rank();
  const index_vector shape{uniform(g, 2, 12), uniform(g, 2, 10), uniform(g, 2, 8)};
  std::vector<int> dims2(2, 0);
  MPI_Dims_create(nranks, 2, dims2.data());
  std::vector<box> x_boxes = pencil_boxes(shape, 0, dims2);
  std::shuffle(x_boxes.begin(), x_boxes.end(), g);  // owners far from the source's
  reshape_data<double> data;
  data.job.a = box_layout(x_boxes, me);
  data.job.b = box_layout(pencil_boxes(shape, 2, dims2), me);
  data.alpha = 1;
  data.beta = 0;
  const transform_plan plain = make_reshape_plan(MPI_COMM_WORLD, {data.job});
  const relabeled_reshape_targets relabeled = relabel_reshape_targets(MPI_COMM_WORLD, {data.job});
  data.job.a = relabeled.a_layouts.front();
  const transform_plan plan = make_reshape_plan(MPI_COMM_WORLD, {data.job});
  data.fill();
  plan.execute(data.a.data(), data.b.data(), data.alpha, data.beta);
  std::string first;
  EXPECT_EQ(global_sum(data.errors(first)), 0) << first;
  EXPECT_LE(global_sum(plan.statistics().bytes_sent), global_sum(plain.statistics().bytes_sent));
}

TEST(Reshape, BadInputsAreRejectedOnEveryRank) {
  const int nranks = world_size(), me = world_rank();
  const index_vector shape{4, 6, 5};
  const nd_layout bricks = box_layout(brick_boxes(shape, {1, 1, nranks}), me);
  const nd_layout pencils = box_layout(pencil_boxes(shape, 0, {nranks, 1}), me);
  const auto plan_of = [&](reshape_job j) { return [j] { make_reshape_plan(MPI_COMM_WORLD, {j}); }; };
  expect_rejected<invalid_argument>(plan_of({pencils, bricks, {0, 0, 1}, false, element_type::f64, {}}),
                                    "expected a permutation");
  expect_rejected<dimension_mismatch>(plan_of({pencils, bricks, {1, 0, 2}, false, element_type::f64, {}}),
                                      "must have A's shape");
  const nd_layout flat = box_layout(std::vector<box>(1, box{{0, 0}, {4, 30}}), me);
  if (nranks == 1)
    expect_rejected<dimension_mismatch>(plan_of({flat, bricks, {}, false, element_type::f64, {}}), "axes but B has");
  expect_rejected<invalid_argument>(plan_of({pencils, bricks, {}, false, element_type::f64, {region_shape::upper, 0}}),
                                    "triangular regions need d = 2");
  // One rank describes different splits: the consistency check catches it everywhere.
  const nd_layout other = box_layout(pencil_boxes({4, 6, 5}, 1, {nranks, 1}), me);
  if (nranks > 1)
    expect_rejected<inconsistent_ranks>(
        plan_of({me == nranks - 1 ? other : pencils, bricks, {}, false, element_type::f64, {}}),
        "different global descriptions");
  // A local array whose strides alias.
  nd_layout aliasing({bricks.splits(0), bricks.splits(1), bricks.splits(2)},
                     {bricks.procs(0), bricks.procs(1), bricks.procs(2)}, bricks.grid_shape(), bricks.grid_ranks(),
                     bricks.packing_order(), storage_kind::regular,
                     {bricks.local_start(0), bricks.local_start(1), bricks.local_start(2)}, {1, 1, 1}, {}, me);
  expect_rejected<invalid_layout>(plan_of({pencils, aliasing, {}, false, element_type::f64, {}}), "B:");
  // An owner outside the communicator.
  nd_layout too_many({{0, 4}}, {{0}}, {1}, {nranks}, {0}, storage_kind::regular, {{0}}, {1}, {}, me);
  nd_layout one({{0, 4}}, {{0}}, {1}, {0}, {0}, storage_kind::regular, {{0}}, {1}, {}, me);
  expect_rejected<invalid_layout>(plan_of({too_many, one, {}, false, element_type::f64, {}}), "A:");
  // Overlapping boxes and gaps are refused by the builder, with the same message on every rank.
  expect_rejected<invalid_layout>([&] { box_layout(std::vector<box>{{{0}, {3}}, {{2}, {5}}}, me); }, "overlap");
  expect_rejected<invalid_layout>([&] { box_layout(std::vector<box>{{{0}, {2}}, {{3}, {5}}}, me); }, "is in no box");
}

}  // namespace
