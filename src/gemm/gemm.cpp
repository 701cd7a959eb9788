// The distributed multiply: native layouts from the COSMA schedule, relabeling of the grid positions, the
// transforms in and out, and the round loop (panels gathered along the grid, BLAS on each round, partial C
// summed along k). See include/redist/gemm/gemm.hpp and src/gemm/partition.hpp.
#include "redist/gemm/gemm.hpp"

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "partition.hpp"
#include "../memory/byte_count.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/compat.hpp"
#include "redist/error.hpp"
#include "../mpi/checked.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"
#include "../transform/detail/plan_impl.hpp"  // seconds_since
#include "redist/names.hpp"

extern "C" {
// Fortran BLAS (the hidden lengths of TRANSA and TRANSB follow the declared arguments).
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*, std::size_t, std::size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, std::size_t, std::size_t);
void cgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<float>*,
            const std::complex<float>*, const int*, const std::complex<float>*, const int*,
            const std::complex<float>*, std::complex<float>*, const int*, std::size_t, std::size_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const std::complex<double>*,
            const std::complex<double>*, const int*, const std::complex<double>*, const int*,
            const std::complex<double>*, std::complex<double>*, const int*, std::size_t, std::size_t);
}

namespace redist {

std::int64_t gemm_memory_limit_bytes(const gemm_options& options) {
  if (options.memory_limit_bytes < 0)
    throw invalid_argument("gemm_options::memory_limit_bytes is " + std::to_string(options.memory_limit_bytes) +
                           "; expected 0 (no limit or REDIST_GEMM_MEMORY) or a positive number of bytes");
  if (options.memory_limit_bytes > 0) return options.memory_limit_bytes;
  const char* text = std::getenv("REDIST_GEMM_MEMORY");
  if (text == nullptr || *text == '\0') return 0;
  const std::string value(text);
  const std::int64_t bytes = memory::parse_byte_count(value);
  if (bytes <= 0)
    throw invalid_argument("REDIST_GEMM_MEMORY is '" + value +
                           "'; expected a positive number of bytes with an optional K, M or G suffix (e.g. 512M)");
  return bytes;
}

namespace {

using gemm_detail::part_size;
using gemm_detail::part_start;

struct range {
  std::int64_t begin = 0, size = 0;
};
// Part p of `parts` of the range r (partition.hpp's rule).
range sub_range(range r, std::int64_t parts, std::int64_t p) {
  return {r.begin + part_start(r.size, parts, p), part_size(r.size, parts, p)};
}

// The cuts of the schedule (partition.hpp): sub-parts of m and n, rounds of k, and the pieces of each.
struct cuts {
  gemm_schedule s;
  range m_sub(int i, int sub) const { return sub_range(sub_range({0, s.m}, s.grid_m, i), s.sequential_m, sub); }
  range n_sub(int j, int sub) const { return sub_range(sub_range({0, s.n}, s.grid_n, j), s.sequential_n, sub); }
  range k_round(int l, std::int64_t r) const { return sub_range(sub_range({0, s.k}, s.grid_k, l), s.rounds, r); }
  // Position label of grid coordinates (i, j, l); labels >= ranks_used are idle.
  int label(int i, int j, int l) const { return (i * s.grid_n + j) * s.grid_k + l; }
};

struct grid_coordinates {
  int i = 0, j = 0, l = 0;
};

// The order in which one dimension (m, n or k) is cut into parts. The schedule's ranges are positions in this
// order, not global indices: the order lists the blocks of an input layout grouped by the process row (column)
// that owns them, so that a native part is, as far as sizes allow, made of indices one input process already
// holds. A block-cyclic input then keeps most of its data in place (all of it when the grid matches), where
// contiguous parts would move most of it. Every matrix along the dimension uses the same order, so the
// multiply is unchanged: it never looks at global indices.
struct dimension_order {
  std::vector<range> runs;                // global index ranges, in order
  std::vector<std::int64_t> run_position;  // position of each run's first index in the order

  // Identity order of [0, n).
  static dimension_order identity(std::int64_t n) {
    dimension_order o;
    o.runs.push_back({0, n});
    o.run_position.push_back(0);
    return o;
  }
  // Blocks of `splits` (a layout's splits of this dimension), stably grouped by `owner_line` (the process
  // row or column of each block). With `automatic`, layouts whose blocks are on average shorter than
  // min_mean_run keep the identity order: every run becomes a block of the native layouts, and planning and
  // packing pay per block (with runs of 64 or more, a native block holds at least 4096 elements when both
  // dimensions are grouped).
  static constexpr std::int64_t min_mean_run = 64;
  static dimension_order grouped(const std::vector<std::int64_t>& splits, const std::vector<int>& owner_line,
                                 gemm_native_order choice) {
    const std::int64_t blocks = static_cast<std::int64_t>(splits.size()) - 1, n = splits.empty() ? 0 : splits.back();
    if (blocks <= 1 || choice == gemm_native_order::contiguous ||
        (choice == gemm_native_order::automatic && n < min_mean_run * blocks))
      return identity(n);
    std::vector<std::int64_t> by_owner(static_cast<size_t>(blocks));
    for (std::int64_t b = 0; b < blocks; ++b) by_owner[static_cast<size_t>(b)] = b;
    std::stable_sort(by_owner.begin(), by_owner.end(), [&](std::int64_t x, std::int64_t y) {
      return owner_line[static_cast<size_t>(x)] < owner_line[static_cast<size_t>(y)];
    });
    dimension_order o;
    std::int64_t position = 0;
    for (std::int64_t b : by_owner) {
      const range block{splits[static_cast<size_t>(b)], splits[static_cast<size_t>(b) + 1] - splits[static_cast<size_t>(b)]};
      if (!o.runs.empty() && o.runs.back().begin + o.runs.back().size == block.begin) o.runs.back().size += block.size;
      else {
        o.runs.push_back(block);
        o.run_position.push_back(position);
      }
      position += block.size;
    }
    return o;
  }

