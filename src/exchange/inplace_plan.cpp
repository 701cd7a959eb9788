// SPDX-License-Identifier: BSD-3-Clause
// In-place alltoallv plans (include/redist/exchange/inplace.hpp): make_inplace_plan checks and agrees once,
// chooses the algorithm and allocates the work buffer; execute() only moves data. The one-call forms are a plan
// and one execution. Validation, the streams and the algorithms themselves: inplace.cpp and its siblings.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "inplace_detail.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "redist/exchange/inplace.hpp"
#include "trace/recorder.hpp"

namespace redist::exchange {

namespace inplace_plan_detail {

using namespace inplace_detail;

// Everything an execution needs. The general form keeps the validated problem (its buf is set per execution)
// and the algorithm chosen; the MPI_IN_PLACE form its checked counts and areas. Immutable once made, except
// for the buffer pointer and the work buffer's contents during an execution.
struct state {
  bool symmetric_form = false;
  std::int64_t capacity = 0;  // elements of buf an execution uses
  inplace_report report;      // what an execution does; counters zero

  // General form.
  validated v;
  inplace_algorithm chosen = inplace_algorithm::automatic;
  chunked_plan chunked;

  // MPI_IN_PLACE form.
  std::shared_ptr<const mpi::comm_handle> owned_comm;  // private, shared with the cache on the caller's
  MPI_Comm comm = MPI_COMM_NULL;                       // owned_comm's
  std::vector<int> counts, displs;
  std::int64_t extent = 1;
  std::unique_ptr<work_buffer> work;
  std::int64_t work_bytes = 0;

  double timeout_seconds = -1;  // inplace_options::timeout_seconds (the MPI_IN_PLACE form has none)

