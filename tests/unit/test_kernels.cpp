// SPDX-License-Identifier: BSD-3-Clause
// Local block kernels against a naive reference loop: every element type, every op, every pair of
// storage orders (with padding between rows/columns that must stay untouched), general strides,
// BLAS scalar semantics (no NaN leaks through beta == 0 / alpha == 0), tile-boundary sizes, and
// large blocks split over OpenMP threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "redist/transform/kernels.hpp"
#include "test_seed.hpp"

namespace {

using redist::op;
using redist::kernels::store_hint;
using redist::kernels::strided;
using redist::testing::test_seed;
using index = std::int64_t;

template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};

template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};

// ---- element helpers ------------------------------------------------------------------------------

// splitmix64: the tests fill millions of elements, and fast_rng + distributions dominated their
// run time.
struct fast_rng {
  std::uint64_t state;
  explicit fast_rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }  // [-1, 1)
};

template <class T>
T random_value(fast_rng& gen) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int>(gen.next() % 2001) - 1000);
  } else if constexpr (is_complex<T>::value) {
    using real = typename T::value_type;
    const auto re = static_cast<real>(gen.uniform());
    return T(re, static_cast<real>(gen.uniform()));
  } else {
    return static_cast<T>(gen.uniform());
  }
}

// What a kernel must never read (NaN for floating types; integers have no NaN, so a loud value that
// would show up in the comparison).
template <class T>
T poison() {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(0x5a5a5a5);
  } else if constexpr (is_complex<T>::value) {
    const auto nan = std::numeric_limits<typename T::value_type>::quiet_NaN();
    return T(nan, nan);
  } else {
    return std::numeric_limits<T>::quiet_NaN();
  }
}

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else if constexpr (is_complex<T>::value) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return std::isnan(v);
  }
}

// Marks the storage around and between the block's elements; must survive every call.
template <class T>
T sentinel() {
  return static_cast<T>(77);
}

template <class T>
T conj_of(const T& v) {
  if constexpr (is_complex<T>::value) {
    return std::conj(v);
  } else {
    return v;
  }
}

// |re| + |im| for complex values (an upper bound of the modulus that needs no hypot call).
template <class T>
double magnitude(const T& v) {
  if constexpr (is_complex<T>::value) {
    return std::abs(static_cast<double>(v.real())) + std::abs(static_cast<double>(v.imag()));
  } else {
    return std::abs(static_cast<double>(v));
  }
}

template <class T>
bool close(const T& got, const T& want, double scale) {
  if constexpr (std::is_integral_v<T>) {
    return got == want;
  } else {
    const double eps = std::numeric_limits<typename real_of<T>::type>::epsilon();
    if (is_nan(got) || is_nan(want)) return false;
    return magnitude(got - want) <= 8 * eps * (scale + 1);
  }
}

template <class T>
std::string str(const T& v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>)
    s << static_cast<long long>(v);
  else
    s << v;
  return s.str();
}

// ---- strided buffers ----------------------------------------------------------------------------

// *_1k: leading dimension rounded up to a multiple of 1 KiB (power-of-two sizes), which the transpose
// kernel stages through a buffer to avoid cache-set aliasing.
enum class storage { col_major, row_major, gapped_cols, gapped_rows, col_major_1k, row_major_1k };
const storage all_storages[] = {storage::col_major, storage::row_major, storage::gapped_cols, storage::gapped_rows};

const char* name(storage s) {
  switch (s) {
    case storage::col_major:
      return "col_major";
    case storage::row_major:
      return "row_major";
    case storage::gapped_cols:
      return "gapped_cols";
    case storage::gapped_rows:
      return "gapped_rows";
    case storage::col_major_1k:
      return "col_major_1k";
    case storage::row_major_1k:
      return "row_major_1k";
  }
  return "?";
}

// A rows x cols block inside a larger buffer: guard elements before and after it, a leading dimension
// larger than the extent for the two standard orders, and non-unit strides in both directions for the
// two "gapped" ones.
template <class T>
struct block_buffer {
  static constexpr index guard = 5;
  index rows, cols;
  strided s;
  std::vector<T> data;

