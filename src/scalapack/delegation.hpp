// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Which way a drop-in call goes (internal): redist's own path, or the ScaLAPACK routine the drop-in found after
// itself in the link chain. Shared by p?gemm (gemm.cpp) and p?tran* (tran.cpp).
//
// The way is decided from arguments PBLAS requires to be the same on every process and from what earlier calls of
// the call's class measured, in the same order on every process, so every process decides alike without a
// collective but one per class:
// - the routine's override variable set (REDIST_PDGEMM_DELEGATE_BELOW, REDIST_PTRAN_DELEGATE_BELOW): calls of a
//   smaller size than it says go to ScaLAPACK, the rest to redist (0: redist for all);
// - otherwise below `always_below` to ScaLAPACK, from `learned_below` on to redist, and between learned per class
//   (each routine says what its class is): the class's first four calls alternate redist and ScaLAPACK, and at its
//   fifth the processes agree (one allreduce) on the way whose fastest call was faster on the slowest process,
//   which every later call of the class takes (the ski-rental rule of the plan cache, both ways paid). A trial
//   times the way's own work: ScaLAPACK's call, or redist's agreement and execution without its planning (paid once
//   per signature, where a class's calls in a solver repeat signatures). Where a host runs more of the context's
//   processes than it has CPUs, calls between go to ScaLAPACK, unlearned. A class decided for redist is checked
//   again now and then and goes to ScaLAPACK where its calls turned out much slower than ScaLAPACK's trials
//   (learned_class).
// What PBLAS requires is checked where a call is first seen: each signature (every argument but the arrays) goes
// through redist's own argument agreement on every process; a signature every process passed, and on which all of
// them delegate for good (not a trial), is remembered on the context's communicator and its later calls go to
// ScaLAPACK at once, with no MPI call of redist's. (A process that passes a remembered signature while another passes
// a new one is not caught: they then make different calls.)
//
// A delegated call is on the path of small products inside solvers, between other work that leaves the caches cold:
// what it reads is kept to a few cache lines (the state of the last contexts seen, found without asking BLACS or
// MPI; a 16-byte digest of the signature in a flat table).
#include <mpi.h>
#include <unistd.h>  // environ

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <vector>

#include "redist/scalapack/descriptor.hpp"
#include "trace/recorder.hpp"

namespace redist::scalapack::delegation {

// A signature's and a class's first word, so that routines never share one.
enum class routine_family : std::int64_t { gemm = 1, tran = 2 };

// What the table of checked signatures keeps of a call's signature (every argument but the arrays): 128 bits of
// hash (two signatures that differ in one word never share it; otherwise a chance of 2^-128), and the override in
// force, so that a signature remembered under REDIST_P?_DELEGATE_BELOW is not taken for one remembered without it.
struct signature_digest {
  std::uint64_t low = 0, high = 0;
};

// Hashes a signature word by word, as each routine gives its arguments (the first word its routine_family and
// element type): no array of the words is written, since on a delegated call that array's cache lines were most of
// the cost. FNV-1a in four independent lanes (the words in turn), so that the multiplies overlap; each step of a lane
// is a bijection of its state for a given word, so signatures that differ in one word differ in that lane's state,
// and both halves of the digest depend on every lane through bijections of it.
class signature_builder {
 public:
  explicit signature_builder(std::int64_t override_bound)
      : h_{0xcbf29ce484222325ull, 0x84222325cbf29ce4ull ^ static_cast<std::uint64_t>(override_bound),
           0x1b3cbf29ce484222ull, 0x9ce484222325cbf2ull} {}
  void add(std::int64_t word) {
    std::uint64_t& h = h_[words_++ & 3];
    h = (h ^ static_cast<std::uint64_t>(word)) * 0x100000001b3ull;
  }
  // A descriptor as PBLAS reads it (11 entries for DTYPE 2, 9 for 1, else 2), in 12 words.
  void add_descriptor(const int* d) {
    const int length = d[0] == block_cyclic_2d_inb ? descriptor_length
                       : d[0] == block_cyclic_2d   ? descriptor_length_1
                                                   : 2;
    for (int i = 0; i <= descriptor_length; ++i) add(i < length ? d[i] : 0);
  }
  signature_digest digest() const;  // below

