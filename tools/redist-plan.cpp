// SPDX-License-Identifier: BSD-3-Clause
// redist-plan: plan-only study of a redistribution A <- op(B) between two block-cyclic layouts on P
// virtual ranks, in one process (no MPI communication): communication volume, messages and the per-rank
// maximum before and after process relabeling.
//
//   redist-plan --m 100000 --n 100000 --from bc:5000x5000:10x10:row --to bc:10000x10000:10x10:col
//               --relabel exact|greedy|none [--op N|T|C] [--elem-size 8] [--json]
//
// --from is the source layout B, --to the target layout A (m x n). With --op T or C the source is n x m.
// bc:MBxNB:PxQ:row|col is a block-cyclic layout with MB x NB blocks on a P x Q grid numbered row- or
// column-major, the first block on grid position (0, 0).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "memory_check.hpp"
#include "redist/error.hpp"
#include "redist/layout/builders.hpp"
#include "redist/names.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"

namespace {

using redist::relabel::solver;

constexpr const char* kUsage =
    "usage: redist-plan --m M --n N --from bc:MBxNB:PxQ:row|col --to bc:MBxNB:PxQ:row|col\n"
    "                   [--relabel exact|greedy|none] [--op N|T|C] [--elem-size BYTES] [--json]\n"
    "  --from    source layout B (m x n, or n x m with --op T|C)\n"
    "  --to      target layout A (m x n)\n"
    "  --relabel how target labels are assigned to ranks (default exact)\n"
    "  --op      op(B): N identity, T transpose, C conjugate transpose (default N)\n"
    "  --elem-size  bytes per element (default 8)\n"
    "  --json    print one JSON object instead of a table\n";

// A command-line mistake: reported on stderr with the usage, exit code 2.
struct usage_error {
  std::string message;
};

struct bc_spec {
  std::int64_t mb = 0, nb = 0;
  int proc_rows = 0, proc_cols = 0;
  redist::grid_order ordering = redist::grid_order::row_major;
  std::string text;
};

std::int64_t parse_positive(const std::string& text, const std::string& what, const std::string& expected) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, value);
  if (text.empty() || result.ec != std::errc() || result.ptr != end || value < 1)
    throw usage_error{what + " '" + text + "' is not valid: expected " + expected};
  return value;
}

// "AxB" -> (A, B), both positive.
std::pair<std::int64_t, std::int64_t> parse_pair(const std::string& text, const std::string& what,
                                                 const std::string& expected) {
  const auto x = text.find('x');
  if (x == std::string::npos) throw usage_error{what + " '" + text + "' is not valid: expected " + expected};
  return {parse_positive(text.substr(0, x), what, expected), parse_positive(text.substr(x + 1), what, expected)};
}

bc_spec parse_layout(const std::string& text, const std::string& option) {
  const std::string expected = "bc:MBxNB:PxQ:row|col (for example bc:64x64:2x4:row)";
  const std::string what = option + " '" + text + "'";
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    fields.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (fields.size() != 4 || fields[0] != "bc")
    throw usage_error{option + " '" + text + "' is not valid: expected " + expected};
  bc_spec spec;
  spec.text = text;
  std::tie(spec.mb, spec.nb) = parse_pair(fields[1], option + " block size", "MBxNB with positive integers");
  const auto grid = parse_pair(fields[2], option + " grid", "PxQ with positive integers");
  if (grid.first > (1 << 24) || grid.second > (1 << 24) || grid.first * grid.second > (1 << 24))
    throw usage_error{option + " grid '" + fields[2] + "' is too large: expected at most 16777216 ranks"};
  spec.proc_rows = static_cast<int>(grid.first);
  spec.proc_cols = static_cast<int>(grid.second);
  if (fields[3] == "row")
    spec.ordering = redist::grid_order::row_major;
  else if (fields[3] == "col")
    spec.ordering = redist::grid_order::col_major;
  else
    throw usage_error{option + " grid numbering '" + fields[3] + "' is not valid: expected row or col"};
  return spec;
}

redist::grid_layout build(const bc_spec& spec, std::int64_t rows, std::int64_t cols) {
  redist::block_cyclic_params p;
  p.m = rows;
  p.n = cols;
  p.mb = spec.mb;
  p.nb = spec.nb;
  p.proc_rows = spec.proc_rows;
  p.proc_cols = spec.proc_cols;
  p.ordering = spec.ordering;
  return redist::block_cyclic(p, -1);  // global description only: virtual ranks
}