  // The global runs of positions [r.begin, r.begin + r.size): (global range, offset within r).
  std::vector<std::pair<range, std::int64_t>> pieces(range r) const {
    std::vector<std::pair<range, std::int64_t>> out;
    if (r.size == 0) return out;
    size_t x = static_cast<size_t>(std::upper_bound(run_position.begin(), run_position.end(), r.begin) -
                                   run_position.begin()) - 1;
    for (std::int64_t done = 0; done < r.size; ++x) {
      const std::int64_t skip = r.begin + done - run_position[x];
      const std::int64_t take = std::min(runs[x].size - skip, r.size - done);
      out.push_back({{runs[x].begin + skip, take}, done});
      done += take;
    }
    return out;
  }
};

// The order of a dimension taken from the layout of op(X) along it: `rows` selects op(X)'s rows.
dimension_order order_from(const grid_layout& x, op o, bool rows, gemm_native_order choice) {
  const bool layout_rows = rows == (o == op::identity);
  return layout_rows ? dimension_order::grouped(x.row_splits(), x.row_proc(), choice)
                     : dimension_order::grouped(x.col_splits(), x.col_proc(), choice);
}

// Builds a native layout: parts are (row range x column range) in the dimensions' orders, each with a grid
// position; a part is stored column-major with its own height as leading dimension, this rank's parts one
// after another in `my_part_order`. A part made of several global runs becomes one layout block per pair of
// runs, each at its place inside the part's storage.
struct layout_parts {
  std::vector<std::pair<range, int>> rows, cols;  // range (in the order), process-grid row (column)
  int proc_rows = 1, proc_cols = 1;
};

struct split_dimension {
  std::vector<std::int64_t> splits{0};
  std::vector<int> procs;
  // Per part: its pieces as (layout block index, offset within the part).
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> part_blocks;
};

split_dimension split_along(const std::vector<std::pair<range, int>>& parts, const dimension_order& order) {
  struct run {
    range global;
    int proc;
    size_t part;
    std::int64_t offset;
  };
  std::vector<run> runs;
  for (size_t x = 0; x < parts.size(); ++x)
    for (const auto& [global, offset] : order.pieces(parts[x].first)) runs.push_back({global, parts[x].second, x, offset});
  std::sort(runs.begin(), runs.end(), [](const run& a, const run& b) { return a.global.begin < b.global.begin; });
  split_dimension d;
  d.part_blocks.resize(parts.size());
  for (const run& r : runs) {
    d.part_blocks[r.part].push_back({static_cast<std::int64_t>(d.procs.size()), r.offset});
    d.splits.push_back(r.global.begin + r.global.size);
    d.procs.push_back(r.proc);
  }
  return d;
}

grid_layout make_native_layout(const layout_parts& parts, const dimension_order& row_order,
                               const dimension_order& col_order, const std::vector<int>& grid_ranks, int my_rank,
                               const std::vector<std::pair<int, int>>& my_part_order) {
  split_dimension rows = split_along(parts.rows, row_order), cols = split_along(parts.cols, col_order);
  std::vector<local_block> blocks;
  std::int64_t offset = 0;
  for (const auto& [rx, cx] : my_part_order) {
    const range r = parts.rows[static_cast<size_t>(rx)].first, c = parts.cols[static_cast<size_t>(cx)].first;
    if (r.size == 0 || c.size == 0) continue;
    for (const auto& [col_block, col_offset] : cols.part_blocks[static_cast<size_t>(cx)])
      for (const auto& [row_block, row_offset] : rows.part_blocks[static_cast<size_t>(rx)])
        blocks.push_back({{row_block, col_block}, offset + col_offset * r.size + row_offset, r.size,
                          storage_order::col_major});
    offset += r.size * c.size;
  }
  return grid_layout(std::move(rows.splits), std::move(cols.splits), std::move(rows.procs), std::move(cols.procs),
                     parts.proc_rows, parts.proc_cols, grid_ranks, storage_order::col_major,
                     storage_kind::explicit_blocks, {}, {}, 1, std::move(blocks), my_rank);
}

// Whether every element `native` holds on this rank is held by `user` on this rank at the same offset of the
// local buffer, compared as column runs (then a transform between them would only copy C onto itself). Only a
// regular column-major user layout (ScaLAPACK's local arrays) is recognised.
bool held_alike(const grid_layout& native, const grid_layout& user) {
  if (user.kind() != storage_kind::regular || user.packing_order() != storage_order::col_major) return false;
  const std::vector<std::int64_t>&urs = user.row_splits(), &ucs = user.col_splits();
  const std::vector<std::int64_t>&nrs = native.row_splits(), &ncs = native.col_splits();
  const auto block_of = [](const std::vector<std::int64_t>& splits, std::int64_t g) {
    return static_cast<std::int64_t>(std::upper_bound(splits.begin(), splits.end(), g) - splits.begin()) - 1;
  };
  for (const local_block& b : native.local_blocks()) {
    const std::int64_t r0 = nrs[static_cast<size_t>(b.block.row)], r1 = nrs[static_cast<size_t>(b.block.row + 1)];
    const std::int64_t c0 = ncs[static_cast<size_t>(b.block.col)], c1 = ncs[static_cast<size_t>(b.block.col + 1)];
    if (r0 == r1 || c0 == c1) continue;
    if (b.order != storage_order::col_major) return false;
    for (std::int64_t col = c0; col < c1; ++col) {
      const std::int64_t bj = block_of(ucs, col);
      for (std::int64_t bi = block_of(urs, r0), row = r0; row < r1; row = urs[static_cast<size_t>(++bi)]) {
        if (user.owner({bi, bj}) != user.my_rank()) return false;
        const std::int64_t user_offset =
            user.local_row_start()[static_cast<size_t>(bi)] + (row - urs[static_cast<size_t>(bi)]) +
            (user.local_col_start()[static_cast<size_t>(bj)] + (col - ucs[static_cast<size_t>(bj)])) * user.local_ld();
        if (user_offset != b.offset + (row - r0) + (col - c0) * b.ld) return false;
      }
    }
  }
  return true;
}

// C (m x n, ld ldc) = alpha * A (m x k, ld lda) * B (k x n, ld ldb) + beta * C, all column-major.
// A size as BLAS takes it (32-bit). make_gemm_plan refuses schedules whose local multiplies do not fit, so this
// only guards against a narrowing that would otherwise be silent.
int blas_size(std::int64_t v) {
  if (v > std::numeric_limits<int>::max())
    throw overflow_error("local multiply size " + std::to_string(v) + " exceeds the 32-bit sizes BLAS takes");
  return static_cast<int>(v);
}

void local_gemm(element_type t, std::int64_t m, std::int64_t n, std::int64_t k, scalar alpha, const void* a,
                std::int64_t lda, const void* b, std::int64_t ldb, scalar beta, void* c, std::int64_t ldc) {
  const int im = blas_size(m), in = blas_size(n), ik = blas_size(k);
  const int ia = blas_size(std::max<std::int64_t>(lda, 1)), ib = blas_size(std::max<std::int64_t>(ldb, 1)),
            ic = blas_size(std::max<std::int64_t>(ldc, 1));
  switch (t) {
    case element_type::f32: {
      const float al = static_cast<float>(alpha.real()), be = static_cast<float>(beta.real());
      sgemm_("N", "N", &im, &in, &ik, &al, static_cast<const float*>(a), &ia, static_cast<const float*>(b), &ib, &be,
             static_cast<float*>(c), &ic, 1, 1);
      return;
    }
    case element_type::f64: {
      const double al = alpha.real(), be = beta.real();
      dgemm_("N", "N", &im, &in, &ik, &al, static_cast<const double*>(a), &ia, static_cast<const double*>(b), &ib,
             &be, static_cast<double*>(c), &ic, 1, 1);
      return;
    }
    case element_type::c32: {
      const std::complex<float> al(alpha), be(beta);
      cgemm_("N", "N", &im, &in, &ik, &al, static_cast<const std::complex<float>*>(a), &ia,
             static_cast<const std::complex<float>*>(b), &ib, &be, static_cast<std::complex<float>*>(c), &ic, 1, 1);
      return;
    }
    case element_type::c64: {
      zgemm_("N", "N", &im, &in, &ik, &alpha, static_cast<const std::complex<double>*>(a), &ia,
             static_cast<const std::complex<double>*>(b), &ib, &beta, static_cast<std::complex<double>*>(c), &ic, 1,
             1);
      return;
    }
    default: break;
  }
  throw invalid_argument(std::string("no multiply for element type ") + to_string(t));
}

// Allocated once per plan and reused by every execution (paper Section 7.5). 64-byte aligned.
class buffer {
 public:
  buffer() = default;
  explicit buffer(std::int64_t bytes) : storage_(static_cast<size_t>((bytes + 63) / 64)) {}
  std::byte* data() { return storage_.empty() ? nullptr : reinterpret_cast<std::byte*>(storage_.data()); }
  std::int64_t bytes() const { return static_cast<std::int64_t>(storage_.size()) * 64; }

