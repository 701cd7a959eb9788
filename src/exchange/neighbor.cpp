// The persistent neighborhood alltoallv engine: setup (validation, regions, strategy) and the strategies.
//
// Messages of the standard strategy and the fully local messages of the other strategies use the caller's
// datatypes directly (no copy). Aggregated data travels as bytes, so that segments of different edges can
// share one message whatever the datatypes: a segment holds the signature bytes of its edge, count *
// MPI_Type_size bytes, copied by MPI through the byte mirror of the rank's datatype (src/mpi/compat.hpp), not
// by MPI_Pack, whose format (and size: MPI_Pack_size is a bound) is the implementation's; dedup picks single
// elements, MPI_Type_size bytes each, out of such buffers.
//
// Tags, per ordered pair of ranks: 4 * k + phase, where phase 0 is a direct message (k: the edge's
// occurrence among the edges between the two ranks, so that repeated edges match in order), 1 the gather
// to a region's sender (k: the destination region), 2 the inter-region message, 3 the scatter from a
// region's receiver (k: the source region).
#include "redist/exchange/neighbor.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>

#include "redist/error.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/compat.hpp"
#include "../mpi/checked.hpp"

namespace redist::exchange {

namespace detail {
namespace {

enum phase_tag : int { direct_phase = 0, gather_phase = 1, global_phase = 2, scatter_phase = 3 };
int tag_of(std::int64_t k, phase_tag phase) { return static_cast<int>(4 * k + phase); }

// One edge of the caller's send or receive side.
struct edge {
  int peer = 0;
  std::int64_t count = 0;
  std::int64_t displacement = 0;  // in elements of the datatype's extent, as the caller gave it
  std::int64_t offset = 0;        // bytes from the buffer's start: displacement * extent
  std::int64_t bytes = 0;         // signature bytes: count * MPI_Type_size
  int occurrence = 0;             // how many earlier edges of this side have the same peer
};

// An edge's data at an offset of a staging buffer.
struct segment {
  int edge = 0;
  std::int64_t offset = 0;
};

struct datatype_info {
  std::int64_t size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};

datatype_info describe(MPI_Datatype t) {
  const mpi::type_bounds bounds = mpi::type_extent(t), true_bounds = mpi::type_true_extent(t);
  return {mpi::type_size(t), bounds.lb, bounds.extent, true_bounds.lb, true_bounds.extent};
}

// Messages and bytes one rank sends and receives per cycle, by phase, locality and direction: the
// statistics and the cost model's input.
struct load {
  std::int64_t messages = 0, bytes = 0;
};
enum locality : int { intra = 0, inter = 1 };
enum direction : int { outbound = 0, inbound = 1 };
using load_table = std::array<std::array<std::array<load, 2>, 2>, 4>;  // [phase][locality][direction]

}  // namespace

// The byte mirrors of a rank's send and receive datatypes (mpi::byte_mirror), shared by the candidates.
struct byte_types {
  mpi::datatype_handle send, recv;
};

struct plan_state {
  MPI_Comm comm = MPI_COMM_NULL;  // the duplicate in owned_comm: the plan's messages never match the caller's
  mpi::comm_handle owned_comm;    // set on the plan that is kept (candidates share one duplicate)
  const char* sendbuf = nullptr;
  char* recvbuf = nullptr;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  std::shared_ptr<const byte_types> bytes;  // for the aggregate and dedup strategies
  std::vector<edge> sends, recvs;
  exchange_statistics stats;
  load_table loads{};
  std::int64_t copied_bytes = 0;  // packed plus unpacked bytes per cycle
  bool active = false;

  // Direct messages (all of standard's, the fully local ones of the others) and copies to self.
  std::vector<MPI_Request> direct;
  std::vector<std::pair<int, int>> self_copies;  // (send edge, receive edge)

  // Aggregate: gather to the region's senders, one message per region pair, scatter from the receivers.
  struct outgoing_stage {  // this rank's data for one destination region, to that pair's sender
    std::vector<char> buffer;
    std::vector<segment> segments;
  };
  struct pair_buffer {  // one region pair's message at its sender or receiver
    std::vector<char> buffer;
    std::vector<segment> own;  // this rank's send edges packed in place (sender) / receive edges (receiver)
  };
  struct incoming_stage {  // this rank's data from one source region, from that pair's receiver
    std::vector<char> buffer;
    std::vector<segment> segments;
  };
  std::vector<outgoing_stage> outgoing;
  std::vector<pair_buffer> global_out, global_in;
  std::vector<incoming_stage> incoming;

  // Dedup: elements picked from the send buffer by a datatype of their places (one pack per region), and
  // put at their receive places by another (one unpack per source region).
  struct typed_pack {
    MPI_Datatype places = MPI_DATATYPE_NULL;  // count 1 over sendbuf
    std::int64_t bytes = 0;
    char* out = nullptr;
  };
  struct typed_unpack {
    const char* in = nullptr;
    std::int64_t bytes = 0;
    MPI_Datatype places = MPI_DATATYPE_NULL;  // count 1 over recvbuf
  };
  struct element_pick {  // a receiver's own elements, picked out of a pair message before unpacking
    const char* from = nullptr;
    std::int64_t element_bytes = 0;
    std::vector<std::int64_t> offsets;
    std::vector<char> scratch;
    MPI_Datatype places = MPI_DATATYPE_NULL;
  };
  std::vector<std::vector<char>> dedup_buffers;  // storage: a moved vector keeps its data's address
  std::vector<typed_pack> typed_packs;
  std::vector<element_pick> own_picks;
  std::vector<typed_unpack> incoming_unpacks;

  std::vector<MPI_Request> gather, global_sends, global_recvs, scatter_sends, scatter_recvs;
  std::vector<mpi::datatype_handle> owned_types;  // also those built for the requests' large counts

  plan_state() = default;
  plan_state(const plan_state&) = delete;
  plan_state& operator=(const plan_state&) = delete;
  ~plan_state() {
    if (mpi::finalized()) return;
    for (auto* list : {&direct, &gather, &global_sends, &global_recvs, &scatter_sends, &scatter_recvs})
      for (MPI_Request& r : *list)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }

  // An edge's signature bytes to / from a staging buffer; places (over the buffers, built on the byte
  // mirrors) likewise.
  void pack(const edge& e, char* out) const {
    mpi::local_copy(sendbuf + e.offset, e.count, bytes->send.get(), out, e.bytes, MPI_BYTE, comm);
  }
  void unpack(const char* in, const edge& e) const {
    mpi::local_copy(in, e.bytes, MPI_BYTE, recvbuf + e.offset, e.count, bytes->recv.get(), comm);
  }
  void pack(const typed_pack& t) const { mpi::local_copy(sendbuf, 1, t.places, t.out, t.bytes, MPI_BYTE, comm); }
  void unpack(const char* in, std::int64_t size, MPI_Datatype places) const {
    mpi::local_copy(in, size, MPI_BYTE, recvbuf, 1, places, comm);
  }
  static void start_all(std::vector<MPI_Request>& r) {
    if (!r.empty()) REDIST_MPI_CHECK(MPI_Startall(static_cast<int>(r.size()), r.data()));
  }
  static void wait_all(std::vector<MPI_Request>& r) {
    if (!r.empty()) REDIST_MPI_CHECK(MPI_Waitall(static_cast<int>(r.size()), r.data(), MPI_STATUSES_IGNORE));
  }

  void start() {
    if (active) throw invalid_argument("neighbor_plan::start: the previous exchange was not waited for");
    start_all(direct);
    start_all(global_recvs);
    start_all(scatter_recvs);
    for (auto [s, r] : self_copies)  // the caller's datatypes on both sides: one copy
      mpi::local_copy(sendbuf + sends[s].offset, sends[s].count, sendtype, recvbuf + recvs[r].offset, recvs[r].count,
                      recvtype, comm);
    // The region's senders need every contribution before the inter-region message can leave (Alg. 5).
    for (outgoing_stage& o : outgoing)
      for (const segment& s : o.segments) pack(sends[s.edge], o.buffer.data() + s.offset);
    for (pair_buffer& g : global_out)
      for (const segment& s : g.own) pack(sends[s.edge], g.buffer.data() + s.offset);
    for (const typed_pack& t : typed_packs) pack(t);
    start_all(gather);
    wait_all(gather);
    start_all(global_sends);
    active = true;
  }

