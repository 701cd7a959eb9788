// SPDX-License-Identifier: BSD-3-Clause
// The COSMA schedule (paper Sections 3, 6.3 and 7.1): which processor grid, which sequential splits of the
// local C block and how many rounds along k, chosen by the paper's I/O count of the local domain under the
// memory limit S. Memory, volume and message counts follow partition.hpp's cuts exactly, at grid position
// (0, 0, 0), which holds the largest local domain and the largest native pieces.
//
// Search. Every grid grid_m x grid_n x grid_k using between ceil((1 - max_idle_fraction) * P) and P ranks
// is a candidate (a grid may not cut a dimension into more parts than it has elements; a zero dimension
// takes 1 part). Rounds cost no I/O, so for each grid and sequential_n the smallest sequential_m that fits
// with some number of rounds gives that pair's least I/O, and the fewest rounds that fit are taken for it.
// Memory is not monotone in the rounds (piece 0 of every round is rounded up, so many small rounds make the
// native op(A) block grow again), but on ranges of rounds where the first round's size is constant it is
// linear, so each range is decided from its two ends (O(sqrt(local_k)) ranges). Grids are visited in
// order of a lower bound on their I/O, which stops the search as soon as no unvisited grid can beat the
// best found.
#include "redist/gemm/schedule.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "partition.hpp"
#include "redist/error.hpp"

namespace redist {

namespace {

using gemm_detail::part_size;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Counts saturate at 2^63 - 1 instead of wrapping: a saturated count exceeds every memory limit, and a
// schedule whose reported counts saturate is refused with overflow_error. All operands are >= 0.
std::int64_t add_sat(std::int64_t a, std::int64_t b) { return a > kInt64Max - b ? kInt64Max : a + b; }
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kInt64Max / b ? kInt64Max : a * b;
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// What grid position 0 stores of a range cut into `parts` consecutive parts, each of them split again into
// `pieces` pieces: the sum over the parts of piece 0's size (partition.hpp: part and piece 0 are largest).
std::int64_t first_pieces_total(std::int64_t range, std::int64_t parts, std::int64_t pieces) {
  const std::int64_t small = range / parts;
  const std::int64_t larger_parts = range % parts;
  return add_sat(mul_sat(larger_parts, ceil_div(small + 1, pieces)),
                 mul_sat(parts - larger_parts, ceil_div(small, pieces)));
}

// Sizes of a processor grid and of the local domain of its position (0, 0, 0).
struct grid_shape {
  int grid_m, grid_n, grid_k;
  std::int64_t local_m, local_n, local_k;

  grid_shape(std::int64_t m, std::int64_t n, std::int64_t k, int gm, int gn, int gk)
      : grid_m(gm),
        grid_n(gn),
        grid_k(gk),
        local_m(part_size(m, gm, 0)),
        local_n(part_size(n, gn, 0)),
        local_k(part_size(k, gk, 0)) {}
  int ranks() const { return grid_m * grid_n * grid_k; }
};

// Per-rank costs of one grid for given sequential splits and rounds, as the multiply realises them.
class grid_costs {
 public:
  grid_costs(const grid_shape& shape, bool double_buffering) : g_(shape), buffer_copies_(double_buffering ? 2 : 1) {}

  const grid_shape& shape() const { return g_; }
  std::int64_t buffer_copies() const { return buffer_copies_; }

  // Native op(A): sub-part rows x piece 0 of every round's columns (the columns are split along n).
  std::int64_t a_native(std::int64_t rounds) const {
    return mul_sat(g_.local_m, first_pieces_total(g_.local_k, rounds, g_.grid_n));
  }
  // Native op(B) and C: piece 0 of every sequential n sub-part's columns (split along m, resp. along k).
  std::int64_t b_native(std::int64_t sequential_n) const {
    return mul_sat(g_.local_k, first_pieces_total(g_.local_n, sequential_n, g_.grid_m));
  }
  std::int64_t c_native(std::int64_t sequential_n) const {
    return mul_sat(g_.local_m, first_pieces_total(g_.local_n, sequential_n, g_.grid_k));
  }
  std::int64_t rows0(std::int64_t sequential_m) const { return part_size(g_.local_m, sequential_m, 0); }
  std::int64_t cols0(std::int64_t sequential_n) const { return part_size(g_.local_n, sequential_n, 0); }
  std::int64_t round0(std::int64_t rounds) const { return part_size(g_.local_k, rounds, 0); }

  // Memory that depends on sequential_m only through rows0 (the rows of sub-part 0):
  //   memory = rest + rows0 * per_row
  // with the accumulator (rows0 x cols0, only when grid_k > 1: otherwise the multiply accumulates into the
  // native C blocks) and the A round buffers (rows0 x round0, only when A is gathered along n) in per_row.
  struct memory_terms {
    std::int64_t rest = 0;
    std::int64_t per_row = 0;
  };
  memory_terms terms(std::int64_t sequential_n, std::int64_t rounds) const {
    const std::int64_t cols = cols0(sequential_n);
    const std::int64_t first_round = round0(rounds);
    memory_terms t;
    t.rest = add_sat(add_sat(a_native(rounds), b_native(sequential_n)), c_native(sequential_n));
    if (g_.grid_m > 1) t.rest = add_sat(t.rest, mul_sat(buffer_copies_, mul_sat(first_round, cols)));
    if (g_.grid_k > 1) t.per_row = cols;
    if (g_.grid_n > 1) t.per_row = add_sat(t.per_row, mul_sat(buffer_copies_, first_round));
    return t;
  }
  std::int64_t memory(std::int64_t sequential_m, std::int64_t sequential_n, std::int64_t rounds) const {
    const memory_terms t = terms(sequential_n, rounds);
    return add_sat(t.rest, mul_sat(rows0(sequential_m), t.per_row));
  }

