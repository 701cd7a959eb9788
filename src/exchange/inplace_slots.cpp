// SPDX-License-Identifier: BSD-3-Clause
// The slot model of the pairwise and bitonic in-place algorithms (see inplace_slots.hpp).
#include "inplace_slots.hpp"

#include <algorithm>
#include <cassert>

#include "mpi/checked.hpp"

namespace redist::exchange::inplace_detail::slots {

layout::layout(const std::vector<std::int64_t>& slot_counts, const std::vector<std::int64_t>& recv_totals)
    : start_(slot_counts.size() + 1, 0), real_(recv_totals) {
  for (std::size_t j = 0; j < slot_counts.size(); ++j) {
    assert(slot_counts[j] >= recv_totals[j]);
    start_[j + 1] = start_[j] + slot_counts[j];
  }
}

int layout::owner(std::int64_t key) const {
  // The last owner starting at or before key: owners with no slots share their start with the next one.
  const auto it = std::upper_bound(start_.begin(), start_.end() - 1, key);
  return static_cast<int>(it - start_.begin()) - 1;
}

fragment_list initial_fragments(const problem& p, const layout& l) {
  const int np = p.size;
  fragment_list reals, dummies;
  for (int j = 0; j < np; ++j) {
    const auto n = p.sendcounts[static_cast<std::size_t>(j)];
    if (n > 0) reals.push_back({l.start(j) + p.offset_in_dest[static_cast<std::size_t>(j)], n, true});
  }
  // Northwest corner: this rank's supply occupies [lo, hi) of the supplies laid end to end; owner j's demand
  // occupies [d, d + slots(j) - R_j) of the demands laid end to end (both sum to the same total).
  std::int64_t lo = 0;
  for (int k = 0; k < p.rank; ++k) lo += l.slots(k) - p.send_totals[static_cast<std::size_t>(k)];
  const std::int64_t hi = lo + l.slots(p.rank) - p.send_totals[static_cast<std::size_t>(p.rank)];
  std::int64_t d = 0;
  for (int j = 0; j < np && d < hi; ++j) {
    const std::int64_t demand = l.slots(j) - l.reals(j);
    const std::int64_t a = std::max(lo, d), b = std::min(hi, d + demand);
    if (a < b) dummies.push_back({l.start(j) + l.reals(j) + (a - d), b - a, false});
    d += demand;
  }
  // Dummies have no bytes, so placing them in key order among the reals is free and makes the list sorted.
  fragment_list out;
  out.reserve(reals.size() + dummies.size());
  std::merge(reals.begin(), reals.end(), dummies.begin(), dummies.end(), std::back_inserter(out),
             [](const fragment& x, const fragment& y) { return x.key < y.key; });
  return out;
}

std::int64_t slot_count(const fragment_list& list) {
  std::int64_t n = 0;
  for (const auto& f : list) n += f.count;
  return n;
}

std::int64_t real_bytes(const fragment_list& list, std::int64_t extent) {
  std::int64_t n = 0;
  for (const auto& f : list)
    if (f.real) n += f.count;
  return n * extent;
}

std::size_t real_fragments(const fragment_list& list) {
  return static_cast<std::size_t>(std::count_if(list.begin(), list.end(), [](const fragment& f) { return f.real; }));
}

void append(fragment_list& list, const fragment& f, const layout& l) {
  if (f.count == 0) return;
  if (!list.empty()) {
    auto& last = list.back();
    if (last.real == f.real && last.key + last.count == f.key && l.owner(last.key) == l.owner(f.key)) {
      last.count += f.count;
      return;
    }
  }
  list.push_back(f);
}

void coalesce(fragment_list& list, const layout& l) {
  fragment_list out;
  out.reserve(list.size());
  for (const auto& f : list) append(out, f, l);
  list.swap(out);
}

void split_at_slot(const fragment_list& list, std::int64_t at, fragment_list& head, fragment_list& tail) {
  head.clear();
  tail.clear();
  std::int64_t seen = 0;
  for (const auto& f : list) {
    if (seen + f.count <= at) {
      head.push_back(f);
    } else if (seen >= at) {
      tail.push_back(f);
    } else {  // straddles the split: cut at an element boundary
      const std::int64_t first = at - seen;
      head.push_back({f.key, first, f.real});
      tail.push_back({f.key + first, f.count - first, f.real});
    }
    seen += f.count;
  }
}

std::vector<block> real_blocks(const fragment_list& list, std::int64_t extent) {
  std::vector<block> blocks;
  blocks.reserve(list.size());
  for (const auto& f : list)
    if (f.real) blocks.push_back({f.key, f.count * extent});
  return blocks;
}

std::int64_t move_to_tail(std::byte* buf, std::int64_t extent, fragment_list& list, const std::vector<char>& give,
                          fragment_list& given, std::byte* work, std::int64_t work_bytes, bool move_data,
                          const layout& l) {
  assert(give.size() == list.size());
  std::int64_t moved = 0;
  if (move_data) {
    // Where the given real bytes lie: one run [run_begin, run_end) is the common case, fixed by one rotation.
    std::int64_t offset = 0, run_begin = -1, run_end = -1;
    bool one_run = true;
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (!list[k].real || list[k].count == 0) continue;
      const std::int64_t bytes = list[k].count * extent;
      if (give[k]) {
        if (run_begin < 0) {
          run_begin = offset;
        } else if (run_end != offset) {
          one_run = false;
        }
        run_end = offset + bytes;
      }
      offset += bytes;
    }
    if (run_begin >= 0 && one_run) {
      if (run_end != offset)
        moved = rotate_bytes(buf + run_begin, run_end - run_begin, offset - run_end, work, work_bytes);
    } else if (run_begin >= 0) {
      // Scattered: a stable sort on the keys 0 = keep, 1 = give keeps both groups in memory order.
      std::vector<block> blocks;
      blocks.reserve(list.size());
      for (std::size_t k = 0; k < list.size(); ++k)
        if (list[k].real && list[k].count > 0) blocks.push_back({give[k] ? 1 : 0, list[k].count * extent});
      moved = sort_blocks(buf, blocks, work, work_bytes);
    }
  }
  fragment_list kept;
  given.clear();
  kept.reserve(list.size());
  for (std::size_t k = 0; k < list.size(); ++k) append(give[k] ? given : kept, list[k], l);
  list.swap(kept);
  return moved;
}

