// SPDX-License-Identifier: BSD-3-Clause
// In-place variable-size alltoallv: validation and agreement, the streamed in-place step every algorithm
// uses, the chunked (direct) algorithm and the MPI_IN_PLACE swaps (docs/inplace.md). Plans, the choice among
// the algorithms and the public entry points: inplace_plan.cpp.
#include "redist/exchange/inplace.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "inplace_detail.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"
#include "mpi/compat.hpp"
#include "redist/error.hpp"

namespace redist::exchange {

namespace inplace_detail {

namespace {

constexpr std::int64_t max_block_bytes = std::int64_t{1} << 30;  // one hindexed block, within int

// A receive of `bytes` bytes scattered over `ranges` (in order) as one MPI message: an hindexed type of the
// ranges cut into blocks an int can count.
struct scatter_type {
  mpi::datatype_handle type;
  explicit scatter_type(const std::vector<std::pair<std::byte*, std::int64_t>>& ranges) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> displs;
    for (const auto& [first, bytes] : ranges)
      for (std::int64_t done = 0; done < bytes; done += max_block_bytes) {
        lengths.push_back(static_cast<int>(std::min(max_block_bytes, bytes - done)));
        displs.push_back(MPI_Aint_add(reinterpret_cast<MPI_Aint>(first), static_cast<MPI_Aint>(done)));
      }
    MPI_Datatype t;
    REDIST_MPI_CHECK_LOCAL(
        MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displs.data(), MPI_BYTE, &t));
    REDIST_MPI_CHECK_LOCAL(MPI_Type_commit(&t));
    type = mpi::datatype_handle(t);
  }
};

// A stream of one step: this rank's outgoing bytes [out, out+out_bytes) go to dest, which says how many of them
// land in its vacated region (staged there; the rest go directly to its free ranges); the incoming stream from
// source puts its first `in_region` bytes over our own outgoing bytes [out, out+in_region) (each piece staged
// until our bytes under it have left) and the rest straight into `in_free` (free ranges, in order).
struct stream {
  int dest = 0, source = 0;
  std::byte* out = nullptr;
  std::int64_t out_bytes = 0, in_region = 0;
  std::vector<std::pair<std::byte*, std::int64_t>> in_free;
};

constexpr std::int64_t cache_line = 64;

std::int64_t address_mod(const std::byte* at, std::int64_t m) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(at) % static_cast<std::uintptr_t>(m));
}