  // The paper's I/O of the local domain: op(A) loaded once per sequential n part, op(B) once per
  // sequential m part, C written once.
  std::int64_t io(std::int64_t sequential_m, std::int64_t sequential_n) const {
    return add_sat(add_sat(mul_sat(sequential_n, mul_sat(g_.local_m, g_.local_k)),
                           mul_sat(sequential_m, mul_sat(g_.local_k, g_.local_n))),
                   mul_sat(g_.local_m, g_.local_n));
  }

  // Received in the multiply: the parts of the gathered panels the rank does not store itself (once per
  // sequential part of the other dimension), and the other layers' contributions to its C piece.
  std::int64_t communicated(std::int64_t sequential_m, std::int64_t sequential_n, std::int64_t rounds) const {
    std::int64_t received = 0;
    if (g_.grid_n > 1) received = mul_sat(sequential_n, mul_sat(g_.local_m, g_.local_k) - a_native(rounds));
    if (g_.grid_m > 1)
      received = add_sat(received, mul_sat(sequential_m, mul_sat(g_.local_k, g_.local_n) - b_native(sequential_n)));
    if (g_.grid_k > 1) received = add_sat(received, mul_sat(g_.local_m, g_.local_n) - c_native(sequential_n));
    return received;
  }

  // Collective calls: one gather per replicated input and round of every sequential part, one reduction
  // per sequential part when k is split.
  std::int64_t messages(std::int64_t sequential_m, std::int64_t sequential_n, std::int64_t rounds) const {
    const std::int64_t parts = mul_sat(sequential_m, sequential_n);
    const int gathers = (g_.grid_n > 1 ? 1 : 0) + (g_.grid_m > 1 ? 1 : 0);
    return add_sat(mul_sat(mul_sat(rounds, parts), gathers), g_.grid_k > 1 ? parts : 0);
  }

 private:
  grid_shape g_;
  std::int64_t buffer_copies_;
};

// Calls visit(first, last) on consecutive ranges covering the part counts [lo, hi] of a range of `extent`
// (1 <= lo, hi <= extent), in increasing order, until visit returns true. On each range q = extent / parts
// is constant, so part 0 has q + 1 elements, except where parts divides extent (the range's last point,
// visited alone) where it has q, and the sums over the parts of piece 0 (first_pieces_total) are linear in
// the part count.
template <class Visit>
void for_each_linear_range(std::int64_t extent, std::int64_t lo, std::int64_t hi, Visit visit) {
  for (std::int64_t first = lo; first <= hi;) {
    const std::int64_t q = extent / first;
    const std::int64_t end_of_q = extent / q;
    const std::int64_t last = std::min(hi, end_of_q);
    if (last == end_of_q && extent % q == 0 && last > first) {
      if (visit(first, last - 1) || visit(last, last)) return;
    } else if (visit(first, last)) {
      return;
    }
    first = last + 1;
  }
}

// Calls visit(first, last) on consecutive ranges covering the round counts [lo, hi], in increasing order,
// on each of which memory(sequential_m, sequential_n, rounds) is monotone in rounds, until visit returns
// true. With grid_n == 1 the native op(A) block does not depend on the rounds and memory only falls as
// rounds get more and smaller, so [lo, hi] is one range; otherwise memory is linear on the linear ranges.
template <class Visit>
void for_each_monotone_range(const grid_shape& g, std::int64_t lo, std::int64_t hi, Visit visit) {
  if (g.grid_n == 1 || g.local_k == 0) {
    if (lo <= hi) visit(lo, hi);
    return;
  }
  for_each_linear_range(g.local_k, lo, hi, visit);
}

// One complete choice with everything the selection compares.
struct candidate {
  int grid_m = 1, grid_n = 1, grid_k = 1;
  std::int64_t sequential_m = 1, sequential_n = 1, rounds = 1;
  std::int64_t io = 0, messages = 0, communicated = 0, memory = 0;
  int ranks() const { return grid_m * grid_n * grid_k; }
};

candidate make_candidate(const grid_costs& costs, std::int64_t sequential_m, std::int64_t sequential_n,
                         std::int64_t rounds) {
  const grid_shape& g = costs.shape();
  candidate c;
  c.grid_m = g.grid_m;
  c.grid_n = g.grid_n;
  c.grid_k = g.grid_k;
  c.sequential_m = sequential_m;
  c.sequential_n = sequential_n;
  c.rounds = rounds;
  c.io = costs.io(sequential_m, sequential_n);
  c.messages = costs.messages(sequential_m, sequential_n, rounds);
  c.communicated = costs.communicated(sequential_m, sequential_n, rounds);
  c.memory = costs.memory(sequential_m, sequential_n, rounds);
  return c;
}

// The selection order: least I/O, then more ranks at work, fewer layers along k, fewer messages, less volume
// received, less memory; a remaining tie goes to the larger grid_m, then grid_n, then the fewer sequential m
// parts, so the choice never depends on the visiting order. Layers before messages: at equal I/O, the panels
// a k split saves travel while the previous round multiplies, but the partial C blocks it adds are summed
// after the last round, in the open (and a single layer can write a C that is already in place).
bool better(const candidate& a, const candidate& b) {
  return std::make_tuple(a.io, -a.ranks(), a.grid_k, a.messages, a.communicated, a.memory, -a.grid_m, -a.grid_n,
                         a.sequential_m) < std::make_tuple(b.io, -b.ranks(), b.grid_k, b.messages, b.communicated,
                                                           b.memory, -b.grid_m, -b.grid_n, b.sequential_m);
}

// Largest value the int fields of gemm_schedule and gemm_step can carry.
constexpr std::int64_t kIntMax = INT_MAX;

// Sequential steps and rounds for one grid under a memory limit.
class sequential_search {
 public:
  sequential_search(const grid_costs& costs, const gemm_schedule_options& options)
      : costs_(costs),
        g_(costs.shape()),
        limit_(options.memory_limit_elements > 0 ? options.memory_limit_elements : kInt64Max),
        requested_rounds_(options.rounds) {
    max_rounds_ = std::max<std::int64_t>(1, std::min(g_.local_k, kIntMax));
    min_rounds_ = requested_rounds_ > 0 ? std::min(requested_rounds_, max_rounds_) : 1;
    max_sequential_m_ = std::max<std::int64_t>(1, std::min(g_.local_m, kIntMax));
    max_sequential_n_ = std::max<std::int64_t>(1, std::min(g_.local_n, kIntMax));
  }

