// SPDX-License-Identifier: BSD-3-Clause
// inplace_bench: redist's in-place variable-size alltoallv (every algorithm) against MPICH's MPI_Alltoallv, out
// of place (a second buffer as large as the data) and with MPI_IN_PLACE (symmetric counts only), on the four
// count patterns of Zhuang, Nakashima and Nagamochi (Section 4), 8-byte elements.
//
//   mpiexec.mpich -n 8 bench_inplace_bench [--sizes 16M,64M,256M,1G] [--cases 1,2,3,4] [--reps 3]
//       [--work-bytes 4M] [--json out.json]
//
// N = each size in bytes per rank (suffix K, M, G: powers of 1024); with d = (j - i) mod P, rank i sends rank j
//   case 1: N/P;  case 2: 0 for d < P/4, N/P below d = P-1, N/4 at d = P-1;
//   case 3: 0 for d < P/2, N/P below d = P-1, N/2 at d = P-1;  case 4: N at d = P-1, else 0
// (integer division; the paper's N is the element count, here N bytes = N/8 elements).
// Methods: auto, chunked (skipped with a note where it refuses the input), pairwise (its guard off, so
// pairwise itself runs), bitonic (every capacity = the largest send or receive total over the ranks, which it
// needs; the others get max(own send total, own receive total)), mpi_alltoallv (out of place) and
// mpi_in_place (MPI_Alltoallv with MPI_IN_PLACE: MPI's rules need symmetric counts, rank i's recvcounts[j] =
// rank j's recvcounts[i]; so case 1, and cases 2-4 only where they happen to be symmetric (case 2 at P = 4);
// otherwise skipped with a note).
//
// Time: the median (and best) over --reps timed calls, each the slowest rank's, after one untimed call
// (MPI_Barrier before each; refilling the buffer between calls is not timed).
// Memory: the untimed first call of every method is its memory probe. Its buffers are freshly mmap'd and
// written through (the data buffer) or left untouched (out of place: the receive buffer, so that the pages
// MPI writes count), then VmHWM is reset to the current resident set (writing "5" to /proc/self/clear_refs,
// Linux >= 4.0) and read again after the call: the rise is the call's extra peak memory (work buffers,
// temporaries, MPI's internal buffers; for out of place the receive buffer). Reported as the maximum over
// the ranks. A warm-up exchange at start-up makes MPI's per-peer resources resident before any probe. malloc
// is set to map every block of 64 KiB or more freshly and to unmap it on free (a fixed M_MMAP_THRESHOLD;
// glibc would otherwise raise the threshold after the first free and serve later temporaries from heap pages
// that are already resident, which VmHWM cannot see), and malloc_trim runs before each probe: so every
// method's temporaries (the work buffer, MPI's) count in every probe, not only in the first one of the run.
// Where clear_refs is refused, the rise is reported as -1.
// Also: bytes and messages this rank sent and received (max and total over ranks; for MPI's calls the payload
// that leaves / reaches each rank and the non-empty off-rank blocks, what a pairwise MPI_Alltoallv sends), the
// report's fields (the statistics vocabulary: bytes_sent, bytes_received, messages_sent, messages_received,
// bytes_local), and
// every result checked element by element.
// Output: JSON (stdout, or --json FILE with a table on stdout), then one SUMMARY line. Exit status 1 when a
// verification fails, 2 on errors.
#include <malloc.h>
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline.hpp"
#include "redist/exchange/inplace.hpp"
#include "usage.hpp"