// Runs the streams at once. First every receiver tells its sender how many bytes its region takes and its
// piece size (the work buffer is split evenly between the streams that stage anything: two slots each), and
// every sender tells its receiver where its bytes sit within a cache line, so that each piece is received at the
// same offset in its slot: the kernel's single-copy path runs up to 3x slower between addresses that differ
// within a line. Then the pieces flow, two receives and two sends in flight per stream: piece k is copied into
// place once it has arrived and our own bytes under it have left, and piece k+2 then reuses its slot. Each
// stream's direct part (received into free space, no copy) travels alongside as one message. Streams must have
// distinct dests and distinct sources; tags `tag` (pieces), `tag + 1` (direct parts), `tag + 2` and `tag + 3`
// (the two set-up messages).
void run_streams(MPI_Comm comm, int tag, const std::vector<stream>& streams, std::byte* work, std::int64_t work_bytes,
                 counters& c) {
  const std::size_t n = streams.size();
  if (n == 0) return;
  const auto staging = static_cast<std::int64_t>(
      std::count_if(streams.begin(), streams.end(), [](const stream& s) { return s.in_region > 0; }));
  // Slots start on a cache line, and a piece is a whole number of lines shorter than its slot, when the work
  // buffer leaves room for that (it always does at the public minimum); else (tests' tiny buffers) bytes.
  std::int64_t unit = cache_line;
  std::byte* base = work + (cache_line - address_mod(work, cache_line)) % cache_line;
  std::int64_t slot_bytes = staging == 0 ? 0 : (work_bytes - (base - work)) / (2 * staging) / unit * unit;
  if (staging > 0 && slot_bytes < 4 * cache_line) {
    unit = 1;
    base = work;
    slot_bytes = work_bytes / (2 * staging);
  }
  const std::int64_t piece_in = staging == 0 ? 0 : unit == 1 ? slot_bytes : slot_bytes - unit;
  if (staging > 0 && piece_in < 1) throw error("run_streams: work buffer too small for the streams (a bug)");

  struct progress {
    std::int64_t told[2] = {0, 0};  // from dest: how many of our bytes its region takes, its piece size
    std::int64_t tell[2] = {0, 0};  // to source: the same for its stream to us
    std::int64_t source_offset = 0, our_offset = 0;  // from source / to dest: the data's offset in a cache line
    std::int64_t out_to_region = 0, piece_out = 0, out_pieces = 0, in_pieces = 0;
    std::int64_t sends_posted = 0, sends_left = 0, receives_posted = 0, copied = 0;
    std::byte* slot[2] = {nullptr, nullptr};
    std::unique_ptr<scatter_type> free_type;
    mpi::byte_message direct_out;
  };
  std::vector<progress> state(n);
  // Stream i: [6i + k%2] the receive of piece k (into slot k%2), [6i + 2 + j%2] the send of piece j, [6i + 4]
  // the direct receive, [6i + 5] the direct send.
  std::vector<MPI_Request> requests(6 * n, MPI_REQUEST_NULL);
  {
    std::vector<MPI_Request> setup(4 * n, MPI_REQUEST_NULL);
    std::int64_t staged = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const stream& s = streams[i];
      progress& g = state[i];
      std::int64_t in_direct = 0;
      for (const auto& r : s.in_free) in_direct += r.second;
      if (in_direct > 0) {
        g.free_type = std::make_unique<scatter_type>(s.in_free);
        REDIST_MPI_CHECK(
            MPI_Irecv(MPI_BOTTOM, 1, g.free_type->type.get(), s.source, tag + 1, comm, &requests[6 * i + 4]));
        c.bytes_received += in_direct;
        ++c.messages_received;
      }
      if (s.in_region > 0) {
        g.slot[0] = base + (2 * staged) * slot_bytes;
        g.slot[1] = g.slot[0] + slot_bytes;
        g.in_pieces = (s.in_region + piece_in - 1) / piece_in;
        ++staged;
      }
      g.tell[0] = s.in_region;
      g.tell[1] = piece_in;
      g.our_offset = address_mod(s.out, cache_line);
      REDIST_MPI_CHECK(MPI_Irecv(g.told, 2, MPI_INT64_T, s.dest, tag + 3, comm, &setup[4 * i]));
      REDIST_MPI_CHECK(MPI_Irecv(&g.source_offset, 1, MPI_INT64_T, s.source, tag + 2, comm, &setup[4 * i + 1]));
      REDIST_MPI_CHECK(MPI_Isend(g.tell, 2, MPI_INT64_T, s.source, tag + 3, comm, &setup[4 * i + 2]));
      REDIST_MPI_CHECK(MPI_Isend(&g.our_offset, 1, MPI_INT64_T, s.dest, tag + 2, comm, &setup[4 * i + 3]));
    }
    REDIST_MPI_CHECK(mpi::wait_all_yielding(static_cast<int>(setup.size()), setup.data(), comm));
  }

  auto post_send = [&](std::size_t i) {
    const stream& s = streams[i];
    progress& g = state[i];
    const std::int64_t j = g.sends_posted++;
    const std::int64_t len = std::min(g.piece_out, g.out_to_region - j * g.piece_out);
    // Synchronous: a send completes only once dest has posted its receive, so with two in flight no more than
    // two pieces per stream ever wait unexpected at dest, even where small pieces would go eagerly.
    REDIST_MPI_CHECK(MPI_Issend(s.out + j * g.piece_out, static_cast<int>(len), MPI_BYTE, s.dest, tag, comm,
                                &requests[6 * i + 2 + static_cast<std::size_t>(j % 2)]));
    c.bytes_sent += len;
    ++c.messages_sent;
  };
  auto post_receive = [&](std::size_t i) {
    const stream& s = streams[i];
    progress& g = state[i];
    const std::int64_t k = g.receives_posted++;
    const std::int64_t len = std::min(piece_in, s.in_region - k * piece_in);
    REDIST_MPI_CHECK(MPI_Irecv(g.slot[k % 2] + g.source_offset % unit, static_cast<int>(len), MPI_BYTE, s.source, tag,
                               comm, &requests[6 * i + static_cast<std::size_t>(k % 2)]));
    c.bytes_received += len;
    ++c.messages_received;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const stream& s = streams[i];
    progress& g = state[i];
    g.out_to_region = g.told[0];
    g.piece_out = g.told[1];
    if (g.out_to_region < 0 || g.out_to_region > s.out_bytes || (g.out_to_region > 0 && g.piece_out <= 0))
      throw error("run_streams: the two ends of a stream disagree (a bug)");
    g.out_pieces = g.out_to_region == 0 ? 0 : (g.out_to_region + g.piece_out - 1) / g.piece_out;
    if (s.out_bytes > g.out_to_region) {
      g.direct_out = mpi::describe_bytes(s.out_bytes - g.out_to_region);
      REDIST_MPI_CHECK(MPI_Isend(s.out + g.out_to_region, g.direct_out.count, g.direct_out.type, s.dest, tag + 1, comm,
                                 &requests[6 * i + 5]));
      c.bytes_sent += s.out_bytes - g.out_to_region;
      ++c.messages_sent;
    }
    while (g.receives_posted < std::min<std::int64_t>(2, g.in_pieces)) post_receive(i);
  }

  std::vector<int> completed(requests.size());
  for (;;) {
    bool all_done = true, moved = false;
    for (std::size_t i = 0; i < n; ++i) {
      const stream& s = streams[i];
      progress& g = state[i];
      while (g.sends_left < g.sends_posted &&
             requests[6 * i + 2 + static_cast<std::size_t>(g.sends_left % 2)] == MPI_REQUEST_NULL) {
        ++g.sends_left;
        moved = true;
      }
      while (g.sends_posted < g.out_pieces && g.sends_posted < g.sends_left + 2) {
        post_send(i);
        moved = true;
      }
      // Our bytes that have left: a prefix of the part dest's region takes (the pieces sent so far), and the
      // direct part once its send is complete.
      const std::int64_t region_left = std::min(g.sends_left * g.piece_out, g.out_to_region);
      const bool direct_left = requests[6 * i + 5] == MPI_REQUEST_NULL;
      while (g.copied < g.receives_posted &&
             requests[6 * i + static_cast<std::size_t>(g.copied % 2)] == MPI_REQUEST_NULL) {
        const std::int64_t k = g.copied;
        const std::int64_t len = std::min(piece_in, s.in_region - k * piece_in);
        const std::int64_t end = k * piece_in + len;
        if (std::min(end, g.out_to_region) > region_left || (end > g.out_to_region && !direct_left)) break;
        std::memcpy(s.out + k * piece_in, g.slot[k % 2] + g.source_offset % unit, static_cast<std::size_t>(len));
        c.bytes_local += len;
        ++g.copied;
        moved = true;
        if (g.receives_posted < g.in_pieces) post_receive(i);
      }
      all_done = all_done && g.copied == g.in_pieces && g.sends_left == g.out_pieces &&
                 requests[6 * i + 4] == MPI_REQUEST_NULL && requests[6 * i + 5] == MPI_REQUEST_NULL;
    }
    if (all_done) break;
    if (!moved) {
      int count = 0;
      REDIST_MPI_CHECK(
          mpi::wait_some_yielding(static_cast<int>(requests.size()), requests.data(), &count, completed.data(), comm));
      if (count == MPI_UNDEFINED) throw error("run_streams: nothing in flight but not done (a bug)");
    }
  }
}