namespace {

// Wire form: three int64 words per fragment (key, count, real).
std::vector<std::int64_t> encode(const fragment_list& list) {
  std::vector<std::int64_t> words;
  words.reserve(3 * list.size());
  for (const auto& f : list) {
    words.push_back(f.key);
    words.push_back(f.count);
    words.push_back(f.real ? 1 : 0);
  }
  return words;
}

fragment_list decode(const std::vector<std::int64_t>& words) {
  fragment_list list(words.size() / 3);
  for (std::size_t k = 0; k < list.size(); ++k) list[k] = {words[3 * k], words[3 * k + 1], words[3 * k + 2] != 0};
  return list;
}

// Receives a message of unknown length (probed first) from peer.
fragment_list receive_words(MPI_Comm comm, int peer, int tag) {
  MPI_Message msg;
  MPI_Status status;
  REDIST_MPI_CHECK(mpi::mprobe_yielding(peer, tag, comm, &msg, &status));
  int n = 0;
  REDIST_MPI_CHECK(MPI_Get_count(&status, MPI_INT64_T, &n));
  std::vector<std::int64_t> words(static_cast<std::size_t>(n));
  REDIST_MPI_CHECK(MPI_Mrecv(words.data(), n, MPI_INT64_T, &msg, MPI_STATUS_IGNORE));
  return decode(words);
}

}  // namespace

void send_list(MPI_Comm comm, int peer, int tag, const fragment_list& list, counters& c) {
  const auto words = encode(list);
  // Sent without blocking and completed in a watched wait that yields the core: a long list goes by rendezvous,
  // and MPI_Send's wait for the receiver spins.
  MPI_Request request = MPI_REQUEST_NULL;
  REDIST_MPI_CHECK(MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T, peer, tag, comm, &request));
  REDIST_MPI_CHECK(mpi::wait_yielding(request, comm));
  c.messages_sent += 1;
}

fragment_list recv_list(MPI_Comm comm, int peer, int tag, counters& c) {
  c.messages_received += 1;
  return receive_words(comm, peer, tag);
}

fragment_list exchange_lists(MPI_Comm comm, int peer, int tag, const fragment_list& mine, counters& c) {
  const auto words = encode(mine);
  MPI_Request req;
  REDIST_MPI_CHECK(MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T, peer, tag, comm, &req));
  auto theirs = receive_words(comm, peer, tag);
  REDIST_MPI_CHECK(mpi::wait_yielding(req, comm));
  c.messages_sent += 1;
  c.messages_received += 1;
  return theirs;
}

}  // namespace redist::exchange::inplace_detail::slots
