// SPDX-License-Identifier: BSD-3-Clause
// Property tests of the transform engine against a serial reference: random layouts (block-cyclic with
// random blocks/sources/sub-matrices/grids, blocked, custom with mixed block orders), all ops and types,
// random alpha/beta including 0 and 1, targets on subsets of ranks, every exchange strategy, batches,
// repeated executions and inverse plans. Also on simulated nodes, so that shared-memory executions mix
// node streams with off-node messages.
// redist-test-nodes: 4:2 7:3
#include <gtest/gtest.h>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "buffer_cache.hpp"
#include "machine/pages.hpp"
#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/redist.hpp"
#include "test_seed.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

// One job's data on this rank: buffers with guard padding around the layout's elements.
template <class T>
struct job_data {
  grid_layout a_layout, b_layout;
  op operation = op::identity;
  std::vector<T> a, b;
  std::vector<char> a_is_element;  // which entries of a belong to A (the rest must stay untouched)
  T alpha{}, beta{};
  std::uint64_t a_id = 0, b_id = 0;
  element_region region{};  // elements of A outside it must keep their initial values
  bool nan_in_a = false;
};

template <class T>
T sentinel() {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(-123456789);
  else
    return T(-777.25f);
}

template <class T>
void fill(job_data<T>& d, std::uint64_t a_id, std::uint64_t b_id, bool nan_in_a) {
  d.a_id = a_id;
  d.b_id = b_id;
  d.nan_in_a = nan_in_a;
  d.a.assign(static_cast<size_t>(d.a_layout.local_elements() + 5), sentinel<T>());
  d.a_is_element.assign(d.a.size(), 0);
  d.b.assign(static_cast<size_t>(d.b_layout.local_elements() + 5), sentinel<T>());
  for_each_local_element(d.b_layout, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    d.b[static_cast<size_t>(off)] = element_value<T>(b_id, i, j);
  });
  for_each_local_element(d.a_layout, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    d.a_is_element[static_cast<size_t>(off)] = 1;
    if constexpr (!std::is_integral_v<T>) {
      if (nan_in_a) {
        d.a[static_cast<size_t>(off)] = T(std::numeric_limits<float>::quiet_NaN());
        return;
      }
    }
    d.a[static_cast<size_t>(off)] = element_value<T>(a_id, i, j);
  });
}

// Number of wrong elements on this rank (A elements vs reference, untouched padding).
template <class T>
std::int64_t count_errors(const job_data<T>& d) {
  std::int64_t errors = 0;
  const bool t = d.operation != op::identity;
  const bool c = d.operation == op::conj_transpose;
  const bool beta_zero = d.beta == T(0);
  for_each_local_element(d.a_layout, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
    const T got = d.a[static_cast<size_t>(off)];
    if (!d.region.contains(i, j)) {  // untouched: not written, not scaled
      if constexpr (!std::is_integral_v<T>)
        if (d.nan_in_a) {
          if (!is_nan_value(got)) ++errors;
          return;
        }
      if (abs_diff(got, element_value<T>(d.a_id, i, j)) != 0.0) ++errors;
      return;
    }
    const T b = t ? conj_if(element_value<T>(d.b_id, j, i), c) : element_value<T>(d.b_id, i, j);
    T expected = d.alpha * b;
    if (!beta_zero) expected = expected + d.beta * element_value<T>(d.a_id, i, j);
    if (is_nan_value(got) || abs_diff(got, expected) > tolerance<T>() * (1.0 + abs_diff(expected, T(0)))) ++errors;
  });
  for (size_t k = 0; k < d.a.size(); ++k)
    if (!d.a_is_element[k] && abs_diff(d.a[k], sentinel<T>()) != 0.0) ++errors;
  return errors;
}

template <class T>
T random_scalar(rng_t& g) {
  if constexpr (std::is_integral_v<T>) {
    return T(1);
  } else {
    const int pick = static_cast<int>(uniform(g, 0, 4));
    if (pick == 0) return T(0);
    if (pick == 1) return T(1);
    const double v = static_cast<double>(uniform(g, -40, 40)) / 8.0;
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return T(static_cast<typename T::value_type>(v), static_cast<typename T::value_type>(uniform(g, -8, 8) / 4.0));
    else
      return T(v);
  }
}

exchange_strategy random_strategy(rng_t& g) { return static_cast<exchange_strategy>(uniform(g, 0, 3)); }

// Random strategy and store policy; shared-memory streams in chunks from a few bytes (many chunks, tiles
// cut to single lines, rings wrapping many times) up to the automatic size.
transform_options random_options(rng_t& g) {
  transform_options o;
  o.strategy = random_strategy(g);
  o.stores = static_cast<store_policy>(uniform(g, 0, 2));
  const int chunking = static_cast<int>(uniform(g, 0, 2));
  o.stream_chunk_bytes = chunking == 0 ? 0 : chunking == 1 ? uniform(g, 1, 64) : uniform(g, 65, 4096);
  return o;
}

// Draws a random job of type T (same draws on all ranks), fills its data.
template <class T>
job_data<T> random_job(rng_t& g, int nranks, int me, std::int64_t max_dim) {
  job_data<T> d;
  std::int64_t m = uniform(g, 0, max_dim), n = uniform(g, 0, max_dim);
  if (uniform(g, 0, 9) == 0) m = n = 1;
  if (uniform(g, 0, 14) == 0) m = 0;
  d.operation =
      std::is_integral_v<T> ? (uniform(g, 0, 1) ? op::transpose : op::identity) : static_cast<op>(uniform(g, 0, 2));
  d.a_layout = random_layout(g, m, n, nranks, me);
  const bool t = d.operation != op::identity;
  d.b_layout = random_layout(g, t ? n : m, t ? m : n, nranks, me);
  d.alpha = random_scalar<T>(g);
  d.beta = std::is_integral_v<T> ? T(0) : random_scalar<T>(g);
  const std::uint64_t ids = static_cast<std::uint64_t>(uniform(g, 1, 1 << 30));
  fill(d, ids, ids + 1, d.beta == T(0));
  return d;
}

template <class T>
job_buffers buffers_of(job_data<T>& d) {
  return job_buffers{d.a.data(), d.b.data(), scalar(d.alpha), scalar(d.beta)};
}
template <>
job_buffers buffers_of(job_data<std::complex<float>>& d) {
  return job_buffers{d.a.data(), d.b.data(), scalar(d.alpha.real(), d.alpha.imag()),
                     scalar(d.beta.real(), d.beta.imag())};
}

