#include "watchdog.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "redist/names.hpp"
#include "redist/timeout.hpp"

namespace redist {
namespace mpi {
namespace {

thread_local wait_label* innermost = nullptr;

constexpr double default_timeout_seconds = 300;

struct limits {
  double seconds = default_timeout_seconds;
  bool abort = false;
};

// REDIST_TIMEOUT and REDIST_TIMEOUT_ACTION, read once; a value that cannot be used is said once and the default kept.
limits read_environment() noexcept {
  limits l;
  if (const char* text = std::getenv("REDIST_TIMEOUT"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(value) || value < 0)
      std::fprintf(stderr,
                   "redist: REDIST_TIMEOUT='%s' is not a number of seconds (expected a number >= 0; 0: never); waits "
                   "are reported after %g s\n",
                   text, l.seconds);
    else
      l.seconds = value;
  }
  if (const char* text = std::getenv("REDIST_TIMEOUT_ACTION"); text != nullptr && *text != '\0') {
    try {
      l.abort = parse_name<timeout_action>(text) == timeout_action::abort;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "redist: REDIST_TIMEOUT_ACTION: %s; a long wait is reported and goes on\n", e.what());
    }
  }
  return l;
}

const limits& environment() noexcept {
  static const limits l = read_environment();
  return l;
}

// What set_timeout chose (negative: the environment's).
std::atomic<double> chosen_seconds{-1};
std::atomic<int> chosen_action{-1};

}  // namespace

wait_label::wait_label(const char* entry_point, const char* phase, double timeout_seconds) noexcept
    : entry_point_(entry_point), phase_(phase), timeout_seconds_(timeout_seconds >= 0 ? timeout_seconds : -1),
      outer_(innermost) {
  innermost = this;
}

wait_label::~wait_label() { innermost = outer_; }

double timeout_seconds() noexcept {
  const double chosen = chosen_seconds.load(std::memory_order_relaxed);
  return chosen >= 0 ? chosen : environment().seconds;
}

bool timeout_aborts() noexcept {
  const int chosen = chosen_action.load(std::memory_order_relaxed);
  return chosen >= 0 ? chosen == 1 : environment().abort;
}

void watched_wait::check() noexcept {
  const double now =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (started_ < 0) {
    started_ = now;
    return;
  }
  // A plan's own timeout (the innermost label that has one), else the process's.
  double plan_limit = -1;
  for (const wait_label* l = innermost; l != nullptr && plan_limit < 0; l = l->outer_) plan_limit = l->timeout_seconds_;
  const double limit = plan_limit >= 0 ? plan_limit : timeout_seconds();
  if (limit <= 0 || now - started_ < limit) return;
  reported_ = true;
  // Where: the outermost entry point and the innermost phase of this thread's labels.
  const char* entry_point = nullptr;
  const char* phase = nullptr;
  for (const wait_label* l = innermost; l != nullptr; l = l->outer_) {
    if (l->entry_point_ != nullptr) entry_point = l->entry_point_;
    if (phase == nullptr) phase = l->phase_;
  }
  char arguments[512] = "";
  for (const wait_label* l = innermost; l != nullptr; l = l->outer_)
    if (l->describe_ != nullptr) {
      arguments[0] = ' ', arguments[1] = '[';
      l->describe_(l->arguments_, arguments + 2, sizeof arguments - 3);
      const std::size_t end = std::strlen(arguments);
      arguments[end] = ']', arguments[end + 1] = '\0';
      break;
    }
  char limit_text[96];
  if (plan_limit >= 0)
    std::snprintf(limit_text, sizeof limit_text, "the plan's timeout_seconds=%g, in place of REDIST_TIMEOUT", limit);
  else
    std::snprintf(limit_text, sizeof limit_text, "REDIST_TIMEOUT=%g", limit);
  int world_rank = -1, comm_size = 0, comm_rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  char where[160] = "on requests of several processes";
  if (comm_ != MPI_COMM_NULL && MPI_Comm_size(comm_, &comm_size) == MPI_SUCCESS &&
      MPI_Comm_rank(comm_, &comm_rank) == MPI_SUCCESS)
    std::snprintf(where, sizeof where, "on a communicator of %d processes, as its rank %d", comm_size, comm_rank);
  const bool aborts = timeout_aborts();
  std::fprintf(stderr,
               "redist: waited %.0f s (%s) in %s%s%s%s%s %s (rank %d of MPI_COMM_WORLD): a process has "
               "not made the same call (another communicator or context, a call skipped) or is that much slower; %s\n",
               now - started_, limit_text, entry_point != nullptr ? entry_point : "a redist call",
               phase != nullptr ? " (" : "", phase != nullptr ? phase : "", phase != nullptr ? ")" : "", arguments, where,
               world_rank,
               aborts ? "ending the job (REDIST_TIMEOUT_ACTION=abort)"
                      : "still waiting (REDIST_TIMEOUT_ACTION=abort would end the job)");
  std::fflush(stderr);
  if (aborts) {
    // Half a second for the launcher to forward the line: MPI_Abort tears the job down at once, and under load
    // MPICH's launcher lost the line and its own abort message (an ended job, exit status 1, no word why).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace mpi

void set_timeout(double seconds, timeout_action action) {
  if (!std::isfinite(seconds) || seconds < 0)
    throw invalid_argument("set_timeout: " + std::to_string(seconds) +
                           " seconds: expected a number >= 0 (0: waits are never reported)");
  mpi::chosen_seconds.store(seconds, std::memory_order_relaxed);
  mpi::chosen_action.store(action == timeout_action::abort ? 1 : 0, std::memory_order_relaxed);
}

double timeout() noexcept { return mpi::timeout_seconds(); }

}  // namespace redist
