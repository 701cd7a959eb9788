// SPDX-License-Identifier: BSD-3-Clause
// Linear assignment solvers for process relabeling.
//
// The relabeling gains form a complete bipartite graph in which only a few pairs (those that exchange
// data) have a non-zero weight. With non-negative weights the maximum-weight *perfect* matching of that
// complete graph has the weight of a maximum-weight (not necessarily perfect) matching of the sparse
// graph of positive edges: any sparse matching is completed with zero-weight pairs.
//
// The sparse problem is solved as a rectangular min-cost assignment that must cover every row:
//   rows    = labels u that have a positive edge (L of them)
//   columns = ranks v that have a positive edge (R), then one private "stay unmatched" column u* per label
//   u -- v   cost -w(u, v)   (a listed edge)
//   u -- u*  cost 0
// Columns may stay free. This is the same as adding a dummy vertex per rank and per label, but without
// the dummies' large zero-cost plateaus, which would make every shortest-path search wide.
// LP duality for a row-covering assignment: u_r + v_c <= c(r, c), v_c <= 0, and v_c = 0 on free columns.
// Both phases below keep free columns at v = 0 and never free a matched column, so the final matching is
// optimal:
//   1. Jonker-Volgenant augmenting row reduction (an auction-like pass) matches most rows cheaply;
//   2. every row still free is augmented along a shortest path over reduced costs (Dijkstra with
//      potentials, stopping at the first free column, updating only the duals it finalised).
// Costs are int64 when all weights are integral (volumes in bytes), so the optimum is exact; otherwise
// doubles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "redist/error.hpp"
#include "redist/relabel/relabel.hpp"

namespace redist::relabel {

namespace {

void check_size(int n, const char* who) {
  if (n < 0) throw invalid_argument(std::string(who) + ": n must be >= 0, got " + std::to_string(n));
}

// Validates the edges and merges duplicate (left, right) pairs by adding their weights. Sorted by
// (left, right).
std::vector<weighted_edge> merged_edges(int n, const std::vector<weighted_edge>& edges, const char* who) {
  std::vector<weighted_edge> out;
  out.reserve(edges.size());
  for (const auto& e : edges) {
    if (e.left < 0 || e.left >= n || e.right < 0 || e.right >= n)
      throw invalid_argument(std::string(who) + ": edge (" + std::to_string(e.left) + ", " + std::to_string(e.right) +
                             ") has an end outside [0, " + std::to_string(n) + ")");
    if (!std::isfinite(e.weight))
      throw invalid_argument(std::string(who) + ": edge (" + std::to_string(e.left) + ", " + std::to_string(e.right) +
                             ") has a non-finite weight; expected a finite number");
    out.push_back(e);
  }
  const auto by_pair = [](const weighted_edge& a, const weighted_edge& b) {
    return a.left != b.left ? a.left < b.left : a.right < b.right;
  };
  if (!std::is_sorted(out.begin(), out.end(), by_pair)) std::sort(out.begin(), out.end(), by_pair);
  size_t kept = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    if (kept > 0 && out[kept - 1].left == out[k].left && out[kept - 1].right == out[k].right)
      out[kept - 1].weight += out[k].weight;
    else
      out[kept++] = out[k];
  }
  out.resize(kept);
  return out;
}

// Pairs the lefts without a right (right_of[l] == -1) with the rights nobody took: left x with right x
// when both are free (ranks that nothing ties down keep their label), the rest in ascending order.
void complete_assignment(int n, std::vector<int>& right_of) {
  std::vector<char> right_taken(static_cast<size_t>(n), 0);
  for (int l = 0; l < n; ++l)
    if (right_of[l] >= 0) right_taken[right_of[l]] = 1;
  for (int l = 0; l < n; ++l)
    if (right_of[l] < 0 && !right_taken[l]) {
      right_of[l] = l;
      right_taken[l] = 1;
    }
  int next_free = 0;
  for (int l = 0; l < n; ++l) {
    if (right_of[l] >= 0) continue;
    while (right_taken[next_free]) ++next_free;
    right_of[l] = next_free;
    right_taken[next_free] = 1;
  }
}

// ---- sparse row-covering min-cost assignment ---------------------------------------------------------

// Rectangular assignment problem in compressed rows. `Edges` lists each row's edges: rows(), listed_columns()
// (column ids are [0, listed_columns())), row_begin(r)/row_end(r) (64-bit edge ids), column(e) and cost(e), and
// the order in which equally distant columns are taken: tie_place(c) for a listed column, ordered_columns() + r
// for row r's private "stay unmatched" column (id listed_columns() + r, cost 0, after its listed edges: offset
// row_end(r) - row_begin(r) in the row). Column ids can so be whatever is cheapest to read while the answers stay
// those of the compact numbering. A matching covering all rows exists. Edges are kept as offsets within their row,
// and private columns have no search state (a search reaches row r's private column only from r, which it scans
// only when r is matched elsewhere, so the column is free and ends the search once it is the nearest): the solver
// adds about 30 bytes per listed column and 16 per row to the input, which the caller may hold in its own compact
// form.
template <class Cost, class Edges>
class sparse_assignment {
 public:
  explicit sparse_assignment(const Edges& edges)
      : edges_(edges), rows_(edges.rows()), listed_cols_(edges.listed_columns()) {}

