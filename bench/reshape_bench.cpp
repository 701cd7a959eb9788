// SPDX-License-Identifier: BSD-3-Clause
// reshape_bench: redist's N-d reshape (redist_reshape_plan_create / redist_reshape_plan_execute, C API) against the two
// ways FFT codes reshape distributed 3-D arrays today, on the reshapes of a 3-D FFT, in the same run.
//
//   mpiexec.mpich -n 4 bench_reshape_bench [--n 256] [--reps 5] [--json out.json] [--strategy NAME]
//                                          [--stores auto|cached|streaming] [--cases brick_to_x_pencil,...]
//
// Data: a global N x N x N array of complex doubles (MPI_C_DOUBLE_COMPLEX), element (i, j, k) = (v, -v) with
// v = i*N*N + j*N + k. Decompositions (boxes computed here, ranks numbered in C order over the process grid; an
// extent n cut into p parts gives the first n % p parts one more element):
//   brick      a near-cubic 3-D process grid from MPI_Dims_create(ranks, 3) over axes (0, 1, 2)
//   a-pencil   axis a whole on every rank, the other two axes (in increasing order) cut on the 2-D grid
//              MPI_Dims_create(ranks, 2)
// Cases (local arrays dense in their box; storage order from fastest to slowest axis, C order = {2, 1, 0}):
//   brick_to_x_pencil          brick -> x-pencil (x = axis 0), C order both sides
//   x_to_y_pencil              x-pencil -> y-pencil, C order both sides
//   x_to_y_pencil_contiguous   x-pencil (C order) -> y-pencil stored with axis 1 fastest: out_order {1, 2, 0}
//   y_to_z_pencil              y-pencil -> z-pencil, C order both sides
//   z_pencil_to_brick          z-pencil -> brick, C order both sides
// Methods, each checked element by element once (untimed; this run is also its warm-up), then timed
// interleaved: in repetition r the methods start at a rotated position, each after an MPI_Barrier, so that the
// noise of a shared machine hits all alike; per repetition the slowest rank's time; medians reported.
//   redist     redist_reshape_plan_create once (plan_seconds, timed on its own), then redist_reshape_plan_execute
//              (alpha, beta NULL); --strategy and --stores set the info keys "redist_strategy" and
//              "redist_stores" (default: none given)
//   alltoallw  MPI_Alltoallw with MPI_Type_create_subarray types per peer, created once outside the timing (what
//              mpi4py-fft and several FFT libraries do); the receive subarray describes the output's storage order
//              (dimensions listed slowest to fastest by out_order); where that differs from the input's (case
//              x_to_y_pencil_contiguous) the send type visits the region in the receiver's order (nested
//              hvectors), since MPI pairs elements in type-map order
//   alltoallv  pack each peer's intersection into one contiguous send buffer (loops in the input's storage order),
//              one MPI_Alltoallv, unpack into the output array in its own storage order; buffers allocated once
//   memcpy     the floor: one memcpy of the bytes this rank sends and keeps (max over ranks)
//   redist_node_buffer  the same redist plan with the input array in a node buffer (redist_node_buffer_create,
//              filled once outside the timing): node peers read it in place, one copy per element instead of two,
//              under the shared-memory strategy (what an FFT code gets by allocating its pencils there)
// Per case also: bytes sent off rank and kept (summed over ranks, MPI_Reduce), messages (non-empty intersections
// with other ranks' boxes, summed), and for redist the storage-order cost x_to_y_pencil_contiguous / x_to_y_pencil.
// Relabeling: for brick <-> pencil (brick_to_x_pencil, z_pencil_to_brick) a second redist plan with info
// "redist_relabel" = "exact" may give each output box to another rank; its bytes off rank (from the boxes each rank
// then holds, redist_reshape_output_box) and its median time are reported next to the fixed plan's, and its output
// is verified too.
// Output: one JSON object (stdout, or --json FILE with a table on stdout), then one line starting "SUMMARY ".
// Exit status 2 on errors; a wrong element aborts the run (MPI_Abort) with a message naming it.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baseline.hpp"
#include "redist/redist.h"
#include "usage.hpp"