  static index round_up_to_1k(index elements) {
    const index per_kib = 1024 / static_cast<index>(sizeof(T));
    return (elements + per_kib - 1) / per_kib * per_kib;
  }

  block_buffer(storage kind, index r, index c) : rows(r), cols(c) {
    switch (kind) {
      case storage::col_major:
        s = {1, r + 3};
        break;
      case storage::row_major:
        s = {c + 2, 1};
        break;
      case storage::gapped_cols:
        s = {2, 2 * r + 5};
        break;
      case storage::gapped_rows:
        s = {3 * c + 1, 3};
        break;
      case storage::col_major_1k:
        s = {1, round_up_to_1k(r + 1)};
        break;
      case storage::row_major_1k:
        s = {round_up_to_1k(c + 1), 1};
        break;
    }
    const index span = (r > 0 && c > 0) ? (r - 1) * s.rs + (c - 1) * s.cs + 1 : 0;
    data.assign(static_cast<size_t>(span + 2 * guard), sentinel<T>());
  }
  T* ptr() { return data.data() + guard; }
  index pos(index i, index j) const { return guard + i * s.rs + j * s.cs; }
  T& at(index i, index j) { return data[static_cast<size_t>(pos(i, j))]; }
  const T& at(index i, index j) const { return data[static_cast<size_t>(pos(i, j))]; }
  template <class F>
  void fill(F value) {
    for (index i = 0; i < rows; ++i)
      for (index j = 0; j < cols; ++j) at(i, j) = value();
  }
  // Positions that are not elements of the block.
  std::vector<bool> element_mask() const {
    std::vector<bool> m(data.size(), false);
    for (index i = 0; i < rows; ++i)
      for (index j = 0; j < cols; ++j) m[static_cast<size_t>(pos(i, j))] = true;
    return m;
  }
};

// ---- one checked call ---------------------------------------------------------------------------

struct case_desc {
  index rows, cols;
  op o;
  storage dst_kind, src_kind;
};

std::string describe(const case_desc& c) {
  std::ostringstream s;
  s << c.rows << "x" << c.cols << " op=" << redist::to_string(c.o) << " dst=" << name(c.dst_kind)
    << " src=" << name(c.src_kind);
  return s.str();
}