namespace {

using namespace redist_baseline;
namespace ex = redist::exchange;

constexpr double MiB = 1024.0 * 1024.0;

struct bench_options {
  std::vector<std::int64_t> sizes;  // bytes per rank
  std::vector<int> cases{1, 2, 3, 4};
  int reps = 3;
  std::int64_t work_bytes = std::int64_t{4} << 20;
  std::string json_path;
};

std::int64_t parse_bytes(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  std::int64_t scale = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = std::int64_t{1} << 10;
      digits.pop_back();
      break;
    case 'M':
    case 'm':
      scale = std::int64_t{1} << 20;
      digits.pop_back();
      break;
    case 'G':
    case 'g':
      scale = std::int64_t{1} << 30;
      digits.pop_back();
      break;
    default:
      break;
  }
  size_t used = 0;
  const long long v = std::stoll(digits, &used);
  if (used != digits.size() || v <= 0) throw std::invalid_argument("bad size '" + text + "' (e.g. 16M, 1G)");
  return v * scale;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

constexpr const char* usage_text =
    "usage: bench_inplace_bench [--sizes 16M,64M] [--cases 1,2,3,4] [--reps 3] [--work-bytes 4M] [--json FILE]\n"
    "  --sizes LIST      N, bytes per rank, comma-separated (suffix K, M, G: powers of 1024)\n"
    "  --cases LIST      count patterns 1 to 4 (Zhuang, Nakashima and Nagamochi); with d = (j - i) mod P, rank i\n"
    "                    sends rank j: 1: N/P; 2: 0 for d < P/4, N/P below d = P-1, N/4 at d = P-1;\n"
    "                    3: 0 for d < P/2, N/P below d = P-1, N/2 at d = P-1; 4: N at d = P-1, else 0\n"
    "  --reps R          timed calls after an untimed one (median and best, slowest rank)\n"
    "  --work-bytes B    the work buffer of redist's in-place algorithms (suffix K, M, G)\n"
    "  --json FILE       write the JSON to FILE and a table on stdout (default: the JSON on stdout)\n";

bench_options parse(int argc, char** argv) {
  bench_options o;
  std::string sizes = "16M,64M";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const auto next = [&]() -> std::string {
      if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++a];
    };
    if (is_help_argument(arg))
      throw usage_requested{usage_text};
    else if (arg == "--sizes")
      sizes = next();
    else if (arg == "--cases")
      o.cases = parse_int_list(next());
    else if (arg == "--reps")
      o.reps = parse_positive_int(next(), "--reps");
    else if (arg == "--work-bytes")
      o.work_bytes = parse_bytes(next());
    else if (arg == "--json")
      o.json_path = next();
    else
      throw std::invalid_argument("unknown argument '" + arg + "' (--sizes, --cases, --reps, --work-bytes, --json)");
  }
  for (const std::string& s : split(sizes)) o.sizes.push_back(parse_bytes(s));
  for (int c : o.cases)
    if (c < 1 || c > 4) throw std::invalid_argument("--cases: 1 to 4");
  return o;
}

// ---- memory -------------------------------------------------------------------------------------------------

std::int64_t hwm_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

bool reset_hwm() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// A fresh anonymous mapping; pages become resident when written.
struct mapping {
  std::uint64_t* data = nullptr;
  std::int64_t bytes = 0;
  explicit mapping(std::int64_t b) : bytes(std::max<std::int64_t>(b, 8)) {
    void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap of " + std::to_string(bytes) + " bytes failed");
    data = static_cast<std::uint64_t*>(p);
  }
  ~mapping() { munmap(data, static_cast<size_t>(bytes)); }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  void touch() { std::memset(data, 0x5a, static_cast<size_t>(bytes)); }
};

// ---- counts and data ------------------------------------------------------------------------------------------

using counts_matrix = std::vector<std::vector<std::int64_t>>;

counts_matrix paper_case(int which, int p, std::int64_t n) {
  counts_matrix c(static_cast<size_t>(p), std::vector<std::int64_t>(static_cast<size_t>(p), 0));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      const int d = ((j - i) % p + p) % p;
      std::int64_t v = 0;
      if (which == 1)
        v = n / p;
      else if (which == 2)
        v = d < p / 4 ? 0 : d < p - 1 ? n / p : n / 4;
      else if (which == 3)
        v = d < p / 2 ? 0 : d < p - 1 ? n / p : n / 2;
      else
        v = d == p - 1 ? n : 0;
      c[static_cast<size_t>(i)][static_cast<size_t>(j)] = v;
    }
  return c;
}

