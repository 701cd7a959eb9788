// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Workloads of the neighborhood exchange: sparse matrices (Matrix Market files, the rotated anisotropic
// diffusion problem) and the halo exchange of a row-partitioned sparse matrix-vector product y = A x.
// Everything here is serial and deterministic: each rank may compute any rank's pattern from the whole matrix.
#include <cstdint>
#include <string>
#include <vector>

namespace redist::exchange {

// Compressed sparse rows: row i holds column[k], value[k] for k in [row_start[i], row_start[i+1]),
// columns ascending and distinct within a row (duplicates of the input are summed).
struct sparse_matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_start;  // rows + 1 entries
  std::vector<std::int64_t> column;
  std::vector<double> value;

  std::int64_t nonzeros() const { return static_cast<std::int64_t>(column.size()); }
};

// One entry of a matrix given entry by entry (0-based indices).
struct matrix_entry {
  std::int64_t row = 0, column = 0;
  double value = 0;
};

// The CSR form of rows x cols entries in any order; entries at the same position are summed, explicit
// zeros are kept. Throws invalid_argument for negative sizes or an index out of range.
sparse_matrix from_entries(std::int64_t rows, std::int64_t cols, const std::vector<matrix_entry>& entries);

// Reads a NIST Matrix Market file: "coordinate" with field real | integer | pattern (values 1.0) and
// symmetry general | symmetric | skew-symmetric (the mirror entries added, negated when skew), or "array"
// (column-major, every entry kept) with field real | integer and symmetry general. Throws invalid_argument
// naming the file and line when the file cannot be read or does not follow the format.
sparse_matrix read_matrix_market(const std::string& path);

// The bilinear finite-element discretisation of -div(K grad u), K = Q diag(1, epsilon) Q^T with Q the
// rotation by theta (radians), on an n x n grid of interior nodes with homogeneous Dirichlet boundary: an
// n^2 x n^2 symmetric matrix with a 9-point stencil, node (x, y) being row y * n + x. Collom, Li and Bienz
// use theta = pi/4, epsilon = 0.001. Throws invalid_argument for n < 1 or epsilon <= 0.
sparse_matrix rotated_anisotropic_diffusion(std::int64_t n, double theta, double epsilon);

// parts + 1 offsets splitting [0, n) into contiguous parts whose sizes differ by at most one, the larger
// parts first. Throws invalid_argument for n < 0 or parts < 1.
std::vector<std::int64_t> block_partition(std::int64_t n, int parts);

// One rank's halo exchange for y = A x when A's rows are split by row_offsets and x's entries by
// column_offsets (one part per rank): the rank receives the entries of x that its rows use and other ranks
// own, and sends the entries it owns that other ranks' rows use. Edges are ordered by peer rank, without
// self edges or empty edges; counts and displacements are those of a neighborhood alltoallv over
// sources / destinations, in elements.
struct halo_pattern {
  std::vector<int> sources, destinations;
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
  // send_ids[sdispls[i] + k]: global index of the k-th x entry sent to destinations[i] (ascending);
  // recv_ids[rdispls[j] + k]: global index of the k-th x entry received from sources[j] (ascending, and
  // ascending over the whole vector since sources are ordered by rank and own ascending column ranges).
  std::vector<std::int64_t> send_ids, recv_ids;

  std::int64_t send_total() const { return static_cast<std::int64_t>(send_ids.size()); }
  std::int64_t recv_total() const { return static_cast<std::int64_t>(recv_ids.size()); }
};

// The halo pattern of `rank`. row_offsets and column_offsets have one more entry than there are ranks,
// start at 0, never decrease and end at a.rows (a.cols). Throws invalid_argument for inconsistent offsets,
// a rank out of range or a malformed matrix, overflow_error when a count does not fit an int.
halo_pattern spmv_halo(const sparse_matrix& a, const std::vector<std::int64_t>& row_offsets,
                       const std::vector<std::int64_t>& column_offsets, int rank);

}  // namespace redist::exchange