template <class T>
void random_single_jobs(std::uint64_t seed, int cases, std::int64_t max_dim) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(seed));
  for (int c = 0; c < cases; ++c) {
    auto d = random_job<T>(g, nranks, me, max_dim);
    transform_options o = random_options(g);
    auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type_v<T>, o);
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    const std::int64_t errors = global_sum(count_errors(d));
    EXPECT_EQ(errors, 0) << "case " << c << " type " << to_string(element_type_v<T>) << " op " << to_string(d.operation)
                         << " strategy " << to_string(plan.strategy()) << " stores " << to_string(o.stores)
                         << "\nA: " << d.a_layout.describe() << "\nB: " << d.b_layout.describe();
  }
}

// A random upper or lower region of an m x n A, its diagonal anywhere from beyond the first row to beyond
// the last column (so all, none, and every cut in between occur).
element_region random_region(rng_t& g, std::int64_t m, std::int64_t n) {
  return {uniform(g, 0, 1) ? region_shape::upper : region_shape::lower, uniform(g, -m - 2, n + 2)};
}

// Elements of an m x n matrix inside the region.
std::int64_t region_elements(const element_region& r, std::int64_t m, std::int64_t n) {
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) count += r.contains(i, j) ? 1 : 0;
  return count;
}

// Random jobs restricted to random regions: every element of the region gets alpha*op(B) + beta*A, every
// element outside it keeps its value, and exactly the region's elements move (sent or copied locally).
template <class T>
void random_region_jobs(std::uint64_t seed, int cases, std::int64_t max_dim) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(seed));
  for (int c = 0; c < cases; ++c) {
    auto d = random_job<T>(g, nranks, me, max_dim);
    d.region = random_region(g, d.a_layout.rows(), d.a_layout.cols());
    transform_options o = random_options(g);
    auto plan = make_transform_plan(
        MPI_COMM_WORLD, {job_description{d.a_layout, d.b_layout, d.operation, element_type_v<T>, d.region}}, o);
    plan.execute(std::vector<job_buffers>{buffers_of(d)});
    const auto where = [&] {
      return "case " + std::to_string(c) + " region " + to_string(d.region.shape) + " " +
             std::to_string(d.region.diagonal) + " op " + to_string(d.operation) + " strategy " +
             to_string(plan.strategy()) + "\nA: " + d.a_layout.describe() + "\nB: " + d.b_layout.describe();
    };
    EXPECT_EQ(global_sum(count_errors(d)), 0) << where();
    const plan_statistics st = plan.statistics();
    EXPECT_EQ(global_sum(st.bytes_sent + st.bytes_local),
              region_elements(d.region, d.a_layout.rows(), d.a_layout.cols()) * static_cast<std::int64_t>(sizeof(T)))
        << where();
    EXPECT_EQ(global_sum(st.bytes_sent), global_sum(st.bytes_received)) << where();
    // The inverse plan moves the region's image in B: B' = op(A) there, the rest of B' untouched.
    fill(d, d.a_id, d.b_id, false);
    auto back = plan.inverse();
    std::vector<T> b2(d.b.size(), sentinel<T>());
    back.execute(std::vector<job_buffers>{job_buffers{b2.data(), d.a.data(), scalar(1.0), scalar(0.0)}});
    const bool t = d.operation != op::identity;
    const element_region image = t ? d.region.transposed() : d.region;
    std::int64_t wrong = 0;
    for_each_local_element(d.b_layout, [&](std::int64_t off, std::int64_t i, std::int64_t j) {
      const T expected = !image.contains(i, j) ? sentinel<T>()
                         : t ? conj_if(element_value<T>(d.a_id, j, i), d.operation == op::conj_transpose)
                             : element_value<T>(d.a_id, i, j);
      wrong += abs_diff(b2[static_cast<size_t>(off)], expected) != 0.0 ? 1 : 0;
    });
    EXPECT_EQ(global_sum(wrong), 0) << "inverse of " << where();
  }
}

}  // namespace

// Every plan says why its strategy, the same line on every rank: the request, or what automatic compared.
TEST(Transform, StatisticsSayWhyTheStrategy) {
  const int me = world_rank();
  block_cyclic_params pb{96, 80, 8, 8};
  pb.proc_rows = world_size();
  block_cyclic_params pa{96, 80, 16, 16};
  pa.proc_cols = world_size();
  const grid_layout a = block_cyclic(pa, me), b = block_cyclic(pb, me);
  for (const exchange_strategy asked :
       {exchange_strategy::automatic, exchange_strategy::point_to_point, exchange_strategy::alltoallv}) {
    transform_options options;
    options.strategy = asked;
    const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64, options);
    const std::string& why = plan.statistics().reason;
    const std::string expected = asked != exchange_strategy::automatic ? "requested"
                                 : world_size() == 1                   ? "one rank"
                                                                       : to_string(plan.strategy());
    EXPECT_NE(why.find(expected), std::string::npos) << why;
    unsigned long long h = std::hash<std::string>()(why), lo = h, hi = h;
    MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lo, hi) << "ranks say different reasons; this rank: " << why;
  }
}

TEST(Transform, RegionRandomLayoutsDouble) { random_region_jobs<double>(1101, 16, 37); }
TEST(Transform, RegionRandomLayoutsComplexDouble) { random_region_jobs<std::complex<double>>(1102, 8, 29); }
TEST(Transform, RegionRandomLayoutsFloat) { random_region_jobs<float>(1103, 5, 23); }
TEST(Transform, RegionRandomLayoutsInt32Copy) { random_region_jobs<std::int32_t>(1104, 4, 21); }

TEST(Transform, RandomLayoutsDouble) { random_single_jobs<double>(1001, 14, 37); }
TEST(Transform, RandomLayoutsFloat) { random_single_jobs<float>(1002, 6, 23); }
TEST(Transform, RandomLayoutsComplexDouble) { random_single_jobs<std::complex<double>>(1003, 8, 29); }
TEST(Transform, RandomLayoutsComplexFloat) { random_single_jobs<std::complex<float>>(1004, 5, 19); }
TEST(Transform, RandomLayoutsInt32Copy) { random_single_jobs<std::int32_t>(1005, 4, 21); }
TEST(Transform, RandomLayoutsInt64Copy) { random_single_jobs<std::int64_t>(1006, 4, 21); }

// The COSTA paper's scenario on an n x n matrix: B in 32 x 32 blocks, A in 128 x 128 blocks, both on the
// squarest grid of nranks ranks.
static std::pair<block_cyclic_params, block_cyclic_params> paper_blocks(std::int64_t n, int nranks) {
  block_cyclic_params pb, pa;
  pb.m = pb.n = pa.m = pa.n = n;
  pb.mb = pb.nb = 32;
  pa.mb = pa.nb = 128;
  int pr = 1;
  while ((pr + 1) * (pr + 1) <= nranks) ++pr;
  pb.proc_rows = pa.proc_rows = pr;
  pb.proc_cols = pa.proc_cols = nranks / pr;
  return {pb, pa};
}