  void wait() {
    if (!active) throw invalid_argument("neighbor_plan::wait: no exchange was started");
    wait_all(direct);
    wait_all(global_sends);
    wait_all(global_recvs);
    // Alg. 6: the scatter within the region follows the inter-region messages.
    start_all(scatter_sends);
    for (const pair_buffer& g : global_in)
      for (const segment& s : g.own) unpack(g.buffer.data() + s.offset, recvs[s.edge]);
    for (element_pick& pick : own_picks) {
      for (size_t k = 0; k < pick.offsets.size(); ++k)
        std::memcpy(pick.scratch.data() + k * pick.element_bytes, pick.from + pick.offsets[k],
                    static_cast<size_t>(pick.element_bytes));
      unpack(pick.scratch.data(), static_cast<std::int64_t>(pick.scratch.size()), pick.places);
    }
    wait_all(scatter_sends);
    wait_all(scatter_recvs);
    for (const incoming_stage& in : incoming)
      for (const segment& s : in.segments) unpack(in.buffer.data() + s.offset, recvs[s.edge]);
    for (const typed_unpack& u : incoming_unpacks) unpack(u.in, u.bytes, u.places);
    active = false;
  }
};

namespace {

// Everything the setup learns before building requests.
struct layout_facts {
  int me = 0, nranks = 0;
  std::vector<int> region_of;                // per rank, dense ids numbered by their lowest rank
  std::vector<std::vector<int>> members;     // per region, ascending
  int max_region_size = 0;
  // The rank of region a that sends (receives) the message of the region pair (a, b): round-robin over
  // the region's ranks by the other region's id, so that a region's pairs spread over its ranks.
  int sender(int a, int b) const { return members[a][b % members[a].size()]; }
  int receiver(int b, int a) const { return members[b][a % members[b].size()]; }
};

std::string check_side(const char* side, const char* counts_name, const std::vector<int>& peers,
                       const edge_array& counts, const edge_array& displs, MPI_Datatype type, const void* buf, std::int64_t capacity,
                       std::int64_t entries, int nranks, std::vector<edge>& edges, bool check_overlap) {
  const auto degree = static_cast<std::int64_t>(peers.size());
  if (entries == -2)
    return std::string(side) + ": the neighbor list, counts and displacements disagree in length (or the degree is negative)";
  if (entries >= 0 && entries != degree)
    return std::string(side) + ": " + std::to_string(entries) + " counts for " + std::to_string(degree) +
           " neighbors";
  if (degree > 0 && (counts.empty() || displs.empty()))
    return std::string(side) + ": null counts or displacements for " + std::to_string(degree) + " neighbors";
  if (type == MPI_DATATYPE_NULL) return std::string(side) + ": datatype is MPI_DATATYPE_NULL";
  const datatype_info t = describe(type);
  std::map<int, int> seen;
  edges.resize(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    edge& e = edges[i];
    e.peer = peers[i];
    if (e.peer < 0 || e.peer >= nranks)
      return std::string(side) + ": neighbor " + std::to_string(i) + " is rank " + std::to_string(e.peer) +
             ", outside [0, " + std::to_string(nranks) + ")";
    e.occurrence = seen[e.peer]++;
    e.count = counts[i];
    if (e.count < 0) return std::string(counts_name) + "[" + std::to_string(i) + "] = " + std::to_string(e.count) + " is negative";
    e.displacement = displs[i];
    // Byte sizes and offsets in 64 bits: a datatype of a huge size or extent can overflow them.
    std::int64_t last_element = 0, end = 0;
    if (__builtin_mul_overflow(displs[i], static_cast<std::int64_t>(t.extent), &e.offset) ||
        __builtin_mul_overflow(e.count, static_cast<std::int64_t>(t.size), &e.bytes) ||
        __builtin_mul_overflow(std::max<std::int64_t>(e.count, 1) - 1, static_cast<std::int64_t>(t.extent),
                               &last_element) ||
        __builtin_add_overflow(e.offset, last_element, &end) ||
        __builtin_add_overflow(end, static_cast<std::int64_t>(t.true_lb + t.true_extent), &end))
      throw overflow_error(std::string(side) + " edge " + std::to_string(i) + " (displacement " +
                           std::to_string(displs[i]) + ", count " + std::to_string(e.count) + ", type extent " +
                           std::to_string(t.extent) + " bytes): its byte offsets overflow 64 bits");
    if (e.count == 0) continue;
    if (displs[i] < 0)
      return std::string(side) + " displacement " + std::to_string(i) + " = " + std::to_string(displs[i]) +
             " is negative";
    if (buf == nullptr && e.bytes > 0) return std::string(side) + ": null buffer with data to move";
    if (capacity >= 0 && end > capacity * static_cast<std::int64_t>(t.extent))
      return std::string(side) + " edge " + std::to_string(i) + " (displacement " + std::to_string(displs[i]) +
             ", count " + std::to_string(e.count) + ") ends past the buffer of " + std::to_string(capacity) +
             " elements";
  }
  // Receive areas must not overlap; decidable cheaply when the type has no holes (contiguous elements).
  const bool contiguous = t.size == t.extent && t.true_extent == t.extent && t.true_lb == t.lb;
  if (check_overlap && contiguous) {
    std::vector<std::pair<std::int64_t, size_t>> starts;
    for (size_t i = 0; i < edges.size(); ++i)
      if (edges[i].bytes > 0) starts.emplace_back(edges[i].offset, i);
    std::sort(starts.begin(), starts.end());
    for (size_t k = 1; k < starts.size(); ++k) {
      const edge& prev = edges[starts[k - 1].second];
      if (prev.offset + prev.bytes > starts[k].first)
        return std::string(side) + " edges " + std::to_string(starts[k - 1].second) + " and " +
               std::to_string(starts[k].second) + " overlap in the receive buffer";
    }
  }
  return {};
}

layout_facts find_regions(MPI_Comm comm, const exchange_options& options) {
  layout_facts f;
  f.me = mpi::rank(comm);
  f.nranks = mpi::size(comm);
  const int mode = options.region_id ? 2 : options.region_size > 0 ? 1 : 0;
  int mine[2] = {mode, options.region_id ? *options.region_id : options.region_size};
  std::vector<int> all(2 * static_cast<size_t>(f.nranks));
  REDIST_MPI_CHECK(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm));
  for (int r = 0; r < f.nranks; ++r) {
    // Every rank sees the same table, hence throws the same error.
    if (all[2 * r] != mode)
      throw inconsistent_ranks("exchange regions: rank " + std::to_string(r) +
                               " chose its region differently (region_id / region_size / node) from rank " +
                               std::to_string(f.me));
    if (mode == 1 && all[2 * r + 1] != options.region_size)
      throw inconsistent_ranks("exchange regions: region_size " + std::to_string(all[2 * r + 1]) + " on rank " +
                               std::to_string(r) + ", " + std::to_string(options.region_size) + " on rank " +
                               std::to_string(f.me));
  }
  std::vector<int> key(static_cast<size_t>(f.nranks));
  if (mode == 2) {
    for (int r = 0; r < f.nranks; ++r) key[r] = all[2 * r + 1];
  } else if (mode == 1) {
    for (int r = 0; r < f.nranks; ++r) key[r] = r / options.region_size;
  } else {
    key = mpi::node_leaders(comm);
  }
  std::map<int, int> dense;  // ranks ascending: regions numbered by their lowest rank
  f.region_of.resize(key.size());
  for (int r = 0; r < f.nranks; ++r) {
    auto it = dense.emplace(key[r], static_cast<int>(dense.size())).first;
    f.region_of[r] = it->second;
    if (static_cast<size_t>(it->second) == f.members.size()) f.members.emplace_back();
    f.members[it->second].push_back(r);
  }
  for (const auto& m : f.members) f.max_region_size = std::max(f.max_region_size, static_cast<int>(m.size()));
  return f;
}

// Sends to[r] to every rank r; returns what each rank sent to this one. Collective.
std::vector<std::vector<std::int64_t>> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::int64_t>>& to) {
  const size_t nranks = to.size();
  std::vector<std::int64_t> send_counts(nranks), recv_counts(nranks), sdispls(nranks), rdispls(nranks);
  for (size_t r = 0; r < nranks; ++r) send_counts[r] = static_cast<std::int64_t>(to[r].size());
  REDIST_MPI_CHECK(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm));
  std::int64_t send_total = 0, recv_total = 0;
  for (size_t r = 0; r < nranks; ++r) {
    sdispls[r] = send_total;
    rdispls[r] = recv_total;
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  std::vector<std::int64_t> flat_out(static_cast<size_t>(send_total)), flat_in(static_cast<size_t>(recv_total));
  for (size_t r = 0; r < nranks; ++r) std::copy(to[r].begin(), to[r].end(), flat_out.begin() + sdispls[r]);
  // The totals bound every count and displacement; without large-count calls all ranks agree on the form.
  const bool wide = !mpi::has_large_counts() &&
                    mpi::on_any_rank(comm, std::max(send_total, recv_total) > mpi::int_limit());
  mpi::alltoallv(flat_out.data(), send_counts.data(), sdispls.data(), MPI_INT64_T, flat_in.data(), recv_counts.data(),
                 rdispls.data(), MPI_INT64_T, comm, wide);
  std::vector<std::vector<std::int64_t>> from(nranks);
  for (size_t r = 0; r < nranks; ++r)
    from[r].assign(flat_in.begin() + rdispls[r], flat_in.begin() + rdispls[r] + recv_counts[r]);
  return from;
}

// A record one rank sends about one of its send edges: the destination and the bytes.
constexpr int record_words = 2;

// Tells every destination its incoming edges (checked against its receive side) and every region pair's
// sender and receiver the edges they carry; returns the records each rank received, grouped by source.
std::vector<std::vector<std::int64_t>> exchange_records(MPI_Comm comm, const layout_facts& f,
                                                        const std::vector<edge>& sends) {
  std::vector<std::vector<std::int64_t>> to(static_cast<size_t>(f.nranks));
  const int mine = f.region_of[f.me];
  for (const edge& e : sends) {
    int targets[3] = {e.peer, -1, -1};
    const int theirs = f.region_of[e.peer];
    if (theirs != mine && e.bytes > 0) {
      targets[1] = f.sender(mine, theirs);
      targets[2] = f.receiver(theirs, mine);
    }
    for (int k = 0; k < 3; ++k) {
      const int t = targets[k];
      if (t < 0 || std::find(targets, targets + k, t) != targets + k) continue;  // one record per rank
      to[t].push_back(e.peer);
      to[t].push_back(e.bytes);
    }
  }
  return exchange_words(comm, to);
}

// One inter-region edge as its region pair's sender and receiver see it.
struct pair_entry {
  int source = 0, destination = 0;
  std::int64_t bytes = 0;
  std::int64_t source_offset = 0;  // within the source's contribution (its edges to the region, in order)
  std::int64_t offset = 0;         // within the pair's message
};

// The pair message's layout: ordered by (destination, source, source's edge order), so that each
// destination's part is contiguous at the receiver and in the destination's own (source, occurrence) order.
std::int64_t lay_out(std::vector<pair_entry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const pair_entry& a, const pair_entry& b) {
    return a.destination != b.destination ? a.destination < b.destination : a.source < b.source;
  });
  std::int64_t total = 0;
  for (pair_entry& e : entries) {
    e.offset = total;
    total += e.bytes;
  }
  return total;
}