  // The largest sequential_n worth trying under a memory bound. Memory depends on sequential_n only through
  // the native op(B) and C blocks (when split along m, resp. k), the op(B) round buffers and the
  // accumulator; with none of them, or with no op(A) to reload (m or k is 0), one part is best. Otherwise
  // each sub-part adds at least one column of local_k rows to native op(B) (local_m rows to native C).
  std::int64_t last_sequential_n(std::int64_t memory_bound) const {
    const std::int64_t per_part = (g_.grid_m > 1 ? g_.local_k : 0) + (g_.grid_k > 1 ? g_.local_m : 0);
    if (per_part == 0 || mul_sat(g_.local_m, g_.local_k) == 0) return 1;
    return std::max<std::int64_t>(1, std::min(max_sequential_n_, memory_bound / per_part));
  }

  // Most rounds worth trying for this sequential_n: with op(A) split along n every round adds at least
  // one column per row to the native op(A) block, so beyond (S - the native op(B) and C blocks) / local_m
  // rounds nothing fits. (With k = 0 rounds hold no columns and add nothing.)
  std::int64_t rounds_upper_bound(std::int64_t sequential_n) const {
    if (g_.grid_n == 1 || g_.local_m == 0 || g_.local_k == 0) return max_rounds_;
    const std::int64_t others = add_sat(costs_.b_native(sequential_n), costs_.c_native(sequential_n));
    if (others > limit_) return 0;
    return std::min(max_rounds_, (limit_ - others) / g_.local_m);
  }

  // The smallest sequential_m that fits with `rounds` rounds (0: none fits).
  std::int64_t smallest_sequential_m(std::int64_t sequential_n, std::int64_t rounds) const {
    return smallest_sequential_m(costs_.terms(sequential_n, rounds));
  }

  // A cheap bound: no sequential_m below this fits with any rounds in [min_rounds_, hi] (0: none fits).
  // It takes the smallest native op(A) block and the smallest first round together.
  std::int64_t sequential_m_lower_bound(std::int64_t sequential_n, std::int64_t hi) const {
    grid_costs::memory_terms t = costs_.terms(sequential_n, hi);
    const std::int64_t smallest_a = mul_sat(g_.local_m, g_.grid_n == 1 ? g_.local_k : ceil_div(g_.local_k, g_.grid_n));
    t.rest = add_sat(t.rest - costs_.a_native(hi), smallest_a);
    return smallest_sequential_m(t);
  }

  // The smallest sequential_m that fits with some rounds count (0: none), by the ends of monotone ranges.
  std::int64_t smallest_sequential_m_any_rounds(std::int64_t sequential_n) const {
    const std::int64_t hi = rounds_upper_bound(sequential_n);
    std::int64_t best = 0;
    for_each_monotone_range(g_, min_rounds_, hi, [&](std::int64_t first, std::int64_t last) {
      for (const std::int64_t rounds : {first, last}) {
        const std::int64_t s = smallest_sequential_m(sequential_n, rounds);
        if (s > 0 && (best == 0 || s < best)) best = s;
      }
      return best == 1;
    });
    return best;
  }

