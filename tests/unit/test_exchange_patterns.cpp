// SPDX-License-Identifier: BSD-3-Clause
// The exchange workloads: the Matrix Market reader (every symmetry and field, the array format, every error
// with its file and line), the rotated anisotropic diffusion matrix (symmetry, the isotropic 9-point stencil,
// zero interior row sums, the smallest grids), block partitions, and SpMV halo patterns (each rank's receive
// list from a peer is that peer's send list to it, and exactly the off-rank columns of its rows).
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist_tools/patterns.hpp"

using namespace redist::exchange;

namespace {

const double pi = std::acos(-1.0);

// A file in a directory of its own, removed with it.
class ExchangePatternsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("redist_patterns_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // Reading `text` fails with a message naming the file, the line, and containing `fragment`.
  void expect_error(const std::string& text, int line, const std::string& fragment) {
    const std::string path = write("bad.mtx", text);
    try {
      read_matrix_market(path);
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const redist::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path + ":" + std::to_string(line) + ":"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

 private:
  std::filesystem::path dir_;
};

// The dense form, for comparisons.
std::vector<std::vector<double>> dense(const sparse_matrix& a) {
  std::vector<std::vector<double>> d(static_cast<size_t>(a.rows), std::vector<double>(static_cast<size_t>(a.cols)));
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_start[i]; k < a.row_start[i + 1]; ++k) d[i][a.column[k]] += a.value[k];
  return d;
}

// CSR invariants: row starts from 0 to nnz, columns strictly ascending within a row.
void expect_well_formed(const sparse_matrix& a) {
  ASSERT_EQ(a.row_start.size(), static_cast<size_t>(a.rows) + 1);
  EXPECT_EQ(a.row_start.front(), 0);
  EXPECT_EQ(a.row_start.back(), a.nonzeros());
  EXPECT_EQ(a.value.size(), a.column.size());
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_start[i]; k < a.row_start[i + 1]; ++k) {
      EXPECT_GE(a.column[k], 0);
      EXPECT_LT(a.column[k], a.cols);
      if (k > a.row_start[i]) EXPECT_LT(a.column[k - 1], a.column[k]) << "row " << i;
    }
}

bool is_symmetric(const sparse_matrix& a, double tolerance = 0) {
  if (a.rows != a.cols) return false;
  const auto d = dense(a);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < i; ++j)
      if (std::abs(d[i][j] - d[j][i]) > tolerance) return false;
  return true;
}

// ---- from_entries ----