// The receive edges of this rank from the ranks of one region carrying data, in (source, occurrence) order.
std::vector<int> receive_order(const std::vector<edge>& recvs, const layout_facts& f, int region) {
  std::vector<int> order;
  for (size_t j = 0; j < recvs.size(); ++j)
    if (f.region_of[recvs[j].peer] == region && recvs[j].bytes > 0) order.push_back(static_cast<int>(j));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return recvs[a].peer < recvs[b].peer; });
  return order;
}

// Persistent requests on the plan's communicator (a datatype built for a large count is kept by the plan).
MPI_Request send_init(plan_state& p, const void* buf, std::int64_t count, MPI_Datatype type, int dest, int tag) {
  return mpi::send_init(buf, count, type, dest, tag, p.comm, p.owned_types);
}
MPI_Request recv_init(plan_state& p, void* buf, std::int64_t count, MPI_Datatype type, int source, int tag) {
  return mpi::recv_init(buf, count, type, source, tag, p.comm, p.owned_types);
}

void record(plan_state& p, phase_tag phase, locality where, direction way, std::int64_t bytes) {
  load& l = p.loads[phase][where][way];
  l.messages += 1;
  l.bytes += bytes;
}
locality locality_of(const layout_facts& f, int peer) {
  return f.region_of[peer] == f.region_of[f.me] ? intra : inter;
}

// Direct messages for every edge with data whose peer passes `take` (self edges become local copies).
template <class Take>
void build_direct(plan_state& p, const layout_facts& f, Take take) {
  std::vector<int> self_sends, self_recvs;
  for (size_t i = 0; i < p.sends.size(); ++i) {
    const edge& e = p.sends[i];
    if (e.bytes == 0 || !take(e.peer)) continue;
    if (e.peer == f.me) {
      self_sends.push_back(static_cast<int>(i));
      continue;
    }
    p.direct.push_back(send_init(p, p.sendbuf + e.offset, e.count, p.sendtype, e.peer, tag_of(e.occurrence, direct_phase)));
    record(p, direct_phase, locality_of(f, e.peer), outbound, e.bytes);
  }
  for (size_t j = 0; j < p.recvs.size(); ++j) {
    const edge& e = p.recvs[j];
    if (e.bytes == 0 || !take(e.peer)) continue;
    if (e.peer == f.me) {
      self_recvs.push_back(static_cast<int>(j));
      continue;
    }
    p.direct.push_back(recv_init(p, p.recvbuf + e.offset, e.count, p.recvtype, e.peer, tag_of(e.occurrence, direct_phase)));
    record(p, direct_phase, locality_of(f, e.peer), inbound, e.bytes);
  }
  for (size_t k = 0; k < self_sends.size(); ++k) {  // matched in order, as MPI matches repeated edges
    p.self_copies.emplace_back(self_sends[k], self_recvs[k]);
    p.copied_bytes += 2 * p.sends[self_sends[k]].bytes;
  }
}

// A committed datatype the plan keeps.
MPI_Datatype keep(plan_state& p, mpi::datatype_handle t) {
  p.owned_types.push_back(std::move(t));
  return p.owned_types.back().get();
}