  // The fewest rounds >= min_rounds_ that fit (0: none).
  std::int64_t fewest_rounds(std::int64_t sequential_m, std::int64_t sequential_n) const {
    std::int64_t found = 0;
    for_each_monotone_range(g_, min_rounds_, rounds_upper_bound(sequential_n),
                            [&](std::int64_t first, std::int64_t last) {
                              if (fits(sequential_m, sequential_n, first)) {
                                found = first;
                              } else if (fits(sequential_m, sequential_n, last)) {
                                // Monotone on [first, last], falling: bisect for the first that fits.
                                std::int64_t too_few = first, enough = last;
                                while (enough - too_few > 1) {
                                  const std::int64_t mid = too_few + (enough - too_few) / 2;
                                  (fits(sequential_m, sequential_n, mid) ? enough : too_few) = mid;
                                }
                                found = enough;
                              }
                              return found > 0;
                            });
    return found;
  }

  // Automatic rounds (options.rounds == 0): the fewest that fit, raised to up to 4 rounds of at least 256
  // k-columns when an input is gathered, so its communication can overlap the multiply (Section 7.3).
  std::int64_t final_rounds(std::int64_t sequential_m, std::int64_t sequential_n, std::int64_t fewest) const {
    if (requested_rounds_ > 0 || (g_.grid_m == 1 && g_.grid_n == 1)) return fewest;
    const std::int64_t overlap_rounds = std::min<std::int64_t>(4, g_.local_k / 256);
    if (overlap_rounds > fewest && fits(sequential_m, sequential_n, overlap_rounds)) return overlap_rounds;
    return fewest;
  }

  // Rounds with no memory limit: the requested count (at most local_k) or the automatic rule.
  std::int64_t unlimited_rounds() const { return final_rounds(1, 1, min_rounds_); }

  // The least-I/O choice for this grid whose I/O does not exceed `bound` (any, when there is no bound).
  std::optional<candidate> best(const std::optional<candidate>& bound) const {
    std::optional<candidate> best_here;
    const std::int64_t last_n = last_sequential_n(limit_);
    for (std::int64_t sequential_n = 1; sequential_n <= last_n; ++sequential_n) {
      const std::int64_t io_bound = best_here ? best_here->io : bound ? bound->io : kInt64Max;
      if (costs_.io(1, sequential_n) > io_bound) break;  // I/O only grows with sequential_n from here
      const std::int64_t hi = rounds_upper_bound(sequential_n);
      if (hi < min_rounds_) continue;
      const std::int64_t at_least = sequential_m_lower_bound(sequential_n, hi);
      if (at_least == 0 || costs_.io(at_least, sequential_n) > io_bound) continue;
      const std::int64_t sequential_m = smallest_sequential_m_any_rounds(sequential_n);
      if (sequential_m == 0 || costs_.io(sequential_m, sequential_n) > io_bound) continue;
      const std::int64_t fewest = fewest_rounds(sequential_m, sequential_n);
      const candidate c =
          make_candidate(costs_, sequential_m, sequential_n, final_rounds(sequential_m, sequential_n, fewest));
      if (!best_here || better(c, *best_here)) best_here = c;
    }
    return best_here;
  }

  // The least memory of any choice for this grid (kInt64Max when none is below `bound`). The most
  // sequential m parts make rows0 smallest; then memory = X(sequential_n) + Y(cols0, rounds) with
  //   X = native op(B) + native C + accumulator,  Y = native op(A) + round buffers,
  // X is linear on the linear ranges of sequential_n, where cols0 is constant, so each range is decided by
  // its two ends and one least Y for its cols0.
  std::int64_t least_memory(std::int64_t bound) const {
    const std::int64_t rows = costs_.rows0(max_sequential_m_);
    std::int64_t least = bound;
    const auto x_of = [&](std::int64_t sequential_n) {
      const std::int64_t accumulator = g_.grid_k > 1 ? mul_sat(rows, costs_.cols0(sequential_n)) : 0;
      return add_sat(add_sat(costs_.b_native(sequential_n), costs_.c_native(sequential_n)), accumulator);
    };
    const auto visit = [&](std::int64_t first, std::int64_t last) {
      const std::int64_t x = std::min(x_of(first), x_of(last));
      if (x < least) least = std::min(least, add_sat(x, least_y(rows, costs_.cols0(first), least - x)));
      return false;
    };
    if (g_.local_n == 0) {
      visit(1, 1);
    } else {
      for_each_linear_range(g_.local_n, 1, last_sequential_n(least), visit);
    }
    return least == bound ? kInt64Max : least;
  }

