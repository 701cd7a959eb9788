// SPDX-License-Identifier: BSD-3-Clause
// redist-torus: the torus link-load simulator and the multi-phase transpose schedule from the command line
// (docs/torus.md, "Command line"). Runs in one process, without MPI.
//
//   redist-torus simulate --dims 16x8 [--mesh] [--pattern random|transpose] [--grid PxQ]
//                         [--mapping default_order|random] [--order XYZ] [--routing direct|sdr|auto]
//                         [--alpha A] [--beta B] [--gamma G] [--delta D] [--choice auto|shortest|all_but_longest]
//                         [--hardware dimension_order|uniform_shortest|random_direction|simgrid_torus] [--message-bytes N]
//                         [--samples S] [--seed N] [--json]
//   redist-torus schedule --grid PxQ [--json]
//
// Exit status: 0 done, 2 a wrong argument (with the usage), 1 an error while running or sizes that would need more
// memory than this machine has (with the amount).
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "memory_check.hpp"
#include "redist/error.hpp"
#include "redist/names.hpp"
#include "redist/torus/routing.hpp"
#include "redist/torus/schedule.hpp"
#include "redist/torus/topology.hpp"
#include "redist_tools/torus_study.hpp"

namespace {

namespace torus = redist::torus;

constexpr const char* kUsage =
    "usage: redist-torus simulate --dims NXxNY[xNZ] [options]\n"
    "       redist-torus schedule --grid PxQ [--json]\n"
    "       redist-torus --help\n"
    "simulate: link loads (messages per directed link) and completion time of permutations on a torus\n"
    "  --dims D           lengths of 1 to 3 dimensions joined by 'x', e.g. 16x8 or 8x16x16 (required)\n"
    "  --mesh             no dimension wraps (default: a torus)\n"
    "  --pattern P        random (a random permutation per sample) or transpose (default random)\n"
    "  --grid PxQ         transpose: the process grid, P * Q = nodes (default: the squarest, P <= Q)\n"
    "  --mapping M        transpose: default_order (dimension ordered) or random rank placement\n"
    "                     (default default_order)\n"
    "  --order O          default mapping: dimensions from slowest to fastest, e.g. XYZ or ZXY (default XYZ)\n"
    "  --routing R        direct, sdr or auto (default sdr)\n"
    "  --alpha A          sdr: fraction of the eligible pairs routed, in [0, 1] (default 0.5)\n"
    "  --beta B           chunks per routed message, >= 1 (default 1024)\n"
    "  --gamma G          pairs nearer than G along the long dimensions go directly, >= 0 (default 2)\n"
    "  --delta D          one pair per intermediate, alternatives nearer than D; -1: no limit (default 2)\n"
    "  --choice C         intermediates: auto, shortest or all_but_longest (default auto)\n"
    "  --hardware H       network routing: dimension_order, uniform_shortest, random_direction or\n"
    "                     simgrid_torus (SimGrid's TORUS: Z first, ties one way)\n"
    "                     (default uniform_shortest)\n"
    "  --message-bytes N  bytes each node sends per permutation, >= 0 (default 268435456 = 256 MiB)\n"
    "  --samples S        random draws averaged, >= 1 (default 1)\n"
    "  --seed N           seed of the draws (default 1)\n"
    "  --json             print one JSON object instead of the table\n"
    "schedule: the phases of the multi-phase transpose on a P x Q grid (rank r sends to send_to[r])\n";

// A command-line mistake: reported on stderr with the usage, exit status 2.
struct usage_error {
  std::string message;
};

long long parse_integer(const std::string& text, const std::string& option, long long low, long long high,
                        const std::string& expected) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < low || value > high)
    throw usage_error{option + " '" + text + "' is not valid: expected " + expected};
  return value;
}

// The value an option names (redist/names.hpp: the spellings of the library and its other interfaces; an
// earlier release's spelling still works, with a message on stderr).
template <class E>
E parse_choice(const std::string& text, const std::string& option) {
  try {
    return redist::parse_name<E>(text);
  } catch (const redist::invalid_argument&) {
    throw usage_error{option + " '" + text + "' is not valid: expected " + redist::spelled_choices<E>()};
  }
}

