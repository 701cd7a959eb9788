// SPDX-License-Identifier: BSD-3-Clause
#include "redist/scalapack/descriptor.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>

#include "redist/error.hpp"
#include "redist/layout/builders.hpp"

namespace redist::scalapack {

namespace {

constexpr std::int64_t entry_multiplier = 100;  // info = -(position*100 + entry) for descriptor entries
constexpr std::int64_t none_found = std::numeric_limits<std::int64_t>::max();

constexpr size_t idx(desc_entry e) { return static_cast<size_t>(e); }

// a + b, saturated at the int64 limits (arguments come from callers and may be anything).
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  if (b > 0 && a > std::numeric_limits<std::int64_t>::max() - b) return std::numeric_limits<std::int64_t>::max();
  if (b < 0 && a < std::numeric_limits<std::int64_t>::min() - b) return std::numeric_limits<std::int64_t>::min();
  return a + b;
}

// Does the 1-based range [first, first+len-1] end beyond `extent`?
bool ends_beyond(std::int64_t first, std::int64_t len, std::int64_t extent) {
  return add_sat(add_sat(first, -1), len) > extent;
}

template <class Int>
descriptor parse(const Int* raw, dtype_fallback fallback) {
  if (raw == nullptr)
    throw invalid_argument("ScaLAPACK descriptor pointer is null; expected an array of 9 or 11 integers");
  descriptor d;
  auto at = [&](int pos) { return static_cast<std::int64_t>(raw[pos - 1]); };
  auto set = [&](desc_entry e, std::int64_t& field, int pos) {
    field = at(pos);
    d.position[idx(e)] = pos;
  };
  const std::int64_t type = fallback == dtype_fallback::read_as_type1 ? block_cyclic_2d : at(1);
  if (type == block_cyclic_2d_inb) {
    set(desc_entry::dtype, d.dtype, 1);
    set(desc_entry::ctxt, d.ctxt, 2);
    set(desc_entry::m, d.m, 3);
    set(desc_entry::n, d.n, 4);
    set(desc_entry::imb, d.imb, 5);
    set(desc_entry::inb, d.inb, 6);
    set(desc_entry::mb, d.mb, 7);
    set(desc_entry::nb, d.nb, 8);
    set(desc_entry::rsrc, d.rsrc, 9);
    set(desc_entry::csrc, d.csrc, 10);
    set(desc_entry::lld, d.lld, 11);
  } else if (type == block_cyclic_2d) {
    d.dtype = block_cyclic_2d;  // REDIST's reading never looks at the caller's DTYPE
    d.position[idx(desc_entry::dtype)] = 1;
    set(desc_entry::ctxt, d.ctxt, 2);
    set(desc_entry::m, d.m, 3);
    set(desc_entry::n, d.n, 4);
    set(desc_entry::mb, d.mb, 5);
    set(desc_entry::nb, d.nb, 6);
    set(desc_entry::rsrc, d.rsrc, 7);
    set(desc_entry::csrc, d.csrc, 8);
    set(desc_entry::lld, d.lld, 9);
    d.imb = d.mb;
    d.inb = d.nb;
    d.position[idx(desc_entry::imb)] = 5;
    d.position[idx(desc_entry::inb)] = 6;
  } else {
    // Unknown type: the array's length is unknown, so only DTYPE and CTXT are read (PBLAS does the same and
    // fills the rest with harmless values; its check then stops at DTYPE).
    set(desc_entry::dtype, d.dtype, 1);
    set(desc_entry::ctxt, d.ctxt, 2);
    d.m = d.n = 0;
    d.imb = d.inb = d.mb = d.nb = 1;
    d.rsrc = d.csrc = 0;
    d.lld = 1;
  }
  return d;
}

int to_info(std::int64_t code) {
  // code > 0: the smallest failing position, in entry_multiplier units for scalars.
  if (code == none_found) return 0;
  const std::int64_t c = code % entry_multiplier == 0 ? code / entry_multiplier : code;
  return -static_cast<int>(std::min<std::int64_t>(c, std::numeric_limits<int>::max()));
}

std::string grid_text(const process_grid& g) { return std::to_string(g.proc_rows) + "x" + std::to_string(g.proc_cols); }

}  // namespace