// Element-cyclic against blocked along one axis or both (ScaLAPACK's MB = 1 against 16-40): runs of one or two
// elements along A's contiguous axis, which the tile operations walk column by column (tile_ops.cpp, short runs).
// Random grids, storage orders, ops, alpha/beta (axpby, scaling, conjugation), strategies and chunking, with
// sub-matrices.
template <class T>
void element_cyclic_against_blocked(std::uint64_t seed, int cases) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(seed));
  for (int c = 0; c < cases; ++c) {
    job_data<T> d;
    d.operation = static_cast<op>(uniform(g, 0, 2));
    const bool t = d.operation != op::identity;
    block_cyclic_params pa, pb;
    const std::int64_t m = uniform(g, 20, 90), n = uniform(g, 20, 90);
    // Sub-matrices at offsets of up to three rows and columns.
    pa.sub_m = m;
    pa.sub_n = n;
    pb.sub_m = t ? n : m;
    pb.sub_n = t ? m : n;
    for (block_cyclic_params* p : {&pa, &pb}) {
      p->sub_row = uniform(g, 0, 3);
      p->sub_col = uniform(g, 0, 3);
      p->m = p->sub_m + p->sub_row;
      p->n = p->sub_n + p->sub_col;
      p->proc_rows = static_cast<int>(uniform(g, 1, nranks));
      while (nranks % p->proc_rows != 0) --p->proc_rows;
      p->proc_cols = nranks / p->proc_rows;
      p->rsrc = static_cast<int>(uniform(g, 0, p->proc_rows - 1));
      p->csrc = static_cast<int>(uniform(g, 0, p->proc_cols - 1));
      p->mb = uniform(g, 16, 40);
      p->nb = uniform(g, 16, 40);
      p->order = uniform(g, 0, 1) ? storage_order::row_major : storage_order::col_major;
    }
    // One side element-cyclic (blocks of one or two) along rows, columns or both.
    block_cyclic_params& cyclic = uniform(g, 0, 1) ? pa : pb;
    const int axes = static_cast<int>(uniform(g, 1, 3));
    if (axes & 1) cyclic.mb = uniform(g, 1, 2);
    if (axes & 2) cyclic.nb = uniform(g, 1, 2);
    d.a_layout = block_cyclic(pa, me);
    d.b_layout = block_cyclic(pb, me);
    d.alpha = random_scalar<T>(g);
    if (d.alpha == T(0)) d.alpha = T(2);
    d.beta = random_scalar<T>(g);
    const std::uint64_t ids = static_cast<std::uint64_t>(uniform(g, 1, 1 << 30));
    fill(d, ids, ids + 1, false);
    const transform_options o = random_options(g);
    auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type_v<T>, o);
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_EQ(global_sum(count_errors(d)), 0)
        << "case " << c << " op " << to_string(d.operation) << " strategy " << to_string(plan.strategy()) << " alpha "
        << scalar(d.alpha) << " beta " << scalar(d.beta) << "\nA: " << d.a_layout.describe()
        << "\nB: " << d.b_layout.describe();
  }
}

TEST(Transform, ElementCyclicAgainstBlockedDouble) { element_cyclic_against_blocked<double>(1201, 24); }
TEST(Transform, ElementCyclicAgainstBlockedComplexDouble) {
  element_cyclic_against_blocked<std::complex<double>>(1202, 24);
}

TEST(Transform, LargerBlockCyclicEveryStrategy) {
  const int nranks = world_size(), me = world_rank();
  // The paper's scenario in small: 32 -> 128 blocks, and a transpose with beta = 1.
  for (int s = 1; s <= 3; ++s) {
    auto [pb, pa] = paper_blocks(300, nranks);
    pa.ordering = grid_order::col_major;
    for (op o : {op::identity, op::transpose}) {
      job_data<double> d;
      d.a_layout = block_cyclic(pa, me);
      d.b_layout = block_cyclic(pb, me);
      d.operation = o;
      d.alpha = 1.0;
      d.beta = o == op::transpose ? 1.0 : 0.0;
      fill(d, 11 + s, 17 + s, false);
      transform_options opt;
      opt.strategy = static_cast<exchange_strategy>(s);
      auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, o, element_type::f64, opt);
      EXPECT_EQ(plan.strategy(), opt.strategy);
      plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
      EXPECT_EQ(global_sum(count_errors(d)), 0) << "strategy " << to_string(opt.strategy) << " op " << to_string(o);
      // The planning profile: phases in order, each inside the whole (no bound on the times themselves).
      const plan_statistics st = plan.statistics();
      const double phases[] = {st.plan_agreement_seconds, st.plan_tiles_seconds, st.plan_messages_seconds,
                               st.plan_exchange_seconds, st.plan_buffers_seconds};
      double phases_sum = 0;
      for (const double t : phases) {
        EXPECT_GE(t, 0.0);
        phases_sum += t;
      }
      EXPECT_GT(st.plan_seconds, 0.0);
      // Disjoint phases of the whole, each converted to seconds on its own: their sum may round above it.
      EXPECT_LE(phases_sum, st.plan_seconds * (1 + 1e-12)) << "strategy " << to_string(opt.strategy);
    }
  }
}

// Shared-memory plans take their node communicator from a split cached on the caller's communicator
// (mpi::node_duplicate): plans made one after another, alive together, and outliving the communicator they were
// made on (its attribute, the cached split, is freed with it) must all give the reference result.
TEST(Transform, SharedMemoryPlansShareTheCachedNodeSplit) {
  const int nranks = world_size(), me = world_rank();
  auto [pb, pa] = paper_blocks(200, nranks);
  transform_options opt;
  opt.strategy = exchange_strategy::shared_memory;
  std::vector<transform_plan> plans;
  std::vector<job_data<double>> data(3);
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  for (int k = 0; k < 3; ++k) {
    job_data<double>& d = data[static_cast<size_t>(k)];
    d.a_layout = block_cyclic(pa, me);
    d.b_layout = block_cyclic(pb, me);
    d.operation = k == 1 ? op::transpose : op::identity;
    d.alpha = 1.0;
    d.beta = 0.0;
    fill(d, 31 + k, 37 + k, false);
    plans.push_back(make_transform_plan(comm, d.a_layout, d.b_layout, d.operation, element_type::f64, opt));
  }
  ASSERT_EQ(MPI_Comm_free(&comm), MPI_SUCCESS);
  for (int round = 0; round < 2; ++round)
    for (int k = 2; k >= 0; --k) {
      job_data<double>& d = data[static_cast<size_t>(k)];
      plans[static_cast<size_t>(k)].execute(d.a.data(), d.b.data(), d.alpha, d.beta);
      EXPECT_EQ(global_sum(count_errors(d)), 0) << "plan " << k << " round " << round;
    }
}