 private:
  std::uint64_t h_[4];
  unsigned words_ = 0;
};

// The signatures checked on a context: open addressing over a power-of-two table of digests (one cache line per
// lookup). Bounded: at the bound all are forgotten at once, at the same call on every process (insertions are
// counted, the same on every process), and checked again.
class checked_signatures {
 public:
  bool contains(const signature_digest& digest) const noexcept {
    if (slots_.empty()) return false;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = digest.low & mask;; i = (i + 1) & mask) {  // never full: at most half the slots used
      if (slots_[i].low == digest.low && slots_[i].high == digest.high) return true;
      if (slots_[i].low == 0 && slots_[i].high == 0) return false;
    }
  }
  // Whether one more signature can be inserted without allocating (grows the table if needed; false when that
  // failed). Asked before the agreement, so that every process knows whether all of them can remember.
  bool make_room() noexcept;
  void insert(const signature_digest& digest) noexcept;  // after make_room() said yes

 private:
  std::vector<signature_digest> slots_;  // {0, 0}: empty (a digest never is)
  std::size_t insertions_ = 0;
};

// What a learned class has measured on this process, and its decision once made.
//
// Two trials a way can mislead on a loaded machine (a process descheduled in the trials of one way), so a
// class decided for redist keeps timing its calls and is checked after 8, then 16, 32, ... (at most 1024) more
// calls: the processes agree (one allreduce) on the slowest process's median of its last `watch_window` calls and on
// the slowest process's fastest ScaLAPACK call so far; the class goes to ScaLAPACK for good when the median is over
// `recheck_factor` times that, and otherwise the checking call is one more trial of ScaLAPACK (so that a trial
// slowed by chance is outdone). Only this way round: a class wrongly delegated costs ScaLAPACK's time, which the
// drop-in is never to exceed, and watching it would add collectives to delegated calls.
struct learned_class {
  static constexpr int watch_window = 8;
  static constexpr int last_check_interval = 1024;
  static constexpr double recheck_factor = 2.0;
  int calls = 0;
  double fastest[2] = {-1, -1};   // this process's fastest call through redist [0] and ScaLAPACK [1] (-1: none yet)
  int decided = -1;               // -1: still trying; 0: redist; 1: ScaLAPACK
  int watched = 0;                // calls through redist since the decision or the last check (alike everywhere)
  int next_check = watch_window;  // the value of `watched` at which the next check is due
  std::array<double, watch_window> recent{};  // this process's times of its last watched calls (slot watched % 8)
};

// The median of a class's recent times (the upper of the two middle ones).
double median_of_recent(const learned_class& cls);
// A check's conclusion from the agreed values (the slowest process's median and fastest ScaLAPACK call): the class
// goes to ScaLAPACK (false), or stays with redist, its next check twice as far (up to last_check_interval), and
// the checking call is a trial of ScaLAPACK (true). The same on every process, given the same agreed values.
bool conclude_check(learned_class& cls, double slowest_median, double slowest_scalapack) noexcept;

// What a context's communicator keeps: the signatures checked and the learned classes of every routine. Found by
// state_of, which keeps the last few it found (a process-wide list, as BLACS itself is used by one thread): the
// state forgets itself there when BLACS frees the context's communicator (Cblacs_gridexit).
struct context_state {
  context_state() = default;
  context_state(context_state&&) = default;
  context_state& operator=(context_state&&) = delete;
  ~context_state();
  checked_signatures seen;
  std::map<std::vector<std::int64_t>, learned_class> classes;
};

// The states state_of found last, by context handle: a delegated call finds its state here without a BLACS or MPI
// call. An entry goes when its state is deleted with its communicator (BLACS frees a context's communicators when
// the context exits, before it can give the handle to a new one).
struct recent_state {
  int context = -1;
  context_state* state = nullptr;
};
inline std::array<recent_state, 4> recent_states;

// The state of the context in DESCA[1] (on its communicator), or null where there is none to keep: no ScaLAPACK
// to delegate to, a context this process is not on, or the attribute could not be had (then fixed sizes decide
// and every call is checked).
context_state* find_state(const int* desca);               // state_of without recent_states
inline context_state* recent_state_of(const int* desca) {  // recent_states only (null: not there)
  if (desca == nullptr) return nullptr;
  for (const recent_state& r : recent_states)
    if (r.state != nullptr && r.context == desca[1]) return r.state;
  return nullptr;
}
inline context_state* state_of(const int* desca) {
  context_state* state = recent_state_of(desca);
  return state != nullptr ? state : find_state(desca);
}