  // Returns col[row].
  std::vector<int> solve() {
    const auto all_cols = static_cast<size_t>(listed_cols_) + static_cast<size_t>(rows_);
    v_.assign(all_cols, Cost(0));
    matched_.assign(static_cast<size_t>(rows_), -1);
    row_of_col_.assign(all_cols, -1);
    reduce_rows();
    search_.assign(static_cast<size_t>(listed_cols_), search_entry{infinity(), -1, -1});
    for (int r = 0; r < rows_; ++r)
      if (matched_[r] < 0) augment_from(r);
    // The search state goes before the answer is built: the peak is the larger of the two.
    release(search_);
    release(v_);
    release(row_of_col_);
    std::vector<int> col_of_row(static_cast<size_t>(rows_));
    for (int r = 0; r < rows_; ++r) col_of_row[r] = column(r, matched_[r]);
    return col_of_row;
  }

 private:
  static constexpr Cost infinity() { return std::numeric_limits<Cost>::max() / 4; }

  // A search heap entry, ordered by (distance, tie key).
  struct entry {
    Cost dist;
    std::int64_t key;
    int column;
    bool operator<(const entry& o) const { return dist != o.dist ? dist < o.dist : key < o.key; }
    bool operator>(const entry& o) const { return o < *this; }
  };

  template <class T>
  static void release(std::vector<T>& v) {
    std::vector<T>().swap(v);
  }

  int degree(int r) const { return static_cast<int>(edges_.row_end(r) - edges_.row_begin(r)); }
  // Column and cost of the edge at `offset` in row r (offset degree(r): the private column).
  int column(int r, int offset) const {
    return offset < degree(r) ? edges_.column(edges_.row_begin(r) + offset) : listed_cols_ + r;
  }
  Cost cost(int r, int offset) const {
    return offset < degree(r) ? edges_.cost(edges_.row_begin(r) + offset) : Cost(0);
  }

  // Calls visit(offset, column, cost) for row r's listed edges, then its private edge.
  template <class Visit>
  void for_each_edge(int r, Visit&& visit) const {
    const std::int64_t begin = edges_.row_begin(r), end = edges_.row_end(r);
    for (std::int64_t e = begin; e < end; ++e) visit(static_cast<int>(e - begin), edges_.column(e), edges_.cost(e));
    visit(static_cast<int>(end - begin), listed_cols_ + r, Cost(0));
  }

  void assign(int row, int offset) {
    matched_[row] = offset;
    row_of_col_[column(row, offset)] = row;
  }