// Whether some host runs more ranks than it has online CPUs, found here independently of the library: every
// rank's processor name and CPU count gathered.
// Every rank's processor name, by rank.
static std::vector<std::string> processor_names() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  const int nranks = world_size();
  std::vector<char> names(static_cast<size_t>(nranks) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> all;
  for (int r = 0; r < nranks; ++r) all.emplace_back(&names[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  return all;
}

static bool some_host_oversubscribed() {
  const std::vector<std::string> names = processor_names();
  const int nranks = world_size();
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::vector<long> all_cpus(static_cast<size_t>(nranks));
  MPI_Allgather(&cpus, 1, MPI_LONG, all_cpus.data(), 1, MPI_LONG, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; ++r)
    if (std::count(names.begin(), names.end(), names[static_cast<size_t>(r)]) > all_cpus[static_cast<size_t>(r)])
      return true;
  return false;
}

// Ranks of MPI_COMM_WORLD whose processor name is this rank's.
static long ranks_sharing_my_host() {
  const std::vector<std::string> names = processor_names();
  return static_cast<long>(std::count(names.begin(), names.end(), names[static_cast<size_t>(world_rank())]));
}

// The one-shot tests' job: A = alpha B^T + beta A, both block-cyclic as paper_blocks gives them.
static job_data<double> transpose_job(const block_cyclic_params& pa, const block_cyclic_params& pb, int me,
                                      double alpha, double beta, bool nan_in_a) {
  job_data<double> d;
  d.a_layout = block_cyclic(pa, me);
  d.b_layout = block_cyclic(pb, me);
  d.operation = op::transpose;
  d.alpha = alpha;
  d.beta = beta;
  fill(d, 5, 6, nan_in_a);
  return d;
}

// `automatic` with one_shot weighs the shared window's set-up against one execution: between 1 MiB and
// one_shot_window_bytes per rank (one_shot_window_bytes_oversubscribed where a host runs more ranks than it
// has CPUs) a repeated plan takes shared_memory and a one-shot plan point_to_point, as long as no window is cached
// on the communicator (a fresh duplicate here). The choice is checked against the rule on the agreed volume; both
// plans must give the reference result.
TEST(Transform, OneShotAutomaticWeighsSetUp) {
  const int nranks = world_size(), me = world_rank();
  const bool oversubscribed = some_host_oversubscribed();
  if (me == 0) std::printf("[ info ] a host with more ranks than CPUs: %s\n", oversubscribed ? "yes" : "no");
  // 16 MiB of doubles: 1.7-8 MiB sent per rank at 2-8 ranks, between 1 MiB and either threshold (the choices
  // must differ); 64 MiB: 7-32 MiB per rank, at 2 ranks between the two thresholds (the host decides).
  for (const std::int64_t n : {1448, 2900}) {
    const auto [pb, pa] = paper_blocks(n, nranks);
    bool differed = false;
    for (const bool one_shot : {true, false}) {
      MPI_Comm comm;  // no window cached on it yet
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      {
        job_data<double> d = transpose_job(pa, pb, me, 1.0, 0.0, true);
        transform_options opt;
        opt.one_shot = one_shot;
        auto plan = make_transform_plan(comm, d.a_layout, d.b_layout, d.operation, element_type::f64, opt);
        const std::int64_t per_rank = global_sum(plan.statistics().bytes_sent) / nranks;
        const std::int64_t shared_from = !one_shot        ? std::int64_t(1) << 20
                                         : oversubscribed ? one_shot_window_bytes_oversubscribed
                                                          : one_shot_window_bytes;
        const exchange_strategy expected = nranks > 1 && per_rank >= shared_from ? exchange_strategy::shared_memory
                                                                                 : exchange_strategy::point_to_point;
        EXPECT_EQ(plan.strategy(), expected)
            << "n " << n << ", one_shot " << one_shot << ", " << per_rank << " bytes sent per rank";
        differed = differed || (one_shot && nranks > 1 && per_rank >= (std::int64_t(1) << 20) &&
                                plan.strategy() == exchange_strategy::point_to_point);
        plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
        EXPECT_EQ(global_sum(count_errors(d)), 0) << "n " << n << ", one_shot " << one_shot;
      }
      MPI_Comm_free(&comm);
    }
    if (n == 1448 && nranks > 1) EXPECT_TRUE(differed);
  }
}

// Where an earlier plan left a shared window on the communicator, a one-shot automatic plan from 1 MiB per rank
// cuts its segment from it (no window to create) instead of taking point_to_point; where that window has no room
// for it on some node, every rank falls back to point_to_point, also where other nodes found room. Every plan
// must give the reference result, the one-shot plan executed twice.
TEST(Transform, OneShotAutomaticReusesCachedWindow) {
  const int nranks = world_size(), me = world_rank();
  if (nranks < 2) GTEST_SKIP() << "needs node peers";
  // The node of each rank, named by its lowest rank; the first node is rank 0's.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  int leader = me, node_size = 0;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<size_t>(nranks)), node_sizes(static_cast<size_t>(nranks));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&node_size, 1, MPI_INT, node_sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> first_node;
  bool peers_off_first_node = false;
  for (int r = 0; r < nranks; ++r) {
    if (leaders[static_cast<size_t>(r)] == 0)
      first_node.push_back(r);
    else
      peers_off_first_node = peers_off_first_node || node_sizes[static_cast<size_t>(r)] > 1;
  }
  const auto first_node_count = static_cast<int>(first_node.size());

  // 16 MiB of doubles: 1.7-8 MiB per rank, under either one-shot threshold.
  const std::int64_t n = 1448;
  const auto [pb, pa] = paper_blocks(n, nranks);
  const auto [small_b, small_a] = paper_blocks(40, nranks);
  // The window the earlier plan (explicitly shared_memory) leaves is 4x its segment on each rank: large (a plan
  // like the one-shot one, repeated), small (a 40 x 40 matrix: the one-shot segment, 256 KiB chunks in up to
  // 4 slots per node peer, does not fit), or large on the first node only (an n x n matrix moved from row blocks
  // to column blocks among the first node's ranks: every pair of them exchanges n^2 / k^2 elements; the other
  // nodes' windows hold headers only).
  enum class earlier_window { large, small, large_on_first_node };
  for (const earlier_window earlier_kind :
       {earlier_window::large, earlier_window::small, earlier_window::large_on_first_node}) {
    const int kind = static_cast<int>(earlier_kind);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    {
      job_data<double> first;
      if (earlier_kind == earlier_window::large_on_first_node) {
        const std::vector<std::int64_t> splits = even_splits(n, first_node_count), whole = {0, n};
        first.a_layout = blocked(splits, whole, first_node, me);
        first.b_layout = blocked(whole, splits, first_node, me);
      } else {
        const bool large = earlier_kind == earlier_window::large;
        first.a_layout = block_cyclic(large ? pa : small_a, me);
        first.b_layout = block_cyclic(large ? pb : small_b, me);
      }
      first.alpha = 1.0;
      fill(first, 3, 4, true);
      transform_options first_options;
      first_options.strategy = exchange_strategy::shared_memory;
      auto earlier =
          make_transform_plan(comm, first.a_layout, first.b_layout, first.operation, element_type::f64, first_options);
      earlier.execute(first.a.data(), first.b.data(), first.alpha, first.beta);
      EXPECT_EQ(global_sum(count_errors(first)), 0) << "earlier window " << kind;

      job_data<double> d = transpose_job(pa, pb, me, 2.0, 0.5, false);
      transform_options opt;
      opt.one_shot = true;
      auto plan = make_transform_plan(comm, d.a_layout, d.b_layout, d.operation, element_type::f64, opt);
      const plan_statistics stats = plan.statistics();
      const std::int64_t per_rank = global_sum(stats.bytes_sent) / nranks;
      ASSERT_GE(per_rank, std::int64_t(1) << 20);
      ASSERT_LT(per_rank, one_shot_window_bytes);
      const bool reused = earlier_kind == earlier_window::large ||
                          (earlier_kind == earlier_window::large_on_first_node && !peers_off_first_node);
      if (me == 0)
        std::printf("[ info ] earlier window %d: one-shot plan %s (first node %d of %d ranks)\n", kind,
                    to_string(plan.strategy()), first_node_count, nranks);
      if (reused) {
        EXPECT_EQ(plan.strategy(), exchange_strategy::shared_memory) << "earlier window " << kind;
        EXPECT_TRUE(stats.window_reused);
      } else {
        EXPECT_EQ(plan.strategy(), exchange_strategy::point_to_point) << "earlier window " << kind;
        EXPECT_EQ(stats.peers_on_node, 0);
        EXPECT_EQ(stats.window_bytes, 0);
        EXPECT_TRUE(stats.one_shot_choices);
      }
      for (int execution = 0; execution < 2; ++execution) {
        if (execution == 1) fill(d, 7, 8, false);
        plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
        EXPECT_EQ(global_sum(count_errors(d)), 0) << "earlier window " << kind << ", execution " << execution;
      }
    }
    MPI_Comm_free(&comm);
  }
}

// The automatic chunk of shared-memory streams: 256 KiB per thread, 2 MiB where the node runs more than twice as
// many threads as it has CPUs, but not for a one-shot plan (its rings are fresh memory, costly to fault in).
TEST(Transform, OneShotStreamsInSmallChunks) {
  const int nranks = world_size(), me = world_rank();
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  int node_ranks = 0;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const bool node_crowded = node_ranks > 2 * sysconf(_SC_NPROCESSORS_ONLN);
  const auto [pb, pa] = paper_blocks(200, nranks);
  for (const bool one_shot : {false, true}) {
    job_data<double> d;
    d.a_layout = block_cyclic(pa, me);
    d.b_layout = block_cyclic(pb, me);
    d.alpha = 1.0;
    fill(d, 7, 8, true);
    transform_options opt;
    opt.strategy = exchange_strategy::shared_memory;
    opt.num_threads = 1;
    opt.one_shot = one_shot;
    auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64, opt);
    const std::int64_t expected = std::int64_t(node_crowded && !one_shot ? 2048 : 256) << 10;
    EXPECT_EQ(plan.statistics().stream_chunk_bytes, expected) << "one_shot " << one_shot;
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_EQ(global_sum(count_errors(d)), 0) << "one_shot " << one_shot;
  }
}

// B in a node_buffer: node peers read it directly (one copy) when every rank of the node has its B in
// the same buffer and B's storage is regular; otherwise the job falls back to packing. Both must give
// the reference result. Modes: 0 every rank's B at the start of its segment, 1 rank 0's B private (the
// node falls back), 2 B at an offset inside the segment. Executed twice, B rewritten in place between.
template <class T>
void node_buffer_sources(std::uint64_t seed, int cases, bool block_cyclic_only) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(seed));
  for (int c = 0; c < cases; ++c) {
    job_data<T> d;
    if (block_cyclic_only) {
      // Regular storage on both sides: the direct path is certain when the buffer is shared.
      block_cyclic_params pb, pa;
      pb.m = pa.m = uniform(g, 1, 90);
      pb.n = pa.n = uniform(g, 1, 90);
      d.operation = static_cast<op>(uniform(g, 0, 2));
      if (d.operation != op::identity) std::swap(pb.m, pb.n);
      pb.mb = uniform(g, 1, 20);
      pb.nb = uniform(g, 1, 20);
      pa.mb = uniform(g, 1, 40);
      pa.nb = uniform(g, 1, 40);
      pb.proc_rows = static_cast<int>(uniform(g, 1, nranks));
      pb.proc_cols = nranks / pb.proc_rows;
      pa.proc_cols = static_cast<int>(uniform(g, 1, nranks));
      pa.proc_rows = nranks / pa.proc_cols;
      pb.ordering = uniform(g, 0, 1) ? grid_order::row_major : grid_order::col_major;
      d.a_layout = block_cyclic(pa, me);
      d.b_layout = block_cyclic(pb, me);
      d.alpha = random_scalar<T>(g);
      d.beta = random_scalar<T>(g);
      fill(d, 5 + 2 * c, 6 + 2 * c, d.beta == T(0));
    } else {
      d = random_job<T>(g, nranks, me, 33);
    }
    const int mode = static_cast<int>(uniform(g, 0, 2));
    const std::int64_t skip = mode == 2 ? 1 + me % 3 : 0;
    node_buffer buffer(MPI_COMM_WORLD, static_cast<std::int64_t>((d.b.size() + 3) * sizeof(T)));
    T* shared_b = buffer.as<T>() + skip;
    std::copy(d.b.begin(), d.b.end(), shared_b);
    const T* b = mode == 1 && me == 0 ? d.b.data() : shared_b;
    transform_options o;
    o.strategy = exchange_strategy::shared_memory;
    o.stores = static_cast<store_policy>(uniform(g, 0, 2));
    o.stream_chunk_bytes = uniform(g, 0, 1) ? 0 : uniform(g, 1, 512);
    // The source agreement rides on the consistency check, or takes its own node reduction without it.
    o.check_consistency = uniform(g, 0, 1) == 1;
    const auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type_v<T>, o);
    for (int rep = 0; rep < 2; ++rep) {
      plan.execute(d.a.data(), b, d.alpha, d.beta);
      EXPECT_EQ(global_sum(count_errors(d)), 0)
          << "case " << c << " mode " << mode << " repetition " << rep << " op " << to_string(d.operation)
          << " check_consistency " << o.check_consistency << "\nA: " << d.a_layout.describe()
          << "\nB: " << d.b_layout.describe();
      fill(d, 1000 + 2 * c + rep, 1001 + 2 * c + rep, d.beta == T(0));
      std::copy(d.b.begin(), d.b.end(), shared_b);
    }
  }
}