std::array<int, 2> parse_grid(const std::string& text) {
  const std::size_t x = text.find('x');
  const std::string expected = "PxQ with P, Q >= 1, e.g. 32x64";
  if (x == std::string::npos) throw usage_error{"--grid '" + text + "' is not valid: expected " + expected};
  const int limit = 1 << 30;
  return {static_cast<int>(parse_integer(text.substr(0, x), "--grid", 1, limit, expected)),
          static_cast<int>(parse_integer(text.substr(x + 1), "--grid", 1, limit, expected))};
}

const char kDimensionNames[] = "xyz";

struct arguments {
  std::string command;  // simulate, schedule or empty with help
  bool help = false;
  bool json = false;
  // simulate
  std::string dims;
  bool mesh = false;
  bool has_grid = false;
  std::array<int, 2> grid{0, 0};
  torus::study study;
};

arguments parse(int argc, char** argv) {
  arguments a;
  int first = 1;
  if (argc > 1 && argv[1][0] != '-') {
    a.command = argv[1];
    if (a.command != "simulate" && a.command != "schedule")
      throw usage_error{"unknown command '" + a.command + "': expected simulate or schedule"};
    first = 2;
  }
  torus::study& s = a.study;
  s.hardware = torus::hardware_routing::uniform_shortest;
  bool has_order = false;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() {
      if (i + 1 >= argc) throw usage_error{arg + " needs a value"};
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg == "--json") {
      a.json = true;
      continue;
    }
    if (arg == "--grid") {
      a.grid = parse_grid(value());
      a.has_grid = true;
      continue;
    }
    if (a.command == "schedule")
      throw usage_error{"'" + arg + "' is not an option of schedule: expected --grid PxQ [--json]"};
    if (arg == "--dims") {
      a.dims = value();
    } else if (arg == "--mesh") {
      a.mesh = true;
    } else if (arg == "--pattern") {
      s.pattern = parse_choice<torus::traffic_pattern>(value(), arg);
    } else if (arg == "--mapping") {
      s.mapping = parse_choice<torus::mapping_kind>(value(), arg);
    } else if (arg == "--order") {
      s.mapping_order = value();
      has_order = true;
    } else if (arg == "--routing") {
      s.routing.mode = parse_choice<torus::routing_mode>(value(), arg);
    } else if (arg == "--alpha") {
      const std::string text = value();
      char* end = nullptr;
      s.routing.alpha = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(s.routing.alpha >= 0 && s.routing.alpha <= 1))
        throw usage_error{"--alpha '" + text + "' is not valid: expected a fraction in [0, 1]"};
    } else if (arg == "--beta") {
      s.routing.beta = parse_integer(value(), arg, 1, std::numeric_limits<std::int64_t>::max(), "an integer >= 1");
    } else if (arg == "--gamma") {
      s.routing.gamma =
          static_cast<int>(parse_integer(value(), arg, 0, std::numeric_limits<int>::max(), "an integer >= 0"));
    } else if (arg == "--delta") {
      s.routing.delta = static_cast<int>(
          parse_integer(value(), arg, -1, std::numeric_limits<int>::max(), "an integer >= 0, or -1 for no limit"));
    } else if (arg == "--choice") {
      s.routing.choice = parse_choice<torus::intermediate_choice>(value(), arg);
    } else if (arg == "--hardware") {
      s.hardware = parse_choice<torus::hardware_routing>(value(), arg);
    } else if (arg == "--message-bytes") {
      s.model.message_bytes =
          parse_integer(value(), arg, 0, std::numeric_limits<std::int64_t>::max(), "an integer >= 0");
    } else if (arg == "--samples") {
      s.samples = static_cast<int>(parse_integer(value(), arg, 1, std::numeric_limits<int>::max(), "an integer >= 1"));
    } else if (arg == "--seed") {
      const std::string text = value();
      char* end = nullptr;
      errno = 0;
      s.seed = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
        throw usage_error{"--seed '" + text + "' is not valid: expected an integer from 0 to 2^64-1"};
    } else {
      throw usage_error{"unknown argument '" + arg + "'"};
    }
  }
  if (a.help) return a;
  if (a.command.empty()) throw usage_error{"no command: expected simulate or schedule"};
  if (a.command == "schedule") {
    if (!a.has_grid) throw usage_error{"schedule needs --grid PxQ"};
    return a;
  }
  if (a.dims.empty()) throw usage_error{"simulate needs --dims, e.g. --dims 16x8"};
  try {
    s.network = torus::topology::parse(a.dims, a.mesh);
  } catch (const redist::invalid_argument& e) {
    throw usage_error{std::string("--dims: ") + e.what()};
  }
  if (s.pattern == torus::traffic_pattern::transpose) {
    if (a.has_grid && static_cast<std::int64_t>(a.grid[0]) * a.grid[1] != s.network.nodes())
      throw usage_error{"--grid " + std::to_string(a.grid[0]) + "x" + std::to_string(a.grid[1]) + " has " +
                        std::to_string(static_cast<std::int64_t>(a.grid[0]) * a.grid[1]) +
                        " processes, expected P x Q = " + std::to_string(s.network.nodes()) + " (the nodes of " +
                        a.dims + ")"};
    s.grid_rows = a.grid[0];
    s.grid_cols = a.grid[1];
  } else if (a.has_grid || s.mapping != torus::mapping_kind::default_order || has_order) {
    throw usage_error{"--grid, --mapping and --order describe the transpose: they need --pattern transpose"};
  }
  if (has_order) {
    // The letters of the network's dimensions, each once (letters of dimensions it lacks may follow).
    std::string letters = s.mapping_order;
    std::string present;
    for (const char c : letters)
      if (c >= 'X' && c < 'X' + s.network.dimensions()) present += c;
    std::string sorted = present;
    std::sort(sorted.begin(), sorted.end());
    std::sort(letters.begin(), letters.end());
    const std::string all = std::string("XYZ").substr(0, static_cast<std::size_t>(s.network.dimensions()));
    if (sorted != all || std::unique(letters.begin(), letters.end()) != letters.end() ||
        letters.find_first_not_of("XYZ") != std::string::npos)
      throw usage_error{"--order '" + s.mapping_order + "' is not valid: expected each of " + all +
                        " once, slowest varying first, e.g. " + all};
  }
  return a;
}