 private:
  struct alignas(64) line {
    std::byte b[64];
  };
  std::vector<line> storage_;
};

// One gather of a panel along a grid line: this rank's piece and every member's piece (counts and
// displacements in elements within the panel).
struct panel_gather {
  std::int64_t my_offset = 0;  // of this rank's piece in its native storage
  std::int64_t my_count = 0;
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> displacements;
  std::int64_t total = 0;  // elements of the panel
  mpi::allgatherv_args gather;  // two-sided: the counts in the form the MPI takes
};

// One step of the round loop: the panels of sub-parts (s, t) and one round.
struct round_step {
  int s = 0, t = 0;
  std::int64_t rows = 0, cols = 0, depth = 0;  // the local multiply: rows x depth times depth x cols
  panel_gather a, b;
  std::int64_t a_native_offset = 0, b_native_offset = 0;  // the panel itself when no gather is needed
  bool last_of_block = false;                             // the C block (s, t) is complete after this step
};

// Where C block (s, t) lives and how it is scattered along k.
struct c_block {
  std::int64_t rows = 0, cols = 0;
  std::int64_t native_offset = 0;     // this rank's piece in the native C storage
  std::vector<std::int64_t> counts;   // per layer l: rows * piece columns (the reduce-scatter's counts)
};

}  // namespace

struct gemm_plan::impl {
  gemm_description description;
  gemm_options options;
  gemm_statistics stats;
  mpi::comm_handle comm;
  std::int64_t m = 0, n = 0, k = 0;
  std::size_t element_bytes = 0;
  MPI_Datatype mpi_type = MPI_DATATYPE_NULL;

  // Native layouts and the transforms through them.
  grid_layout a_native, b_native, c_native;
  transform_plan into_native;    // op(A) -> A native, op(B) -> B native (absent when k == 0 or C is empty)
  transform_plan out_of_native;  // C = C native + beta * C (absent when C is empty or written in place)
  bool has_into = false, has_out = false;
  // C's layout is the native one on every rank (grid_k = 1): the multiply writes the user's C with beta.
  bool c_in_place = false;

  // The multiply (this rank's part; empty when idle).
  bool idle = true;
  grid_coordinates me;
  mpi::comm_handle row_comm;    // ranks (i, *, l): gather op(A) panels
  mpi::comm_handle col_comm;    // ranks (*, j, l): gather op(B) panels
  mpi::comm_handle layer_comm;  // ranks (i, j, *): sum C along k
  std::vector<round_step> steps;
  std::vector<c_block> c_blocks;  // indexed s * sequential_n + t
  std::int64_t a_panel_capacity = 0, b_panel_capacity = 0, accumulator_elements = 0;
  mutable buffer a_store, b_store, c_store, accumulator, a_panels, b_panels;
  mutable gemm_execution_profile last_execution;
  MPI_Win a_window = MPI_WIN_NULL, b_window = MPI_WIN_NULL;

  ~impl() {
    if (mpi::finalized()) return;
    if (a_window != MPI_WIN_NULL) MPI_Win_free(&a_window);
    if (b_window != MPI_WIN_NULL) MPI_Win_free(&b_window);
  }

