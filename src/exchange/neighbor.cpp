// SPDX-License-Identifier: BSD-3-Clause
// The persistent neighborhood alltoallv's setup (validation, regions, the strategy through the registry:
// neighbor_detail.hpp) and its API; the strategies live in neighbor_standard.cpp, neighbor_aggregate.cpp and
// neighbor_dedup.cpp, the cost model that automatic chooses by in neighbor_cost.cpp.
#include "redist/exchange/neighbor.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>

#include "field_hash.hpp"
#include "mpi/agreement.hpp"
#include "neighbor_detail.hpp"
#include "redist/error.hpp"
#include "trace/recorder.hpp"

namespace redist::exchange {

namespace detail {

void plan_state::start() {
  if (active) throw invalid_argument("neighbor_plan::start: the previous exchange was not waited for");
  started = trace_detail::on() ? trace_detail::clock::now() : trace_detail::clock::time_point{};
  // Messages in flight: the communicator serves no other plan until an exchange has completed on every rank.
  owned_comm.discard();
  chosen->start();
  active = true;
}

namespace {
// mpi::wait_label::describe_fn for a plan_state, said by the watchdog where a wait lasts long.
void describe_exchange(const void* state, char* out, std::size_t size) noexcept {
  const exchange_statistics& stats = static_cast<const plan_state*>(state)->stats;
  std::snprintf(out, size, "strategy %s; this process sends %lld messages of %lld bytes and receives %lld of %lld",
                to_string(stats.strategy), static_cast<long long>(stats.messages_sent),
                static_cast<long long>(stats.bytes_sent), static_cast<long long>(stats.messages_received),
                static_cast<long long>(stats.bytes_received));
}

// What a plan's making was given, for the same line.
struct exchange_arguments {
  std::size_t sources = 0, destinations = 0;
  neighbor_strategy strategy = neighbor_strategy::automatic;
};
void describe_exchange_arguments(const void* arguments, char* out, std::size_t size) noexcept {
  const auto& a = *static_cast<const exchange_arguments*>(arguments);
  std::snprintf(out, size, "this process: %zu sources, %zu destinations; strategy %s", a.sources, a.destinations,
                to_string(a.strategy));
}
}  // namespace

void plan_state::wait() {
  if (!active) throw invalid_argument("neighbor_plan::wait: no exchange was started");
  mpi::wait_label label("neighbor_plan", "waiting for the exchange", timeout_seconds);
  label.describe(describe_exchange, this);
  trace_detail::plan_event traced;
  const auto wait_began = traced.active() ? trace_detail::clock::now() : trace_detail::clock::time_point{};
  chosen->wait();
  active = false;
  owned_comm.returnable();
  // An exchange is timed from its start (one started while tracing was off, from its wait).
  if (traced.active())
    traced.executed("neighbor_plan", to_string(stats.strategy), stats.bytes_sent, stats.messages_sent,
                    trace_detail::seconds_since(started != trace_detail::clock::time_point{} ? started : wait_began));
}

namespace {

std::string seconds_text(double s) {
  std::ostringstream out;
  out.precision(3);
  out << s * 1e6 << " us";
  return out.str();
}

// The registry's entry for a strategy; null for automatic and for values outside the enum.
const strategy_entry* entry_of(neighbor_strategy s) {
  for (const strategy_entry& e : strategy_registry)
    if (e.id == s) return &e;
  return nullptr;
}

// What must be the same on every rank of an exchange: the strategy, the way regions are chosen (region_id's
// value is each rank's own) and the cost model's figures.
std::uint64_t options_hash(const exchange_options& o) {
  field_hash h;
  h.add_all(o.strategy, o.region_size, static_cast<bool>(o.region_id), static_cast<bool>(o.model));
  if (o.model)
    h.add_all(o.model->intra_latency, o.model->intra_seconds_per_message, o.model->intra_seconds_per_byte,
              o.model->inter_latency, o.model->inter_seconds_per_message, o.model->inter_seconds_per_byte,
              o.model->region_seconds_per_byte, o.model->copy_seconds_per_byte);
  return h.value();
}

std::unique_ptr<plan_state> build(const std::vector<int>& sources, const std::vector<int>& destinations,
                                  const neighbor_buffers& b, MPI_Comm comm, const exchange_options& options) {
  mpi::wait_label limit(nullptr, nullptr, options.timeout_seconds);
  const exchange_arguments arguments{sources.size(), destinations.size(), options.strategy};
  limit.describe(describe_exchange_arguments, &arguments);
  const int nranks = mpi::size(comm);
  plan_setup v;  // the validated description every candidate starts from
  v.sendbuf = static_cast<const char*>(b.sendbuf);
  v.recvbuf = static_cast<char*>(b.recvbuf);
  v.sendtype = b.sendtype;
  v.recvtype = b.recvtype;
  // The local checks (a datatype MPI rejects included) and the options, which must be the same on every rank
  // (different strategies would build plans whose messages never match), in one agreement.
  mpi::agreement agreed(comm);
  const bool automatic = options.strategy == neighbor_strategy::automatic;
  const strategy_entry* requested = entry_of(options.strategy);
  if (!automatic && requested == nullptr)
    agreed.fail(mpi::error_kind::invalid_argument,
                "exchange_options::strategy = " + std::to_string(static_cast<int>(options.strategy)) +
                    " is not a neighbor_strategy");
  if (options.region_size < 0)
    agreed.fail(mpi::error_kind::invalid_argument,
                "exchange_options::region_size = " + std::to_string(options.region_size) + " is negative");
  if (options.model)
    for (double figure :
         {options.model->intra_latency, options.model->intra_seconds_per_message, options.model->intra_seconds_per_byte,
          options.model->inter_latency, options.model->inter_seconds_per_message, options.model->inter_seconds_per_byte,
          options.model->region_seconds_per_byte, options.model->copy_seconds_per_byte})
      // Below 1e30 s: a figure times a phase's bytes stays finite, so that predictions compare (NaN fails too).
      if (!(figure >= 0 && figure < 1e30)) {
        agreed.fail(mpi::error_kind::invalid_argument,
                    "exchange_options::model has a figure " + std::to_string(figure) +
                        "; every cost-model figure must be a number of seconds >= 0 and below 1e30");
        break;
      }
  if (requested && requested->needs_global_ids && !b.global_ids)
    agreed.fail(mpi::error_kind::invalid_argument,
                std::string("the ") + to_string(options.strategy) +
                    " strategy needs global ids (neighbor_buffers::global_ids, redist_neighbor_alltoallv_init_ext)");
  agreed.attempt([&] {
    auto problem = check_side("send", "sendcounts", destinations, b.sendcounts, b.sdispls, b.sendtype, b.sendbuf,
                              b.send_capacity, b.send_entries, nranks, v.sends, false);
    if (problem.first == mpi::error_kind::none)
      problem = check_side("receive", "recvcounts", sources, b.recvcounts, b.rdispls, b.recvtype, b.recvbuf,
                           b.recv_capacity, b.recv_entries, nranks, v.recvs, true);
    agreed.fail(problem.first, std::move(problem.second));  // kind none: nothing recorded
  });
  agreed.require_same(options_hash(options),
                      "ranks passed different exchange options (strategy, region_size, region_id set or not, or cost "
                      "model figures); every rank must pass the same (C: the same info values)");
  // The private duplicate the set-up's messages travel on (exchange_words), made by every rank inside the
  // agreement: one rank that fails to make it fails every rank here, instead of leaving the others waiting for its
  // messages; and no rank keeps a duplicate that the others will make again.
  agreed.collective([&] { mpi::call_duplicate(comm); });
  agreed.on_failure([comm] { mpi::forget_call_duplicate(comm); });
  agreed.conclude();

  const layout_facts f = find_regions(comm, options, /*options_agreed=*/true);  // options_hash, above
  int tag_ub_found = 0;
  int* tag_ub = nullptr;
  REDIST_MPI_CHECK_LOCAL(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &tag_ub_found));
  const auto records = exchange_records(comm, f, v.sends);

