// SPDX-License-Identifier: BSD-3-Clause
// The distributed multiply's plan and API: make_gemm_plan assembles the plan from named steps (agreement on
// the problem and its schedule, the grid placement, native layouts, transforms, grid lines, rounds, storage),
// execute runs the transforms in, the round loop and the transform out. Native layouts in native_layout.cpp,
// BLAS in local_blas.cpp, the round loop in rounds.cpp; see include/redist/gemm/gemm.hpp and partition.hpp.
#include "redist/gemm/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "field_hash.hpp"
#include "machine/byte_count.hpp"
#include "machine/host.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"
#include "native_layout.hpp"
#include "plan_impl.hpp"
#include "redist/error.hpp"
#include "redist/names.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"
#include "relabel/gathered.hpp"
#include "timer.hpp"
#include "trace/recorder.hpp"

namespace redist {

std::int64_t gemm_memory_limit_bytes(const gemm_options& options) {
  if (options.memory_limit_bytes < 0)
    throw invalid_argument("gemm_options::memory_limit_bytes is " + std::to_string(options.memory_limit_bytes) +
                           "; expected 0 (no limit or REDIST_GEMM_MEMORY) or a positive number of bytes");
  if (options.memory_limit_bytes > 0) return options.memory_limit_bytes;
  const char* text = std::getenv("REDIST_GEMM_MEMORY");
  if (text == nullptr || *text == '\0') return 0;
  const std::string value(text);
  const std::int64_t bytes = machine::parse_byte_count(value);
  if (bytes <= 0)
    throw invalid_argument("REDIST_GEMM_MEMORY is '" + value +
                           "'; expected a positive number of bytes with an optional K, M or G suffix (e.g. 512M)");
  return bytes;
}

gemm_plan::gemm_plan() = default;
gemm_plan::~gemm_plan() = default;
gemm_plan::gemm_plan(gemm_plan&&) noexcept = default;
gemm_plan& gemm_plan::operator=(gemm_plan&&) noexcept = default;
gemm_plan::gemm_plan(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

const gemm_description& gemm_plan::description() const {
  if (!impl_) throw invalid_argument("description of an empty gemm_plan (build it with make_gemm_plan)");
  return impl_->description;
}
gemm_statistics gemm_plan::statistics() const {
  if (!impl_) return {};
  gemm_statistics s = impl_->stats;
  s.last_execution = impl_->last_execution;
  return s;
}
MPI_Comm gemm_plan::communicator() const { return impl_ ? impl_->comm.get() : MPI_COMM_NULL; }

std::string gemm_plan::type_problem(element_type t) const {
  if (!impl_ || impl_->description.type == t) return {};
  return std::string("gemm plan was built for ") + to_string(impl_->description.type) +
         " elements but execute was called with " + to_string(t);
}

namespace {
// mpi::wait_label::describe_fn for a gemm_description, said by the watchdog where a wait lasts long:
// "double C 24x24 matrix in ... = identity of A ... times transpose of B ...".
void describe_product(const void* description, char* out, std::size_t size) noexcept {
  try {
    const auto& d = *static_cast<const gemm_description*>(description);
    const std::string text = std::string(to_string(d.type)) + " C " + d.c.describe() + " = " + to_string(d.op_a) +
                             " of A " + d.a.describe() + " times " + to_string(d.op_b) + " of B " + d.b.describe();
    if (size > 0) std::snprintf(out, size, "%s", text.c_str());
  } catch (const std::exception&) {
    if (size > 0) std::snprintf(out, size, "(out of memory)");
  }
}
}  // namespace

void gemm_plan::execute(void* c, const void* a, const void* b, scalar alpha, scalar beta) const {
  execute_agreed(c, a, b, alpha, beta, {});
}

void gemm_plan::start(void* c, const void* a, const void* b, scalar alpha, scalar beta) const {
  run(c, a, b, alpha, beta, {}, true);
}

bool gemm_plan::in_progress() const { return impl_ && impl_->in_progress; }

void gemm_plan::wait() const {
  if (!impl_) throw invalid_argument("wait on an empty gemm_plan (build it with make_gemm_plan)");
  impl& p = *impl_;
  if (!p.in_progress) throw invalid_argument("wait() without a start() in progress on this gemm_plan");
  mpi::wait_label label("gemm_plan", "wait", p.options.timeout_seconds);
  label.describe(describe_product, &p.description);
  const seconds_since waited;
  p.in_progress = false;
  if (p.has_out) p.out_of_native.wait();
  p.comm.returnable();
  p.last_execution.transform_out += waited.elapsed();
  p.last_execution.total += waited.elapsed();
}

void gemm_plan::run(void* c, const void* a, const void* b, scalar alpha, scalar beta, const std::string& problem,
                    bool split) const {
  if (!impl_) throw invalid_argument("execute on an empty gemm_plan (build it with make_gemm_plan)");
  impl& p = *impl_;
  const seconds_since started;
  mpi::wait_label label("gemm_plan", split ? "start" : "execution", p.options.timeout_seconds);
  label.describe(describe_product, &p.description);
  trace_detail::plan_event traced;
  // Agreed with the buffers' checks, before the transforms in write anything (a start() in progress still holds
  // the transform out and C).
  std::string problems =
      p.in_progress ? std::string("a start() of this gemm_plan is still in progress (call wait() first)") : problem;
  const bool real = p.description.type == element_type::f32 || p.description.type == element_type::f64;
  if (problems.empty() && real && (alpha.imag() != 0.0 || beta.imag() != 0.0))
    problems = "gemm: real elements need real alpha and beta";
  // Written in place (some of it, somewhere), C is checked here, as the transform out of the native layout would
  // have.
  if (problems.empty() && p.c_partly_in_place && c == nullptr && p.description.c.local_elements() > 0)
    problems = "gemm: C's buffer is null on a rank that holds " + std::to_string(p.description.c.local_elements()) +
               " elements of C";
  // The first transform's agreement carries this rank's problems: with k = 0 there is none into the native
  // layouts (and C is never written in place), and the one out of them decides before C is written. Where the
  // multiply writes some of C in place, the first one decides for the transform out too (it acquires its
  // buffers, and the transform out makes no agreement of its own).
  // Until this execution completes on this rank its communicator may carry messages: it serves no other plan.
  p.comm.discard();
  // Without a transform in (k = 0) and with C written in place, wholly or partly (the transform out then makes no
  // agreement of its own), no transform carries the problems: they are agreed here.
  if (!p.has_into && (!p.has_out || p.c_partly_in_place)) {
    mpi::agree_on(p.comm.get(), mpi::error_kind::invalid_argument, problems);
    problems.clear();
  }
  if (p.has_into)
    p.into_native.execute_agreed({job_buffers{p.a_store.data(), a, scalar(1.0), scalar(0.0)},
                                  job_buffers{p.b_store.data(), b, scalar(1.0), scalar(0.0)}},
                                 problems, p.c_partly_in_place && p.has_out ? &p.out_of_native : nullptr);
  const double into_done = started.elapsed();
  p.multiply(c, alpha, beta);
  const double multiply_done = started.elapsed();
  if (p.has_out) {
    const std::vector<job_buffers> out(p.out_jobs, job_buffers{c, p.c_store.data(), scalar(1.0), beta});
    if (split)
      p.out_of_native.start_agreed(out, p.has_into ? std::string() : problems);
    else
      p.out_of_native.execute_agreed(out, p.has_into ? std::string() : problems);
  }
  if (split)
    p.in_progress = true;  // the communicator stays this plan's until wait()
  else
    p.comm.returnable();
  p.last_execution.transform_in = into_done;
  p.last_execution.transform_out = started.elapsed() - multiply_done;
  p.last_execution.total = started.elapsed();
  if (traced.active()) {
    const gemm_statistics& s = p.stats;
    traced.executed("gemm_plan", to_string(s.communication),
                    s.multiply.bytes_sent + s.transform_in.bytes_sent + s.transform_out.bytes_sent,
                    s.multiply.messages_sent + s.transform_in.messages_sent + s.transform_out.messages_sent);
  }
}

namespace {

using gemm_detail::cuts;
using gemm_detail::native_parts;
using gemm_detail::part_orders;

// Arguments no schedule can serve: element types BLAS has no ?gemm_ for, ops and options outside their enums
// or ranges.
void check_arguments(const gemm_description& d, const gemm_options& options) {
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
}

// m, n and k from C and op(A), checked against op(B); the element's size and MPI type.
void take_sizes(gemm_plan::impl& p, const gemm_description& d) {
  const bool ta = d.op_a != op::identity, tb = d.op_b != op::identity;
  p.m = d.c.rows();
  p.n = d.c.cols();
  p.k = ta ? d.a.rows() : d.a.cols();
  const std::int64_t a_rows = ta ? d.a.cols() : d.a.rows();
  const std::int64_t b_rows = tb ? d.b.cols() : d.b.rows(), b_cols = tb ? d.b.rows() : d.b.cols();
  if (a_rows != p.m || b_rows != p.k || b_cols != p.n)
    throw dimension_mismatch("make_gemm_plan: C is " + std::to_string(p.m) + "x" + std::to_string(p.n) + ", op(A) = " +
                             to_string(d.op_a) + "(A) is " + std::to_string(a_rows) + "x" + std::to_string(p.k) +
                             " and op(B) = " + to_string(d.op_b) + "(B) is " + std::to_string(b_rows) + "x" +
                             std::to_string(b_cols) + "; expected op(A) m x k and op(B) k x n for C m x n");
  p.element_bytes = element_size(d.type);
  p.mpi_type = mpi_datatype(d.type);
}

// BLAS takes 32-bit sizes: the largest local multiply's rows, columns and depth (its leading dimensions too)
// must fit. Parts are balanced, so the first of each is the largest.
void check_blas_sizes(const gemm_schedule& s) {
  const cuts parts{s};
  const std::int64_t largest = std::max({parts.m_sub(0, 0).size, parts.n_sub(0, 0).size, parts.k_round(0, 0).size});
  if (largest > std::numeric_limits<int>::max())
    throw overflow_error("make_gemm_plan: the schedule's local multiplies are " +
                         std::to_string(parts.m_sub(0, 0).size) + " x " + std::to_string(parts.n_sub(0, 0).size) +
                         " x " + std::to_string(parts.k_round(0, 0).size) + "; BLAS takes sizes up to " +
                         std::to_string(std::numeric_limits<int>::max()) +
                         " (more ranks, more rounds or a memory limit cut them smaller)");
}

// The COSMA schedule of m x n x k on every rank of comm within the memory limit (bytes, 0: none).
gemm_schedule choose_schedule(const gemm_plan::impl& p, int ranks, const gemm_options& options,
                              std::int64_t limit_bytes) {
  gemm_schedule_options so;
  so.memory_limit_elements = limit_bytes / static_cast<std::int64_t>(p.element_bytes);
  if (limit_bytes > 0 && so.memory_limit_elements == 0) so.memory_limit_elements = 1;
  so.max_idle_fraction = options.max_idle_fraction;
  so.rounds = options.rounds;
  so.double_buffering = options.overlap;
  try {
    return plan_gemm_schedule(p.m, p.n, p.k, ranks, so);
  } catch (const insufficient_memory& e) {
    throw insufficient_memory(std::string(e.what()) + " (elements of " + std::to_string(p.element_bytes) +
                              " bytes; memory limit " + std::to_string(limit_bytes) + " bytes)");
  }
}

// Everything that shapes the plan, so that ranks describing different multiplies fail instead of hanging.
std::uint64_t problem_hash(const gemm_plan::impl& p, const gemm_description& d, const gemm_options& options,
                           std::int64_t limit_bytes) {
  return field_hash()
      .add_all(p.m, p.n, p.k, d.op_a, d.op_b, d.type, limit_bytes, options.rounds, options.communication,
               options.overlap, options.relabel, options.native_order, options.max_idle_fraction)
      .value();
}

// Step 1. Validation and the schedule: every rank computes the same from the same global arguments, and an
// error on any rank throws on all of them before anything moves. The plan's communicator is made first, so
// that a failure to make it is agreed on too (over the caller's).
void agree_on_problem(MPI_Comm comm, gemm_plan::impl& p, const gemm_description& d, const gemm_options& options) {
  mpi::agreement agreed(comm);
  agreed.collective([&] { p.comm = mpi::plan_duplicate(comm); });  // a dropped plan's, where one was given back
  std::uint64_t hash = 0;
  agreed.attempt([&] {
    check_arguments(d, options);
    take_sizes(p, d);
    const std::int64_t limit_bytes = gemm_memory_limit_bytes(options);
    p.stats.schedule = choose_schedule(p, mpi::size(comm), options, limit_bytes);
    check_blas_sizes(p.stats.schedule);
    hash = problem_hash(p, d, options, limit_bytes);
  });
  agreed.require_same(hash,
                      "ranks passed different multiplies to make_gemm_plan (layouts' sizes, ops, element type or "
                      "options, REDIST_GEMM_MEMORY included); every rank must describe the same problem");
  agreed.conclude();
}

struct grid_placement {
  gemm_detail::dimension_orders orders;
  std::vector<int> rank_of_label;
};

// Step 2. Which rank plays which grid label: relabeling over the volumes of A, B (into the native layouts)
// and C (out), so that as much data as the grid allows stays where it is. The dimensions' orders come from
// the user's layouts, validated here under the same agreement.
bool discovers_nodes(const gemm_plan::impl& p);

grid_placement place_on_grid(gemm_plan::impl& p, MPI_Comm caller, const native_parts& parts) {
  const MPI_Comm dup = p.comm.get();
  const int nranks = mpi::size(dup);
  grid_placement placed;
  placed.rank_of_label.resize(static_cast<size_t>(nranks));
  for (int x = 0; x < nranks; ++x) placed.rank_of_label[static_cast<size_t>(x)] = x;
  const gemm_description& u = p.description;
  mpi::agreement relabel_agreed(dup);
  // Every rank computes the packages its own label receives; rank 0 solves (relabel_targets' way).
  relabel::label_graph mine;
  relabel_agreed.attempt([&] {
    u.a.validate_global(nranks);
    u.b.validate_global(nranks);
    u.c.validate_global(nranks);
    placed.orders = gemm_detail::choose_orders(u, p.m, p.n, p.k, p.options.native_order);
    // Over labels (the identity placement), for the volumes only.
    const gemm_detail::native_layouts labels =
        gemm_detail::make_native_layouts(parts, placed.orders, placed.rank_of_label, -1, {});
    std::vector<relabel::layout_pair> pairs;
    const std::size_t eb = p.element_bytes;
    if (p.k > 0) {
      pairs.push_back({&labels.a, &u.a, u.op_a, eb});
      pairs.push_back({&labels.b, &u.b, u.op_b, eb});
    }
    pairs.push_back({&labels.c, &u.c, op::identity, eb});  // C travels the other way: same volume
    mine = relabel::incoming_packages(pairs, nranks, mpi::rank(dup), mpi::rank(dup) + 1);
  });
  const std::size_t largest_share = relabel_agreed.reduce_max(mine.package_count());
  // The ranks' nodes, for choose_communication (cached on the caller's communicator): a collective step of this
  // agreement, forgotten by every rank when it fails.
  if (discovers_nodes(p)) {
    relabel_agreed.collective([&] { machine::node_leaders(caller); });
    relabel_agreed.on_failure([caller] { machine::forget_node_leaders(caller); });
  }
  relabel_agreed.conclude();
  // Without relabeling, the solve (none) still gives the volume figures.
  const relabel::relabeling found =
      relabel::find_relabeling_gathered(dup, mine, relabel_agreed.max(largest_share), {},
                                        p.options.relabel ? relabel::solver::exact : relabel::solver::none);
  if (p.options.relabel) placed.rank_of_label = found.new_rank_of;
  const auto eb = static_cast<std::int64_t>(p.element_bytes);
  p.stats.relabel_volume_before = found.remote_volume_before / eb;
  p.stats.relabel_volume_after = (p.options.relabel ? found.remote_volume_after : found.remote_volume_before) / eb;
  return placed;
}

// Step 3. This rank's grid position, from the label it plays; labels beyond ranks_used idle in the multiply.
void take_position(gemm_plan::impl& p, const cuts& cut, const std::vector<int>& rank_of_label) {
  const int me = mpi::rank(p.comm.get());
  int my_label = -1;
  for (size_t x = 0; x < rank_of_label.size(); ++x)
    if (rank_of_label[x] == me) my_label = static_cast<int>(x);
  p.idle = my_label >= cut.s.ranks_used;
  p.stats.idle = p.idle;
  if (p.idle) return;
  p.me = cut.coordinates(my_label);
  p.stats.position_m = p.me.i;
  p.stats.position_n = p.me.j;
  p.stats.position_k = p.me.l;
}

// Step 3b. How the panels travel. automatic (and shared_memory, which insists) reads them in place where every
// grid row and column lies on one node: decided alike on every rank from the ranks' nodes (cached on the
// caller's communicator) and the placement.
// Whether the plan asks where its ranks are: automatic and shared_memory panels with a grid line of two ranks.
bool discovers_nodes(const gemm_plan::impl& p) {
  const gemm_communication asked = p.options.communication;
  const gemm_schedule& s = p.stats.schedule;
  return (asked == gemm_communication::automatic || asked == gemm_communication::shared_memory) &&
         (s.grid_m > 1 || s.grid_n > 1);
}

void choose_communication(gemm_plan::impl& p, MPI_Comm caller, const cuts& cut, const std::vector<int>& rank_of_label) {
  const gemm_communication asked = p.options.communication;
  const gemm_schedule& s = cut.s;
  p.stats.communication = asked;
  p.stats.communication_reason = std::string("requested (gemm_options::communication ") + to_string(asked) + ")";
  if (asked == gemm_communication::automatic) {
    p.stats.communication = gemm_communication::two_sided;
    p.stats.communication_reason = "no grid line of two ranks: no panel travels (two_sided, nothing to send)";
  }
  if (!discovers_nodes(p)) return;  // (no grid line with two ranks: nothing travels either way)
  // The library's one node discovery (cached on the caller's communicator, as relabeling's and the neighbor
  // exchange's), made in place_on_grid's agreement: read from the cache here.
  const std::vector<int> leader = machine::node_leaders(caller);
  const auto node_of = [&](int i, int j, int l) {
    return leader[static_cast<std::size_t>(rank_of_label[static_cast<std::size_t>(cut.label(i, j, l))])];
  };
  bool one_node = true;
  for (int l = 0; l < s.grid_k; ++l) {
    for (int i = 0; i < s.grid_m && s.grid_n > 1; ++i)
      for (int j = 1; j < s.grid_n; ++j) one_node = one_node && node_of(i, j, l) == node_of(i, 0, l);
    for (int j = 0; j < s.grid_n && s.grid_m > 1; ++j)
      for (int i = 1; i < s.grid_m; ++i) one_node = one_node && node_of(i, j, l) == node_of(0, j, l);
  }
  if (one_node) {
    p.stats.communication = gemm_communication::shared_memory;
    if (asked == gemm_communication::automatic)
      p.stats.communication_reason =
          "every grid row and column lies on one node: BLAS reads the panels in place (shared_memory)";
  } else if (asked == gemm_communication::automatic) {
    p.stats.communication_reason = "a grid row or column spans nodes: panels travel two_sided";
  } else if (asked == gemm_communication::shared_memory) {
    throw invalid_argument("gemm_communication::shared_memory: the schedule's grid " + std::to_string(s.grid_m) + "x" +
                           std::to_string(s.grid_n) + "x" + std::to_string(s.grid_k) +
                           " has a grid row or column whose ranks are on different nodes; expected every line on "
                           "one node (automatic takes two_sided there)");
  }
}

// Step 4. The native layouts as placed, this rank's blocks in the order the round loop reads them.
void build_native_layouts(gemm_plan::impl& p, const native_parts& parts, const grid_placement& placed,
                          const part_orders& mine) {
  gemm_detail::native_layouts native =
      gemm_detail::make_native_layouts(parts, placed.orders, placed.rank_of_label, mpi::rank(p.comm.get()), mine);
  p.a_native = std::move(native.a);
  p.b_native = std::move(native.b);
  p.c_native = std::move(native.c);
}

// Step 5. The transforms into and out of the native layouts (collective; they validate the user's layouts
// and agree on errors themselves). Made from the caller's communicator, whose ranks the plan's duplicate
// shares: the node communicator and shared window they stream through are cached there, for every later plan on
// it (the gemm plans of a ScaLAPACK context, its p?gemr2d and p?tran plans) instead of made anew per plan.
void make_transforms(gemm_plan::impl& p, MPI_Comm caller, const native_parts& parts, const grid_placement& placed,
                     const part_orders& mine) {
  const MPI_Comm dup = p.comm.get();
  const gemm_description& d = p.description;
  const bool moves_inputs = p.k > 0;
  if (moves_inputs) {
    p.into_native = make_transform_plan(
        caller, {job_description{p.a_native, d.a, d.op_a, d.type}, job_description{p.b_native, d.b, d.op_b, d.type}},
        p.options.transform);
    p.has_into = true;
    p.stats.transform_in = p.into_native.statistics();
  }
  // Where the user's C holds parts of the native C on the same rank at consecutive local rows and columns (the
  // grid matches C's process grid, as for ScaLAPACK operands on a fitting grid: all of them when the sizes divide
  // evenly, all but edges of up to a block when not), the multiply writes them in place: the transform out moves
  // only the rest, and the native storage of the rest only is touched. Each part's span is the intersection of
  // those its ranks find (agreed), so that every rank knows which rows and columns are written in place. C's
  // local storage is checked here, as the transform out would have.
  gemm_detail::span_runs rows_in_place, cols_in_place;
  if (moves_inputs && p.stats.schedule.grid_k == 1) {
    mpi::agreement c_checked(dup);
    const std::vector<std::pair<gemm_detail::range, int>>&row_parts = parts.c.rows, &col_parts = parts.c.cols;
    std::vector<std::size_t> my_rows, my_cols;
    for (const auto& [row_part, col_part] : mine.c) {
      my_rows.push_back(row_part);
      my_cols.push_back(col_part);
    }
    std::vector<gemm_detail::held_span> row_spans(row_parts.size()), col_spans(col_parts.size());
    c_checked.attempt([&] {
      d.c.validate_local();
      row_spans = gemm_detail::held_spans(row_parts, placed.orders.m, d.c, true, my_rows);
      col_spans = gemm_detail::held_spans(col_parts, placed.orders.n, d.c, false, my_cols);
      // A leading dimension of a multiple of 4 KiB puts every column of C in the same cache sets: BLAS writing
      // C there ran 10 % slower (2000^2 x 1000 doubles at 2048 against 2000 or 2056, OpenBLAS, one core), more
      // than the copy out of the native storage costs. Such a rank keeps in place only the row parts whose
      // native storage (a part's height is its leading dimension) would alias as well.
      const auto aliases = [&](std::int64_t ld) { return ld * static_cast<std::int64_t>(p.element_bytes) % 4096 == 0; };
      if (aliases(d.c.local_ld()))
        for (const std::size_t x : my_rows)
          if (!aliases(row_parts[x].first.size)) row_spans[x] = {};
      // A row part held here only in part (its edge rows are on another process row) would have its edge
      // rows multiplied by BLAS calls of their own, each packing the B panel again for a few rows: per
      // execution that repacks k x n of B where the copy out moves the part's rows x n of C. So from k at
      // least the part's rows on, the part goes through the native storage (4000^3 on 2 x 2: the edges of 48
      // rows took 3.3x their share of the flops, and the multiply was 4.5 % faster without them).
      for (const std::size_t x : my_rows)
        if (row_spans[x].size < row_parts[x].first.size && p.k >= row_parts[x].first.size) row_spans[x] = {};
    });
    // Per part: the latest begin and the earliest end over the ranks that hold it (the others give way).
    const auto ride = [&](std::vector<gemm_detail::held_span>& spans, const std::vector<std::size_t>& held,
                          const std::vector<std::pair<gemm_detail::range, int>>& of) {
      std::vector<char> holds(spans.size(), 0);
      for (const std::size_t x : held) holds[x] = 1;
      std::vector<std::pair<std::size_t, std::size_t>> slots;
      for (std::size_t x = 0; x < spans.size(); ++x)
        slots.push_back({c_checked.reduce_max(holds[x] ? spans[x].begin : 0),
                         c_checked.reduce_min(holds[x] ? spans[x].begin + spans[x].size
                                                       : std::numeric_limits<std::int64_t>::max())});
      return [&spans, holds, slots, &c_checked, &of] {
        for (std::size_t x = 0; x < spans.size(); ++x) {
          const std::int64_t begin = c_checked.max(slots[x].first);
          const std::int64_t end = std::min(c_checked.min(slots[x].second), of[x].first.size);
          gemm_detail::held_span& s = spans[x];
          const std::int64_t local = holds[x] ? s.local + (begin - s.begin) : 0;
          s = end > begin ? gemm_detail::held_span{begin, end - begin, local} : gemm_detail::held_span{};
        }
      };
    };
    const auto agree_rows = ride(row_spans, my_rows, row_parts), agree_cols = ride(col_spans, my_cols, col_parts);
    // C's description agreed here, where the transform out's plan no longer checks it (or is not made).
    if (p.options.transform.check_consistency)
      c_checked.require_same(d.c.global_hash(),
                             "ranks passed different global descriptions of C (splits or owners) "
                             "to make_gemm_plan; every rank must describe the same C");
    c_checked.conclude();
    agree_rows();
    agree_cols();
    rows_in_place = gemm_detail::runs_of_spans(row_parts, placed.orders.m, row_spans, p.m);
    cols_in_place = gemm_detail::runs_of_spans(col_parts, placed.orders.n, col_spans, p.n);
    p.c_partly_in_place = !rows_in_place.inside.empty() && !cols_in_place.inside.empty();
    p.c_in_place = p.c_partly_in_place && rows_in_place.outside.empty() && cols_in_place.outside.empty();
    if (p.c_partly_in_place) {
      p.c_row_spans = std::move(row_spans);
      p.c_col_spans = std::move(col_spans);
      p.c_user_ld = d.c.local_ld();
    }
  }
  p.stats.c_in_place = p.c_in_place;
  if (p.c_in_place) return;
  if (!p.c_partly_in_place) {
    p.out_of_native = make_transform_plan(caller, d.c, p.c_native, op::identity, d.type, p.options.transform);
    p.out_jobs = 1;
  } else {
    // The rows outside the spans, then the columns outside them on the rows inside: a job each.
    std::vector<job_description> jobs;
    const auto add = [&](const std::vector<gemm_detail::range>& rows, const std::vector<gemm_detail::range>& cols) {
      if (rows.empty() || cols.empty()) return;
      jobs.push_back({gemm_detail::restricted(d.c, rows, cols), gemm_detail::restricted(p.c_native, rows, cols),
                      op::identity, d.type});
    };
    add(rows_in_place.outside, {{0, p.n}});
    add(rows_in_place.inside, cols_in_place.outside);
    transform_options options = p.options.transform;
    options.check_consistency = false;  // its layouts derive from agreed ones; the transform in's agreement decides
    p.out_jobs = jobs.size();
    p.out_of_native = make_transform_plan(caller, std::move(jobs), options);
  }
  p.has_out = true;
  p.stats.transform_out = p.out_of_native.statistics();
}

// Step 6, made in step 9's agreement. The grid lines the panels travel along and C is summed over (idle ranks
// take part in the splits only). A line along a dimension of extent 1 holds one rank and carries nothing: it is
// not split (the schedule is agreed, so every rank skips the same splits; each is a collective over the plan's
// communicator). The lines
// are cached on the caller's communicator by the grid and the rank playing each of its positions, agreed and so
// the same on every rank: every rank finds them there or every rank splits. A later plan that places the same
// grid alike (the drop-in's next multiply of another size on the same grid, say) then makes no communicator
// (three splits: 0.02-0.03 s of a 0.04 s repeated plan on 4 ranks sharing 2 cores). The four most recent
// placements are kept.
struct recent_grid_lines {
  std::vector<std::pair<std::vector<int>, std::shared_ptr<const gemm_detail::grid_lines>>> placements;  // oldest first
};
constexpr std::size_t grid_lines_kept = 4;

void split_grid_lines(gemm_plan::impl& p, MPI_Comm caller, const std::vector<int>& rank_of_label,
                      mpi::agreement& agreed) {
  static const mpi::comm_attribute<recent_grid_lines> cache;
  const gemm_schedule& s = p.stats.schedule;
  std::vector<int> placement{s.grid_m, s.grid_n, s.grid_k, s.ranks_used};
  placement.insert(placement.end(), rank_of_label.begin(), rank_of_label.end());
  recent_grid_lines& recent = cache.get(caller, [] { return recent_grid_lines{}; });
  for (const auto& [placed, lines] : recent.placements)
    if (placed == placement) {
      p.lines = lines;
      p.stats.grid_lines_reused = true;
      return;
    }
  const gemm_detail::grid_coordinates at = p.me;
  const gemm_detail::cuts cut{s};
  auto made = std::make_shared<gemm_detail::grid_lines>();
  // A line is made from the group of its members, which every rank knows from the placement: only the line's own
  // ranks take part (MPI_Comm_split would gather every rank's color and key: an all-gather over the whole
  // communicator per line, what made a first plan's time grow with P). Lines of one kind are disjoint and every
  // rank makes its row, then its column, then its layer, so the creations cannot wait on one another. Each is a
  // collective step of its own, so that every rank makes all three whatever failed before; a line is owned before
  // its code is checked, so that a failure frees it.
  mpi::group_handle all;  // p.comm's group, asked for once for the three lines
  const auto make_line = [&](int extent, int tag, auto label_at, mpi::comm_handle& line) {
    agreed.collective([&] {
      if (extent <= 1) return;
      // The creation has no nonblocking form: every rank arrives first, in a watched wait (mpi/checked.hpp).
      const int arrived = mpi::barrier_yielding(p.comm.get());
      int code = MPI_SUCCESS;
      if (!p.idle) {
        std::vector<int> members(static_cast<size_t>(extent));
        for (int position = 0; position < extent; ++position)
          members[static_cast<size_t>(position)] = rank_of_label[static_cast<size_t>(label_at(position))];
        mpi::group_handle mine;
        MPI_Comm made_line = MPI_COMM_NULL;
        if (all.get() == MPI_GROUP_NULL) code = MPI_Comm_group(p.comm.get(), all.out());
        if (code == MPI_SUCCESS) code = MPI_Group_incl(all.get(), extent, members.data(), mine.out());
        if (code == MPI_SUCCESS) code = MPI_Comm_create_group(p.comm.get(), mine.get(), tag, &made_line);
        line = mpi::comm_handle(code == MPI_SUCCESS ? made_line : MPI_COMM_NULL);
      }
      mpi::check(code != MPI_SUCCESS ? code : arrived, "MPI_Ibarrier and MPI_Comm_create_group(grid line)");
    });
  };
  make_line(
      s.grid_n, 1, [&](int j) { return cut.label(at.i, j, at.l); }, made->row);
  make_line(
      s.grid_m, 2, [&](int i) { return cut.label(i, at.j, at.l); }, made->col);
  make_line(
      s.grid_k, 3, [&](int l) { return cut.label(at.i, at.j, l); }, made->layer);
  agreed.attempt([&] {
    if (recent.placements.size() == grid_lines_kept) recent.placements.erase(recent.placements.begin());
    recent.placements.emplace_back(std::move(placement), made);
    p.lines = made;
  });
  // Recorded only where every split succeeded: when the agreement fails, every rank drops this call's lines, so
  // that the next plan placing the grid alike splits on every rank (not on those that failed only).
  agreed.on_failure([&recent, made] {
    auto& v = recent.placements;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return e.second == made; }), v.end());
  });
}

