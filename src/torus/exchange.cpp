// SPDX-License-Identifier: BSD-3-Clause
// Routed permutation exchanges: planning (allgather of the permutation, routing, this rank's roles) and
// execution (one progress loop over the rank's roles as source, destination and intermediate).
#include "redist/torus/exchange.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "field_hash.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"

namespace redist::torus {

namespace {

// Tags on the plan's own communicator. The three kinds of traffic get their own tag because one pair of
// ranks can carry two of them in one phase: a's own message to its intermediate b (first leg) while a
// forwards another pair's chunks to their destination b (second leg).
constexpr int direct_tag = 7401;      // whole messages, source to destination
constexpr int first_leg_tag = 7402;   // chunks, source to intermediate
constexpr int second_leg_tag = 7403;  // chunks, intermediate to destination
// Phases run at once (phase_schedule::concurrent) take three tags each, phase k these plus 3 k, so that the
// chunks of two phases between the same two ranks cannot match each other's receives; within the 32767 every
// MPI allows.
constexpr int tags_per_phase = 3;
constexpr std::size_t most_concurrent_phases = (32767 - second_leg_tag) / tags_per_phase + 1;

// Chunks a source (destination) keeps in flight to (from) the intermediate: twice the relay's slots, so the
// next chunks are already posted when a slot frees. Chunk sends are synchronous (MPI_Issend), so at most
// this many chunks wait unexpected at the intermediate even where small chunks would go eagerly: no
// buffering grows with the message anywhere.
constexpr std::int64_t chunk_window = 2 * relay_slots;

std::int64_t chunks_of(std::int64_t bytes, std::int64_t chunk) { return chunk > 0 ? (bytes + chunk - 1) / chunk : 0; }

}  // namespace

std::int64_t chunk_bytes(std::int64_t message_bytes, std::int64_t beta) {
  if (message_bytes < 0 || beta < 1)
    throw invalid_argument("chunk_bytes: message of " + std::to_string(message_bytes) + " bytes in " +
                           std::to_string(beta) + " chunks; expected bytes >= 0 and beta >= 1");
  if (message_bytes == 0) return 0;
  const std::int64_t even = message_bytes / beta + (message_bytes % beta != 0 ? 1 : 0);
  return std::min(message_bytes, std::max(even, min_chunk_bytes));
}

namespace detail {

// A pair this rank forwards: chunks arrive from `source` into a ring of staging slots and leave for
// `destination` in the same order.
struct forwarded_pair {
  int source = 0;
  int destination = 0;
  std::int64_t bytes = 0;
  std::int64_t chunk = 0;
  std::int64_t slots = 0;           // min(relay_slots, chunks)
  std::int64_t staging_offset = 0;  // of the pair's slots in the staging buffer
};

struct routed_exchange {
  std::shared_ptr<const mpi::comm_handle> comm;  // shared by the phases of one routed_phases_plan
  int rank = 0;
  routed_permutation routes;
  int destination = 0, source = 0;
  std::int64_t send_bytes = 0, receive_bytes = 0;
  int send_via = -1;            // intermediate of this rank's message (-1: directly or no message)
  int receive_via = -1;         // intermediate of the message this rank receives
  std::int64_t send_chunk = 0;  // chunk bytes of the routed message this rank sends (0: not routed)
  std::int64_t receive_chunk = 0;
  std::vector<forwarded_pair> forwards;
  std::int64_t forwarded_bytes = 0;
  // Staging slots of the forwarded pairs: one buffer shared by the phases of a routed_phases_plan, sized for the
  // phase that needs most when they run one after another, each phase its own part of it when they run at once.
  std::shared_ptr<std::byte[]> staging;
  int tag_offset = 0;  // added to the three tags: 0, or tags_per_phase * k for phase k run at once with others

