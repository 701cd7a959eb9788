// Which way a drop-in call goes: the state kept per context, the override variables, a class's agreement.
// See delegation.hpp.
#include "delegation.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>
#include <string>

#include "blacs.hpp"
#include "../mpi/checked.hpp"
#include "../mpi/comm_attribute.hpp"

namespace redist::scalapack::delegation {

std::size_t signature_hash::operator()(const call_signature& s) const noexcept {
  // FNV-1a in four independent lanes (the words in turn), so that the multiplies overlap: looked up on every
  // delegated call, where one chain of 52 dependent multiplies was most of the drop-in's cost.
  std::uint64_t h[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x1b3cbf29ce484222ull, 0x9ce484222325cbf2ull};
  static_assert(std::tuple_size<call_signature>::value % 4 == 0, "whole lanes");
  for (std::size_t i = 0; i < s.size(); i += 4)
    for (std::size_t lane = 0; lane < 4; ++lane)
      h[lane] = (h[lane] ^ static_cast<std::uint64_t>(s[i + lane])) * 0x100000001b3ull;
  return static_cast<std::size_t>(h[0] ^ (h[1] >> 1) ^ (h[2] << 3) ^ (h[3] >> 7));
}

namespace {

constexpr std::size_t checked_signatures_bound = 4096;

const mpi::comm_attribute<context_state>& state_attribute() {
  static const mpi::comm_attribute<context_state> attribute;
  return attribute;
}

}  // namespace

context_state* state_of(const int* desca) {
  if (desca == nullptr || !blacs::holds_me(desca[1])) return nullptr;
  try {
    return &state_attribute().get(blacs::communicator(desca[1]), [] { return context_state{}; });
  } catch (const std::exception&) {
    return nullptr;  // out of memory, or MPI refused the attribute
  }
}

std::int64_t override_bound(const size_rule& rule) {
  const char* text = std::getenv(rule.variable);
  if (text == nullptr || *text == '\0') return -1;
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
    return -1;
  }
  return value;
}

void decide(learned_class& cls, MPI_Comm comm) {
  double slowest[2] = {0, 0};
  REDIST_MPI_CHECK(MPI_Allreduce(cls.fastest, slowest, 2, MPI_DOUBLE, MPI_MAX, comm));
  cls.decided = slowest[1] < slowest[0] ? 1 : 0;
}

trial_timer::~trial_timer() {
  if (cls_ == nullptr) return;
  const double seconds = trace_detail::seconds_since(start_);
  double& fastest = cls_->fastest[way_];
  fastest = fastest < 0 ? seconds : std::min(fastest, seconds);
}

void remember(context_state& state, const call_signature& signature) noexcept {
  if (state.seen.size() >= checked_signatures_bound) state.seen.clear();
  try {
    state.seen.insert(signature);
  } catch (const std::exception&) {
    // not remembered: checked again next time
  }
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