void build_aggregate(plan_state& p, const layout_facts& f, const std::vector<std::vector<std::int64_t>>& records) {
  const int mine = f.region_of[f.me];
  const int nregions = static_cast<int>(f.members.size());
  build_direct(p, f, [&](int peer) { return f.region_of[peer] == mine; });

  // The pairs this rank sends (receives) for, with their edges in layout order.
  std::vector<std::vector<pair_entry>> as_sender(nregions), as_receiver(nregions);
  for (int source = 0; source < f.nranks; ++source) {
    std::vector<std::int64_t> contributed(nregions, 0);
    const auto& rec = records[source];
    for (size_t k = 0; k + 1 < rec.size(); k += record_words) {
      const int destination = static_cast<int>(rec[k]);
      const std::int64_t bytes = rec[k + 1];
      const int a = f.region_of[source], b = f.region_of[destination];
      if (a == b || bytes == 0) continue;
      const pair_entry e{source, destination, bytes, contributed[b], 0};
      contributed[b] += bytes;
      if (a == mine && f.sender(a, b) == f.me) as_sender[b].push_back(e);
      if (b == mine && f.receiver(b, a) == f.me) as_receiver[a].push_back(e);
    }
  }

  // Sizing every buffer first: requests keep their addresses.
  p.outgoing.reserve(nregions);
  p.global_out.reserve(nregions);
  p.global_in.reserve(nregions);
  p.incoming.reserve(nregions);
  for (int b = 0; b < nregions; ++b) {
    if (b == mine) continue;
    std::vector<segment> mine_to_b;
    std::int64_t total = 0;
    for (size_t i = 0; i < p.sends.size(); ++i)
      if (p.sends[i].bytes > 0 && f.region_of[p.sends[i].peer] == b) {
        mine_to_b.push_back({static_cast<int>(i), total});
        total += p.sends[i].bytes;
      }
    p.copied_bytes += total;
    const int leader = f.sender(mine, b);
    if (!mine_to_b.empty() && leader != f.me) {
      p.outgoing.push_back({std::vector<char>(static_cast<size_t>(total)), std::move(mine_to_b)});
      p.gather.push_back(send_init(p, p.outgoing.back().buffer.data(), total, MPI_BYTE, leader, tag_of(b, gather_phase)));
      record(p, gather_phase, intra, outbound, total);
    }
    if (!as_sender[b].empty()) {
      std::vector<pair_entry>& entries = as_sender[b];
      const std::int64_t size = lay_out(entries);
      p.global_out.push_back({std::vector<char>(static_cast<size_t>(size)), {}});
      plan_state::pair_buffer& g = p.global_out.back();
      // Each contributor's data lands at its segments' places: one receive with an indexed byte type.
      std::map<int, std::vector<const pair_entry*>> by_source;
      for (const pair_entry& e : entries) by_source[e.source].push_back(&e);
      for (auto& [source, list] : by_source) {
        std::sort(list.begin(), list.end(),
                  [](const pair_entry* x, const pair_entry* y) { return x->source_offset < y->source_offset; });
        if (source == f.me) {
          for (size_t k = 0; k < list.size(); ++k) g.own.push_back({mine_to_b[k].edge, list[k]->offset});
          continue;
        }
        std::vector<std::int64_t> lengths, places;
        std::int64_t contribution = 0;
        for (const pair_entry* e : list) {
          lengths.push_back(e->bytes);
          places.push_back(e->offset);
          contribution += e->bytes;
        }
        const MPI_Datatype scattered = keep(p, mpi::hindexed(lengths, places, MPI_BYTE));
        p.gather.push_back(recv_init(p, g.buffer.data(), 1, scattered, source, tag_of(b, gather_phase)));
        record(p, gather_phase, intra, inbound, contribution);
      }
      p.global_sends.push_back(send_init(p, g.buffer.data(), size, MPI_BYTE, f.receiver(b, mine), global_phase));
      record(p, global_phase, inter, outbound, size);
    }
  }
  for (int a = 0; a < nregions; ++a) {
    if (a == mine) continue;
    const std::vector<int> order = receive_order(p.recvs, f, a);
    const int leader = f.receiver(mine, a);
    if (!order.empty() && leader != f.me) {
      plan_state::incoming_stage in;
      std::int64_t total = 0;
      for (int j : order) {
        in.segments.push_back({j, total});
        total += p.recvs[j].bytes;
      }
      in.buffer.resize(static_cast<size_t>(total));
      p.incoming.push_back(std::move(in));
      p.scatter_recvs.push_back(recv_init(p, p.incoming.back().buffer.data(), total, MPI_BYTE, leader, tag_of(a, scatter_phase)));
      record(p, scatter_phase, intra, inbound, total);
    }
    for (int j : order) p.copied_bytes += p.recvs[j].bytes;
    if (as_receiver[a].empty()) continue;
    std::vector<pair_entry>& entries = as_receiver[a];
    const std::int64_t size = lay_out(entries);
    p.global_in.push_back({std::vector<char>(static_cast<size_t>(size)), {}});
    plan_state::pair_buffer& g = p.global_in.back();
    p.global_recvs.push_back(recv_init(p, g.buffer.data(), size, MPI_BYTE, f.sender(a, mine), global_phase));
    record(p, global_phase, inter, inbound, size);
    size_t own = 0;
    for (size_t k = 0; k < entries.size();) {  // one contiguous part per destination
      const int destination = entries[k].destination;
      const std::int64_t begin = entries[k].offset;
      std::int64_t bytes = 0;
      for (; k < entries.size() && entries[k].destination == destination; ++k) {
        if (destination == f.me) g.own.push_back({order[own++], entries[k].offset});
        bytes += entries[k].bytes;
      }
      if (destination == f.me) continue;
      p.scatter_sends.push_back(send_init(p, g.buffer.data() + begin, bytes, MPI_BYTE, destination, tag_of(a, scatter_phase)));
      record(p, scatter_phase, intra, outbound, bytes);
    }
  }
}

// ---- Dedup (paper Section 3.3): what the global ids tell each rank ----

struct dedup_tables {
  std::int64_t element_bytes = 0;
  // Per destination region: this rank's distinct ids for it (ascending) and the send buffer's byte offset
  // of one element carrying each.
  struct distinct_elements {
    std::vector<std::int64_t> ids, offsets;
  };
  std::map<int, distinct_elements> mine;
  // As the sender of pair (mine, b) / the receiver of pair (a, mine): every contributing source's distinct
  // ids, sources ascending; the pair message is their elements in that order.
  std::map<int, std::map<int, std::vector<std::int64_t>>> as_sender, as_receiver;
  // As the receiver of pair (a, mine): per destination of this region, the pair message's element index of
  // every element the destination receives from region a, in its receive_order.
  std::map<int, std::map<int, std::vector<std::int64_t>>> picks;
};

enum id_block : std::int64_t { distinct_block = 0, needs_block = 1, edge_hash_block = 2 };