std::string dims_of(const torus::topology& t) {
  std::string dims;
  for (int d = 0; d < t.dimensions(); ++d) dims += (d ? "x" : "") + std::to_string(t.extent(d));
  return dims;
}

// A number for JSON: finite values only (the model never yields others).
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

// {"x": .., "y": ..} over the network's dimensions.
std::string per_dimension(const torus::topology& t, const std::array<double, 3>& values) {
  std::string out = "{";
  for (int d = 0; d < t.dimensions(); ++d)
    out += std::string(d ? ", " : "") + "\"" + kDimensionNames[d] + "\": " + number(values[static_cast<size_t>(d)]);
  return out + "}";
}

// ---- memory estimate ----
using redist::tools::add_saturated;
using redist::tools::byte_count;
using redist::tools::multiply_saturated;

// Phases of the multi-phase transpose on a P x Q grid: (L / P) * (L / Q) = (Q / G) * (P / G).
byte_count transpose_phases(int rows, int cols) {
  const int g = std::gcd(rows, cols);
  return static_cast<byte_count>(cols / g) * static_cast<byte_count>(rows / g);
}

// The schedule holds send_to and receive_from, one rank per rank and phase each (8 bytes), and a vector per phase.
byte_count schedule_bytes(int rows, int cols) {
  const byte_count phases = transpose_phases(rows, cols);
  const byte_count ranks = static_cast<byte_count>(rows) * static_cast<byte_count>(cols);
  return add_saturated(multiply_saturated(multiply_saturated(8, ranks), phases), multiply_saturated(48, phases));
}

