// SPDX-License-Identifier: BSD-3-Clause
// Relabeling at scale: the solving rank's time and peak memory for P labels with k packages each, the
// whole-graph path (an edge list of 16 bytes per package, a gains list, max_weight_assignment and the relabeled
// graph's statistics, as every rank ran it before) against the graph by label solved in place
// (find_relabeling on a label_graph, what relabel_targets' solving rank runs).
//   bench_relabel_scale [--max-p 1000000] [--graphs stencil,random]   (P = 10^4, 10^5, 10^6 up to max_p; k = 1
//                                                                      and 16 packages per label; graphs: senders_of)
// Each (case, solver) runs in a child process, so that its peak RSS (getrusage) is its own: input generation
// and the solve. One JSON object per run, then a SUMMARY line for the largest P with k = 16.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"

namespace {

using namespace redist::relabel;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: a reproducible hash of the case's indices
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

enum class family { random, stencil };
const char* name_of(family f) { return f == family::random ? "random" : "stencil"; }

// The senders of label x, ascending and distinct, with their volumes.
//   random:  the first sender is a fixed permutation of the labels (so the optimum moves most labels), the others
//            uniform; volumes from 1 byte to 1 MiB.
//   stencil: labels on a rows x cols torus (rows the largest divisor of p up to sqrt(p)) receive from the 1 x 1
//            (k = 1) or 4 x 4 (k = 16) block of ranks at offset (1, 2): the packages of two block layouts whose
//            blocks are shifted against each other, each volume the product of a row overlap and a column
//            overlap (1 to 64 elements each, 8 bytes).
void senders_of(family f, int x, int p, int k, std::vector<std::pair<int, std::int64_t>>& out) {
  out.clear();
  if (f == family::stencil) {
    int rows = 1;
    for (int d = 1; static_cast<std::int64_t>(d) * d <= p; ++d)
      if (p % d == 0) rows = d;
    const int cols = p / rows, i = x / cols, j = x % cols, span = k >= 16 ? 4 : 1;
    for (int di = 0; di < span; ++di)
      for (int dj = 0; dj < span; ++dj) {
        const int src = ((i + 1 + di) % rows) * cols + (j + 2 + dj) % cols;
        const auto row_overlap = static_cast<std::int64_t>(1 + mix(static_cast<std::uint64_t>(i) * 8 + di) % 64);
        const auto col_overlap =
            static_cast<std::int64_t>(1 + mix((static_cast<std::uint64_t>(j) * 8 + dj) << 20) % 64);
        if (std::none_of(out.begin(), out.end(), [&](const auto& s) { return s.first == src; }))
          out.emplace_back(src, row_overlap * col_overlap * 8);
      }
    std::sort(out.begin(), out.end());
    return;
  }
  const std::uint64_t stride = 7919;  // prime, so x -> (stride * x + 13) mod p is a permutation unless p | stride
  out.emplace_back(static_cast<int>((stride * static_cast<std::uint64_t>(x) + 13) % static_cast<std::uint64_t>(p)), 0);
  for (std::uint64_t attempt = 0; static_cast<int>(out.size()) < std::min(k, p); ++attempt) {
    const std::uint64_t draw = mix(static_cast<std::uint64_t>(x) * 1000003u + attempt);
    const int src = static_cast<int>(draw % static_cast<std::uint64_t>(p));
    if (std::none_of(out.begin(), out.end(), [&](const auto& s) { return s.first == src; })) out.emplace_back(src, 0);
  }
  for (auto& s : out)
    s.second = 1 + static_cast<std::int64_t>(
                       mix(static_cast<std::uint64_t>(x) * 131u + static_cast<std::uint64_t>(s.first)) % (1u << 20));
  std::sort(out.begin(), out.end());
}

struct run_result {
  double seconds = 0;
  std::int64_t peak_rss = 0;
  std::int64_t input_bytes = 0;
  std::int64_t remote_after = 0;
  std::int64_t remote_before = 0;
  std::int64_t messages_after = 0;
  std::int64_t max_rank_volume_after = 0;
  std::uint64_t permutation_hash = 0;
};

std::uint64_t hash_of(const std::vector<int>& v) {
  std::uint64_t h = 1469598103934665603ull;
  for (int x : v) h = (h ^ static_cast<std::uint32_t>(x)) * 1099511628211ull;
  return h;
}

run_result whole_graph_run(family f, int p, int k) {
  comm_graph g;
  g.nranks = p;
  g.edges.reserve(static_cast<size_t>(p) * static_cast<size_t>(std::min(k, p)));
  std::vector<std::pair<int, std::int64_t>> senders;
  for (int x = 0; x < p; ++x) {
    senders_of(f, x, p, k, senders);
    for (const auto& s : senders) g.edges.push_back({s.first, x, s.second});
  }
  std::sort(g.edges.begin(), g.edges.end(),
            [](const edge& a, const edge& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
  run_result out;
  out.input_bytes = static_cast<std::int64_t>(g.edges.capacity() * sizeof(edge));
  const auto started = std::chrono::steady_clock::now();
  // The locally-free gains as a list by (label, rank), then the solve and the statistics of the relabeled graph.
  std::vector<weighted_edge> gains;
  gains.reserve(g.edges.size());
  for (const auto& e : g.edges) gains.push_back({e.dst, e.src, static_cast<double>(e.volume)});
  std::sort(gains.begin(), gains.end(), [](const weighted_edge& a, const weighted_edge& b) {
    return a.left != b.left ? a.left < b.left : a.right < b.right;
  });
  const std::vector<int> permutation = max_weight_assignment(p, gains);
  // The figures find_relabeling reports, the identity kept when the answer does not lower the remote volume.
  const comm_graph after = relabel_graph(g, permutation);
  out.remote_before = g.remote_volume();
  const bool pays = after.remote_volume() < out.remote_before;
  const comm_graph& kept = pays ? after : g;
  out.remote_after = kept.remote_volume();
  out.messages_after = kept.remote_messages();
  out.max_rank_volume_after = kept.max_rank_volume();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out.permutation_hash = pays ? hash_of(permutation) : 0;
  return out;
}

run_result label_graph_run(family f, int p, int k) {
  label_graph g;
  g.nranks = p;
  g.label_start.assign(static_cast<size_t>(p) + 1, 0);
  const auto packages = static_cast<size_t>(p) * static_cast<size_t>(std::min(k, p));
  g.src.reserve(packages);
  g.volume.reserve(packages);
  std::vector<std::pair<int, std::int64_t>> senders;
  for (int x = 0; x < p; ++x) {
    senders_of(f, x, p, k, senders);
    for (const auto& s : senders) {
      g.src.push_back(s.first);
      g.volume.push_back(s.second);
    }
    g.label_start[static_cast<size_t>(x) + 1] = static_cast<std::int64_t>(g.src.size());
  }
  run_result out;
  out.input_bytes =
      static_cast<std::int64_t>(g.label_start.size() * 8 + g.src.capacity() * 4 + g.volume.capacity() * 8);
  const auto started = std::chrono::steady_clock::now();
  const relabeling r = find_relabeling(g);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out.remote_before = r.remote_volume_before;
  out.remote_after = r.remote_volume_after;
  out.messages_after = r.messages_after;
  out.max_rank_volume_after = r.max_rank_volume_after;
  out.permutation_hash = r.remote_volume_after < r.remote_volume_before ? hash_of(r.new_rank_of) : 0;
  return out;
}

// Runs one solver in a child process and reads back its result (peak RSS is the child's alone).
bool run_in_child(bool whole_graph, family f, int p, int k, run_result& result) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    close(fds[0]);
    run_result r = whole_graph ? whole_graph_run(f, p, k) : label_graph_run(f, p, k);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    r.peak_rss = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
    const bool written = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  const bool read_all = read(fds[0], &result, sizeof result) == static_cast<ssize_t>(sizeof result);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return read_all && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: bench_relabel_scale [--max-p 1000000] [--graphs stencil,random]\n";
  long max_p = 1000000;
  std::vector<family> families;
  for (int a = 1; a < argc; ++a) {
    const std::string key = argv[a];
    if (key == "--help" || key == "-h") {
      std::printf("%s", usage);
      return 0;
    }
    if (a + 1 >= argc || (key != "--max-p" && key != "--graphs")) {
      std::fprintf(stderr, "bench_relabel_scale: unknown or incomplete option %s\n%s", key.c_str(), usage);
      return 2;
    }
    const std::string value = argv[++a];
    if (key == "--max-p") {
      max_p = std::atol(value.c_str());
      continue;
    }
    for (std::size_t at = 0; at <= value.size();) {
      const std::size_t comma = std::min(value.find(',', at), value.size());
      const std::string name = value.substr(at, comma - at);
      if (name != "stencil" && name != "random") {
        std::fprintf(stderr, "bench_relabel_scale: graph '%s': expected stencil or random\n", name.c_str());
        return 2;
      }
      families.push_back(name == "random" ? family::random : family::stencil);
      at = comma + 1;
    }
  }
  if (families.empty()) families = {family::stencil, family::random};
  bool all_verified = true;
  std::vector<std::string> summary;
  for (family f : families)
    for (int p : {10000, 100000, 1000000}) {
      if (p > max_p) break;
      for (int k : {1, 16}) {
        run_result old_run, new_run;
        if (!run_in_child(true, f, p, k, old_run) || !run_in_child(false, f, p, k, new_run)) {
          std::fprintf(stderr, "relabel_scale: a child process failed at p = %d, k = %d\n", p, k);
          return 1;
        }
        // The new path must reach the old optimum with the same figures; identical_permutation says whether it is
        // also the same matching.
        const bool verified = new_run.remote_after == old_run.remote_after &&
                              new_run.remote_before == old_run.remote_before &&
                              new_run.messages_after == old_run.messages_after &&
                              new_run.max_rank_volume_after == old_run.max_rank_volume_after;
        const bool identical = new_run.permutation_hash == old_run.permutation_hash;
        all_verified = all_verified && verified;
        for (const auto* run : {&old_run, &new_run}) {
          const bool is_old = run == &old_run;
          std::printf(
              "{\"graph\": \"%s\", \"p\": %d, \"edges_per_label\": %d, \"solver\": \"%s\", \"solve_seconds\": %.4f, "
              "\"peak_rss_bytes\": %lld, \"input_bytes\": %lld, \"remote_volume_before\": %lld, "
              "\"remote_volume_after\": %lld, \"verified\": %s, \"identical_permutation\": %s}\n",
              name_of(f), p, k, is_old ? "whole_graph" : "label_graph", run->seconds,
              static_cast<long long>(run->peak_rss), static_cast<long long>(run->input_bytes),
              static_cast<long long>(run->remote_before), static_cast<long long>(run->remote_after),
              verified ? "true" : "false", identical ? "true" : "false");
        }
        std::fflush(stdout);
        if (k == 16 && p == std::min<long>(max_p, 1000000)) {
          char line[256];
          std::snprintf(line, sizeof line, "%s p=%d k=16: whole_graph %.3f s %.0f MB, label_graph %.3f s %.0f MB",
                        name_of(f), p, old_run.seconds, old_run.peak_rss / 1e6, new_run.seconds,
                        new_run.peak_rss / 1e6);
          summary.emplace_back(line);
        }
      }
    }
  std::printf("SUMMARY");
  for (const auto& line : summary) std::printf(" %s;", line.c_str());
  std::printf(" all verified: %s\n", all_verified ? "true" : "false");
  return all_verified ? 0 : 1;
}