std::int64_t row_total(const counts_matrix& c, int i) {
  std::int64_t s = 0;
  for (std::int64_t x : c[static_cast<size_t>(i)]) s += x;
  return s;
}
std::int64_t column_total(const counts_matrix& c, int j) {
  std::int64_t s = 0;
  for (const auto& row : c) s += row[static_cast<size_t>(j)];
  return s;
}
bool symmetric(const counts_matrix& c) {
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = 0; j < c.size(); ++j)
      if (c[i][j] != c[j][i]) return false;
  return true;
}

std::uint64_t value(int from, int to, std::int64_t k) {
  return (static_cast<std::uint64_t>(from) << 48) ^ (static_cast<std::uint64_t>(to) << 40) ^
         static_cast<std::uint64_t>(k);
}

void fill_send(std::uint64_t* buf, const counts_matrix& c, int me) {
  std::int64_t at = 0;
  for (int j = 0; j < static_cast<int>(c.size()); ++j) {
    const std::int64_t n = c[static_cast<size_t>(me)][static_cast<size_t>(j)];
    for (std::int64_t k = 0; k < n; ++k) buf[at + k] = value(me, j, k);
    at += n;
  }
}

std::int64_t wrong_received(const std::uint64_t* buf, const counts_matrix& c, int me) {
  std::int64_t at = 0, wrong = 0;
  for (int i = 0; i < static_cast<int>(c.size()); ++i) {
    const std::int64_t n = c[static_cast<size_t>(i)][static_cast<size_t>(me)];
    for (std::int64_t k = 0; k < n; ++k) wrong += buf[at + k] != value(i, me, k);
    at += n;
  }
  return wrong;
}

// ---- results ----------------------------------------------------------------------------------------------------