std::uint64_t hash_ids(const std::int64_t* ids, std::int64_t count) {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(count);
  for (std::int64_t k = 0; k < count; ++k) {
    h ^= static_cast<std::uint64_t>(ids[k]);
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

// Collective: sources tell their region pairs' senders and receivers their distinct ids, destinations
// tell the receivers which (source, id) each of their elements is, and every edge's ids are checked
// against the destination's by a hash. Problems go to `problem` (the caller agrees on them).
dedup_tables share_ids(MPI_Comm comm, const layout_facts& f, const plan_state& p, const neighbor_buffers& b,
                       std::string& problem) {
  dedup_tables t;
  const datatype_info send_type = describe(p.sendtype), recv_type = describe(p.recvtype);
  t.element_bytes = send_type.size;
  if (send_type.size != recv_type.size)
    problem = "dedup: the send type's size (" + std::to_string(send_type.size) + " bytes) differs from the "
              "receive type's (" + std::to_string(recv_type.size) + "): global ids name single elements";
  const auto ids_of = [&](const edge& e, const std::int64_t* ids, std::int64_t size, const char* side) -> const std::int64_t* {
    if (e.count == 0) return nullptr;
    if (ids == nullptr || (size >= 0 && e.displacement + e.count > size)) {
      if (problem.empty())
        problem = std::string(side) + " global ids: edge to/from rank " + std::to_string(e.peer) + " needs ids [" +
                  std::to_string(e.displacement) + ", " + std::to_string(e.displacement + e.count) + ") of " +
                  (ids == nullptr ? std::string("a null array") : std::to_string(size));
      return nullptr;
    }
    return ids + e.displacement;
  };

  const int mine = f.region_of[f.me];
  std::vector<std::vector<std::int64_t>> to(static_cast<size_t>(f.nranks));
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> by_region;  // (id, offset)
  for (const edge& e : p.sends) {
    const std::int64_t* ids = ids_of(e, b.send_ids, b.send_ids_size, "send");
    to[e.peer].push_back(edge_hash_block);
    to[e.peer].push_back(static_cast<std::int64_t>(ids ? hash_ids(ids, e.count) : hash_ids(nullptr, 0)));
    const int theirs = f.region_of[e.peer];
    if (theirs == mine || ids == nullptr) continue;
    auto& list = by_region[theirs];
    for (std::int64_t k = 0; k < e.count; ++k) list.emplace_back(ids[k], e.offset + k * send_type.extent);
  }
  for (auto& [region, list] : by_region) {
    std::stable_sort(list.begin(), list.end(), [](auto& x, auto& y) { return x.first < y.first; });
    auto& d = t.mine[region];
    for (auto [id, offset] : list)
      if (d.ids.empty() || d.ids.back() != id) {
        d.ids.push_back(id);
        d.offsets.push_back(offset);
      }
    for (int target : {f.sender(mine, region), f.receiver(region, mine)}) {
      to[target].insert(to[target].end(), {distinct_block, region, static_cast<std::int64_t>(d.ids.size())});
      to[target].insert(to[target].end(), d.ids.begin(), d.ids.end());
    }
  }
  for (int a = 0; a < static_cast<int>(f.members.size()); ++a) {
    if (a == mine) continue;
    std::vector<std::int64_t> needs;
    for (int j : receive_order(p.recvs, f, a)) {
      const std::int64_t* ids = ids_of(p.recvs[j], b.recv_ids, b.recv_ids_size, "receive");
      for (std::int64_t k = 0; ids && k < p.recvs[j].count; ++k) {
        needs.push_back(p.recvs[j].peer);
        needs.push_back(ids[k]);
      }
    }
    if (needs.empty()) continue;
    auto& out = to[f.receiver(mine, a)];
    out.insert(out.end(), {needs_block, a, static_cast<std::int64_t>(needs.size() / 2)});
    out.insert(out.end(), needs.begin(), needs.end());
  }

  const auto from = exchange_words(comm, to);
  std::map<int, std::vector<std::int64_t>> hashes_from;
  std::map<int, std::map<int, std::vector<std::int64_t>>> needs_of;  // [a][destination]: (source, id) pairs
  for (int r = 0; r < f.nranks; ++r) {
    const auto& w = from[r];
    for (size_t k = 0; k < w.size();) {
      if (w[k] == edge_hash_block) {
        hashes_from[r].push_back(w[k + 1]);
        k += 2;
        continue;
      }
      const int region = static_cast<int>(w[k + 1]);
      const auto n = static_cast<size_t>(w[k + 2]);
      const auto first = w.begin() + static_cast<std::ptrdiff_t>(k + 3);
      if (w[k] == distinct_block) {
        auto& table = f.region_of[r] == mine ? t.as_sender[region] : t.as_receiver[f.region_of[r]];
        table[r].assign(first, first + static_cast<std::ptrdiff_t>(n));
        k += 3 + n;
      } else {
        needs_of[region][r].assign(first, first + static_cast<std::ptrdiff_t>(2 * n));
        k += 3 + 2 * n;
      }
    }
  }
  std::map<int, int> seen;
  for (const edge& e : p.recvs) {
    const int k = seen[e.peer]++;
    const std::int64_t* ids = ids_of(e, b.recv_ids, b.recv_ids_size, "receive");
    const auto expected = static_cast<std::int64_t>(ids ? hash_ids(ids, e.count) : hash_ids(nullptr, 0));
    const auto& got = hashes_from[e.peer];
    if (problem.empty() && (k >= static_cast<int>(got.size()) || got[k] != expected))
      problem = "dedup: the global ids that rank " + std::to_string(f.me) + " expects on its receive edge from rank " +
                std::to_string(e.peer) + " differ from the ids that rank sends on that edge";
  }
  for (auto& [a, destinations] : needs_of) {
    const auto& sources = t.as_receiver[a];
    std::map<int, std::int64_t> base;
    std::int64_t elements = 0;
    for (const auto& [s, ids] : sources) {
      base[s] = elements;
      elements += static_cast<std::int64_t>(ids.size());
    }
    for (auto& [d, pairs] : destinations) {
      auto& indices = t.picks[a][d];
      for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
        const int s = static_cast<int>(pairs[k]);
        const auto it = sources.find(s);
        const auto hit = it == sources.end() ? std::vector<std::int64_t>::const_iterator{}
                                             : std::lower_bound(it->second.begin(), it->second.end(), pairs[k + 1]);
        if (it == sources.end() || hit == it->second.end() || *hit != pairs[k + 1]) {
          if (problem.empty())
            problem = "dedup: rank " + std::to_string(d) + " expects global id " + std::to_string(pairs[k + 1]) +
                      " from rank " + std::to_string(s) + ", which sends no element with that id to its region";
          indices.push_back(0);
          continue;
        }
        indices.push_back(base[s] + (hit - it->second.begin()));
      }
    }
  }
  return t;
}

MPI_Datatype element_places(plan_state& p, const std::vector<std::int64_t>& byte_offsets, MPI_Datatype element) {
  return keep(p, mpi::hindexed_single(byte_offsets, element));
}

void build_dedup(plan_state& p, const layout_facts& f, const dedup_tables& t) {
  const int mine = f.region_of[f.me];
  const std::int64_t element = t.element_bytes;
  build_direct(p, f, [&](int peer) { return f.region_of[peer] == mine; });

  // As a pair's sender: the message holds each contributor's distinct elements, contributors ascending.
  std::map<int, char*> own_place;  // per destination region, where this rank's contribution goes
  for (const auto& [b, sources] : t.as_sender) {
    std::int64_t total = 0;
    for (const auto& [s, ids] : sources) total += static_cast<std::int64_t>(ids.size()) * element;
    char* message = p.dedup_buffers.emplace_back(static_cast<size_t>(total)).data();
    std::int64_t offset = 0;
    for (const auto& [s, ids] : sources) {
      const std::int64_t bytes = static_cast<std::int64_t>(ids.size()) * element;
      if (s == f.me) {
        own_place[b] = message + offset;
      } else {
        p.gather.push_back(recv_init(p, message + offset, bytes, MPI_BYTE, s, tag_of(b, gather_phase)));
        record(p, gather_phase, intra, inbound, bytes);
      }
      offset += bytes;
    }
    p.global_sends.push_back(send_init(p, message, total, MPI_BYTE, f.receiver(b, mine), global_phase));
    record(p, global_phase, inter, outbound, total);
  }
  for (const auto& [b, distinct] : t.mine) {
    const std::int64_t bytes = static_cast<std::int64_t>(distinct.ids.size()) * element;
    const MPI_Datatype places = element_places(p, distinct.offsets, p.bytes->send.get());
    p.copied_bytes += bytes;
    const int leader = f.sender(mine, b);
    if (leader == f.me) {
      p.typed_packs.push_back({places, bytes, own_place.at(b)});
      continue;
    }
    char* stage = p.dedup_buffers.emplace_back(static_cast<size_t>(bytes)).data();
    p.typed_packs.push_back({places, bytes, stage});
    p.gather.push_back(send_init(p, stage, bytes, MPI_BYTE, leader, tag_of(b, gather_phase)));
    record(p, gather_phase, intra, outbound, bytes);
  }

  // Where this rank's elements from each source region go, in receive_order (the order of its needs).
  const std::int64_t recv_extent = describe(p.recvtype).extent;
  std::map<int, std::pair<MPI_Datatype, std::int64_t>> receive_places;  // region -> (places, elements)
  for (int a = 0; a < static_cast<int>(f.members.size()); ++a) {
    if (a == mine) continue;
    std::vector<std::int64_t> offsets;
    for (int j : receive_order(p.recvs, f, a))
      for (std::int64_t k = 0; k < p.recvs[j].count; ++k) offsets.push_back(p.recvs[j].offset + k * recv_extent);
    if (!offsets.empty())
      receive_places[a] = {element_places(p, offsets, p.bytes->recv.get()), static_cast<std::int64_t>(offsets.size())};
  }

  // As a pair's receiver: every destination's elements go straight out of the message, picked by a type.
  for (const auto& [a, sources] : t.as_receiver) {
    std::int64_t total = 0;
    for (const auto& [s, ids] : sources) total += static_cast<std::int64_t>(ids.size()) * element;
    char* message = p.dedup_buffers.emplace_back(static_cast<size_t>(total)).data();
    p.global_recvs.push_back(recv_init(p, message, total, MPI_BYTE, f.sender(a, mine), global_phase));
    record(p, global_phase, inter, inbound, total);
    const auto picks = t.picks.find(a);
    if (picks == t.picks.end()) continue;
    for (const auto& [d, indices] : picks->second) {
      const std::int64_t bytes = static_cast<std::int64_t>(indices.size()) * element;
      if (d == f.me) {
        plan_state::element_pick pick;
        pick.from = message;
        pick.element_bytes = element;
        for (std::int64_t i : indices) pick.offsets.push_back(i * element);
        pick.scratch.resize(static_cast<size_t>(bytes));
        pick.places = receive_places.at(a).first;
        p.own_picks.push_back(std::move(pick));
        p.copied_bytes += 2 * bytes;
        continue;
      }
      std::vector<std::int64_t> lengths, displacements;  // runs of consecutive elements
      for (std::int64_t i : indices) {
        if (!displacements.empty() && displacements.back() + lengths.back() == i * element)
          lengths.back() += element;
        else {
          displacements.push_back(i * element);
          lengths.push_back(element);
        }
      }
      const MPI_Datatype picked = keep(p, mpi::hindexed(lengths, displacements, MPI_BYTE));
      p.scatter_sends.push_back(send_init(p, message, 1, picked, d, tag_of(a, scatter_phase)));
      record(p, scatter_phase, intra, outbound, bytes);
    }
  }
  // As a destination: this rank's elements from each source region, from that pair's receiver.
  for (const auto& [a, places] : receive_places) {
    const int leader = f.receiver(mine, a);
    if (leader == f.me) continue;  // picked out of the pair message above
    const std::int64_t bytes = places.second * element;
    char* stage = p.dedup_buffers.emplace_back(static_cast<size_t>(bytes)).data();
    p.scatter_recvs.push_back(recv_init(p, stage, bytes, MPI_BYTE, leader, tag_of(a, scatter_phase)));
    record(p, scatter_phase, intra, inbound, bytes);
    p.incoming_unpacks.push_back({stage, bytes, places.first});
    p.copied_bytes += bytes;
  }
}

// ---- Cost model ----

// One rank's share of a plan's predicted time: per phase, the slower of its sending and receiving side.
struct rank_costs {
  double direct = 0, gather = 0, global = 0, scatter = 0, copy = 0;
};

rank_costs costs_of(const plan_state& p, const cost_model& m) {
  const double latency[2] = {m.intra_latency, m.inter_latency};
  const double per_message[2] = {m.intra_seconds_per_message, m.inter_seconds_per_message};
  const double per_byte[2] = {m.intra_seconds_per_byte, m.inter_seconds_per_byte};
  const auto phase = [&](phase_tag ph) {
    double worst = 0;
    for (int way : {outbound, inbound}) {
      double side = 0, wait = 0;  // messages in flight overlap: one latency, the longest
      for (int where : {intra, inter}) {
        const load& l = p.loads[ph][where][way];
        if (l.messages > 0) wait = std::max(wait, latency[where]);
        side += per_message[where] * static_cast<double>(l.messages) + per_byte[where] * static_cast<double>(l.bytes);
      }
      worst = std::max(worst, wait + side);
    }
    return worst;
  };
  return {phase(direct_phase), phase(gather_phase), phase(global_phase), phase(scatter_phase),
          m.copy_seconds_per_byte * static_cast<double>(p.copied_bytes)};
}

std::int64_t inter_region_bytes_sent(const plan_state& p) {
  std::int64_t bytes = 0;
  for (const auto& ph : p.loads) bytes += ph[inter][outbound].bytes;
  return bytes;
}

// Collective: the predicted time of every candidate, the same on every rank. Phases run one after another
// (the gather completes before the inter-region messages leave, which complete before the scatter), each
// as slow as its slowest rank; the direct messages overlap them; a region's inter-region bytes share its
// injection rate.
std::vector<double> predict(const std::vector<std::unique_ptr<plan_state>>& candidates, const layout_facts& f,
                            const cost_model& m, MPI_Comm comm) {
  const size_t n = candidates.size(), nregions = f.members.size();
  std::vector<double> worst(5 * n), region_bytes(n * nregions, 0.0);
  for (size_t c = 0; c < n; ++c) {
    const rank_costs r = costs_of(*candidates[c], m);
    const double values[5] = {r.direct, r.gather, r.global, r.scatter, r.copy};
    std::copy(values, values + 5, worst.begin() + static_cast<std::ptrdiff_t>(5 * c));
    region_bytes[c * nregions + f.region_of[f.me]] = static_cast<double>(inter_region_bytes_sent(*candidates[c]));
  }
  REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, worst.data(), static_cast<int>(worst.size()), MPI_DOUBLE, MPI_MAX, comm));
  REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, region_bytes.data(), static_cast<int>(region_bytes.size()),
                                 MPI_DOUBLE, MPI_SUM, comm));
  std::vector<double> seconds(n);
  for (size_t c = 0; c < n; ++c) {
    const double* w = worst.data() + 5 * c;
    const double injection =
        m.region_seconds_per_byte * *std::max_element(region_bytes.begin() + static_cast<std::ptrdiff_t>(c * nregions),
                                                       region_bytes.begin() + static_cast<std::ptrdiff_t>((c + 1) * nregions));
    const bool staged = w[1] > 0 || w[2] > 0 || w[3] > 0;
    seconds[c] = (staged ? std::max(w[0], w[1] + std::max(w[2], injection) + w[3]) : std::max(w[0], injection)) + w[4];
  }
  return seconds;
}