// Runs dst = alpha*op(src) + beta*dst (or copy_block when `use_copy_block`) and compares with a naive
// loop. Returns false after the first mismatch (with a gtest failure naming the case).
template <class T>
bool check_case(const case_desc& c, T alpha, T beta, fast_rng& gen, bool use_copy_block = false,
                store_hint stores = store_hint::cached) {
  const bool transposed = c.o != op::identity;
  const index src_rows = transposed ? c.cols : c.rows;
  const index src_cols = transposed ? c.rows : c.cols;
  block_buffer<T> dst(c.dst_kind, c.rows, c.cols);
  block_buffer<T> src(c.src_kind, src_rows, src_cols);

  // beta == 0 must not read dst, alpha == 0 must not read src: poison what must not be read.
  const bool dst_unread = use_copy_block || beta == T(0);
  const bool src_unread = !use_copy_block && alpha == T(0);
  dst.fill([&] { return dst_unread ? poison<T>() : random_value<T>(gen); });
  src.fill([&] { return src_unread ? poison<T>() : random_value<T>(gen); });
  const std::vector<T> dst_before = dst.data;
  const std::vector<T> src_before = src.data;

  if (use_copy_block)
    redist::kernels::copy_block(dst.ptr(), dst.s, static_cast<const T*>(src.ptr()), src.s, c.rows, c.cols, stores);
  else
    redist::kernels::transform_block(dst.ptr(), dst.s, static_cast<const T*>(src.ptr()), src.s, c.rows, c.cols, c.o,
                                     alpha, beta, stores);

  const std::string where = describe(c) + " alpha=" + str(alpha) + " beta=" + str(beta) +
                            (use_copy_block ? " (copy_block)" : "") +
                            (stores == store_hint::streaming ? " (streaming stores)" : "");
  for (index i = 0; i < c.rows; ++i)
    for (index j = 0; j < c.cols; ++j) {
      T s = use_copy_block ? src.at(i, j) : (transposed ? src.at(j, i) : src.at(i, j));
      if (c.o == op::conj_transpose && !use_copy_block) s = conj_of(s);
      const T d = dst_before[static_cast<size_t>(dst.pos(i, j))];
      T want;
      double scale;
      if (use_copy_block) {
        want = s;
        scale = magnitude(s);
      } else if (alpha == T(0)) {
        want = beta == T(0) ? T(0) : beta * d;
        scale = magnitude(want);
      } else if (beta == T(0)) {
        want = alpha * s;
        scale = magnitude(want);
      } else {
        want = alpha * s + beta * d;
        scale = magnitude(alpha * s) + magnitude(beta * d);
      }
      const T got = dst.at(i, j);
      if ((dst_unread || src_unread) && is_nan(got)) {
        ADD_FAILURE() << where << ": NaN leaked into dst(" << i << "," << j << ")";
        return false;
      }
      if (!close(got, want, scale)) {
        ADD_FAILURE() << where << ": dst(" << i << "," << j << ") = " << str(got) << ", expected " << str(want);
        return false;
      }
    }
  // Nothing outside the block's elements changes, and src is read-only.
  const auto mask = dst.element_mask();
  for (size_t k = 0; k < dst.data.size(); ++k)
    if (!mask[k] && !(dst.data[k] == dst_before[k])) {
      ADD_FAILURE() << where << ": dst storage at offset " << static_cast<long long>(k) - block_buffer<T>::guard
                    << " outside the block was written";
      return false;
    }
  for (size_t k = 0; k < src.data.size(); ++k)
    if (!(src.data[k] == src_before[k]) && !(is_nan(src.data[k]) && is_nan(src_before[k]))) {
      ADD_FAILURE() << where << ": src was modified at offset " << static_cast<long long>(k) - block_buffer<T>::guard;
      return false;
    }
  return true;
}

// (alpha, beta) pairs covering every special case of the BLAS semantics plus random general values.
template <class T>
std::vector<std::pair<T, T>> scalar_pairs(fast_rng& gen) {
  T a, b;
  if constexpr (std::is_integral_v<T>) {
    a = T(3);
    b = T(-2);
  } else {
    a = random_value<T>(gen);
    b = random_value<T>(gen);
  }
  return {{T(1), T(0)}, {T(0), T(0)}, {T(0), T(1)}, {T(0), b}, {a, T(0)}, {T(1), T(1)}, {a, b}};
}

const op all_ops[] = {op::identity, op::transpose, op::conj_transpose};

template <class T>
class Kernels : public ::testing::Test {};
using element_types =
    ::testing::Types<float, double, std::complex<float>, std::complex<double>, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(Kernels, element_types);

// Sizes around the tile edges of every element size, degenerate shapes, and thin long blocks.
const std::pair<index, index> small_sizes[] = {{0, 0},   {0, 5},   {5, 0},    {1, 1},    {1, 17},
                                               {17, 1},  {2, 3},   {31, 33},  {32, 32},  {33, 31},
                                               {65, 64}, {64, 65}, {1000, 3}, {3, 1000}, {7, 300}};

TYPED_TEST(Kernels, AllOpsStoragesAndScalarsMatchReference) {
  using T = TypeParam;
  fast_rng gen(test_seed(12345));
  const auto pairs = scalar_pairs<T>(gen);
  omp_set_num_threads(1);
  for (const auto& [rows, cols] : small_sizes)
    for (op o : all_ops)
      for (storage dk : all_storages)
        for (storage sk : all_storages)
          for (const auto& [alpha, beta] : pairs)
            for (store_hint stores : {store_hint::cached, store_hint::streaming})
              if (!check_case<T>({rows, cols, o, dk, sk}, alpha, beta, gen, false, stores)) return;
}