// Step 9 (with the round buffers, agreed). Native storage, allocated once for every execution, uninitialised: the
// transform in writes all of A's and B's, the first round of each C block overwrites it (beta 0). With k == 0 no
// round runs: C's is zeroed. With shared_memory panels, A and B that a grid line shares go into the node's window
// instead (make_shared_stores).
void allocate_native_storage(gemm_plan::impl& p) {
  const auto eb = static_cast<std::int64_t>(p.element_bytes);
  const bool shared = p.stats.communication == gemm_communication::shared_memory && p.k > 0;
  if (!shared || p.stats.schedule.grid_n == 1) p.a_store = gemm_detail::buffer(p.a_native.local_elements() * eb);
  if (!shared || p.stats.schedule.grid_m == 1) p.b_store = gemm_detail::buffer(p.b_native.local_elements() * eb);
  if (!p.c_in_place) p.c_store = gemm_detail::buffer(p.c_native.local_elements() * eb);
  if (p.k == 0 && p.c_store.bytes() > 0) std::memset(p.c_store.data(), 0, static_cast<size_t>(p.c_store.bytes()));
}

}  // namespace

namespace {

std::unique_ptr<gemm_plan::impl> build_gemm_plan(MPI_Comm comm, gemm_description description,
                                                 const gemm_options& options) {
  const seconds_since started;
  seconds_since step;
  auto p = std::make_unique<gemm_plan::impl>();
  gemm_planning_profile& planning = p->stats.planning;
  // Each step's time (the rounds' in two parts), and all of it so far, as each step ends.
  const auto took = [&](double& part) {
    part += step.elapsed();
    step = seconds_since();
    planning.total = started.elapsed();
  };
  mpi::wait_label described(nullptr, nullptr);
  described.describe(describe_product, &description);
  agree_on_problem(comm, *p, description, options);
  took(planning.agreement);
  p->description = std::move(description);
  described.describe(describe_product, &p->description);
  p->options = options;
  if (p->m == 0 || p->n == 0) {  // C has no element: nothing to do
    p->stats.communication_reason = "C has no element: no panel travels";
    return p;
  }

  const cuts cut{p->stats.schedule};
  const native_parts parts = gemm_detail::native_parts_of(cut);
  const grid_placement placed = place_on_grid(*p, comm, parts);
  take_position(*p, cut, placed.rank_of_label);
  choose_communication(*p, comm, cut, placed.rank_of_label);
  took(planning.placement);
  const part_orders mine = p->idle ? part_orders{} : gemm_detail::part_orders_at(cut, p->me);
  build_native_layouts(*p, parts, placed, mine);
  make_transforms(*p, comm, parts, placed, mine);
  took(planning.transforms);
  // Steps 7 and 8 (rounds.cpp): the round loop and the statistics' counts of its traffic.
  const bool multiplies = p->k > 0 && !p->idle;
  if (multiplies) {
    p->lay_out_rounds(cut, parts, mine);
    p->count_multiply_traffic();
  }
  took(planning.rounds);
  // Steps 6 and 9. The grid lines and every buffer the plan holds, acquired in one agreement: a rank whose split
  // fails, or that is short of memory, fails every rank here instead of leaving the others in the windows'
  // collective calls.
  mpi::agreement stored(p->comm.get());
  split_grid_lines(*p, comm, placed.rank_of_label, stored);
  took(planning.grid_lines);
  stored.attempt([&] {
    allocate_native_storage(*p);
    if (multiplies) p->allocate_round_buffers();
  });
  stored.conclude();
  took(planning.storage);
  if (p->k == 0) return p;  // nothing to multiply: the transform out writes beta * C
  // Step 10 (rounds.cpp): the one-sided or node-shared windows (collective).
  std::string no_window;
  if (p->stats.communication == gemm_communication::one_sided && !p->make_panel_windows(no_window)) {
    p->stats.communication = gemm_communication::two_sided;
    p->stats.communication_reason =
        "one_sided requested but no RMA window for the panels (" + no_window + "): they travel two_sided";
    mpi::agreement gathers(p->comm.get());
    gathers.attempt([&] { p->prepare_panel_gathers(); });
    gathers.conclude();
    static std::atomic<bool> said{false};  // once per process, by a plan's rank 0
    if (mpi::rank(p->comm.get()) == 0 && !said.exchange(true))
      std::fprintf(stderr,
                   "redist: gemm_communication::one_sided: no RMA window for the panels (%s); the "
                   "panels of this plan travel two-sided (docs/mpi.md)\n",
                   no_window.c_str());
  }
  if (p->stats.communication == gemm_communication::shared_memory) p->make_shared_stores(comm);
  took(planning.rounds);
  return p;
}

}  // namespace

gemm_plan make_gemm_plan(MPI_Comm comm, gemm_description description, const gemm_options& options) {
  return trace_detail::traced_making(
      "gemm_plan",
      [&] {
        const mpi::wait_label limit(nullptr, nullptr, options.timeout_seconds);
        auto p = build_gemm_plan(comm, std::move(description), options);
        p->comm.returnable();  // set up on every rank: nothing left on it for the next plan that takes it
        return gemm_plan(std::move(p));
      },
      [](const gemm_plan& plan) { return to_string(plan.statistics().communication); });
}

}  // namespace redist