namespace {

using namespace redist_baseline;
using complex = std::complex<double>;
using index3 = std::array<std::int64_t, 3>;
using order3 = std::array<int, 3>;  // axes from fastest-varying (stride 1) to slowest
constexpr order3 c_order{2, 1, 0};
constexpr std::int64_t element_bytes = static_cast<std::int64_t>(sizeof(complex));

const std::vector<std::string> all_case_names = {"brick_to_x_pencil", "x_to_y_pencil", "x_to_y_pencil_contiguous",
                                                 "y_to_z_pencil", "z_pencil_to_brick"};
enum method : int {
  m_redist = 0,
  m_alltoallw = 1,
  m_alltoallv = 2,
  m_memcpy = 3,
  m_redist_node_buffer = 4,
  method_count = 5
};
const char* const method_names[method_count] = {"redist", "alltoallw", "alltoallv", "memcpy", "redist_node_buffer"};

struct bench_options {
  std::int64_t n = 256;
  int repetitions = 5;
  std::string json_path;
  std::string strategy;  // empty: no "redist_strategy" info key
  std::string stores;    // empty: no "redist_stores" info key
  std::vector<std::string> cases = all_case_names;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

constexpr const char* usage_text =
    "usage: bench_reshape_bench [--n 256] [--reps 5] [--json FILE] [--strategy NAME] "
    "[--stores NAME] [--cases brick_to_x_pencil,x_to_y_pencil,x_to_y_pencil_contiguous,"
    "y_to_z_pencil,z_pencil_to_brick]\n"
    "  --n N             a global N x N x N array of complex doubles\n"
    "  --reps R          timed repetitions, the methods interleaved (medians, slowest rank)\n"
    "  --json FILE       write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n"
    "  --strategy NAME   redist's info key \"redist_strategy\": auto, point_to_point, alltoallv, shared_memory or\n"
    "                    torus_routed (default: not set, the library's auto)\n"
    "  --stores NAME     redist's info key \"redist_stores\": auto, cached or streaming (default: not set, auto)\n"
    "  --cases LIST      the reshapes of a 3-D FFT to run, comma-separated (default: all)\n";

bench_options parse_options(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (is_help_argument(arg)) {
      throw usage_requested{usage_text};
    } else if (arg == "--n") {
      o.n = parse_positive_int(next(), "--n");
    } else if (arg == "--reps") {
      o.repetitions = parse_positive_int(next(), "--reps");
    } else if (arg == "--json") {
      o.json_path = next();
    } else if (arg == "--strategy") {
      o.strategy = next();
    } else if (arg == "--stores") {
      o.stores = next();
    } else if (arg == "--cases") {
      o.cases = split_list(next());
      for (const auto& c : o.cases)
        if (std::find(all_case_names.begin(), all_case_names.end(), c) == all_case_names.end())
          throw std::invalid_argument("unknown case '" + c + "'");
    } else {
      throw std::invalid_argument("unknown argument '" + arg +
                                  "' (--n, --reps, --json, --strategy, --stores, --cases)");
    }
  }
  if (o.cases.empty()) throw std::invalid_argument("--cases needs at least one case");
  return o;
}

// ---- boxes and decompositions ----

struct box {
  index3 lo{}, hi{};  // lo inclusive, hi exclusive
  std::int64_t extent(int axis) const { return hi[axis] - lo[axis]; }
  std::int64_t count() const {
    return std::max<std::int64_t>(extent(0), 0) * std::max<std::int64_t>(extent(1), 0) *
           std::max<std::int64_t>(extent(2), 0);
  }
  bool empty() const { return count() == 0; }
};

box intersect(const box& a, const box& b) {
  box r;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

// Part `i` of an extent n cut into p parts, the first n % p parts one element longer.
std::int64_t part_start(std::int64_t n, std::int64_t p, std::int64_t i) { return i * (n / p) + std::min(i, n % p); }

struct decomposition {
  std::string name;        // "brick", "x-pencil", ...
  std::string dims;        // e.g. "2x2x1"
  std::string grid;        // e.g. "2x2x1 over axes (0,1,2)"
  std::vector<box> boxes;  // every rank's box
};

std::vector<int> dims_create(int ranks, int ndims) {
  std::vector<int> dims(static_cast<size_t>(ndims), 0);
  BASELINE_MPI_CHECK(MPI_Dims_create(ranks, ndims, dims.data()));
  return dims;
}

// Process grid `dims` over `axes` (the other axes whole), ranks in C order over the grid.
decomposition make_decomposition(std::string name, std::int64_t n, int ranks, const std::vector<int>& axes) {
  const std::vector<int> dims = dims_create(ranks, static_cast<int>(axes.size()));
  decomposition d;
  d.name = std::move(name);
  for (size_t g = 0; g < dims.size(); ++g) d.dims += (g ? "x" : "") + std::to_string(dims[g]);
  d.grid = d.dims + " over axes (";
  for (size_t g = 0; g < axes.size(); ++g) d.grid += (g ? "," : "") + std::to_string(axes[g]);
  d.grid += ")";
  for (int r = 0; r < ranks; ++r) {
    box b;
    for (int a = 0; a < 3; ++a) {
      b.lo[a] = 0;
      b.hi[a] = n;
    }
    int rest = r;
    for (size_t g = dims.size(); g-- > 0;) {  // C order: the last grid dimension varies fastest
      const int coord = rest % dims[g];
      rest /= dims[g];
      const int a = axes[g];
      b.lo[a] = part_start(n, dims[g], coord);
      b.hi[a] = part_start(n, dims[g], coord + 1);
    }
    d.boxes.push_back(b);
  }
  return d;
}

decomposition bricks(std::int64_t n, int ranks) { return make_decomposition("brick", n, ranks, {0, 1, 2}); }
decomposition pencils(std::int64_t n, int ranks, int axis) {
  std::vector<int> cut;
  for (int a = 0; a < 3; ++a)
    if (a != axis) cut.push_back(a);
  return make_decomposition(std::string(1, "xyz"[axis]) + "-pencil", n, ranks, cut);
}

// ---- local storage: a dense array over a box, axes ordered fastest to slowest ----

struct strided {  // element (g0, g1, g2) at sum (g[a] - lo[a]) * stride[a]
  index3 lo{}, stride{};
  std::int64_t offset(std::int64_t g0, std::int64_t g1, std::int64_t g2) const {
    return (g0 - lo[0]) * stride[0] + (g1 - lo[1]) * stride[1] + (g2 - lo[2]) * stride[2];
  }
};

// The dense array over `b` with axis order[0] fastest.
strided dense(const box& b, const order3& order) {
  strided s;
  s.lo = b.lo;
  std::int64_t stride = 1;
  for (int k = 0; k < 3; ++k) {
    s.stride[order[k]] = stride;
    stride *= std::max<std::int64_t>(b.extent(order[k]), 0);
  }
  return s;
}

// Copies the elements of `region` from src to dst, visiting its axes in `traversal` (fastest first).
void copy_region(const box& region, const order3& traversal, const complex* src, const strided& from, complex* dst,
                 const strided& to) {
  if (region.empty()) return;
  const int a0 = traversal[2], a1 = traversal[1], a2 = traversal[0];  // slowest, middle, fastest
  const std::int64_t run = region.extent(a2);
  const std::int64_t src_step = from.stride[a2], dst_step = to.stride[a2];
  index3 g = region.lo;
  for (g[a0] = region.lo[a0]; g[a0] < region.hi[a0]; ++g[a0]) {
    for (g[a1] = region.lo[a1]; g[a1] < region.hi[a1]; ++g[a1]) {
      g[a2] = region.lo[a2];
      const complex* s = src + from.offset(g[0], g[1], g[2]);
      complex* d = dst + to.offset(g[0], g[1], g[2]);
      if (src_step == 1 && dst_step == 1) {
        std::memcpy(static_cast<void*>(d), s, static_cast<size_t>(run * element_bytes));
      } else {
        for (std::int64_t e = 0; e < run; ++e) d[e * dst_step] = s[e * src_step];
      }
    }
  }
}

// The value of global element (i, j, k).
complex value_at(std::int64_t n, std::int64_t i, std::int64_t j, std::int64_t k) {
  const double v = static_cast<double>((i * n + j) * n + k);
  return {v, -v};
}
const complex sentinel{-1.0, 1.0};  // never a value_at

void fill_input(std::int64_t n, const box& b, const strided& s, complex* data) {
  for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k) data[s.offset(i, j, k)] = value_at(n, i, j, k);
}

// Checks every element of this rank's output against value_at; a mismatch anywhere aborts the run.
void verify_or_abort(const std::string& what, std::int64_t n, const box& b, const strided& s, const complex* data) {
  std::int64_t wrong = 0;
  std::string first;
  for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k) {
        const complex got = data[s.offset(i, j, k)], want = value_at(n, i, j, k);
        if (got == want) continue;
        if (wrong++ == 0) {
          char text[256];
          std::snprintf(text, sizeof text, "element (%lld, %lld, %lld) is (%g, %g), expected (%g, %g)",
                        static_cast<long long>(i), static_cast<long long>(j), static_cast<long long>(k), got.real(),
                        got.imag(), want.real(), want.imag());
          first = text;
        }
      }
  std::int64_t total = 0;
  BASELINE_MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  if (total == 0) return;
  if (wrong > 0)
    std::fprintf(
        stderr, "reshape_bench: %s: WRONG RESULT on rank %d: %lld wrong elements here (%lld on all ranks), %s\n",
        what.c_str(), world_rank(), static_cast<long long>(wrong), static_cast<long long>(total), first.c_str());
  std::fflush(stderr);
  BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void check_redist(int code, const char* call) {
  if (code != MPI_SUCCESS) check_mpi(code, call);
}
#define REDIST_CHECK(call) check_redist((call), #call)

int as_int(std::int64_t v, const char* what) {
  if (v > INT_MAX) throw std::runtime_error(std::string(what) + " exceeds INT_MAX: use more ranks or a smaller --n");
  return static_cast<int>(v);
}

// A subarray type for `region` of the dense array over `b` stored in `order`: MPI's C order with the array's
// dimensions listed slowest to fastest (order reversed), starts and sizes permuted alike.
MPI_Datatype subarray(const box& b, const order3& order, const box& region) {
  int sizes[3], subsizes[3], starts[3];
  for (int d = 0; d < 3; ++d) {
    const int a = order[2 - d];
    sizes[d] = as_int(b.extent(a), "an array extent");
    subsizes[d] = as_int(region.extent(a), "a subarray extent");
    starts[d] = as_int(region.lo[a] - b.lo[a], "a subarray start");
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  BASELINE_MPI_CHECK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX, &t));
  BASELINE_MPI_CHECK(MPI_Type_commit(&t));
  return t;
}