// An override variable's value as last read, and where it stood in `environ`: read again only when the environment
// changed. A delegated call reads three words of `environ`'s array (its end, its last entry and the variable's
// entry), not every variable's name (getenv: a third of a cold delegated call's cost) nor the whole array (with 35
// variables a quarter of what remained). setenv and putenv of a new variable append to the array (its end moves;
// realloc may move `environ`), of a set one replace its entry; unsetenv moves the later entries down (the last
// entry moves). What this misses: a string given to putenv and then changed in place, or an array freed
// (clearenv, a program's own) and another allocated at the same address between two calls that still holds the
// old words where it was read; at worst a call then takes the other way (both give ScaLAPACK's results).
struct override_cache {
  bool read = false;
  char** environment = nullptr;  // `environ` when read
  std::size_t entries = 0;       // its length then
  std::ptrdiff_t index = -1;     // the variable's entry (-1: unset)
  const char* entry = nullptr;
  const char* last = nullptr;  // the array's last entry (null: empty)
  std::int64_t bound = -1;
};

// The routine's sizes: `variable` is its override, `unit` what its size counts (for the message about a bad
// value); calls smaller than always_below go to ScaLAPACK, from learned_below on to redist. `cache` holds the
// variable's value (one per routine, never shared).
struct size_rule {
  const char* variable;
  const char* unit;
  std::int64_t always_below;
  std::int64_t learned_below;
  override_cache* cache;
};

// The bound the override variable sets, or -1 when unset (a bad value is said once per process, then ignored).
void read_override(const size_rule& rule);  // fills rule.cache from the environment
inline std::int64_t override_bound(const size_rule& rule) {
  const override_cache& c = *rule.cache;
  char** const environment = environ;
  const bool unchanged = c.read && environment == c.environment &&
                         (environment == nullptr || (environment[c.entries] == nullptr &&
                                                     (c.entries == 0 || environment[c.entries - 1] == c.last) &&
                                                     (c.index < 0 || environment[c.index] == c.entry)));
  if (!unchanged) read_override(rule);  // per call in effect: a program (or test) may set it between calls
  return c.bound;
}

// Agrees a class's decision once both ways have had their trials (collective over the context's communicator).
void decide(learned_class& cls, int context);
// Whether a host runs more processes of the context than it has CPUs (collective over the context's communicator
// the first time, cached on it): a call's time there is mostly when its processes got a core, which tells neither
// way apart (a 128 x 128 transpose at 4 processes on 2 cores timed 40 us to 4 ms), so classes are not learned: they
// go to ScaLAPACK, which the drop-in is then not slower than.
bool cores_shared(int context);
// A check of a class decided for redist (collective over the context's communicator): conclude_check on the agreed
// values.
bool check(learned_class& cls, int context);
// A learned class's first calls alternate, redist first (so that neither way has all the cold first calls).
constexpr int trials_each_way = 2;
// A class goes to redist only where redist's fastest trial beat ScaLAPACK's by this factor on the slowest process:
// two trials a way read a few per cent either way by chance, and a class handed to ScaLAPACK costs exactly its time
// while one given to redist by chance costs up to that chance more (the tenth replay run, bench/results/replay.md:
// in-place classes at 1.05x-1.11x where the trials had picked redist).
constexpr double learned_margin = 0.95;

// The way a call goes.
struct way {
  bool delegate = false;              // to ScaLAPACK
  bool checked = false;               // a signature remembered: straight to ScaLAPACK, no agreement
  learned_class* trying = nullptr;    // the class whose trial this call is (timed by a trial_timer), or null
  learned_class* watching = nullptr;  // the class decided for redist whose call this is (timed too), or null
  int recent_slot = 0;                // where in watching->recent this call's time goes
  signature_digest digest;            // the signature's, under the override in force (with a state)
};

// The way this call goes. fewer(limit) says whether the call's size is below `limit`; class_of_call() gives its
// class (null: none to learn in); digest_of(limit) the signature's digest under the override `limit` (asked only
// with a state). A learned class's decision is agreed over the context's communicator (collective).
template <class Fewer, class ClassOf, class DigestOf>
way choose_way(const size_rule& rule, Fewer&& fewer, ClassOf&& class_of_call, context_state* state,
               DigestOf&& digest_of, int context) {
  way w;
  const std::int64_t limit = override_bound(rule);
  if (state != nullptr) {
    w.digest = digest_of(limit);
    if (state->seen.contains(w.digest)) {  // remembered: every process delegated it for good at its first call
      w.delegate = w.checked = true;
      return w;
    }
  }
  if (limit >= 0) {
    w.delegate = limit > 0 && fewer(limit);
  } else if (rule.always_below > 0 && fewer(rule.always_below)) {
    w.delegate = true;
  } else if (fewer(rule.learned_below)) {
    if (learned_class* cls = class_of_call()) {
      if (cls->decided < 0 && cls->calls == 0 && cores_shared(context)) cls->decided = 1;
      if (cls->decided < 0 && cls->calls >= 2 * trials_each_way) decide(*cls, context);
      if (cls->decided == 0 && cls->watched >= cls->next_check && check(*cls, context)) {
        w.trying = cls;  // still redist's: this call one more trial of ScaLAPACK
        w.delegate = true;
      } else if (cls->decided == 0) {
        w.watching = cls;
        w.recent_slot = cls->watched++ % learned_class::watch_window;
      } else if (cls->decided == 1) {
        w.delegate = true;
      } else {
        w.trying = cls;
        w.delegate = cls->calls++ % 2 == 1;
      }
    }
  }
  return w;
}