TYPED_TEST(Kernels, CopyBlockMatchesReference) {
  using T = TypeParam;
  fast_rng gen(test_seed(777));
  omp_set_num_threads(1);
  for (const auto& [rows, cols] : small_sizes)
    for (storage dk : all_storages)
      for (storage sk : all_storages)
        for (store_hint stores : {store_hint::cached, store_hint::streaming})
          if (!check_case<T>({rows, cols, op::identity, dk, sk}, T(1), T(0), gen, true, stores)) return;
}

// Blocks above parallel_threshold take the OpenMP paths: tiles shrunk to give every thread work,
// contiguous runs cut into chunks, a single long row or column.
TYPED_TEST(Kernels, LargeBlocksWithThreads) {
  using T = TypeParam;
  fast_rng gen(test_seed(99));
  const auto pairs = scalar_pairs<T>(gen);
  ASSERT_GE(301 * 257, redist::kernels::parallel_threshold);
  const std::pair<storage, storage> storage_pairs[] = {{storage::col_major, storage::col_major},
                                                       {storage::col_major, storage::row_major},
                                                       {storage::row_major, storage::col_major},
                                                       {storage::row_major, storage::row_major},
                                                       {storage::gapped_cols, storage::gapped_rows}};
  const std::pair<index, index> sizes[] = {{301, 257}, {1, 70001}, {70001, 1}, {3, 30001}};
  // Every shape with the plain copy and the general case on every storage pair, alpha = 0 on one. Two
  // threads: the machines running the tests may have no more cores, and an oversubscribed team waits
  // at every barrier.
  omp_set_num_threads(2);
  for (const auto& [rows, cols] : sizes)
    for (op o : all_ops) {
      for (const auto& [dk, sk] : storage_pairs)
        for (size_t k : {size_t{0}, size_t{6}})
          if (!check_case<T>({rows, cols, o, dk, sk}, pairs[k].first, pairs[k].second, gen)) return;
      if (!check_case<T>({rows, cols, o, storage::row_major, storage::col_major}, pairs[3].first, pairs[3].second, gen))
        return;
    }
  // An odd thread count: uneven splits of tiles and chunks.
  omp_set_num_threads(3);
  for (op o : all_ops)
    for (const auto& [dk, sk] : storage_pairs) {
      if (!check_case<T>({301, 257, o, dk, sk}, T(1), T(0), gen)) return;
      // Streaming stores from several threads: each must fence its own.
      if (!check_case<T>({301, 257, o, dk, sk}, pairs[4].first, pairs[4].second, gen, false, store_hint::streaming))
        return;
    }
  if (!check_case<T>({513, 400, op::identity, storage::col_major, storage::row_major}, T(1), T(0), gen, true)) return;
  if (!check_case<T>({1, 70001, op::identity, storage::col_major, storage::col_major}, T(1), T(0), gen, true,
                     store_hint::streaming))
    return;
  omp_set_num_threads(1);
}

// Fully contiguous blocks (ld == extent) collapse into one run: the single-memcpy and chunked paths.
TYPED_TEST(Kernels, ContiguousBlocksCollapse) {
  using T = TypeParam;
  fast_rng gen(test_seed(5));
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (index rows : {1, 7, 300})
      for (index cols : {1, 9, 400})
        for (bool row_major : {false, true}) {
          const strided s = row_major ? strided{cols, 1} : strided{1, rows};
          std::vector<T> src(static_cast<size_t>(rows * cols)), dst(src.size(), poison<T>());
          for (auto& v : src) v = random_value<T>(gen);
          redist::kernels::transform_block(dst.data(), s, src.data(), s, rows, cols, op::identity, T(1), T(0));
          ASSERT_EQ(dst, src) << rows << "x" << cols << (row_major ? " row-major" : " col-major");
          std::vector<T> copy(src.size(), poison<T>());
          redist::kernels::copy_block(copy.data(), s, src.data(), s, rows, cols);
          ASSERT_EQ(copy, src);
        }
  }
  omp_set_num_threads(1);
}