// MPI matches a send and a receive element by element in type-map order, and a subarray visits its elements in
// its array's storage order. So when the receiver stores the region in another order than the sender, the send
// type must visit the sender's region in the receiver's order: nested hvectors over the sender's strides, axis
// `traversal[0]` fastest, placed at the region's start (hindexed: 64-bit displacement). Otherwise a subarray.
MPI_Datatype send_type(const box& b, const order3& order, const box& region, const order3& traversal) {
  if (order == traversal) return subarray(b, order, region);
  const strided s = dense(b, order);
  MPI_Datatype t = MPI_C_DOUBLE_COMPLEX;
  for (int k = 0; k < 3; ++k) {
    const int a = traversal[k];
    MPI_Datatype outer = MPI_DATATYPE_NULL;
    BASELINE_MPI_CHECK(MPI_Type_create_hvector(as_int(region.extent(a), "a subarray extent"), 1,
                                               static_cast<MPI_Aint>(s.stride[a] * element_bytes), t, &outer));
    if (k > 0) BASELINE_MPI_CHECK(MPI_Type_free(&t));
    t = outer;
  }
  int one = 1;
  const MPI_Aint start = static_cast<MPI_Aint>(s.offset(region.lo[0], region.lo[1], region.lo[2]) * element_bytes);
  MPI_Datatype placed = MPI_DATATYPE_NULL;
  BASELINE_MPI_CHECK(MPI_Type_create_hindexed(1, &one, &start, t, &placed));
  BASELINE_MPI_CHECK(MPI_Type_free(&t));
  BASELINE_MPI_CHECK(MPI_Type_commit(&placed));
  return placed;
}