struct per_rank {
  std::int64_t max = 0, total = 0;
};
per_rank reduce(std::int64_t mine) {
  per_rank r;
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &r.max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  BASELINE_MPI_CHECK(MPI_Allreduce(&mine, &r.total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return r;
}

struct method_result {
  std::string name;
  bool ran = false;
  std::string note;       // why it did not run
  std::string algorithm;  // the one that ran (in-place methods)
  std::string reason;
  timing time;
  std::int64_t hwm_rise = -1;       // bytes, max over ranks; -1 unknown
  std::int64_t capacity_bytes = 0;  // max over ranks
  per_rank bytes_sent, bytes_received, messages, messages_received, bytes_local, metadata_bytes;
  std::int64_t work_bytes = 0;
  std::int64_t wrong = 0;
};

struct case_result {
  std::int64_t size_bytes = 0;
  int which = 0;
  bool symmetric = false;
  std::int64_t largest_total_bytes = 0;
  std::vector<method_result> methods;
  const method_result* get(const std::string& n) const {
    for (const auto& m : methods)
      if (m.name == n) return &m;
    return nullptr;
  }
};

bool hwm_resets = true;

// Probe (fresh buffers, VmHWM rise), then --reps timed calls: call(buf, first) does one call on buf (refilled
// first; false: refused, on the first call only); check() counts the wrong elements of the result, untimed,
// after the probe and after the last timed call.
template <class Call, class Check>
void probe_and_time(method_result& r, const counts_matrix& c, std::int64_t capacity_elements, const bench_options& o,
                    Call&& call, Check&& check) {
  const int me = world_rank();
  mapping buf(capacity_elements * 8);
  buf.touch();
  fill_send(buf.data, c, me);
  malloc_trim(0);
  BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (hwm_resets) reset_hwm();
  const std::int64_t before = hwm_bytes();
  bool ok = call(buf.data, true);
  const std::int64_t rise = hwm_bytes() - before;
  const std::int64_t agreed = reduce(ok ? 1 : 0).total;
  if (agreed != world_size()) {
    if (agreed != 0) throw std::runtime_error(r.name + ": refused on some ranks only");
    r.ran = false;
    return;
  }
  r.ran = true;
  std::int64_t wrong = check(buf.data);
  r.hwm_rise = hwm_resets ? reduce(rise).max : -1;
  r.capacity_bytes = reduce(capacity_elements * 8).max;
  std::vector<double> seconds;
  for (int rep = 0; rep < o.reps; ++rep) {
    fill_send(buf.data, c, me);
    BASELINE_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double begin = MPI_Wtime();
    call(buf.data, false);
    seconds.push_back(MPI_Wtime() - begin);
  }
  wrong += check(buf.data);
  r.time = summarize(MPI_COMM_WORLD, seconds);
  r.wrong = reduce(wrong).total;
}

method_result run_inplace(const std::string& name, ex::inplace_algorithm a, const counts_matrix& c,
                          const bench_options& o) {
  const int me = world_rank(), p = world_size();
  method_result r;
  r.name = name;
  std::int64_t capacity = std::max(row_total(c, me), column_total(c, me));
  if (a == ex::inplace_algorithm::bitonic)
    for (int i = 0; i < p; ++i) capacity = std::max({capacity, row_total(c, i), column_total(c, i)});
  ex::inplace_options opts;
  opts.algorithm = a;
  opts.work_bytes = o.work_bytes;
  if (a == ex::inplace_algorithm::pairwise) opts.pairwise_guard = 1e30;  // pairwise itself, not its fallback
  const std::vector<std::int64_t> sendcounts = c[static_cast<size_t>(me)];
  ex::inplace_report report;
  probe_and_time(
      r, c, capacity, o,
      [&](std::uint64_t* buf, bool first) {
        try {
          report = ex::alltoallv_inplace(buf, capacity, sendcounts.data(), nullptr, MPI_UINT64_T, MPI_COMM_WORLD, opts);
        } catch (const redist::invalid_argument& e) {
          if (!first) throw;
          r.note = e.what();
          return false;
        }
        return true;
      },
      [&](const std::uint64_t* buf) { return wrong_received(buf, c, me); });
  if (!r.ran) return r;
  r.algorithm = ex::to_string(report.algorithm);
  r.reason = report.reason;
  r.bytes_sent = reduce(report.bytes_sent);
  r.bytes_received = reduce(report.bytes_received);
  r.messages = reduce(report.messages_sent);
  r.messages_received = reduce(report.messages_received);
  r.bytes_local = reduce(report.bytes_local);
  r.metadata_bytes = reduce(report.metadata_bytes);
  r.work_bytes = report.work_bytes;
  return r;
}

// MPI's calls: the payload that leaves this rank and its non-empty off-rank blocks.
void mpi_traffic(method_result& r, const counts_matrix& c) {
  const int me = world_rank();
  std::int64_t bytes = 0, messages = 0, bytes_in = 0, messages_in = 0;
  for (int j = 0; j < static_cast<int>(c.size()); ++j) {
    if (j != me && c[static_cast<size_t>(me)][static_cast<size_t>(j)] > 0) {
      bytes += 8 * c[static_cast<size_t>(me)][static_cast<size_t>(j)];
      ++messages;
    }
    if (j != me && c[static_cast<size_t>(j)][static_cast<size_t>(me)] > 0) {
      bytes_in += 8 * c[static_cast<size_t>(j)][static_cast<size_t>(me)];
      ++messages_in;
    }
  }
  r.bytes_sent = reduce(bytes);
  r.bytes_received = reduce(bytes_in);
  r.messages = reduce(messages);
  r.messages_received = reduce(messages_in);
}

std::vector<int> int_counts(const std::vector<std::int64_t>& v) {
  std::vector<int> out;
  for (std::int64_t x : v) {
    if (x > 2147483647) throw std::invalid_argument("a block of more than 2^31-1 elements: MPI_Alltoallv's int counts");
    out.push_back(static_cast<int>(x));
  }
  return out;
}
std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  std::int64_t at = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (at > 2147483647) throw std::invalid_argument("displacement past 2^31-1 elements");
    d[k] = static_cast<int>(at);
    at += counts[k];
  }
  return d;
}