TEST(ExchangePatterns, FromEntriesSortsAndSumsDuplicates) {
  const sparse_matrix a = from_entries(3, 4, {{2, 3, 1}, {0, 1, 2}, {2, 0, 3}, {0, 1, 4}, {1, 2, 0}});
  expect_well_formed(a);
  EXPECT_EQ(a.row_start, (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(a.column, (std::vector<std::int64_t>{1, 2, 0, 3}));
  EXPECT_EQ(a.value, (std::vector<double>{6, 0, 3, 1}));  // explicit zero kept
  EXPECT_THROW(from_entries(3, 4, {{3, 0, 1}}), redist::invalid_argument);
  EXPECT_THROW(from_entries(3, 4, {{0, -1, 1}}), redist::invalid_argument);
  EXPECT_THROW(from_entries(-1, 4, {}), redist::invalid_argument);
  EXPECT_EQ(from_entries(0, 0, {}).row_start, std::vector<std::int64_t>{0});
}

// ---- Matrix Market ----

TEST_F(ExchangePatternsFiles, CoordinateRealGeneral) {
  const sparse_matrix a = read_matrix_market(write("a.mtx",
                                                   "%%MatrixMarket Matrix Coordinate REAL General\n"
                                                   "% a comment\n"
                                                   "\n"
                                                   "3 4 5\n"
                                                   "3 4 1.5\n"
                                                   "1 1 -2e1\n"
                                                   "% comment between entries\n"
                                                   "2 3 .25\n"
                                                   "3 4 +0.5\n"
                                                   "1 4 7\n"));
  expect_well_formed(a);
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.cols, 4);
  const auto d = dense(a);
  EXPECT_EQ(d[0][0], -20);
  EXPECT_EQ(d[0][3], 7);
  EXPECT_EQ(d[1][2], 0.25);
  EXPECT_EQ(d[2][3], 2.0);  // duplicates summed
  EXPECT_EQ(a.nonzeros(), 4);
}

TEST_F(ExchangePatternsFiles, CoordinateIntegerAndPattern) {
  const sparse_matrix a = read_matrix_market(
      write("i.mtx", "%%MatrixMarket matrix coordinate integer general\r\n2 2 2\r\n1 2 -3\r\n2 1 4\r\n"));
  EXPECT_EQ(dense(a), (std::vector<std::vector<double>>{{0, -3}, {4, 0}}));
  const sparse_matrix p =
      read_matrix_market(write("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 3\n2 1\n2 2\n"));
  EXPECT_EQ(dense(p), (std::vector<std::vector<double>>{{0, 0, 1}, {1, 1, 0}}));
}

TEST_F(ExchangePatternsFiles, SymmetricMirrorsOffDiagonalEntries) {
  const sparse_matrix a = read_matrix_market(
      write("s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 1 3\n3 3 4\n"));
  expect_well_formed(a);
  EXPECT_EQ(dense(a), (std::vector<std::vector<double>>{{1, 2, 3}, {2, 0, 0}, {3, 0, 4}}));
  const sparse_matrix p =
      read_matrix_market(write("sp.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n"));
  EXPECT_EQ(dense(p), (std::vector<std::vector<double>>{{1, 1}, {1, 0}}));
}

TEST_F(ExchangePatternsFiles, SkewSymmetricNegatesTheMirror) {
  const sparse_matrix a = read_matrix_market(
      write("k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 2\n3 2 -5\n"));
  EXPECT_EQ(dense(a), (std::vector<std::vector<double>>{{0, -2, 0}, {2, 0, 5}, {0, -5, 0}}));
  const sparse_matrix i =
      read_matrix_market(write("ki.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n"));
  EXPECT_EQ(dense(i), (std::vector<std::vector<double>>{{0, -3}, {3, 0}}));
}

TEST_F(ExchangePatternsFiles, ArrayIsColumnMajor) {
  const sparse_matrix a =
      read_matrix_market(write("r.mtx", "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n3\n4\n0\n6\n"));
  expect_well_formed(a);
  EXPECT_EQ(dense(a), (std::vector<std::vector<double>>{{1, 3, 0}, {2, 4, 6}}));
  EXPECT_EQ(a.nonzeros(), 6);  // a dense matrix keeps its zeros
  const sparse_matrix i =
      read_matrix_market(write("i.mtx", "%%MatrixMarket matrix array integer general\n1 2\n-1\n5\n"));
  EXPECT_EQ(dense(i), (std::vector<std::vector<double>>{{-1, 5}}));
}

TEST_F(ExchangePatternsFiles, ErrorsNameFileAndLine) {
  expect_error("", 0, "empty");
  expect_error("3 3 1\n1 1 1\n", 1, "not a Matrix Market banner");
  expect_error("%%MatrixMarket matrix coordinate real\n", 1, "not a Matrix Market banner");
  expect_error("%%MatrixMarket vector coordinate real general\n", 1, "object \"vector\"");
  expect_error("%%MatrixMarket matrix sparse real general\n", 1, "format \"sparse\"");
  expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "field complex");
  expect_error("%%MatrixMarket matrix coordinate quaternion general\n", 1, "field \"quaternion\"");
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n", 1, "symmetry hermitian");
  expect_error("%%MatrixMarket matrix coordinate real upper\n", 1, "symmetry \"upper\"");
  expect_error("%%MatrixMarket matrix array pattern general\n", 1, "pattern is not allowed with the array");
  expect_error("%%MatrixMarket matrix array real symmetric\n", 1, "symmetry general only");
  expect_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n", 1, "skew-symmetric");
  expect_error("%%MatrixMarket matrix coordinate real general\n% only comments\n", 2, "before the size line");
  expect_error("%%MatrixMarket matrix coordinate real general\n3 x 1\n", 2, "not a size line");
  expect_error("%%MatrixMarket matrix coordinate real general\n3 3\n", 2, "not a size line");
  expect_error("%%MatrixMarket matrix coordinate real general\n-3 3 1\n", 2, "non-negative");
  expect_error("%%MatrixMarket matrix array real general\n2 2 4\n", 2, "not a size line");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", 2, "expected a square matrix");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 1\n", 4, "outside the 2 x 2");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 0 1\n", 4, "outside the 2 x 2");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n", 4, "after 2 of the 3 entries");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", 4, "follows the 1 entries");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", 3, "not a number");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3, "row column value");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1.5 1 1\n", 3, "integer row and column");
  expect_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "not an integer");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3, "\"row column\"");
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3, "skew-symmetric");
  expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5, "after 3 of the 4 array entries");
  expect_error("%%MatrixMarket matrix array real general\n1 2\n1 2\n", 3, "one value per line");
}