// Inside a parallel region every thread runs its own block serially (no nested teams).
TYPED_TEST(Kernels, CallsFromInsideParallelRegion) {
  using T = TypeParam;
  const index rows = 300, cols = 260;
  const int blocks = 4;
  std::vector<std::vector<T>> src(blocks), dst(blocks);
  fast_rng gen(test_seed(3));
  for (int b = 0; b < blocks; ++b) {
    src[b].resize(static_cast<size_t>(rows * cols));
    for (auto& v : src[b]) v = random_value<T>(gen);
    dst[b].assign(src[b].size(), poison<T>());
  }
  omp_set_num_threads(2);
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < blocks; ++b)
    redist::kernels::transform_block(dst[b].data(), strided{1, rows}, src[b].data(), strided{1, cols}, rows, cols,
                                     op::transpose, T(1), T(0));
  omp_set_num_threads(1);
  for (int b = 0; b < blocks; ++b)
    for (index i = 0; i < rows; ++i)
      for (index j = 0; j < cols; ++j)
        ASSERT_EQ(dst[b][static_cast<size_t>(i + j * rows)], src[b][static_cast<size_t>(j + i * cols)])
            << "block " << b << " (" << i << "," << j << ")";
}

// Source leading dimensions that are multiples of 1 KiB take the staged transpose path.
TYPED_TEST(Kernels, KibMultipleLeadingDimensions) {
  using T = TypeParam;
  fast_rng gen(test_seed(31));
  const auto pairs = scalar_pairs<T>(gen);
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (const auto& [rows, cols] : {std::pair<index, index>{70, 50}, {1, 9}, {9, 1}, {300, 257}})
      for (op o : all_ops)
        for (const auto& [dk, sk] : {std::pair<storage, storage>{storage::col_major, storage::col_major_1k},
                                     {storage::row_major, storage::row_major_1k},
                                     {storage::col_major_1k, storage::row_major_1k}})
          for (size_t k : {size_t{0}, size_t{6}})
            if (!check_case<T>({rows, cols, o, dk, sk}, pairs[k].first, pairs[k].second, gen)) return;
  }
  omp_set_num_threads(1);
}

// alpha == 0 does not read src at all: a null source is accepted (the transform engine relies on it).
TYPED_TEST(Kernels, AlphaZeroAcceptsNullSource) {
  using T = TypeParam;
  const index rows = 40, cols = 30;
  std::vector<T> dst(static_cast<size_t>(rows * cols), T(2));
  redist::kernels::transform_block<T>(dst.data(), strided{1, rows}, nullptr, strided{cols, 1}, rows, cols,
                                      op::transpose, T(0), T(3));
  for (const T& v : dst) ASSERT_EQ(v, T(6));
  redist::kernels::transform_block<T>(dst.data(), strided{cols, 1}, nullptr, strided{1, rows}, rows, cols, op::identity,
                                      T(0), T(0));
  for (const T& v : dst) ASSERT_EQ(v, T(0));
}

TEST(KernelsStrides, StridesHelperFollowsStorageOrder) {
  const strided c = redist::kernels::strides(redist::storage_order::col_major, 10);
  const strided r = redist::kernels::strides(redist::storage_order::row_major, 10);
  EXPECT_EQ(c.rs, 1);
  EXPECT_EQ(c.cs, 10);
  EXPECT_EQ(r.rs, 10);
  EXPECT_EQ(r.cs, 1);
}