method_result run_mpi_out_of_place(const counts_matrix& c, const bench_options& o) {
  const int me = world_rank(), p = world_size();
  method_result r;
  r.name = "mpi_alltoallv";
  r.algorithm = "MPI_Alltoallv";
  std::vector<std::int64_t> rc64(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) rc64[static_cast<size_t>(i)] = c[static_cast<size_t>(i)][static_cast<size_t>(me)];
  const std::vector<int> sc = int_counts(c[static_cast<size_t>(me)]), rc = int_counts(rc64);
  const std::vector<int> sd = displacements(sc), rd = displacements(rc);
  const std::int64_t recv_total = column_total(c, me);
  std::unique_ptr<mapping> recv;
  probe_and_time(
      r, c, row_total(c, me), o,
      [&](std::uint64_t* send, bool first) {
        if (first) recv = std::make_unique<mapping>(recv_total * 8);  // untouched: its pages count in the probe
        BASELINE_MPI_CHECK(MPI_Alltoallv(send, sc.data(), sd.data(), MPI_UINT64_T, recv->data, rc.data(), rd.data(),
                                         MPI_UINT64_T, MPI_COMM_WORLD));
        return true;
      },
      [&](const std::uint64_t*) { return wrong_received(recv->data, c, me); });
  r.capacity_bytes = reduce(std::max(row_total(c, me), recv_total) * 8).max;  // one of its two buffers
  mpi_traffic(r, c);
  return r;
}

method_result run_mpi_in_place(const counts_matrix& c, const bench_options& o) {
  const int me = world_rank();
  method_result r;
  r.name = "mpi_in_place";
  r.algorithm = "MPI_Alltoallv(MPI_IN_PLACE)";
  if (!symmetric(c)) {
    r.note = "asymmetric counts: MPI_IN_PLACE needs rank i's recvcounts[j] = rank j's recvcounts[i]";
    return r;
  }
  const std::vector<int> counts = int_counts(c[static_cast<size_t>(me)]);  // = what this rank receives
  const std::vector<int> displs = displacements(counts);
  probe_and_time(
      r, c, row_total(c, me), o,
      [&](std::uint64_t* buf, bool) {
        BASELINE_MPI_CHECK(MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf, counts.data(),
                                         displs.data(), MPI_UINT64_T, MPI_COMM_WORLD));
        return true;
      },
      [&](const std::uint64_t* buf) { return wrong_received(buf, c, me); });
  mpi_traffic(r, c);
  return r;
}

case_result run_case(std::int64_t size_bytes, int which, const bench_options& o) {
  const int p = world_size();
  case_result res;
  res.size_bytes = size_bytes;
  res.which = which;
  const counts_matrix c = paper_case(which, p, size_bytes / 8);
  res.symmetric = symmetric(c);
  for (int i = 0; i < p; ++i)
    res.largest_total_bytes = std::max({res.largest_total_bytes, 8 * row_total(c, i), 8 * column_total(c, i)});
  // The in-place methods first, MPI's out of place last (with a working VmHWM reset the order does not matter).
  res.methods.push_back(
      run_inplace(ex::to_string(ex::inplace_algorithm::automatic), ex::inplace_algorithm::automatic, c, o));
  res.methods.push_back(
      run_inplace(ex::to_string(ex::inplace_algorithm::chunked), ex::inplace_algorithm::chunked, c, o));
  res.methods.push_back(
      run_inplace(ex::to_string(ex::inplace_algorithm::pairwise), ex::inplace_algorithm::pairwise, c, o));
  res.methods.push_back(
      run_inplace(ex::to_string(ex::inplace_algorithm::bitonic), ex::inplace_algorithm::bitonic, c, o));
  res.methods.push_back(run_mpi_in_place(c, o));
  res.methods.push_back(run_mpi_out_of_place(c, o));
  return res;
}