std::int64_t descriptor::value(desc_entry e) const noexcept {
  switch (e) {
    case desc_entry::dtype:
      return dtype;
    case desc_entry::ctxt:
      return ctxt;
    case desc_entry::m:
      return m;
    case desc_entry::n:
      return n;
    case desc_entry::imb:
      return imb;
    case desc_entry::inb:
      return inb;
    case desc_entry::mb:
      return mb;
    case desc_entry::nb:
      return nb;
    case desc_entry::rsrc:
      return rsrc;
    case desc_entry::csrc:
      return csrc;
    case desc_entry::lld:
      return lld;
  }
  return 0;
}

std::array<std::int64_t, descriptor_length> descriptor::normalized() const noexcept {
  std::array<std::int64_t, descriptor_length> out{};
  for (int e = 0; e < descriptor_length; ++e) out[static_cast<size_t>(e)] = value(static_cast<desc_entry>(e));
  if (known_type()) out[idx(desc_entry::dtype)] = block_cyclic_2d_inb;
  return out;
}

descriptor parse_descriptor(const int* desc, dtype_fallback fallback) { return parse(desc, fallback); }
descriptor parse_descriptor(const std::int64_t* desc, dtype_fallback fallback) { return parse(desc, fallback); }

const char* entry_name(desc_entry e) noexcept {
  static const char* const names[descriptor_length] = {"DTYPE", "CTXT", "M",    "N",    "IMB", "INB",
                                                       "MB",    "NB",   "RSRC", "CSRC", "LLD"};
  const int i = static_cast<int>(e);
  return i >= 0 && i < descriptor_length ? names[i] : "?";
}

void process_grid::validate() const {
  if (proc_rows < 1 || proc_cols < 1)
    throw invalid_argument("process grid " + grid_text(*this) + " is empty; expected at least 1x1");
  const size_t positions = static_cast<size_t>(proc_rows) * static_cast<size_t>(proc_cols);
  if (position_ranks.size() != positions)
    throw invalid_argument("process grid " + grid_text(*this) + " has " + std::to_string(position_ranks.size()) +
                           " position ranks; expected " + std::to_string(positions));
  std::vector<int> sorted = position_ranks;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0)
    throw invalid_argument("process grid " + grid_text(*this) + " has negative rank " + std::to_string(sorted.front()) +
                           "; expected communicator ranks >= 0");
  for (size_t k = 1; k < sorted.size(); ++k)
    if (sorted[k] == sorted[k - 1])
      throw invalid_argument("rank " + std::to_string(sorted[k]) + " holds two positions of process grid " +
                             grid_text(*this) + "; expected distinct ranks");
  const bool outside = my_row == -1 && my_col == -1;
  const bool inside = my_row >= 0 && my_row < proc_rows && my_col >= 0 && my_col < proc_cols;
  if (!outside && !inside)
    throw invalid_argument("grid coordinates (" + std::to_string(my_row) + "," + std::to_string(my_col) +
                           ") are not on process grid " + grid_text(*this) + "; expected a position or (-1,-1)");
}

