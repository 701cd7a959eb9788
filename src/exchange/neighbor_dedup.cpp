// SPDX-License-Identifier: BSD-3-Clause
// The dedup strategy (paper Section 3.3): aggregate's schedule, each (source rank, global id) crossing a
// region pair once. share_ids tells each rank, from the global ids, which elements it carries.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "mpi/agreement.hpp"
#include "neighbor_detail.hpp"

namespace redist::exchange::detail {
namespace {

// What the global ids tell each rank.
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

enum id_block : std::int64_t { distinct_block = 0, needs_block = 1 };

std::uint64_t hash_ids(const std::int64_t* ids, std::int64_t count) {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(count);
  for (std::int64_t k = 0; k < count; ++k) {
    h ^= static_cast<std::uint64_t>(ids[k]);
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

// Collective: sources tell their region pairs' senders and receivers their distinct ids, destinations tell the
// receivers which (source, id) each of their elements is. The ids were checked (check_global_ids) on every rank;
// an id a receiver needs that its source does not send (only a collision of that check's hashes) goes to `problem`
// (the caller agrees on it).
dedup_tables share_ids(MPI_Comm comm, const layout_facts& f, const plan_setup& p, const neighbor_buffers& b,
                       std::string& problem) {
  dedup_tables t;
  const datatype_info send_type = describe(p.sendtype);
  t.element_bytes = send_type.size;
  const auto ids_of = [](const edge& e, const std::int64_t* ids) -> const std::int64_t* {
    return e.count == 0 || ids == nullptr ? nullptr : ids + e.displacement;
  };

  const int mine = f.region_of[f.me];
  std::vector<std::vector<std::int64_t>> to(static_cast<size_t>(f.nranks));
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> by_region;  // (id, offset)
  for (const edge& e : p.sends) {
    const std::int64_t* ids = ids_of(e, b.send_ids);
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
      const std::int64_t* ids = ids_of(p.recvs[j], b.recv_ids);
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
  std::map<int, std::map<int, std::vector<std::int64_t>>> needs_of;  // [a][destination]: (source, id) pairs
  for (int r = 0; r < f.nranks; ++r) {
    const auto& w = from[r];
    for (size_t k = 0; k < w.size();) {
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

class dedup final : public staged {
 public:
  dedup(const plan_setup& setup, const layout_facts& f, const dedup_tables& t) : staged(setup) {
    const int mine = f.region_of[f.me];
    const std::int64_t element = t.element_bytes;
    build_direct(f, true);

    // As a pair's sender: the message holds each contributor's distinct elements, contributors ascending.
    std::map<int, char*> own_place;  // per destination region, where this rank's contribution goes
    for (const auto& [b, sources] : t.as_sender) {
      std::int64_t total = 0;
      for (const auto& [s, ids] : sources) total += static_cast<std::int64_t>(ids.size()) * element;
      char* message = dedup_buffers.emplace_back(static_cast<size_t>(total)).data();
      std::int64_t offset = 0;
      for (const auto& [s, ids] : sources) {
        const std::int64_t bytes = static_cast<std::int64_t>(ids.size()) * element;
        if (s == f.me) {
          own_place[b] = message + offset;
        } else {
          gather.push_back(recv_init(message + offset, bytes, MPI_BYTE, s, tag_of(b, gather_phase)));
          record(gather_phase, intra, inbound, bytes);
        }
        offset += bytes;
      }
      global_sends.push_back(send_init(message, total, MPI_BYTE, f.receiver(b, mine), global_phase));
      record(global_phase, inter, outbound, total);
    }
    for (const auto& [b, distinct] : t.mine) {
      const std::int64_t bytes = static_cast<std::int64_t>(distinct.ids.size()) * element;
      const MPI_Datatype places = element_places(distinct.offsets, mirrors->send.get());
      copied_bytes += bytes;
      const int leader = f.sender(mine, b);
      if (leader == f.me) {
        typed_packs.push_back({places, bytes, own_place.at(b)});
        continue;
      }
      char* stage = dedup_buffers.emplace_back(static_cast<size_t>(bytes)).data();
      typed_packs.push_back({places, bytes, stage});
      gather.push_back(send_init(stage, bytes, MPI_BYTE, leader, tag_of(b, gather_phase)));
      record(gather_phase, intra, outbound, bytes);
    }

    // Where this rank's elements from each source region go, in receive_order (the order of its needs).
    const std::int64_t recv_extent = describe(recvtype).extent;
    std::map<int, std::pair<MPI_Datatype, std::int64_t>> receive_places;  // region -> (places, elements)
    for (int a = 0; a < static_cast<int>(f.members.size()); ++a) {
      if (a == mine) continue;
      std::vector<std::int64_t> offsets;
      for (int j : receive_order(recvs, f, a))
        for (std::int64_t k = 0; k < recvs[j].count; ++k) offsets.push_back(recvs[j].offset + k * recv_extent);
      if (!offsets.empty())
        receive_places[a] = {element_places(offsets, mirrors->recv.get()), static_cast<std::int64_t>(offsets.size())};
    }

    // As a pair's receiver: every destination's elements go straight out of the message, picked by a type.
    for (const auto& [a, sources] : t.as_receiver) {
      std::int64_t total = 0;
      for (const auto& [s, ids] : sources) total += static_cast<std::int64_t>(ids.size()) * element;
      char* message = dedup_buffers.emplace_back(static_cast<size_t>(total)).data();
      global_recvs.push_back(recv_init(message, total, MPI_BYTE, f.sender(a, mine), global_phase));
      record(global_phase, inter, inbound, total);
      const auto picks = t.picks.find(a);
      if (picks == t.picks.end()) continue;
      for (const auto& [d, indices] : picks->second) {
        const std::int64_t bytes = static_cast<std::int64_t>(indices.size()) * element;
        if (d == f.me) {
          element_pick pick;
          pick.from = message;
          pick.element_bytes = element;
          for (std::int64_t i : indices) pick.offsets.push_back(i * element);
          pick.scratch.resize(static_cast<size_t>(bytes));
          pick.places = receive_places.at(a).first;
          own_picks.push_back(std::move(pick));
          copied_bytes += 2 * bytes;
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
        const MPI_Datatype picked = keep(mpi::hindexed(lengths, displacements, MPI_BYTE));
        scatter_sends.push_back(send_init(message, 1, picked, d, tag_of(a, scatter_phase)));
        record(scatter_phase, intra, outbound, bytes);
      }
    }
    // As a destination: this rank's elements from each source region, from that pair's receiver.
    for (const auto& [a, places] : receive_places) {
      const int leader = f.receiver(mine, a);
      if (leader == f.me) continue;  // picked out of the pair message above
      const std::int64_t bytes = places.second * element;
      char* stage = dedup_buffers.emplace_back(static_cast<size_t>(bytes)).data();
      scatter_recvs.push_back(recv_init(stage, bytes, MPI_BYTE, leader, tag_of(a, scatter_phase)));
      record(scatter_phase, intra, inbound, bytes);
      incoming_unpacks.push_back({stage, bytes, places.first});
      copied_bytes += bytes;
    }
  }

 private:
  // Elements picked from the send buffer by a datatype of their places (one pack per region), and put at
  // their receive places by another (one unpack per source region).
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

  MPI_Datatype element_places(const std::vector<std::int64_t>& byte_offsets, MPI_Datatype element) {
    return keep(mpi::hindexed_single(byte_offsets, element));
  }
  void unpack(const char* in, std::int64_t size, MPI_Datatype places) const {
    mpi::local_copy(in, size, MPI_BYTE, recvbuf, 1, places, comm);
  }

  void pack_sends() override {
    for (const typed_pack& t : typed_packs) mpi::local_copy(sendbuf, 1, t.places, t.out, t.bytes, MPI_BYTE, comm);
  }
  void unpack_own() override {
    for (element_pick& pick : own_picks) {
      for (size_t k = 0; k < pick.offsets.size(); ++k)
        std::memcpy(pick.scratch.data() + k * pick.element_bytes, pick.from + pick.offsets[k],
                    static_cast<size_t>(pick.element_bytes));
      unpack(pick.scratch.data(), static_cast<std::int64_t>(pick.scratch.size()), pick.places);
    }
  }
  void unpack_incoming() const override {
    for (const typed_unpack& u : incoming_unpacks) unpack(u.in, u.bytes, u.places);
  }
};

}  // namespace

std::string check_global_ids(MPI_Comm comm, const plan_setup& p, const neighbor_buffers& b, int nranks) {
  std::string problem;
  const datatype_info send_type = describe(p.sendtype), recv_type = describe(p.recvtype);
  if (send_type.size != recv_type.size)
    problem = "global ids: the send type's size (" + std::to_string(send_type.size) +
              " bytes) differs from the "
              "receive type's (" +
              std::to_string(recv_type.size) + "): global ids name single elements";
  // An edge's ids (null: none, or a problem said).
  const auto ids_of = [&](const edge& e, const std::int64_t* ids, std::int64_t size,
                          const char* side) -> const std::int64_t* {
    if (e.count == 0) return nullptr;
    if (ids == nullptr || e.displacement < 0 || (size >= 0 && e.displacement + e.count > size)) {
      if (problem.empty())
        problem = std::string(side) + " global ids: the edge " + (side[0] == 's' ? "to" : "from") + " rank " +
                  std::to_string(e.peer) + " needs ids [" + std::to_string(e.displacement) + ", " +
                  std::to_string(e.displacement + e.count) + ") of " +
                  (ids == nullptr ? std::string("a null array") : "an array of " + std::to_string(size));
      return nullptr;
    }
    return ids + e.displacement;
  };
  // Every send edge's ids, hashed, to its destination, which compares them with its receive edge's in order.
  std::vector<std::vector<std::int64_t>> to(static_cast<std::size_t>(nranks));
  for (const edge& e : p.sends) {
    const std::int64_t* ids = ids_of(e, b.send_ids, b.send_ids_size, "send");
    to[static_cast<std::size_t>(e.peer)].push_back(
        static_cast<std::int64_t>(ids ? hash_ids(ids, e.count) : hash_ids(nullptr, 0)));
  }
  // One word per edge: the graph, agreed before (the set-up's records), says how many come from each rank.
  std::vector<std::int64_t> words_from(static_cast<std::size_t>(nranks), 0);
  for (const edge& e : p.recvs) ++words_from[static_cast<std::size_t>(e.peer)];
  const auto from = exchange_words(comm, to, &words_from);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  std::map<int, std::size_t> seen;
  for (const edge& e : p.recvs) {
    const std::size_t k = seen[e.peer]++;
    const std::int64_t* ids = ids_of(e, b.recv_ids, b.recv_ids_size, "receive");
    const auto expected = static_cast<std::int64_t>(ids ? hash_ids(ids, e.count) : hash_ids(nullptr, 0));
    const auto& got = from[static_cast<std::size_t>(e.peer)];
    if (problem.empty() && (k >= got.size() || got[k] != expected))
      problem = "global ids: the ids that rank " + std::to_string(me) + " expects on its receive edge from rank " +
                std::to_string(e.peer) + " differ from the ids that rank sends on that edge";
  }
  return problem;
}

strategy_builder prepare_dedup(const strategy_context& c) {
  // Shared, not copied, by the builder (std::function copies what it holds).
  std::string id_problem;
  auto tables = std::make_shared<const dedup_tables>(share_ids(c.comm, c.regions, c.setup, c.buffers, id_problem));
  mpi::agree_on(c.comm, mpi::error_kind::invalid_topology, id_problem);
  return [&f = c.regions, tables](const plan_setup& setup) { return std::make_unique<dedup>(setup, f, *tables); };
}

}  // namespace redist::exchange::detail
