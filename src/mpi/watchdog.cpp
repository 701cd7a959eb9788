// SPDX-License-Identifier: BSD-3-Clause
#include "watchdog.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
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
    : entry_point_(entry_point),
      phase_(phase),
      timeout_seconds_(timeout_seconds >= 0 ? timeout_seconds : -1),
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

namespace {

double steady_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The attribute that marks redist's private duplicates (its value is never read).
int private_keyval() noexcept {
  static const int keyval = []() -> int {  // -> int: the standard ABI's MPI_KEYVAL_INVALID is an enumerator
    int k = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, nullptr) != MPI_SUCCESS)
      return MPI_KEYVAL_INVALID;
    return k;
  }();
  return keyval;
}
char private_mark;

bool is_private(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL || private_keyval() == MPI_KEYVAL_INVALID) return false;
  void* value = nullptr;
  int found = 0;
  return MPI_Comm_get_attr(comm, private_keyval(), &value, &found) == MPI_SUCCESS && found != 0;
}

// The roll call's tags: the two highest MPI allows (MPI_TAG_UB, an attribute of MPI_COMM_WORLD, holds for every
// communicator), above every tag redist's own messages use.
struct roll_call_tags {
  int question = -1, answer = -1;
};
roll_call_tags tags_of() noexcept {
  void* value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found) != MPI_SUCCESS || found == 0 || value == nullptr)
    return {};
  const int upper = *static_cast<int*>(value);
  return {upper, upper - 1};
}

// The numbers sent: a question carries its roll call's number, an answer the number of the question it answers.
// Sent with MPI_Isend and the request freed (one int, sent eagerly by every MPI): the words must stay unchanged
// until sent, so questions use one word per thread (its roll call follows another only after a further limit) and
// answers a ring of them.
thread_local int question_word = 0;
std::atomic<int> roll_calls{0};
std::array<int, 64> answer_words{};
std::atomic<unsigned> next_answer_word{0};

// Receives into *word one message of `tag` that has reached this process on `comm`, from any process: its source,
// or -1 when none is there (or MPI refused).
int received(MPI_Comm comm, int tag, int* word) noexcept {
  int pending = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  if (MPI_Improbe(MPI_ANY_SOURCE, tag, comm, &pending, &message, &status) != MPI_SUCCESS || pending == 0) return -1;
  return MPI_Mrecv(word, 1, MPI_INT, &message, MPI_STATUS_IGNORE) == MPI_SUCCESS ? status.MPI_SOURCE : -1;
}

// Answers every question that has reached this process on `comm` (a wait of its own is there).
void answer_questions(MPI_Comm comm) noexcept {
  const roll_call_tags tags = tags_of();
  if (tags.question < 0) return;
  for (;;) {
    int& word = answer_words[next_answer_word++ % answer_words.size()];
    const int asker = received(comm, tags.question, &word);
    if (asker < 0) return;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&word, 1, MPI_INT, asker, tags.answer, comm, &request) == MPI_SUCCESS) MPI_Request_free(&request);
  }
}

}  // namespace

void mark_private(MPI_Comm comm) noexcept {
  if (private_keyval() != MPI_KEYVAL_INVALID) MPI_Comm_set_attr(comm, private_keyval(), &private_mark);
}

bool watched_wait::on_private_duplicate() noexcept {
  if (private_ < 0) private_ = is_private(comm_) ? 1 : 0;
  return private_ == 1;
}

void watched_wait::check() noexcept {
  const double now = steady_seconds();
  if (started_ < 0) {
    started_ = now;
    next_answer_ = now + answer_interval_seconds;
    return;
  }
  if (now >= next_answer_) {
    if (on_private_duplicate()) {
      answer_questions(comm_);
      if (roll_call_ends_ >= 0) collect_answers();
    }
    next_answer_ = now + answer_interval_seconds;
  }
  if (roll_call_ends_ >= 0) {
    if (now >= roll_call_ends_ || std::all_of(answered_.begin(), answered_.end(), [](char a) { return a != 0; })) {
      roll_call_ends_ = -1;
      report(now, true);
    }
    return;
  }
  if (reported_) {
    done_ = private_ != 1;  // on a private duplicate: still answering others' roll calls
    return;
  }
  // A plan's own timeout (the innermost label that has one), else the process's.
  double plan_limit = -1;
  for (const wait_label* l = innermost; l != nullptr && plan_limit < 0; l = l->outer_) plan_limit = l->timeout_seconds_;
  limit_ = plan_limit >= 0 ? plan_limit : timeout_seconds();
  plan_limit_ = plan_limit >= 0;
  if (limit_ <= 0 || now - started_ < limit_) return;
  if (collective_ && on_private_duplicate() && start_roll_call(now)) return;
  report(now, false);
}

bool watched_wait::start_roll_call(double now) noexcept {
  const roll_call_tags tags = tags_of();
  int size = 0, me = -1;
  if (tags.question < 0 || MPI_Comm_size(comm_, &size) != MPI_SUCCESS || MPI_Comm_rank(comm_, &me) != MPI_SUCCESS)
    return false;
  try {
    answered_.assign(static_cast<std::size_t>(size), 0);
  } catch (const std::exception&) {
    return false;
  }
  answered_[static_cast<std::size_t>(me)] = 1;
  roll_call_number_ = ++roll_calls;
  question_word = roll_call_number_;
  for (int r = 0; r < size; ++r) {
    if (r == me) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&question_word, 1, MPI_INT, r, tags.question, comm_, &request) == MPI_SUCCESS)
      MPI_Request_free(&request);
  }
  roll_call_ends_ = now + roll_call_seconds;
  return true;
}