std::int64_t numroc(std::int64_t n, std::int64_t first, std::int64_t block, std::int64_t proc, std::int64_t src,
                    std::int64_t nprocs) {
  if (src < 0 || nprocs <= 1) return n;
  if (n <= 0) return 0;
  const std::int64_t first_size = std::min(first, n);
  const std::int64_t rest = n - first_size;                             // indices after the first block
  const std::int64_t dist = ((proc - src) % nprocs + nprocs) % nprocs;  // blocks between src and proc
  const std::int64_t full = rest / block, tail = rest % block;          // whole blocks after the first, and the rest
  // Block k >= 1 (after the first) goes to distance k mod nprocs; blocks 1..full are whole, block full+1 has `tail`.
  std::int64_t count = dist == 0 ? first_size : 0;
  if (dist == 0) {
    count += (full / nprocs) * block;  // blocks nprocs, 2*nprocs, ... <= full
  } else if (full >= dist) {
    count += ((full - dist) / nprocs + 1) * block;  // blocks dist, dist+nprocs, ... <= full
  }
  if (tail > 0 && (full + 1) % nprocs == dist) count += tail;
  return count;
}

grid_layout layout_of(std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja, const descriptor& desc,
                      const process_grid& grid, int my_rank) {
  if (m < 0 || n < 0)
    throw invalid_argument("sub-matrix of " + std::to_string(m) + "x" + std::to_string(n) +
                           "; expected M >= 0 and N >= 0");
  grid.validate();
  block_cyclic_params p;
  p.proc_rows = grid.proc_rows;
  p.proc_cols = grid.proc_cols;
  p.grid_ranks = grid.position_ranks;
  p.order = storage_order::col_major;
  if (m == 0 || n == 0) {
    // Nothing is stored: one empty block (where a dimension has any extent) at grid position (0, 0).
    p.m = m;
    p.n = n;
    p.mb = std::max<std::int64_t>(1, m);
    p.nb = std::max<std::int64_t>(1, n);
    p.lld = 1;
    return block_cyclic(p, my_rank);
  }
  if (!desc.known_type())
    throw invalid_argument("descriptor type (DTYPE) " + std::to_string(desc.dtype) + " is not supported; expected " +
                           std::to_string(block_cyclic_2d) + " (BLOCK_CYCLIC_2D) or " +
                           std::to_string(block_cyclic_2d_inb) + " (BLOCK_CYCLIC_2D_INB)");
  for (desc_entry e : {desc_entry::imb, desc_entry::inb, desc_entry::mb, desc_entry::nb})
    if (desc.value(e) < 1)
      throw invalid_argument(std::string("descriptor block size ") + entry_name(e) + " = " +
                             std::to_string(desc.value(e)) + "; expected >= 1");
  auto check_src = [&](desc_entry e, int nprocs, const char* what) {
    const std::int64_t v = desc.value(e);
    if (v == -1)
      throw invalid_argument(std::string("descriptor ") + entry_name(e) + " = -1 (matrix replicated over the grid " +
                             what + ") is not supported; expected a grid " + what + " in [0, " +
                             std::to_string(nprocs) + ")");
    if (v < 0 || v >= nprocs)
      throw invalid_argument(std::string("descriptor ") + entry_name(e) + " = " + std::to_string(v) +
                             " is outside the " + grid_text(grid) + " process grid; expected [0, " +
                             std::to_string(nprocs) + ")");
  };
  check_src(desc_entry::rsrc, grid.proc_rows, "rows");
  check_src(desc_entry::csrc, grid.proc_cols, "columns");
  if (ia < 1 || ends_beyond(ia, m, desc.m))
    throw invalid_argument("sub-matrix rows IA:IA+M-1 = " + std::to_string(ia) + ":" +
                           std::to_string(add_sat(add_sat(ia, m), -1)) + " are not inside the " +
                           std::to_string(desc.m) + " rows (M_) of the matrix; expected 1 <= IA <= M_-M+1");
  if (ja < 1 || ends_beyond(ja, n, desc.n))
    throw invalid_argument("sub-matrix columns JA:JA+N-1 = " + std::to_string(ja) + ":" +
                           std::to_string(add_sat(add_sat(ja, n), -1)) + " are not inside the " +
                           std::to_string(desc.n) + " columns (N_) of the matrix; expected 1 <= JA <= N_-N+1");

  // Leading dimension of my local array (ScaLAPACK's LLD; irrelevant where I hold nothing).
  std::int64_t lld = 1;
  if (my_rank >= 0) {
    const auto it = std::find(grid.position_ranks.begin(), grid.position_ranks.end(), my_rank);
    if (it != grid.position_ranks.end()) {
      const std::int64_t k = it - grid.position_ranks.begin();
      const std::int64_t pr = k / grid.proc_cols, pc = k % grid.proc_cols;
      const std::int64_t np = numroc(desc.m, desc.imb, desc.mb, pr, desc.rsrc, grid.proc_rows);
      const std::int64_t nq = numroc(desc.n, desc.inb, desc.nb, pc, desc.csrc, grid.proc_cols);
      if (np > 0 && nq > 0) {
        if (desc.lld < np)
          throw invalid_argument("descriptor LLD = " + std::to_string(desc.lld) + " on rank " +
                                 std::to_string(my_rank) + " (grid position " + std::to_string(pr) + "," +
                                 std::to_string(pc) + ") is below its " + std::to_string(np) +
                                 " local rows; expected LLD >= " + std::to_string(np));
        lld = desc.lld;
      } else {
        lld = std::max<std::int64_t>(1, desc.lld);
      }
    }
  }
  p.m = desc.m;
  p.n = desc.n;
  p.mb = desc.mb;
  p.nb = desc.nb;
  p.first_mb = desc.imb;
  p.first_nb = desc.inb;
  p.rsrc = static_cast<int>(desc.rsrc);
  p.csrc = static_cast<int>(desc.csrc);
  p.lld = lld;
  p.sub_row = ia - 1;
  p.sub_col = ja - 1;
  p.sub_m = m;
  p.sub_n = n;
  return block_cyclic(p, my_rank);
}