// The grid run_study takes for the transpose when --grid is not given: the squarest P x Q = nodes, P <= Q.
std::array<int, 2> squarest_grid(int nodes) {
  int rows = 1;
  for (int p = 1; static_cast<std::int64_t>(p) * p <= nodes; ++p)
    if (nodes % p == 0) rows = p;
  return {rows, nodes / rows};
}

// An upper bound of the bytes a simulation allocates, from the arguments alone. Per node (210 bytes):
//   16  the permutation being routed, its destinations and the rank mapping (4-byte ranks);
//   72  up to three route lists alive at once (automatic routing's best and candidate, then the direct
//       comparison's), 12-byte routes doubled for vector growth;
//   34  SDR's eligible pairs (16 bytes, doubled) and its per-node flags;
//   80  one simulation's link loads (6 doubles) and node counters (4 doubles);
//    8  the path-spreading scratch (at most one double per node).
// Plus SDR's nearby-intermediate offsets (36 bytes each, within delta along every dimension but the longest) and,
// for the transpose, its schedule and one sample's permutations: 12 bytes per node and phase.
byte_count simulate_bytes(const arguments& a) {
  const torus::study& s = a.study;
  const torus::topology& t = s.network;
  const auto nodes = static_cast<byte_count>(t.nodes());
  byte_count bytes = multiply_saturated(210, nodes);
  if (s.routing.mode != torus::routing_mode::direct && s.routing.delta > 1) {
    const std::array<int, 3> longest_first = t.by_length();
    byte_count offsets = 1;
    for (int k = 1; k < 3; ++k) {
      const int reach = std::min(s.routing.delta - 1, t.extent(longest_first[static_cast<size_t>(k)]) - 1);
      offsets = multiply_saturated(offsets, 2 * static_cast<byte_count>(reach) + 1);
    }
    bytes = add_saturated(bytes, multiply_saturated(36, offsets));
  }
  if (s.pattern == torus::traffic_pattern::transpose) {
    const std::array<int, 2> grid = a.has_grid ? a.grid : squarest_grid(t.nodes());
    bytes = add_saturated(bytes, schedule_bytes(grid[0], grid[1]));
    bytes = add_saturated(bytes, multiply_saturated(multiply_saturated(4, nodes), transpose_phases(grid[0], grid[1])));
  }
  return bytes;
}

byte_count estimated_bytes(const arguments& a) {
  return a.command == "schedule" ? schedule_bytes(a.grid[0], a.grid[1]) : simulate_bytes(a);
}

// What the refusal names: the arguments the estimate grows with.
std::string sizes_text(const arguments& a) {
  const std::string grid = std::to_string(a.grid[0]) + "x" + std::to_string(a.grid[1]);
  if (a.command == "schedule") return "--grid " + grid;
  if (a.study.pattern != torus::traffic_pattern::transpose) return "--dims " + a.dims;
  return "--dims " + a.dims + " --pattern transpose" + (a.has_grid ? " --grid " + grid : "");
}

