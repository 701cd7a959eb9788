// SPDX-License-Identifier: BSD-3-Clause
// The paper's asymmetric pairwise exchange (Section 3.3) on the slot model (inplace_slots.hpp).
//
// Pair (i, j), i < j, meets in round i + j - 1 (2P-3 rounds, 0 .. 2P-4 for 0-based ranks), so every rank is in at most one pair per
// round and meets its partners in increasing order. In the pair, j gives i every slot owned by i that it
// holds; i gives j as many slots, none of its own: first slots owned by j, then dummies (no bytes to move),
// then real slots of owners i+1, i+2, ... Rank i has met every lower rank before it meets j, so it holds only
// slots of owners >= i, and every filler reaches a rank that still meets the filler's owner. At the end each
// rank holds exactly its own slots, and a local sort by key puts s(0,i) .. s(P-1,i) in order.
#include <mpi.h>

#include <algorithm>
#include <cassert>

#include "inplace_detail.hpp"
#include "inplace_slots.hpp"
#include "mpi/checked.hpp"

namespace redist::exchange::inplace_detail {
namespace {

using slots::data_tag;
using slots::fragment;
using slots::fragment_list;
using slots::list_tag;

// Owner j has max(S_j, R_j) slots: enough to start with its sends and to end with its receives.
slots::layout pairwise_layout(const problem& p) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p.size));
  for (std::size_t j = 0; j < counts.size(); ++j) counts[j] = std::max(p.send_totals[j], p.recv_totals[j]);
  return slots::layout(counts, p.recv_totals);
}

// The lower rank's side of a pair: marks `n` slots for `upper` in the paper's priority and splits the
// fragment that is only partly given. Returns the give flags of the (possibly split) list.
std::vector<char> choose_filler(fragment_list& list, std::int64_t n, int me, int upper, const slots::layout& l) {
  // Priority class: 0 = owned by upper, 1 = dummy of another owner (free to send), 2 = real of another owner,
  // lowest owner first. Within a class the fragments nearest the tail go first (fewer bytes to move).
  struct candidate {
    int cls;
    int owner;
    std::size_t index;
  };
  std::vector<candidate> order;
  order.reserve(list.size());
  for (std::size_t k = 0; k < list.size(); ++k) {
    const int owner = l.owner(list[k].key);
    assert(owner >= me);  // the invariant: lower ranks have taken their slots already
    if (owner == me) continue;
    const int cls = owner == upper ? 0 : (list[k].real ? 2 : 1);
    order.push_back({cls, cls == 2 ? owner : 0, k});
  }
  std::sort(order.begin(), order.end(), [](const candidate& a, const candidate& b) {
    if (a.cls != b.cls) return a.cls < b.cls;
    if (a.owner != b.owner) return a.owner < b.owner;
    return a.index > b.index;
  });
  std::vector<std::int64_t> take(list.size(), 0);
  for (const auto& c : order) {
    if (n == 0) break;
    take[c.index] = std::min(n, list[c.index].count);
    n -= take[c.index];
  }
  assert(n == 0);  // the lower rank holds at least as many foreign slots as the upper one holds of its own

  // A partly given fragment keeps its head and gives its tail (the bytes nearer the buffer's end).
  fragment_list out;
  std::vector<char> give;
  out.reserve(list.size() + 1);
  give.reserve(list.size() + 1);
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& f = list[k];
    if (take[k] > 0 && take[k] < f.count) {
      out.push_back({f.key, f.count - take[k], f.real});
      give.push_back(0);
      out.push_back({f.key + f.count - take[k], take[k], f.real});
      give.push_back(1);
    } else {
      out.push_back(f);
      give.push_back(take[k] > 0 ? 1 : 0);
    }
  }
  list.swap(out);
  return give;
}

// The whole schedule; with move_data false only the metadata moves (the dry run of pairwise_max_bytes).
// Returns the payload bytes this rank sends.
std::int64_t pairwise_schedule(const problem& p, counters& c, bool move_data) {
  const auto l = pairwise_layout(p);
  const int me = p.rank;
  const int np = p.size;
  auto list = slots::initial_fragments(p, l);
  slots::metadata_peak peak(l);
  peak.note(list.size());
  std::int64_t sent = 0;

  for (int round = 0; round <= 2 * np - 4; ++round) {
    const int peer = round + 1 - me;
    if (peer < 0 || peer >= np || peer == me) continue;
    fragment_list given, taken;
    std::vector<char> give;
    if (me > peer) {
      // Upper side: hand over everything the lower rank owns; it needs our list to choose its filler.
      give.resize(list.size());
      for (std::size_t k = 0; k < list.size(); ++k) give[k] = l.owner(list[k].key) == peer ? 1 : 0;
      c.bytes_local += slots::move_to_tail(p.buf, p.extent, list, give, given, p.work, p.work_bytes, move_data, l);
      slots::send_list(p.comm, peer, list_tag, given, c);
      taken = slots::recv_list(p.comm, peer, list_tag, c);
    } else {
      taken = slots::recv_list(p.comm, peer, list_tag, c);
      give = choose_filler(list, slots::slot_count(taken), me, peer, l);
      c.bytes_local += slots::move_to_tail(p.buf, p.extent, list, give, given, p.work, p.work_bytes, move_data, l);
      slots::send_list(p.comm, peer, list_tag, given, c);
    }
    assert(slots::slot_count(given) == slots::slot_count(taken));
    peak.note(list.size() + given.size() + taken.size());

    const std::int64_t give_bytes = slots::real_bytes(given, p.extent);
    const std::int64_t take_bytes = slots::real_bytes(taken, p.extent);
    // Both sides know both sizes, so both skip an empty swap.
    if (move_data && (give_bytes > 0 || take_bytes > 0))
      swap_in_place(p.comm, peer, data_tag, p.buf + slots::real_bytes(list, p.extent), give_bytes, take_bytes, p.work,
                    p.work_bytes, c);
    sent += give_bytes;
    for (const auto& f : taken) slots::append(list, f, l);
    assert(slots::slot_count(list) == l.slots(me));
  }

#ifndef NDEBUG
  for (const auto& f : list) assert(l.owner(f.key) == me);
  assert(slots::real_bytes(list, p.extent) == p.recv_totals[static_cast<std::size_t>(me)] * p.extent);
#endif
  if (move_data) {
    auto blocks = slots::real_blocks(list, p.extent);
    if (!std::is_sorted(blocks.begin(), blocks.end(), [](const block& a, const block& b) { return a.key < b.key; }))
      c.bytes_local += sort_blocks(p.buf, blocks, p.work, p.work_bytes);
  }
  c.metadata_bytes += peak.peak();
  return sent;
}

}  // namespace

std::int64_t pairwise_max_bytes(const problem& p) {
  counters scratch;
  const std::int64_t mine = pairwise_schedule(p, scratch, false);
  std::int64_t most = 0;
  REDIST_MPI_CHECK(redist::mpi::allreduce_yielding(&mine, &most, 1, MPI_INT64_T, MPI_MAX, p.comm));
  return most;
}

void run_pairwise(const problem& p, counters& c) { pairwise_schedule(p, c, true); }

}  // namespace redist::exchange::inplace_detail
