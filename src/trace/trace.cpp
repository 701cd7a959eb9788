// SPDX-License-Identifier: BSD-3-Clause
// Call tracing (redist/trace.hpp, recorder.hpp): per-process totals by entry point and path, the calls file, and
// the summary gathered over a communicator.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mpi/checked.hpp"
#include "recorder.hpp"
#include "redist/error.hpp"
#include "redist/names.hpp"

namespace redist {
namespace trace_detail {

namespace {

trace::trace_mode mode_from_environment() {
  const char* text = std::getenv("REDIST_TRACE");
  if (text == nullptr || *text == '\0') return trace::trace_mode::off;
  try {
    return parse_name<trace::trace_mode>(text);
  } catch (const error& e) {
    std::fprintf(stderr, "redist: REDIST_TRACE: %s; tracing stays off\n", e.what());
    return trace::trace_mode::off;
  }
}

struct process_state {
  // Rows by (entry point, path as the table shows it).
  std::map<std::pair<std::string, std::string>, trace::entry_totals> rows;
  std::FILE* calls_file = nullptr;
  bool calls_file_failed = false;
  std::int64_t sequence = 0;  // this rank's calls so far, the calls file's "seq"
};

process_state& state() {
  static process_state s;
  return s;
}

thread_local call_scope* innermost = nullptr;
thread_local int plan_depth = 0;

std::string shown_path(const char* path, const char* strategy) {
  return strategy != nullptr ? std::string(path) + "/" + strategy : std::string(path);
}

trace::entry_totals& row(const char* entry_point, const char* path, const char* strategy) {
  auto key = std::make_pair(std::string(entry_point), shown_path(path, strategy));
  auto [it, made] = state().rows.try_emplace(key);
  if (made) it->second.entry_point = key.first, it->second.path = key.second;
  return it->second;
}

int world_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  int rank = -1;
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// The calls file of this rank, opened on its first line; null (reported once) when it cannot be written.
std::FILE* calls_file() {
  process_state& s = state();
  if (s.calls_file != nullptr || s.calls_file_failed) return s.calls_file;
  const char* pattern = std::getenv("REDIST_TRACE_FILE");
  std::string path = pattern != nullptr && *pattern != '\0' ? pattern : "redist-trace.%r.jsonl";
  const std::string rank = std::to_string(world_rank());
  for (std::size_t at = path.find("%r"); at != std::string::npos; at = path.find("%r", at + rank.size()))
    path.replace(at, 2, rank);
  s.calls_file = std::fopen(path.c_str(), "w");
  if (s.calls_file == nullptr) {
    s.calls_file_failed = true;
    std::fprintf(stderr, "redist: REDIST_TRACE=calls: cannot write the trace file '%s' (%s); calls are not written\n",
                 path.c_str(), std::strerror(errno));
  }
  return s.calls_file;
}

void write_line(const char* entry_point, const char* path, const char* strategy, const char* plan_cache,
                double plan_seconds, double execution_seconds, double seconds, std::int64_t bytes,
                std::int64_t messages, const std::string& arguments) {
  std::FILE* file = calls_file();
  if (file == nullptr) return;
  json_fields line;
  line.number("rank", static_cast<std::int64_t>(world_rank()));
  line.number("seq", state().sequence);
  line.text("entry", entry_point);
  line.text("path", path);
  if (strategy != nullptr) line.text("strategy", strategy);
  if (plan_cache != nullptr) line.text("plan_cache", plan_cache);
  line.number("plan_seconds", plan_seconds);
  line.number("execution_seconds", execution_seconds);
  line.number("seconds", seconds);
  line.number("bytes_sent", bytes);
  line.number("messages_sent", messages);
  std::fprintf(file, "{%s,\"args\":{%s}}\n", line.str().c_str(), arguments.c_str());
}

// A row as one line of tab-separated fields, for the gather (entry points and paths hold no tabs or newlines).
std::string serialized(const std::vector<trace::entry_totals>& rows) {
  std::string out;
  char numbers[256];
  for (const auto& r : rows) {
    std::snprintf(numbers, sizeof numbers,
                  "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%.17g\t%.17g\t%" PRId64 "\t%" PRId64 "\n", r.calls,
                  r.plan_cache_hits, r.plans_made, r.plan_seconds, r.execution_seconds, r.bytes_sent, r.messages_sent);
    out += r.entry_point + "\t" + r.path + numbers;
  }
  return out;
}

struct merged_row {
  trace::entry_totals totals;
  int ranks = 0;
};

void merge(const std::string& text, std::map<std::pair<std::string, std::string>, merged_row>& rows) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    trace::entry_totals r;
    std::getline(fields, r.entry_point, '\t');
    std::getline(fields, r.path, '\t');
    fields >> r.calls >> r.plan_cache_hits >> r.plans_made >> r.plan_seconds >> r.execution_seconds >> r.bytes_sent >>
        r.messages_sent;
    merged_row& m = rows[{r.entry_point, r.path}];
    if (m.ranks == 0) m.totals.entry_point = r.entry_point, m.totals.path = r.path;
    ++m.ranks;
    m.totals.calls = std::max(m.totals.calls, r.calls);
    m.totals.plan_cache_hits = std::max(m.totals.plan_cache_hits, r.plan_cache_hits);
    m.totals.plans_made = std::max(m.totals.plans_made, r.plans_made);
    m.totals.plan_seconds = std::max(m.totals.plan_seconds, r.plan_seconds);
    m.totals.execution_seconds = std::max(m.totals.execution_seconds, r.execution_seconds);
    m.totals.bytes_sent += r.bytes_sent;
    m.totals.messages_sent += r.messages_sent;
  }
}

std::string bytes_text(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string table(const std::map<std::pair<std::string, std::string>, merged_row>& rows, int ranks,
                  const std::string& where) {
  std::string out = "redist trace (REDIST_TRACE=" + std::string(trace::to_string(current_mode)) +
                    "): " + std::to_string(ranks) + (ranks == 1 ? " rank of " : " ranks of ") + where +
                    "; calls, plan-cache hits and plans made per rank (max over ranks), seconds the slowest rank's "
                    "total, bytes and messages sent summed over ranks\n";
  char line[512];
  const char* format = "%-16s %-26s %5s %9s %11s %11s %9s %11s %11s %9s\n";
  std::snprintf(line, sizeof line, format, "entry point", "path", "ranks", "calls", "cache hits", "plans made",
                "plan s", "execute s", "bytes sent", "messages");
  out += line;
  if (rows.empty()) out += "(no calls traced)\n";
  for (const auto& [key, m] : rows) {
    const trace::entry_totals& r = m.totals;
    const bool moved = r.path.compare(0, 6, "redist") == 0;  // bytes are known on redist's own paths only
    char plan[32], execute[32];
    std::snprintf(plan, sizeof plan, "%.4f", r.plan_seconds);
    std::snprintf(execute, sizeof execute, "%.4f", r.execution_seconds);
    std::snprintf(line, sizeof line, format, r.entry_point.c_str(), r.path.c_str(), std::to_string(m.ranks).c_str(),
                  std::to_string(r.calls).c_str(), moved ? std::to_string(r.plan_cache_hits).c_str() : "-",
                  moved ? std::to_string(r.plans_made).c_str() : "-", moved ? plan : "-", execute,
                  moved ? bytes_text(r.bytes_sent).c_str() : "-",
                  moved ? std::to_string(r.messages_sent).c_str() : "-");
    out += line;
  }
  return out;
}

}  // namespace

trace::trace_mode current_mode = mode_from_environment();

// ---- json_fields

void json_fields::key(const char* name) {
  if (!text_.empty()) text_ += ',';
  text_ += '"';
  text_ += name;
  text_ += "\":";
}

void json_fields::number(const char* name, std::int64_t value) {
  key(name);
  text_ += std::to_string(value);
}

void json_fields::number(const char* name, double value) {
  key(name);
  if (!std::isfinite(value)) {
    text_ += "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);  // seconds: nanoseconds are beyond any clock's meaning here
  text_ += text;
}

void json_fields::text(const char* name, const std::string& value) {
  key(name);
  text_ += '"';
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      text_ += '\\';
      text_ += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
      text_ += escaped;
    } else {
      text_ += c;
    }
  }
  text_ += '"';
}