  // Edge j of this rank's receive side from rank r must be the same occurrence of r's send edges to it,
  // with the same bytes.
  std::ostringstream mismatch;
  std::vector<std::vector<std::int64_t>> incoming_bytes(static_cast<size_t>(nranks));
  for (int source = 0; source < nranks; ++source) {
    const auto& rec = records[source];
    for (size_t k = 0; k + 1 < rec.size(); k += record_words)
      if (static_cast<int>(rec[k]) == f.me) incoming_bytes[source].push_back(rec[k + 1]);
  }
  std::vector<std::vector<std::int64_t>> expected(static_cast<size_t>(nranks));
  for (const edge& e : v.recvs) expected[e.peer].push_back(e.bytes);
  for (int source = 0; source < nranks; ++source) {
    if (incoming_bytes[source] == expected[source]) continue;
    mismatch << "send and receive graphs differ: rank " << source << " sends " << incoming_bytes[source].size()
             << " edge(s) to rank " << f.me << " (bytes";
    for (auto x : incoming_bytes[source]) mismatch << " " << x;
    mismatch << "), rank " << f.me << " lists " << expected[source].size() << " receive edge(s) from it (bytes";
    for (auto x : expected[source]) mismatch << " " << x;
    mismatch << ")";
    break;
  }
  // Tags past MPI_TAG_UB: the graph is one (its edges match), but this MPI's tags cannot number its messages. An
  // argument beyond a limit, neither a topology nor a count (MPI_ERR_ARG in C; MPI's own MPI_ERR_TAG has no kind).
  std::ostringstream tag_problem;
  if (tag_ub_found && tag_of(static_cast<std::int64_t>(f.members.size()), scatter_phase) > *tag_ub)
    tag_problem << "the tags of " << f.members.size() << " regions exceed MPI_TAG_UB = " << *tag_ub;
  for (const edge& e : v.sends)
    if (tag_problem.str().empty() && tag_ub_found && tag_of(e.occurrence, direct_phase) > *tag_ub)
      tag_problem << "rank " << f.me << " repeats neighbor " << e.peer << " more often than MPI_TAG_UB allows";
  // The byte mirrors the strategies that combine regions copy through. A datatype that cannot be taken apart
  // leaves automatic with the others, and fails a request for one of them on every rank.
  const bool regions_matter = f.members.size() > 1 && f.max_region_size > 1;
  const bool needs_mirrors = automatic ? regions_matter : requested->combines_regions;
  std::string mirror_problem;
  // Minima over the ranks: 1 in the first when every rank passed global ids, in the second when none did.
  mpi::agreement edges_agreed(comm);
  // Edges that do not match are a graph that is not one (MPI_ERR_TOPOLOGY in C); a graph that matches but needs
  // more tags than MPI_TAG_UB is an argument past this MPI's limit (MPI_ERR_ARG).
  if (!mismatch.str().empty()) edges_agreed.fail(mpi::error_kind::invalid_topology, mismatch.str());
  if (!tag_problem.str().empty()) edges_agreed.fail(mpi::error_kind::invalid_argument, tag_problem.str());
  if (needs_mirrors)
    edges_agreed.attempt([&] {
      try {
        auto mirrors = std::make_shared<byte_types>();
        mirrors->send = mpi::byte_mirror(v.sendtype);
        mirrors->recv = mpi::byte_mirror(v.recvtype);
        v.mirrors = std::move(mirrors);
      } catch (const invalid_datatype& e) {
        mirror_problem = e.what();
      }
    });
  const std::size_t ids_slot = edges_agreed.reduce_min(b.global_ids ? 1 : 0);
  const std::size_t no_ids_slot = edges_agreed.reduce_min(b.global_ids ? 0 : 1);
  const std::size_t mirrors_slot = edges_agreed.reduce_min(mirror_problem.empty() ? 1 : 0);
  edges_agreed.conclude();
  const bool ids_everywhere = edges_agreed.min(ids_slot) == 1;
  if (!ids_everywhere && edges_agreed.min(no_ids_slot) == 0)  // the same on every rank
    throw inconsistent_ranks("some ranks pass global ids and others do not: every rank must call the same entry point");
  // The ids are checked whichever strategy runs: one that ignores them (standard, aggregate) refuses what dedup
  // would (MPI_ERR_TOPOLOGY in C), so that a strategy never decides whether wrong arguments pass.
  if (ids_everywhere) mpi::agree_on(comm, mpi::error_kind::invalid_topology, check_global_ids(comm, v, b, nranks));
  const bool mirrors_everywhere = edges_agreed.min(mirrors_slot) == 1;
  if (!automatic && !mirrors_everywhere)
    mpi::agree_on(comm, mpi::error_kind::invalid_datatype,
                  mirror_problem.empty() ? mirror_problem
                                         : std::string(to_string(options.strategy)) + " strategy: " + mirror_problem);