TEST(Transform, NodeBufferSourcesBlockCyclicDouble) { node_buffer_sources<double>(6001, 4, true); }
TEST(Transform, NodeBufferSourcesBlockCyclicComplex) { node_buffer_sources<std::complex<double>>(6002, 2, true); }
TEST(Transform, NodeBufferSourcesRandomLayouts) { node_buffer_sources<float>(6003, 3, false); }

// A batch where one job's B is in a node_buffer and the other's is private: one job is read directly,
// the other packed, within the same execution.
TEST(Transform, NodeBufferBatchMixesDirectAndPacked) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(6004));
  for (int c = 0; c < 2; ++c) {
    auto d1 = random_job<double>(g, nranks, me, 29);
    auto d2 = random_job<double>(g, nranks, me, 23);
    node_buffer buffer(MPI_COMM_WORLD, static_cast<std::int64_t>(d1.b.size() * sizeof(double)));
    std::copy(d1.b.begin(), d1.b.end(), buffer.as<double>());
    transform_options o;
    o.strategy = exchange_strategy::shared_memory;
    o.stream_chunk_bytes = c == 0 ? 0 : 40;  // small chunks mix direct and packed pieces in one chunk
    auto plan = make_transform_plan(MPI_COMM_WORLD,
                                    {{d1.a_layout, d1.b_layout, d1.operation, element_type::f64},
                                     {d2.a_layout, d2.b_layout, d2.operation, element_type::f64}},
                                    o);
    job_buffers j1 = buffers_of(d1);
    j1.b = buffer.data();
    plan.execute({j1, buffers_of(d2)});
    EXPECT_EQ(global_sum(count_errors(d1) + count_errors(d2)), 0) << "batch case " << c;
  }
}