void json_fields::integers(const char* name, const int* values, int count) {
  key(name);
  if (values == nullptr) {
    text_ += "null";
    return;
  }
  text_ += '[';
  for (int i = 0; i < count; ++i) text_ += (i ? "," : "") + std::to_string(values[i]);
  text_ += ']';
}

void json_fields::integers(const char* name, const std::int64_t* values, int count) {
  key(name);
  text_ += '[';
  for (int i = 0; i < count; ++i) text_ += (i ? "," : "") + std::to_string(values[i]);
  text_ += ']';
}

void json_fields::reals(const char* name, const double* values, int count) {
  key(name);
  text_ += '[';
  for (int i = 0; i < count; ++i) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", values[i]);
    text_ += (i ? "," : "");
    text_ += std::isfinite(values[i]) ? text : "null";
  }
  text_ += ']';
}

// ---- call_scope

void call_scope::open(const char* entry_point) noexcept {
  active_ = linked_ = true;
  entry_point_ = entry_point;
  outer_ = innermost;
  innermost = this;
  start_ = clock::now();
}

void call_scope::close() noexcept {
  if (innermost == this) innermost = outer_;
  if (!active_) return;
  try {
    const double seconds = seconds_since(start_);
    trace::entry_totals& r = row(entry_point_, path_, strategy_);
    ++r.calls;
    if (looked_up_) (hit_ ? r.plan_cache_hits : r.plans_made) += 1;
    r.plan_seconds += plan_seconds_;
    r.execution_seconds += execution_seconds_;
    r.bytes_sent += bytes_;
    r.messages_sent += messages_;
    if (writing_calls())
      write_line(entry_point_, path_, strategy_, looked_up_ ? (hit_ ? "hit" : "miss") : nullptr, plan_seconds_,
                 execution_seconds_, seconds, bytes_, messages_, arguments_.str());
    ++state().sequence;
  } catch (...) {
    // Tracing never fails a call (memory for a row or a line ran out: that call goes unrecorded).
  }
}