  // No choice for this grid has less I/O than this (kInt64Max: nothing fits). Next to the native blocks
  // at their smallest, room = S - natives must hold the accumulator r x c (r = rows0, c = cols0; with k
  // split) and the round buffers (r + c) x round0 (for what is gathered), where round0 is at least
  // local_k / (the most rounds that fit). Since sequential_m >= local_m / r and sequential_n >= local_n / c,
  // io >= V (1/r + 1/c) + local_m * local_n with V = local_m * local_n * local_k, and
  //   r c <= room                      gives 1/r + 1/c >= 2 / sqrt(room)    (AM-GM; the shape of the
  //                                                                          paper's bound 2mnk / sqrt(S)),
  //   d_r r + d_c c <= room            gives 1/r + 1/c >= (sqrt(d_r) + sqrt(d_c))^2 / room  (Cauchy-Schwarz).
  std::int64_t io_lower_bound() const {
    const std::int64_t natives = native_lower_bound();
    if (natives > limit_) return kInt64Max;
    const std::int64_t least = costs_.io(1, 1);
    if (limit_ == kInt64Max || mul_sat(mul_sat(g_.local_m, g_.local_n), g_.local_k) == 0) return least;
    const std::int64_t room = limit_ - natives;
    std::int64_t most_rounds = max_rounds_;
    if (g_.grid_n > 1) {
      const std::int64_t smallest_a = mul_sat(g_.local_m, ceil_div(g_.local_k, g_.grid_n));
      most_rounds = std::min(most_rounds, (limit_ - (natives - smallest_a)) / g_.local_m);
    }
    if (most_rounds < min_rounds_) return kInt64Max;
    const long double round0 = static_cast<long double>(ceil_div(g_.local_k, most_rounds));
    const long double copies = static_cast<long double>(costs_.buffer_copies());
    const long double d_r = g_.grid_n > 1 ? copies * round0 : 0, d_c = g_.grid_m > 1 ? copies * round0 : 0;
    if (g_.grid_k == 1 && d_r == 0 && d_c == 0) return least;
    if (room == 0) return kInt64Max;
    const long double space = static_cast<long double>(room);
    long double inverse_sum = (std::sqrt(d_r) + std::sqrt(d_c)) * (std::sqrt(d_r) + std::sqrt(d_c)) / space;
    if (g_.grid_k > 1) inverse_sum = std::max(inverse_sum, 2 / std::sqrt(space));
    const long double m = g_.local_m, n = g_.local_n, k = g_.local_k;
    // A margin below the rounded value keeps it a bound.
    const long double bound = (m * n * k * inverse_sum + m * n) * (1 - 1e-9L) - 1;
    if (bound >= static_cast<long double>(kInt64Max)) return kInt64Max;
    return std::max(least, static_cast<std::int64_t>(bound));
  }

  // What every choice with this grid needs at least: native blocks at their smallest.
  std::int64_t native_lower_bound() const {
    const std::int64_t a = mul_sat(g_.local_m, g_.grid_n == 1 ? g_.local_k : ceil_div(g_.local_k, g_.grid_n));
    const std::int64_t b = mul_sat(g_.local_k, ceil_div(g_.local_n, g_.grid_m));
    const std::int64_t c = mul_sat(g_.local_m, ceil_div(g_.local_n, g_.grid_k));
    return add_sat(add_sat(a, b), c);
  }

 private:
  // min over rounds of native op(A) + round buffers for given rows0 and cols0, only searched below
  // `target` (a result >= target means none is below it). Rounds where native op(A) alone (at least
  // local_m per round) or the buffers alone (at least round0 per unit of width) reach the target are
  // skipped.
  std::int64_t least_y(std::int64_t rows, std::int64_t cols, std::int64_t target) const {
    const std::int64_t width =
        mul_sat(costs_.buffer_copies(), add_sat(g_.grid_n > 1 ? rows : 0, g_.grid_m > 1 ? cols : 0));
    const auto y_of = [&](std::int64_t rounds) {
      return add_sat(costs_.a_native(rounds), mul_sat(width, costs_.round0(rounds)));
    };
    std::int64_t lo = min_rounds_, hi = max_rounds_;
    if (g_.grid_n > 1 && g_.local_m > 0 && g_.local_k > 0) hi = std::min(hi, target / g_.local_m);
    const std::int64_t smallest_a = mul_sat(g_.local_m, g_.grid_n == 1 ? g_.local_k : ceil_div(g_.local_k, g_.grid_n));
    if (smallest_a >= target) return target;
    if (width > 0 && g_.local_k > 0) {
      // round0 <= widest keeps the buffers below target - smallest_a; round0 = ceil(local_k / rounds).
      const std::int64_t widest = (target - smallest_a) / width;
      if (widest == 0) return target;
      lo = std::max(lo, ceil_div(g_.local_k, widest));
    }
    std::int64_t least = target;
    for_each_monotone_range(g_, lo, hi, [&](std::int64_t first, std::int64_t last) {
      least = std::min({least, y_of(first), y_of(last)});
      return false;
    });
    return least;
  }

  bool fits(std::int64_t sequential_m, std::int64_t sequential_n, std::int64_t rounds) const {
    return costs_.memory(sequential_m, sequential_n, rounds) <= limit_;
  }

  // memory = rest + rows0 * per_row <= S for the largest rows0, then the fewest parts with that rows0.
  std::int64_t smallest_sequential_m(const grid_costs::memory_terms& t) const {
    if (t.rest > limit_) return 0;
    if (t.per_row == 0 || g_.local_m == 0) return 1;
    const std::int64_t rows = std::min((limit_ - t.rest) / t.per_row, g_.local_m);
    if (rows == 0) return 0;
    const std::int64_t parts = ceil_div(g_.local_m, rows);
    return parts <= max_sequential_m_ ? parts : 0;
  }