  // Which strategies to build: the requested one, or automatic's candidates (every strategy whose needs hold),
  // each prepared (collectively, in registry order) on every rank.
  std::vector<const strategy_entry*> wanted;
  if (!automatic) {
    wanted = {requested};
  } else {
    for (const strategy_entry& e : strategy_registry)
      if ((!e.combines_regions || (regions_matter && mirrors_everywhere)) && (!e.needs_global_ids || ids_everywhere))
        wanted.push_back(&e);
  }
  const strategy_context context{comm, f, v, b, records};
  std::vector<strategy_builder> builders;
  for (const strategy_entry* e : wanted) builders.push_back(e->prepare(context));

  // The plan's communicator and every candidate's buffers and datatypes (local work, no messages), agreed
  // on before any candidate is measured or chosen.
  mpi::agreement built(comm);
  mpi::comm_handle owned;
  built.collective([&] { owned = mpi::plan_duplicate(comm); });
  v.comm = owned.get();
  std::vector<std::unique_ptr<strategy>> candidates;
  for (const strategy_builder& make : builders) built.attempt([&] { candidates.push_back(make(v)); });
  built.conclude();

  size_t chosen = 0;
  std::string reason;
  std::vector<strategy_estimate> estimates;
  if (!automatic) {
    reason = std::string("requested ") + to_string(options.strategy);
  } else if (candidates.size() == 1) {
    reason = f.members.size() == 1 ? "automatic: one region, no inter-region messages to combine"
             : regions_matter      ? "automatic: a rank's datatype cannot be taken apart into bytes (see "
                                     "mpi::byte_mirror), which combining messages needs"
                                   : "automatic: every region holds one rank, nothing to combine";
  } else {
    const cost_model model = options.model ? *options.model : remembered_calibration(owned.get(), f);
    const std::vector<double> seconds = predict(candidates, f, model, owned.get());
    chosen = static_cast<size_t>(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
    std::ostringstream why;
    why << "automatic: predicted";
    for (size_t c = 0; c < candidates.size(); ++c) {
      estimates.push_back({wanted[c]->id, seconds[c]});
      why << (c ? ", " : " ") << to_string(wanted[c]->id) << " " << seconds_text(seconds[c]);
    }
    why << " per exchange (cost model: " << model.source << ")";
    reason = why.str();
  }
  auto p = std::make_unique<plan_state>();
  p->timeout_seconds = options.timeout_seconds;
  p->chosen = std::move(candidates[chosen]);
  candidates.clear();  // frees the others' requests before the plan owns the communicator
  p->owned_comm = std::move(owned);
  exchange_statistics& s = p->stats;
  s.strategy = wanted[chosen]->id;
  s.regions = static_cast<int>(f.members.size());
  s.reason = reason;
  s.estimates = estimates;
  const strategy& run = *p->chosen;
  for (const auto& ph : run.loads) {
    s.inter_region_messages += ph[inter][outbound].messages;
    s.inter_region_bytes += ph[inter][outbound].bytes;
    s.intra_region_messages += ph[intra][outbound].messages;
    s.intra_region_bytes += ph[intra][outbound].bytes;
    for (int where : {intra, inter}) {
      s.messages_sent += ph[where][outbound].messages;
      s.bytes_sent += ph[where][outbound].bytes;
      s.messages_received += ph[where][inbound].messages;
      s.bytes_received += ph[where][inbound].bytes;
    }
  }
  for (const auto& copy : run.self_copies) s.bytes_local += run.sends[static_cast<size_t>(copy.first)].bytes;
  p->owned_comm.returnable();  // set up on every rank, nothing in flight: the next plan on comm may take it
  return p;
}

}  // namespace
}  // namespace detail

neighbor_plan::neighbor_plan() = default;
neighbor_plan::neighbor_plan(std::unique_ptr<detail::plan_state> state) : state_(std::move(state)) {}
neighbor_plan::neighbor_plan(neighbor_plan&&) noexcept = default;
neighbor_plan& neighbor_plan::operator=(neighbor_plan&&) noexcept = default;
neighbor_plan::~neighbor_plan() = default;

void neighbor_plan::start() {
  if (!state_) throw invalid_argument("neighbor_plan::start on an empty plan");
  state_->start();
}
void neighbor_plan::wait() {
  if (!state_) throw invalid_argument("neighbor_plan::wait on an empty plan");
  state_->wait();
}
void neighbor_plan::execute() {
  start();
  wait();
}
bool neighbor_plan::active() const noexcept { return state_ && state_->active; }
MPI_Comm neighbor_plan::communicator() const {
  if (!state_) throw invalid_argument("neighbor_plan::communicator on an empty plan");
  return state_->owned_comm.get();
}
const exchange_statistics& neighbor_plan::statistics() const {
  if (!state_) throw invalid_argument("neighbor_plan::statistics on an empty plan");
  return state_->stats;
}

namespace {
// A plan made by `make` (every neighbor_alltoallv_init, the C API's included), counted by the trace.
template <class Make>
neighbor_plan traced_making(Make&& make) {
  return trace_detail::traced_making(
      "neighbor_plan", [&] { return neighbor_plan(make()); },
      [](const neighbor_plan& plan) { return to_string(plan.statistics().strategy); });
}
}  // namespace

neighbor_plan neighbor_alltoallv_init(const neighbor_buffers& buffers, MPI_Comm graph_comm,
                                      const exchange_options& options) {
  int topology = MPI_UNDEFINED;
  REDIST_MPI_CHECK(MPI_Topo_test(graph_comm, &topology));
  // A property of the communicator, the same on every rank: no agreement needed.
  if (topology != MPI_DIST_GRAPH)
    throw invalid_topology(
        "neighbor_alltoallv_init: the communicator is not a distributed-graph communicator "
        "(MPI_Dist_graph_create_adjacent); use the overload with explicit neighbor lists");
  int indegree = 0, outdegree = 0, weighted = 0;
  REDIST_MPI_CHECK(MPI_Dist_graph_neighbors_count(graph_comm, &indegree, &outdegree, &weighted));
  std::vector<int> sources(static_cast<size_t>(indegree)), destinations(static_cast<size_t>(outdegree));
  std::vector<int> in_weights(sources.size() + 1), out_weights(destinations.size() + 1);
  REDIST_MPI_CHECK(MPI_Dist_graph_neighbors(graph_comm, indegree, sources.data(), in_weights.data(), outdegree,
                                            destinations.data(), out_weights.data()));
  return traced_making([&] { return detail::build(sources, destinations, buffers, graph_comm, options); });
}

neighbor_plan neighbor_alltoallv_init(const std::vector<int>& sources, const std::vector<int>& destinations,
                                      const neighbor_buffers& buffers, MPI_Comm comm, const exchange_options& options) {
  return traced_making([&] { return detail::build(sources, destinations, buffers, comm, options); });
}

neighbor_plan make_neighbor_plan(MPI_Comm comm, const neighbor_description& description,
                                 const exchange_options& options) {
  if (description.edges_of_graph_communicator) {
    // Agreed: a rank that passed lists as well would otherwise leave the others in the plan's collectives.
    mpi::agree_on(comm, mpi::error_kind::invalid_argument,
                  description.sources.empty() && description.destinations.empty()
                      ? ""
                      : "make_neighbor_plan: edges_of_graph_communicator is set and the edge lists are not empty; "
                        "expected one or the other");
    return neighbor_alltoallv_init(description.buffers, comm, options);
  }
  return neighbor_alltoallv_init(description.sources, description.destinations, description.buffers, comm, options);
}

}  // namespace redist::exchange