  bool in_progress = false;              // between start() and wait()
  std::optional<inplace_report> latest;  // the latest execution's report (statistics())
};

namespace {

// The general form. buf: the one-call form's buffer, checked with the rest (a plan gets it at execution);
// `who` names the entry point in the errors raised after the agreement (the same on every rank).
// What a plan's making was given, said by the watchdog where a wait lasts long (mpi::wait_label::describe_fn).
struct making_arguments {
  std::int64_t capacity;
  inplace_algorithm algorithm;
};
void describe_making(const void* arguments, char* out, std::size_t size) noexcept {
  const auto& a = *static_cast<const making_arguments*>(arguments);
  std::snprintf(out, size, "algorithm %s asked; this process: capacity %lld elements", to_string(a.algorithm),
                static_cast<long long>(a.capacity));
}

std::unique_ptr<state> make_general(const void* buf, bool check_buf, std::int64_t capacity,
                                    const std::int64_t* sendcounts, const std::int64_t* recvcounts, MPI_Datatype type,
                                    MPI_Comm comm, const inplace_options& options, const char* who) {
  auto s = std::make_unique<state>();
  s->timeout_seconds = options.timeout_seconds;
  mpi::wait_label limit(nullptr, nullptr, options.timeout_seconds);
  const making_arguments arguments{capacity, options.algorithm};
  limit.describe(describe_making, &arguments);
  s->v = validate(buf, check_buf, capacity, sendcounts, recvcounts, type, comm, options);
  problem& p = s->v.p;
  inplace_report& report = s->report;
  const std::string name = who;

  // From here on every rank holds the same totals, capacities and flags, so every rank makes the same choice
  // (and raises the same error) without further agreement.
  const std::int64_t largest = std::max(*std::max_element(p.send_totals.begin(), p.send_totals.end()),
                                        *std::max_element(p.recv_totals.begin(), p.recv_totals.end())) *
                               p.extent;
  inplace_algorithm chosen = options.algorithm;
  chunked_plan chunked;
  switch (options.algorithm) {
    case inplace_algorithm::automatic: {
      if (s->v.symmetric) {
        chosen = inplace_algorithm::chunked;
        chunked = plan_chunked(p, true, s->v.chunked_fits_everywhere);
        report.reason = "symmetric counts: every block swaps in place with its partner";
      } else if ((chunked = plan_chunked(p, false, s->v.chunked_fits_everywhere)).fits) {
        chosen = inplace_algorithm::chunked;
        report.reason = "every block fits a direct step within the capacities";
      } else {
        compute_offsets_in_dest(p);
        const std::int64_t pairwise_bytes = pairwise_max_bytes(p);
        const bool bitonic_ok = bitonic_fits(p);
        const std::int64_t bitonic_bytes = bitonic_ok ? bitonic_max_bytes(p) : 0;
        chosen =
            bitonic_ok && bitonic_bytes < pairwise_bytes ? inplace_algorithm::bitonic : inplace_algorithm::pairwise;
        report.reason = "direct steps exceed a capacity; pairwise would send " + std::to_string(pairwise_bytes) +
                        " bytes, bitonic " + (bitonic_ok ? "at most " + std::to_string(bitonic_bytes) : "does not fit");
      }
      break;
    }
    case inplace_algorithm::chunked:
      if (!(chunked = plan_chunked(p, s->v.symmetric, s->v.chunked_fits_everywhere)).fits)
        throw invalid_argument(name +
                               ": chunked does not fit: in every schedule some rank "
                               "would hold more than its capacity (use auto, pairwise or more capacity)");
      report.reason = "requested";
      break;
    case inplace_algorithm::pairwise: {
      compute_offsets_in_dest(p);
      const std::int64_t pairwise_bytes = pairwise_max_bytes(p);
      report.reason = "requested";
      if (static_cast<double>(pairwise_bytes) > options.pairwise_guard * static_cast<double>(largest)) {
        if (bitonic_fits(p)) {
          chosen = inplace_algorithm::bitonic;
          report.reason = "pairwise would send " + std::to_string(pairwise_bytes) + " bytes, past the guard of " +
                          std::to_string(options.pairwise_guard) + " x " + std::to_string(largest) + ": bitonic";
        } else {
          report.reason = "pairwise past its guard, but bitonic does not fit the capacities";
        }
      }
      break;
    }
    case inplace_algorithm::bitonic:
      if (!bitonic_fits(p))
        throw invalid_argument(name +
                               ": bitonic needs every capacity >= the largest send or receive total over the "
                               "ranks (" +
                               std::to_string(largest / p.extent) + " elements)");
      report.reason = "requested";
      break;
  }
  // The slot model's offsets: one MPI_Exscan, here rather than in every execution.
  if (chosen == inplace_algorithm::pairwise || chosen == inplace_algorithm::bitonic) compute_offsets_in_dest(p);
  s->chosen = chosen;
  s->chunked = chunked;
  s->capacity = capacity;
  // Faulted in now, so that executions (the first included) find its pages mapped.
  s->v.work->touch();

  report.algorithm = chosen;
  report.recvcounts = p.recvcounts;
  report.received_elements = std::accumulate(p.recvcounts.begin(), p.recvcounts.end(), std::int64_t{0});
  report.work_bytes = options.work_bytes;
  return s;
}

// The MPI_IN_PLACE form; buf as in make_general.
std::unique_ptr<state> make_symmetric(const void* buf, bool check_buf, const int* counts, const int* displs,
                                      MPI_Datatype type, MPI_Comm comm, std::int64_t work_bytes) {
  const int size = mpi::size(comm);
  const auto P = static_cast<std::size_t>(size);
  mpi::agreement agreed(comm);
  const auto fail = [&](mpi::error_kind kind, const std::string& m) { agreed.fail(kind, m); };
  auto s = std::make_unique<state>();
  s->symmetric_form = true;
  inplace_detail::datatype_slots type_slots;
  const std::int64_t extent = agree_on_start(agreed, comm, type, s->owned_comm, type_slots);
  s->comm = s->owned_comm ? s->owned_comm->get() : MPI_COMM_NULL;
  if (work_bytes < min_work_bytes || work_bytes > max_work_bytes)
    fail(mpi::error_kind::invalid_argument, "work_bytes " + std::to_string(work_bytes) + " is outside [65536, 2^30]");
  // The classes of alltoallv_inplace's checks: counts and displacements invalid_count, buffers invalid_buffer.
  if (counts == nullptr || displs == nullptr) fail(mpi::error_kind::invalid_count, "counts or displs is null");
  std::vector<int> mine(P, 0), theirs(P, 0);
  if (counts != nullptr) std::copy(counts, counts + P, mine.begin());
  agreed.collective([&] {
    REDIST_MPI_CHECK(redist::mpi::alltoall_yielding(mine.data(), 1, MPI_INT, theirs.data(), 1, MPI_INT, comm));
  });
  std::vector<std::pair<std::int64_t, std::int64_t>> areas;  // [first, last) in elements
  for (std::size_t j = 0; j < P && !agreed.failed(); ++j) {
    if (mine[j] < 0 || displs[j] < 0) {
      fail(mpi::error_kind::invalid_count,
           "counts[" + std::to_string(j) + "] or displs[" + std::to_string(j) + "] is negative");
    } else if (mine[j] != theirs[j]) {
      fail(mpi::error_kind::invalid_count, "MPI_IN_PLACE needs symmetric counts: counts[" + std::to_string(j) +
                                               "] = " + std::to_string(mine[j]) + " but rank " + std::to_string(j) +
                                               " has " + std::to_string(theirs[j]) + " for this rank");
    } else if (mine[j] > 0) {
      areas.emplace_back(displs[j], std::int64_t{displs[j]} + mine[j]);
    }
  }
  std::sort(areas.begin(), areas.end());
  // Overlapping areas are aliased receive buffers (MPI_ERR_BUFFER, as MPI's own check of aliased buffers).
  for (std::size_t k = 1; k < areas.size() && !agreed.failed(); ++k)
    if (areas[k].first < areas[k - 1].second) fail(mpi::error_kind::invalid_buffer, "the receive areas overlap");
  if (check_buf && buf == nullptr && !areas.empty())
    fail(mpi::error_kind::invalid_buffer, "buf is null with blocks to exchange");
  agreed.attempt([&] { s->work = std::make_unique<work_buffer>(work_bytes); });
  agreed.conclude();
  inplace_detail::refuse_differing_datatypes(agreed, type_slots);
  s->work->touch();

  s->counts = std::move(mine);
  s->displs.assign(displs, displs + P);
  s->extent = extent;
  s->work_bytes = work_bytes;
  for (const auto& area : areas) s->capacity = std::max(s->capacity, area.second);
  inplace_report& report = s->report;
  report.algorithm = inplace_algorithm::chunked;
  report.reason = "MPI_IN_PLACE: symmetric counts, each pair of blocks swaps in place";
  report.recvcounts.assign(s->counts.begin(), s->counts.end());
  report.received_elements = std::accumulate(report.recvcounts.begin(), report.recvcounts.end(), std::int64_t{0});
  report.work_bytes = work_bytes;
  return s;
}

const state& checked(const std::unique_ptr<state>& s, const char* what) {
  if (!s)
    throw invalid_argument(std::string("inplace_plan::") + what +
                           " on an empty plan (moved from or default-constructed)");
  return *s;
}

}  // namespace
}  // namespace inplace_plan_detail

using inplace_plan_detail::state;

inplace_plan::inplace_plan() noexcept = default;
inplace_plan::inplace_plan(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
inplace_plan::inplace_plan(inplace_plan&&) noexcept = default;
inplace_plan& inplace_plan::operator=(inplace_plan&&) noexcept = default;
inplace_plan::~inplace_plan() = default;

const inplace_report& inplace_plan::report() const { return inplace_plan_detail::checked(state_, "report").report; }

std::int64_t inplace_plan::capacity() const { return inplace_plan_detail::checked(state_, "capacity").capacity; }

namespace {
// mpi::wait_label::describe_fn for a plan's state, said by the watchdog where a wait lasts long.
void describe_inplace(const void* plan_state, char* out, std::size_t size) noexcept {
  const auto& s = *static_cast<const inplace_plan_detail::state*>(plan_state);
  if (s.symmetric_form) {
    std::snprintf(out, size, "MPI_IN_PLACE form; this process: %lld elements of %lld bytes",
                  static_cast<long long>(s.capacity), static_cast<long long>(s.extent));
    return;
  }
  std::snprintf(out, size, "algorithm %s; this process: capacity %lld elements of %lld bytes", to_string(s.chosen),
                static_cast<long long>(s.capacity), static_cast<long long>(s.v.p.extent));
}
}  // namespace

inplace_report inplace_plan::execute(void* buf) const {
  using namespace inplace_detail;
  inplace_plan_detail::checked(state_, "execute");
  mpi::wait_label label("inplace_plan", "execution", state_->timeout_seconds);
  label.describe(describe_inplace, state_.get());
  trace_detail::plan_event traced;
  state& s = *state_;
  // Local checks only: a plan is made to be executed without collectives.
  if (buf == nullptr && s.capacity > 0)
    throw invalid_buffer("inplace_plan::execute: buf is null, the plan uses " + std::to_string(s.capacity) +
                         " elements of it");
  counters c;
  if (s.symmetric_form) {
    run_symmetric_swaps(s.comm, static_cast<std::byte*>(buf), s.counts, s.displs, s.extent, s.work->get(), s.work_bytes,
                        c);
    c.metadata_bytes = static_cast<std::int64_t>(2 * s.counts.size() * sizeof(int));
  } else {
    problem& p = s.v.p;
    p.buf = static_cast<std::byte*>(buf);
    c.metadata_bytes = static_cast<std::int64_t>(6 * p.size * sizeof(std::int64_t));
    switch (s.chosen) {
      case inplace_algorithm::chunked:
        run_chunked(p, s.chunked, c);
        break;
      case inplace_algorithm::pairwise:
        run_pairwise(p, c);
        break;
      case inplace_algorithm::bitonic:
        run_bitonic(p, c);
        break;
      case inplace_algorithm::automatic:
        break;  // never chosen
    }
    p.buf = nullptr;  // the caller's buffer is not the plan's
  }
  inplace_report r = s.report;
  r.bytes_sent = c.bytes_sent;
  r.bytes_received = c.bytes_received;
  r.messages_sent = c.messages_sent;
  r.messages_received = c.messages_received;
  r.bytes_local = c.bytes_local;
  r.metadata_bytes = c.metadata_bytes;
  if (traced.active()) traced.executed("inplace_plan", to_string(r.algorithm), r.bytes_sent, r.messages_sent);
  s.latest = r;
  return r;
}

void inplace_plan::start(void* buf) const {
  inplace_plan_detail::checked(state_, "start");
  if (state_->in_progress)
    throw invalid_argument("inplace_plan::start: a start() of this plan is still in progress (call wait() first)");
  execute(buf);
  state_->in_progress = true;
}

void inplace_plan::wait() const {
  inplace_plan_detail::checked(state_, "wait");
  if (!state_->in_progress) throw invalid_argument("inplace_plan::wait without a start() in progress");
  state_->in_progress = false;
}

bool inplace_plan::in_progress() const noexcept { return state_ && state_->in_progress; }

const inplace_report& inplace_plan::statistics() const {
  const state& s = inplace_plan_detail::checked(state_, "statistics");
  return s.latest ? *s.latest : s.report;
}

MPI_Comm inplace_plan::communicator() const {
  const state& s = inplace_plan_detail::checked(state_, "communicator");
  return s.symmetric_form ? s.comm : s.v.p.comm;
}

namespace {
// A plan made by `make` (every make_*inplace_plan* and one-call form, the C API's included), counted by the trace.
template <class Make>
inplace_plan traced_making(Make&& make) {
  return trace_detail::traced_making(
      "inplace_plan", [&] { return inplace_plan(make()); },
      [](const inplace_plan& plan) { return to_string(plan.report().algorithm); });
}
}  // namespace

inplace_plan make_inplace_plan(MPI_Comm comm, std::int64_t capacity, const std::int64_t* sendcounts,
                               const std::int64_t* recvcounts, MPI_Datatype type, const inplace_options& options) {
  return traced_making([&] {
    return inplace_plan_detail::make_general(nullptr, false, capacity, sendcounts, recvcounts, type, comm, options,
                                             "make_inplace_plan");
  });
}

namespace {
// P*count, or -1 (refused by the checks as a capacity too small) when it overflows or count is negative.
std::int64_t alltoall_capacity(std::int64_t count, int size) {
  return count >= 0 && count <= std::numeric_limits<std::int64_t>::max() / size ? count * size : -1;
}
}  // namespace

inplace_plan make_alltoall_inplace_plan(MPI_Comm comm, std::int64_t count, MPI_Datatype type,
                                        const inplace_options& options) {
  const int size = mpi::size(comm);
  const std::vector<std::int64_t> counts(static_cast<std::size_t>(size), count);
  return make_inplace_plan(comm, alltoall_capacity(count, size), counts.data(), counts.data(), type, options);
}

inplace_plan make_inplace_plan_symmetric(MPI_Comm comm, const int* counts, const int* displs, MPI_Datatype type,
                                         std::int64_t work_bytes) {
  return traced_making(
      [&] { return inplace_plan_detail::make_symmetric(nullptr, false, counts, displs, type, comm, work_bytes); });
}

// ---- One-call forms: a plan and one execution ------------------------------------------------------------

inplace_report alltoallv_inplace(void* buf, std::int64_t capacity, const std::int64_t* sendcounts,
                                 const std::int64_t* recvcounts, MPI_Datatype type, MPI_Comm comm,
                                 const inplace_options& options) {
  const inplace_plan plan = traced_making([&] {
    return inplace_plan_detail::make_general(buf, true, capacity, sendcounts, recvcounts, type, comm, options,
                                             "alltoallv_inplace");
  });
  return plan.execute(buf);
}

inplace_report alltoallv_inplace_symmetric(void* buf, const int* counts, const int* displs, MPI_Datatype type,
                                           MPI_Comm comm, std::int64_t work_bytes) {
  const inplace_plan plan = traced_making(
      [&] { return inplace_plan_detail::make_symmetric(buf, true, counts, displs, type, comm, work_bytes); });
  return plan.execute(buf);
}

inplace_report alltoall_inplace(void* buf, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                                const inplace_options& options) {
  const int size = mpi::size(comm);
  const std::vector<std::int64_t> counts(static_cast<std::size_t>(size), count);
  return alltoallv_inplace(buf, alltoall_capacity(count, size), counts.data(), counts.data(), type, comm, options);
}

}  // namespace redist::exchange