  // Jonker-Volgenant's augmenting row reduction: a free row takes its cheapest column (reduced by the
  // column duals) and lowers that column's dual until the row is indifferent between its two cheapest
  // columns, evicting the previous owner, which bids next. Every matched row keeps a cheapest (tight)
  // edge, only columns that become matched get cheaper, so the duals stay feasible and free columns stay
  // at 0. The number of bids is capped (ties and small steps can make price wars long); rows still free
  // are left to augment_from(). A bid costs a scan of one row, a search from a row still free can cost a scan
  // of much of the graph (random graphs: 64 bids per row let the first pass end by itself and leave 339 rows of
  // 10^5 to the searches instead of 1518 at 5, half the time; structured graphs end their passes before 5).
  void reduce_rows() {
    std::vector<int> free_rows(static_cast<size_t>(rows_));
    for (int r = 0; r < rows_; ++r) free_rows[r] = rows_ - 1 - r;  // bid in ascending row order (stack)
    std::int64_t budget = 64 * static_cast<std::int64_t>(rows_);
    for (int r = 0; r < rows_; ++r) budget += degree(r);
    for (int pass = 0; pass < 2 && !free_rows.empty(); ++pass) {
      std::vector<int> next_pass;
      while (!free_rows.empty()) {
        if (--budget < 0) return;  // leftover rows (free_rows, next_pass) are simply unmatched
        const int r = free_rows.back();
        free_rows.pop_back();
        // The two cheapest edges, by selects rather than branches: the values are unpredictable, and this loop
        // is most of the bidding's time.
        int best = -1, second = -1;
        Cost best_value = infinity(), second_value = infinity();
        for_each_edge(r, [&](int offset, int c, Cost edge_cost) {
          const Cost value = edge_cost - v_[c];
          const bool below_best = value < best_value, below_second = value < second_value;
          second_value = below_best ? best_value : (below_second ? value : second_value);
          second = below_best ? best : (below_second ? offset : second);
          best_value = below_best ? value : best_value;
          best = below_best ? offset : best;
        });
        const int best_col = column(r, best), second_col = second >= 0 ? column(r, second) : -1;
        int take = best;
        int evicted = row_of_col_[best_col];
        const bool strictly_better = best_value < second_value;
        if (strictly_better) {
          v_[best_col] -= second_value - best_value;
        } else if (evicted >= 0) {
          take = second;  // tie: the other cheapest column may be free
          evicted = row_of_col_[second_col];
        }
        if (evicted >= 0) {
          matched_[evicted] = -1;
          if (strictly_better)
            free_rows.push_back(evicted);  // bids right away against the new price
          else
            next_pass.push_back(evicted);
        }
        assign(r, take);
      }
      free_rows.assign(next_pass.rbegin(), next_pass.rend());
    }
  }

  // Row dual of a matched row: its matched edge is tight.
  Cost row_dual(int r) const {
    const int offset = matched_[r];
    return cost(r, offset) - v_[column(r, offset)];
  }

  static Cost non_negative(Cost x) { return x < Cost(0) ? Cost(0) : x; }  // absorbs rounding of doubles

