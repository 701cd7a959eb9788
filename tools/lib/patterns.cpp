// SPDX-License-Identifier: BSD-3-Clause
// Workloads of the neighborhood exchange: Matrix Market input, the rotated anisotropic diffusion matrix, the
// halo pattern of a row-partitioned SpMV.
#include "redist_tools/patterns.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "redist/error.hpp"

namespace redist::exchange {

sparse_matrix from_entries(std::int64_t rows, std::int64_t cols, const std::vector<matrix_entry>& entries) {
  if (rows < 0 || cols < 0)
    throw invalid_argument("from_entries: matrix size " + std::to_string(rows) + " x " + std::to_string(cols) +
                           ": expected non-negative sizes");
  sparse_matrix a;
  a.rows = rows;
  a.cols = cols;
  a.row_start.assign(static_cast<size_t>(rows) + 1, 0);
  for (const matrix_entry& e : entries) {
    if (e.row < 0 || e.row >= rows || e.column < 0 || e.column >= cols)
      throw invalid_argument("from_entries: entry (" + std::to_string(e.row) + ", " + std::to_string(e.column) +
                             ") lies outside the " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " matrix: expected 0 <= row < rows and 0 <= column < cols");
    ++a.row_start[static_cast<size_t>(e.row) + 1];
  }
  for (std::int64_t i = 0; i < rows; ++i) a.row_start[i + 1] += a.row_start[i];
  // Counting sort by row, then each row sorted by column with duplicates summed in place.
  std::vector<std::pair<std::int64_t, double>> sorted(entries.size());
  std::vector<std::int64_t> next(a.row_start.begin(), a.row_start.end() - 1);
  for (const matrix_entry& e : entries) sorted[static_cast<size_t>(next[e.row]++)] = {e.column, e.value};
  a.column.reserve(entries.size());
  a.value.reserve(entries.size());
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto first = sorted.begin() + a.row_start[i], last = sorted.begin() + a.row_start[i + 1];
    std::sort(first, last, [](const auto& x, const auto& y) { return x.first < y.first; });
    a.row_start[i] = kept;
    for (auto it = first; it != last; ++it) {
      if (a.row_start[i] < kept && a.column.back() == it->first) {
        a.value.back() += it->second;
      } else {
        a.column.push_back(it->first);
        a.value.push_back(it->second);
        ++kept;
      }
    }
  }
  a.row_start[static_cast<size_t>(rows)] = kept;
  return a;
}

