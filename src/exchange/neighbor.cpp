// The persistent neighborhood alltoallv engine: setup (validation, regions, strategy) and the two strategies.
//
// Messages of the standard strategy and the fully local messages of the aggregate strategy use the caller's
// datatypes directly (no copy). Aggregated data travels packed (MPI_Pack_c / MPI_Unpack_c), so that
// segments of different edges can share one message whatever the datatypes: a segment holds the signature
// bytes of its edge, count * MPI_Type_size bytes.
//
// Tags, per ordered pair of ranks: 4 * k + phase, where phase 0 is a direct message (k: the edge's
// occurrence among the edges between the two ranks, so that repeated edges match in order), 1 the gather
// to a region's sender (k: the destination region), 2 the inter-region message, 3 the scatter from a
// region's receiver (k: the source region).
#include "redist/exchange/neighbor.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "redist/error.hpp"
#include "redist/mpi/checked.hpp"

namespace redist::exchange {

const char* to_string(neighbor_strategy s) noexcept {
  switch (s) {
    case neighbor_strategy::automatic: return "automatic";
    case neighbor_strategy::standard: return "standard";
    case neighbor_strategy::aggregate: return "aggregate";
  }
  return "?";
}

namespace detail {
namespace {

enum phase_tag : int { direct_phase = 0, gather_phase = 1, global_phase = 2, scatter_phase = 3 };
int tag_of(std::int64_t k, phase_tag phase) { return static_cast<int>(4 * k + phase); }

// One edge of the caller's send or receive side.
struct edge {
  int peer = 0;
  int count = 0;
  std::int64_t offset = 0;  // bytes from the buffer's start: displacement * extent
  std::int64_t bytes = 0;   // signature bytes: count * MPI_Type_size
  int occurrence = 0;       // how many earlier edges of this side have the same peer
};

// An edge's data at an offset of a staging buffer.
struct segment {
  int edge = 0;
  std::int64_t offset = 0;
};

struct datatype_info {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};

datatype_info describe(MPI_Datatype t) {
  datatype_info d;
  REDIST_MPI_CHECK(MPI_Type_size_c(t, &d.size));
  REDIST_MPI_CHECK(MPI_Type_get_extent_c(t, &d.lb, &d.extent));
  REDIST_MPI_CHECK(MPI_Type_get_true_extent_c(t, &d.true_lb, &d.true_extent));
  return d;
}

}  // namespace

struct plan_state {
  mpi::comm_handle comm;  // a duplicate: the plan's messages never match the caller's
  const char* sendbuf = nullptr;
  char* recvbuf = nullptr;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  std::vector<edge> sends, recvs;
  exchange_statistics stats;
  bool active = false;

  // Direct messages (all of standard's, the fully local ones of aggregate) and copies to self.
  std::vector<MPI_Request> direct;
  std::vector<std::pair<int, int>> self_copies;  // (send edge, receive edge)
  std::vector<char> self_scratch;

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
  std::vector<MPI_Request> gather, global_sends, global_recvs, scatter_sends, scatter_recvs;
  std::vector<mpi::datatype_handle> owned_types;

  plan_state() = default;
  plan_state(const plan_state&) = delete;
  plan_state& operator=(const plan_state&) = delete;
  ~plan_state() {
    if (mpi::finalized()) return;
    for (auto* list : {&direct, &gather, &global_sends, &global_recvs, &scatter_sends, &scatter_recvs})
      for (MPI_Request& r : *list)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }

  void pack(const edge& e, char* out) const {
    MPI_Count position = 0;
    REDIST_MPI_CHECK(MPI_Pack_c(sendbuf + e.offset, e.count, sendtype, out, e.bytes, &position, comm.get()));
    if (position != e.bytes)
      throw error("MPI_Pack_c wrote " + std::to_string(position) + " bytes where the send type's size gives " +
                  std::to_string(e.bytes));
  }
  void unpack(const char* in, const edge& e) const {
    MPI_Count position = 0;
    REDIST_MPI_CHECK(MPI_Unpack_c(in, e.bytes, &position, recvbuf + e.offset, e.count, recvtype, comm.get()));
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
    for (auto [s, r] : self_copies) {
      pack(sends[s], self_scratch.data());
      unpack(self_scratch.data(), recvs[r]);
    }
    // The region's senders need every contribution before the inter-region message can leave (Alg. 5).
    for (outgoing_stage& o : outgoing)
      for (const segment& s : o.segments) pack(sends[s.edge], o.buffer.data() + s.offset);
    for (pair_buffer& g : global_out)
      for (const segment& s : g.own) pack(sends[s.edge], g.buffer.data() + s.offset);
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
    wait_all(scatter_sends);
    wait_all(scatter_recvs);
    for (const incoming_stage& in : incoming)
      for (const segment& s : in.segments) unpack(in.buffer.data() + s.offset, recvs[s.edge]);
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

std::string check_side(const char* side, const char* counts_name, const std::vector<int>& peers, const int* counts,
                       const int* displs, MPI_Datatype type, const void* buf, std::int64_t capacity,
                       std::int64_t entries, int nranks, std::vector<edge>& edges, bool check_overlap) {
  const auto degree = static_cast<std::int64_t>(peers.size());
  if (entries == -2)
    return std::string(side) + ": the neighbor list, counts and displacements disagree in length (or the degree is negative)";
  if (entries >= 0 && entries != degree)
    return std::string(side) + ": " + std::to_string(entries) + " counts for " + std::to_string(degree) +
           " neighbors";
  if (degree > 0 && (counts == nullptr || displs == nullptr))
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
    e.offset = static_cast<std::int64_t>(displs[i]) * t.extent;
    e.bytes = static_cast<std::int64_t>(e.count) * t.size;
    if (e.count == 0) continue;
    if (displs[i] < 0)
      return std::string(side) + " displacement " + std::to_string(i) + " = " + std::to_string(displs[i]) +
             " is negative";
    if (buf == nullptr && e.bytes > 0) return std::string(side) + ": null buffer with data to move";
    const std::int64_t end = e.offset + (e.count - 1) * t.extent + t.true_lb + t.true_extent;
    if (capacity >= 0 && end > capacity * t.extent)
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
    mpi::comm_handle node = mpi::split_shared(comm);
    int lowest = f.me;
    REDIST_MPI_CHECK(MPI_Allreduce(&f.me, &lowest, 1, MPI_INT, MPI_MIN, node.get()));
    REDIST_MPI_CHECK(MPI_Allgather(&lowest, 1, MPI_INT, key.data(), 1, MPI_INT, comm));
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
  std::vector<int> send_counts(static_cast<size_t>(f.nranks)), recv_counts(send_counts.size());
  for (int r = 0; r < f.nranks; ++r) {
    if (to[r].size() > static_cast<size_t>(INT32_MAX))
      throw overflow_error("exchange setup: too many edges to describe to rank " + std::to_string(r));
    send_counts[r] = static_cast<int>(to[r].size());
  }
  REDIST_MPI_CHECK(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm));
  std::vector<int> sdispls(send_counts.size()), rdispls(send_counts.size());
  std::int64_t send_total = 0, recv_total = 0;
  for (int r = 0; r < f.nranks; ++r) {
    if (send_total > INT32_MAX || recv_total > INT32_MAX)
      throw overflow_error("exchange setup: edge descriptions exceed 2^31 words");
    sdispls[r] = static_cast<int>(send_total);
    rdispls[r] = static_cast<int>(recv_total);
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  std::vector<std::int64_t> flat_out(static_cast<size_t>(send_total)), flat_in(static_cast<size_t>(recv_total));
  for (int r = 0; r < f.nranks; ++r) std::copy(to[r].begin(), to[r].end(), flat_out.begin() + sdispls[r]);
  REDIST_MPI_CHECK(MPI_Alltoallv(flat_out.data(), send_counts.data(), sdispls.data(), MPI_INT64_T, flat_in.data(),
                                 recv_counts.data(), rdispls.data(), MPI_INT64_T, comm));
  std::vector<std::vector<std::int64_t>> from(static_cast<size_t>(f.nranks));
  for (int r = 0; r < f.nranks; ++r)
    from[r].assign(flat_in.begin() + rdispls[r], flat_in.begin() + rdispls[r] + recv_counts[r]);
  return from;
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

MPI_Request send_init(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  MPI_Request r;
  REDIST_MPI_CHECK(MPI_Send_init_c(buf, count, type, dest, tag, comm, &r));
  return r;
}
MPI_Request recv_init(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm) {
  MPI_Request r;
  REDIST_MPI_CHECK(MPI_Recv_init_c(buf, count, type, source, tag, comm, &r));
  return r;
}

void count_message(exchange_statistics& s, bool inter_region, std::int64_t bytes) {
  (inter_region ? s.inter_region_messages : s.intra_region_messages) += 1;
  (inter_region ? s.inter_region_bytes : s.intra_region_bytes) += bytes;
}

// Direct messages for every edge with data whose peer passes `take` (self edges become local copies).
template <class Take>
void build_direct(plan_state& p, const layout_facts& f, Take take) {
  const MPI_Comm comm = p.comm.get();
  std::vector<int> self_sends, self_recvs;
  for (size_t i = 0; i < p.sends.size(); ++i) {
    const edge& e = p.sends[i];
    if (e.bytes == 0 || !take(e.peer)) continue;
    if (e.peer == f.me) {
      self_sends.push_back(static_cast<int>(i));
      continue;
    }
    p.direct.push_back(send_init(p.sendbuf + e.offset, e.count, p.sendtype, e.peer, tag_of(e.occurrence, direct_phase), comm));
    count_message(p.stats, f.region_of[e.peer] != f.region_of[f.me], e.bytes);
  }
  for (size_t j = 0; j < p.recvs.size(); ++j) {
    const edge& e = p.recvs[j];
    if (e.bytes == 0 || !take(e.peer)) continue;
    if (e.peer == f.me) {
      self_recvs.push_back(static_cast<int>(j));
      continue;
    }
    p.direct.push_back(recv_init(p.recvbuf + e.offset, e.count, p.recvtype, e.peer, tag_of(e.occurrence, direct_phase), comm));
  }
  std::int64_t largest = 0;
  for (size_t k = 0; k < self_sends.size(); ++k) {  // matched in order, as MPI matches repeated edges
    p.self_copies.emplace_back(self_sends[k], self_recvs[k]);
    largest = std::max(largest, p.sends[self_sends[k]].bytes);
  }
  p.self_scratch.resize(static_cast<size_t>(largest));
}

void build_aggregate(plan_state& p, const layout_facts& f, const std::vector<std::vector<std::int64_t>>& records) {
  const MPI_Comm comm = p.comm.get();
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
    const int leader = f.sender(mine, b);
    if (!mine_to_b.empty() && leader != f.me) {
      p.outgoing.push_back({std::vector<char>(static_cast<size_t>(total)), std::move(mine_to_b)});
      p.gather.push_back(send_init(p.outgoing.back().buffer.data(), total, MPI_BYTE, leader, tag_of(b, gather_phase), comm));
      count_message(p.stats, false, total);
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
        std::vector<MPI_Count> lengths, places;
        for (const pair_entry* e : list) {
          lengths.push_back(e->bytes);
          places.push_back(e->offset);
        }
        MPI_Datatype scattered;
        REDIST_MPI_CHECK(MPI_Type_create_hindexed_c(static_cast<MPI_Count>(list.size()), lengths.data(),
                                                    places.data(), MPI_BYTE, &scattered));
        REDIST_MPI_CHECK(MPI_Type_commit(&scattered));
        p.owned_types.emplace_back(scattered);
        p.gather.push_back(recv_init(g.buffer.data(), 1, scattered, source, tag_of(b, gather_phase), comm));
      }
      p.global_sends.push_back(send_init(g.buffer.data(), size, MPI_BYTE, f.receiver(b, mine), global_phase, comm));
      count_message(p.stats, true, size);
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
      p.scatter_recvs.push_back(recv_init(p.incoming.back().buffer.data(), total, MPI_BYTE, leader, tag_of(a, scatter_phase), comm));
    }
    if (as_receiver[a].empty()) continue;
    std::vector<pair_entry>& entries = as_receiver[a];
    const std::int64_t size = lay_out(entries);
    p.global_in.push_back({std::vector<char>(static_cast<size_t>(size)), {}});
    plan_state::pair_buffer& g = p.global_in.back();
    p.global_recvs.push_back(recv_init(g.buffer.data(), size, MPI_BYTE, f.sender(a, mine), global_phase, comm));
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
      p.scatter_sends.push_back(send_init(g.buffer.data() + begin, bytes, MPI_BYTE, destination, tag_of(a, scatter_phase), comm));
      count_message(p.stats, false, bytes);
    }
  }
}

std::unique_ptr<plan_state> build(const std::vector<int>& sources, const std::vector<int>& destinations,
                                  const neighbor_buffers& b, MPI_Comm comm, const exchange_options& options) {
  const int nranks = mpi::size(comm);
  auto p = std::make_unique<plan_state>();
  p->sendbuf = static_cast<const char*>(b.sendbuf);
  p->recvbuf = static_cast<char*>(b.recvbuf);
  p->sendtype = b.sendtype;
  p->recvtype = b.recvtype;
  std::string problem;
  if (options.region_size < 0)
    problem = "exchange_options::region_size = " + std::to_string(options.region_size) + " is negative";
  if (problem.empty())
    problem = check_side("send", "sendcounts", destinations, b.sendcounts, b.sdispls, b.sendtype, b.sendbuf,
                         b.send_capacity, b.send_entries, nranks, p->sends, false);
  if (problem.empty())
    problem = check_side("receive", "recvcounts", sources, b.recvcounts, b.rdispls, b.recvtype, b.recvbuf,
                         b.recv_capacity, b.recv_entries, nranks, p->recvs, true);
  mpi::agree_on_errors(comm, problem.empty() ? mpi::error_kind::none : mpi::error_kind::invalid_argument, problem);

  const layout_facts f = find_regions(comm, options);
  int tag_ub_found = 0;
  int* tag_ub = nullptr;
  REDIST_MPI_CHECK(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &tag_ub_found));
  const auto records = exchange_records(comm, f, p->sends);