int check_matrix(const process_grid& grid, std::int64_t context, std::int64_t m, int m_pos, std::int64_t n, int n_pos,
                 std::int64_t ia, std::int64_t ja, const descriptor& desc, int desc_pos, int info,
                 entry_numbering numbering) {
  // Errors are ranked by position: scalars at position*100, descriptor entries at position*100 + entry; the
  // smallest wins. An incoming info is brought to the same scale.
  std::int64_t found = none_found;
  if (info < 0) {
    const std::int64_t c = -static_cast<std::int64_t>(info);
    found = c > entry_multiplier ? c : c * entry_multiplier;
  }
  auto flag = [&](std::int64_t code) { found = std::min(found, code); };
  const std::int64_t m_code = std::int64_t{m_pos} * entry_multiplier;
  const std::int64_t n_code = std::int64_t{n_pos} * entry_multiplier;
  const std::int64_t ia_code = (std::int64_t{desc_pos} - 2) * entry_multiplier;
  const std::int64_t ja_code = (std::int64_t{desc_pos} - 1) * entry_multiplier;
  auto entry_code = [&](desc_entry e) {
    std::int64_t number = static_cast<std::int64_t>(e) + 1;
    if (numbering == entry_numbering::caller && desc.position_of(e) > 0) number = desc.position_of(e);
    return std::int64_t{desc_pos} * entry_multiplier + number;
  };

  if (m < 0) flag(m_code);
  if (n < 0) flag(n_code);
  if (ia < 1) flag(ia_code);
  if (ja < 1) flag(ja_code);

  if (!desc.known_type()) {  // nothing more of this descriptor can be trusted
    flag(entry_code(desc_entry::dtype));
    return to_info(found);
  }
  if (desc.ctxt != context || !grid.contains_me()) {  // operands must share the operation's context
    flag(entry_code(desc_entry::ctxt));
    return to_info(found);
  }

  if (desc.imb < 1) flag(entry_code(desc_entry::imb));
  if (desc.inb < 1) flag(entry_code(desc_entry::inb));
  if (desc.mb < 1) flag(entry_code(desc_entry::mb));
  if (desc.nb < 1) flag(entry_code(desc_entry::nb));
  // -1 is PBLAS's "replicated over the grid rows/columns".
  if (desc.rsrc < -1 || desc.rsrc >= grid.proc_rows) flag(entry_code(desc_entry::rsrc));
  if (desc.csrc < -1 || desc.csrc >= grid.proc_cols) flag(entry_code(desc_entry::csrc));

  if (m == 0 || n == 0) {  // empty operand: only the descriptor's own sanity
    if (desc.m < 0) flag(entry_code(desc_entry::m));
    if (desc.n < 0) flag(entry_code(desc_entry::n));
    if (desc.lld < 1) flag(entry_code(desc_entry::lld));
    return to_info(found);
  }
  if (desc.m < 1) flag(entry_code(desc_entry::m));
  if (desc.n < 1) flag(entry_code(desc_entry::n));
  if (desc.m >= 1 && desc.n >= 1) {
    if (ends_beyond(ia, m, desc.m)) flag(ia_code);
    if (ends_beyond(ja, n, desc.n)) flag(ja_code);
  }
  // The leading dimension is only looked at when everything else (so far, all operands) is right: the local
  // sizes need valid block sizes and sources.
  if (found == none_found) {
    const std::int64_t np = numroc(desc.m, desc.imb, desc.mb, grid.my_row, desc.rsrc, grid.proc_rows);
    if (desc.lld < std::max<std::int64_t>(1, np)) {
      const std::int64_t nq = numroc(desc.n, desc.inb, desc.nb, grid.my_col, desc.csrc, grid.proc_cols);
      if (desc.lld < 1 || nq > 0) flag(entry_code(desc_entry::lld));
    }
  }
  return to_info(found);
}