  std::byte* at(buffer& b, std::int64_t elements) const {
    return b.data() + elements * static_cast<std::int64_t>(element_bytes);
  }
  // Fills last_execution's multiply, panel_wait and reduction. `c` and beta: the user's C (c_in_place only).
  void multiply(void* c, scalar alpha, scalar beta) const;
  void start_gather(const round_step& step, int slot, std::vector<MPI_Request>& requests) const;
  void put_panels(const round_step& step, int slot) const;
};

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

void gemm_plan::impl::start_gather(const round_step& step, int slot, std::vector<MPI_Request>& requests) const {
  const auto gather = [&](const panel_gather& g, buffer& store, buffer& panels, std::int64_t capacity,
                          MPI_Comm line) {
    MPI_Request request = MPI_REQUEST_NULL;
    g.gather.start(at(store, g.my_offset), at(panels, slot * capacity), line, &request);
    requests.push_back(request);
  };
  if (stats.schedule.grid_n > 1) gather(step.a, a_store, a_panels, a_panel_capacity, row_comm.get());
  if (stats.schedule.grid_m > 1) gather(step.b, b_store, b_panels, b_panel_capacity, col_comm.get());
}

void gemm_plan::impl::put_panels(const round_step& step, int slot) const {
  const auto put = [&](const panel_gather& g, buffer& store, std::int64_t capacity, MPI_Comm line, MPI_Win window) {
    const int members = mpi::size(line), mine = mpi::rank(line);
    if (g.my_count == 0) return;
    for (int target = 0; target < members; ++target)
      mpi::put(at(store, g.my_offset), g.my_count, mpi_type, target,
               slot * capacity + g.displacements[static_cast<size_t>(mine)], window);
  };
  if (stats.schedule.grid_n > 1) put(step.a, a_store, a_panel_capacity, row_comm.get(), a_window);
  if (stats.schedule.grid_m > 1) put(step.b, b_store, b_panel_capacity, col_comm.get(), b_window);
}

// Narrowest column strip of a multiply that is cut so that pending gathers progress between strips (BLAS
// keeps its rate on strips this wide).
constexpr std::int64_t progress_strip_columns = 128;

void gemm_plan::impl::multiply(void* c, scalar alpha, scalar beta) const {
  last_execution.multiply = last_execution.panel_wait = last_execution.reduction = 0;
  if (idle || steps.empty()) return;
  const gemm_schedule& s = stats.schedule;
  const bool gather_a = s.grid_n > 1, gather_b = s.grid_m > 1;
  const bool one_sided = options.communication == gemm_communication::one_sided;
  const int slots = options.overlap ? 2 : 1;
  const auto fence_all = [&](int assertions) {
    if (gather_a) REDIST_MPI_CHECK(MPI_Win_fence(assertions, a_window));
    if (gather_b) REDIST_MPI_CHECK(MPI_Win_fence(assertions, b_window));
  };
  std::vector<MPI_Request> pending;
  // Brings step q's panels into slot q % slots; with overlap the next step's travel while this one multiplies.
  const auto issue = [&](size_t q) {
    const int slot = static_cast<int>(q % static_cast<size_t>(slots));
    if (one_sided) put_panels(steps[q], slot);
    else start_gather(steps[q], slot, pending);
  };
  const auto complete = [&]() {
    const seconds_since waiting;
    if (one_sided) {
      fence_all(0);
    } else if (!pending.empty()) {
      REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(pending.size()), pending.data()));
      pending.clear();
    }
    last_execution.panel_wait += waiting.elapsed();
  };
  const bool communicates = gather_a || gather_b;
  if (one_sided && communicates) fence_all(MPI_MODE_NOPRECEDE);
  if (communicates && options.overlap) {
    issue(0);
    complete();
  }
  bool block_started = false;
  for (size_t q = 0; q < steps.size(); ++q) {
    const round_step& step = steps[q];
    const int slot = static_cast<int>(q % static_cast<size_t>(slots));
    if (communicates) {
      if (options.overlap) {
        if (q + 1 < steps.size()) issue(q + 1);
      } else {
        // One buffer: a target may still multiply step q - 1 out of it until everyone passes a fence.
        if (one_sided && q > 0) fence_all(0);
        issue(q);
        complete();
      }
    }
    const c_block& cb = c_blocks[static_cast<size_t>(step.s * s.sequential_n + step.t)];
    std::byte* c_target = s.grid_k > 1 ? at(accumulator, 0)
                          : c_in_place ? static_cast<std::byte*>(c) + cb.native_offset * static_cast<std::int64_t>(element_bytes)
                                       : at(c_store, cb.native_offset);
    // The first round of a block overwrites it (or, in place, scales the user's C by beta), later ones add.
    const scalar first_beta = c_in_place ? beta : scalar(0.0);
    if (step.depth > 0 && step.rows > 0 && step.cols > 0) {
      const std::byte* a_panel =
          gather_a ? at(a_panels, slot * a_panel_capacity) : at(a_store, step.a_native_offset);
      const std::byte* b_panel =
          gather_b ? at(b_panels, slot * b_panel_capacity) : at(b_store, step.b_native_offset);
      // An MPI without asynchronous progress moves the next step's panels only inside MPI calls: the multiply
      // goes in column strips with a test of the gathers between them, so that their hand-shakes and copies
      // advance while this step computes instead of after it.
      const bool progress = !one_sided && !pending.empty();
      const std::int64_t strip = progress ? std::max<std::int64_t>(progress_strip_columns, (step.cols + 7) / 8) : step.cols;
      for (std::int64_t c0 = 0; c0 < step.cols; c0 += strip) {
        const seconds_since multiplying;
        local_gemm(description.type, step.rows, std::min(strip, step.cols - c0), step.depth, alpha, a_panel, step.rows,
                   b_panel + c0 * step.depth * static_cast<std::int64_t>(element_bytes), step.depth,
                   block_started ? scalar(1.0) : first_beta,
                   c_target + c0 * step.rows * static_cast<std::int64_t>(element_bytes), step.rows);
        last_execution.multiply += multiplying.elapsed();
        if (progress && c0 + strip < step.cols) {
          const seconds_since testing;
          int done = 0;
          REDIST_MPI_CHECK(MPI_Testall(static_cast<int>(pending.size()), pending.data(), &done, MPI_STATUSES_IGNORE));
          last_execution.panel_wait += testing.elapsed();
        }
      }
      block_started = true;
    }
    if (communicates && options.overlap) complete();  // the next step's panels (and, one-sided, the epoch)
    if (step.last_of_block) {
      if (!block_started && cb.rows * cb.cols > 0) {  // no round of this layer had any k: the product is 0
        if (c_in_place)
          local_gemm(description.type, cb.rows, cb.cols, 0, alpha, nullptr, cb.rows, nullptr, 1, beta, c_target, cb.rows);
        else
          std::memset(c_target, 0, static_cast<size_t>(cb.rows * cb.cols) * element_bytes);
      }
      if (s.grid_k > 1) {
        const seconds_since reducing;
        mpi::reduce_scatter(c_target, at(c_store, cb.native_offset), cb.counts.data(), mpi_type, MPI_SUM,
                            layer_comm.get());
        last_execution.reduction += reducing.elapsed();
      }
      block_started = false;
    }
  }
  if (one_sided && communicates) fence_all(MPI_MODE_NOSUCCEED);
}