double ratio(double x, double y) { return y > 0 ? x / y : 0; }

void write_per_rank(json_writer& json, const char* name, const per_rank& v) {
  json.key(name).begin_object();
  json.field("max", v.max);
  json.field("total", v.total);
  json.end_object();
}

std::string size_name(std::int64_t b) {
  if (b % (std::int64_t{1} << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b % (std::int64_t{1} << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b % (std::int64_t{1} << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

// Makes MPI's per-peer resources (and the large-message paths) resident before any probe.
void warm_up(const bench_options& o) {
  const int p = world_size(), me = world_rank();
  const counts_matrix c = paper_case(1, p, (std::int64_t{8} << 20) / 8);
  mapping a(8 << 20), b(8 << 20);
  a.touch();
  b.touch();
  fill_send(a.data, c, me);
  const std::vector<int> counts = int_counts(c[static_cast<size_t>(me)]), displs = displacements(counts);
  BASELINE_MPI_CHECK(MPI_Alltoallv(a.data, counts.data(), displs.data(), MPI_UINT64_T, b.data, counts.data(),
                                   displs.data(), MPI_UINT64_T, MPI_COMM_WORLD));
  ex::inplace_options opts;
  opts.work_bytes = o.work_bytes;
  ex::alltoallv_inplace(a.data, row_total(c, me), c[static_cast<size_t>(me)].data(), nullptr, MPI_UINT64_T,
                        MPI_COMM_WORLD, opts);
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);  // see "Memory" above
  mallopt(M_TRIM_THRESHOLD, 64 * 1024);
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const bench_options o = parse(argc, argv);
    const int ranks = world_size();
    hwm_resets = reset_hwm();
    int everywhere = hwm_resets ? 1 : 0, agreed = 0;
    BASELINE_MPI_CHECK(MPI_Allreduce(&everywhere, &agreed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    hwm_resets = agreed == 1;
    warm_up(o);
    std::vector<case_result> results;
    for (std::int64_t size : o.sizes)
      for (int which : o.cases) {
        results.push_back(run_case(size, which, o));
        if (world_rank() == 0) {
          const case_result& r = results.back();
          std::fprintf(stderr, "  %s case %d:", size_name(size).c_str(), which);
          for (const auto& m : r.methods)
            if (m.ran) std::fprintf(stderr, " %s %.3f s %.1f MiB;", m.name.c_str(), m.time.median, m.hwm_rise / MiB);
          std::fprintf(stderr, "\n");
        }
      }
    if (world_rank() == 0) {
      json_writer json;
      json.begin_object();
      json.field("benchmark", "inplace_bench");
      json.field("ranks", ranks);
      json.field("reps", o.reps);
      json.field("element_bytes", 8);
      json.field("work_bytes", o.work_bytes);
      json.field("vmhwm_reset", hwm_resets);
      json.key("cases").begin_array();
      bool verified = true;
      std::int64_t worst_inplace_rise = 0;
      double worst_auto_time_ratio = 0, best_auto_time_ratio = 1e300;
      for (const case_result& r : results) {
        const method_result* mpi = r.get("mpi_alltoallv");
        json.begin_object();
        json.field("size_bytes", r.size_bytes);
        json.field("size", size_name(r.size_bytes));
        json.field("case", r.which);
        json.field("symmetric", r.symmetric);
        json.field("largest_total_bytes", r.largest_total_bytes);
        json.key("methods").begin_array();
        for (const method_result& m : r.methods) {
          json.begin_object();
          json.field("name", m.name);
          json.field("ran", m.ran);
          if (!m.note.empty()) json.field("note", m.note);
          if (m.ran) {
            verified = verified && m.wrong == 0;
            const bool in_place_method = m.name != "mpi_alltoallv" && m.name != "mpi_in_place";
            if (in_place_method) worst_inplace_rise = std::max(worst_inplace_rise, m.hwm_rise);
            if (m.name == ex::to_string(ex::inplace_algorithm::automatic)) {
              worst_auto_time_ratio = std::max(worst_auto_time_ratio, ratio(m.time.median, mpi->time.median));
              best_auto_time_ratio = std::min(best_auto_time_ratio, ratio(m.time.median, mpi->time.median));
            }
            json.field("algorithm", m.algorithm);
            if (!m.reason.empty()) json.field("reason", m.reason);
            json.field("seconds", m.time.median);
            json.field("best_seconds", m.time.best);
            json.array_field("rep_seconds", m.time.seconds);
            json.field("time_over_mpi_alltoallv", ratio(m.time.median, mpi->time.median));
            json.field("peak_rise_bytes", m.hwm_rise);
            json.field("peak_rise_over_mpi_alltoallv",
                       ratio(static_cast<double>(m.hwm_rise), static_cast<double>(mpi->hwm_rise)));
            json.field("capacity_bytes", m.capacity_bytes);
            write_per_rank(json, "bytes_sent", m.bytes_sent);
            write_per_rank(json, "bytes_received", m.bytes_received);
            write_per_rank(json, "messages_sent", m.messages);
            write_per_rank(json, "messages_received", m.messages_received);
            if (in_place_method) {
              // Called bytes_moved_locally before the statistics vocabulary (results in bench/results).
              write_per_rank(json, "bytes_local", m.bytes_local);
              write_per_rank(json, "metadata_bytes", m.metadata_bytes);
              json.field("work_bytes", m.work_bytes);
            }
            json.field("wrong_elements", m.wrong);
          }
          json.end_object();
        }
        json.end_array();
        json.end_object();
      }
      json.end_array();
      json.end_object();
      if (o.json_path.empty()) {
        std::cout << json.text() << "\n";
      } else {
        std::ofstream(o.json_path) << json.text() << "\n";
        std::printf("%-5s %4s %-13s %-9s %9s %8s %10s %8s %12s %9s %s\n", "size", "case", "method", "ran as", "time_s",
                    "t/mpi", "rise_MiB", "r/mpi", "sent_MiB_max", "msgs_max", "note");
        for (const case_result& r : results) {
          const method_result* mpi = r.get("mpi_alltoallv");
          for (const method_result& m : r.methods) {
            if (!m.ran) {
              std::printf("%-5s %4d %-13s %-9s %9s %8s %10s %8s %12s %9s %s\n", size_name(r.size_bytes).c_str(),
                          r.which, m.name.c_str(), "-", "-", "-", "-", "-", "-", "-", m.note.substr(0, 90).c_str());
              continue;
            }
            std::printf("%-5s %4d %-13s %-9s %9.4f %8.2f %10.2f %8.3f %12.2f %9lld\n", size_name(r.size_bytes).c_str(),
                        r.which, m.name.c_str(), m.algorithm.rfind("MPI", 0) == 0 ? "mpi" : m.algorithm.c_str(),
                        m.time.median, ratio(m.time.median, mpi->time.median), m.hwm_rise / MiB,
                        ratio(static_cast<double>(m.hwm_rise), static_cast<double>(mpi->hwm_rise)),
                        static_cast<double>(m.bytes_sent.max) / MiB, static_cast<long long>(m.messages.max));
          }
        }
      }
      std::printf(
          "SUMMARY inplace_bench (%d ranks, %zu size(s) x %zu case(s), work buffer %.0f MiB): in-place peak "
          "rise at most %.2f MiB per rank; auto takes %.2fx to %.2fx MPI_Alltoallv's time; verified %s\n",
          ranks, o.sizes.size(), o.cases.size(), o.work_bytes / MiB, worst_inplace_rise / MiB, best_auto_time_ratio,
          worst_auto_time_ratio, verified ? "yes" : "NO");
      if (!verified) status = 1;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } catch (const usage_requested& usage) {
    if (world_rank() == 0) print_usage(usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inplace_bench (rank %d): %s\n", world_rank(), e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