int run_simulate(const arguments& a) {
  const torus::study& s = a.study;
  const torus::study_result r = torus::run_study(s);
  const torus::topology& t = s.network;
  const double gain = r.completion_time > 0 ? r.direct_completion_time / r.completion_time - 1 : 0;
  const std::string pattern = torus::to_string(s.pattern);
  const std::string routing = torus::to_string(s.routing.mode);
  const std::string hardware = torus::to_string(s.hardware);
  if (a.json) {
    std::printf("{\n");
    std::printf("  \"dims\": \"%s\",\n  \"mesh\": %s,\n", dims_of(t).c_str(), a.mesh ? "true" : "false");
    std::printf("  \"pattern\": \"%s\",\n", pattern.c_str());
    if (s.pattern == torus::traffic_pattern::transpose)
      std::printf("  \"mapping\": \"%s\",\n", torus::to_string(s.mapping));
    std::printf("  \"routing\": \"%s\",\n  \"hardware\": \"%s\",\n", routing.c_str(), hardware.c_str());
    std::printf("  \"samples\": %d,\n  \"seed\": %llu,\n", s.samples, static_cast<unsigned long long>(s.seed));
    std::printf("  \"message_bytes\": %lld,\n", static_cast<long long>(s.model.message_bytes));
    std::printf("  \"phases\": %d,\n  \"pairs\": %lld,\n  \"routed_pairs\": %lld,\n", r.phases,
                static_cast<long long>(r.pairs), static_cast<long long>(r.routed_pairs));
    std::printf("  \"alpha\": %s,\n", number(r.mean_alpha).c_str());
    std::printf("  \"mean_load\": %s,\n", per_dimension(t, r.mean_load).c_str());
    std::printf("  \"max_load\": %s,\n", per_dimension(t, r.max_load).c_str());
    std::printf("  \"completion_time\": %s,\n", number(r.completion_time).c_str());
    std::printf("  \"direct_completion_time\": %s,\n", number(r.direct_completion_time).c_str());
    std::printf("  \"gain\": %s\n}\n", number(gain).c_str());
    return 0;
  }
  std::printf("network %s %s, pattern %s, routing %s, hardware %s, %d sample%s (seed %llu)\n", dims_of(t).c_str(),
              a.mesh ? "mesh" : "torus", pattern.c_str(), routing.c_str(), hardware.c_str(), s.samples,
              s.samples == 1 ? "" : "s", static_cast<unsigned long long>(s.seed));
  std::printf("%-9s %10s %12s %12s\n", "dimension", "links", "mean load", "max load");
  for (int d = 0; d < t.dimensions(); ++d)
    std::printf("%-9c %10lld %12.4f %12.4f\n", kDimensionNames[d], static_cast<long long>(t.links(d)),
                r.mean_load[static_cast<size_t>(d)], r.max_load[static_cast<size_t>(d)]);
  std::printf("phases %d, pairs %lld, routed %lld, alpha %.3f\n", r.phases, static_cast<long long>(r.pairs),
              static_cast<long long>(r.routed_pairs), r.mean_alpha);
  std::printf("completion time %.6g s (direct %.6g s, gain %+.1f%%) for %lld bytes per node and permutation\n",
              r.completion_time, r.direct_completion_time, 100 * gain, static_cast<long long>(s.model.message_bytes));
  return 0;
}

int run_schedule(const arguments& a) {
  const torus::transpose_schedule s = torus::multiphase_transpose_schedule(a.grid[0], a.grid[1]);
  if (a.json) {
    std::printf("{\"grid\": \"%dx%d\", \"P\": %d, \"Q\": %d, \"L\": %d, \"G\": %d, \"phases\": [", s.P, s.Q, s.P, s.Q,
                s.L, s.G);
    for (int k = 0; k < s.phases(); ++k) {
      std::printf("%s[", k ? ", " : "");
      for (std::size_t r = 0; r < s.send_to[static_cast<size_t>(k)].size(); ++r)
        std::printf("%s%d", r ? ", " : "", s.send_to[static_cast<size_t>(k)][r]);
      std::printf("]");
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("grid %dx%d: L = %d, G = %d, %d phases (rank -> the rank it sends to)\n", s.P, s.Q, s.L, s.G, s.phases());
  for (int k = 0; k < s.phases(); ++k) {
    std::printf("phase %d:", k);
    for (std::size_t r = 0; r < s.send_to[static_cast<size_t>(k)].size(); ++r)
      std::printf(" %zu->%d", r, s.send_to[static_cast<size_t>(k)][r]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  arguments a;
  try {
    a = parse(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "redist-torus: %s\n%s", e.message.c_str(), kUsage);
    return 2;
  }
  if (a.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const byte_count estimate = estimated_bytes(a);
  if (redist::tools::refuse_if_too_large("redist-torus", sizes_text(a), estimate)) return 1;
  try {
    return a.command == "schedule" ? run_schedule(a) : run_simulate(a);
  } catch (const std::bad_alloc&) {
    redist::tools::report_out_of_memory("redist-torus", sizes_text(a), estimate);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist-torus: %s\n", e.what());
    return 1;
  }
}