TEST_F(ExchangePatternsFiles, UnreadableFile) {
  const std::string missing = write("x.mtx", "") + ".missing";
  try {
    read_matrix_market(missing);
    ADD_FAILURE() << "no error";
  } catch (const redist::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

// The test matrices: the announced sizes, well formed, the symmetric ones symmetric.
TEST(ExchangePatterns, ReadsTheTestMatrices) {
  struct expected_shape {
    const char* file;
    std::int64_t rows, cols, entries;
    bool symmetric;
  };
  for (const expected_shape& m : {expected_shape{"bcsstk01.mtx", 48, 48, 224, true},
                                  {"dwt_162.mtx", 162, 162, 672, true},
                                  {"can_1054.mtx", 1054, 1054, 6625, true},
                                  {"msc01050.mtx", 1050, 1050, 15103, true},
                                  {"SmaGri.mtx", 1059, 1059, 4919, false},
                                  {"lp_woodw.mtx", 1098, 8418, 37487, false},
                                  {"west0132.mtx", 132, 132, 414, false},
                                  {"radfr1.mtx", 1048, 1048, 13299, false}}) {
    SCOPED_TRACE(m.file);
    const sparse_matrix a = read_matrix_market(std::string(REDIST_TEST_MATRIX_DIR) + "/" + m.file);
    expect_well_formed(a);
    EXPECT_EQ(a.rows, m.rows);
    EXPECT_EQ(a.cols, m.cols);
    if (m.symmetric) {
      EXPECT_TRUE(is_symmetric(a));
      EXPECT_GT(a.nonzeros(), m.entries);
      EXPECT_LE(a.nonzeros(), 2 * m.entries);
    } else {
      EXPECT_LE(a.nonzeros(), m.entries);
    }
  }
}

// ---- Rotated anisotropic diffusion ----

// The value at (row, col), 0 when absent.
double at(const sparse_matrix& a, std::int64_t row, std::int64_t col) {
  for (std::int64_t k = a.row_start[row]; k < a.row_start[row + 1]; ++k)
    if (a.column[k] == col) return a.value[k];
  return 0;
}

TEST(ExchangePatterns, DiffusionIsotropicIsTheNinePointLaplacian) {
  const std::int64_t n = 5;
  const sparse_matrix a = rotated_anisotropic_diffusion(n, 0.0, 1.0);
  expect_well_formed(a);
  EXPECT_EQ(a.rows, n * n);
  EXPECT_EQ(a.cols, n * n);
  const std::int64_t centre = 2 * n + 2;
  EXPECT_NEAR(at(a, centre, centre), 8.0 / 3, 1e-15);
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      if (dx != 0 || dy != 0) EXPECT_NEAR(at(a, centre, centre + dy * n + dx), -1.0 / 3, 1e-15) << dx << "," << dy;
}

TEST(ExchangePatterns, DiffusionSymmetricWithZeroInteriorRowSums) {
  for (const double theta : {0.0, pi / 4, 0.3, 2.0, -1.1})
    for (const double epsilon : {1.0, 0.001, 0.5}) {
      SCOPED_TRACE("theta " + std::to_string(theta) + " epsilon " + std::to_string(epsilon));
      const std::int64_t n = 6;
      const sparse_matrix a = rotated_anisotropic_diffusion(n, theta, epsilon);
      expect_well_formed(a);
      EXPECT_TRUE(is_symmetric(a, 1e-15));
      double total = 0;
      for (std::int64_t y = 0; y < n; ++y)
        for (std::int64_t x = 0; x < n; ++x) {
          const std::int64_t row = y * n + x;
          const bool interior = x > 0 && x < n - 1 && y > 0 && y < n - 1;
          const int neighbours = (x > 0 && x < n - 1 ? 3 : 2) * (y > 0 && y < n - 1 ? 3 : 2);
          EXPECT_EQ(a.row_start[row + 1] - a.row_start[row], neighbours) << row;
          double sum = 0;
          for (std::int64_t k = a.row_start[row]; k < a.row_start[row + 1]; ++k) sum += a.value[k];
          if (interior) EXPECT_NEAR(sum, 0, 1e-14) << row;
          total += sum;
          // a + c = 1 + epsilon whatever the rotation.
          EXPECT_NEAR(at(a, row, row), 4 * (1 + epsilon) / 3, 1e-14);
        }
      EXPECT_GT(total, 0);  // 1^T A 1 of a positive definite A
    }
}

// At 45 degrees the strong direction is the diagonal x = y: the couplings along it are stronger than
// across it, and as epsilon -> 0 the cross-diagonal coupling vanishes.
TEST(ExchangePatterns, DiffusionRotationFollowsTheStrongDirection) {
  const std::int64_t n = 3, centre = 4;
  const sparse_matrix a = rotated_anisotropic_diffusion(n, pi / 4, 0.001);
  const double along = at(a, centre, centre + n + 1), across = at(a, centre, centre + n - 1);
  EXPECT_LT(along, across);
  EXPECT_NEAR(along, -(1 + 0.001) / 6 - (1 - 0.001) / 4, 1e-15);
  EXPECT_NEAR(across, -(1 + 0.001) / 6 + (1 - 0.001) / 4, 1e-15);
  EXPECT_EQ(at(a, centre, centre - n - 1), along);
  EXPECT_EQ(at(a, centre, centre - n + 1), across);
  // theta = 0, epsilon -> 0: diffusion along x only.
  const sparse_matrix x_only = rotated_anisotropic_diffusion(n, 0, 1e-12);
  EXPECT_NEAR(at(x_only, centre, centre + 1), -2.0 / 3, 1e-12);
  EXPECT_NEAR(at(x_only, centre, centre + n), 1.0 / 3, 1e-12);
}

TEST(ExchangePatterns, DiffusionSmallestGrids) {
  const sparse_matrix one = rotated_anisotropic_diffusion(1, pi / 4, 0.001);
  expect_well_formed(one);
  EXPECT_EQ(one.rows, 1);
  ASSERT_EQ(one.nonzeros(), 1);
  EXPECT_NEAR(one.value[0], 4 * 1.001 / 3, 1e-15);
  const sparse_matrix two = rotated_anisotropic_diffusion(2, pi / 4, 0.001);
  expect_well_formed(two);
  EXPECT_EQ(two.rows, 4);
  EXPECT_EQ(two.nonzeros(), 16);  // every node neighbours every other
  EXPECT_TRUE(is_symmetric(two, 1e-15));
  EXPECT_THROW(rotated_anisotropic_diffusion(0, 0, 1), redist::invalid_argument);
  EXPECT_THROW(rotated_anisotropic_diffusion(3, 0, 0), redist::invalid_argument);
  EXPECT_THROW(rotated_anisotropic_diffusion(3, 0, -1), redist::invalid_argument);
}

// ---- block_partition ----

TEST(ExchangePatterns, BlockPartition) {
  EXPECT_EQ(block_partition(10, 3), (std::vector<std::int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(block_partition(2, 4), (std::vector<std::int64_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(block_partition(0, 1), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(block_partition(8, 4), (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
  const auto big = block_partition(std::int64_t{1} << 40, 7);
  EXPECT_EQ(big.back(), std::int64_t{1} << 40);
  EXPECT_LE(big[1] - big[0] - (big[7] - big[6]), 1);
  EXPECT_THROW(block_partition(-1, 2), redist::invalid_argument);
  EXPECT_THROW(block_partition(5, 0), redist::invalid_argument);
}

// ---- spmv_halo ----

TEST(ExchangePatterns, HaloOfASmallMatrix) {
  // Rows 0-1 on rank 0, rows 2-3 on rank 1, row 4 on rank 2; the same split of the columns.
  const sparse_matrix a =
      from_entries(5, 5, {{0, 0, 1}, {0, 4, 1}, {1, 2, 1}, {1, 3, 1}, {2, 1, 1}, {3, 4, 1}, {4, 0, 1}, {4, 1, 1}});
  const std::vector<std::int64_t> split = {0, 2, 4, 5};
  const halo_pattern h0 = spmv_halo(a, split, split, 0);
  EXPECT_EQ(h0.sources, (std::vector<int>{1, 2}));
  EXPECT_EQ(h0.recvcounts, (std::vector<int>{2, 1}));
  EXPECT_EQ(h0.rdispls, (std::vector<int>{0, 2}));
  EXPECT_EQ(h0.recv_ids, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(h0.destinations, (std::vector<int>{1, 2}));
  EXPECT_EQ(h0.sendcounts, (std::vector<int>{1, 2}));
  EXPECT_EQ(h0.sdispls, (std::vector<int>{0, 1}));
  EXPECT_EQ(h0.send_ids, (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(h0.send_total(), 3);
  EXPECT_EQ(h0.recv_total(), 3);
  const halo_pattern h2 = spmv_halo(a, split, split, 2);
  EXPECT_EQ(h2.sources, (std::vector<int>{0}));
  EXPECT_EQ(h2.recv_ids, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(h2.destinations, (std::vector<int>{0, 1}));
  EXPECT_EQ(h2.send_ids, (std::vector<std::int64_t>{4, 4}));
  // One part: nothing to exchange.
  const halo_pattern alone = spmv_halo(a, {0, 5}, {0, 5}, 0);
  EXPECT_TRUE(alone.sources.empty() && alone.destinations.empty() && alone.send_ids.empty() && alone.recv_ids.empty());
}

// Per rank of `parts`, every invariant of the patterns, and the agreement between the ranks.
void check_halo_consistency(const sparse_matrix& a, const std::vector<std::int64_t>& rows,
                            const std::vector<std::int64_t>& cols) {
  const int parts = static_cast<int>(rows.size()) - 1;
  std::vector<halo_pattern> h;
  for (int r = 0; r < parts; ++r) h.push_back(spmv_halo(a, rows, cols, r));
  // (sender, receiver) -> ids, from either side.
  std::map<std::pair<int, int>, std::vector<std::int64_t>> sent, received;
  for (int r = 0; r < parts; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(parts));
    const halo_pattern& p = h[r];
    ASSERT_EQ(p.sendcounts.size(), p.destinations.size());
    ASSERT_EQ(p.sdispls.size(), p.destinations.size());
    ASSERT_EQ(p.recvcounts.size(), p.sources.size());
    ASSERT_EQ(p.rdispls.size(), p.sources.size());
    std::int64_t offset = 0;
    for (size_t i = 0; i < p.destinations.size(); ++i) {
      EXPECT_NE(p.destinations[i], r);
      if (i > 0) EXPECT_LT(p.destinations[i - 1], p.destinations[i]);
      EXPECT_GT(p.sendcounts[i], 0);
      EXPECT_EQ(p.sdispls[i], offset);
      offset += p.sendcounts[i];
      std::vector<std::int64_t> ids(p.send_ids.begin() + p.sdispls[i], p.send_ids.begin() + offset);
      EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
      for (std::int64_t id : ids) EXPECT_TRUE(id >= cols[r] && id < cols[r + 1]) << id;
      sent[{r, p.destinations[i]}] = ids;
    }
    EXPECT_EQ(offset, p.send_total());
    offset = 0;
    for (size_t j = 0; j < p.sources.size(); ++j) {
      EXPECT_NE(p.sources[j], r);
      if (j > 0) EXPECT_LT(p.sources[j - 1], p.sources[j]);
      EXPECT_GT(p.recvcounts[j], 0);
      EXPECT_EQ(p.rdispls[j], offset);
      offset += p.recvcounts[j];
      std::vector<std::int64_t> ids(p.recv_ids.begin() + p.rdispls[j], p.recv_ids.begin() + offset);
      for (std::int64_t id : ids) EXPECT_TRUE(id >= cols[p.sources[j]] && id < cols[p.sources[j] + 1]) << id;
      received[{p.sources[j], r}] = ids;
    }
    EXPECT_EQ(offset, p.recv_total());
    EXPECT_TRUE(std::is_sorted(p.recv_ids.begin(), p.recv_ids.end()));
    // The receive ids are exactly the off-rank columns this rank's rows use.
    std::set<std::int64_t> used;
    for (std::int64_t k = a.row_start[rows[r]]; k < a.row_start[rows[r + 1]]; ++k)
      if (a.column[k] < cols[r] || a.column[k] >= cols[r + 1]) used.insert(a.column[k]);
    EXPECT_EQ(p.recv_ids, std::vector<std::int64_t>(used.begin(), used.end()));
  }
  EXPECT_EQ(sent, received);
}

TEST(ExchangePatterns, HaloSendAndReceiveListsAgree) {
  const sparse_matrix diffusion = rotated_anisotropic_diffusion(9, pi / 4, 0.001);
  for (int parts : {1, 2, 3, 5, 8, 13}) {
    SCOPED_TRACE("diffusion, parts " + std::to_string(parts));
    const auto split = block_partition(diffusion.rows, parts);
    check_halo_consistency(diffusion, split, split);
  }
  for (const char* file : {"west0132.mtx", "SmaGri.mtx", "lp_woodw.mtx", "bcsstk01.mtx"}) {
    const sparse_matrix a = read_matrix_market(std::string(REDIST_TEST_MATRIX_DIR) + "/" + file);
    for (int parts : {1, 2, 3, 4, 7, 8}) {
      SCOPED_TRACE(std::string(file) + ", parts " + std::to_string(parts));
      check_halo_consistency(a, block_partition(a.rows, parts), block_partition(a.cols, parts));
    }
  }
  // Uneven splits with empty parts, rows and columns split differently.
  SCOPED_TRACE("uneven");
  check_halo_consistency(diffusion, {0, 0, 30, 30, 60, 81}, {0, 10, 10, 50, 81, 81});
}

TEST(ExchangePatterns, HaloRefusesBadArguments) {
  const sparse_matrix a = rotated_anisotropic_diffusion(3, 0, 1);  // 9 x 9
  const std::vector<std::int64_t> split = {0, 4, 9};
  EXPECT_THROW(spmv_halo(a, split, split, -1), redist::invalid_argument);
  EXPECT_THROW(spmv_halo(a, split, split, 2), redist::invalid_argument);
  EXPECT_THROW(spmv_halo(a, {1, 4, 9}, split, 0), redist::invalid_argument);            // not from 0
  EXPECT_THROW(spmv_halo(a, {0, 4, 8}, split, 0), redist::invalid_argument);            // not to rows
  EXPECT_THROW(spmv_halo(a, split, {0, 4, 10}, 0), redist::invalid_argument);           // not to cols
  EXPECT_THROW(spmv_halo(a, {0, 5, 4, 9}, {0, 3, 6, 9}, 0), redist::invalid_argument);  // decreasing
  EXPECT_THROW(spmv_halo(a, split, {0, 3, 6, 9}, 0), redist::invalid_argument);         // part counts differ
  EXPECT_THROW(spmv_halo(a, {0}, {0}, 0), redist::invalid_argument);                    // no parts
  sparse_matrix broken = a;
  broken.column[3] = 9;
  EXPECT_THROW(spmv_halo(broken, split, split, 0), redist::invalid_argument);
  broken = a;
  broken.row_start.pop_back();
  EXPECT_THROW(spmv_halo(broken, split, split, 0), redist::invalid_argument);
  try {
    spmv_halo(a, {0, 5, 4, 9}, {0, 3, 6, 9}, 0);
  } catch (const redist::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("non-decreasing"), std::string::npos) << e.what();
  }
}

}  // namespace
