// SPDX-License-Identifier: BSD-3-Clause
// Which way a drop-in call goes: the state kept per context, the override variables, a class's agreement.
// See delegation.hpp.
#include "delegation.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <string>

#include "blacs.hpp"
#include "machine/host.hpp"
#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"

namespace redist::scalapack::delegation {

namespace {

// At most this many signatures per context (a table of twice as many slots, 128 KiB).
constexpr std::size_t checked_signatures_bound = 4096;

bool same(const signature_digest& x, const signature_digest& y) { return x.low == y.low && x.high == y.high; }
bool empty(const signature_digest& x) { return x.low == 0 && x.high == 0; }

}  // namespace

bool checked_signatures::make_room() noexcept {
  if (insertions_ >= checked_signatures_bound) return true;  // insert() forgets all first
  if (2 * (insertions_ + 1) <= slots_.size()) return true;
  try {
    std::vector<signature_digest> grown(std::max<std::size_t>(64, 2 * slots_.size()));
    const std::size_t mask = grown.size() - 1;
    for (const signature_digest& d : slots_) {
      if (empty(d)) continue;
      std::size_t i = d.low & mask;
      while (!empty(grown[i])) i = (i + 1) & mask;
      grown[i] = d;
    }
    slots_.swap(grown);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void checked_signatures::insert(const signature_digest& digest) noexcept {
  if (insertions_ >= checked_signatures_bound) {
    std::fill(slots_.begin(), slots_.end(), signature_digest{});
    insertions_ = 0;
  }
  ++insertions_;  // counted even when already there, so that every process forgets at the same call
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = digest.low & mask;
  while (!empty(slots_[i])) {
    if (same(slots_[i], digest)) return;
    i = (i + 1) & mask;
  }
  slots_[i] = digest;
}

namespace {

const mpi::comm_attribute<context_state>& state_attribute() {
  static const mpi::comm_attribute<context_state> attribute;
  return attribute;
}

std::size_t next_recent = 0;

}  // namespace

context_state::~context_state() {
  for (recent_state& r : recent_states)
    if (r.state == this) r = recent_state{};
}

context_state* find_state(const int* desca) {
  if (desca == nullptr) return nullptr;
  const int context = desca[1];
  if (!blacs::holds_me(context)) return nullptr;
  try {
    context_state* state = &state_attribute().get(blacs::communicator(context), [] { return context_state{}; });
    recent_states[next_recent] = recent_state{context, state};
    next_recent = (next_recent + 1) % recent_states.size();
    return state;
  } catch (const std::exception&) {
    return nullptr;  // out of memory, or MPI refused the attribute
  }
}

void read_override(const size_rule& rule) {
  override_cache& c = *rule.cache;
  c = override_cache{};
  c.environment = environ;
  const std::size_t name_length = std::strlen(rule.variable);
  const char* text = nullptr;
  for (char** e = c.environment; e != nullptr && *e != nullptr; ++e, ++c.entries)
    if (c.index < 0 && std::strncmp(*e, rule.variable, name_length) == 0 && (*e)[name_length] == '=') {
      c.index = static_cast<std::ptrdiff_t>(c.entries);
      c.entry = *e;
      text = *e + name_length + 1;
    }
  c.last = c.entries > 0 ? c.environment[c.entries - 1] : nullptr;
  c.read = true;
  if (text == nullptr || *text == '\0') return;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) {
    static std::mutex lock;
    static std::set<std::string> warned;  // once per variable and process, not per call
    const std::lock_guard<std::mutex> guard(lock);
    if (warned.insert(rule.variable).second)
      std::fprintf(stderr,
                   "redist: %s=\"%s\" is not a non-negative integer (%s); using the default (learned per class of "
                   "calls)\n",
                   rule.variable, text, rule.unit);
    return;
  }
  c.bound = value;
}

void decide(learned_class& cls, int context) {
  double slowest[2] = {0, 0};
  REDIST_MPI_CHECK(mpi::allreduce_yielding(cls.fastest, slowest, 2, MPI_DOUBLE, MPI_MAX, blacs::communicator(context)));
  cls.decided = slowest[0] < learned_margin * slowest[1] ? 0 : 1;
}

bool cores_shared(int context) { return machine::hosts_oversubscribed(blacs::communicator(context)); }

double median_of_recent(const learned_class& cls) {
  std::array<double, learned_class::watch_window> sorted = cls.recent;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  return sorted[sorted.size() / 2];
}

bool conclude_check(learned_class& cls, double slowest_median, double slowest_scalapack) noexcept {
  if (slowest_median > learned_class::recheck_factor * slowest_scalapack) {
    cls.decided = 1;
    return false;
  }
  cls.watched = 0;
  cls.next_check = std::min(2 * cls.next_check, learned_class::last_check_interval);
  return true;
}

bool check(learned_class& cls, int context) {
  const double mine[2] = {median_of_recent(cls), cls.fastest[1]};
  double slowest[2] = {0, 0};
  REDIST_MPI_CHECK(mpi::allreduce_yielding(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, blacs::communicator(context)));
  return conclude_check(cls, slowest[0], slowest[1]);
}

trial_timer::~trial_timer() {
  if (record_ == nullptr) return;
  const double seconds = std::max(0.0, trace_detail::seconds_since(start_) - left_out_);
  *record_ = keep_fastest_ && *record_ >= 0 ? std::min(*record_, seconds) : seconds;
}

bool can_remember(context_state* state, const way& w) noexcept {
  return state != nullptr && w.delegate && w.trying == nullptr && state->seen.make_room();
}

bool block_aligned(int i, int j, std::int64_t mb, std::int64_t nb) {
  return (i - 1) % std::max<std::int64_t>(mb, 1) == 0 && (j - 1) % std::max<std::int64_t>(nb, 1) == 0;
}

std::int64_t power_of_two_at_least(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

}  // namespace redist::scalapack::delegation
