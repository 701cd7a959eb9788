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
//   (each routine says what its class is): the class's first two calls run redist, the next two ScaLAPACK, and at
//   its fifth call the processes agree (one allreduce) on the way whose faster call was faster on the slowest
//   process, which every later call of the class takes (the ski-rental rule of the plan cache, both ways paid).
// What PBLAS requires is checked where a call is first seen: each signature (every argument but the arrays) goes
// through redist's own argument agreement on every process; a signature every process passed, and on which all of
// them delegate, is remembered on the context's communicator and its later calls go to ScaLAPACK at once, with no
// MPI call of redist's. (A process that passes a remembered signature while another passes a new one is not
// caught: they then make different calls.)
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_set>
#include <vector>

#include "../trace/recorder.hpp"

namespace redist::scalapack::delegation {

// A signature's and a class's first word, so that routines never share one.
enum class routine_family : std::int64_t { gemm = 1, tran = 2 };

// Every argument of a call but the arrays, in a fixed array (each routine fills its own words, zeros after):
// looked up on every delegated call, so never allocated.
using call_signature = std::array<std::int64_t, 52>;
struct signature_hash {
  std::size_t operator()(const call_signature& s) const noexcept;
};

// What a learned class has measured on this process, and its decision once made.
struct learned_class {
  int calls = 0;
  double fastest[2] = {-1, -1};  // this process's fastest call through redist [0] and ScaLAPACK [1] (-1: none yet)
  int decided = -1;              // -1: still trying; 0: redist; 1: ScaLAPACK
};

// What a context's communicator keeps: the signatures checked (bounded: past the bound all are forgotten at once, at
// the same call on every process, and checked again), and the learned classes of every routine.
struct context_state {
  std::unordered_set<call_signature, signature_hash> seen;
  std::map<std::vector<std::int64_t>, learned_class> classes;
};

// The state of the context in DESCA[1] (on its communicator), or null where there is none to keep: no ScaLAPACK
// to delegate to, a context this process is not on, or the attribute could not be had (then fixed sizes decide
// and every call is checked).
context_state* state_of(const int* desca);

// The routine's sizes: `variable` is its override, `unit` what its size counts (for the message about a bad
// value); calls smaller than always_below go to ScaLAPACK, from learned_below on to redist.
struct size_rule {
  const char* variable;
  const char* unit;
  std::int64_t always_below;
  std::int64_t learned_below;
};

// The bound the override variable sets, or -1 when unset (a bad value is said once per process, then ignored).
std::int64_t override_bound(const size_rule& rule);

// Agrees a class's decision once both ways have had their trials (collective over comm).
void decide(learned_class& cls, MPI_Comm comm);
constexpr int redist_trials = 2, scalapack_trials = 2;  // a learned class's first calls, each way

// The way this call goes: true for ScaLAPACK. fewer(limit) says whether the call's size is below `limit`;
// class_of_call() gives its class (null: none to learn in). `trying` is set to the class whose trial this call is
// (timed by a trial_timer), null otherwise. A learned class's decision is agreed over `comm` (collective).
template <class Fewer, class ClassOf>
bool hand_over(const size_rule& rule, Fewer&& fewer, ClassOf&& class_of_call, MPI_Comm comm, learned_class*& trying) {
  trying = nullptr;
  const std::int64_t limit = override_bound(rule);
  if (limit >= 0) return limit > 0 && fewer(limit);
  if (rule.always_below > 0 && fewer(rule.always_below)) return true;
  if (!fewer(rule.learned_below)) return false;
  learned_class* cls = class_of_call();
  if (cls == nullptr) return false;
  if (cls->decided < 0 && cls->calls >= redist_trials + scalapack_trials) decide(*cls, comm);
  if (cls->decided >= 0) return cls->decided == 1;
  trying = cls;
  return cls->calls++ >= redist_trials;
}

// A trial's time on this process, whichever way the call ends (nothing when `cls` is null).
class trial_timer {
 public:
  trial_timer(learned_class* cls, bool through_scalapack)
      : cls_(cls), way_(through_scalapack ? 1 : 0), start_(cls ? trace_detail::clock::now() : trace_detail::clock::time_point{}) {}
  trial_timer(const trial_timer&) = delete;
  trial_timer& operator=(const trial_timer&) = delete;
  ~trial_timer();

 private:
  learned_class* cls_;
  int way_;
  trace_detail::clock::time_point start_;
};

// Remembers a signature every process passed and delegates (every process inserts, or clears at the bound, alike).
void remember(context_state& state, const call_signature& signature) noexcept;

// Whether a sub-matrix starting at (i, j) (1-based) of a matrix in blocks of mb x nb starts on a block boundary.
bool block_aligned(int i, int j, std::int64_t mb, std::int64_t nb);

// The power of two at or above x (1 for x <= 1): a class's size.
std::int64_t power_of_two_at_least(std::int64_t x);

}  // namespace redist::scalapack::delegation