// Automatic chunking cuts the tiles of a transposing stream into 1 MiB pieces per thread where both transposed
// sides reach 256 complex<double> elements, more than one chunk of 256 KiB: every tile here is at least 256 wide on
// both, so every stream carries such pieces, several to a tile, one to a chunk slot.
TEST(Transform, LargeTransposingPiecesStreamIntact) {
  using T = std::complex<double>;
  const int nranks = world_size(), me = world_rank();
  block_cyclic_params pa, pb;
  pa.m = pa.n = pb.m = pb.n = 300 * static_cast<std::int64_t>(nranks);
  pa.mb = pb.mb = 300;
  pa.nb = pb.nb = pa.n;
  pa.proc_rows = pb.proc_rows = nranks;  // rank r holds rows [300 r, 300 r + 300) of A and of B
  job_data<T> d;
  d.a_layout = block_cyclic(pa, me);
  d.b_layout = block_cyclic(pb, me);
  d.operation = op::transpose;
  d.alpha = T(1);
  d.beta = T(0);
  fill(d, 7001, 7002, true);
  transform_options o;
  o.strategy = exchange_strategy::shared_memory;
  const auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type_v<T>, o);
  for (int rep = 0; rep < 2; ++rep) {
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_EQ(global_sum(count_errors(d)), 0) << "repetition " << rep;
    fill(d, 7003 + rep, 7004 + rep, false);
  }
}

// Shared memory streams each message through a ring of 4 chunk slots: the window holds 4 chunks per
// node peer (a chunk is at least one line of a tile), not the messages, however large they are.
TEST(Transform, SharedWindowHoldsChunksNotMessages) {
  const int nranks = world_size(), me = world_rank();
  block_cyclic_params pb, pa;
  pb.m = pb.n = pa.m = pa.n = 600;  // tiles of 600/P rows: lines of at most 2400 bytes from 2 ranks on
  pb.mb = pb.nb = 7;
  pa.mb = pa.nb = 30;
  pb.proc_rows = nranks;
  pa.proc_cols = nranks;
  auto a = block_cyclic(pa, me);
  auto b = block_cyclic(pb, me);
  std::vector<double> A(static_cast<size_t>(a.local_elements())), B(static_cast<size_t>(b.local_elements()));
  for (size_t k = 0; k < B.size(); ++k) B[k] = static_cast<double>(k + 1000 * static_cast<size_t>(me));
  transform_options o;
  o.strategy = exchange_strategy::shared_memory;
  o.stream_chunk_bytes = 4096;
  auto plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64, o);
  const plan_statistics s = plan.statistics();
  const std::int64_t header_bound = 64 * (2 * nranks + 2) + 8 * (2 * nranks + 4) + 64;
  EXPECT_LE(s.window_bytes, s.peers_on_node * 4 * 4096 + header_bound) << "window of " << s.window_bytes << " bytes";
  if (nranks >= 2) EXPECT_GT(s.bytes_sent, s.window_bytes);
  // The rings wrap many times within one execution and across executions.
  for (int rep = 0; rep < 3; ++rep) plan.execute(A.data(), B.data(), 1.0, 0.0);
  auto back = plan.inverse();
  std::vector<double> B2(B.size(), -1.0);
  back.execute(B2.data(), A.data(), 1.0, 0.0);
  EXPECT_TRUE(all_ranks(B2 == B));
}

