// SPDX-License-Identifier: BSD-3-Clause
// Communication graph of A <- op(B) from the global layout descriptions.
//
// Owners are in product form owner(i, j) = grid_rank(row_proc[i], col_proc[j]), so the volume between a
// source position (prB, pcB) and a target position (prA, pcA) factors into
//   (rows where B's row position is prB and A's is prA) x (columns likewise).
// Overlaying the two sorted row split lists (a merge, O(block rows of A + B)) gives these row counts
// per (prB, prA) pair; the same for columns. Every (row pair, column pair) combination is one package.
// The work is O(block rows + block cols + row pairs x column pairs), independent of the element count.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "redist/error.hpp"
#include "redist/relabel/graph.hpp"

namespace redist::relabel {

namespace {

// Elements of one dimension where the source is at position src_pos and the target at dst_pos.
struct position_overlap {
  int src_pos = 0;
  int dst_pos = 0;
  std::int64_t length = 0;
};

// Merges the split lists of one dimension of the source and the target (same extent) and sums the
// overlap lengths per (source position, target position).
std::vector<position_overlap> overlay(const std::vector<std::int64_t>& src_splits, const std::vector<int>& src_proc,
                                      int src_procs, const std::vector<std::int64_t>& dst_splits,
                                      const std::vector<int>& dst_proc, int dst_procs) {
  std::vector<position_overlap> pieces;
  const size_t src_blocks = src_proc.size(), dst_blocks = dst_proc.size();
  size_t i = 0, j = 0;
  std::int64_t cursor = 0;
  while (i < src_blocks && j < dst_blocks) {
    const std::int64_t end = std::min(src_splits[i + 1], dst_splits[j + 1]);
    if (end > cursor) {
      // Consecutive pieces often share their pair (small blocks against large ones): merge on the fly.
      if (!pieces.empty() && pieces.back().src_pos == src_proc[i] && pieces.back().dst_pos == dst_proc[j])
        pieces.back().length += end - cursor;
      else
        pieces.push_back({src_proc[i], dst_proc[j], end - cursor});
      cursor = end;
    }
    if (src_splits[i + 1] <= cursor) ++i;
    if (dst_splits[j + 1] <= cursor) ++j;
  }

  // Aggregate equal pairs: a dense table when it is small compared to the pieces, a sort otherwise
  // (custom layouts may have one position per block).
  const std::int64_t table_size = static_cast<std::int64_t>(src_procs) * dst_procs;
  std::vector<position_overlap> out;
  if (table_size <= 4 * static_cast<std::int64_t>(pieces.size()) + 4096) {
    std::vector<std::int64_t> table(static_cast<size_t>(table_size), 0);
    for (const auto& p : pieces) table[static_cast<size_t>(p.src_pos) * dst_procs + p.dst_pos] += p.length;
    for (int s = 0; s < src_procs; ++s)
      for (int d = 0; d < dst_procs; ++d) {
        const std::int64_t len = table[static_cast<size_t>(s) * dst_procs + d];
        if (len > 0) out.push_back({s, d, len});
      }
    return out;
  }
  std::sort(pieces.begin(), pieces.end(), [](const position_overlap& a, const position_overlap& b) {
    return a.src_pos != b.src_pos ? a.src_pos < b.src_pos : a.dst_pos < b.dst_pos;
  });
  for (const auto& p : pieces) {
    if (!out.empty() && out.back().src_pos == p.src_pos && out.back().dst_pos == p.dst_pos)
      out.back().length += p.length;
    else
      out.push_back(p);
  }
  return out;
}

enum class edge_order { by_source, by_label };

// Sorts by (src, dst) (or (dst, src) by_label) and adds up duplicates in place.
void sort_and_merge(std::vector<edge>& edges, edge_order order = edge_order::by_source) {
  if (order == edge_order::by_source)
    std::sort(edges.begin(), edges.end(),
              [](const edge& a, const edge& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
  else
    std::sort(edges.begin(), edges.end(),
              [](const edge& a, const edge& b) { return a.dst != b.dst ? a.dst < b.dst : a.src < b.src; });
  size_t kept = 0;
  for (size_t k = 0; k < edges.size(); ++k) {
    if (edges[k].volume == 0) continue;
    if (kept > 0 && edges[kept - 1].src == edges[k].src && edges[kept - 1].dst == edges[k].dst)
      edges[kept - 1].volume += edges[k].volume;
    else
      edges[kept++] = edges[k];
  }
  edges.resize(kept);
}

// Checks what the graph computation relies on: monotone splits, positions inside the position grid and
// ranks inside [0, nranks).
void check_layout(const grid_layout& l, const char* which, int nranks) {
  auto fail = [&](const std::string& what) { throw invalid_layout(std::string(which) + ": " + what); };
  // An empty dimension (no blocks) may have an empty position grid; otherwise there must be positions.
  if ((l.proc_rows() < 1 && l.block_rows() > 0) || (l.proc_cols() < 1 && l.block_cols() > 0))
    fail("the position grid is " + std::to_string(l.proc_rows()) + "x" + std::to_string(l.proc_cols()) +
         ", expected at least 1x1");
  if (l.grid_ranks().size() != static_cast<size_t>(l.proc_rows()) * static_cast<size_t>(l.proc_cols()))
    fail("grid_ranks has " + std::to_string(l.grid_ranks().size()) + " entries, expected proc_rows * proc_cols");
  auto check_dim = [&](const std::vector<std::int64_t>& splits, const std::vector<int>& proc, int procs,
                       const char* dim) {
    if (splits.empty() || splits.front() != 0 || splits.size() != proc.size() + 1)
      fail(std::string(dim) + " splits must start at 0 and have one entry more than the " + dim + " owners");
    for (size_t k = 0; k < proc.size(); ++k) {
      if (splits[k + 1] < splits[k]) fail(std::string(dim) + " splits must not decrease");
      if (proc[k] < 0 || proc[k] >= procs)
        fail(std::string(dim) + " block " + std::to_string(k) + " is at position " + std::to_string(proc[k]) +
             ", outside [0, " + std::to_string(procs) + ")");
    }
  };
  check_dim(l.row_splits(), l.row_proc(), l.proc_rows(), "row");
  check_dim(l.col_splits(), l.col_proc(), l.proc_cols(), "column");
  for (int r : l.grid_ranks())
    if (r < 0 || r >= nranks)
      fail("owner rank " + std::to_string(r) + " is outside [0, " + std::to_string(nranks) + ")");
}

// The packages of source -> target, both in the target's axes: per axis the overlay of the two position lists, and
// one package per combination of the axes' (source position, target position) pairs.
void add_edges(const nd_layout& target, const nd_layout& source, std::int64_t element_size, std::vector<edge>& edges,
               size_t& compact_at) {
  const size_t d = static_cast<size_t>(target.ndim());
  std::vector<std::vector<position_overlap>> axes(d);
  for (size_t k = 0; k < d; ++k) {
    const int ak = static_cast<int>(k);
    axes[k] = overlay(source.splits(ak), source.procs(ak), source.grid_shape()[k], target.splits(ak), target.procs(ak),
                      target.grid_shape()[k]);
    if (axes[k].empty()) return;  // an axis of extent 0: nothing moves
  }
  std::vector<size_t> pick(d, 0);
  std::vector<int> src(d), dst(d);
  while (true) {
    std::int64_t volume = element_size;
    for (size_t k = 0; k < d; ++k) {
      const position_overlap& o = axes[k][pick[k]];
      volume *= o.length;
      src[k] = o.src_pos;
      dst[k] = o.dst_pos;
    }
    edges.push_back({source.grid_rank(src.data()), target.grid_rank(dst.data()), volume});
    // Layouts where a rank holds many positions produce many duplicates: keep the buffer bounded.
    if (edges.size() >= compact_at) {
      sort_and_merge(edges);
      compact_at = std::max(compact_at, 2 * edges.size());
    }
    size_t k = d;
    while (k-- > 0) {
      if (++pick[k] < axes[k].size()) break;
      pick[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// The packages of source -> target whose target rank is in [first_label, end_label), holding only those: the
// target grid positions of these labels, and per axis the overlaps at each target position, so the work is the
// overlays plus the packages found.
void add_label_edges(const nd_layout& target, const nd_layout& source, std::int64_t element_size, int first_label,
                     int end_label, std::vector<edge>& edges, size_t& compact_at) {
  const size_t d = static_cast<size_t>(target.ndim());
  // Per axis, the overlaps grouped by target position (compressed rows over the positions).
  std::vector<std::vector<position_overlap>> axes(d);
  std::vector<std::vector<size_t>> at_position(d);
  for (size_t k = 0; k < d; ++k) {
    const int ak = static_cast<int>(k);
    const std::vector<position_overlap> pieces = overlay(source.splits(ak), source.procs(ak), source.grid_shape()[k],
                                                         target.splits(ak), target.procs(ak), target.grid_shape()[k]);
    if (pieces.empty()) return;  // an axis of extent 0: nothing moves
    std::vector<size_t>& start = at_position[k];
    start.assign(static_cast<size_t>(target.grid_shape()[k]) + 1, 0);
    for (const auto& p : pieces) ++start[static_cast<size_t>(p.dst_pos) + 1];
    for (size_t q = 0; q + 1 < start.size(); ++q) start[q + 1] += start[q];
    axes[k].resize(pieces.size());
    std::vector<size_t> next(start.begin(), start.end() - 1);
    for (const auto& p : pieces) axes[k][next[static_cast<size_t>(p.dst_pos)]++] = p;
  }
  const std::vector<int>& shape = target.grid_shape();
  const std::vector<int>& owners = target.grid_ranks();
  std::vector<int> dst(d), src(d);
  std::vector<size_t> pick(d);
  for (size_t index = 0; index < owners.size(); ++index) {
    const int label = owners[index];
    if (label < first_label || label >= end_label) continue;
    // The position of this grid entry (C order, the last axis fastest).
    size_t rest = index;
    bool has_data = true;
    for (size_t k = d; k-- > 0;) {
      dst[k] = static_cast<int>(rest % static_cast<size_t>(shape[k]));
      rest /= static_cast<size_t>(shape[k]);
      pick[k] = at_position[k][static_cast<size_t>(dst[k])];
      has_data = has_data && pick[k] < at_position[k][static_cast<size_t>(dst[k]) + 1];
    }
    if (!has_data) continue;
    while (true) {
      std::int64_t volume = element_size;
      for (size_t k = 0; k < d; ++k) {
        const position_overlap& o = axes[k][pick[k]];
        volume *= o.length;
        src[k] = o.src_pos;
      }
      edges.push_back({source.grid_rank(src.data()), label, volume});
      if (edges.size() >= compact_at) {
        sort_and_merge(edges, edge_order::by_label);
        compact_at = std::max(compact_at, 2 * edges.size());
      }
      size_t k = d;
      while (k-- > 0) {
        if (++pick[k] < at_position[k][static_cast<size_t>(dst[k]) + 1]) break;
        pick[k] = at_position[k][static_cast<size_t>(dst[k])];
      }
      if (k == static_cast<size_t>(-1)) break;
    }
  }
}

// Which packages a pair adds: all of them (the whole graph) or those of a range of target labels.
struct label_range {
  bool all = true;
  int first = 0, end = 0;
};

void add_pair(const layout_pair& pair, int nranks, std::vector<edge>& edges, size_t& compact_at,
              label_range labels = {}) {
  if (pair.a == nullptr || pair.b == nullptr)
    throw invalid_argument("communication_graph: a layout pair has a null layout; expected both A and B");
  if (pair.element_size == 0) throw invalid_argument("communication_graph: element_size must be > 0 bytes");
  const grid_layout& target = *pair.a;
  // op(B) for any op other than identity is B transposed (conjugation does not move data).
  grid_layout transposed_source;
  const grid_layout* source = pair.b;
  if (pair.operation != op::identity) {
    transposed_source = pair.b->transposed();
    source = &transposed_source;
  }
  check_layout(target, "target layout A", nranks);
  check_layout(*source, pair.operation == op::identity ? "source layout B" : "source layout B (transposed)", nranks);
  if (target.rows() != source->rows() || target.cols() != source->cols())
    throw dimension_mismatch("communication_graph: A is " + std::to_string(target.rows()) + "x" +
                             std::to_string(target.cols()) + " but op(B) is " + std::to_string(source->rows()) + "x" +
                             std::to_string(source->cols()) + "; expected equal shapes");
  // Every package is at most the whole matrix: checking its byte count once covers all products below.
  std::int64_t total_bytes = 0;
  if (__builtin_mul_overflow(target.rows(), target.cols(), &total_bytes) ||
      __builtin_mul_overflow(total_bytes, static_cast<std::int64_t>(pair.element_size), &total_bytes))
    throw overflow_error("communication_graph: the matrix size in bytes does not fit in 64 bits");

  if (labels.all)
    add_edges(to_nd_layout(target), to_nd_layout(*source), static_cast<std::int64_t>(pair.element_size), edges,
              compact_at);
  else
    add_label_edges(to_nd_layout(target), to_nd_layout(*source), static_cast<std::int64_t>(pair.element_size),
                    labels.first, labels.end, edges, compact_at);
}

void add_pair(const nd_layout_pair& pair, int nranks, std::vector<edge>& edges, size_t& compact_at,
              label_range labels = {}) {
  if (pair.a == nullptr || pair.b == nullptr)
    throw invalid_argument("communication_graph: a layout pair has a null layout; expected both A and B");
  if (pair.element_size == 0) throw invalid_argument("communication_graph: element_size must be > 0 bytes");
  const nd_layout& target = *pair.a;
  target.validate_global(nranks);
  pair.b->validate_global(nranks);
  const int d = target.ndim();
  if (pair.b->ndim() != d)
    throw dimension_mismatch("communication_graph: A has " + std::to_string(d) + " axes but B has " +
                             std::to_string(pair.b->ndim()) + "; expected the same number");
  // permuted() checks that axes is a permutation.
  const nd_layout source = pair.axes.empty() ? *pair.b : pair.b->permuted(pair.axes);
  if (target.shape() != source.shape())
    throw dimension_mismatch("communication_graph: A is " + target.describe() + " but permute(B, axes) is " +
                             source.describe() + "; expected equal shapes");
  std::int64_t total_bytes = static_cast<std::int64_t>(pair.element_size);
  for (int k = 0; k < d; ++k)
    if (__builtin_mul_overflow(total_bytes, target.extent(k), &total_bytes))
      throw overflow_error("communication_graph: the array size in bytes does not fit in 64 bits");
  if (labels.all)
    add_edges(target, source, static_cast<std::int64_t>(pair.element_size), edges, compact_at);
  else
    add_label_edges(target, source, static_cast<std::int64_t>(pair.element_size), labels.first, labels.end, edges,
                    compact_at);
}

}  // namespace

std::int64_t comm_graph::total_volume() const {
  std::int64_t total = 0;
  for (const auto& e : edges) total += e.volume;
  return total;
}

std::int64_t comm_graph::remote_volume() const {
  std::int64_t total = 0;
  for (const auto& e : edges)
    if (e.src != e.dst) total += e.volume;
  return total;
}

std::int64_t comm_graph::remote_messages() const {
  std::int64_t count = 0;
  for (const auto& e : edges)
    if (e.src != e.dst) ++count;
  return count;
}

std::int64_t comm_graph::max_rank_volume() const {
  int ranks = nranks;
  for (const auto& e : edges) ranks = std::max({ranks, e.src + 1, e.dst + 1});
  std::vector<std::int64_t> sent(static_cast<size_t>(ranks), 0), received(static_cast<size_t>(ranks), 0);
  for (const auto& e : edges) {
    if (e.src == e.dst) continue;
    sent[e.src] += e.volume;
    received[e.dst] += e.volume;
  }
  std::int64_t worst = 0;
  for (int r = 0; r < ranks; ++r) worst = std::max({worst, sent[r], received[r]});
  return worst;
}

namespace {

template <class Pair>
comm_graph graph_of(const std::vector<Pair>& pairs, int nranks) {
  if (nranks < 1) throw invalid_argument("communication_graph: nranks must be >= 1, got " + std::to_string(nranks));
  comm_graph g;
  g.nranks = nranks;
  size_t compact_at = size_t{1} << 21;
  for (const auto& pair : pairs) add_pair(pair, nranks, g.edges, compact_at);
  sort_and_merge(g.edges);
  return g;
}

// Edges sorted by (dst, src), merged, all with dst in [first_label, end_label), as compressed rows.
label_graph compress_by_label(const std::vector<edge>& edges, int nranks, int first_label, int end_label) {
  label_graph out;
  out.nranks = nranks;
  out.first_label = first_label;
  out.label_start.assign(static_cast<size_t>(end_label - first_label) + 1, 0);
  out.src.reserve(edges.size());
  out.volume.reserve(edges.size());
  for (const auto& e : edges) {
    ++out.label_start[static_cast<size_t>(e.dst - first_label) + 1];
    out.src.push_back(e.src);
    out.volume.push_back(e.volume);
  }
  for (size_t x = 0; x + 1 < out.label_start.size(); ++x) out.label_start[x + 1] += out.label_start[x];
  return out;
}

template <class Pair>
label_graph incoming_of(const std::vector<Pair>& pairs, int nranks, int first_label, int end_label) {
  if (nranks < 1) throw invalid_argument("incoming_packages: nranks must be >= 1, got " + std::to_string(nranks));
  if (first_label < 0 || first_label > end_label || end_label > nranks)
    throw invalid_argument("incoming_packages: the labels [" + std::to_string(first_label) + ", " +
                           std::to_string(end_label) + ") are not a range inside [0, " + std::to_string(nranks) + ")");
  std::vector<edge> edges;
  size_t compact_at = size_t{1} << 21;
  for (const auto& pair : pairs) add_pair(pair, nranks, edges, compact_at, {false, first_label, end_label});
  sort_and_merge(edges, edge_order::by_label);
  return compress_by_label(edges, nranks, first_label, end_label);
}

}  // namespace

comm_graph communication_graph(const std::vector<layout_pair>& pairs, int nranks) { return graph_of(pairs, nranks); }

comm_graph communication_graph(const std::vector<nd_layout_pair>& pairs, int nranks) { return graph_of(pairs, nranks); }

label_graph incoming_packages(const std::vector<layout_pair>& pairs, int nranks, int first_label, int end_label) {
  return incoming_of(pairs, nranks, first_label, end_label);
}

label_graph incoming_packages(const std::vector<nd_layout_pair>& pairs, int nranks, int first_label, int end_label) {
  return incoming_of(pairs, nranks, first_label, end_label);
}

label_graph to_label_graph(const comm_graph& g) {
  if (g.nranks < 0) throw invalid_argument("to_label_graph: nranks must be >= 0, got " + std::to_string(g.nranks));
  const auto n = static_cast<size_t>(g.nranks);
  label_graph out;
  out.nranks = g.nranks;
  out.label_start.assign(n + 1, 0);
  for (const auto& e : g.edges) {
    if (e.src < 0 || e.src >= g.nranks || e.dst < 0 || e.dst >= g.nranks)
      throw invalid_argument("to_label_graph: edge (" + std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                             ") is outside [0, " + std::to_string(g.nranks) + ")");
    if (e.volume != 0) ++out.label_start[static_cast<size_t>(e.dst) + 1];
  }
  for (size_t x = 0; x < n; ++x) out.label_start[x + 1] += out.label_start[x];
  // Counting sort by label; stable, so a graph sorted by (src, dst) gives ascending senders per label.
  out.src.resize(static_cast<size_t>(out.label_start.back()));
  out.volume.resize(out.src.size());
  std::vector<std::int64_t> next(out.label_start.begin(), out.label_start.end() - 1);
  bool sorted = true;
  for (const auto& e : g.edges) {
    if (e.volume == 0) continue;
    const auto at = static_cast<size_t>(next[static_cast<size_t>(e.dst)]++);
    sorted =
        sorted && (at == static_cast<size_t>(out.label_start[static_cast<size_t>(e.dst)]) || out.src[at - 1] < e.src);
    out.src[at] = e.src;
    out.volume[at] = e.volume;
  }
  if (sorted) return out;
  // An unsorted edge list or repeated (src, dst) pairs: sort each label's senders and add repeats up.
  std::vector<std::pair<int, std::int64_t>> senders;
  std::int64_t kept = 0;
  for (size_t x = 0; x < n; ++x) {
    senders.clear();
    for (std::int64_t k = out.label_start[x]; k < out.label_start[x + 1]; ++k)
      senders.emplace_back(out.src[static_cast<size_t>(k)], out.volume[static_cast<size_t>(k)]);
    std::sort(senders.begin(), senders.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out.label_start[x] = kept;
    for (size_t k = 0; k < senders.size(); ++k) {
      if (k > 0 && senders[k].first == senders[k - 1].first) {
        out.volume[static_cast<size_t>(kept - 1)] += senders[k].second;
        continue;
      }
      out.src[static_cast<size_t>(kept)] = senders[k].first;
      out.volume[static_cast<size_t>(kept)] = senders[k].second;
      ++kept;
    }
  }
  out.label_start[n] = kept;
  out.src.resize(static_cast<size_t>(kept));
  out.volume.resize(static_cast<size_t>(kept));
  return out;
}

comm_graph to_comm_graph(const label_graph& g) {
  if (g.first_label != 0 || g.label_count() != g.nranks)
    throw invalid_argument("to_comm_graph: the graph holds labels [" + std::to_string(g.first_label) + ", " +
                           std::to_string(g.first_label + g.label_count()) + "), expected all of [0, " +
                           std::to_string(g.nranks) + ")");
  comm_graph out;
  out.nranks = g.nranks;
  out.edges.reserve(static_cast<size_t>(g.package_count()));
  for (int x = 0; x < g.nranks; ++x)
    for (std::int64_t k = g.label_start[static_cast<size_t>(x)]; k < g.label_start[static_cast<size_t>(x) + 1]; ++k)
      out.edges.push_back({g.src[static_cast<size_t>(k)], x, g.volume[static_cast<size_t>(k)]});
  sort_and_merge(out.edges);
  return out;
}

comm_graph relabel_graph(const comm_graph& g, const std::vector<int>& new_rank_of) {
  if (new_rank_of.size() != static_cast<size_t>(g.nranks))
    throw invalid_argument("relabel_graph: the relabeling has " + std::to_string(new_rank_of.size()) +
                           " entries, expected one per rank (" + std::to_string(g.nranks) + ")");
  std::vector<char> seen(new_rank_of.size(), 0);
  for (size_t x = 0; x < new_rank_of.size(); ++x) {
    const int r = new_rank_of[x];
    if (r < 0 || r >= g.nranks || seen[r])
      throw invalid_argument("relabel_graph: the relabeling is not a permutation of [0, " + std::to_string(g.nranks) +
                             "): label " + std::to_string(x) + " maps to " + std::to_string(r));
    seen[r] = 1;
  }
  comm_graph out;
  out.nranks = g.nranks;
  out.edges = g.edges;
  for (auto& e : out.edges) {
    if (e.dst < 0 || e.dst >= g.nranks)
      throw invalid_argument("relabel_graph: edge target " + std::to_string(e.dst) + " is outside [0, " +
                             std::to_string(g.nranks) + ")");
    e.dst = new_rank_of[e.dst];
  }
  sort_and_merge(out.edges);
  return out;
}

}  // namespace redist::relabel
