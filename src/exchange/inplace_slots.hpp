// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The slot model shared by the pairwise and the bitonic in-place algorithms (inplace_pairwise.cpp,
// inplace_bitonic.cpp).
//
// The paper assumes every rank sends and receives N elements. Here totals differ, so elements are counted as
// "slots": owner j has slots(j) >= max(S_j, R_j) of them, each with a unique int64 key, its final position in
// the global order. Owner j's keys are [start(j), start(j+1)): the first R_j are the real elements
// s(0,j) .. s(P-1,j) in that order, the rest are dummies (metadata only, no bytes). Rank i starts with its S_i
// real slots and slots(i) - S_i dummies; exchanges always trade equal slot counts, so a rank always holds
// slots(i) slots and its real bytes never exceed its capacity.
//
// A rank's content is a list of fragments in memory order; the real ones lie end to end from buf.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "inplace_detail.hpp"

namespace redist::exchange::inplace_detail::slots {

// The tags of the slot algorithms (pairwise, bitonic) on the plan's private communicator.
constexpr int list_tag = 1;  // fragment lists
constexpr int data_tag = 2;  // swap_in_place (it also uses data_tag + 1)

struct fragment {
  std::int64_t key = 0;    // key of its first slot; its slots have keys [key, key + count)
  std::int64_t count = 0;  // slots (elements)
  bool real = true;        // real: count * extent bytes in buf; dummy: no bytes
};
using fragment_list = std::vector<fragment>;

// The global key space: where each owner's slots begin and how many of them are real.
class layout {
 public:
  // Owner j gets slot_counts[j] slots, the first recv_totals[j] of them real.
  layout(const std::vector<std::int64_t>& slot_counts, const std::vector<std::int64_t>& recv_totals);
  int size() const noexcept { return static_cast<int>(real_.size()); }
  std::int64_t start(int j) const { return start_[static_cast<std::size_t>(j)]; }
  std::int64_t slots(int j) const { return start(j + 1) - start(j); }
  std::int64_t reals(int j) const { return real_[static_cast<std::size_t>(j)]; }
  // The owner of a key (owners without slots are never the answer).
  int owner(std::int64_t key) const;
  std::int64_t metadata_bytes() const noexcept {
    return static_cast<std::int64_t>((start_.size() + real_.size()) * sizeof(std::int64_t));
  }

 private:
  std::vector<std::int64_t> start_;  // P + 1 entries
  std::vector<std::int64_t> real_;   // R_j
};

// This rank's initial content, ascending by key: its real fragments s(rank, j) and the dummies it starts with.
// Which owners' dummies a rank holds is the northwest-corner matching of the supplies slots(i) - S_i (ranks in
// order) against the demands slots(j) - R_j (owners in order): every rank computes it from the totals alone.
fragment_list initial_fragments(const problem& p, const layout& l);

std::int64_t slot_count(const fragment_list& list);
std::int64_t real_bytes(const fragment_list& list, std::int64_t extent);
std::size_t real_fragments(const fragment_list& list);

// Appends f, extending the last fragment instead when f continues it (consecutive keys, same kind, same
// owner): keeps lists short without changing memory order.
void append(fragment_list& list, const fragment& f, const layout& l);
// The same over a whole list.
void coalesce(fragment_list& list, const layout& l);

// Splits list at slot `at` (0 <= at <= slot_count(list)): the first `at` slots go to head, the rest to tail,
// memory order kept.
void split_at_slot(const fragment_list& list, std::int64_t at, fragment_list& head, fragment_list& tail);

// Moves the real bytes of the fragments with give[k] != 0 behind all the others (both keeping their memory
// order) and splits the list accordingly: list becomes the kept fragments, `given` the others. Returns the
// bytes moved. With move_data false only the metadata changes (dry runs).
std::int64_t move_to_tail(std::byte* buf, std::int64_t extent, fragment_list& list, const std::vector<char>& give,
                          fragment_list& given, std::byte* work, std::int64_t work_bytes, bool move_data,
                          const layout& l);

// Blocks of the real fragments, key = the fragment's key (dummies have no bytes and no block).
std::vector<block> real_blocks(const fragment_list& list, std::int64_t extent);

// Fragment metadata messages on `tag` (one message each; counted in c.messages_sent / messages_received, not in
// bytes_sent / bytes_received, which are payload). exchange_lists sends and receives at once.
void send_list(MPI_Comm comm, int peer, int tag, const fragment_list& list, counters& c);
fragment_list recv_list(MPI_Comm comm, int peer, int tag, counters& c);
fragment_list exchange_lists(MPI_Comm comm, int peer, int tag, const fragment_list& mine, counters& c);

// Tracks the peak bookkeeping of an algorithm run (fragment lists live at once, plus the layout).
class metadata_peak {
 public:
  explicit metadata_peak(const layout& l) : base_(l.metadata_bytes()) {}
  void note(std::size_t fragments) {
    const auto bytes = base_ + static_cast<std::int64_t>(fragments * sizeof(fragment));
    if (bytes > peak_) peak_ = bytes;
  }
  std::int64_t peak() const noexcept { return peak_ > base_ ? peak_ : base_; }

 private:
  std::int64_t base_ = 0;
  std::int64_t peak_ = 0;
};

}  // namespace redist::exchange::inplace_detail::slots