// shared_memory plans made from one communicator cut their segments from one window per node: the first plan
// makes it (four times its request), a second alike finds room, a larger one makes a new window while the old one
// lives on in the plans cut from it; plans and the communicator are destroyed in any order (the last holder
// frees the window). Every plan is executed interleaved with the others and checked against the reference.
TEST(Transform, SharedMemoryPlansShareTheCommunicatorsWindow) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(2003));
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  // Random block sizes for the small jobs; the paper's 32 -> 128 blocks where a job must send to every node peer
  // (equal or aligned random blocks can keep a transpose off the node peers, leaving only headers to place).
  const auto job = [&](std::uint64_t salt, std::int64_t n, bool random_blocks = true) {
    auto d = std::make_unique<job_data<double>>();
    auto [pb, pa] = paper_blocks(n, nranks);
    if (random_blocks) {
      pb.mb = pb.nb = uniform(g, 1, 9);
      pa.mb = pa.nb = uniform(g, 5, 20);
    }
    d->a_layout = block_cyclic(pa, me);
    d->b_layout = block_cyclic(pb, me);
    d->operation = op::transpose;
    d->alpha = 1.5;
    d->beta = 0.5;
    fill(*d, salt, salt + 1, false);
    return d;
  };
  const auto plan_for = [&](const job_data<double>& d, MPI_Comm c, std::int64_t chunk_bytes) {
    transform_options o;
    o.strategy = exchange_strategy::shared_memory;
    o.stream_chunk_bytes = chunk_bytes;
    return std::make_unique<transform_plan>(
        make_transform_plan(c, d.a_layout, d.b_layout, d.operation, element_type::f64, o));
  };
  const auto reused_everywhere = [](const transform_plan& p) { return all_ranks(p.statistics().window_reused); };
  const auto reused_nowhere = [](const transform_plan& p) { return all_ranks(!p.statistics().window_reused); };
  // A rank alone on its node (or with nothing for its node peers) places only headers, which fit anywhere.
  const auto new_window_where_streaming = [](const transform_plan& p) {
    const plan_statistics s = p.statistics();
    return all_ranks(s.peers_on_node == 0 || !s.window_reused);
  };
  const auto run = [&](const transform_plan& p, job_data<double>& d, const char* what) {
    fill(d, d.a_id + 2, d.b_id + 2, false);
    p.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_EQ(global_sum(count_errors(d)), 0) << what;
  };
  // 600^2 doubles: at least 360 KB sent per rank at 2-8 ranks, in one chunk per peer with 4 MiB chunks, where a
  // window for 4 KiB chunks holds at most 2 x 4 slots x 4 KiB per node peer.
  auto d1 = job(10, uniform(g, 40, 90)), d2 = job(20, uniform(g, 40, 90)), d3 = job(30, 600, false),
       d4 = job(40, uniform(g, 40, 90));
  auto first = plan_for(*d1, comm, 4096);
  EXPECT_TRUE(reused_nowhere(*first));
  auto alike = plan_for(*d2, comm, 4096);  // no larger than the first where the layouts' tiles are
  auto larger = plan_for(*d3, comm, std::int64_t(4) << 20);
  EXPECT_TRUE(new_window_where_streaming(*larger));
  for (int round = 0; round < 2; ++round) {
    run(*first, *d1, "first");
    run(*larger, *d3, "larger");
    run(*alike, *d2, "alike");
  }
  first.reset();  // the first window: still held by `alike` where it fitted there
  run(*larger, *d3, "larger after the first plan is gone");
  alike.reset();                           // now freed
  auto after = plan_for(*d4, comm, 4096);  // room in the larger plan's window
  EXPECT_TRUE(reused_everywhere(*after));
  MPI_Comm_free(&comm);  // the cache lets go; the plans still hold their window
  run(*after, *d4, "after the communicator is freed");
  run(*larger, *d3, "larger after the communicator is freed");
  after.reset();
  larger.reset();
}

TEST(Transform, PlanExecutedRepeatedlyWithNewData) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(2001));
  for (int c = 0; c < 3; ++c) {
    auto d = random_job<double>(g, nranks, me, 31);
    transform_options o = random_options(g);
    const auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64, o);
    for (int rep = 0; rep < 3; ++rep) {
      fill(d, 100 + 2 * rep + c * 10, 101 + 2 * rep + c * 10, d.beta == 0.0);
      plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
      EXPECT_EQ(global_sum(count_errors(d)), 0) << "case " << c << " repetition " << rep;
    }
  }
}

// The default team (num_threads 0) is the OpenMP default capped at the host's CPUs per rank sharing it: raised to
// 64 threads here, a plan still packs with at most its share (1 thread per rank where 4 ranks share 2 CPUs); a
// count the options give is used as given. Both give the reference result, and the execution's time is recorded.
TEST(Transform, DefaultTeamIsTheRanksShareOfItsHost) {
  const int nranks = world_size(), me = world_rank();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long share = std::max(1L, cpus / ranks_sharing_my_host());
  if (me == 0) std::printf("[ info ] %ld CPUs, %ld CPUs per rank on this host\n", cpus, share);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(64);
  rng_t g(test_seed(2002));
  for (const int requested : {0, 3}) {
    auto d = random_job<double>(g, nranks, me, 40);
    transform_options o;
    o.num_threads = requested;
    const auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64, o);
    EXPECT_EQ(plan.statistics().threads, requested > 0 ? requested : std::min(64L, share))
        << "num_threads " << requested;
    fill(d, 31, 32, d.beta == 0.0);
    EXPECT_EQ(plan.statistics().last_execution_seconds, 0.0) << "num_threads " << requested;
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_GT(plan.statistics().last_execution_seconds, 0.0) << "num_threads " << requested;
    EXPECT_EQ(global_sum(count_errors(d)), 0) << "num_threads " << requested;
    EXPECT_EQ(omp_get_max_threads(), 64) << "the execution did not restore the caller's team size";
  }
  omp_set_num_threads(saved);
}

// A plan borrows its private message buffers from the process's buffer cache for each execution and returns them
// after it: after planning and after an execution it holds none, so a second plan of the same shape executes with
// the first one's blocks (the cache holds the same bytes before and after it) and both give the reference result.
TEST(Transform, PlansBorrowMessageBuffersForEachExecution) {
  const int nranks = world_size(), me = world_rank();
  if (!all_ranks(buffer_cache_on())) GTEST_SKIP() << "buffer cache off (sanitized build or REDIST_BUFFER_CACHE)";
  if (nranks == 1) GTEST_SKIP() << "one rank sends no messages";
  // 600^2 doubles: 0.3-1.4 MB sent and received per rank at 2-8 ranks (blocks from 64 KiB on are cached).
  const auto [pb, pa] = paper_blocks(600, nranks);
  transform_options opt;
  opt.strategy = exchange_strategy::point_to_point;
  machine::drop_cached_pages();
  job_data<double> d = transpose_job(pa, pb, me, 1.0, 0.0, true);
  auto first = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64, opt);
  const plan_statistics stats = first.statistics();
  EXPECT_EQ(machine::cached_page_bytes(), 0) << "planning took buffers from the cache";
  first.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
  EXPECT_EQ(global_sum(count_errors(d)), 0) << "first plan";
  const std::int64_t returned = machine::cached_page_bytes();
  if (stats.bytes_sent >= (std::int64_t(64) << 10) && stats.bytes_received >= (std::int64_t(64) << 10))
    EXPECT_GE(returned, stats.bytes_sent + stats.bytes_received) << "the execution kept its buffers";
  auto second = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64, opt);
  fill(d, 7, 8, true);
  second.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
  EXPECT_EQ(global_sum(count_errors(d)), 0) << "second plan";
  EXPECT_EQ(machine::cached_page_bytes(), returned) << "the second plan did not execute with the first one's buffers";
  second = transform_plan();
  first = transform_plan();
  EXPECT_EQ(machine::cached_page_bytes(), returned) << "an idle plan held buffers";
  machine::drop_cached_pages();
}