struct options {
  std::int64_t m = 0, n = 0;
  bool has_m = false, has_n = false;
  bc_spec from, to;
  bool has_from = false, has_to = false;
  solver relabel = solver::exact;
  redist::op operation = redist::op::identity;
  char op_letter = 'N';
  std::int64_t elem_size = 8;
  bool json = false;
  bool help = false;
};

options parse(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    std::string value;
    bool has_value = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&](const char* expected) {
      if (has_value) return value;
      if (k + 1 >= argc) throw usage_error{arg + " needs a value: expected " + expected};
      return std::string(argv[++k]);
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg == "--m") {
      o.m = parse_positive(next("a positive row count"), "--m", "a positive row count");
      o.has_m = true;
    } else if (arg == "--n") {
      o.n = parse_positive(next("a positive column count"), "--n", "a positive column count");
      o.has_n = true;
    } else if (arg == "--from") {
      o.from = parse_layout(next("bc:MBxNB:PxQ:row|col"), "--from");
      o.has_from = true;
    } else if (arg == "--to") {
      o.to = parse_layout(next("bc:MBxNB:PxQ:row|col"), "--to");
      o.has_to = true;
    } else if (arg == "--relabel") {
      const std::string s = next(redist::spelled_choices<solver>().c_str());
      try {
        o.relabel = redist::parse_name<solver>(s);
      } catch (const redist::invalid_argument&) {
        throw usage_error{"--relabel '" + s + "' is not valid: expected " + redist::spelled_choices<solver>()};
      }
    } else if (arg == "--op") {
      const std::string s = next("N, T or C");
      if (s == "N" || s == "n")
        o.operation = redist::op::identity;
      else if (s == "T" || s == "t")
        o.operation = redist::op::transpose;
      else if (s == "C" || s == "c")
        o.operation = redist::op::conj_transpose;
      else
        throw usage_error{"--op '" + s + "' is not valid: expected N, T or C"};
      o.op_letter = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    } else if (arg == "--elem-size") {
      o.elem_size = parse_positive(next("a positive number of bytes"), "--elem-size", "a positive number of bytes");
    } else {
      throw usage_error{"unknown argument '" + arg + "'"};
    }
  }
  if (o.help) return o;
  if (!o.has_m) throw usage_error{"--m is missing: expected --m M (rows of A)"};
  if (!o.has_n) throw usage_error{"--n is missing: expected --n N (columns of A)"};
  if (!o.has_from) throw usage_error{"--from is missing: expected --from bc:MBxNB:PxQ:row|col (source layout B)"};
  if (!o.has_to) throw usage_error{"--to is missing: expected --to bc:MBxNB:PxQ:row|col (target layout A)"};
  return o;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string grid_text(const bc_spec& s) {
  return "bc " + std::to_string(s.mb) + "x" + std::to_string(s.nb) + " blocks on " + std::to_string(s.proc_rows) + "x" +
         std::to_string(s.proc_cols) + (s.ordering == redist::grid_order::row_major ? " row-major" : " col-major");
}

// ---- memory estimate ----
using redist::tools::add_saturated;
using redist::tools::byte_count;
using redist::tools::multiply_saturated;

// One dimension of a block-cyclic layout: its extent, block size and number of grid positions along it.
struct cyclic_dimension {
  std::int64_t extent = 0, block = 1;
  int positions = 1;
};

byte_count ceil_div(byte_count a, byte_count b) { return a / b + (a % b != 0); }

byte_count lcm_saturated(byte_count a, byte_count b) { return multiply_saturated(a / std::gcd(a, b), b); }

// (source position, target position) pairs of the grids: at most 2^48, no saturation needed.
byte_count position_pairs(const cyclic_dimension& source, const cyclic_dimension& target) {
  return static_cast<byte_count>(source.positions) * static_cast<byte_count>(target.positions);
}

// What the overlay of one dimension (graph.cpp) holds: its pieces (runs between consecutive block starts of either
// layout) and the distinct (source position, target position) pairs among them.
struct overlay_size {
  byte_count pieces = 0;
  byte_count pairs = 0;
};