// Conjugation is exact: a conj_transpose of a conj_transpose gives the original back.
TEST(KernelsComplex, ConjTransposeTwiceIsIdentity) {
  using T = std::complex<double>;
  const index rows = 45, cols = 70;
  fast_rng gen(test_seed(8));
  std::vector<T> a(static_cast<size_t>(rows * cols)), t(a.size()), back(a.size());
  for (auto& v : a) v = random_value<T>(gen);
  redist::kernels::transform_block(t.data(), strided{1, cols}, a.data(), strided{1, rows}, cols, rows,
                                   op::conj_transpose, T(1), T(0));
  EXPECT_EQ(t[1], std::conj(a[static_cast<size_t>(rows)]));  // t(1,0) = conj(a(0,1))
  redist::kernels::transform_block(back.data(), strided{1, rows}, t.data(), strided{1, cols}, rows, cols,
                                   op::conj_transpose, T(1), T(0));
  EXPECT_EQ(back, a);
}

// Streaming transposes write whole lines with 32-byte non-temporal stores (4 x 4 blocks of complex<double>, 8 x 4
// blocks of 8-byte lanes, 16 x 4 of 4-byte ones) and the lanes around them one by one: every offset of dst within a cache line, leading
// dimensions that keep rows on one offset (multiples of a line's lanes) and one that does not (the ordinary path),
// block edges of every remainder, strips and tiles, scaling, and threads.
template <class T>
void check_streaming_transposes(std::uint64_t seed, std::initializer_list<op> ops, std::initializer_list<T> alphas) {
  constexpr index lanes_per_line = 64 / static_cast<index>(sizeof(T));
  fast_rng gen(seed);
  // {290, 1030}: several strips and wide tiles (and threads' tiles cut in both directions).
  const std::pair<index, index> sizes[] = {{1, 1}, {3, 5},  {4, 4},   {5, 7},    {8, 3},
                                           {9, 4}, {17, 9}, {64, 64}, {130, 67}, {290, 1030}};
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (const auto& [rows, cols] : sizes)
      for (index pad : {index{0}, index{1}, lanes_per_line})
        for (index offset = 0; offset < lanes_per_line; ++offset)
          for (op o : ops)
            for (T alpha : alphas) {
              // dst column-major (contiguous along i), src column-major in its own orientation (cols x rows, so
              // op(src) is contiguous along j): the kernel transposes. ld_dst = rows rounded up to a line, plus pad.
              const index ld_dst = (rows + lanes_per_line - 1) / lanes_per_line * lanes_per_line + pad,
                          ld_src = cols + 1;
              // 64-byte aligned storage, dst starting `offset` lanes into a line.
              std::vector<T> storage(static_cast<size_t>(ld_dst * cols + 2 * lanes_per_line));
              const auto misalignment = reinterpret_cast<std::uintptr_t>(storage.data()) % 64 / sizeof(T);
              T* const base = storage.data() + (lanes_per_line - static_cast<index>(misalignment)) % lanes_per_line;
              T* const dst = base + offset;
              std::vector<T> src(static_cast<size_t>(ld_src * rows));
              for (auto& v : src) v = random_value<T>(gen);
              const T guard = T(-7);
              for (auto& v : storage) v = guard;
              redist::kernels::transform_block(dst, strided{1, ld_dst}, src.data(), strided{1, ld_src}, rows, cols, o,
                                               alpha, T(0), store_hint::streaming);
              for (index k = 0; k < static_cast<index>(storage.size()); ++k) {
                const index at = &storage[static_cast<size_t>(k)] - dst;
                const index i = at >= 0 ? at % ld_dst : -1, j = at >= 0 ? at / ld_dst : -1;
                T want = guard;
                if (at >= 0 && i < rows && j < cols) {
                  want = src[static_cast<size_t>(j + i * ld_src)];  // op(src)(i, j) = src(j, i)
                  if constexpr (is_complex<T>::value)
                    if (o == op::conj_transpose) want = std::conj(want);
                  if (alpha != T(1)) want = alpha * want;
                }
                ASSERT_EQ(storage[static_cast<size_t>(k)], want)
                    << rows << "x" << cols << " ld " << ld_dst << " offset " << offset << " lanes, "
                    << redist::to_string(o) << ", " << threads << " threads: storage element " << k;
              }
            }
  }
  omp_set_num_threads(1);
}