// Seconds per one-way message of `bytes` with `partner` (none: -1), by ping-pong; the lower rank serves first.
double ping_pong(MPI_Comm comm, int me, int partner, std::vector<char>& buffer, std::int64_t bytes, int repetitions) {
  if (partner < 0) return 0;
  const auto once = [&] {
    if (me < partner) {
      REDIST_MPI_CHECK(MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm));
      REDIST_MPI_CHECK(MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE));
    } else {
      REDIST_MPI_CHECK(MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE));
      REDIST_MPI_CHECK(MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, partner, 0, comm));
    }
  };
  once();  // connection set-up and first touch stay out of the figure
  const double begin = MPI_Wtime();
  for (int k = 0; k < repetitions; ++k) once();
  return (MPI_Wtime() - begin) / (2.0 * repetitions);
}

// Seconds per round of `burst` small messages to `partner` answered by one (none: -1): two latencies plus
// `burst` gaps.
double burst_round(MPI_Comm comm, int me, int partner, int burst, int repetitions) {
  if (partner < 0) return 0;
  std::vector<std::int64_t> words(static_cast<size_t>(burst));
  std::vector<MPI_Request> requests(static_cast<size_t>(burst));
  const auto once = [&] {
    if (me < partner) {
      for (int k = 0; k < burst; ++k)
        REDIST_MPI_CHECK(MPI_Isend(&words[k], 1, MPI_INT64_T, partner, k, comm, &requests[k]));
      REDIST_MPI_CHECK(MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE));
      REDIST_MPI_CHECK(MPI_Recv(nullptr, 0, MPI_BYTE, partner, burst, comm, MPI_STATUS_IGNORE));
    } else {
      for (int k = 0; k < burst; ++k)
        REDIST_MPI_CHECK(MPI_Irecv(&words[k], 1, MPI_INT64_T, partner, k, comm, &requests[k]));
      REDIST_MPI_CHECK(MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE));
      REDIST_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, partner, burst, comm));
    }
  };
  once();
  const double begin = MPI_Wtime();
  for (int k = 0; k < repetitions; ++k) once();
  return (MPI_Wtime() - begin) / repetitions;
}

