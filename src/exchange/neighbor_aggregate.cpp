// SPDX-License-Identifier: BSD-3-Clause
// The aggregate strategy (gather within the region, one message per region pair, scatter within the region)
// and the schedule it shares with dedup.
#include <algorithm>
#include <map>
#include <vector>

#include "neighbor_detail.hpp"

namespace redist::exchange::detail {

void staged::start() {
  direct.start_all();
  global_recvs.start_all();
  scatter_recvs.start_all();
  copy_to_self();
  // The region's senders need every contribution before the inter-region message can leave (Alg. 5).
  pack_sends();
  gather.start_all();
  gather.wait_all();
  global_sends.start_all();
}

void staged::wait() {
  direct.wait_all();
  global_sends.wait_all();
  global_recvs.wait_all();
  // Alg. 6: the scatter within the region follows the inter-region messages.
  scatter_sends.start_all();
  unpack_own();
  scatter_sends.wait_all();
  scatter_recvs.wait_all();
  unpack_incoming();
}

namespace {

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

class aggregate final : public staged {
 public:
  aggregate(const plan_setup& setup, const layout_facts& f, const std::vector<std::vector<std::int64_t>>& records)
      : staged(setup) {
    const int mine = f.region_of[f.me];
    const int nregions = static_cast<int>(f.members.size());
    build_direct(f, true);

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
    outgoing.reserve(nregions);
    global_out.reserve(nregions);
    global_in.reserve(nregions);
    incoming.reserve(nregions);
    for (int b = 0; b < nregions; ++b) {
      if (b == mine) continue;
      std::vector<segment> mine_to_b;
      std::int64_t total = 0;
      for (size_t i = 0; i < sends.size(); ++i)
        if (sends[i].bytes > 0 && f.region_of[sends[i].peer] == b) {
          mine_to_b.push_back({static_cast<int>(i), total});
          total += sends[i].bytes;
        }
      copied_bytes += total;
      const int leader = f.sender(mine, b);
      if (!mine_to_b.empty() && leader != f.me) {
        outgoing.push_back({std::vector<char>(static_cast<size_t>(total)), std::move(mine_to_b)});
        gather.push_back(send_init(outgoing.back().buffer.data(), total, MPI_BYTE, leader, tag_of(b, gather_phase)));
        record(gather_phase, intra, outbound, total);
      }
      if (!as_sender[b].empty()) {
        std::vector<pair_entry>& entries = as_sender[b];
        const std::int64_t size = lay_out(entries);
        global_out.push_back({std::vector<char>(static_cast<size_t>(size)), {}});
        pair_buffer& g = global_out.back();
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
          const MPI_Datatype scattered = keep(mpi::hindexed(lengths, places, MPI_BYTE));
          gather.push_back(recv_init(g.buffer.data(), 1, scattered, source, tag_of(b, gather_phase)));
          record(gather_phase, intra, inbound, contribution);
        }
        global_sends.push_back(send_init(g.buffer.data(), size, MPI_BYTE, f.receiver(b, mine), global_phase));
        record(global_phase, inter, outbound, size);
      }
    }
    for (int a = 0; a < nregions; ++a) {
      if (a == mine) continue;
      const std::vector<int> order = receive_order(recvs, f, a);
      const int leader = f.receiver(mine, a);
      if (!order.empty() && leader != f.me) {
        incoming_stage in;
        std::int64_t total = 0;
        for (int j : order) {
          in.segments.push_back({j, total});
          total += recvs[j].bytes;
        }
        in.buffer.resize(static_cast<size_t>(total));
        incoming.push_back(std::move(in));
        scatter_recvs.push_back(
            recv_init(incoming.back().buffer.data(), total, MPI_BYTE, leader, tag_of(a, scatter_phase)));
        record(scatter_phase, intra, inbound, total);
      }
      for (int j : order) copied_bytes += recvs[j].bytes;
      if (as_receiver[a].empty()) continue;
      std::vector<pair_entry>& entries = as_receiver[a];
      const std::int64_t size = lay_out(entries);
      global_in.push_back({std::vector<char>(static_cast<size_t>(size)), {}});
      pair_buffer& g = global_in.back();
      global_recvs.push_back(recv_init(g.buffer.data(), size, MPI_BYTE, f.sender(a, mine), global_phase));
      record(global_phase, inter, inbound, size);
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
        scatter_sends.push_back(
            send_init(g.buffer.data() + begin, bytes, MPI_BYTE, destination, tag_of(a, scatter_phase)));
        record(scatter_phase, intra, outbound, bytes);
      }
    }
  }

 private:
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

  // An edge's signature bytes to / from a staging buffer, through the byte mirrors.
  void pack(const edge& e, char* out) const {
    mpi::local_copy(sendbuf + e.offset, e.count, mirrors->send.get(), out, e.bytes, MPI_BYTE, comm);
  }
  void unpack(const char* in, const edge& e) const {
    mpi::local_copy(in, e.bytes, MPI_BYTE, recvbuf + e.offset, e.count, mirrors->recv.get(), comm);
  }

  void pack_sends() override {
    for (outgoing_stage& o : outgoing)
      for (const segment& s : o.segments) pack(sends[s.edge], o.buffer.data() + s.offset);
    for (pair_buffer& g : global_out)
      for (const segment& s : g.own) pack(sends[s.edge], g.buffer.data() + s.offset);
  }
  void unpack_own() override {
    for (const pair_buffer& g : global_in)
      for (const segment& s : g.own) unpack(g.buffer.data() + s.offset, recvs[s.edge]);
  }
  void unpack_incoming() const override {
    for (const incoming_stage& in : incoming)
      for (const segment& s : in.segments) unpack(in.buffer.data() + s.offset, recvs[s.edge]);
  }
};

}  // namespace

strategy_builder prepare_aggregate(const strategy_context& c) {
  return [&f = c.regions, &records = c.records](const plan_setup& setup) {
    return std::make_unique<aggregate>(setup, f, records);
  };
}

}  // namespace redist::exchange::detail