// Streaming plain copies: runs of at least 16 KiB go as four interleaved streams of whole lines after an ordinary
// head up to dst's first line boundary, the rest (and shorter runs) as one stream of 16-byte stores. Every offset
// of dst and src within a line, runs around the 16 KiB boundary and well past it (tails of every size), columns
// with gaps between them, and threads (which cut long runs into pieces).
template <class T>
void check_streaming_copies(std::uint64_t seed) {
  constexpr index lanes_per_line = 64 / static_cast<index>(sizeof(T));
  constexpr index four_streams = (16 << 10) / static_cast<index>(sizeof(T));
  fast_rng gen(seed);
  const std::pair<index, index> sizes[] = {
      {16, 1},   {300, 2}, {four_streams - 1, 1}, {four_streams, 1}, {four_streams + 3, 2}, {4 * four_streams + 77, 1},
      {70001, 3}};
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (const auto& [rows, cols] : sizes)
      for (index dst_offset = 0; dst_offset < lanes_per_line; dst_offset += (rows > 1000 ? 3 : 1))
        for (index src_offset : {index{0}, dst_offset, index{lanes_per_line - 1}}) {
          const index gap = cols > 1 ? 5 : 0, ld = rows + gap;
          std::vector<T> storage(static_cast<size_t>(ld * cols + 2 * lanes_per_line));
          std::vector<T> source(static_cast<size_t>(ld * cols + 2 * lanes_per_line));
          const auto line_start = [&](std::vector<T>& v) {
            const auto misalignment = reinterpret_cast<std::uintptr_t>(v.data()) % 64 / sizeof(T);
            return v.data() + (lanes_per_line - static_cast<index>(misalignment)) % lanes_per_line;
          };
          T* const dst = line_start(storage) + dst_offset;
          T* const src = line_start(source) + src_offset;
          for (auto& v : source) v = random_value<T>(gen);
          const T guard = T(-7);
          for (auto& v : storage) v = guard;
          redist::kernels::transform_block(dst, strided{1, ld}, src, strided{1, ld}, rows, cols, op::identity, T(1),
                                           T(0), store_hint::streaming);
          for (index k = 0; k < static_cast<index>(storage.size()); ++k) {
            const index at = &storage[static_cast<size_t>(k)] - dst;
            const bool inside = at >= 0 && at % ld < rows && at / ld < cols;
            const T want = inside ? src[at] : guard;
            ASSERT_EQ(storage[static_cast<size_t>(k)], want)
                << rows << "x" << cols << " ld " << ld << " dst offset " << dst_offset << " src offset " << src_offset
                << ", " << threads << " threads: storage element " << k;
          }
        }
  }
  omp_set_num_threads(1);
}

TEST(KernelsCopy, StreamingCopiesAtEveryLineOffset) {
  check_streaming_copies<float>(test_seed(70));
  check_streaming_copies<std::complex<double>>(test_seed(71));
}

TEST(KernelsComplex, StreamingTransposesAtEveryLineOffset) {
  using T = std::complex<double>;
  check_streaming_transposes<T>(test_seed(64), {op::transpose, op::conj_transpose}, {T(1)});
}

TEST(Kernels8Byte, StreamingTransposesAtEveryLineOffset) {
  check_streaming_transposes<double>(test_seed(65), {op::transpose}, {1.0, -2.5});
  check_streaming_transposes<std::int64_t>(test_seed(66), {op::transpose}, {1});
  using C = std::complex<float>;
  check_streaming_transposes<C>(test_seed(67), {op::transpose, op::conj_transpose}, {C(1)});
}

TEST(Kernels4Byte, StreamingTransposesAtEveryLineOffset) {
  check_streaming_transposes<float>(test_seed(68), {op::transpose}, {1.0f, -2.5f});
  check_streaming_transposes<std::int32_t>(test_seed(69), {op::transpose}, {1});
}

}  // namespace