// How many streams run at once: pieces of at least 256 KiB (fewer, larger messages), at most one per rank.
std::size_t streams_at_once(std::int64_t work_bytes, int size) {
  const std::int64_t by_memory = std::max<std::int64_t>(1, work_bytes / (2 * (std::int64_t{256} << 10)));
  return static_cast<std::size_t>(std::min<std::int64_t>(by_memory, size));
}

// The rounds of a 1-factorization of the complete graph on P ranks (circle method): in each round every rank
// meets one partner, itself in the round where it sits out (odd P) or, for even P, in round P-1 (added).
int round_partner(int rank, int size, int round) {
  if (size % 2 == 1) {
    return static_cast<int>(((static_cast<std::int64_t>(round) - rank) % size + size) % size);
  }
  const int m = size - 1;  // odd
  if (round == m) return rank;
  if (rank == m) return static_cast<int>((static_cast<std::int64_t>(round) * ((m + 1) / 2)) % m);
  const int q = static_cast<int>(((static_cast<std::int64_t>(round) - rank) % m + m) % m);
  return q == rank ? m : q;
}

}  // namespace

void swap_in_place(MPI_Comm comm, int peer, int tag, std::byte* region, std::int64_t send_bytes,
                   std::int64_t recv_bytes, std::byte* work, std::int64_t work_bytes, counters& c) {
  if (peer == mpi::rank(comm)) {
    if (send_bytes != recv_bytes)
      throw invalid_argument("swap_in_place with itself needs equal sizes, got " + std::to_string(send_bytes) +
                             " and " + std::to_string(recv_bytes));
    return;
  }
  stream s;
  s.dest = s.source = peer;
  s.out = region;
  s.out_bytes = send_bytes;
  s.in_region = std::min(send_bytes, recv_bytes);
  if (recv_bytes > send_bytes) s.in_free.emplace_back(region + send_bytes, recv_bytes - send_bytes);
  run_streams(comm, tag, {s}, work, work_bytes, c);
}