gemm_plan::gemm_plan() = default;
gemm_plan::~gemm_plan() = default;
gemm_plan::gemm_plan(gemm_plan&&) noexcept = default;
gemm_plan& gemm_plan::operator=(gemm_plan&&) noexcept = default;
gemm_plan::gemm_plan(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

const gemm_description& gemm_plan::description() const { return impl_->description; }
gemm_statistics gemm_plan::statistics() const {
  gemm_statistics s = impl_->stats;
  s.last_execution = impl_->last_execution;
  return s;
}
MPI_Comm gemm_plan::communicator() const { return impl_->comm.get(); }

std::string gemm_plan::type_problem(element_type t) const {
  if (!impl_ || impl_->description.type == t) return {};
  return std::string("gemm plan was built for ") + to_string(impl_->description.type) +
         " elements but execute was called with " + to_string(t);
}

void gemm_plan::execute(void* c, const void* a, const void* b, scalar alpha, scalar beta) const {
  execute_agreed(c, a, b, alpha, beta, {});
}

void gemm_plan::execute_agreed(void* c, const void* a, const void* b, scalar alpha, scalar beta,
                               const std::string& problem) const {
  if (!impl_) throw invalid_argument("execute on an empty gemm_plan (build it with make_gemm_plan)");
  impl& p = *impl_;
  const seconds_since started;
  std::string problems = problem;
  const bool real = p.description.type == element_type::f32 || p.description.type == element_type::f64;
  if (problems.empty() && real && (alpha.imag() != 0.0 || beta.imag() != 0.0))
    problems = "gemm: real elements need real alpha and beta";
  // Written in place, C is checked here, as the transform out of the native layout would have.
  if (problems.empty() && p.c_in_place && c == nullptr && p.c_native.local_elements() > 0)
    problems = "gemm: C's buffer is null on a rank that holds " + std::to_string(p.c_native.local_elements()) +
               " elements of C";
  // The first transform's agreement carries this rank's problems: with k = 0 there is none into the native
  // layouts (and C is never written in place), and the one out of them decides before C is written.
  if (p.has_into)
    p.into_native.execute_agreed({job_buffers{p.a_store.data(), a, scalar(1.0), scalar(0.0)},
                                  job_buffers{p.b_store.data(), b, scalar(1.0), scalar(0.0)}},
                                 problems);
  const double into_done = started.elapsed();
  p.multiply(c, alpha, beta);
  const double multiply_done = started.elapsed();
  if (p.has_out)
    p.out_of_native.execute_agreed({job_buffers{c, p.c_store.data(), scalar(1.0), beta}}, p.has_into ? std::string() : problems);
  p.last_execution.transform_in = into_done;
  p.last_execution.transform_out = started.elapsed() - multiply_done;
  p.last_execution.total = started.elapsed();
}

gemm_plan make_gemm_plan(MPI_Comm comm, gemm_description description, const gemm_options& options) {
  auto p = std::make_unique<gemm_plan::impl>();
  // Validation and the schedule: every rank computes the same from the same global arguments. The plan's
  // communicator is made first, so that a failure to make it is agreed on too (over the caller's).
  mpi::agreement agreed(comm);
  agreed.collective([&] { p->comm = mpi::duplicate(comm); });
  const MPI_Comm dup = p->comm.get();
  const int me = mpi::rank(comm), nranks = mpi::size(comm);
  const gemm_description& d = description;

  std::uint64_t hash = 0;
  agreed.attempt([&] {
    if (d.type != element_type::f32 && d.type != element_type::f64 && d.type != element_type::c32 &&
        d.type != element_type::c64)
      throw invalid_argument(std::string("make_gemm_plan: element type ") + to_string(d.type) +
                             " cannot be multiplied; expected f32, f64, c32 or c64");
    if (!(options.max_idle_fraction >= 0 && options.max_idle_fraction < 1))
      throw invalid_argument("gemm_options::max_idle_fraction is " + std::to_string(options.max_idle_fraction) +
                             "; expected a fraction in [0, 1)");
    if (options.rounds < 0)
      throw invalid_argument("gemm_options::rounds is " + std::to_string(options.rounds) +
                             "; expected 0 (automatic) or a positive number of rounds");
    for (const op o : {d.op_a, d.op_b})
      if (std::string(to_string(o)) == "?")
        throw invalid_argument("make_gemm_plan: op_a or op_b is " + std::to_string(static_cast<int>(o)) +
                               "; expected op::identity, transpose or conj_transpose");
    if (std::string(to_string(options.communication)) == "?")
      throw invalid_argument("gemm_options::communication is " + std::to_string(static_cast<int>(options.communication)) +
                             "; expected " + spelled_choices<gemm_communication>());
    if (std::string(to_string(options.native_order)) == "?")
      throw invalid_argument("gemm_options::native_order is " + std::to_string(static_cast<int>(options.native_order)) +
                             "; expected " + spelled_choices<gemm_native_order>());
    const bool ta = d.op_a != op::identity, tb = d.op_b != op::identity;
    p->m = d.c.rows();
    p->n = d.c.cols();
    p->k = ta ? d.a.rows() : d.a.cols();
    const std::int64_t a_rows = ta ? d.a.cols() : d.a.rows();
    const std::int64_t b_rows = tb ? d.b.cols() : d.b.rows(), b_cols = tb ? d.b.rows() : d.b.cols();
    if (a_rows != p->m || b_rows != p->k || b_cols != p->n)
      throw dimension_mismatch("make_gemm_plan: C is " + std::to_string(p->m) + "x" + std::to_string(p->n) +
                               ", op(A) = " + to_string(d.op_a) + "(A) is " + std::to_string(a_rows) + "x" +
                               std::to_string(p->k) + " and op(B) = " + to_string(d.op_b) + "(B) is " +
                               std::to_string(b_rows) + "x" + std::to_string(b_cols) +
                               "; expected op(A) m x k and op(B) k x n for C m x n");
    p->element_bytes = element_size(d.type);
    p->mpi_type = mpi_datatype(d.type);
    const std::int64_t limit_bytes = gemm_memory_limit_bytes(options);
    gemm_schedule_options so;
    so.memory_limit_elements = limit_bytes / static_cast<std::int64_t>(p->element_bytes);
    if (limit_bytes > 0 && so.memory_limit_elements == 0) so.memory_limit_elements = 1;
    so.max_idle_fraction = options.max_idle_fraction;
    so.rounds = options.rounds;
    so.double_buffering = options.overlap;
    try {
      p->stats.schedule = plan_gemm_schedule(p->m, p->n, p->k, nranks, so);
    } catch (const insufficient_memory& e) {
      throw insufficient_memory(std::string(e.what()) + " (elements of " + std::to_string(p->element_bytes) +
                                " bytes; memory limit " + std::to_string(limit_bytes) + " bytes)");
    }
    // BLAS takes 32-bit sizes: the largest local multiply's rows, columns and depth (its leading dimensions
    // too) must fit. Parts are balanced, so the first of each is the largest.
    const cuts parts{p->stats.schedule};
    const std::int64_t largest = std::max({parts.m_sub(0, 0).size, parts.n_sub(0, 0).size, parts.k_round(0, 0).size});
    if (largest > std::numeric_limits<int>::max())
      throw overflow_error("make_gemm_plan: the schedule's local multiplies are " +
                           std::to_string(parts.m_sub(0, 0).size) + " x " + std::to_string(parts.n_sub(0, 0).size) +
                           " x " + std::to_string(parts.k_round(0, 0).size) + "; BLAS takes sizes up to " +
                           std::to_string(std::numeric_limits<int>::max()) +
                           " (more ranks, more rounds or a memory limit cut them smaller)");
    for (std::uint64_t v : {std::uint64_t(p->m), std::uint64_t(p->n), std::uint64_t(p->k), std::uint64_t(d.op_a),
                            std::uint64_t(d.op_b), std::uint64_t(d.type), std::uint64_t(limit_bytes),
                            std::uint64_t(options.rounds), std::uint64_t(options.communication),
                            std::uint64_t(options.overlap), std::uint64_t(options.relabel), std::uint64_t(options.native_order),
                            std::uint64_t(options.max_idle_fraction * 1e9)})
      hash = mix(hash, v);
  });
  agreed.require_same(hash,
                      "ranks passed different multiplies to make_gemm_plan (layouts' sizes, ops, element type or "
                      "options, REDIST_GEMM_MEMORY included); every rank must describe the same problem");
  agreed.conclude();

  p->description = std::move(description);
  p->options = options;
  const gemm_schedule& s = p->stats.schedule;
  const cuts cut{s};
  if (p->m == 0 || p->n == 0) return gemm_plan(std::move(p));  // C has no element: nothing to do

  // Native layouts over grid labels (label x = position (i, j, l) with x = (i*grid_n + j)*grid_k + l).
  layout_parts a_parts, b_parts, c_parts;
  a_parts.proc_rows = s.grid_m;
  a_parts.proc_cols = s.grid_k * s.grid_n;
  for (int i = 0; i < s.grid_m; ++i)
    for (int sub = 0; sub < s.sequential_m; ++sub) a_parts.rows.push_back({cut.m_sub(i, sub), i});
  for (int l = 0; l < s.grid_k; ++l)
    for (std::int64_t r = 0; r < s.rounds; ++r)
      for (int j = 0; j < s.grid_n; ++j) a_parts.cols.push_back({sub_range(cut.k_round(l, r), s.grid_n, j), l * s.grid_n + j});
  b_parts.proc_rows = s.grid_k;
  b_parts.proc_cols = s.grid_n * s.grid_m;
  for (int l = 0; l < s.grid_k; ++l)
    for (std::int64_t r = 0; r < s.rounds; ++r) b_parts.rows.push_back({cut.k_round(l, r), l});
  for (int j = 0; j < s.grid_n; ++j)
    for (int sub = 0; sub < s.sequential_n; ++sub)
      for (int i = 0; i < s.grid_m; ++i) b_parts.cols.push_back({sub_range(cut.n_sub(j, sub), s.grid_m, i), j * s.grid_m + i});
  c_parts.proc_rows = s.grid_m;
  c_parts.proc_cols = s.grid_n * s.grid_k;
  for (int i = 0; i < s.grid_m; ++i)
    for (int sub = 0; sub < s.sequential_m; ++sub) c_parts.rows.push_back({cut.m_sub(i, sub), i});
  for (int j = 0; j < s.grid_n; ++j)
    for (int sub = 0; sub < s.sequential_n; ++sub)
      for (int l = 0; l < s.grid_k; ++l) c_parts.cols.push_back({sub_range(cut.n_sub(j, sub), s.grid_k, l), j * s.grid_k + l});
  const auto grid_ranks_of = [&](const layout_parts& parts, auto label_at) {
    std::vector<int> ranks(static_cast<size_t>(parts.proc_rows) * static_cast<size_t>(parts.proc_cols));
    for (int pr = 0; pr < parts.proc_rows; ++pr)
      for (int pc = 0; pc < parts.proc_cols; ++pc) ranks[static_cast<size_t>(pr) * parts.proc_cols + pc] = label_at(pr, pc);
    return ranks;
  };
  const auto a_label = [&](int pr, int pc) { return cut.label(pr, pc % s.grid_n, pc / s.grid_n); };
  const auto b_label = [&](int pr, int pc) { return cut.label(pc % s.grid_m, pc / s.grid_m, pr); };
  const auto c_label = [&](int pr, int pc) { return cut.label(pr, pc / s.grid_k, pc % s.grid_k); };

  // Which rank plays which label: relabeling over the volumes of A, B (into the native layouts) and C (out).
  std::vector<int> rank_of_label(static_cast<size_t>(nranks));
  for (int x = 0; x < nranks; ++x) rank_of_label[static_cast<size_t>(x)] = x;
  const bool moves_inputs = p->k > 0;
  // Each dimension is ordered after the larger of the two matrices along it (ties: C, then op(A)).
  dimension_order m_order, n_order, k_order;
  {
    const gemm_description& u = p->description;
    mpi::agreement relabel_agreed(dup);
    relabel::relabeling found;
    relabel_agreed.attempt([&] {
      u.a.validate_global(nranks);
      u.b.validate_global(nranks);
      u.c.validate_global(nranks);
      const gemm_native_order no = options.native_order;
      m_order = p->k > p->n ? order_from(u.a, u.op_a, true, no) : order_from(u.c, op::identity, true, no);
      n_order = p->k > p->m ? order_from(u.b, u.op_b, false, no) : order_from(u.c, op::identity, false, no);
      k_order = p->n > p->m ? order_from(u.b, u.op_b, true, no) : order_from(u.a, u.op_a, false, no);
      const auto labelled = [&](const layout_parts& parts, const dimension_order& rows, const dimension_order& cols,
                                auto label_at) {
        return make_native_layout(parts, rows, cols, grid_ranks_of(parts, label_at), -1, {});
      };
      const grid_layout a_labels = labelled(a_parts, m_order, k_order, a_label),
                        b_labels = labelled(b_parts, k_order, n_order, b_label),
                        c_labels = labelled(c_parts, m_order, n_order, c_label);
      std::vector<relabel::layout_pair> pairs;
      const std::size_t eb = p->element_bytes;
      if (moves_inputs) {
        pairs.push_back({&a_labels, &u.a, u.op_a, eb});
        pairs.push_back({&b_labels, &u.b, u.op_b, eb});
      }
      pairs.push_back({&c_labels, &u.c, op::identity, eb});  // C travels the other way: same volume
      const relabel::comm_graph graph = relabel::communication_graph(pairs, nranks);
      found = relabel::find_relabeling(graph, {}, options.relabel ? relabel::solver::exact : relabel::solver::none);
    });
    relabel_agreed.conclude();
    if (options.relabel) {
      rank_of_label = found.new_rank_of;
      rank_of_label.resize(static_cast<size_t>(nranks));
      // The solver is deterministic; rank 0's answer is broadcast anyway so every rank uses the same one.
      REDIST_MPI_CHECK(MPI_Bcast(rank_of_label.data(), nranks, MPI_INT, 0, dup));
    }
    const auto eb = static_cast<std::int64_t>(p->element_bytes);
    p->stats.relabel_volume_before = found.remote_volume_before / eb;
    p->stats.relabel_volume_after = (options.relabel ? found.remote_volume_after : found.remote_volume_before) / eb;
  }
  int my_label = -1;
  for (int x = 0; x < nranks; ++x)
    if (rank_of_label[static_cast<size_t>(x)] == me) my_label = x;
  p->idle = my_label >= s.ranks_used;
  p->stats.idle = p->idle;
  if (!p->idle) {
    p->me = {my_label / (s.grid_n * s.grid_k), (my_label / s.grid_k) % s.grid_n, my_label % s.grid_k};
    p->stats.position_m = p->me.i;
    p->stats.position_n = p->me.j;
    p->stats.position_k = p->me.l;
  }
  const grid_coordinates at = p->me;

  // This rank's native blocks, in the order the round loop reads them.
  std::vector<std::pair<int, int>> a_order, b_order, c_order;
  if (!p->idle) {
    for (int sub = 0; sub < s.sequential_m; ++sub)
      for (std::int64_t r = 0; r < s.rounds; ++r)
        a_order.push_back({at.i * s.sequential_m + sub,
                           static_cast<int>((at.l * s.rounds + r) * s.grid_n + at.j)});
    for (std::int64_t r = 0; r < s.rounds; ++r)
      for (int sub = 0; sub < s.sequential_n; ++sub)
        b_order.push_back({static_cast<int>(at.l * s.rounds + r), (at.j * s.sequential_n + sub) * s.grid_m + at.i});
    for (int sm = 0; sm < s.sequential_m; ++sm)
      for (int sn = 0; sn < s.sequential_n; ++sn)
        c_order.push_back({at.i * s.sequential_m + sm, (at.j * s.sequential_n + sn) * s.grid_k + at.l});
  }
  const auto rank_at = [&](auto label_at) {
    return [&, label_at](int pr, int pc) { return rank_of_label[static_cast<size_t>(label_at(pr, pc))]; };
  };
  p->a_native = make_native_layout(a_parts, m_order, k_order, grid_ranks_of(a_parts, rank_at(a_label)), me, a_order);
  p->b_native = make_native_layout(b_parts, k_order, n_order, grid_ranks_of(b_parts, rank_at(b_label)), me, b_order);
  p->c_native = make_native_layout(c_parts, m_order, n_order, grid_ranks_of(c_parts, rank_at(c_label)), me, c_order);

  // The transforms (collective; they validate the user's layouts and agree on errors themselves).
  if (moves_inputs) {
    p->into_native = make_plan(dup,
                               {job_description{p->a_native, p->description.a, p->description.op_a, d.type},
                                job_description{p->b_native, p->description.b, p->description.op_b, d.type}},
                               options.transform);
    p->has_into = true;
    p->stats.transform_in = p->into_native.statistics();
  }
  // Where the user's C is stored exactly as the native C on every rank (the grid matches C's process grid,
  // as for ScaLAPACK operands on a fitting grid), the multiply writes it in place: no transform out, no
  // native copy of C. C's local storage is checked here, as the transform out would have, and agreed on.
  if (moves_inputs && s.grid_k == 1) {
    mpi::agreement c_checked(dup);
    std::int64_t alike = 0;
    c_checked.attempt([&] {
      p->description.c.validate_local();
      alike = held_alike(p->c_native, p->description.c) ? 1 : 0;
    });
    const std::size_t every_rank_alike = c_checked.reduce_min(alike);
    c_checked.conclude();
    p->c_in_place = c_checked.min(every_rank_alike) == 1;
  }
  p->stats.c_in_place = p->c_in_place;
  if (!p->c_in_place) {
    p->out_of_native = make_plan(dup, p->description.c, p->c_native, op::identity, d.type, options.transform);
    p->has_out = true;
    p->stats.transform_out = p->out_of_native.statistics();
  }

  // Buffers: native storage (zeroed: C native stays 0 when k == 0), accumulator and round panels.
  const std::int64_t eb = static_cast<std::int64_t>(p->element_bytes);
  p->a_store = buffer(p->a_native.local_elements() * eb);
  p->b_store = buffer(p->b_native.local_elements() * eb);
  if (!p->c_in_place) p->c_store = buffer(p->c_native.local_elements() * eb);
  if (p->c_store.bytes() > 0) std::memset(p->c_store.data(), 0, static_cast<size_t>(p->c_store.bytes()));

  // Grid-line communicators (idle ranks take part in the splits only).
  const auto split = [&](int color, int key) {
    MPI_Comm line = MPI_COMM_NULL;
    REDIST_MPI_CHECK(MPI_Comm_split(dup, p->idle ? MPI_UNDEFINED : color, key, &line));
    return mpi::comm_handle(line);
  };
  p->row_comm = split(at.i * s.grid_k + at.l, at.j);
  p->col_comm = split(at.j * s.grid_k + at.l, at.i);
  p->layer_comm = split(at.i * s.grid_n + at.j, at.l);
  if (!moves_inputs) return gemm_plan(std::move(p));

  if (!p->idle) {
    // Round steps in execution order, with the gathers' counts.
    std::int64_t a_offset = 0;
    std::vector<std::int64_t> a_offsets, b_offsets;  // native offsets of blocks (sub, r) and (r, sub)
    for (int sub = 0; sub < s.sequential_m; ++sub)
      for (std::int64_t r = 0; r < s.rounds; ++r) {
        a_offsets.push_back(a_offset);
        a_offset += cut.m_sub(at.i, sub).size * sub_range(cut.k_round(at.l, r), s.grid_n, at.j).size;
      }
    std::int64_t b_offset = 0;
    for (std::int64_t r = 0; r < s.rounds; ++r)
      for (int sub = 0; sub < s.sequential_n; ++sub) {
        b_offsets.push_back(b_offset);
        b_offset += cut.k_round(at.l, r).size * sub_range(cut.n_sub(at.j, sub), s.grid_m, at.i).size;
      }
    std::int64_t c_offset = 0;  // native C blocks follow one another in (sm, sn) order
    for (int sm = 0; sm < s.sequential_m; ++sm)
      for (int sn = 0; sn < s.sequential_n; ++sn) {
        const range rows = cut.m_sub(at.i, sm), cols = cut.n_sub(at.j, sn);
        c_block cb;
        cb.rows = rows.size;
        cb.cols = cols.size;
        for (int l = 0; l < s.grid_k; ++l) cb.counts.push_back(rows.size * sub_range(cols, s.grid_k, l).size);
        cb.native_offset = c_offset;
        c_offset += rows.size * sub_range(cols, s.grid_k, at.l).size;
        p->c_blocks.push_back(cb);
        p->accumulator_elements = std::max(p->accumulator_elements, rows.size * cols.size);
        for (std::int64_t r = 0; r < s.rounds; ++r) {
          const range depth = cut.k_round(at.l, r);
          round_step step;
          step.s = sm;
          step.t = sn;
          step.rows = rows.size;
          step.cols = cols.size;
          step.depth = depth.size;
          step.a_native_offset = a_offsets[static_cast<size_t>(sm * s.rounds + r)];
          step.b_native_offset = b_offsets[static_cast<size_t>(r * s.sequential_n + sn)];
          step.a.my_offset = step.a_native_offset;
          step.a.my_count = rows.size * sub_range(depth, s.grid_n, at.j).size;
          for (int j = 0; j < s.grid_n; ++j) {
            const range piece = sub_range(depth, s.grid_n, j);
            step.a.counts.push_back(rows.size * piece.size);
            step.a.displacements.push_back(rows.size * (piece.begin - depth.begin));
          }
          step.a.total = rows.size * depth.size;
          step.b.my_offset = step.b_native_offset;
          step.b.my_count = depth.size * sub_range(cols, s.grid_m, at.i).size;
          for (int i = 0; i < s.grid_m; ++i) {
            const range piece = sub_range(cols, s.grid_m, i);
            step.b.counts.push_back(depth.size * piece.size);
            step.b.displacements.push_back(depth.size * (piece.begin - cols.begin));
          }
          step.b.total = depth.size * cols.size;
          step.last_of_block = r + 1 == s.rounds;
          p->a_panel_capacity = std::max(p->a_panel_capacity, step.a.total);
          p->b_panel_capacity = std::max(p->b_panel_capacity, step.b.total);
          p->steps.push_back(std::move(step));
        }
      }
    if (options.communication == gemm_communication::two_sided) {
      const auto prepare = [&](panel_gather& g) {
        g.gather = mpi::allgatherv_args(g.my_count, g.counts, g.displacements, p->mpi_type);
      };
      for (round_step& step : p->steps) {
        if (s.grid_n > 1) prepare(step.a);
        if (s.grid_m > 1) prepare(step.b);
      }
    }
    const int slots = options.overlap ? 2 : 1;
    if (s.grid_k > 1) p->accumulator = buffer(p->accumulator_elements * eb);
    if (s.grid_n > 1) p->a_panels = buffer(slots * p->a_panel_capacity * eb);
    else p->a_panel_capacity = 0;
    if (s.grid_m > 1) p->b_panels = buffer(slots * p->b_panel_capacity * eb);
    else p->b_panel_capacity = 0;
    // Elements and messages per execution. Received: every panel piece but this rank's own, and the reduction's
    // partial sums as the schedule counts them (its communicated_elements). Sent: each of this rank's pieces
    // once to every rank of the line that needs it. Messages as if each piece went straight to its destination
    // (the MPI's collective algorithms may route them otherwise).
    traffic_statistics& t = p->stats.multiply;
    const auto others_with_data = [](const std::vector<std::int64_t>& counts, std::int64_t mine) {
      const auto with_data = std::count_if(counts.begin(), counts.end(), [](std::int64_t c) { return c > 0; });
      return static_cast<std::int64_t>(with_data) - (mine > 0 ? 1 : 0);
    };
    const auto gathered = [&](const panel_gather& g, int line) {
      if (line <= 1) return;
      t.bytes_received += g.total - g.my_count;
      t.bytes_sent += g.my_count * (line - 1);
      t.messages_received += others_with_data(g.counts, g.my_count);
      t.messages_sent += g.my_count > 0 ? line - 1 : 0;
    };
    for (const round_step& step : p->steps) {
      gathered(step.a, s.grid_n);
      gathered(step.b, s.grid_m);
    }
    if (s.grid_k > 1)
      for (const c_block& cb : p->c_blocks) {
        const std::int64_t mine = cb.counts[static_cast<size_t>(at.l)];
        t.bytes_received += cb.rows * cb.cols - mine;
        t.bytes_sent += cb.rows * cb.cols - mine;
        t.messages_received += mine > 0 ? s.grid_k - 1 : 0;
        t.messages_sent += others_with_data(cb.counts, mine);
      }
    t.bytes_received *= static_cast<std::int64_t>(eb);
    t.bytes_sent *= static_cast<std::int64_t>(eb);
  }
  if (options.communication == gemm_communication::one_sided) {
    const auto window_over = [&](buffer& panels, MPI_Comm line, bool needed, MPI_Win& window) {
      if (!needed || line == MPI_COMM_NULL) return;
      MPI_Win made = MPI_WIN_NULL;
      const int created = MPI_Win_create(panels.data(), static_cast<MPI_Aint>(panels.bytes()), static_cast<int>(eb),
                                         MPI_INFO_NULL, line, &made);
      // Owned before the check: a window that exists on every rank is freed by the plan on every rank, also
      // when the check fails on one of them (the others would wait in MPI_Win_free otherwise).
      window = made;
      mpi::check(created, "MPI_Win_create(panels, line)");
      REDIST_MPI_CHECK(MPI_Win_set_errhandler(window, MPI_ERRORS_RETURN));  // fences report, as calls on comms
    };
    // Made by every rank and agreed on: an MPI may fail to make a window on some ranks only (Open MPI 4.1's
    // osc/rdma, docs/mpi.md), and the others would then wait in the first fence.
    mpi::agreement windows(dup);
    windows.collective([&] { window_over(p->a_panels, p->row_comm.get(), s.grid_n > 1, p->a_window); });
    windows.collective([&] { window_over(p->b_panels, p->col_comm.get(), s.grid_m > 1, p->b_window); });
    windows.conclude();
  }
  return gemm_plan(std::move(p));
}

}  // namespace redist