  void run(const void* send, void* recv) const { run_together({this}, {send}, {recv}); }
  // Runs the given exchanges (on one communicator, with distinct tags or one alone) in one progress loop.
  static void run_together(const std::vector<const routed_exchange*>& exchanges, const std::vector<const void*>& sends,
                           const std::vector<void*>& recvs);
  std::string buffer_problem(const void* send, const void* recv) const;
};

std::string routed_exchange::buffer_problem(const void* send, const void* recv) const {
  if (send == nullptr && send_bytes > 0)
    return "routed permutation: null send buffer on a rank that sends " + std::to_string(send_bytes) + " bytes";
  if (recv == nullptr && receive_bytes > 0)
    return "routed permutation: null receive buffer on a rank that receives " + std::to_string(receive_bytes) +
           " bytes";
  return {};
}

void routed_exchange::run_together(const std::vector<const routed_exchange*>& exchanges,
                                   const std::vector<const void*>& sends, const std::vector<void*>& recvs) {
  if (exchanges.empty()) return;
  MPI_Comm c = exchanges.front()->comm->get();
  const mpi::discard_if_thrown exchange(*exchanges.front()->comm);

  // A message sent (from) or received (into) chunk by chunk through a ring of `window` requests: chunk k
  // uses request first + k % window and is posted only after chunk k - 1, so that MPI's in-order matching
  // between two ranks pairs the k-th send with the k-th receive. A direct message is one chunk.
  struct stream {
    const std::byte* from = nullptr;  // set for a send
    std::byte* into = nullptr;        // set for a receive
    bool synchronous = false;
    int peer = 0, tag = 0;
    std::int64_t bytes = 0, chunk = 0, chunks = 0, posted = 0;
    std::size_t first = 0, window = 1;
  };
  // A forwarded pair's slots: chunk k goes through slot k % slots, received (receiving -> holding), then
  // sent on (sending -> free) strictly in chunk order.
  enum class slot_state : unsigned char { free, receiving, holding, sending };
  struct relay {
    const forwarded_pair* pair = nullptr;
    std::byte* slots_base = nullptr;
    int first_tag = 0, second_tag = 0;
    std::int64_t chunks = 0, posted = 0, forwarded = 0;
    std::size_t first = 0;
    std::vector<slot_state> state;
  };
  // Who owns request i: streams[index] (relay_slot < 0) or slot relay_slot of relays[index].
  struct owner {
    std::size_t index = 0;
    std::int64_t relay_slot = -1;
  };

  std::vector<stream> streams;
  std::vector<relay> relays;
  std::vector<owner> owners;
  auto add_stream = [&](stream s) {
    s.chunks = chunks_of(s.bytes, s.chunk);
    s.window = static_cast<std::size_t>(std::min<std::int64_t>(s.chunks, chunk_window));
    s.first = owners.size();
    for (std::size_t k = 0; k < s.window; ++k) owners.push_back({streams.size(), -1});
    streams.push_back(s);
  };
  for (std::size_t k = 0; k < exchanges.size(); ++k) {
    const routed_exchange& x = *exchanges[k];
    const auto* send = static_cast<const std::byte*>(sends[k]);
    auto* recv = static_cast<std::byte*>(recvs[k]);
    if (x.destination == x.rank && x.send_bytes > 0 && send != recv)
      std::memcpy(recv, send, static_cast<std::size_t>(x.send_bytes));
    const int direct = direct_tag + x.tag_offset, first_leg = first_leg_tag + x.tag_offset,
              second_leg = second_leg_tag + x.tag_offset;
    if (x.destination != x.rank && x.send_bytes > 0) {
      if (x.send_via >= 0)
        add_stream({send, nullptr, true, x.send_via, first_leg, x.send_bytes, x.send_chunk});
      else
        add_stream({send, nullptr, false, x.destination, direct, x.send_bytes, x.send_bytes});
    }
    if (x.source != x.rank && x.receive_bytes > 0) {
      if (x.receive_via >= 0)
        add_stream({nullptr, recv, false, x.receive_via, second_leg, x.receive_bytes, x.receive_chunk});
      else
        add_stream({nullptr, recv, false, x.source, direct, x.receive_bytes, x.receive_bytes});
    }
    for (const forwarded_pair& f : x.forwards) {
      relay r;
      r.pair = &f;
      r.slots_base = x.staging.get() + f.staging_offset;
      r.first_tag = first_leg;
      r.second_tag = second_leg;
      r.chunks = chunks_of(f.bytes, f.chunk);
      r.first = owners.size();
      r.state.assign(static_cast<std::size_t>(f.slots), slot_state::free);
      for (std::int64_t slot = 0; slot < f.slots; ++slot) owners.push_back({relays.size(), slot});
      relays.push_back(std::move(r));
    }
  }
  if (owners.empty()) return;

  std::vector<MPI_Request> requests(owners.size(), MPI_REQUEST_NULL);
  // Kept per request while it is in flight: a message above 2 GiB needs a derived datatype.
  std::vector<mpi::byte_message> types(owners.size());
  auto post_send = [&](std::size_t i, bool synchronous, const std::byte* from, std::int64_t bytes, int peer, int tag) {
    types[i] = mpi::describe_bytes(bytes);
    const mpi::byte_message& t = types[i];
    if (synchronous)
      REDIST_MPI_CHECK(MPI_Issend(from, t.count, t.type, peer, tag, c, &requests[i]));
    else
      REDIST_MPI_CHECK(MPI_Isend(from, t.count, t.type, peer, tag, c, &requests[i]));
  };
  auto post_receive = [&](std::size_t i, std::byte* into, std::int64_t bytes, int peer, int tag) {
    types[i] = mpi::describe_bytes(bytes);
    REDIST_MPI_CHECK(MPI_Irecv(into, types[i].count, types[i].type, peer, tag, c, &requests[i]));
  };
  auto advance_stream = [&](stream& s) {
    while (s.posted < s.chunks) {
      const std::size_t i = s.first + static_cast<std::size_t>(s.posted) % s.window;
      if (requests[i] != MPI_REQUEST_NULL) return;
      const std::int64_t offset = s.posted * s.chunk, bytes = std::min(s.chunk, s.bytes - offset);
      if (s.from)
        post_send(i, s.synchronous, s.from + offset, bytes, s.peer, s.tag);
      else
        post_receive(i, s.into + offset, bytes, s.peer, s.tag);
      ++s.posted;
    }
  };
  auto advance_relay = [&](relay& r) {
    const forwarded_pair& f = *r.pair;
    while (r.forwarded < r.posted) {  // forward what arrived, in order
      const auto slot = static_cast<std::size_t>(r.forwarded % f.slots);
      if (r.state[slot] != slot_state::holding) break;
      const std::int64_t offset = r.forwarded * f.chunk;
      post_send(r.first + slot, true, r.slots_base + static_cast<std::int64_t>(slot) * f.chunk,
                std::min(f.chunk, f.bytes - offset), f.destination, r.second_tag);
      r.state[slot] = slot_state::sending;
      ++r.forwarded;
    }
    while (r.posted < r.chunks) {  // receive the next chunks into free slots
      const auto slot = static_cast<std::size_t>(r.posted % f.slots);
      if (r.state[slot] != slot_state::free) break;
      const std::int64_t offset = r.posted * f.chunk;
      post_receive(r.first + slot, r.slots_base + static_cast<std::int64_t>(slot) * f.chunk,
                   std::min(f.chunk, f.bytes - offset), f.source, r.first_tag);
      r.state[slot] = slot_state::receiving;
      ++r.posted;
    }
  };
  // Receives first, so that the first chunks find them posted.
  for (stream& s : streams)
    if (s.into) advance_stream(s);
  for (relay& r : relays) advance_relay(r);
  for (stream& s : streams)
    if (s.from) advance_stream(s);

  // One loop over every role of this rank: each completion posts what it made possible (the next chunk of
  // a stream, the forward of a received chunk, the receive into a freed slot). Once nothing is in flight,
  // everything has been posted and completed.
  std::vector<int> completed(requests.size());
  for (;;) {
    int count = 0;
    REDIST_MPI_CHECK(
        mpi::wait_some_yielding(static_cast<int>(requests.size()), requests.data(), &count, completed.data(), c));
    if (count == MPI_UNDEFINED) break;
    for (int k = 0; k < count; ++k) {
      const owner& o = owners[static_cast<std::size_t>(completed[static_cast<std::size_t>(k)])];
      if (o.relay_slot < 0) {
        advance_stream(streams[o.index]);
        continue;
      }
      relay& r = relays[o.index];
      slot_state& st = r.state[static_cast<std::size_t>(o.relay_slot)];
      st = st == slot_state::receiving ? slot_state::holding : slot_state::free;
      advance_relay(r);
    }
  }
}

}  // namespace detail

namespace {

// What every rank must describe alike: the machine and the routing options.
std::uint64_t description_hash(const machine& m, const routing_options& o) {
  field_hash h;
  h.add(m.network.dimensions());
  for (int d = 0; d < 3; ++d) h.add_all(m.network.extent(d), m.network.wraps(d));
  for (int r = 0; r < m.mapping.ranks(); ++r) h.add(m.mapping.node_of_rank(r));
  h.add_all(o.mode, o.alpha, o.beta, o.gamma, o.delta, o.choice, o.hardware, o.phases);
  h.add_all(o.model.link_bandwidth, o.model.injection_bandwidth, o.model.message_latency, o.model.hop_latency,
            o.model.forwarding_cost, o.model.message_bytes);
  return h.value();
}

std::string phase_name(std::size_t phases, std::size_t k) {
  return phases > 1 ? "phase " + std::to_string(k) + ": " : std::string();
}

// The routed exchanges of all phases, sharing one duplicate of comm and one staging buffer.
std::vector<std::unique_ptr<detail::routed_exchange>> plan_phases(MPI_Comm comm, const machine& m,
                                                                  const std::vector<int>& destination_rank,
                                                                  const std::vector<std::int64_t>& send_bytes,
                                                                  const routing_options& options) {
  const int me = mpi::rank(comm);
  const int nranks = mpi::size(comm);
  const std::size_t phases = destination_rank.size();

  // ---- local validation, agreed before anything else (the phase count rides along: the allgather below
  // needs the same count on every rank) ----
  std::string problem;
  if (send_bytes.size() != phases)
    problem = "routed phases: " + std::to_string(phases) + " destinations but " + std::to_string(send_bytes.size()) +
              " message sizes; expected one of each per phase";
  else if (nranks != m.network.nodes())
    problem = "torus dims " + m.network.to_string() + " describe " + std::to_string(m.network.nodes()) +
              " nodes, the communicator has " + std::to_string(nranks) + " ranks; expected one rank per node";
  else if (m.mapping.ranks() != m.network.nodes())
    problem = "the rank mapping places " + std::to_string(m.mapping.ranks()) + " ranks but torus dims " +
              m.network.to_string() + " have " + std::to_string(m.network.nodes()) +
              " nodes; build it for the same topology";
  if (problem.empty()) {
    try {
      validate(options);
    } catch (const invalid_argument& e) {
      problem = e.what();
    }
  }
  if (problem.empty() && options.phases == phase_schedule::concurrent && phases > most_concurrent_phases)
    problem = "routed phases: " + std::to_string(phases) + " phases run at once (phase_schedule::concurrent) need " +
              std::to_string(tags_per_phase * phases) + " tags; expected at most " +
              std::to_string(most_concurrent_phases) + " phases (or phase_schedule::sequential)";
  for (std::size_t k = 0; k < phases && problem.empty(); ++k) {
    if (destination_rank[k] < 0 || destination_rank[k] >= nranks)
      problem = phase_name(phases, k) + "destination rank " + std::to_string(destination_rank[k]) +
                " is outside the communicator of " + std::to_string(nranks) + " ranks";
    else if (send_bytes[k] < 0)
      problem = phase_name(phases, k) + "message of " + std::to_string(send_bytes[k]) + " bytes; expected a size >= 0";
  }
  mpi::agreement agreed(comm);
  if (!problem.empty()) agreed.fail(mpi::error_kind::invalid_argument, problem);
  const std::size_t fewest = agreed.reduce_min(static_cast<std::int64_t>(phases));
  const std::size_t most = agreed.reduce_max(static_cast<std::int64_t>(phases));
  agreed.conclude();
  if (agreed.min(fewest) != agreed.max(most))
    throw inconsistent_ranks("routed phases: ranks passed between " + std::to_string(agreed.min(fewest)) + " and " +
                             std::to_string(agreed.max(most)) + " phases; every rank must pass the same number");

  // ---- every rank's destinations and sizes (and its description's hash), O(phases * P), then the plan's
  // resources (its communicator, the routes, the staging buffer), under one agreement: a rank that fails to get
  // its part makes every rank throw instead of leaving them in the first exchange. Every rank decides on the same
  // gathered data (kept by a rank whose step fails after the call). ----
  const std::size_t row = 2 * phases + 1;
  std::vector<std::int64_t> mine(row), all(row * static_cast<std::size_t>(nranks));
  for (std::size_t k = 0; k < phases; ++k) {
    mine[k] = destination_rank[k];
    mine[phases + k] = send_bytes[k];
  }
  mine[2 * phases] = static_cast<std::int64_t>(description_hash(m, options));
  auto at = [&](int r, std::size_t word) { return all[static_cast<std::size_t>(r) * row + word]; };
  std::shared_ptr<mpi::comm_handle> shared_comm;
  std::vector<std::unique_ptr<detail::routed_exchange>> out;
  mpi::agreement acquired(comm);
  acquired.collective([&] {
    REDIST_MPI_CHECK(redist::mpi::allgather_yielding(mine.data(), static_cast<int>(row), MPI_INT64_T, all.data(),
                                                     static_cast<int>(row), MPI_INT64_T, comm));
  });
  for (int r = 1; r < nranks && !acquired.failed(); ++r)
    if (at(r, 2 * phases) != at(0, 2 * phases))
      acquired.fail(mpi::error_kind::inconsistent_ranks,
                    "routed permutation: rank " + std::to_string(r) +
                        " describes a different torus, rank mapping or routing options than rank 0; every rank must "
                        "pass the same machine and routing_options");
  // A duplicate that a dropped routed plan on comm gave back, where there is one (mpi::plan_duplicate).
  acquired.collective([&] { shared_comm = std::make_shared<mpi::comm_handle>(mpi::plan_duplicate(comm)); });
  const bool concurrent = options.phases == phase_schedule::concurrent;
  acquired.attempt([&] {
    std::int64_t staging_bytes = 0;
    std::vector<std::int64_t> staging_base(phases, 0);  // of each phase's part of the staging buffer
    for (std::size_t k = 0; k < phases; ++k) {
      std::vector<int> sender(static_cast<std::size_t>(nranks), -1);  // by destination rank
      std::vector<int> destination_node(static_cast<std::size_t>(nranks));
      std::int64_t largest = 0;
      for (int r = 0; r < nranks; ++r) {
        const int d = static_cast<int>(at(r, k));
        if (sender[static_cast<std::size_t>(d)] >= 0)
          throw invalid_argument(phase_name(phases, k) + "ranks " +
                                 std::to_string(sender[static_cast<std::size_t>(d)]) + " and " + std::to_string(r) +
                                 " both send to rank " + std::to_string(d) +
                                 "; the destinations must form a permutation of the ranks");
        sender[static_cast<std::size_t>(d)] = r;
        // Empty messages are left out of the routing: they would only take intermediates from real ones.
        destination_node[static_cast<std::size_t>(m.mapping.node_of_rank(r))] =
            at(r, phases + k) > 0 ? m.mapping.node_of_rank(d) : -1;
        largest = std::max(largest, at(r, phases + k));
      }
      routing_options o = options;
      if (largest > 0) o.model.message_bytes = largest;

      auto x = std::make_unique<detail::routed_exchange>();
      x->comm = shared_comm;
      x->rank = me;
      x->routes = route_permutation(m.network, destination_node, o);
      x->destination = destination_rank[k];
      x->send_bytes = send_bytes[k];
      x->source = sender[static_cast<std::size_t>(me)];
      x->receive_bytes = at(x->source, phases + k);
      x->tag_offset = concurrent ? tags_per_phase * static_cast<int>(k) : 0;
      std::int64_t staging = 0;
      for (const route& rt : x->routes.routes) {
        const int src = m.mapping.rank_of_node(rt.source), dst = m.mapping.rank_of_node(rt.destination);
        const std::int64_t bytes = at(src, phases + k);
        if (rt.via < 0) continue;  // directly
        const int via = m.mapping.rank_of_node(rt.via);
        const std::int64_t chunk = chunk_bytes(bytes, o.beta);
        if (src == me) {
          x->send_via = via;
          x->send_chunk = chunk;
        }
        if (dst == me) {
          x->receive_via = via;
          x->receive_chunk = chunk;
        }
        if (via == me) {
          detail::forwarded_pair f;
          f.source = src;
          f.destination = dst;
          f.bytes = bytes;
          f.chunk = chunk;
          f.slots = std::min<std::int64_t>(relay_slots, chunks_of(bytes, chunk));
          f.staging_offset = staging;
          staging += f.slots * chunk;
          x->forwarded_bytes += bytes;
          x->forwards.push_back(f);
        }
      }
      if (concurrent) {
        staging_base[k] = staging_bytes;
        staging_bytes += staging;
      } else {
        staging_bytes = std::max(staging_bytes, staging);
      }
      out.push_back(std::move(x));
    }
    if (staging_bytes > 0) {
      std::shared_ptr<std::byte[]> staging(new std::byte[static_cast<std::size_t>(staging_bytes)]);
      for (std::size_t k = 0; k < phases; ++k)  // aliases of the one buffer, at each phase's part
        out[k]->staging = std::shared_ptr<std::byte[]>(staging, staging.get() + staging_base[k]);
    }
  });
  acquired.conclude();
  shared_comm->returnable();  // set up on every rank, nothing in flight: it may serve the next plan once this one dies
  return out;
}

}  // namespace

routed_permutation_plan::routed_permutation_plan() = default;
routed_permutation_plan::~routed_permutation_plan() = default;
routed_permutation_plan::routed_permutation_plan(routed_permutation_plan&&) noexcept = default;
routed_permutation_plan& routed_permutation_plan::operator=(routed_permutation_plan&&) noexcept = default;
routed_permutation_plan::routed_permutation_plan(std::unique_ptr<detail::routed_exchange> state)
    : state_(std::move(state)) {}

namespace {
const detail::routed_exchange& state_of(const std::unique_ptr<detail::routed_exchange>& s) {
  if (!s)
    throw invalid_argument("use of an empty routed_permutation_plan (build it with make_routed_permutation_plan)");
  return *s;
}
}  // namespace

void routed_permutation_plan::execute(void* recv, const void* send) const {
  const detail::routed_exchange& s = state_of(state_);
  const std::string problem = s.buffer_problem(send, recv);
  mpi::agree_on(s.comm->get(), mpi::error_kind::invalid_argument, problem);
  s.run(send, recv);
}

const routed_permutation& routed_permutation_plan::routes() const { return state_of(state_).routes; }
int routed_permutation_plan::destination() const { return state_of(state_).destination; }
int routed_permutation_plan::source() const { return state_of(state_).source; }
std::int64_t routed_permutation_plan::send_bytes() const { return state_of(state_).send_bytes; }
std::int64_t routed_permutation_plan::receive_bytes() const { return state_of(state_).receive_bytes; }
int routed_permutation_plan::send_via() const { return state_of(state_).send_via; }
std::int64_t routed_permutation_plan::send_chunk_bytes() const {
  const detail::routed_exchange& s = state_of(state_);
  if (s.destination == s.rank) return 0;
  return s.send_via >= 0 ? s.send_chunk : s.send_bytes;
}
std::int64_t routed_permutation_plan::forwarded_pairs() const {
  return static_cast<std::int64_t>(state_of(state_).forwards.size());
}
std::int64_t routed_permutation_plan::forwarded_bytes() const { return state_of(state_).forwarded_bytes; }
traffic_statistics routed_permutation_plan::statistics() const {
  const detail::routed_exchange& s = state_of(state_);
  traffic_statistics t;
  const auto forwarded = static_cast<std::int64_t>(s.forwards.size());
  t.bytes_sent = t.bytes_received = s.forwarded_bytes;
  t.messages_sent = t.messages_received = forwarded;
  if (s.destination == s.rank) {
    t.bytes_local = s.send_bytes;
  } else if (s.send_bytes > 0) {
    t.bytes_sent += s.send_bytes;
    t.messages_sent += 1;
  }
  if (s.source != s.rank && s.receive_bytes > 0) {
    t.bytes_received += s.receive_bytes;
    t.messages_received += 1;
  }
  return t;
}
MPI_Comm routed_permutation_plan::communicator() const { return state_of(state_).comm->get(); }

routed_permutation_plan make_routed_permutation_plan(MPI_Comm comm, const machine& m, int destination_rank,
                                                     std::int64_t send_bytes, const routing_options& options) {
  auto phases = plan_phases(comm, m, {destination_rank}, {send_bytes}, options);
  return routed_permutation_plan(std::move(phases.front()));
}

routed_phases_plan::routed_phases_plan() = default;
routed_phases_plan::~routed_phases_plan() = default;
routed_phases_plan::routed_phases_plan(routed_phases_plan&&) noexcept = default;
routed_phases_plan& routed_phases_plan::operator=(routed_phases_plan&&) noexcept = default;

void routed_phases_plan::execute(const std::vector<void*>& recv, const std::vector<const void*>& send,
                                 const std::function<void(int)>& after_phase) const {
  if (phases_.empty()) return;
  std::string problem;
  if (send.size() != phases_.size() || recv.size() != phases_.size())
    problem = "routed phases: " + std::to_string(send.size()) + " send and " + std::to_string(recv.size()) +
              " receive buffers for a plan of " + std::to_string(phases_.size()) +
              " phases; expected one each per phase";
  for (std::size_t k = 0; k < phases_.size() && problem.empty(); ++k) {
    problem = phases_[k].state_->buffer_problem(send[k], recv[k]);
    if (!problem.empty()) problem = "phase " + std::to_string(k) + ": " + problem;
  }
  mpi::agree_on(phases_.front().communicator(), mpi::error_kind::invalid_argument, problem);
  if (schedule_ == phase_schedule::concurrent) {
    std::vector<const detail::routed_exchange*> all;
    for (const routed_permutation_plan& phase : phases_) all.push_back(phase.state_.get());
    detail::routed_exchange::run_together(all, send, recv);
    if (after_phase)
      for (std::size_t k = 0; k < phases_.size(); ++k) after_phase(static_cast<int>(k));
    return;
  }
  for (std::size_t k = 0; k < phases_.size(); ++k) {
    phases_[k].state_->run(send[k], recv[k]);
    if (after_phase) after_phase(static_cast<int>(k));
  }
}

routed_phases_plan make_routed_phases_plan(MPI_Comm comm, const machine& m, const std::vector<int>& destination_rank,
                                           const std::vector<std::int64_t>& send_bytes,
                                           const routing_options& options) {
  routed_phases_plan plan;
  plan.schedule_ = options.phases;
  for (auto& x : plan_phases(comm, m, destination_rank, send_bytes, options))
    plan.phases_.push_back(routed_permutation_plan(std::move(x)));
  return plan;
}

}  // namespace redist::torus