  void augment_from(int start) {
    // The free row's dual: the largest value that keeps its reduced costs non-negative.
    Cost start_dual = infinity();
    int tight = -1, tight_col = -1;
    for_each_edge(start, [&](int offset, int c, Cost edge_cost) {
      const Cost reduced = edge_cost - v_[c];
      if (reduced < start_dual || (reduced == start_dual && row_of_col_[c] < 0)) {
        start_dual = reduced;
        tight = offset;
        tight_col = c;
      }
    });
    if (row_of_col_[tight_col] < 0) {  // a free column on a tight edge: no search needed
      assign(start, tight);
      return;
    }

    // Equal distances pop free columns first (key 2 * tie place + matched), so plateaus of zero reduced
    // cost end the search as soon as they touch a free column. The nearest private column reached so far
    // (always free, relaxed once) is kept aside and compared with the heap's top under the same order.
    std::priority_queue<entry, std::vector<entry>, std::greater<entry>> heap;
    touched_.clear();
    finalized_list_.clear();
    entry nearest_private{infinity(), 0, 0};
    int private_row = -1;
    // No column farther than a free one already reached can end the search or lie on its path: such candidates
    // are not pushed (most of them, since every search stops early).
    Cost bound = infinity();
    auto relax = [&](int row, int offset, int c, Cost candidate) {
      if (candidate > bound) return;
      if (c >= listed_cols_) {
        bound = candidate;
        const entry key{candidate, 2 * (static_cast<std::int64_t>(edges_.ordered_columns()) + row), c};
        if (private_row < 0 || key < nearest_private) {
          nearest_private = key;
          private_row = row;
        }
        return;
      }
      // A finalised column fails this test too: candidates are never below the distance being finalised.
      search_entry& state = search_[static_cast<size_t>(c)];
      if (!(candidate < state.dist)) return;
      if (state.dist == infinity()) touched_.push_back(c);
      state = {candidate, row, offset};
      const bool free = row_of_col_[c] < 0;
      if (free) bound = candidate;
      heap.push({candidate, 2 * static_cast<std::int64_t>(edges_.tie_place(c)) + (free ? 0 : 1), c});
    };
    for_each_edge(start, [&](int offset, int c, Cost edge_cost) {
      relax(start, offset, c, non_negative(edge_cost - v_[c] - start_dual));
    });

    int sink = -1, sink_row = -1, sink_offset = -1;
    Cost sink_dist = 0;
    while (true) {
      while (!heap.empty()) {  // drop stale entries (finalised columns' among them: only one entry has its distance)
        if (!(search_[static_cast<size_t>(heap.top().column)].dist < heap.top().dist)) break;
        heap.pop();
      }
      if (private_row >= 0 && (heap.empty() || nearest_private < heap.top())) {
        sink = listed_cols_ + private_row;
        sink_dist = nearest_private.dist;
        sink_row = private_row;
        sink_offset = degree(private_row);
        break;
      }
      if (heap.empty()) break;
      const Cost d = heap.top().dist;
      const int c = heap.top().column;
      heap.pop();
      finalized_list_.push_back(c);
      const int r = row_of_col_[c];
      if (r < 0) {
        sink = c;
        sink_dist = d;
        sink_row = search_[static_cast<size_t>(c)].pred_row;
        sink_offset = search_[static_cast<size_t>(c)].pred_offset;
        break;
      }
      const Cost r_dual = row_dual(r);
      const int matched = matched_[r];
      for_each_edge(r, [&](int offset, int edge_col, Cost edge_cost) {
        if (offset != matched) relax(r, offset, edge_col, d + non_negative(edge_cost - v_[edge_col] - r_dual));
      });
    }
    if (sink < 0) throw error("relabel: internal error, the assignment problem has no row-covering matching");

    // Dual update of the finalised columns only (all matched, except a listed sink whose change is 0): every
    // other vertex is at distance >= sink_dist and keeps its dual. Matched rows' duals follow implicitly
    // from their tight matched edges.
    for (int c : finalized_list_) v_[c] -= sink_dist - search_[static_cast<size_t>(c)].dist;

    // Flip the alternating path back to the start row.
    int r = sink_row, offset = sink_offset;
    while (true) {
      const int previous = matched_[r];
      assign(r, offset);
      if (r == start) break;
      const int c = column(r, previous);
      r = search_[static_cast<size_t>(c)].pred_row;
      offset = search_[static_cast<size_t>(c)].pred_offset;
    }

    for (int t : touched_) search_[static_cast<size_t>(t)].dist = infinity();
  }

  const Edges& edges_;
  int rows_, listed_cols_;
  std::vector<Cost> v_;          // column duals (listed, then private), <= 0, 0 on free columns
  std::vector<int> matched_;     // per row: offset of its matched edge in the row, -1 when free
  std::vector<int> row_of_col_;  // per column (listed, then private), -1 when free
  // Per listed column, the search state, together since a relaxation reads and writes all of it.
  struct search_entry {
    Cost dist;        // distance from the start row (infinity when not reached)
    int pred_row;     // the row of the search path's edge into the column
    int pred_offset;  // and that edge's offset in the row
  };
  std::vector<search_entry> search_;
  std::vector<int> touched_, finalized_list_;
};

// Edges given as arrays (the weighted_edge entry point): compact row offsets, columns and costs.
template <class Cost>
struct listed_edges {
  std::vector<std::int64_t> row_start{0};
  std::vector<int> col;
  std::vector<Cost> cost_of;
  int num_columns = 0;

  int rows() const { return static_cast<int>(row_start.size()) - 1; }
  int listed_columns() const { return num_columns; }
  int ordered_columns() const { return num_columns; }
  int tie_place(int c) const { return c; }
  std::int64_t row_begin(int r) const { return row_start[static_cast<size_t>(r)]; }
  std::int64_t row_end(int r) const { return row_start[static_cast<size_t>(r) + 1]; }
  int column(std::int64_t e) const { return col[static_cast<size_t>(e)]; }
  Cost cost(std::int64_t e) const { return cost_of[static_cast<size_t>(e)]; }
};

// Edges read straight from a label_graph (locally-free gains: the gain of rank y for label x is the volume y
// holds of x's data): rows are the labels with packages, a column is the sender's rank itself (no lookup per
// edge), and ties are broken in the order the weighted_edge entry point numbers its columns (senders in order of
// first appearance), so both give the same matching. The weighted_edge path takes each gain as a double first;
// `through_double` does the same, needed only for volumes above 2^53 (the conversion is exact below, and costs a
// tenth of the solve).
template <class Cost, bool through_double>
struct label_graph_edges {
  const label_graph& graph;
  std::vector<int> label_of_row;   // empty when every label has packages (row r is label r)
  std::vector<int> place_of_rank;  // tie place of a sender, -1 for a rank that sends nothing
  int senders = 0;