TEST(Transform, BatchOfMixedTypesAndLayouts) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(3001));
  for (int c = 0; c < 4; ++c) {
    auto d1 = random_job<double>(g, nranks, me, 25);
    auto d2 = random_job<std::complex<float>>(g, nranks, me, 17);
    auto d3 = random_job<std::int64_t>(g, nranks, me, 19);
    auto d4 = random_job<double>(g, nranks, me, 13);
    transform_options o = random_options(g);
    auto plan = make_transform_plan(MPI_COMM_WORLD,
                                    {{d1.a_layout, d1.b_layout, d1.operation, element_type::f64},
                                     {d2.a_layout, d2.b_layout, d2.operation, element_type::c32},
                                     {d3.a_layout, d3.b_layout, d3.operation, element_type::i64},
                                     {d4.a_layout, d4.b_layout, d4.operation, element_type::f64}},
                                    o);
    // Still one message per peer for the whole batch.
    const auto st = plan.statistics();
    EXPECT_LE(st.messages_sent, nranks - 1);
    plan.execute({buffers_of(d1), buffers_of(d2), buffers_of(d3), buffers_of(d4)});
    const std::int64_t errors = count_errors(d1) + count_errors(d2) + count_errors(d3) + count_errors(d4);
    EXPECT_EQ(global_sum(errors), 0) << "batch case " << c << " strategy " << to_string(plan.strategy());
  }
}

TEST(Transform, InversePlanRestoresSource) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(4001));
  for (int c = 0; c < 3; ++c) {
    auto d = random_job<std::complex<double>>(g, nranks, me, 27);
    d.alpha = 1.0;
    d.beta = 0.0;
    auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::c64);
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    // Back: B' = op(A) must equal B (op is an involution for all three ops).
    auto back = plan.inverse();
    std::vector<std::complex<double>> b2(d.b.size(), std::complex<double>(-1.0, -1.0));
    back.execute(b2.data(), d.a.data(), std::complex<double>(1.0), std::complex<double>(0.0));
    std::int64_t errors = 0;
    for_each_local_element(d.b_layout, [&](std::int64_t off, std::int64_t, std::int64_t) {
      if (b2[static_cast<size_t>(off)] != d.b[static_cast<size_t>(off)]) ++errors;
    });
    EXPECT_EQ(global_sum(errors), 0) << "inverse case " << c;
  }
}

TEST(Transform, EdgeShapes) {
  const int nranks = world_size(), me = world_rank();
  struct shape {
    std::int64_t m, n, mb, nb;
  };
  for (const shape s : {shape{0, 0, 1, 1}, shape{0, 7, 2, 2}, shape{5, 0, 3, 3}, shape{1, 1, 1, 1}, shape{1, 1, 64, 64},
                        shape{3, 11, 100, 100}, shape{17, 1, 4, 1}}) {
    for (op o : {op::identity, op::transpose}) {
      block_cyclic_params pb;
      pb.m = o == op::identity ? s.m : s.n;
      pb.n = o == op::identity ? s.n : s.m;
      pb.mb = s.mb;
      pb.nb = s.nb;
      pb.proc_rows = nranks;
      job_data<double> d;
      d.b_layout = block_cyclic(pb, me);
      d.a_layout = blocked(even_splits(s.m, 1), even_splits(s.n, 1), {nranks - 1}, me);
      if (s.m == 0 || s.n == 0) d.a_layout = block_cyclic({s.m, s.n, 2, 2}, me);
      d.operation = o;
      d.alpha = 2.0;
      d.beta = 0.0;
      fill(d, 5, 6, true);
      transform(MPI_COMM_WORLD, d.a_layout, d.a.data(), d.b_layout, d.b.data(), o, d.alpha, d.beta);
      EXPECT_EQ(global_sum(count_errors(d)), 0) << s.m << "x" << s.n << " op " << to_string(o);
    }
  }
}

TEST(Transform, TargetOnSubsetAndAlphaZeroWithNullSource) {
  const int nranks = world_size(), me = world_rank();
  // A lives on rank 0 only; B on all ranks. alpha = 0: B is never read, so it may be null.
  block_cyclic_params pb;
  pb.m = pb.n = 20;
  pb.mb = 3;
  pb.nb = 4;
  pb.proc_rows = nranks;
  job_data<double> d;
  d.b_layout = block_cyclic(pb, me);
  d.a_layout = blocked({0, 20}, {0, 20}, {0}, me);
  d.operation = op::identity;
  d.alpha = 0.0;
  d.beta = 3.0;
  fill(d, 7, 8, false);
  auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, op::identity, element_type::f64);
  plan.execute<double>(d.a.data(), nullptr, 0.0, 3.0);
  EXPECT_EQ(global_sum(count_errors(d)), 0);
  // Same layouts, normal copy onto the subset.
  d.alpha = 1.0;
  d.beta = 0.0;
  fill(d, 9, 10, true);
  plan.execute(d.a.data(), d.b.data(), 1.0, 0.0);
  EXPECT_EQ(global_sum(count_errors(d)), 0);
  const auto st = plan.statistics();
  EXPECT_EQ(global_sum(st.bytes_sent), global_sum(st.bytes_received));
}

TEST(Transform, RelabeledTargetsStillCorrect) {
  const int nranks = world_size(), me = world_rank();
  rng_t g(test_seed(5001));
  for (int c = 0; c < 3; ++c) {
    auto d = random_job<double>(g, nranks, me, 33);
    const relabeled_targets r =
        relabel_targets(MPI_COMM_WORLD, {{d.a_layout, d.b_layout, d.operation, element_type::f64}});
    EXPECT_LE(r.result.remote_volume_after, r.result.remote_volume_before);
    d.a_layout = r.a_layouts.front();
    fill(d, d.a_id, d.b_id, d.beta == 0.0);
    auto plan = make_transform_plan(MPI_COMM_WORLD, d.a_layout, d.b_layout, d.operation, element_type::f64);
    // The plan's remote volume is the relabeled graph's.
    EXPECT_EQ(global_sum(plan.statistics().bytes_sent), r.result.remote_volume_after);
    plan.execute(d.a.data(), d.b.data(), d.alpha, d.beta);
    EXPECT_EQ(global_sum(count_errors(d)), 0) << "relabeled case " << c;
  }
}
