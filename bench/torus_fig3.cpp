// SPDX-License-Identifier: BSD-3-Clause
// torus_fig3: the setting of Fig. 3 of Chakaravarthy, Jain and Sabharwal ("Optimizing Matrix Transpose on Torus
// Interconnects") in the link-load simulator: the multi-phase block-cyclic transpose on tori d x d x 2d and
// d x 2d x 2d from 32 to 2048 nodes, random and default (XYZ) rank mapping, Base (every pair direct) against
// SDR with the paper's parameters (alpha 0.5, beta 1024, gamma 2, delta 2) and against automatic SDR (alpha and
// the intermediate choice picked per phase by simulation). Base is the baseline of the same run: gains are
// Base's simulated completion time over the method's, minus 1.
//
//   bench_torus_fig3 [--nodes 32,128,256,1024,2048] [--samples 10] [--hardware uniform_shortest|
//       dimension_order|random_direction] [--bytes-per-node 256M] [--network torus|bgp|both] [--json out.json]
//
// The grid is the squarest P x Q = nodes with P <= Q (one rank per node); each of the (L/P)(L/Q) phases moves
// bytes-per-node / phases from every node (the paper's matrices held 256-512 MB per node). network "bgp" makes
// systems below 1024 nodes meshes, as the Blue Gene/P partitions of the paper were; "torus" wraps everywhere.
// Random mapping: averaged over --samples mappings; default mapping: one (it is deterministic).
// Output: JSON (stdout, or --json FILE with a table on stdout), then one SUMMARY line.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/names.hpp"
#include "redist/torus/schedule.hpp"
#include "redist_tools/torus_study.hpp"
#include "usage.hpp"