void watched_wait::collect_answers() noexcept {
  const roll_call_tags tags = tags_of();
  if (tags.answer < 0) return;
  for (;;) {
    int number = 0;
    const int source = received(comm_, tags.answer, &number);
    if (source < 0) return;
    // An answer to an earlier roll call (of a wait that ended) is dropped.
    if (number == roll_call_number_ && static_cast<std::size_t>(source) < answered_.size())
      answered_[static_cast<std::size_t>(source)] = 1;
  }
}

namespace {

// "its rank 3 (rank 3 of MPI_COMM_WORLD), its rank 5 (...)" for the ranks of comm that did not answer, at most 8.
std::string absent_ranks(MPI_Comm comm, const std::vector<char>& answered) {
  std::vector<int> absent;
  for (std::size_t r = 0; r < answered.size(); ++r)
    if (answered[r] == 0) absent.push_back(static_cast<int>(r));
  std::vector<int> in_world(absent.size(), MPI_UNDEFINED);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  if (MPI_Comm_group(comm, &group) == MPI_SUCCESS && MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS)
    MPI_Group_translate_ranks(group, static_cast<int>(absent.size()), absent.data(), world, in_world.data());
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  constexpr std::size_t named = 8;
  std::string out;
  for (std::size_t i = 0; i < absent.size() && i < named; ++i) {
    out += (i == 0 ? "its rank " : ", its rank ") + std::to_string(absent[i]);
    out += in_world[i] == MPI_UNDEFINED ? " (not in MPI_COMM_WORLD)"
                                        : " (rank " + std::to_string(in_world[i]) + " of MPI_COMM_WORLD)";
  }
  if (absent.size() > named) out += " and " + std::to_string(absent.size() - named) + " more";
  return out;
}

}  // namespace

void watched_wait::report(double now, bool roll_called) noexcept {
  reported_ = true;
  done_ = private_ != 1;
  // Where: the outermost entry point and the innermost phase of this thread's labels.
  const char* entry_point = nullptr;
  const char* phase = nullptr;
  for (const wait_label* l = innermost; l != nullptr; l = l->outer_) {
    if (l->entry_point_ != nullptr) entry_point = l->entry_point_;
    if (phase == nullptr) phase = l->phase_;
  }
  // What the call was given, as the outermost label that has it says (the drop-in's ScaLAPACK arguments rather than
  // the plan it makes of them).
  const wait_label* described = nullptr;
  for (const wait_label* l = innermost; l != nullptr; l = l->outer_)
    if (l->describe_ != nullptr) described = l;
  char arguments[512] = "";
  if (described != nullptr) {
    arguments[0] = ' ', arguments[1] = '[';
    described->describe_(described->arguments_, arguments + 2, sizeof arguments - 3);
    const std::size_t end = std::strlen(arguments);
    arguments[end] = ']', arguments[end + 1] = '\0';
  }
  char limit_text[96];
  if (plan_limit_)
    std::snprintf(limit_text, sizeof limit_text, "the plan's timeout_seconds=%g, in place of REDIST_TIMEOUT", limit_);
  else
    std::snprintf(limit_text, sizeof limit_text, "REDIST_TIMEOUT=%g", limit_);
  int world_rank = -1, comm_size = 0, comm_rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  char where[160] = "on requests of several processes";
  if (comm_ != MPI_COMM_NULL && MPI_Comm_size(comm_, &comm_size) == MPI_SUCCESS &&
      MPI_Comm_rank(comm_, &comm_rank) == MPI_SUCCESS)
    std::snprintf(where, sizeof where, "on a communicator of %d processes, as its rank %d", comm_size, comm_rank);
  // Who is missing, where a roll call could ask.
  const char* diagnosis =
      "a process has not made the same call (another communicator or context, a call skipped) or is that much slower";
  std::string roll_call;  // (no allocation unless assigned)
  if (roll_called) {
    try {
      const std::string absent = absent_ranks(comm_, answered_);
      char text[64];
      std::snprintf(text, sizeof text, "a roll call of %g s found ", roll_call_seconds);
      roll_call = absent.empty() ? text + std::string(
                                              "every process of it waiting in redist on it (calls made in "
                                              "different orders, or one that much slower)")
                                 : text + absent +
                                       " not waiting in redist on it (the call skipped or not yet made, another "
                                       "call, or that much slower)";
      diagnosis = roll_call.c_str();
    } catch (const std::exception&) {
      // out of memory: the general diagnosis
    }
  }
  const bool aborts = timeout_aborts();
  std::fprintf(stderr, "redist: waited %.0f s (%s) in %s%s%s%s%s %s (rank %d of MPI_COMM_WORLD): %s; %s\n",
               now - started_, limit_text, entry_point != nullptr ? entry_point : "a redist call",
               phase != nullptr ? " (" : "", phase != nullptr ? phase : "", phase != nullptr ? ")" : "", arguments,
               where, world_rank, diagnosis,
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