  const grid_costs& costs_;
  const grid_shape& g_;
  std::int64_t limit_;
  std::int64_t requested_rounds_;
  std::int64_t min_rounds_ = 1, max_rounds_ = 1;
  std::int64_t max_sequential_m_ = 1, max_sequential_n_ = 1;
};

// Divisors of n in increasing order.
std::vector<int> divisors(int n) {
  std::vector<int> small, large;
  for (int d = 1; static_cast<std::int64_t>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// Calls visit(grid_m, grid_n, grid_k) for every grid the search considers: ranks_used from P down to
// ceil((1 - max_idle_fraction) * P), each dimension cut into at most as many parts as it has elements (a
// zero dimension into 1 part). When a tiny problem has no such grid in that range, the largest smaller
// rank count that has one is used.
template <class Visit>
void for_each_candidate_grid(std::int64_t m, std::int64_t n, std::int64_t k, int ranks, double max_idle_fraction,
                             Visit visit) {
  const auto parts_limit = [](std::int64_t extent) { return std::max<std::int64_t>(1, extent); };
  // Products saturate: any grid of more ranks than m * n * k cuts some dimension too finely.
  const std::int64_t most_parts = mul_sat(mul_sat(parts_limit(m), parts_limit(n)), parts_limit(k));
  const int top = static_cast<int>(std::min<std::int64_t>(ranks, most_parts));
  // The tiny relative nudge keeps e.g. 0.03 * 100 at 3 idle ranks despite 0.03's binary rounding.
  const int idle_allowed = static_cast<int>(std::floor(max_idle_fraction * ranks * (1 + 1e-12)));
  const int fewest_used = std::max(1, ranks - idle_allowed);
  bool any = false;
  for (int used = top; used >= 1; --used) {
    if (used < fewest_used && any) break;
    const std::vector<int> divs = divisors(used);
    for (const int gm : divs) {
      if (gm > parts_limit(m)) break;
      const int rest = used / gm;
      for (const int gn : divs) {
        if (gn > rest || gn > parts_limit(n)) break;
        if (rest % gn != 0 || rest / gn > parts_limit(k)) continue;
        visit(gm, gn, rest / gn);
        any = true;
      }
    }
  }
}

// A grid by its parts, for lists sorted by some bound.
struct grid_parts {
  int grid_m, grid_n, grid_k;
};

std::vector<int> prime_factors(int n) {
  std::vector<int> primes;
  for (int p = 2; static_cast<std::int64_t>(p) * p <= n; ++p)
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  if (n > 1) primes.push_back(n);
  return primes;
}

std::vector<gemm_step> schedule_steps(const candidate& c) {
  std::vector<gemm_step> steps;
  for (const auto& [dimension, extent] :
       {std::pair{gemm_dimension::m, c.grid_m}, std::pair{gemm_dimension::n, c.grid_n},
        std::pair{gemm_dimension::k, c.grid_k}})
    for (const int p : prime_factors(extent)) steps.push_back({dimension, p, true});
  // Largest divisor first; stable, so equal divisors keep the order m, n, k.
  std::stable_sort(steps.begin(), steps.end(),
                   [](const gemm_step& a, const gemm_step& b) { return a.divisor > b.divisor; });
  const std::pair<gemm_dimension, std::int64_t> sequential[] = {
      {gemm_dimension::m, c.sequential_m}, {gemm_dimension::n, c.sequential_n}, {gemm_dimension::k, c.rounds}};
  for (const auto& [dimension, divisor] : sequential)
    if (divisor > 1) steps.push_back({dimension, static_cast<int>(divisor), false});
  return steps;
}

void validate(std::int64_t m, std::int64_t n, std::int64_t k, int ranks, const gemm_schedule_options& options) {
  const std::string what = "plan_gemm_schedule: ";
  if (m < 0 || n < 0 || k < 0)
    throw invalid_argument(what + "matrix sizes m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                           ", k = " + std::to_string(k) + " must all be >= 0");
  if (ranks < 1) throw invalid_argument(what + "ranks = " + std::to_string(ranks) + " must be >= 1");
  if (options.memory_limit_elements < 0)
    throw invalid_argument(what + "memory_limit_elements = " + std::to_string(options.memory_limit_elements) +
                           " must be >= 0 (0 = no limit)");
  if (!(options.max_idle_fraction >= 0 && options.max_idle_fraction < 1))
    throw invalid_argument(what + "max_idle_fraction = " + std::to_string(options.max_idle_fraction) +
                           " must be in [0, 1)");
  if (options.rounds < 0)
    throw invalid_argument(what + "rounds = " + std::to_string(options.rounds) + " must be >= 0 (0 = automatic)");
}

std::string grid_text(int gm, int gn, int gk) {
  return std::to_string(gm) + "x" + std::to_string(gn) + "x" + std::to_string(gk);
}

// The smallest limit any grid in the range would work with, for the insufficient_memory message.
[[noreturn]] void throw_insufficient_memory(std::int64_t m, std::int64_t n, std::int64_t k, int ranks,
                                            const gemm_schedule_options& options) {
  std::vector<std::pair<std::int64_t, grid_parts>> order;  // by the native blocks' lower bound
  for_each_candidate_grid(m, n, k, ranks, options.max_idle_fraction, [&](int gm, int gn, int gk) {
    const grid_costs costs(grid_shape(m, n, k, gm, gn, gk), options.double_buffering);
    order.push_back({sequential_search(costs, options).native_lower_bound(), {gm, gn, gk}});
  });
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::int64_t least = kInt64Max;
  grid_parts least_grid = order.front().second;
  for (const auto& [lower_bound, parts] : order) {
    if (lower_bound >= least) break;
    const grid_costs costs(grid_shape(m, n, k, parts.grid_m, parts.grid_n, parts.grid_k), options.double_buffering);
    const std::int64_t here = sequential_search(costs, options).least_memory(least);
    if (here < least) {
      least = here;
      least_grid = parts;
    }
  }
  throw insufficient_memory(
      "plan_gemm_schedule: the multiply of " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
      " needs at least " + (least == kInt64Max ? std::string("more than 2^63-1") : std::to_string(least)) +
      " elements per rank (grid " + grid_text(least_grid.grid_m, least_grid.grid_n, least_grid.grid_k) + ", " +
      std::to_string(least_grid.grid_m * least_grid.grid_n * least_grid.grid_k) + " ranks); the limit is " +
      std::to_string(options.memory_limit_elements) + " elements");
}

std::string format_double(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

double gemm_lower_bound_elements(std::int64_t m, std::int64_t n, std::int64_t k, int ranks,
                                 std::int64_t memory_limit_elements) {
  if (ranks < 1)
    throw invalid_argument("gemm_lower_bound_elements: ranks = " + std::to_string(ranks) + " must be >= 1");
  if (m < 0 || n < 0 || k < 0)
    throw invalid_argument("gemm_lower_bound_elements: matrix sizes m = " + std::to_string(m) +
                           ", n = " + std::to_string(n) + ", k = " + std::to_string(k) + " must all be >= 0");
  // mnk reaches 10^18 and beyond: long double keeps it and its cube root accurate.
  const long double work = static_cast<long double>(m) * n * k / ranks;
  const long double cube_face = std::pow(work, 2.0L / 3);
  const long double limit = static_cast<long double>(memory_limit_elements);
  // Eq. 32: the optimal local domain is a x a x b with a = min(sqrt(S), (mnk/P)^(1/3)), and its I/O is
  // 2mnk / (P a) + a^2. Printed as min{} in Eq. 33, but the first term is never below the second
  // (2w / a + a^2 is least at a = w^(1/3)): the first holds when S binds, the second otherwise.
  if (memory_limit_elements <= 0 || limit >= cube_face) return static_cast<double>(3 * cube_face);
  return static_cast<double>(2 * work / std::sqrt(limit) + limit);
}

std::int64_t gemm_memory_elements(std::int64_t m, std::int64_t n, std::int64_t k, int grid_m, int grid_n, int grid_k,
                                  int sequential_m, int sequential_n, std::int64_t rounds, bool double_buffering) {
  if (m < 0 || n < 0 || k < 0 || grid_m < 1 || grid_n < 1 || grid_k < 1 || sequential_m < 1 || sequential_n < 1 ||
      rounds < 1)
    throw invalid_argument(
        "gemm_memory_elements: expected m, n, k >= 0 and grid, sequential parts and rounds >= 1, "
        "got "
        "m = " +
        std::to_string(m) + ", n = " + std::to_string(n) + ", k = " + std::to_string(k) + ", grid " +
        grid_text(grid_m, grid_n, grid_k) + ", sequential " + std::to_string(sequential_m) + "x" +
        std::to_string(sequential_n) + ", rounds " + std::to_string(rounds));
  const grid_costs costs(grid_shape(m, n, k, grid_m, grid_n, grid_k), double_buffering);
  return costs.memory(sequential_m, sequential_n, rounds);
}

gemm_schedule plan_gemm_schedule(std::int64_t m, std::int64_t n, std::int64_t k, int ranks,
                                 const gemm_schedule_options& options) {
  validate(m, n, k, ranks, options);
  std::optional<candidate> best;
  if (options.memory_limit_elements == 0) {
    // Everything fits with sequential 1x1: I/O decides first, so only grids that reach the best I/O so far
    // need the other counts.
    for_each_candidate_grid(m, n, k, ranks, options.max_idle_fraction, [&](int gm, int gn, int gk) {
      const grid_costs costs(grid_shape(m, n, k, gm, gn, gk), options.double_buffering);
      if (best && costs.io(1, 1) > best->io) return;
      const candidate c = make_candidate(costs, 1, 1, sequential_search(costs, options).unlimited_rounds());
      if (!best || better(c, *best)) best = c;
    });
  } else {
    // Grids in order of their I/O lower bound, so the first that cannot beat the best found ends the search.
    std::vector<std::pair<std::int64_t, grid_parts>> order;
    for_each_candidate_grid(m, n, k, ranks, options.max_idle_fraction, [&](int gm, int gn, int gk) {
      const grid_costs costs(grid_shape(m, n, k, gm, gn, gk), options.double_buffering);
      const std::int64_t bound = sequential_search(costs, options).io_lower_bound();
      if (bound != kInt64Max) order.push_back({bound, {gm, gn, gk}});
    });
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [io_bound, parts] : order) {
      if (best && io_bound > best->io) break;
      const grid_costs costs(grid_shape(m, n, k, parts.grid_m, parts.grid_n, parts.grid_k), options.double_buffering);
      const std::optional<candidate> c = sequential_search(costs, options).best(best);
      if (c && (!best || better(*c, *best))) best = c;
    }
    if (!best) throw_insufficient_memory(m, n, k, ranks, options);
  }

  const candidate& c = *best;
  if (c.io == kInt64Max || c.memory == kInt64Max || c.communicated == kInt64Max || c.messages == kInt64Max)
    throw overflow_error("plan_gemm_schedule: the counts of the multiply of " + std::to_string(m) + "x" +
                         std::to_string(n) + "x" + std::to_string(k) + " on grid " +
                         grid_text(c.grid_m, c.grid_n, c.grid_k) + " exceed 2^63-1 elements per rank");
  gemm_schedule s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.ranks = ranks;
  s.ranks_used = c.ranks();
  s.grid_m = c.grid_m;
  s.grid_n = c.grid_n;
  s.grid_k = c.grid_k;
  s.sequential_m = static_cast<int>(c.sequential_m);
  s.sequential_n = static_cast<int>(c.sequential_n);
  s.rounds = c.rounds;
  s.steps = schedule_steps(c);
  s.local_m = part_size(m, c.grid_m, 0);
  s.local_n = part_size(n, c.grid_n, 0);
  s.local_k = part_size(k, c.grid_k, 0);
  s.memory_limit_elements = options.memory_limit_elements;
  s.memory_elements = c.memory;
  s.communicated_elements = c.communicated;
  s.io_elements = c.io;
  s.messages = c.messages;
  s.lower_bound_elements = gemm_lower_bound_elements(m, n, k, ranks, options.memory_limit_elements);
  s.ratio_to_lower_bound = s.lower_bound_elements > 0 ? static_cast<double>(c.io) / s.lower_bound_elements : 0;
  return s;
}

std::string gemm_schedule::describe() const {
  return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + ": grid " +
         grid_text(grid_m, grid_n, grid_k) + " (" + std::to_string(ranks_used) + " of " + std::to_string(ranks) +
         " ranks), sequential " + std::to_string(sequential_m) + "x" + std::to_string(sequential_n) + ", " +
         std::to_string(rounds) + (rounds == 1 ? " round" : " rounds") + ", local " + std::to_string(local_m) + "x" +
         std::to_string(local_n) + "x" + std::to_string(local_k) + ", memory " + std::to_string(memory_elements) +
         " (limit " + (memory_limit_elements > 0 ? std::to_string(memory_limit_elements) : std::string("none")) +
         "), communicated " + std::to_string(communicated_elements) + ", io " + std::to_string(io_elements) +
         ", messages " + std::to_string(messages) + ", lower bound " + format_double("%.0f", lower_bound_elements) +
         " (ratio " + format_double("%.3f", ratio_to_lower_bound) + ")";
}

std::string gemm_schedule::to_json() const {
  std::string steps_json = "[";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0) steps_json += ", ";
    steps_json += std::string("{\"dimension\": \"") + to_string(steps[i].dimension) +
                  "\", \"divisor\": " + std::to_string(steps[i].divisor) +
                  ", \"parallel\": " + (steps[i].parallel ? "true" : "false") + "}";
  }
  steps_json += "]";
  const auto field = [](const char* name, const std::string& value) {
    return std::string("\"") + name + "\": " + value;
  };
  const auto integer = [&](const char* name, std::int64_t value) { return field(name, std::to_string(value)); };
  return "{" + integer("m", m) + ", " + integer("n", n) + ", " + integer("k", k) + ", " + integer("ranks", ranks) +
         ", " + integer("ranks_used", ranks_used) + ", " + integer("grid_m", grid_m) + ", " +
         integer("grid_n", grid_n) + ", " + integer("grid_k", grid_k) + ", " + integer("sequential_m", sequential_m) +
         ", " + integer("sequential_n", sequential_n) + ", " + integer("rounds", rounds) + ", " +
         field("steps", steps_json) + ", " + integer("local_m", local_m) + ", " + integer("local_n", local_n) + ", " +
         integer("local_k", local_k) + ", " + integer("memory_limit_elements", memory_limit_elements) + ", " +
         integer("memory_elements", memory_elements) + ", " + integer("communicated_elements", communicated_elements) +
         ", " + integer("io_elements", io_elements) + ", " + integer("messages", messages) + ", " +
         field("lower_bound_elements", format_double("%.17g", lower_bound_elements)) + ", " +
         field("ratio_to_lower_bound", format_double("%.17g", ratio_to_lower_bound)) + "}";
}

}  // namespace redist