// ---- chunked ---------------------------------------------------------------------------------------------
// Every block s(rank, j) goes straight to j in one step of a schedule. Received bytes first take the place of
// the block this rank sends in the same step, the rest go to free space (the tail past the send total, and
// what earlier steps left); at the end one stable sort by final position puts them in order (a no-op when
// every block landed in place, as with symmetric counts). It fits when no rank ever holds more than its
// capacity: with the pair schedule (each round a perfect matching) or a shift schedule (step t: send to
// rank+t, receive from rank-t, or the reverse; the paper's four cases trade equal sizes in every step).

namespace {

using schedule = chunked_schedule;

struct step {
  int dest, source;
};

// Both take P steps: the shift's step 0 and the pairs' round without a partner are the own block.
int steps_of(int size) { return size; }

step step_of(schedule s, int rank, int size, int t) {
  const int up = (rank + t) % size, down = (rank - t % size + size) % size;
  if (s == schedule::shift_up) return {up, down};
  if (s == schedule::shift_down) return {down, up};
  const int partner = round_partner(rank, size, t);
  return {partner, partner};
}

// Whether this rank stays within its capacity through the schedule, `batch` steps at a time: a batch's
// steps run at once, so the bytes they receive beyond what they send must fit the space free at its start.
bool fits_locally(const problem& p, schedule s, std::size_t batch) {
  std::int64_t held = std::accumulate(p.sendcounts.begin(), p.sendcounts.end(), std::int64_t{0});
  for (int first = 0; first < steps_of(p.size); first += static_cast<int>(batch)) {
    std::int64_t beyond = 0, change = 0;
    for (int t = first; t < std::min(steps_of(p.size), first + static_cast<int>(batch)); ++t) {
      const step st = step_of(s, p.rank, p.size, t);
      const std::int64_t x = p.sendcounts[st.dest], y = p.recvcounts[st.source];
      beyond += std::max<std::int64_t>(0, y - x);
      change += y - x;
    }
    if (beyond > p.capacity - held) return false;
    held += change;
  }
  return true;
}

// A run of the buffer: an unsent block (key -1 - dest), received data (key = final element offset >= 0), space
// that a running batch is still sending from, or free space.
struct segment {
  std::int64_t key;
  std::int64_t bytes;
};
constexpr std::int64_t free_key = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t leaving_key = free_key - 1;

void coalesce(std::vector<segment>& segs, std::int64_t extent) {
  std::vector<segment> out;
  for (const segment& s : segs) {
    if (s.bytes == 0) continue;
    if (!out.empty()) {
      segment& last = out.back();
      const bool same_space = last.key >= leaving_key && s.key == last.key;
      const bool continued = last.key >= 0 && last.key < leaving_key && s.key == last.key + last.bytes / extent;
      if (same_space || continued) {
        last.bytes += s.bytes;
        continue;
      }
    }
    out.push_back(s);
  }
  segs.swap(out);
}

constexpr schedule schedule_order[3] = {schedule::pairs, schedule::shift_up, schedule::shift_down};
// Batched (up to streams_at_once steps together), then one step at a time.
std::size_t batch_of(const problem& p, int b) { return b == 0 ? streams_at_once(p.work_bytes, p.size) : 1; }

}  // namespace

chunked_fit_flags chunked_fits_here(const problem& p) {
  chunked_fit_flags fit{};
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 3; ++k)
      fit[static_cast<std::size_t>(3 * b + k)] = fits_locally(p, schedule_order[k], batch_of(p, b)) ? 1 : 0;
  return fit;
}