int check_tran(const process_grid& grid_a, std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja,
               const descriptor& desca, std::int64_t ic, std::int64_t jc, const descriptor& descc,
               entry_numbering numbering) {
  constexpr int m_pos = 1, n_pos = 2, desca_pos = 7, descc_pos = 12;
  if (!grid_a.contains_me())  // A's context is not valid here
    return -static_cast<int>(desca_pos * entry_multiplier + static_cast<int>(desc_entry::ctxt) + 1);
  const std::int64_t context = desca.ctxt;
  int info = check_matrix(grid_a, context, n, n_pos, m, m_pos, ia, ja, desca, desca_pos, 0, numbering);
  info = check_matrix(grid_a, context, m, m_pos, n, n_pos, ic, jc, descc, descc_pos, info, numbering);
  return info;
}

int check_gemm(const process_grid& grid_a, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
               std::int64_t ia, std::int64_t ja, const descriptor& desca, std::int64_t ib, std::int64_t jb,
               const descriptor& descb, std::int64_t ic, std::int64_t jc, const descriptor& descc,
               entry_numbering numbering) {
  constexpr int transa_pos = 1, transb_pos = 2, m_pos = 3, n_pos = 4, k_pos = 5;
  constexpr int desca_pos = 10, descb_pos = 14, descc_pos = 19;
  if (!grid_a.contains_me())  // A's context is not valid here
    return -static_cast<int>(desca_pos * entry_multiplier + static_cast<int>(desc_entry::ctxt) + 1);
  const auto upper = [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); };
  const auto valid = [](char c) { return c == 'N' || c == 'T' || c == 'C'; };
  const char ta = upper(transa), tb = upper(transb);
  // As the reference: a wrong TRANSB is only looked at when TRANSA is right, and an operand is taken as
  // transposed whenever its TRANS is not N (so a wrong TRANSA checks A as K x M).
  int info = !valid(ta) ? -transa_pos : !valid(tb) ? -transb_pos : 0;
  const std::int64_t context = desca.ctxt;
  if (ta == 'N')
    info = check_matrix(grid_a, context, m, m_pos, k, k_pos, ia, ja, desca, desca_pos, info, numbering);
  else
    info = check_matrix(grid_a, context, k, k_pos, m, m_pos, ia, ja, desca, desca_pos, info, numbering);
  if (tb == 'N')
    info = check_matrix(grid_a, context, k, k_pos, n, n_pos, ib, jb, descb, descb_pos, info, numbering);
  else
    info = check_matrix(grid_a, context, n, n_pos, k, k_pos, ib, jb, descb, descb_pos, info, numbering);
  return check_matrix(grid_a, context, m, m_pos, n, n_pos, ic, jc, descc, descc_pos, info, numbering);
}