// Pieces: the block starts of either layout, those of both counted once. Pairs: at most the pieces, the
// position grid, and the pieces of one period of the block-cyclic pattern (it repeats every
// lcm(source block * positions, target block * positions) elements).
overlay_size overlay_bound(const cyclic_dimension& source, const cyclic_dimension& target) {
  const auto extent = static_cast<byte_count>(source.extent);
  const auto source_block = static_cast<byte_count>(source.block);
  const auto target_block = static_cast<byte_count>(target.block);
  const byte_count common_block = lcm_saturated(source_block, target_block);
  const auto starts_within = [&](byte_count length) {
    return ceil_div(length, source_block) + ceil_div(length, target_block) - ceil_div(length, common_block);
  };
  overlay_size size;
  size.pieces = starts_within(extent);
  size.pairs = std::min(size.pieces, position_pairs(source, target));
  const byte_count period = lcm_saturated(multiply_saturated(source_block, static_cast<byte_count>(source.positions)),
                                          multiply_saturated(target_block, static_cast<byte_count>(target.positions)));
  if (period != redist::tools::kSaturatedBytes) size.pairs = std::min(size.pairs, starts_within(period));
  return size;
}

// Bytes of the overlay of one dimension while it runs and of its result: 16-byte pieces and pairs, doubled for
// vector growth, and the 8-byte pair table, used only while it is at most 4 * pieces + 4096 entries.
byte_count overlay_bytes(const overlay_size& size, const cyclic_dimension& source, const cyclic_dimension& target) {
  const byte_count table =
      std::min(position_pairs(source, target), add_saturated(multiply_saturated(4, size.pieces), 4096));
  return add_saturated(multiply_saturated(32, add_saturated(size.pieces, size.pairs)), multiply_saturated(8, table));
}

// An upper bound of the bytes run() allocates, from the arguments alone (no layout is built). It counts
//  - the layouts A, B and, for op T or C, B transposed: per block row and column a split, an owner position and
//    a local start (20 bytes), doubled for vector growth; 8 bytes per grid position;
//  - the overlay of rows and of columns (overlay_bytes);
//  - the graph: one 16-byte edge per (row pair, column pair), doubled for growth, plus the relabeling's copies of
//    it (gains, merged and positive lists, the assignment's arrays): 80 bytes per edge exact, 48 greedy, 16 none;
//  - per rank 48 bytes (the layouts' rank grids, the relabeled graph's check, the statistics' volumes) and the
//    solver's arrays: 112 more bytes exact, 16 greedy.
byte_count estimated_bytes(const options& o) {
  const bool transposed = o.operation != redist::op::identity;
  // op(B) is B transposed for T and C: its rows are B's columns.
  const cyclic_dimension target_rows{o.m, o.to.mb, o.to.proc_rows}, target_cols{o.n, o.to.nb, o.to.proc_cols};
  const cyclic_dimension source_rows = transposed ? cyclic_dimension{o.m, o.from.nb, o.from.proc_cols}
                                                  : cyclic_dimension{o.m, o.from.mb, o.from.proc_rows};
  const cyclic_dimension source_cols = transposed ? cyclic_dimension{o.n, o.from.mb, o.from.proc_rows}
                                                  : cyclic_dimension{o.n, o.from.nb, o.from.proc_cols};
  const auto blocks_of = [](const cyclic_dimension& d) {
    return ceil_div(static_cast<byte_count>(d.extent), static_cast<byte_count>(d.block));
  };
  const byte_count target_blocks = blocks_of(target_rows) + blocks_of(target_cols);
  const byte_count source_blocks = blocks_of(source_rows) + blocks_of(source_cols);
  const byte_count source_copies = transposed ? 2 : 1;
  byte_count bytes =
      multiply_saturated(40, add_saturated(target_blocks, multiply_saturated(source_copies, source_blocks)));
  const auto positions = [](const bc_spec& s) {
    return static_cast<byte_count>(s.proc_rows) * static_cast<byte_count>(s.proc_cols);
  };
  bytes = add_saturated(bytes, 8 * (positions(o.to) + source_copies * positions(o.from)));

  const overlay_size rows = overlay_bound(source_rows, target_rows), cols = overlay_bound(source_cols, target_cols);
  bytes = add_saturated(bytes, overlay_bytes(rows, source_rows, target_rows));
  bytes = add_saturated(bytes, overlay_bytes(cols, source_cols, target_cols));

  const byte_count relabel_bytes_per_edge = o.relabel == solver::exact ? 80 : o.relabel == solver::greedy ? 48 : 16;
  const byte_count edges = multiply_saturated(rows.pairs, cols.pairs);
  bytes = add_saturated(bytes, multiply_saturated(32 + relabel_bytes_per_edge, edges));
  const byte_count relabel_bytes_per_rank = o.relabel == solver::exact ? 112 : o.relabel == solver::greedy ? 16 : 0;
  const byte_count ranks = std::max(positions(o.to), positions(o.from));
  return add_saturated(bytes, (48 + relabel_bytes_per_rank) * ranks);
}