  // Edge j of this rank's receive side from rank r must be the same occurrence of r's send edges to it,
  // with the same bytes; the pair messages are counted on their senders for the automatic choice.
  std::ostringstream mismatch;
  std::vector<std::vector<std::int64_t>> incoming_bytes(static_cast<size_t>(nranks));
  std::map<int, std::int64_t> pair_messages;
  for (int source = 0; source < nranks; ++source) {
    const auto& rec = records[source];
    for (size_t k = 0; k + 1 < rec.size(); k += record_words) {
      const int destination = static_cast<int>(rec[k]);
      if (destination == f.me) incoming_bytes[source].push_back(rec[k + 1]);
      const int a = f.region_of[source], b = f.region_of[destination];
      if (a != b && rec[k + 1] > 0 && f.sender(a, b) == f.me) ++pair_messages[b];
    }
  }
  std::vector<std::vector<std::int64_t>> expected(static_cast<size_t>(nranks));
  for (const edge& e : p->recvs) expected[e.peer].push_back(e.bytes);
  for (int source = 0; source < nranks; ++source) {
    if (incoming_bytes[source] == expected[source]) continue;
    mismatch << "send and receive graphs differ: rank " << source << " sends " << incoming_bytes[source].size()
             << " edge(s) to rank " << f.me << " (bytes";
    for (auto v : incoming_bytes[source]) mismatch << " " << v;
    mismatch << "), rank " << f.me << " lists " << expected[source].size() << " receive edge(s) from it (bytes";
    for (auto v : expected[source]) mismatch << " " << v;
    mismatch << ")";
    break;
  }
  std::int64_t busiest_pair = 0;
  for (const auto& [region, n] : pair_messages) busiest_pair = std::max(busiest_pair, n);
  if (mismatch.str().empty() && tag_ub_found && tag_of(static_cast<std::int64_t>(f.members.size()), scatter_phase) > *tag_ub)
    mismatch << "the tags of " << f.members.size() << " regions exceed MPI_TAG_UB = " << *tag_ub;
  for (const edge& e : p->sends)
    if (mismatch.str().empty() && tag_ub_found && tag_of(e.occurrence, direct_phase) > *tag_ub)
      mismatch << "rank " << f.me << " repeats neighbor " << e.peer << " more often than MPI_TAG_UB allows";
  std::vector<std::uint64_t> reduced = {UINT64_MAX - static_cast<std::uint64_t>(busiest_pair)};
  mpi::agree_on_errors(comm, mismatch.str().empty() ? mpi::error_kind::none : mpi::error_kind::inconsistent_ranks,
                       mismatch.str(), reduced);
  busiest_pair = static_cast<std::int64_t>(UINT64_MAX - reduced[0]);

  exchange_statistics& s = p->stats;
  s.regions = static_cast<int>(f.members.size());
  s.strategy = options.strategy;
  if (options.strategy == neighbor_strategy::automatic) {
    const bool worth_it = f.max_region_size > 1 && busiest_pair > 1;
    s.strategy = worth_it ? neighbor_strategy::aggregate : neighbor_strategy::standard;
    s.reason = "automatic (temporary rule): " +
               (worth_it ? "a region pair carries " + std::to_string(busiest_pair) +
                               " messages and regions hold up to " + std::to_string(f.max_region_size) + " ranks"
                         : f.max_region_size <= 1 ? std::string("every region holds one rank")
                                                  : std::string("no region pair carries more than one message"));
  } else {
    s.reason = std::string("requested ") + to_string(options.strategy);
  }

  MPI_Comm dup;
  REDIST_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  p->comm = mpi::comm_handle(dup);
  if (s.strategy == neighbor_strategy::aggregate)
    build_aggregate(*p, f, records);
  else
    build_direct(*p, f, [](int) { return true; });
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