namespace {

// ---- Matrix Market ----

// Reads a file line by line, counting lines, so that every error can name where it happened.
class line_reader {
 public:
  explicit line_reader(const std::string& path) : path_(path), in_(path) {
    if (!in_)
      throw invalid_argument("read_matrix_market: cannot open '" + path + "' (" + std::strerror(errno) +
                             "): expected a readable Matrix Market file");
  }
  // The next line (without its end-of-line characters); false at the end of the file.
  bool next(std::string& line) {
    if (!std::getline(in_, line)) {
      if (in_.bad())
        throw invalid_argument("read_matrix_market: reading '" + path_ + "' failed after line " +
                               std::to_string(line_number_) + ": expected a readable file");
      return false;
    }
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
    return true;
  }
  // The next line that is neither a comment nor blank; false at the end of the file.
  bool next_content(std::string& line) {
    while (next(line))
      if (line.find_first_not_of(" \t") != std::string::npos && line[line.find_first_not_of(" \t")] != '%') return true;
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw invalid_argument("read_matrix_market: " + path_ + ":" + std::to_string(line_number_) + ": " + what);
  }
  std::int64_t line_number() const { return line_number_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::int64_t line_number_ = 0;
};

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (true) {
    at = line.find_first_not_of(" \t", at);
    if (at == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t", at), line.size());
    words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

std::string lowercase(std::string_view word) {
  std::string s(word);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_integer(std::string_view word, std::int64_t& out) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);  // from_chars takes no '+'
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && end == word.data() + word.size();
}

bool parse_real(std::string_view word, double& out) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && end == word.data() + word.size();
}

enum class mm_field { real, integer, pattern };
enum class mm_symmetry { general, symmetric, skew_symmetric };

struct mm_header {
  bool coordinate = true;
  mm_field field = mm_field::real;
  mm_symmetry symmetry = mm_symmetry::general;
};

mm_header read_banner(line_reader& in) {
  std::string line;
  if (!in.next(line))
    in.fail("the file is empty: expected the banner \"%%MatrixMarket matrix <format> <field> <symmetry>\"");
  const auto words = split_words(line);
  if (words.size() != 5 || lowercase(words[0]) != "%%matrixmarket")
    in.fail("\"" + line +
            "\" is not a Matrix Market banner: expected \"%%MatrixMarket matrix <format> <field> <symmetry>\"");
  const std::string object = lowercase(words[1]), format = lowercase(words[2]), field = lowercase(words[3]),
                    symmetry = lowercase(words[4]);
  if (object != "matrix") in.fail("object \"" + object + "\" is not supported: expected matrix");
  mm_header h;
  if (format == "coordinate")
    h.coordinate = true;
  else if (format == "array")
    h.coordinate = false;
  else
    in.fail("format \"" + format + "\" is not supported: expected coordinate or array");
  if (field == "real")
    h.field = mm_field::real;
  else if (field == "integer")
    h.field = mm_field::integer;
  else if (field == "pattern" && h.coordinate)
    h.field = mm_field::pattern;
  else if (field == "pattern")
    in.fail("field pattern is not allowed with the array format: expected real or integer");
  else if (field == "complex")
    in.fail("field complex is not supported: expected real, integer or pattern");
  else
    in.fail("field \"" + field + "\" is not supported: expected real, integer or pattern");
  if (symmetry == "general")
    h.symmetry = mm_symmetry::general;
  else if (symmetry == "symmetric")
    h.symmetry = mm_symmetry::symmetric;
  else if (symmetry == "skew-symmetric")
    h.symmetry = mm_symmetry::skew_symmetric;
  else if (symmetry == "hermitian")
    in.fail("symmetry hermitian is not supported: expected general, symmetric or skew-symmetric");
  else
    in.fail("symmetry \"" + symmetry + "\" is not supported: expected general, symmetric or skew-symmetric");
  if (h.field == mm_field::pattern && h.symmetry == mm_symmetry::skew_symmetric)
    in.fail("field pattern with symmetry skew-symmetric has no values to negate: expected general or symmetric");
  if (!h.coordinate && h.symmetry != mm_symmetry::general)
    in.fail("the array format is supported with symmetry general only, not \"" + symmetry + "\"");
  return h;
}

// The value of an entry line's word (integer fields must hold integers).
double read_value(line_reader& in, mm_field field, std::string_view word) {
  if (field == mm_field::integer) {
    std::int64_t v = 0;
    if (!parse_integer(word, v)) in.fail("\"" + std::string(word) + "\" is not an integer: expected an integer value");
    return static_cast<double>(v);
  }
  double v = 0;
  if (!parse_real(word, v)) in.fail("\"" + std::string(word) + "\" is not a number: expected a real value");
  return v;
}

void expect_end(line_reader& in, std::int64_t announced, const char* what) {
  std::string line;
  if (in.next_content(line))
    in.fail("\"" + line + "\" follows the " + std::to_string(announced) + " " + what +
            " announced: expected the end of the file");
}

}  // namespace

sparse_matrix read_matrix_market(const std::string& path) {
  line_reader in(path);
  const mm_header h = read_banner(in);
  std::string line;
  if (!in.next_content(line)) in.fail("end of file before the size line: expected the matrix size");
  const auto words = split_words(line);
  const size_t size_words = h.coordinate ? 3 : 2;
  std::int64_t size[3] = {0, 0, 0};
  bool sizes_ok = words.size() == size_words;
  for (size_t k = 0; sizes_ok && k < size_words; ++k) sizes_ok = parse_integer(words[k], size[k]) && size[k] >= 0;
  if (!sizes_ok)
    in.fail("\"" + line + "\" is not a size line: expected " +
            (h.coordinate ? "\"rows columns entries\"" : "\"rows columns\"") + " as non-negative integers");
  const std::int64_t rows = size[0], cols = size[1];
  if (h.symmetry != mm_symmetry::general && rows != cols)
    in.fail("a " + std::string(h.symmetry == mm_symmetry::symmetric ? "symmetric" : "skew-symmetric") + " matrix of " +
            std::to_string(rows) + " x " + std::to_string(cols) + ": expected a square matrix");

  std::vector<matrix_entry> entries;
  if (!h.coordinate) {
    if (cols != 0 && rows > std::numeric_limits<std::int64_t>::max() / cols)
      in.fail("an array of " + std::to_string(rows) + " x " + std::to_string(cols) +
              " entries: expected at most 2^63 - 1 entries");
    const std::int64_t count = rows * cols;
    for (std::int64_t k = 0; k < count; ++k) {
      if (!in.next_content(line))
        in.fail("end of file after " + std::to_string(k) + " of the " + std::to_string(count) +
                " array entries announced: expected one value per line");
      const auto value_words = split_words(line);
      if (value_words.size() != 1) in.fail("\"" + line + "\": expected one value per line (array format)");
      entries.push_back({k % rows, k / rows, read_value(in, h.field, value_words[0])});  // column-major
    }
    expect_end(in, count, "array entries");
    return from_entries(rows, cols, entries);
  }

  const std::int64_t announced = size[2];
  const size_t value_words = h.field == mm_field::pattern ? 2 : 3;
  for (std::int64_t k = 0; k < announced; ++k) {
    if (!in.next_content(line))
      in.fail("end of file after " + std::to_string(k) + " of the " + std::to_string(announced) +
              " entries announced: expected more entries");
    const auto entry_words = split_words(line);
    if (entry_words.size() != value_words)
      in.fail("\"" + line + "\": expected " +
              (h.field == mm_field::pattern ? "\"row column\"" : "\"row column value\""));
    std::int64_t i = 0, j = 0;
    if (!parse_integer(entry_words[0], i) || !parse_integer(entry_words[1], j))
      in.fail("\"" + line + "\": expected integer row and column indices");
    if (i < 1 || i > rows || j < 1 || j > cols)
      in.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") lies outside the " + std::to_string(rows) +
              " x " + std::to_string(cols) + " matrix: expected 1 <= row <= " + std::to_string(rows) +
              " and 1 <= column <= " + std::to_string(cols));
    const double v = h.field == mm_field::pattern ? 1.0 : read_value(in, h.field, entry_words[2]);
    if (h.symmetry == mm_symmetry::skew_symmetric && i == j && v != 0)
      in.fail("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(v) +
              " in a skew-symmetric matrix: expected no diagonal entries");
    entries.push_back({i - 1, j - 1, v});
    // The file holds one triangle (which one is not enforced); the other is its mirror.
    if (h.symmetry == mm_symmetry::symmetric && i != j) entries.push_back({j - 1, i - 1, v});
    if (h.symmetry == mm_symmetry::skew_symmetric && i != j) entries.push_back({j - 1, i - 1, -v});
  }
  expect_end(in, announced, "entries");
  return from_entries(rows, cols, entries);
}

