// SPDX-License-Identifier: BSD-3-Clause
// The SpMV halo exchange through the persistent neighborhood alltoallv (light path): for each test matrix
// and the rotated anisotropic diffusion matrix, rows and x split in blocks over the ranks, every strategy
// (dedup with the column indices as global ids) with regions of 2 ranks or by node, two cycles with x changed in between; every received entry of x is
// checked by its global index, and the distributed y = A x against the serial product.
// redist-test-ranks: 1 3 4 8
// redist-test-nodes: 8:4
// redist-test-labels: fast
// redist-test-needs: tools
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "redist/exchange/neighbor.hpp"
#include "redist_tools/patterns.hpp"

using namespace redist::exchange;
using namespace redist::testing;

namespace {

const char* const test_matrices[] = {"bcsstk01", "dwt_162",  "can_1054", "msc01050", "SmaGri",
                                     "lp_woodw", "west0132", "radfr1",   "diffusion"};

// Each matrix is read (built) once per process.
const sparse_matrix& matrix(const std::string& name) {
  static std::map<std::string, sparse_matrix> cache;
  auto found = cache.find(name);
  if (found != cache.end()) return found->second;
  sparse_matrix a = name == "diffusion" ? rotated_anisotropic_diffusion(24, std::acos(-1.0) / 4, 0.001)
                                        : read_matrix_market(std::string(REDIST_TEST_MATRIX_DIR) + "/" + name + ".mtx");
  return cache.emplace(name, std::move(a)).first->second;
}

// The entries of x: exact in double, different in every cycle.
double x_value(std::int64_t id, int cycle) { return 1 + static_cast<double>(id) * 0.5 + cycle * 0.25; }

struct exchange_case {
  neighbor_strategy strategy;
  int region_size;  // 0: by node
};

std::string describe(const exchange_case& c) {
  return std::string(to_string(c.strategy)) +
         (c.region_size ? ", regions of " + std::to_string(c.region_size) : ", regions by node");
}

class ExchangeSpmv : public ::testing::TestWithParam<const char*> {};

TEST_P(ExchangeSpmv, HaloAndProductMatchSerial) {
  const sparse_matrix& a = matrix(GetParam());
  const int p = world_size(), me = world_rank();
  const std::vector<std::int64_t> rows = block_partition(a.rows, p), cols = block_partition(a.cols, p);
  const halo_pattern h = spmv_halo(a, rows, cols, me);
  const std::int64_t own_first = cols[me], own_last = cols[me + 1];

  for (const exchange_case c : {exchange_case{neighbor_strategy::standard, 2},
                                {neighbor_strategy::aggregate, 0},
                                {neighbor_strategy::dedup, 2},
                                {neighbor_strategy::dedup, 0},
                                {neighbor_strategy::automatic, 2}}) {
    SCOPED_TRACE(describe(c));
    exchange_options options;
    options.strategy = c.strategy;
    options.region_size = c.region_size;
    std::vector<double> send(static_cast<size_t>(h.send_total())), halo(static_cast<size_t>(h.recv_total()));
    // The halo's global ids are the column indices (what dedup needs; the others ignore them).
    neighbor_plan plan = neighbor_alltoallv_init(
        h.sources, h.destinations,
        with_global_ids(typed_buffers(send, h.sendcounts, h.sdispls, halo, h.recvcounts, h.rdispls), h.send_ids,
                        h.recv_ids),
        MPI_COMM_WORLD, options);
    if (c.strategy != neighbor_strategy::automatic) EXPECT_EQ(plan.statistics().strategy, c.strategy);
    for (int cycle = 0; cycle < 2; ++cycle) {
      for (size_t k = 0; k < send.size(); ++k) send[k] = x_value(h.send_ids[k], cycle);
      std::fill(halo.begin(), halo.end(), -1.0);
      plan.start();
      plan.wait();

      std::ostringstream wrong;  // the first difference on this rank
      for (size_t k = 0; k < halo.size() && wrong.str().empty(); ++k)
        if (halo[k] != x_value(h.recv_ids[k], cycle))
          wrong << "halo entry " << k << " (x[" << h.recv_ids[k] << "]) = " << halo[k] << ", expected "
                << x_value(h.recv_ids[k], cycle);

      // y = A x on this rank's rows, x from its own entries and the halo (recv_ids ascending).
      for (std::int64_t i = rows[me]; i < rows[me + 1] && wrong.str().empty(); ++i) {
        double y = 0, serial = 0, scale = 0;
        for (std::int64_t k = a.row_start[i]; k < a.row_start[i + 1]; ++k) {
          const std::int64_t col = a.column[k];
          double x = 0;
          if (col >= own_first && col < own_last) {
            x = x_value(col, cycle);
          } else {
            const auto at = std::lower_bound(h.recv_ids.begin(), h.recv_ids.end(), col);
            if (at == h.recv_ids.end() || *at != col) {
              wrong << "row " << i << " needs x[" << col << "], which is not in the halo";
              break;
            }
            x = halo[static_cast<size_t>(at - h.recv_ids.begin())];
          }
          y += a.value[k] * x;
          serial += a.value[k] * x_value(col, cycle);
          scale += std::abs(a.value[k] * x_value(col, cycle));
        }
        if (wrong.str().empty() && std::abs(y - serial) > 1e-12 * scale)
          wrong << "y[" << i << "] = " << y << ", serial " << serial;
      }
      EXPECT_TRUE(wrong.str().empty()) << "rank " << me << ", cycle " << cycle << ": " << wrong.str();
      EXPECT_TRUE(all_ranks(wrong.str().empty())) << "cycle " << cycle;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, ExchangeSpmv, ::testing::ValuesIn(test_matrices),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// The default options (automatic strategy, regions by node) on the diffusion workload.
TEST(ExchangeSpmvDefaults, DiffusionHalo) {
  const sparse_matrix& a = matrix("diffusion");
  const int p = world_size(), me = world_rank();
  const std::vector<std::int64_t> split = block_partition(a.rows, p);
  const halo_pattern h = spmv_halo(a, split, split, me);
  std::vector<double> send(static_cast<size_t>(h.send_total())), halo(static_cast<size_t>(h.recv_total()));
  neighbor_plan plan = neighbor_alltoallv_init(h.sources, h.destinations, send, h.sendcounts, h.sdispls, halo,
                                               h.recvcounts, h.rdispls, MPI_COMM_WORLD);
  for (int cycle = 0; cycle < 2; ++cycle) {
    for (size_t k = 0; k < send.size(); ++k) send[k] = x_value(h.send_ids[k], cycle);
    plan.start();
    plan.wait();
    bool ok = true;
    for (size_t k = 0; k < halo.size(); ++k) ok = ok && halo[k] == x_value(h.recv_ids[k], cycle);
    EXPECT_TRUE(all_ranks(ok)) << to_string(plan.statistics().strategy) << ", cycle " << cycle;
  }
}

}  // namespace