// ---- cases ----

struct case_spec {
  std::string name;
  decomposition from, to;
  order3 in_order = c_order, out_order = c_order;
};

case_spec spec_of(const std::string& name, std::int64_t n, int ranks) {
  if (name == "brick_to_x_pencil") return {name, bricks(n, ranks), pencils(n, ranks, 0)};
  if (name == "x_to_y_pencil") return {name, pencils(n, ranks, 0), pencils(n, ranks, 1)};
  if (name == "x_to_y_pencil_contiguous")
    return {name, pencils(n, ranks, 0), pencils(n, ranks, 1), c_order, order3{1, 2, 0}};
  if (name == "y_to_z_pencil") return {name, pencils(n, ranks, 1), pencils(n, ranks, 2)};
  return {name, pencils(n, ranks, 2), bricks(n, ranks)};
}

struct case_result {
  std::string name, from, to, from_grid, to_grid;
  order3 in_order{}, out_order{};
  double plan_seconds = 0, first_execute_seconds = 0;
  timing times[method_count];
  std::int64_t bytes_off_rank = 0, bytes_local = 0, messages = 0, bytes_sent_max_rank = 0;
  bool relabel_measured = false;
  std::int64_t relabeled_bytes_off_rank = 0, relabeled_messages = 0;
  double relabeled_seconds = 0;
  double ratio(method m) const { return times[m].median / times[m_redist].median; }
};

void progress(const std::string& line) {
  if (world_rank() == 0) std::cerr << line << std::endl;
}