void call_scope::path(const char* path, const char* strategy) {
  path_ = path;
  strategy_ = strategy;
}

void call_scope::plan_cache(bool hit, double seconds) {
  looked_up_ = true;
  hit_ = hit;
  plan_seconds_ += seconds;
}

void call_scope::execution(double seconds, std::int64_t bytes_sent, std::int64_t messages_sent) {
  execution_seconds_ += seconds;
  bytes_ += bytes_sent;
  messages_ += messages_sent;
}

call_scope* current() { return innermost; }

// ---- C++ plans

plan_event::plan_event() noexcept {
  if (!on()) return;
  active_ = true;
  outermost_ = plan_depth++ == 0;
  start_ = clock::now();
}

plan_event::~plan_event() {
  if (active_) --plan_depth;
}

void plan_event::made(const char* kind, const char* strategy) {
  if (!active_ || !outermost_ || innermost != nullptr) return;  // inside an entry point: its plan cache counts
  try {
    trace::entry_totals& r = row(kind, "redist", strategy);
    ++r.plans_made;
    r.plan_seconds += seconds_since(start_);
  } catch (...) {
  }
}

void plan_event::executed(const char* kind, const char* strategy, std::int64_t bytes_sent, std::int64_t messages_sent) {
  if (active_) executed(kind, strategy, bytes_sent, messages_sent, seconds_since(start_));
}

void plan_event::executed(const char* kind, const char* strategy, std::int64_t bytes_sent, std::int64_t messages_sent,
                          double seconds) {
  if (!active_ || !outermost_) return;
  if (innermost != nullptr) {
    innermost->execution(seconds, bytes_sent, messages_sent);
    innermost->path("redist", strategy);
    return;
  }
  try {
    trace::entry_totals& r = row(kind, "redist", strategy);
    ++r.calls;
    r.execution_seconds += seconds;
    r.bytes_sent += bytes_sent;
    r.messages_sent += messages_sent;
    if (writing_calls()) {
      json_fields none;
      write_line(kind, "redist", strategy, nullptr, 0, seconds, seconds, bytes_sent, messages_sent, none.str());
    }
    ++state().sequence;
  } catch (...) {
  }
}

void at_finalize() noexcept {
  static bool done = false;
  if (done || !on()) return;
  done = true;
  try {
    const std::string text = trace::summary(MPI_COMM_WORLD);
    if (!text.empty()) std::fputs(text.c_str(), stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist: the trace summary could not be gathered: %s\n", e.what());
  }
  trace::flush();
}

}  // namespace trace_detail

namespace trace {

using trace_detail::current_mode;
using trace_detail::state;

trace_mode mode() { return current_mode; }
void set_mode(trace_mode m) { current_mode = m; }

std::vector<entry_totals> totals() {
  std::vector<entry_totals> out;
  for (const auto& [key, r] : state().rows) out.push_back(r);
  return out;
}

void reset() { state().rows.clear(); }

std::string summary(MPI_Comm comm) {
  int rank = 0, size = 1;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    throw error("redist::trace::summary: not a valid communicator");
  const std::string mine = trace_detail::serialized(totals());
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  if (mpi::gather_yielding(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    throw error("redist::trace::summary: MPI_Gather failed");
  std::string all;
  if (rank == 0) {
    std::int64_t total = 0;
    for (int r = 0; r < size; ++r) offsets[r] = static_cast<int>(total), total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  if (mpi::gatherv_yielding(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                            comm) != MPI_SUCCESS)
    throw error("redist::trace::summary: MPI_Gatherv failed");
  if (rank != 0) return {};
  std::map<std::pair<std::string, std::string>, trace_detail::merged_row> rows;
  trace_detail::merge(all, rows);
  int world = MPI_UNEQUAL;
  MPI_Comm_compare(comm, MPI_COMM_WORLD, &world);
  return trace_detail::table(rows, size, world == MPI_IDENT ? "MPI_COMM_WORLD" : "the communicator");
}

void flush() {
  if (state().calls_file != nullptr) std::fflush(state().calls_file);
}

}  // namespace trace
}  // namespace redist