// ---- Rotated anisotropic diffusion ----

sparse_matrix rotated_anisotropic_diffusion(std::int64_t n, double theta, double epsilon) {
  if (n < 1) throw invalid_argument("rotated_anisotropic_diffusion: n = " + std::to_string(n) + ": expected n >= 1");
  if (!(epsilon > 0) || !std::isfinite(epsilon) || !std::isfinite(theta))
    throw invalid_argument("rotated_anisotropic_diffusion: epsilon = " + std::to_string(epsilon) +
                           ", theta = " + std::to_string(theta) + ": expected a finite epsilon > 0 and a finite theta");
  if (n > 3037000499)  // n^2 must fit 64 bits
    throw invalid_argument("rotated_anisotropic_diffusion: n = " + std::to_string(n) +
                           ": expected n^2 to fit a 64-bit index (n <= 3037000499)");
  // K = Q diag(1, epsilon) Q^T = [[a, b], [b, c]].
  const double cos_t = std::cos(theta), sin_t = std::sin(theta);
  const double a = cos_t * cos_t + epsilon * sin_t * sin_t;
  const double b = (1 - epsilon) * cos_t * sin_t;
  const double c = sin_t * sin_t + epsilon * cos_t * cos_t;
  // Bilinear elements on a square cell (the mesh width cancels in 2D). Per cell, with corner shape
  // functions phi: integral(d_x phi_i d_x phi_j) is 1/3 for i = j, -1/3 across x, 1/6 across y, -1/6 across
  // the diagonal; integral(d_y phi_i d_y phi_j) likewise with x and y swapped; the symmetrised mixed term is
  // +-1/2 on the diagonal and across the cell's diagonals, 0 across edges. Summed over the 1, 2 or 4 cells a
  // pair of nodes shares:
  const double centre = 4 * (a + c) / 3;
  const double east_west = -2 * a / 3 + c / 3;
  const double north_south = a / 3 - 2 * c / 3;
  const double south_west_north_east = -(a + c) / 6 - b / 2;
  const double south_east_north_west = -(a + c) / 6 + b / 2;
  const double weight[3][3] = {// [dy + 1][dx + 1]
                               {south_west_north_east, north_south, south_east_north_west},
                               {east_west, centre, east_west},
                               {south_east_north_west, north_south, south_west_north_east}};

  sparse_matrix m;
  m.rows = m.cols = n * n;
  m.row_start.reserve(static_cast<size_t>(m.rows) + 1);
  m.column.reserve(static_cast<size_t>(9 * m.rows));
  m.value.reserve(static_cast<size_t>(9 * m.rows));
  m.row_start.push_back(0);
  // Neighbours outside the grid are Dirichlet boundary nodes: their couplings drop out.
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const std::int64_t nx = x + dx, ny = y + dy;
          if (nx < 0 || nx >= n || ny < 0 || ny >= n) continue;
          m.column.push_back(ny * n + nx);  // ascending: dy outer, dx inner
          m.value.push_back(weight[dy + 1][dx + 1]);
        }
      m.row_start.push_back(static_cast<std::int64_t>(m.column.size()));
    }
  return m;
}