  explicit label_graph_edges(const label_graph& g) : graph(g), place_of_rank(static_cast<size_t>(g.nranks), -1) {
    int rows_found = 0;
    for (int x = 0; x < g.label_count(); ++x) {
      const std::int64_t begin = g.label_start[static_cast<size_t>(x)], end = g.label_start[static_cast<size_t>(x) + 1];
      if (begin == end) continue;
      ++rows_found;
      for (std::int64_t k = begin; k < end; ++k) {
        int& place = place_of_rank[static_cast<size_t>(g.src[static_cast<size_t>(k)])];
        if (place < 0) place = senders++;
      }
    }
    if (rows_found == g.label_count()) return;
    label_of_row.reserve(static_cast<size_t>(rows_found));
    for (int x = 0; x < g.label_count(); ++x)
      if (g.label_start[static_cast<size_t>(x)] < g.label_start[static_cast<size_t>(x) + 1]) label_of_row.push_back(x);
  }

  int label(int r) const { return label_of_row.empty() ? r : label_of_row[static_cast<size_t>(r)]; }
  int rows() const { return label_of_row.empty() ? graph.label_count() : static_cast<int>(label_of_row.size()); }
  int listed_columns() const { return graph.nranks; }
  int ordered_columns() const { return senders; }
  int tie_place(int c) const { return place_of_rank[static_cast<size_t>(c)]; }
  std::int64_t row_begin(int r) const { return graph.label_start[static_cast<size_t>(label(r))]; }
  std::int64_t row_end(int r) const { return graph.label_start[static_cast<size_t>(label(r)) + 1]; }
  int column(std::int64_t e) const { return graph.src[static_cast<size_t>(e)]; }
  Cost cost(std::int64_t e) const {
    const std::int64_t volume = graph.volume[static_cast<size_t>(e)];
    return through_double ? -static_cast<Cost>(static_cast<double>(volume)) : -static_cast<Cost>(volume);
  }
};

// Maximum-weight matching of the sparse bipartite graph of positive edges (sorted by (left, right),
// merged), exact, through the row-covering formulation described at the top. Returns right[left] with
// -1 for unmatched lefts.
template <class Cost>
std::vector<int> sparse_max_weight_matching(int n, const std::vector<weighted_edge>& positive) {
  // Compact indices: only lefts and rights that some positive edge touches take part.
  std::vector<int> right_index(static_cast<size_t>(n), -1);
  std::vector<int> lefts, rights;
  listed_edges<Cost> edges;
  edges.col.reserve(positive.size());
  edges.cost_of.reserve(positive.size());
  for (size_t k = 0; k < positive.size(); ++k) {
    const weighted_edge& e = positive[k];
    if (lefts.empty() || lefts.back() != e.left) {
      if (!lefts.empty()) edges.row_start.push_back(static_cast<std::int64_t>(k));
      lefts.push_back(e.left);
    }
    if (right_index[e.right] < 0) {
      right_index[e.right] = static_cast<int>(rights.size());
      rights.push_back(e.right);
    }
    edges.col.push_back(right_index[e.right]);
    edges.cost_of.push_back(-static_cast<Cost>(e.weight));
  }
  if (!lefts.empty()) edges.row_start.push_back(static_cast<std::int64_t>(positive.size()));
  edges.num_columns = static_cast<int>(rights.size());

  const std::vector<int> col_of_row = sparse_assignment<Cost, listed_edges<Cost>>(edges).solve();
  std::vector<int> right_of(static_cast<size_t>(n), -1);
  for (size_t l = 0; l < lefts.size(); ++l)
    if (col_of_row[l] < edges.num_columns) right_of[lefts[l]] = rights[col_of_row[l]];
  return right_of;
}

template <class Cost, bool through_double>
std::vector<int> label_graph_matching(const label_graph& g) {
  const label_graph_edges<Cost, through_double> edges(g);
  const std::vector<int> col_of_row = sparse_assignment<Cost, label_graph_edges<Cost, through_double>>(edges).solve();
  std::vector<int> right_of(static_cast<size_t>(g.nranks), -1);
  for (size_t r = 0; r < col_of_row.size(); ++r)
    if (col_of_row[r] < edges.listed_columns())
      right_of[static_cast<size_t>(edges.label(static_cast<int>(r)))] = col_of_row[r];
  return right_of;
}

// ---- dense min-cost perfect matching (Hungarian method with potentials, O(n^3)) --------------------

template <class Cost>
std::vector<int> dense_min_cost(int n, const std::vector<Cost>& cost) {
  // 1-based rows/columns; column 0 is the virtual start of each augmenting search.
  const Cost inf = std::numeric_limits<Cost>::max() / 4;
  const auto size = static_cast<size_t>(n) + 1;
  std::vector<Cost> row_dual(size, 0), col_dual(size, 0), min_slack(size);
  std::vector<int> row_of_col(size, 0), way(size, 0);
  std::vector<char> used(size);
  for (int i = 1; i <= n; ++i) {
    row_of_col[0] = i;
    int j0 = 0;
    std::fill(min_slack.begin(), min_slack.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const int i0 = row_of_col[j0];
      const Cost* row = cost.data() + static_cast<size_t>(i0 - 1) * n;
      Cost delta = inf;
      int j1 = 0;
      for (int j = 1; j <= n; ++j) {
        if (used[j]) continue;
        const Cost slack = row[j - 1] - row_dual[i0] - col_dual[j];
        if (slack < min_slack[j]) {
          min_slack[j] = slack;
          way[j] = j0;
        }
        if (min_slack[j] < delta) {
          delta = min_slack[j];
          j1 = j;
        }
      }
      for (int j = 0; j <= n; ++j) {
        if (used[j]) {
          row_dual[row_of_col[j]] += delta;
          col_dual[j] -= delta;
        } else {
          min_slack[j] -= delta;
        }
      }
      j0 = j1;
    } while (row_of_col[j0] != 0);
    do {
      const int j1 = way[j0];
      row_of_col[j0] = row_of_col[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> col_of_row(static_cast<size_t>(n));
  for (int j = 1; j <= n; ++j) col_of_row[row_of_col[j] - 1] = j - 1;
  return col_of_row;
}

void check_dense_size(int n, const char* who) {
  if (n > dense_assignment_limit)
    throw invalid_argument(std::string(who) + ": the dense assignment solver is limited to n <= " +
                           std::to_string(dense_assignment_limit) + " (dense_assignment_limit), got n = " +
                           std::to_string(n) + "; use non-negative weights (sparse solver) or the greedy solver");
}

// Integer arithmetic is exact when all weights are integral and no sum along the searches can overflow:
// duals and path lengths stay within (number of vertices) * (largest |weight|).
bool integral_weights(const std::vector<double>& weights, int vertices) {
  double largest = 0;
  for (double w : weights) {
    if (w != std::floor(w)) return false;
    largest = std::max(largest, std::fabs(w));
  }
  return largest * (4.0 * vertices + 8.0) < 0x1p62;
}

}  // namespace

std::vector<int> max_weight_assignment(int n, const std::vector<weighted_edge>& edges) {
  check_size(n, "max_weight_assignment");
  const std::vector<weighted_edge> merged = merged_edges(n, edges, "max_weight_assignment");
  const bool any_negative =
      std::any_of(merged.begin(), merged.end(), [](const weighted_edge& e) { return e.weight < 0; });

  if (any_negative) {
    check_dense_size(n, "max_weight_assignment (negative weights)");
    std::vector<double> weights(static_cast<size_t>(n) * n, 0.0);
    for (const auto& e : merged) weights[static_cast<size_t>(e.left) * n + e.right] = e.weight;
    std::vector<double> listed;
    listed.reserve(merged.size());
    for (const auto& e : merged) listed.push_back(e.weight);
    if (integral_weights(listed, 2 * n)) {
      std::vector<std::int64_t> cost(weights.size());
      for (size_t k = 0; k < weights.size(); ++k) cost[k] = -static_cast<std::int64_t>(weights[k]);
      return dense_min_cost<std::int64_t>(n, cost);
    }
    for (double& w : weights) w = -w;
    return dense_min_cost<double>(n, weights);
  }

  // Zero-weight pairs are the same as unlisted ones: only positive edges matter.
  std::vector<weighted_edge> positive;
  positive.reserve(merged.size());
  std::vector<double> weights;
  for (const auto& e : merged)
    if (e.weight > 0) {
      positive.push_back(e);
      weights.push_back(e.weight);
    }
  std::vector<int> right_of = integral_weights(weights, 2 * n) ? sparse_max_weight_matching<std::int64_t>(n, positive)
                                                               : sparse_max_weight_matching<double>(n, positive);
  complete_assignment(n, right_of);
  return right_of;
}

std::vector<int> max_volume_assignment(const label_graph& g) {
  if (g.nranks < 0)
    throw invalid_argument("max_volume_assignment: nranks must be >= 0, got " + std::to_string(g.nranks));
  if (g.first_label != 0 || g.label_count() != g.nranks)
    throw invalid_argument("max_volume_assignment: the graph holds labels [" + std::to_string(g.first_label) + ", " +
                           std::to_string(g.first_label + g.label_count()) + "), expected all of [0, " +
                           std::to_string(g.nranks) + ")");
  std::int64_t largest = 0;
  for (size_t k = 0; k < g.src.size(); ++k) {
    if (g.src[k] < 0 || g.src[k] >= g.nranks || g.volume[k] <= 0)
      throw invalid_argument("max_volume_assignment: package " + std::to_string(k) + " (from " +
                             std::to_string(g.src[k]) + ", " + std::to_string(g.volume[k]) +
                             " bytes) has a sender outside [0, " + std::to_string(g.nranks) +
                             ") or a volume <= 0; expected positive volumes");
    largest = std::max(largest, g.volume[k]);
  }
  // The same choice of arithmetic as integral_weights() on the gains.
  const bool integral = static_cast<double>(largest) * (4.0 * (2.0 * g.nranks) + 8.0) < 0x1p62;
  std::vector<int> right_of;
  if (!integral)
    right_of = label_graph_matching<double, false>(g);
  else if (largest > (std::int64_t{1} << 53))
    right_of = label_graph_matching<std::int64_t, true>(g);
  else
    right_of = label_graph_matching<std::int64_t, false>(g);
  complete_assignment(g.nranks, right_of);
  return right_of;
}

std::vector<int> greedy_assignment(int n, const std::vector<weighted_edge>& edges) {
  check_size(n, "greedy_assignment");
  std::vector<weighted_edge> merged = merged_edges(n, edges, "greedy_assignment");
  // Stable sort of the (left, right)-sorted list: equal weights keep the (left, right) order.
  std::stable_sort(merged.begin(), merged.end(),
                   [](const weighted_edge& a, const weighted_edge& b) { return a.weight > b.weight; });
  std::vector<int> right_of(static_cast<size_t>(n), -1);
  std::vector<char> right_taken(static_cast<size_t>(n), 0);
  for (const auto& e : merged) {
    if (e.weight <= 0) break;
    if (right_of[e.left] >= 0 || right_taken[e.right]) continue;
    right_of[e.left] = e.right;
    right_taken[e.right] = 1;
  }
  complete_assignment(n, right_of);
  return right_of;
}

std::vector<int> min_cost_assignment_dense(int n, const std::vector<double>& cost) {
  check_size(n, "min_cost_assignment_dense");
  check_dense_size(n, "min_cost_assignment_dense");
  if (cost.size() != static_cast<size_t>(n) * static_cast<size_t>(n))
    throw invalid_argument("min_cost_assignment_dense: cost matrix has " + std::to_string(cost.size()) +
                           " entries, expected n * n = " + std::to_string(static_cast<std::int64_t>(n) * n));
  for (double c : cost)
    if (!std::isfinite(c)) throw invalid_argument("min_cost_assignment_dense: costs must be finite");
  if (integral_weights(cost, 2 * n)) {
    std::vector<std::int64_t> integral(cost.begin(), cost.end());
    return dense_min_cost<std::int64_t>(n, integral);
  }
  return dense_min_cost<double>(n, cost);
}

double assignment_weight(const std::vector<weighted_edge>& edges, const std::vector<int>& right_of) {
  double total = 0;
  for (const auto& e : edges)
    if (e.left >= 0 && static_cast<size_t>(e.left) < right_of.size() && right_of[e.left] == e.right) total += e.weight;
  return total;
}

}  // namespace redist::relabel