// A trial's or a watched call's time on this process, whichever way the call ends (nothing when the call is
// neither), less what leave_out() is told: planning, paid once per signature and not per call.
class trial_timer {
 public:
  explicit trial_timer(const way& w)
      : record_(w.trying     ? &w.trying->fastest[w.delegate ? 1 : 0]
                : w.watching ? &w.watching->recent[static_cast<std::size_t>(w.recent_slot)]
                             : nullptr),
        keep_fastest_(w.trying != nullptr),
        start_(record_ ? trace_detail::clock::now() : trace_detail::clock::time_point{}) {}
  trial_timer(const trial_timer&) = delete;
  trial_timer& operator=(const trial_timer&) = delete;
  ~trial_timer();
  void start_now() {
    if (record_ != nullptr) start_ = trace_detail::clock::now();
  }
  void leave_out(double seconds) { left_out_ += seconds; }

 private:
  double* record_;     // where the time goes: the way's fastest (a trial) or the watched call's slot of recent
  bool keep_fastest_;  // a trial: the least of the times so far (negative: none yet)
  trace_detail::clock::time_point start_;
  double left_out_ = 0;
};

// The drop-in's fast path, before anything else (tracing off): whether the call's signature is remembered on its
// context (as choose_way's first step), so that the call goes to ScaLAPACK from a few lines of code and data.
template <class DigestOf>
bool remembered(const context_state* state, const size_rule& rule, DigestOf&& digest_of) {
  return state != nullptr && state->seen.contains(digest_of(override_bound(rule)));
}

// Whether this call's signature can be remembered if every process delegates it: a decision for good (not a
// trial), and room in the table (made now, before the agreement tells every process whether all have it).
bool can_remember(context_state* state, const way& w) noexcept;

// A process's `delegates` word in the argument agreement: 0 redist, 1 ScaLAPACK, 2 ScaLAPACK and able to remember.
inline std::int64_t delegates_word(const way& w, bool remembering) { return w.delegate ? (remembering ? 2 : 1) : 0; }

// After the agreement (every process's record, with its `delegates` word): whether every process hands the call to
// ScaLAPACK; if so, its signature is remembered when every process can (the same on every process).
template <class Record>
bool every_process_delegates(const std::vector<Record>& all, context_state* state, const way& w) {
  if (!std::all_of(all.begin(), all.end(), [](const Record& r) { return r.delegates != 0; })) return false;
  if (std::all_of(all.begin(), all.end(), [](const Record& r) { return r.delegates == 2; }))
    state->seen.insert(w.digest);  // a state and room on each
  return true;
}

// Whether a sub-matrix starting at (i, j) (1-based) of a matrix in blocks of mb x nb starts on a block boundary.
bool block_aligned(int i, int j, std::int64_t mb, std::int64_t nb);

// The power of two at or above x (1 for x <= 1): a class's size.
std::int64_t power_of_two_at_least(std::int64_t x);

namespace detail {
// A 64-bit finalizer (every input bit moves every output bit): FNV's lanes mix their last words weakly.
inline std::uint64_t mixed(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}
inline std::uint64_t rotated(std::uint64_t x, int by) noexcept { return (x << by) | (x >> (64 - by)); }
}  // namespace detail

inline signature_digest signature_builder::digest() const {
  using detail::mixed, detail::rotated;
  const std::uint64_t a = mixed(h_[0]), b = mixed(h_[1]), c = mixed(h_[2]), d = mixed(h_[3]);
  signature_digest digest{a ^ rotated(b, 21) ^ rotated(c, 42) ^ rotated(d, 11),
                          b ^ rotated(c, 17) ^ rotated(d, 34) ^ rotated(a, 51)};
  if (digest.low == 0 && digest.high == 0) digest.low = 1;  // {0, 0} marks an empty slot
  return digest;
}

}  // namespace redist::scalapack::delegation