cost_model measure(MPI_Comm comm, const layout_facts& f) {
  constexpr std::int64_t small = 8, large = 64 * 1024;
  constexpr int burst = 16;
  const int mine = f.region_of[f.me];
  const auto& members = f.members[mine];
  const int index = static_cast<int>(std::find(members.begin(), members.end(), f.me) - members.begin());
  // Partners: neighbours inside the region, and the same index in the paired region.
  const int intra_index = index ^ 1;
  const int intra_partner = intra_index < static_cast<int>(members.size()) ? members[intra_index] : -1;
  const int other = mine ^ 1;
  const int inter_partner = other < static_cast<int>(f.members.size()) &&
                                    index < static_cast<int>(f.members[other].size())
                                ? f.members[other][index]
                                : -1;
  std::vector<char> buffer(static_cast<size_t>(large));
  // Per locality: one-way small, one-way large (inter: one pair per region pair), a round of one message,
  // a round of `burst`; then inter large with all pairs at once, the copy rate, and whether inter pairs exist.
  double t[12] = {};
  for (int k = 0; k < 2; ++k) {
    const int partner = k == 0 ? intra_partner : inter_partner;
    REDIST_MPI_CHECK(MPI_Barrier(comm));
    t[4 * k] = ping_pong(comm, f.me, partner, buffer, small, 20);
    REDIST_MPI_CHECK(MPI_Barrier(comm));
    t[4 * k + 1] = ping_pong(comm, f.me, k == 1 && index > 0 ? -1 : partner, buffer, large, 5);
    REDIST_MPI_CHECK(MPI_Barrier(comm));
    t[4 * k + 2] = burst_round(comm, f.me, partner, 1, 10);
    REDIST_MPI_CHECK(MPI_Barrier(comm));
    t[4 * k + 3] = burst_round(comm, f.me, partner, burst, 10);
  }
  REDIST_MPI_CHECK(MPI_Barrier(comm));
  t[8] = ping_pong(comm, f.me, inter_partner, buffer, large, 5);
  std::vector<char> copy_target(buffer.size());
  const double begin = MPI_Wtime();
  for (int k = 0; k < 20; ++k) {
    std::memcpy(copy_target.data(), buffer.data(), buffer.size());
    buffer[static_cast<size_t>(k)] = copy_target[static_cast<size_t>(k) + 1];  // keeps the copies observable
  }
  t[9] = (MPI_Wtime() - begin) / (20.0 * static_cast<double>(large));
  t[10] = inter_partner >= 0 ? 1.0 : 0.0;
  t[11] = intra_partner >= 0 ? 1.0 : 0.0;
  REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, t, 12, MPI_DOUBLE, MPI_MAX, comm));

  cost_model m;  // figures that cannot be measured (one region, or one rank per region) keep their defaults
  const auto fit = [&](const double* w, double& latency, double& per_message, double& per_byte) {
    per_byte = std::max(0.0, (w[1] - w[0]) / static_cast<double>(large - small));
    per_message = std::max(0.0, (w[3] - w[2]) / (burst - 1));
    latency = std::max(0.0, w[0] - per_message - per_byte * static_cast<double>(small));
  };
  if (t[11] > 0) fit(t, m.intra_latency, m.intra_seconds_per_message, m.intra_seconds_per_byte);
  if (t[10] > 0) {
    fit(t + 4, m.inter_latency, m.inter_seconds_per_message, m.inter_seconds_per_byte);
    const double pairs = static_cast<double>(
        std::min_element(f.members.begin(), f.members.end(), [](auto& x, auto& y) { return x.size() < y.size(); })
            ->size());
    m.region_seconds_per_byte = std::max(0.0, t[8] - m.inter_latency) / (pairs * static_cast<double>(large));
  }
  m.copy_seconds_per_byte = t[9];
  m.source = "calibrated";
  return m;
}

// Calibrations are remembered per set of processes and regions: every rank of the set calibrated together,
// so all of them find (or miss) the same entry.
cost_model remembered_calibration(MPI_Comm comm, const layout_facts& f) {
  static std::mutex guard;
  static std::map<std::vector<int>, cost_model> remembered;
  MPI_Group group, world;
  REDIST_MPI_CHECK(MPI_Comm_group(comm, &group));
  REDIST_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  std::vector<int> ranks(static_cast<size_t>(f.nranks)), in_world(ranks.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  REDIST_MPI_CHECK(MPI_Group_translate_ranks(group, f.nranks, ranks.data(), world, in_world.data()));
  REDIST_MPI_CHECK(MPI_Group_free(&group));
  REDIST_MPI_CHECK(MPI_Group_free(&world));
  std::vector<int> key = in_world;
  key.insert(key.end(), f.region_of.begin(), f.region_of.end());
  {
    std::lock_guard<std::mutex> lock(guard);
    const auto hit = remembered.find(key);
    if (hit != remembered.end()) return hit->second;
  }
  const cost_model m = measure(comm, f);
  std::lock_guard<std::mutex> lock(guard);
  return remembered.emplace(key, m).first->second;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out.precision(3);
  out << s * 1e6 << " us";
  return out.str();
}

// ---- Setup ----

std::unique_ptr<plan_state> candidate(const plan_state& validated) {
  auto c = std::make_unique<plan_state>();
  c->comm = validated.comm;
  c->sendbuf = validated.sendbuf;
  c->recvbuf = validated.recvbuf;
  c->sendtype = validated.sendtype;
  c->recvtype = validated.recvtype;
  c->bytes = validated.bytes;
  c->sends = validated.sends;
  c->recvs = validated.recvs;
  return c;
}

// What must be the same on every rank of an exchange: the strategy, the way regions are chosen (region_id's
// value is each rank's own) and the cost model's figures.
std::uint64_t options_hash(const exchange_options& o) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<std::uint64_t>(o.strategy));
  mix(static_cast<std::uint64_t>(o.region_size));
  mix(o.region_id ? 1 : 0);
  mix(o.model ? 1 : 0);
  if (o.model)
    for (double figure : {o.model->intra_latency, o.model->intra_seconds_per_message, o.model->intra_seconds_per_byte,
                          o.model->inter_latency, o.model->inter_seconds_per_message, o.model->inter_seconds_per_byte,
                          o.model->region_seconds_per_byte, o.model->copy_seconds_per_byte}) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &figure, sizeof bits);
      mix(bits);
    }
  return h;
}

