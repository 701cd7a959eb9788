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

// Sorts by (src, dst) and adds up duplicates in place.
void sort_and_merge(std::vector<edge>& edges) {
  std::sort(edges.begin(), edges.end(),
            [](const edge& a, const edge& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
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
    axes[k] = overlay(source.splits(ak), source.procs(ak), source.grid_shape()[k], target.splits(ak),
                      target.procs(ak), target.grid_shape()[k]);
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

void add_pair(const layout_pair& pair, int nranks, std::vector<edge>& edges, size_t& compact_at) {
  if (pair.a == nullptr || pair.b == nullptr)
    throw invalid_argument("communication_graph: a layout pair has a null layout; expected both A and B");
  if (pair.element_size == 0)
    throw invalid_argument("communication_graph: element_size must be > 0 bytes");
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
                             std::to_string(target.cols()) + " but op(B) is " + std::to_string(source->rows()) +
                             "x" + std::to_string(source->cols()) + "; expected equal shapes");
  // Every package is at most the whole matrix: checking its byte count once covers all products below.
  std::int64_t total_bytes = 0;
  if (__builtin_mul_overflow(target.rows(), target.cols(), &total_bytes) ||
      __builtin_mul_overflow(total_bytes, static_cast<std::int64_t>(pair.element_size), &total_bytes))
    throw overflow_error("communication_graph: the matrix size in bytes does not fit in 64 bits");

  add_edges(to_nd_layout(target), to_nd_layout(*source), static_cast<std::int64_t>(pair.element_size), edges,
            compact_at);
}

void add_pair(const nd_layout_pair& pair, int nranks, std::vector<edge>& edges, size_t& compact_at) {
  if (pair.a == nullptr || pair.b == nullptr)
    throw invalid_argument("communication_graph: a layout pair has a null layout; expected both A and B");
  if (pair.element_size == 0)
    throw invalid_argument("communication_graph: element_size must be > 0 bytes");
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
  add_edges(target, source, static_cast<std::int64_t>(pair.element_size), edges, compact_at);
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

}  // namespace

comm_graph communication_graph(const std::vector<layout_pair>& pairs, int nranks) { return graph_of(pairs, nranks); }

comm_graph communication_graph(const std::vector<nd_layout_pair>& pairs, int nranks) {
  return graph_of(pairs, nranks);
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