// What the refusal names: the arguments the estimate grows with.
std::string sizes_text(const options& o) {
  return "--m " + std::to_string(o.m) + " --n " + std::to_string(o.n) + " --from " + o.from.text + " --to " +
         o.to.text + (o.op_letter != 'N' ? std::string(" --op ") + o.op_letter : "");
}

int run(const options& o) {
  const bool transposed = o.operation != redist::op::identity;
  const redist::grid_layout a = build(o.to, o.m, o.n);
  const redist::grid_layout b = transposed ? build(o.from, o.n, o.m) : build(o.from, o.m, o.n);
  const int nranks = std::max(a.ranks_needed(), b.ranks_needed());

  const auto graph_started = std::chrono::steady_clock::now();
  const redist::relabel::comm_graph g =
      redist::relabel::communication_graph({{&a, &b, o.operation, static_cast<std::size_t>(o.elem_size)}}, nranks);
  const double graph_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - graph_started).count();
  const redist::relabel::relabeling r = redist::relabel::find_relabeling(g, {}, o.relabel);

  if (o.json) {
    std::printf(
        "{\"m\": %lld, \"n\": %lld, \"op\": \"%c\", \"elem_size\": %lld, \"from\": %s, \"to\": %s, "
        "\"nranks\": %d, \"relabel\": \"%s\", \"edges\": %zu, \"total_volume\": %lld, "
        "\"remote_volume_before\": %lld, \"remote_volume_after\": %lld, \"reduction_percent\": %.6f, "
        "\"messages_before\": %lld, \"messages_after\": %lld, \"max_rank_volume_before\": %lld, "
        "\"max_rank_volume_after\": %lld, \"graph_seconds\": %.6f, \"solve_seconds\": %.6f}\n",
        static_cast<long long>(o.m), static_cast<long long>(o.n), o.op_letter, static_cast<long long>(o.elem_size),
        json_string(o.from.text).c_str(), json_string(o.to.text).c_str(), nranks, redist::relabel::to_string(o.relabel),
        g.edges.size(), static_cast<long long>(g.total_volume()), static_cast<long long>(r.remote_volume_before),
        static_cast<long long>(r.remote_volume_after), r.reduction_percent(), static_cast<long long>(r.messages_before),
        static_cast<long long>(r.messages_after), static_cast<long long>(r.max_rank_volume_before),
        static_cast<long long>(r.max_rank_volume_after), graph_seconds, r.solve_seconds);
    return 0;
  }
  std::printf("A (%lld x %lld): %s\n", static_cast<long long>(o.m), static_cast<long long>(o.n),
              grid_text(o.to).c_str());
  std::printf("B (%lld x %lld): %s, op %c\n", static_cast<long long>(transposed ? o.n : o.m),
              static_cast<long long>(transposed ? o.m : o.n), grid_text(o.from).c_str(), o.op_letter);
  std::printf("%d ranks, %lld-byte elements, %zu communicating pairs, %lld bytes in total\n\n", nranks,
              static_cast<long long>(o.elem_size), g.edges.size(), static_cast<long long>(g.total_volume()));
  std::printf("%-28s %20s %20s\n", "", "before relabeling",
              (std::string("after (") + redist::relabel::to_string(o.relabel) + ")").c_str());
  std::printf("%-28s %20lld %20lld\n", "remote volume [bytes]", static_cast<long long>(r.remote_volume_before),
              static_cast<long long>(r.remote_volume_after));
  std::printf("%-28s %20lld %20lld\n", "remote messages", static_cast<long long>(r.messages_before),
              static_cast<long long>(r.messages_after));
  std::printf("%-28s %20lld %20lld\n", "max rank volume [bytes]", static_cast<long long>(r.max_rank_volume_before),
              static_cast<long long>(r.max_rank_volume_after));
  std::printf("\nremote volume reduction: %.3f %%\n", r.reduction_percent());
  std::printf("graph: %.4f s, relabeling: %.4f s\n", graph_seconds, r.solve_seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "redist-plan: %s\n%s", e.message.c_str(), kUsage);
    return 2;
  }
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const byte_count estimate = estimated_bytes(o);
  if (redist::tools::refuse_if_too_large("redist-plan", sizes_text(o), estimate)) return 1;
  try {
    return run(o);
  } catch (const redist::invalid_argument& e) {
    std::fprintf(stderr, "redist-plan: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    redist::tools::report_out_of_memory("redist-plan", sizes_text(o), estimate);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist-plan: %s\n", e.what());
    return 1;
  }
}