std::unique_ptr<plan_state> build(const std::vector<int>& sources, const std::vector<int>& destinations,
                                  const neighbor_buffers& b, MPI_Comm comm, const exchange_options& options) {
  const int nranks = mpi::size(comm);
  plan_state v;  // the validated description every candidate starts from
  v.sendbuf = static_cast<const char*>(b.sendbuf);
  v.recvbuf = static_cast<char*>(b.recvbuf);
  v.sendtype = b.sendtype;
  v.recvtype = b.recvtype;
  // The local checks (a datatype MPI rejects included) and the options, which must be the same on every rank
  // (different strategies would build plans whose messages never match), in one agreement.
  mpi::agreement agreed(comm);
  const int strategy = static_cast<int>(options.strategy);
  if (strategy < static_cast<int>(neighbor_strategy::automatic) || strategy > static_cast<int>(neighbor_strategy::dedup))
    agreed.fail(mpi::error_kind::invalid_argument,
                "exchange_options::strategy = " + std::to_string(strategy) + " is not a neighbor_strategy");
  if (options.region_size < 0)
    agreed.fail(mpi::error_kind::invalid_argument,
                "exchange_options::region_size = " + std::to_string(options.region_size) + " is negative");
  if (options.model)
    for (double figure : {options.model->intra_latency, options.model->intra_seconds_per_message,
                          options.model->intra_seconds_per_byte, options.model->inter_latency,
                          options.model->inter_seconds_per_message, options.model->inter_seconds_per_byte,
                          options.model->region_seconds_per_byte, options.model->copy_seconds_per_byte})
      if (!(figure >= 0 && figure < 1e30)) {  // NaN fails too
        agreed.fail(mpi::error_kind::invalid_argument,
                    "exchange_options::model has a figure " + std::to_string(figure) +
                        "; every cost-model figure must be a finite number of seconds >= 0");
        break;
      }
  if (options.strategy == neighbor_strategy::dedup && !b.global_ids)
    agreed.fail(mpi::error_kind::invalid_argument,
                "the dedup strategy needs global ids (neighbor_buffers::global_ids, redist_neighbor_alltoallv_init_ext)");
  agreed.attempt([&] {
    std::string problem = check_side("send", "sendcounts", destinations, b.sendcounts, b.sdispls, b.sendtype,
                                     b.sendbuf, b.send_capacity, b.send_entries, nranks, v.sends, false);
    if (problem.empty())
      problem = check_side("receive", "recvcounts", sources, b.recvcounts, b.rdispls, b.recvtype, b.recvbuf,
                           b.recv_capacity, b.recv_entries, nranks, v.recvs, true);
    if (!problem.empty()) throw invalid_argument(problem);
  });
  agreed.require_same(options_hash(options),
                      "ranks passed different exchange options (strategy, region_size, region_id set or not, or cost "
                      "model figures); every rank must pass the same (C: the same info values)");
  agreed.conclude();

  const layout_facts f = find_regions(comm, options);
  int tag_ub_found = 0;
  int* tag_ub = nullptr;
  REDIST_MPI_CHECK(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &tag_ub_found));
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
  if (mismatch.str().empty() && tag_ub_found && tag_of(static_cast<std::int64_t>(f.members.size()), scatter_phase) > *tag_ub)
    mismatch << "the tags of " << f.members.size() << " regions exceed MPI_TAG_UB = " << *tag_ub;
  for (const edge& e : v.sends)
    if (mismatch.str().empty() && tag_ub_found && tag_of(e.occurrence, direct_phase) > *tag_ub)
      mismatch << "rank " << f.me << " repeats neighbor " << e.peer << " more often than MPI_TAG_UB allows";
  // The byte mirrors the aggregate and dedup strategies copy through. A datatype that cannot be taken apart
  // leaves automatic with the standard strategy, and fails a request for the others on every rank.
  const bool automatic = options.strategy == neighbor_strategy::automatic;
  const bool regions_matter = f.members.size() > 1 && f.max_region_size > 1;
  const bool staged = options.strategy == neighbor_strategy::aggregate ||
                      options.strategy == neighbor_strategy::dedup || (automatic && regions_matter);
  std::string mirror_problem;
  // Minima over the ranks: 1 in the first when every rank passed global ids, in the second when none did.
  mpi::agreement edges_agreed(comm);
  // Edges that do not match are a graph that is not one (MPI_ERR_TOPOLOGY in C).
  if (!mismatch.str().empty()) edges_agreed.fail(mpi::error_kind::invalid_topology, mismatch.str());
  if (staged)
    edges_agreed.attempt([&] {
      try {
        auto mirrors = std::make_shared<byte_types>();
        mirrors->send = mpi::byte_mirror(v.sendtype);
        mirrors->recv = mpi::byte_mirror(v.recvtype);
        v.bytes = std::move(mirrors);
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
  const bool mirrors_everywhere = edges_agreed.min(mirrors_slot) == 1;
  if (!automatic && !mirrors_everywhere)
    mpi::agree_on(comm, mpi::error_kind::invalid_datatype,
                  mirror_problem.empty() ? mirror_problem
                                         : std::string(to_string(options.strategy)) + " strategy: " + mirror_problem);

  // Which strategies to build: the requested one, or automatic's candidates.
  std::vector<neighbor_strategy> wanted;
  if (!automatic) {
    wanted = {options.strategy};
  } else {
    wanted = {neighbor_strategy::standard};
    if (regions_matter && mirrors_everywhere) wanted.push_back(neighbor_strategy::aggregate);
    if (regions_matter && mirrors_everywhere && ids_everywhere) wanted.push_back(neighbor_strategy::dedup);
  }
  dedup_tables tables;
  if (std::find(wanted.begin(), wanted.end(), neighbor_strategy::dedup) != wanted.end()) {
    std::string id_problem;
    tables = share_ids(comm, f, v, b, id_problem);
    mpi::agree_on(comm, mpi::error_kind::invalid_topology, id_problem);
  }

  // The plan's communicator and every candidate's buffers and datatypes (local work, no messages), agreed
  // on before any candidate is measured or chosen.
  mpi::agreement built(comm);
  mpi::comm_handle owned;
  built.collective([&] { owned = mpi::duplicate(comm); });
  v.comm = owned.get();
  std::vector<std::unique_ptr<plan_state>> candidates;
  for (neighbor_strategy s : wanted)
    built.attempt([&] {
      candidates.push_back(candidate(v));
      plan_state& c = *candidates.back();
      c.stats.strategy = s;
      if (s == neighbor_strategy::standard) build_direct(c, f, [](int) { return true; });
      if (s == neighbor_strategy::aggregate) build_aggregate(c, f, records);
      if (s == neighbor_strategy::dedup) build_dedup(c, f, tables);
    });
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
      estimates.push_back({wanted[c], seconds[c]});
      why << (c ? ", " : " ") << to_string(wanted[c]) << " " << seconds_text(seconds[c]);
    }
    why << " per exchange (cost model: " << model.source << ")";
    reason = why.str();
  }
  std::unique_ptr<plan_state> p = std::move(candidates[chosen]);
  candidates.clear();  // frees the others' requests before the plan owns the communicator
  p->owned_comm = std::move(owned);
  exchange_statistics& s = p->stats;
  s.regions = static_cast<int>(f.members.size());
  s.reason = reason;
  s.estimates = estimates;
  for (const auto& ph : p->loads) {
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
  for (const auto& copy : p->self_copies) s.bytes_local += p->sends[static_cast<size_t>(copy.first)].bytes;
  return p;
}

}  // namespace
}  // namespace detail

cost_model calibrate_cost_model(MPI_Comm comm, const exchange_options& regions) {
  return detail::measure(comm, detail::find_regions(comm, regions));
}

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
bool neighbor_plan::active() const noexcept { return state_ && state_->active; }
const exchange_statistics& neighbor_plan::statistics() const {
  if (!state_) throw invalid_argument("neighbor_plan::statistics on an empty plan");
  return state_->stats;
}

neighbor_plan neighbor_alltoallv_init(const neighbor_buffers& buffers, MPI_Comm graph_comm,
                                      const exchange_options& options) {
  int topology = MPI_UNDEFINED;
  REDIST_MPI_CHECK(MPI_Topo_test(graph_comm, &topology));
  // A property of the communicator, the same on every rank: no agreement needed.
  if (topology != MPI_DIST_GRAPH)
    throw invalid_topology("neighbor_alltoallv_init: the communicator is not a distributed-graph communicator "
                           "(MPI_Dist_graph_create_adjacent); use the overload with explicit neighbor lists");
  int indegree = 0, outdegree = 0, weighted = 0;
  REDIST_MPI_CHECK(MPI_Dist_graph_neighbors_count(graph_comm, &indegree, &outdegree, &weighted));
  std::vector<int> sources(static_cast<size_t>(indegree)), destinations(static_cast<size_t>(outdegree));
  std::vector<int> in_weights(sources.size() + 1), out_weights(destinations.size() + 1);
  REDIST_MPI_CHECK(MPI_Dist_graph_neighbors(graph_comm, indegree, sources.data(), in_weights.data(), outdegree,
                                            destinations.data(), out_weights.data()));
  return neighbor_plan(detail::build(sources, destinations, buffers, graph_comm, options));
}

neighbor_plan neighbor_alltoallv_init(const std::vector<int>& sources, const std::vector<int>& destinations,
                                      const neighbor_buffers& buffers, MPI_Comm comm,
                                      const exchange_options& options) {
  return neighbor_plan(detail::build(sources, destinations, buffers, comm, options));
}

}  // namespace redist::exchange