// ---- Partitions and halo patterns ----

std::vector<std::int64_t> block_partition(std::int64_t n, int parts) {
  if (n < 0 || parts < 1)
    throw invalid_argument("block_partition: n = " + std::to_string(n) + ", parts = " + std::to_string(parts) +
                           ": expected n >= 0 and parts >= 1");
  std::vector<std::int64_t> offsets(static_cast<size_t>(parts) + 1, 0);
  const std::int64_t base = n / parts, larger = n % parts;
  for (int p = 0; p < parts; ++p) offsets[p + 1] = offsets[p] + base + (p < larger ? 1 : 0);
  return offsets;
}

namespace {

void check_offsets(const std::vector<std::int64_t>& offsets, std::int64_t extent, const char* name,
                   const char* extent_name) {
  if (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != extent)
    throw invalid_argument("spmv_halo: " + std::string(name) + " has " + std::to_string(offsets.size()) +
                           " entries from " + (offsets.empty() ? "-" : std::to_string(offsets.front())) + " to " +
                           (offsets.empty() ? "-" : std::to_string(offsets.back())) +
                           ": expected ranks + 1 entries from 0 to the matrix's " + extent_name + " (" +
                           std::to_string(extent) + ")");
  for (size_t k = 1; k < offsets.size(); ++k)
    if (offsets[k] < offsets[k - 1])
      throw invalid_argument("spmv_halo: " + std::string(name) + "[" + std::to_string(k) +
                             "] = " + std::to_string(offsets[k]) + " < " + name + "[" + std::to_string(k - 1) +
                             "] = " + std::to_string(offsets[k - 1]) + ": expected non-decreasing offsets");
}

void check_matrix(const sparse_matrix& a) {
  const bool shape_ok = a.rows >= 0 && a.cols >= 0 && a.row_start.size() == static_cast<size_t>(a.rows) + 1 &&
                        a.row_start.front() == 0 && a.row_start.back() == a.nonzeros() &&
                        a.value.size() == a.column.size();
  if (!shape_ok)
    throw invalid_argument("spmv_halo: the matrix's arrays disagree (rows " + std::to_string(a.rows) + ", row_start " +
                           std::to_string(a.row_start.size()) + " entries, column " + std::to_string(a.column.size()) +
                           ", value " + std::to_string(a.value.size()) +
                           "): expected rows + 1 row starts from 0 to the number of columns and values");
  for (std::int64_t i = 0; i < a.rows; ++i) {
    if (a.row_start[i + 1] < a.row_start[i])
      throw invalid_argument("spmv_halo: row_start decreases at row " + std::to_string(i) +
                             ": expected non-decreasing row starts");
    for (std::int64_t k = a.row_start[i]; k < a.row_start[i + 1]; ++k)
      if (a.column[k] < 0 || a.column[k] >= a.cols)
        throw invalid_argument("spmv_halo: row " + std::to_string(i) + " has column " + std::to_string(a.column[k]) +
                               ": expected 0 <= column < " + std::to_string(a.cols));
  }
}

int to_count(std::int64_t n, const char* what) {
  if (n > std::numeric_limits<int>::max())
    throw overflow_error(std::string("spmv_halo: ") + what + " of " + std::to_string(n) +
                         " entries: expected at most INT_MAX (MPI counts and displacements are int)");
  return static_cast<int>(n);
}

// Splits ascending ids into edges by owning rank (ascending ids meet the owners in rank order).
void group_by_owner(const std::vector<std::int64_t>& ids, const std::vector<std::int64_t>& column_offsets,
                    std::vector<int>& peers, std::vector<int>& counts, std::vector<int>& displs) {
  size_t k = 0;
  while (k < ids.size()) {
    const auto above = std::upper_bound(column_offsets.begin(), column_offsets.end(), ids[k]);
    const int owner = static_cast<int>(above - column_offsets.begin()) - 1;
    const size_t first = k;
    while (k < ids.size() && ids[k] < column_offsets[owner + 1]) ++k;
    peers.push_back(owner);
    displs.push_back(to_count(static_cast<std::int64_t>(first), "a halo"));
    counts.push_back(to_count(static_cast<std::int64_t>(k - first), "a halo edge"));
  }
}

}  // namespace