// The same reshape planned with info redist_relabel = exact: which rank holds which output box is the plan's choice.
void measure_relabeling(const case_spec& spec, const bench_options& opt, const std::vector<complex>& in,
                        const box& in_box, case_result& r) {
  const int rank = world_rank(), ranks = world_size();
  MPI_Info info;
  BASELINE_MPI_CHECK(MPI_Info_create(&info));
  BASELINE_MPI_CHECK(MPI_Info_set(info, "redist_relabel", "exact"));
  if (!opt.strategy.empty()) BASELINE_MPI_CHECK(MPI_Info_set(info, "redist_strategy", opt.strategy.c_str()));
  if (!opt.stores.empty()) BASELINE_MPI_CHECK(MPI_Info_set(info, "redist_stores", opt.stores.c_str()));
  const box& passed = spec.to.boxes[static_cast<size_t>(rank)];
  redist_reshape_plan plan = nullptr;
  REDIST_CHECK(redist_reshape_plan_create(MPI_COMM_WORLD, 3, in_box.lo.data(), in_box.hi.data(), spec.in_order.data(),
                                          passed.lo.data(), passed.hi.data(), spec.out_order.data(), nullptr,
                                          MPI_C_DOUBLE_COMPLEX, info, &plan));
  BASELINE_MPI_CHECK(MPI_Info_free(&info));
  box held;
  REDIST_CHECK(redist_reshape_output_box(plan, held.lo.data(), held.hi.data(), nullptr));
  std::vector<box> held_by(static_cast<size_t>(ranks));
  BASELINE_MPI_CHECK(MPI_Allgather(&held, static_cast<int>(sizeof(box)), MPI_BYTE, held_by.data(),
                                   static_cast<int>(sizeof(box)), MPI_BYTE, MPI_COMM_WORLD));
  std::int64_t mine[2] = {0, 0}, totals[2] = {0, 0};
  for (int p = 0; p < ranks; ++p) {
    const std::int64_t count = p == rank ? 0 : intersect(in_box, held_by[static_cast<size_t>(p)]).count();
    mine[0] += count * element_bytes;
    mine[1] += count > 0;
  }
  BASELINE_MPI_CHECK(MPI_Reduce(mine, totals, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
  const strided held_view = dense(held, spec.out_order);
  std::vector<complex> out(static_cast<size_t>(held.count() + 1), sentinel);
  auto run = [&] { REDIST_CHECK(redist_reshape_plan_execute(plan, out.data(), in.data(), nullptr, nullptr)); };
  run();
  verify_or_abort(spec.name + " redist relabeled", opt.n, held, held_view, out.data());
  std::vector<double> seconds;
  for (int k = 0; k < opt.repetitions; ++k) {
    BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double start = MPI_Wtime();
    run();
    seconds.push_back(MPI_Wtime() - start);
  }
  REDIST_CHECK(redist_reshape_plan_free(&plan));
  r.relabel_measured = true;
  r.relabeled_bytes_off_rank = totals[0];
  r.relabeled_messages = totals[1];
  r.relabeled_seconds = summarize(MPI_COMM_WORLD, seconds).median;
}

case_result run_case(const case_spec& spec, const bench_options& opt) {
  const int rank = world_rank(), ranks = world_size();
  const std::int64_t n = opt.n;
  const box& in_box = spec.from.boxes[static_cast<size_t>(rank)];
  const box& out_box = spec.to.boxes[static_cast<size_t>(rank)];
  const strided in_view = dense(in_box, spec.in_order), out_view = dense(out_box, spec.out_order);

  case_result r;
  r.name = spec.name;
  r.from = spec.from.name;
  r.to = spec.to.name;
  r.from_grid = spec.from.grid;
  r.to_grid = spec.to.grid;
  r.in_order = spec.in_order;
  r.out_order = spec.out_order;

  // One element more than needed, so that no buffer is ever empty (a valid address for MPI with count 0).
  std::vector<complex> in(static_cast<size_t>(in_box.count() + 1)), out(static_cast<size_t>(out_box.count() + 1));
  fill_input(n, in_box, in_view, in.data());

  // Per peer: what I send it (my input box with its output box) and what it sends me.
  std::vector<box> send_region(static_cast<size_t>(ranks)), receive_region(static_cast<size_t>(ranks));
  for (int p = 0; p < ranks; ++p) {
    send_region[static_cast<size_t>(p)] = intersect(in_box, spec.to.boxes[static_cast<size_t>(p)]);
    receive_region[static_cast<size_t>(p)] = intersect(spec.from.boxes[static_cast<size_t>(p)], out_box);
  }

  // ---- statistics: bytes off rank, bytes kept, messages ----
  std::int64_t sent = 0, kept = 0, messages = 0;
  for (int p = 0; p < ranks; ++p) {
    const std::int64_t count = send_region[static_cast<size_t>(p)].count();
    if (p == rank) {
      kept += count * element_bytes;
    } else {
      sent += count * element_bytes;
      messages += count > 0;
    }
  }
  std::int64_t totals[3] = {}, mine[3] = {sent, kept, messages};
  BASELINE_MPI_CHECK(MPI_Reduce(mine, totals, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
  BASELINE_MPI_CHECK(MPI_Reduce(&sent, &r.bytes_sent_max_rank, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD));
  r.bytes_off_rank = totals[0];
  r.bytes_local = totals[1];
  r.messages = totals[2];
  const std::int64_t send_and_keep_bytes = sent + kept;

  // ---- a. redist: the plan, timed on its own ----
  MPI_Info info = MPI_INFO_NULL;
  if (!opt.strategy.empty() || !opt.stores.empty()) {
    BASELINE_MPI_CHECK(MPI_Info_create(&info));
    if (!opt.strategy.empty()) BASELINE_MPI_CHECK(MPI_Info_set(info, "redist_strategy", opt.strategy.c_str()));
    if (!opt.stores.empty()) BASELINE_MPI_CHECK(MPI_Info_set(info, "redist_stores", opt.stores.c_str()));
  }
  redist_reshape_plan plan = nullptr;
  r.plan_seconds = time_once(MPI_COMM_WORLD, [&] {
    REDIST_CHECK(redist_reshape_plan_create(MPI_COMM_WORLD, 3, in_box.lo.data(), in_box.hi.data(), spec.in_order.data(),
                                            out_box.lo.data(), out_box.hi.data(), spec.out_order.data(), nullptr,
                                            MPI_C_DOUBLE_COMPLEX, info, &plan));
  });
  if (info != MPI_INFO_NULL) BASELINE_MPI_CHECK(MPI_Info_free(&info));
  auto run_redist = [&] { REDIST_CHECK(redist_reshape_plan_execute(plan, out.data(), in.data(), nullptr, nullptr)); };
  // The same plan reading its input from a node buffer (one copy).
  redist_node_buffer in_node_buffer = REDIST_NODE_BUFFER_NULL;
  REDIST_CHECK(redist_node_buffer_create(MPI_COMM_WORLD, in_box.count() * element_bytes, &in_node_buffer));
  auto* const in_shared = static_cast<complex*>(redist_node_buffer_data(in_node_buffer));
  if (in_box.count() > 0) std::copy(in.begin(), in.begin() + in_box.count(), in_shared);
  const complex* const in_one_copy = in_box.count() > 0 ? in_shared : in.data();  // (an empty box: any address)
  auto run_redist_node_buffer = [&] {
    REDIST_CHECK(redist_reshape_plan_execute(plan, out.data(), in_one_copy, nullptr, nullptr));
  };

  // ---- b. MPI_Alltoallw with subarray types, created here, outside the timing ----
  std::vector<int> w_send_counts(static_cast<size_t>(ranks), 0), w_receive_counts(static_cast<size_t>(ranks), 0);
  std::vector<int> w_displacements(static_cast<size_t>(ranks), 0);  // bytes; the types hold the offsets
  std::vector<MPI_Datatype> w_send_types(static_cast<size_t>(ranks), MPI_C_DOUBLE_COMPLEX),
      w_receive_types(static_cast<size_t>(ranks), MPI_C_DOUBLE_COMPLEX);
  for (int p = 0; p < ranks; ++p) {
    const size_t q = static_cast<size_t>(p);
    if (!send_region[q].empty()) {
      w_send_types[q] = send_type(in_box, spec.in_order, send_region[q], spec.out_order);
      w_send_counts[q] = 1;
    }
    if (!receive_region[q].empty()) {
      w_receive_types[q] = subarray(out_box, spec.out_order, receive_region[q]);
      w_receive_counts[q] = 1;
    }
  }
  auto run_alltoallw = [&] {
    BASELINE_MPI_CHECK(MPI_Alltoallw(in.data(), w_send_counts.data(), w_displacements.data(), w_send_types.data(),
                                     out.data(), w_receive_counts.data(), w_displacements.data(),
                                     w_receive_types.data(), MPI_COMM_WORLD));
  };

  // ---- c. pack + MPI_Alltoallv + unpack; buffers allocated here, outside the timing ----
  std::vector<int> v_send_counts(static_cast<size_t>(ranks)), v_send_displacements(static_cast<size_t>(ranks)),
      v_receive_counts(static_cast<size_t>(ranks)), v_receive_displacements(static_cast<size_t>(ranks));
  std::int64_t send_total = 0, receive_total = 0;
  for (int p = 0; p < ranks; ++p) {
    const size_t q = static_cast<size_t>(p);
    v_send_counts[q] = as_int(send_region[q].count(), "a send count");
    v_send_displacements[q] = as_int(send_total, "a send displacement");
    send_total += send_region[q].count();
    v_receive_counts[q] = as_int(receive_region[q].count(), "a receive count");
    v_receive_displacements[q] = as_int(receive_total, "a receive displacement");
    receive_total += receive_region[q].count();
  }
  std::vector<complex> send_buffer(static_cast<size_t>(send_total + 1)),
      receive_buffer(static_cast<size_t>(receive_total + 1));
  // Every message is packed in the sender's storage order (the same on all ranks: in_order); unpacking reads it
  // in that order and writes the output array with its own strides.
  auto run_alltoallv = [&] {
    for (int p = 0; p < ranks; ++p) {
      const size_t q = static_cast<size_t>(p);
      copy_region(send_region[q], spec.in_order, in.data(), in_view, send_buffer.data() + v_send_displacements[q],
                  dense(send_region[q], spec.in_order));
    }
    BASELINE_MPI_CHECK(MPI_Alltoallv(send_buffer.data(), v_send_counts.data(), v_send_displacements.data(),
                                     MPI_C_DOUBLE_COMPLEX, receive_buffer.data(), v_receive_counts.data(),
                                     v_receive_displacements.data(), MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD));
    for (int p = 0; p < ranks; ++p) {
      const size_t q = static_cast<size_t>(p);
      copy_region(receive_region[q], spec.in_order, receive_buffer.data() + v_receive_displacements[q],
                  dense(receive_region[q], spec.in_order), out.data(), out_view);
    }
  };

  // ---- d. the memcpy floor: this rank's bytes sent and kept, input array -> send buffer ----
  auto run_memcpy = [&] {
    std::memcpy(static_cast<void*>(send_buffer.data()), in.data(), static_cast<size_t>(send_and_keep_bytes));
  };

  // ---- correctness, once per method (also its warm-up); the output reset to a sentinel before each ----
  auto reset_output = [&] { std::fill(out.begin(), out.end(), sentinel); };
  reset_output();
  r.first_execute_seconds = time_once(MPI_COMM_WORLD, run_redist);
  verify_or_abort(spec.name + " redist", n, out_box, out_view, out.data());
  reset_output();
  run_alltoallw();
  verify_or_abort(spec.name + " alltoallw", n, out_box, out_view, out.data());
  reset_output();
  run_alltoallv();
  verify_or_abort(spec.name + " alltoallv", n, out_box, out_view, out.data());
  run_memcpy();
  reset_output();
  run_redist_node_buffer();
  verify_or_abort(spec.name + " redist_node_buffer", n, out_box, out_view, out.data());

  // ---- timing, interleaved: repetition k starts at method k mod method_count ----
  std::vector<double> seconds[method_count];
  for (int k = 0; k < opt.repetitions; ++k) {
    for (int step = 0; step < method_count; ++step) {
      const int m = (k + step) % method_count;
      BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double start = MPI_Wtime();
      switch (m) {
        case m_redist:
          run_redist();
          break;
        case m_alltoallw:
          run_alltoallw();
          break;
        case m_alltoallv:
          run_alltoallv();
          break;
        case m_memcpy:
          run_memcpy();
          break;
        default:
          run_redist_node_buffer();
          break;
      }
      seconds[m].push_back(MPI_Wtime() - start);
    }
  }
  for (int m = 0; m < method_count; ++m) r.times[m] = summarize(MPI_COMM_WORLD, seconds[m]);

  // The timed repetitions must have left the last method's result intact too (alltoallv or redist wrote last).
  verify_or_abort(spec.name + " (after timing)", n, out_box, out_view, out.data());

  REDIST_CHECK(redist_reshape_plan_free(&plan));
  REDIST_CHECK(redist_node_buffer_free(&in_node_buffer));
  if (spec.name == "brick_to_x_pencil" || spec.name == "z_pencil_to_brick")
    measure_relabeling(spec, opt, in, in_box, r);
  for (int p = 0; p < ranks; ++p) {
    const size_t q = static_cast<size_t>(p);
    if (w_send_counts[q]) BASELINE_MPI_CHECK(MPI_Type_free(&w_send_types[q]));
    if (w_receive_counts[q]) BASELINE_MPI_CHECK(MPI_Type_free(&w_receive_types[q]));
  }

  char line[320];
  std::snprintf(line, sizeof line,
                "  %-26s redist %.4f s (plan %.4f s), alltoallw %.4f s (%.2fx), alltoallv %.4f s (%.2fx), "
                "memcpy %.4f s, input in a node buffer %.4f s (alltoallw %.2fx), verified",
                spec.name.c_str(), r.times[m_redist].median, r.plan_seconds, r.times[m_alltoallw].median,
                r.ratio(m_alltoallw), r.times[m_alltoallv].median, r.ratio(m_alltoallv), r.times[m_memcpy].median,
                r.times[m_redist_node_buffer].median,
                r.times[m_alltoallw].median / r.times[m_redist_node_buffer].median);
  progress(line);
  return r;
}

// ---- output ----

std::vector<std::int64_t> order_list(const order3& o) { return {o[0], o[1], o[2]}; }

const case_result* find_case(const std::vector<case_result>& results, const std::string& name) {
  for (const auto& c : results)
    if (c.name == name) return &c;
  return nullptr;
}

std::string results_json(const std::vector<case_result>& results, const bench_options& opt) {
  const std::int64_t n = opt.n;
  json_writer json;
  json.begin_object();
  json.field("benchmark", "reshape_bench");
  json.field("n", n);
  json.field("ranks", world_size());
  json.field("reps", opt.repetitions);
  json.field("element", "MPI_C_DOUBLE_COMPLEX (16 bytes)");
  json.field("array_bytes", n * n * n * element_bytes);
  json.field("redist_strategy", opt.strategy.empty() ? "(not set)" : opt.strategy.c_str());
  json.field("redist_stores", opt.stores.empty() ? "(not set)" : opt.stores.c_str());
  json.field("redist_relabel", "brick <-> pencil cases also planned with redist_relabel = exact (relabeled_*)");
  json.field("timing",
             "median of the repetitions; each method after MPI_Barrier, slowest rank; methods interleaved, the "
             "starting method rotating per repetition");
  json.field("hardware_threads", static_cast<int>(std::thread::hardware_concurrency()));
  json.field("oversubscribed", world_size() > static_cast<int>(std::thread::hardware_concurrency()));
  json.field("counts",
             "bytes_off_rank: bytes every rank sends to other ranks, summed (bytes_off_rank_max_rank: the largest "
             "rank's); bytes_local: bytes kept on their rank, summed; messages: non-empty intersections with other "
             "ranks' boxes, summed over ranks");
  json.field("brick_grid", bricks(n, world_size()).dims);
  json.field("pencil_grid", pencils(n, world_size(), 0).dims + " (over the pencil's other two axes, increasing)");
  json.key("cases").begin_array();
  for (const auto& c : results) {
    json.begin_object();
    json.field("case", c.name);
    json.field("from", c.from);
    json.field("to", c.to);
    json.field("from_grid", c.from_grid);
    json.field("to_grid", c.to_grid);
    json.array_field("in_order", order_list(c.in_order));
    json.array_field("out_order", order_list(c.out_order));
    json.field("redist_plan_seconds", c.plan_seconds);
    json.field("redist_first_execute_seconds", c.first_execute_seconds);
    for (int m = 0; m < method_count; ++m) {
      json.field(std::string(method_names[m]) + "_seconds", c.times[m].median);
      json.field(std::string(method_names[m]) + "_best_seconds", c.times[m].best);
    }
    json.field("alltoallw_over_redist", c.ratio(m_alltoallw));
    json.field("alltoallv_over_redist", c.ratio(m_alltoallv));
    json.field("memcpy_over_redist", c.ratio(m_memcpy));
    json.field("alltoallw_over_redist_node_buffer", c.times[m_alltoallw].median / c.times[m_redist_node_buffer].median);
    json.field("alltoallv_over_redist_node_buffer", c.times[m_alltoallv].median / c.times[m_redist_node_buffer].median);
    json.field("bytes_off_rank", c.bytes_off_rank);
    json.field("bytes_off_rank_max_rank", c.bytes_sent_max_rank);
    if (c.relabel_measured) {
      json.field("relabeled_bytes_off_rank", c.relabeled_bytes_off_rank);
      json.field("relabeled_messages", c.relabeled_messages);
      json.field("relabeled_redist_seconds", c.relabeled_seconds);
    }
    json.field("bytes_local", c.bytes_local);
    json.field("messages", c.messages);
    json.key("seconds_per_rep").begin_object();
    for (int m = 0; m < method_count; ++m) json.array_field(method_names[m], c.times[m].seconds);
    json.end_object();
    json.field("verified", true);
    json.end_object();
  }
  json.end_array();
  const case_result* plain = find_case(results, "x_to_y_pencil");
  const case_result* contiguous = find_case(results, "x_to_y_pencil_contiguous");
  if (plain && contiguous) {
    json.key("storage_order_cost").begin_object();
    json.field("what", "x_to_y_pencil_contiguous / x_to_y_pencil, median times");
    for (int m = 0; m < method_count; ++m)
      if (m != m_memcpy) json.field(method_names[m], contiguous->times[m].median / plain->times[m].median);
    json.end_object();
  }
  json.field("verified", true);
  json.end_object();
  return json.text() + "\n";
}

std::string results_table(const std::vector<case_result>& results) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %10s %10s %11s %11s %9s %9s %10s %12s %8s\n", "case", "plan_s", "redist_s",
                "alltoallw_s", "alltoallv_s", "w/redist", "v/redist", "memcpy_s", "off_rank_MB", "messages");
  out << line;
  for (const auto& c : results) {
    std::snprintf(line, sizeof line, "%-26s %10.4f %10.4f %11.4f %11.4f %8.2fx %8.2fx %10.4f %12.1f %8lld\n",
                  c.name.c_str(), c.plan_seconds, c.times[m_redist].median, c.times[m_alltoallw].median,
                  c.times[m_alltoallv].median, c.ratio(m_alltoallw), c.ratio(m_alltoallv), c.times[m_memcpy].median,
                  static_cast<double>(c.bytes_off_rank) / 1e6, static_cast<long long>(c.messages));
    out << line;
  }
  return out.str();
}

std::string summary_line(const std::vector<case_result>& results, const bench_options& opt) {
  std::ostringstream out;
  out << "SUMMARY reshape_bench N=" << opt.n << " ranks=" << world_size() << " (alltoallw/redist, alltoallv/redist):";
  char item[160];
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& c = results[k];
    std::snprintf(item, sizeof item, "%s %s %.2fx %.2fx", k ? "," : "", c.name.c_str(), c.ratio(m_alltoallw),
                  c.ratio(m_alltoallv));
    out << item;
  }
  const case_result* plain = find_case(results, "x_to_y_pencil");
  const case_result* contiguous = find_case(results, "x_to_y_pencil_contiguous");
  if (plain && contiguous) {
    std::snprintf(item, sizeof item,
                  "; storage order cost (contiguous/plain) redist %.2fx alltoallw %.2fx alltoallv %.2fx",
                  contiguous->times[m_redist].median / plain->times[m_redist].median,
                  contiguous->times[m_alltoallw].median / plain->times[m_alltoallw].median,
                  contiguous->times[m_alltoallv].median / plain->times[m_alltoallv].median);
    out << item;
  }
  out << "; input in a node buffer (alltoallw/redist):";
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& c = results[k];
    std::snprintf(item, sizeof item, "%s %s %.2fx", k ? "," : "", c.name.c_str(),
                  c.times[m_alltoallw].median / c.times[m_redist_node_buffer].median);
    out << item;
  }
  out << "; verified yes";
  return out.str();
}

int run(int argc, char** argv) {
  const bench_options opt = parse_options(argc, argv);
  progress("reshape_bench: N=" + std::to_string(opt.n) + ", " + std::to_string(world_size()) + " ranks, median of " +
           std::to_string(opt.repetitions) + ", bricks on " + bricks(opt.n, world_size()).dims + ", pencils on " +
           pencils(opt.n, world_size(), 0).dims);
  std::vector<case_result> results;
  for (const auto& name : opt.cases) results.push_back(run_case(spec_of(name, opt.n, world_size()), opt));
  if (world_rank() == 0) {
    const std::string json = results_json(results, opt);
    if (opt.json_path.empty()) {
      std::cout << json;
    } else {
      std::ofstream file(opt.json_path);
      file << json;
      if (!file) throw std::runtime_error("cannot write " + opt.json_path);
      std::cout << results_table(results);
    }
    std::cout << summary_line(results, opt) << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Init failed\n");
    return 2;
  }
  int status = 2;
  try {
    status = run(argc, argv);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
    status = 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reshape_bench (rank %d): %s\n", world_rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (MPI_Finalize() != MPI_SUCCESS) return 2;
  return status;
}