std::string describe_info(int info) {
  if (info == 0) return "no error";
  if (info > 0) return "positive info " + std::to_string(info) + " is not an argument error code";
  const std::int64_t c = -static_cast<std::int64_t>(info);
  if (c >= entry_multiplier)
    return "argument " + std::to_string(c / entry_multiplier) + ", entry " + std::to_string(c % entry_multiplier) +
           " has an illegal value";
  return "argument " + std::to_string(c) + " has an illegal value";
}

gemr2d_problem check_gemr2d_operand(std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja,
                                    const descriptor& desc, const process_grid& grid) {
  if (m == 0 || n == 0) return gemr2d_problem::none;
  if (desc.rsrc < 0 || desc.rsrc >= grid.proc_rows || desc.csrc < 0 || desc.csrc >= grid.proc_cols)
    return gemr2d_problem::source_process;
  if (ia < 1 || ja < 1 || ends_beyond(ia, m, desc.m) || ends_beyond(ja, n, desc.n)) return gemr2d_problem::submatrix;
  if (desc.mb < 1 || desc.nb < 1 || desc.imb < 1 || desc.inb < 1) return gemr2d_problem::block_size;
  if (grid.contains_me() && numroc(desc.m, desc.imb, desc.mb, grid.my_row, desc.rsrc, grid.proc_rows) > desc.lld)
    return gemr2d_problem::leading_dimension;
  return gemr2d_problem::none;
}

std::string describe_gemr2d_problem(gemr2d_problem problem, const char* operand, std::int64_t m, std::int64_t n,
                                    std::int64_t ia, std::int64_t ja, const descriptor& desc,
                                    const process_grid& grid) {
  const std::string op = operand != nullptr ? operand : "?";
  switch (problem) {
    case gemr2d_problem::none:
      return "no problem";
    case gemr2d_problem::source_process:
      return "matrix " + op + ": first block at grid position (RSRC, CSRC) = (" + std::to_string(desc.rsrc) + "," +
             std::to_string(desc.csrc) + ") is not on the " + grid_text(grid) + " process grid";
    case gemr2d_problem::submatrix:
      return "matrix " + op + ": sub-matrix " + std::to_string(m) + "x" + std::to_string(n) + " at (" +
             std::to_string(ia) + "," + std::to_string(ja) + ") does not fit the " + std::to_string(desc.m) + "x" +
             std::to_string(desc.n) + " matrix; expected IA, JA >= 1, IA+M-1 <= M_ and JA+N-1 <= N_";
    case gemr2d_problem::block_size:
      return "matrix " + op + ": block sizes MB x NB = " + std::to_string(desc.mb) + "x" + std::to_string(desc.nb) +
             " (first block " + std::to_string(desc.imb) + "x" + std::to_string(desc.inb) + "); expected >= 1";
    case gemr2d_problem::leading_dimension:
      return "matrix " + op + ": LLD = " + std::to_string(desc.lld) + " at grid position (" +
             std::to_string(grid.my_row) + "," + std::to_string(grid.my_col) + ") is below its " +
             std::to_string(numroc(desc.m, desc.imb, desc.mb, grid.my_row, desc.rsrc, grid.proc_rows)) + " local rows";
  }
  return "unknown problem";
}

}  // namespace redist::scalapack