chunked_plan plan_chunked(const problem& p, bool symmetric, const chunked_fit_flags& everywhere) {
  if (symmetric) return {true, schedule::pairs, batch_of(p, 0)};  // every step trades equal sizes
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 3; ++k)
      if (everywhere[static_cast<std::size_t>(3 * b + k)] != 0) return {true, schedule_order[k], batch_of(p, b)};
  return {};
}

void run_chunked(const problem& p, const chunked_plan& plan, counters& c) {
  if (!plan.fits) throw invalid_argument("chunked: some rank would exceed its capacity in every schedule");
  const schedule sched = plan.sched;
  const std::int64_t ext = p.extent;
  const auto batch = static_cast<int>(plan.batch);
  std::vector<std::int64_t> final_offset(p.size, 0);  // where s(j, rank) starts in the result, elements
  for (int j = 1; j < p.size; ++j) final_offset[j] = final_offset[j - 1] + p.recvcounts[j - 1];

  std::vector<segment> segs;
  std::int64_t send_total = 0;
  for (int j = 0; j < p.size; ++j) {
    segs.push_back({-1 - j, p.sendcounts[j] * ext});
    send_total += p.sendcounts[j];
  }
  segs.push_back({free_key, (p.capacity - send_total) * ext});
  coalesce(segs, ext);
  std::int64_t peak_segments = static_cast<std::int64_t>(segs.size());

  for (int first = 0; first < steps_of(p.size); first += batch) {
    const int last = std::min(steps_of(p.size), first + batch);
    std::vector<stream> streams;
    for (int t = first; t < last; ++t) {
      const step st = step_of(sched, p.rank, p.size, t);
      const std::int64_t x = p.sendcounts[st.dest] * ext;
      const std::int64_t y = p.recvcounts[st.source] * ext;
      const std::int64_t in_region = std::min(x, y);
      // Plan the step on the segments: our block's place takes the first in_region received bytes, the rest of
      // them take free space first fit in buffer order; the block's remainder is free once the batch is over.
      std::byte* out = p.buf;
      std::vector<std::pair<std::byte*, std::int64_t>> in_free;
      std::vector<segment> next;
      std::int64_t need = y - in_region, received = in_region, pos = 0;
      for (const segment& s : segs) {
        if (s.key == -1 - st.dest) {
          out = p.buf + pos;
          next.push_back({final_offset[st.source], in_region});
          next.push_back({st.dest == p.rank ? free_key : leaving_key, x - in_region});
        } else if (s.key == free_key && need > 0 && st.dest != p.rank) {
          const std::int64_t take = std::min(need, s.bytes);
          in_free.emplace_back(p.buf + pos, take);
          next.push_back({final_offset[st.source] + received / ext, take});
          next.push_back({free_key, s.bytes - take});
          received += take;
          need -= take;
        } else {
          next.push_back(s);
        }
        pos += s.bytes;
      }
      if (need > 0) throw error("chunked: free space accounting broke (a bug)");
      segs.swap(next);
      coalesce(segs, ext);
      if (st.dest == p.rank) continue;  // the own block stays where it is (x == y)
      stream s;
      s.dest = st.dest;
      s.source = st.source;
      s.out = out;
      s.out_bytes = x;
      s.in_region = in_region;
      s.in_free = std::move(in_free);
      streams.push_back(std::move(s));
    }
    run_streams(p.comm, 2, streams, p.work, p.work_bytes, c);
    for (segment& s : segs)
      if (s.key == leaving_key) s.key = free_key;
    coalesce(segs, ext);
    peak_segments = std::max(peak_segments, static_cast<std::int64_t>(segs.size()));
  }

  std::vector<block> blocks;
  blocks.reserve(segs.size());
  for (const segment& s : segs) blocks.push_back({s.key, s.bytes});
  c.bytes_local += sort_blocks(p.buf, blocks, p.work, p.work_bytes);
  c.metadata_bytes = std::max(c.metadata_bytes, peak_segments * static_cast<std::int64_t>(sizeof(segment)));
}

}  // namespace inplace_detail
}  // namespace redist::exchange