halo_pattern spmv_halo(const sparse_matrix& a, const std::vector<std::int64_t>& row_offsets,
                       const std::vector<std::int64_t>& column_offsets, int rank) {
  check_matrix(a);
  check_offsets(row_offsets, a.rows, "row_offsets", "rows");
  check_offsets(column_offsets, a.cols, "column_offsets", "columns");
  if (row_offsets.size() != column_offsets.size())
    throw invalid_argument("spmv_halo: row_offsets splits the rows into " + std::to_string(row_offsets.size() - 1) +
                           " parts, column_offsets the columns into " + std::to_string(column_offsets.size() - 1) +
                           ": expected one part of each per rank");
  const int ranks = static_cast<int>(row_offsets.size() - 1);
  if (rank < 0 || rank >= ranks)
    throw invalid_argument("spmv_halo: rank " + std::to_string(rank) + ": expected 0 <= rank < " +
                           std::to_string(ranks));

  const std::int64_t own_first = column_offsets[rank], own_last = column_offsets[rank + 1];
  const auto owned = [&](std::int64_t col) { return col >= own_first && col < own_last; };
  halo_pattern h;

  // Receive side: the columns this rank's rows use that other ranks own.
  for (std::int64_t k = a.row_start[row_offsets[rank]]; k < a.row_start[row_offsets[rank + 1]]; ++k)
    if (!owned(a.column[k])) h.recv_ids.push_back(a.column[k]);
  std::sort(h.recv_ids.begin(), h.recv_ids.end());
  h.recv_ids.erase(std::unique(h.recv_ids.begin(), h.recv_ids.end()), h.recv_ids.end());
  group_by_owner(h.recv_ids, column_offsets, h.sources, h.recvcounts, h.rdispls);

  // Send side: per other rank, the owned columns its rows use; `used_by` marks each owned column with the
  // last peer that needed it, so each appears once per peer without a set.
  std::vector<int> used_by(static_cast<size_t>(own_last - own_first), -1);
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == rank) continue;
    const size_t first = h.send_ids.size();
    for (std::int64_t k = a.row_start[row_offsets[peer]]; k < a.row_start[row_offsets[peer + 1]]; ++k) {
      const std::int64_t col = a.column[k];
      if (!owned(col) || used_by[col - own_first] == peer) continue;
      used_by[col - own_first] = peer;
      h.send_ids.push_back(col);
    }
    if (h.send_ids.size() == first) continue;
    std::sort(h.send_ids.begin() + static_cast<std::ptrdiff_t>(first), h.send_ids.end());
    h.destinations.push_back(peer);
    h.sdispls.push_back(to_count(static_cast<std::int64_t>(first), "a halo"));
    h.sendcounts.push_back(to_count(static_cast<std::int64_t>(h.send_ids.size() - first), "a halo edge"));
  }
  to_count(h.send_total(), "a halo");  // the displacement one past the end must fit too
  to_count(h.recv_total(), "a halo");
  return h;
}

}  // namespace redist::exchange
