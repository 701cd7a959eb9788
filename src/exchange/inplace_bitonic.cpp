// SPDX-License-Identifier: BSD-3-Clause
// The paper's bitonic-sort algorithm (Section 3.2) for any P, on the slot model (inplace_slots.hpp).
//
// Every rank holds a block of M = max over j of max(S_j, R_j) slots, kept sorted by key. The network is
// Batcher's bitonic sort in its ascending-only form on 2^ceil(log2 P) positions: stage k = 1 .. p is a "flip"
// step (in each group of 2^k positions, a meets the mirrored position) followed by half-cleaner steps
// j = k-2 .. 0 (a meets a XOR 2^j). Positions >= P are virtual blocks of +infinity; they are always the upper
// end of their comparators, which would leave both blocks as they are, so those comparators are skipped. Each
// comparator (a < b) is a merge-split: a keeps the M smallest slots of the two blocks, b the M largest. A
// merge-split network sorts blocks of equal size whenever the comparator network sorts single values, which is
// why every rank gets the same M. Sorted, rank j holds keys [jM, (j+1)M): exactly s(0,j) .. s(P-1,j).
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

std::int64_t common_slots(const problem& p) {
  std::int64_t m = 0;
  for (std::size_t j = 0; j < p.send_totals.size(); ++j) m = std::max({m, p.send_totals[j], p.recv_totals[j]});
  return m;
}

// Calls visit(partner) for every step of the network at position a, in order (partner may be >= P).
template <class Visit>
void for_each_step(int np, int a, Visit visit) {
  int stages = 0;
  while ((std::int64_t{1} << stages) < np) ++stages;
  for (int k = 1; k <= stages; ++k) {
    const int group = 1 << k;
    const int base = a & ~(group - 1);
    visit(base + group - 1 - (a - base));  // flip: mirror inside the group
    for (int j = k - 2; j >= 0; --j) visit(a ^ (1 << j));
  }
}

struct bitonic_state {
  const problem& p;
  std::int64_t m;
  slots::layout l;
  fragment_list list;
  slots::metadata_peak peak;
};

// Slots of `lower`'s list among the m smallest of both lists (merge path). Keys are unique and every fragment
// covers a key interval that holds no other slot, so ordering fragments by first key orders all their slots.
std::int64_t lower_share(const fragment_list& lower, const fragment_list& upper, std::int64_t m) {
  std::size_t a = 0, b = 0;
  std::int64_t left = m, share = 0;
  while (left > 0) {
    const bool from_lower = b == upper.size() || (a < lower.size() && lower[a].key < upper[b].key);
    const auto& f = from_lower ? lower[a] : upper[b];
    const std::int64_t take = std::min(left, f.count);
    if (from_lower) {
      share += take;
      ++a;
    } else {
      ++b;
    }
    left -= take;
  }
  return share;
}

// One comparator: this rank and peer end with the lower and the upper m slots of their union.
void merge_split(bitonic_state& s, int peer, counters& c) {
  const problem& p = s.p;
  const bool lower = p.rank < peer;
  const auto theirs = slots::exchange_lists(p.comm, peer, list_tag, s.list, c);
  const std::int64_t x = lower ? lower_share(s.list, theirs, s.m) : lower_share(theirs, s.list, s.m);
  s.peak.note(s.list.size() + theirs.size());
  if (x == s.m) return;  // already split: the lower block's slots all precede the upper block's

  // The lower rank gives its slots [x, m) (its tail), the upper one its slots [0, m - x) (its head).
  fragment_list kept, given, taken, rest;
  if (lower) {
    slots::split_at_slot(s.list, x, kept, given);
    slots::split_at_slot(theirs, s.m - x, taken, rest);
  } else {
    slots::split_at_slot(s.list, s.m - x, given, kept);
    slots::split_at_slot(theirs, x, rest, taken);
  }
  const std::int64_t kept_bytes = slots::real_bytes(kept, p.extent);
  const std::int64_t give_bytes = slots::real_bytes(given, p.extent);
  const std::int64_t take_bytes = slots::real_bytes(taken, p.extent);
  if (!lower && give_bytes > 0 && kept_bytes > 0)  // the head goes to the tail to be swapped
    c.bytes_local += rotate_bytes(p.buf, give_bytes, kept_bytes, p.work, p.work_bytes);
  if (give_bytes > 0 || take_bytes > 0)
    swap_in_place(p.comm, peer, data_tag, p.buf + kept_bytes, give_bytes, take_bytes, p.work, p.work_bytes, c);

  // Kept and taken are each sorted; merge them (bytes and list) into one sorted block.
  auto blocks = slots::real_blocks(kept, p.extent);
  const std::size_t middle = blocks.size();
  for (const auto& b : slots::real_blocks(taken, p.extent)) blocks.push_back(b);
  if (middle > 0 && middle < blocks.size()) {
    if (blocks[middle - 1].key > blocks[middle].key) {
      if (blocks.back().key < blocks.front().key)  // the taken run precedes all kept: one rotation
        c.bytes_local += rotate_bytes(p.buf, kept_bytes, take_bytes, p.work, p.work_bytes);
      else
        c.bytes_local += merge_blocks(p.buf, blocks, middle, p.work, p.work_bytes);
    }
  }
  s.peak.note(theirs.size() + kept.size() + given.size() + taken.size() + rest.size() + blocks.size());
  fragment_list merged;
  merged.reserve(kept.size() + taken.size());
  std::merge(kept.begin(), kept.end(), taken.begin(), taken.end(), std::back_inserter(merged),
             [](const fragment& a, const fragment& b) { return a.key < b.key; });
  slots::coalesce(merged, s.l);
  s.list.swap(merged);
  assert(slots::slot_count(s.list) == s.m);
}

}  // namespace

bool bitonic_fits(const problem& p) {
  const std::int64_t m = common_slots(p);
  return std::all_of(p.capacities.begin(), p.capacities.end(), [m](std::int64_t cap) { return cap >= m; });
}

std::int64_t bitonic_max_bytes(const problem& p) {
  // Each step a rank takes part in sends at most its whole block.
  std::int64_t most_steps = 0;
  for (int a = 0; a < p.size; ++a) {
    std::int64_t steps = 0;
    for_each_step(p.size, a, [&](int partner) { steps += partner < p.size ? 1 : 0; });
    most_steps = std::max(most_steps, steps);
  }
  return most_steps * common_slots(p) * p.extent;
}

void run_bitonic(const problem& p, counters& c) {
  const std::int64_t m = common_slots(p);
  slots::layout l(std::vector<std::int64_t>(static_cast<std::size_t>(p.size), m), p.recv_totals);
  bitonic_state s{p, m, l, slots::initial_fragments(p, l), slots::metadata_peak(l)};
  s.peak.note(s.list.size());
  assert(slots::slot_count(s.list) == m);
  for_each_step(p.size, p.rank, [&](int peer) {
    if (peer < p.size) merge_split(s, peer, c);
  });
#ifndef NDEBUG
  for (const auto& f : s.list) assert(l.owner(f.key) == p.rank);
  assert(slots::real_bytes(s.list, p.extent) == p.recv_totals[static_cast<std::size_t>(p.rank)] * p.extent);
#endif
  c.metadata_bytes += s.peak.peak();
}

}  // namespace redist::exchange::inplace_detail