namespace {

namespace rt = redist::torus;
using redist_baseline::json_writer;
using redist_baseline::usage_requested;

struct bench_options {
  std::vector<int> nodes{32, 128, 256, 1024, 2048};
  int samples = 10;
  rt::hardware_routing hardware = rt::hardware_routing::uniform_shortest;
  std::int64_t bytes_per_node = std::int64_t{256} << 20;
  std::vector<std::string> networks{"torus", "bgp"};
  std::string json_path;
};

std::vector<int> parse_ints(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

std::int64_t parse_bytes(std::string text) {
  std::int64_t scale = 1;
  if (!text.empty() && (text.back() == 'M' || text.back() == 'G' || text.back() == 'K')) {
    scale = text.back() == 'K' ? 1 << 10 : text.back() == 'M' ? 1 << 20 : 1 << 30;
    text.pop_back();
  }
  return std::stoll(text) * scale;
}

constexpr const char* usage_text =
    "usage: bench_torus_fig3 [--nodes 32,128,256,1024,2048] [--samples 10] [--hardware uniform_shortest] "
    "[--bytes-per-node 256M] [--network both] [--json FILE]\n"
    "  --nodes LIST          node counts, comma-separated, each 2 d^3 (d x d x 2d torus) or 4 d^3 (d x 2d x 2d)\n"
    "  --samples N           random rank mappings averaged per setting (the default mapping is one)\n"
    "  --hardware NAME       the network's routing: uniform_shortest, dimension_order, random_direction or\n"
    "                        simgrid_torus\n"
    "  --bytes-per-node B    bytes each node moves over all phases (suffix K, M, G: powers of 1024)\n"
    "  --network NAME        torus (wraps everywhere), bgp (meshes below 1024 nodes, as Blue Gene/P) or both\n"
    "  --json FILE           write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n";

bench_options parse(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (redist_baseline::is_help_argument(a)) {
      throw usage_requested{usage_text};
    } else if (a == "--nodes") {
      o.nodes = parse_ints(next());
    } else if (a == "--samples") {
      o.samples = std::stoi(next());
    } else if (a == "--bytes-per-node") {
      o.bytes_per_node = parse_bytes(next());
    } else if (a == "--hardware") {
      o.hardware = redist::parse_name<rt::hardware_routing>(next());
    } else if (a == "--network") {
      const std::string n = next();
      if (n == "both")
        o.networks = {"torus", "bgp"};
      else if (n == "torus" || n == "bgp")
        o.networks = {n};
      else
        throw std::invalid_argument("--network " + n + ": expected torus, bgp or both");
    } else if (a == "--json") {
      o.json_path = next();
    } else {
      throw std::invalid_argument("unknown option " + a +
                                  " (expected --nodes, --samples, --hardware, --bytes-per-node, --network, --json)");
    }
  }
  if (o.samples < 1) throw std::invalid_argument("--samples must be >= 1");
  return o;
}

// The paper's two shapes: n = 2 d^3 (d x d x 2d) or n = 4 d^3 (d x 2d x 2d).
std::vector<int> shape_of(int nodes) {
  for (int d = 1; d <= 64; ++d) {
    if (2 * d * d * d == nodes) return {d, d, 2 * d};
    if (4 * d * d * d == nodes) return {d, 2 * d, 2 * d};
  }
  throw std::invalid_argument(std::to_string(nodes) + " nodes: not d x d x 2d or d x 2d x 2d for an integer d");
}

std::pair<int, int> squarest_grid(int nodes) {
  int p = 1;
  for (int f = 1; f * f <= nodes; ++f)
    if (nodes % f == 0) p = f;
  return {p, nodes / p};
}

struct row {
  std::string network, mapping, dims;
  int nodes = 0, P = 0, Q = 0, phases = 0;
  rt::study_result base, sdr, automatic;
};

void write_loads(json_writer& w, const char* name, const std::array<double, 3>& v, int dims) {
  w.key(name).begin_object();
  const char* keys[3] = {"x", "y", "z"};
  for (int d = 0; d < dims; ++d) w.field(keys[d], v[static_cast<size_t>(d)]);
  w.end_object();
}

void write_result(json_writer& w, const char* name, const rt::study_result& r, double base_time) {
  w.key(name).begin_object();
  w.field("completion_time", r.completion_time);
  w.field("gain", base_time / r.completion_time - 1.0);
  w.field("alpha", r.mean_alpha);
  w.field("routed_pairs", r.routed_pairs);
  w.field("pairs", r.pairs);
  write_loads(w, "mean_load", r.mean_load, 3);
  write_loads(w, "max_load", r.max_load, 3);
  w.end_object();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench_options o = parse(argc, argv);
    std::vector<row> rows;
    for (const std::string& network : o.networks) {
      for (int nodes : o.nodes) {
        const std::vector<int> extents = shape_of(nodes);
        const bool mesh = network == "bgp" && nodes < 1024;
        for (rt::mapping_kind mapping : {rt::mapping_kind::random, rt::mapping_kind::default_order}) {
          row r;
          r.network = network;
          r.mapping = mapping == rt::mapping_kind::random ? "random" : "default";
          r.nodes = nodes;
          std::tie(r.P, r.Q) = squarest_grid(nodes);
          r.phases = rt::multiphase_transpose_schedule(r.P, r.Q).phases();
          rt::study s;
          s.network = rt::topology(extents, std::vector<bool>(3, !mesh));
          r.dims = s.network.to_string();
          s.pattern = rt::traffic_pattern::transpose;
          s.grid_rows = r.P;
          s.grid_cols = r.Q;
          s.mapping = mapping;
          s.hardware = o.hardware;
          s.model.message_bytes = o.bytes_per_node / r.phases;
          s.samples = mapping == rt::mapping_kind::random ? o.samples : 1;
          s.seed = 2026;
          s.routing.mode = rt::routing_mode::direct;
          r.base = rt::run_study(s);
          s.routing.mode = rt::routing_mode::sdr;  // the paper's alpha 0.5, beta 1024, gamma 2, delta 2
          r.sdr = rt::run_study(s);
          s.routing.mode = rt::routing_mode::automatic;
          r.automatic = rt::run_study(s);
          rows.push_back(r);
          std::fprintf(stderr, "%-5s %-18s %4d nodes %-7s  base %.4f s  sdr %+6.1f%%  auto %+6.1f%% (alpha %.2f)\n",
                       network.c_str(), r.dims.c_str(), nodes, r.mapping.c_str(), r.base.completion_time,
                       100 * (r.base.completion_time / r.sdr.completion_time - 1),
                       100 * (r.base.completion_time / r.automatic.completion_time - 1), r.automatic.mean_alpha);
        }
      }
    }

    json_writer w;
    w.begin_object();
    w.field("benchmark", "torus_fig3");
    w.field("hardware", rt::to_string(o.hardware));
    w.field("bytes_per_node", o.bytes_per_node);
    w.field("samples", o.samples);
    w.key("rows").begin_array();
    double sdr_lo = 1e9, sdr_hi = -1e9, auto_lo = 1e9, auto_hi = -1e9;
    for (const row& r : rows) {
      w.begin_object();
      w.field("network", r.network);
      w.field("dims", r.dims);
      w.field("nodes", r.nodes);
      w.field("mapping", r.mapping);
      w.field("grid", std::to_string(r.P) + "x" + std::to_string(r.Q));
      w.field("phases", r.phases);
      write_result(w, "base", r.base, r.base.completion_time);
      write_result(w, "sdr", r.sdr, r.base.completion_time);
      write_result(w, "auto", r.automatic, r.base.completion_time);
      w.end_object();
      const double gs = r.base.completion_time / r.sdr.completion_time - 1;
      const double ga = r.base.completion_time / r.automatic.completion_time - 1;
      sdr_lo = std::min(sdr_lo, gs);
      sdr_hi = std::max(sdr_hi, gs);
      auto_lo = std::min(auto_lo, ga);
      auto_hi = std::max(auto_hi, ga);
    }
    w.end_array();
    w.end_object();
    if (o.json_path.empty()) {
      std::cout << w.text() << "\n";
    } else {
      std::ofstream(o.json_path) << w.text() << "\n";
      std::printf("%-5s %-18s %5s %-7s %5s %11s %8s %8s %6s\n", "net", "dims", "nodes", "mapping", "phase", "base_s",
                  "sdr", "auto", "alpha");
      for (const row& r : rows)
        std::printf("%-5s %-18s %5d %-7s %5d %11.4f %+7.1f%% %+7.1f%% %6.2f\n", r.network.c_str(), r.dims.c_str(),
                    r.nodes, r.mapping.c_str(), r.phases, r.base.completion_time,
                    100 * (r.base.completion_time / r.sdr.completion_time - 1),
                    100 * (r.base.completion_time / r.automatic.completion_time - 1), r.automatic.mean_alpha);
    }
    std::printf(
        "SUMMARY torus_fig3 (%s): simulated transpose gain over Base: SDR (paper's parameters) %+.1f%% to "
        "%+.1f%%, automatic %+.1f%% to %+.1f%% over %zu settings\n",
        rt::to_string(o.hardware), 100 * sdr_lo, 100 * sdr_hi, 100 * auto_lo, 100 * auto_hi, rows.size());
    return 0;
  } catch (const usage_requested& usage) {
    redist_baseline::print_usage(usage);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torus_fig3: %s\n", e.what());
    return 2;
  }
}