// ---- Front end: checks, agreement, the choice of algorithm ----------------------------------------------
namespace redist::exchange {
namespace inplace_detail {

validated::validated() = default;
validated::validated(validated&&) noexcept = default;
validated& validated::operator=(validated&&) noexcept = default;
validated::~validated() = default;

// A private duplicate of the caller's communicator, so that our messages never match the application's: made on
// the first call with a communicator and cached on it as an attribute, so that later calls pay no MPI_Comm_dup, a
// collective that costs a few rounds. Every rank makes the same call on the same communicator, so all find the
// cache or all duplicate. Plans share it with the cache: it is freed with the last of them and the caller's.
namespace {
const mpi::comm_attribute<std::shared_ptr<const mpi::comm_handle>>& private_comms() {
  static const mpi::comm_attribute<std::shared_ptr<const mpi::comm_handle>> duplicates;
  return duplicates;
}
}  // namespace

std::shared_ptr<const mpi::comm_handle> private_comm(MPI_Comm comm) {
  return private_comms().get(comm, [&] { return std::make_shared<const mpi::comm_handle>(mpi::duplicate(comm)); });
}

std::int64_t agree_on_start(mpi::agreement& agreed, MPI_Comm comm, MPI_Datatype type,
                            std::shared_ptr<const mpi::comm_handle>& owned_comm, datatype_slots& slots) {
  // The private communicator (collective, made once per communicator) comes before the agreement, so that
  // a failure to make it reaches every rank.
  agreed.collective([&] { owned_comm = private_comm(comm); });
  agreed.on_failure([comm] { private_comms().forget(comm); });
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int type_size = 0;
  // MPI_DATATYPE_NULL is refused before MPI sees it: datatype calls report through MPI_COMM_WORLD's error
  // handler, which aborts by default.
  if (type == MPI_DATATYPE_NULL) agreed.fail(mpi::error_kind::invalid_datatype, "the datatype is MPI_DATATYPE_NULL");
  agreed.attempt([&] {
    REDIST_MPI_CHECK_LOCAL(MPI_Type_get_extent(type, &lb, &extent));
    REDIST_MPI_CHECK_LOCAL(MPI_Type_get_true_extent(type, &true_lb, &true_extent));
    REDIST_MPI_CHECK_LOCAL(MPI_Type_size(type, &type_size));
  });
  slots.extent_min = agreed.reduce_min(extent);
  slots.extent_max = agreed.reduce_max(extent);
  slots.size_min = agreed.reduce_min(type_size);
  slots.size_max = agreed.reduce_max(type_size);
  // MPI would refuse it only where a message uses it, on that rank alone and after the agreement: refused here.
  if (!agreed.failed() && owned_comm != nullptr && !mpi::is_committed(type, owned_comm->get()))
    agreed.fail(mpi::error_kind::invalid_datatype, "the datatype is not committed (MPI_Type_commit it first)");
  if (!agreed.failed() && (lb != 0 || extent <= 0 || true_lb < 0 || true_lb + true_extent > extent))
    agreed.fail(mpi::error_kind::invalid_datatype,
                "the datatype needs lower bound 0, a positive extent and its data within the extent (lb " +
                    std::to_string(lb) + ", extent " + std::to_string(extent) + ", true lb " + std::to_string(true_lb) +
                    ", true extent " + std::to_string(true_extent) + ")");
  return extent > 0 ? extent : 1;
}

void refuse_differing_datatypes(const mpi::agreement& agreed, const datatype_slots& slots) {
  const std::int64_t extents[2] = {agreed.min(slots.extent_min), agreed.max(slots.extent_max)};
  const std::int64_t sizes[2] = {agreed.min(slots.size_min), agreed.max(slots.size_max)};
  if (extents[0] != extents[1] || sizes[0] != sizes[1])
    throw invalid_datatype("the ranks passed different datatypes (extents " + std::to_string(extents[0]) + " to " +
                           std::to_string(extents[1]) + " bytes, sizes " + std::to_string(sizes[0]) + " to " +
                           std::to_string(sizes[1]) + "); every rank must pass the same datatype");
}

bool fits_bytes(std::int64_t elements, std::int64_t extent) {
  return elements <= std::numeric_limits<std::int64_t>::max() / extent;
}

validated validate(const void* buf, bool check_buf, std::int64_t capacity, const std::int64_t* sendcounts,
                   const std::int64_t* recvcounts, MPI_Datatype type, MPI_Comm comm, const inplace_options& options) {
  validated v;
  problem& p = v.p;
  p.rank = mpi::rank(comm);
  p.size = mpi::size(comm);
  p.capacity = capacity;
  p.work_bytes = options.work_bytes;  // the schedules depend on it; the buffer comes once the checks pass
  const auto P = static_cast<std::size_t>(p.size);
  mpi::agreement agreed(comm);
  const auto fail = [&](mpi::error_kind kind, const std::string& m) { agreed.fail(kind, m); };
  datatype_slots type_slots;
  p.extent = agree_on_start(agreed, comm, type, v.comm, type_slots);
  p.comm = v.comm ? v.comm->get() : MPI_COMM_NULL;
  if (options.work_bytes < min_work_bytes || options.work_bytes > max_work_bytes)
    fail(mpi::error_kind::invalid_argument,
         "work_bytes " + std::to_string(options.work_bytes) + " is outside [65536, 2^30]");
  const auto algorithm = static_cast<int>(options.algorithm);
  if (algorithm < static_cast<int>(inplace_algorithm::automatic) ||
      algorithm > static_cast<int>(inplace_algorithm::bitonic))
    fail(mpi::error_kind::invalid_argument, "unknown algorithm " + std::to_string(algorithm));
  if (!(options.pairwise_guard > 0))
    fail(mpi::error_kind::invalid_argument,
         "pairwise_guard must be positive, got " + std::to_string(options.pairwise_guard));
  if (sendcounts == nullptr) fail(mpi::error_kind::invalid_count, "sendcounts is null");
  if (check_buf && buf == nullptr && capacity > 0)
    fail(mpi::error_kind::invalid_buffer, "buf is null with capacity " + std::to_string(capacity));

  p.sendcounts.assign(P, 0);
  if (sendcounts != nullptr) std::copy(sendcounts, sendcounts + P, p.sendcounts.begin());
  // What every peer sends here (a negative count travels too and is reported by its sender).
  p.recvcounts.assign(P, 0);
  agreed.collective([&] {
    REDIST_MPI_CHECK(
        redist::mpi::alltoall_yielding(p.sendcounts.data(), 1, MPI_INT64_T, p.recvcounts.data(), 1, MPI_INT64_T, comm));
  });

  std::int64_t send_total = 0, recv_total = 0;
  bool counts_ok = true;
  for (std::size_t j = 0; j < P; ++j) {
    if (p.sendcounts[j] < 0) {
      fail(mpi::error_kind::invalid_count,
           "sendcounts[" + std::to_string(j) + "] = " + std::to_string(p.sendcounts[j]) + " is negative");
      counts_ok = false;
    }
    if (p.recvcounts[j] < 0) counts_ok = false;  // the sender reports it
  }
  if (counts_ok) {
    for (std::size_t j = 0; j < P; ++j) {
      if (p.sendcounts[j] > std::numeric_limits<std::int64_t>::max() - send_total ||
          p.recvcounts[j] > std::numeric_limits<std::int64_t>::max() - recv_total) {
        fail(mpi::error_kind::invalid_count, "the counts' sum overflows 64 bits");
        counts_ok = false;
        break;
      }
      send_total += p.sendcounts[j];
      recv_total += p.recvcounts[j];
    }
  }
  if (recvcounts != nullptr)
    for (std::size_t j = 0; j < P; ++j)
      if (recvcounts[j] != p.recvcounts[j]) {
        fail(mpi::error_kind::invalid_count, "recvcounts[" + std::to_string(j) +
                                                 "] = " + std::to_string(recvcounts[j]) + " but rank " +
                                                 std::to_string(j) + " sends " + std::to_string(p.recvcounts[j]));
        break;
      }
  if (counts_ok && capacity < std::max(send_total, recv_total))
    fail(mpi::error_kind::invalid_count, "capacity " + std::to_string(capacity) + " is below the send total " +
                                             std::to_string(send_total) + " or the receive total " +
                                             std::to_string(recv_total));
  if (counts_ok && !fits_bytes(std::max(capacity, std::int64_t{0}), p.extent))
    fail(mpi::error_kind::invalid_count, "capacity " + std::to_string(capacity) + " elements of " +
                                             std::to_string(p.extent) + " bytes overflows 64-bit byte offsets");

  // Every rank's totals and capacity, and the options, which must agree.
  std::int64_t guard_bits = 0;
  static_assert(sizeof(guard_bits) == sizeof(options.pairwise_guard));
  std::memcpy(&guard_bits, &options.pairwise_guard, sizeof(guard_bits));
  constexpr std::size_t words = 6;
  std::int64_t mine[words] = {
      send_total, recv_total, capacity, options.work_bytes, static_cast<std::int64_t>(options.algorithm), guard_bits};
  std::vector<std::int64_t> all(words * P);
  agreed.collective([&] {
    REDIST_MPI_CHECK(redist::mpi::allgather_yielding(mine, words, MPI_INT64_T, all.data(), words, MPI_INT64_T, comm));
  });
  p.send_totals.resize(P);
  p.recv_totals.resize(P);
  p.capacities.resize(P);
  // Whether a rank's options (words 3 to 5) are in range, as the checks above ask. A rank whose options are not
  // fails with invalid_argument itself; the others then do not report its values as a difference, so that the
  // agreement raises that rank's error whichever rank is lowest (as the neighbor exchange's local errors come
  // before its options' hash).
  const auto options_in_range = [](const std::int64_t* w) {
    double guard = 0;
    std::memcpy(&guard, &w[5], sizeof(guard));
    return w[3] >= min_work_bytes && w[3] <= max_work_bytes &&
           w[4] >= static_cast<std::int64_t>(inplace_algorithm::automatic) &&
           w[4] <= static_cast<std::int64_t>(inplace_algorithm::bitonic) && guard > 0;
  };
  for (std::size_t j = 0; j < P; ++j) {
    const std::int64_t* theirs = &all[words * j];
    p.send_totals[j] = theirs[0];
    p.recv_totals[j] = theirs[1];
    p.capacities[j] = theirs[2];
    // Valid options that differ between ranks: inconsistent_ranks, as every entry point's differing options.
    if (options_in_range(theirs) && (theirs[3] != mine[3] || theirs[4] != mine[4] || theirs[5] != mine[5]))
      fail(mpi::error_kind::inconsistent_ranks,
           "rank " + std::to_string(j) + " passed other options (work_bytes " + std::to_string(theirs[3]) +
               ", algorithm " + std::to_string(theirs[4]) + ", or pairwise_guard); every rank must pass the same");
  }
  // Riding along: whether the counts are symmetric here, and where chunked's schedules fit here (only
  // meaningful when every check passed).
  const std::size_t symmetric = agreed.reduce_min(p.sendcounts == p.recvcounts ? 1 : 0);
  const chunked_fit_flags fit = agreed.failed() ? chunked_fit_flags{} : chunked_fits_here(p);
  std::size_t fit_slots[std::tuple_size<chunked_fit_flags>::value];
  for (std::size_t k = 0; k < fit.size(); ++k) fit_slots[k] = agreed.reduce_min(fit[k]);
  // The work buffer is the last resource a call needs: acquired here, its failure is agreed on too.
  agreed.attempt([&] { v.work = std::make_unique<work_buffer>(options.work_bytes); });
  agreed.conclude();
  refuse_differing_datatypes(agreed, type_slots);
  v.symmetric = agreed.min(symmetric) != 0;
  for (std::size_t k = 0; k < fit.size(); ++k) v.chunked_fits_everywhere[k] = agreed.min(fit_slots[k]);
  p.work = v.work->get();
  return v;
}

void compute_offsets_in_dest(problem& p) {
  if (!p.offset_in_dest.empty()) return;
  p.offset_in_dest.assign(static_cast<std::size_t>(p.size), 0);
  REDIST_MPI_CHECK(
      redist::mpi::exscan_yielding(p.sendcounts.data(), p.offset_in_dest.data(), p.size, MPI_INT64_T, MPI_SUM, p.comm));
  if (p.rank == 0) std::fill(p.offset_in_dest.begin(), p.offset_in_dest.end(), 0);
}

void run_symmetric_swaps(MPI_Comm comm, std::byte* buf, const std::vector<int>& counts, const std::vector<int>& displs,
                         std::int64_t extent, std::byte* work, std::int64_t work_bytes, counters& c) {
  const int rank = mpi::rank(comm);
  const int size = mpi::size(comm);
  const auto batch = static_cast<int>(streams_at_once(work_bytes, size));
  for (int first = 0; first < size; first += batch) {
    std::vector<stream> streams;
    for (int round = first; round < std::min(size, first + batch); ++round) {
      const int partner = round_partner(rank, size, round);
      const auto j = static_cast<std::size_t>(partner);
      if (partner == rank || counts[j] == 0) continue;  // both sides skip an empty pair
      stream s;
      s.dest = s.source = partner;
      s.out = buf + std::int64_t{displs[j]} * extent;
      s.out_bytes = s.in_region = std::int64_t{counts[j]} * extent;
      streams.push_back(std::move(s));
    }
    run_streams(comm, 0, streams, work, work_bytes, c);
  }
}

}  // namespace inplace_detail
}  // namespace redist::exchange
