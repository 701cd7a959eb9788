// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The first half of every PBLAS twin (p?tran*, p?gemm; internal): one call context that resolves DESCA's
// BLACS context without crashing, gathers every process's arguments in one collective, and rejects any
// disagreement or argument error through PXERBLA on every process, with nothing written. What is left is the
// routine's own work on the gathered, agreed arguments.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "agreed_calls.hpp"
#include "blacs.hpp"
#include "first_error.hpp"
#include "mpi/checked.hpp"
#include "mpi/fault_injection.hpp"
#include "mpi/watchdog.hpp"
#include "redist/error.hpp"
#include "redist/scalapack/descriptor.hpp"

namespace redist::scalapack {

// A descriptor as the records carry it: normalized entries, DTYPE as given.
inline void store_descriptor(const descriptor& d, std::int64_t* out) {
  const auto values = d.normalized();
  std::copy(values.begin(), values.end(), out);
  out[0] = d.dtype;
}

// A scalar's bytes in two words (a complex<double> fills both), so that processes compare them bit for bit.
template <class T>
void store_scalar(T value, std::int64_t* out) {
  static_assert(sizeof(T) <= 2 * sizeof(std::int64_t));
  out[0] = out[1] = 0;
  std::memcpy(out, &value, sizeof(T));
}

// A record's `info` on a process that could not make its record (out of memory): every process then fails the call.
constexpr std::int64_t failed_record = std::numeric_limits<std::int64_t>::min();

// A call that passed the agreement: DESCA, the grid (with every position's rank), the context's
// communicator, this process's rank in it and every process's record (also as words, for plan keys).
template <class Record>
struct pblas_call {
  descriptor da;
  process_grid grid;
  int context = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0;
  std::vector<Record> all;
  std::vector<std::int64_t> words;
};

// Record: a standard-layout struct of int64 words with my_row, my_col, world_rank and info (this process's
// own argument error); fill(record, DESCA) sets the rest (it may parse the other descriptors, recording a null
// one in info). check(grid, DESCA) is PBLAS's argument check on this process (its first error, 0 for none), run once the
// gathered arguments agree. A call whose arguments every process passed at one earlier agreement that succeeded
// returns that agreement's conclusion after one two-word allreduce (agreed_calls.hpp). Returns nothing when the call ends here: a process outside the grid (CTXT -1), an
// error reported through PXERBLA on every process, or a failure (blacs::fail_after_checks).
template <class Record, class Fill, class Check>
std::optional<pblas_call<Record>> agree_on_pblas_call(const char* routine, const int* desca, int desca_pos,
                                                      const std::vector<global_argument>& global_arguments, Fill&& fill,
                                                      Check&& check) noexcept {
  constexpr int record_words = static_cast<int>(sizeof(Record) / sizeof(std::int64_t));
  if (!blacs::available()) {
    blacs::report_problem(routine, blacs::unavailable_reason());
    return std::nullopt;
  }
  if (desca == nullptr) {  // no context to reach the others through
    blacs::report_error(-1, routine, -desca_pos);
    return std::nullopt;
  }
  pblas_call<Record> call;
  call.da = parse_descriptor(desca);
  call.context = static_cast<int>(call.da.ctxt);
  call.grid = blacs::grid_info(call.context);
  if (!call.grid.contains_me()) {
    // CTXT -1 is what BLACS gives a process outside a grid: it has no part in the call (as in REDIST). Another
    // negative, unknown or exited context is reported here alone: it cannot reach the others.
    if (call.context != -1) blacs::report_error(call.context, routine, -(desca_pos * 100 + 2));
    return std::nullopt;
  }
  const int context_info = -(desca_pos * 100 + 2);
  const process_grid& grid = call.grid;
  try {
    call.comm = blacs::communicator(call.context);
    call.me = mpi::rank(call.comm);
    call.all.resize(static_cast<size_t>(mpi::size(call.comm)));
  } catch (const std::exception& e) {  // no way to the others: this process alone reports it
    blacs::fail_after_checks(call.context, routine, context_info, e.what());
    return std::nullopt;
  }
  // This process's record. Where it cannot be made, the process still joins the gather below, its record marked
  // as failed, so that the others do not wait for it: every process then fails the call alike.
  Record mine{};
  std::vector<std::int64_t> my_arguments;
  std::string failure;  // why this process could not take part (empty where even the message could not be copied)
  try {
    int world_rank = 0;
    REDIST_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    mine.my_row = call.grid.my_row;
    mine.my_col = call.grid.my_col;
    mine.world_rank = world_rank;
    fill(mine, static_cast<const descriptor&>(call.da));
    if (fault::hit()) throw insufficient_memory("the drop-in's record of its arguments (injected)");
    const auto* first = reinterpret_cast<const std::int64_t*>(&mine);
    my_arguments.assign(first, first + record_words);
    my_arguments.insert(my_arguments.end(), {call.context, grid.proc_rows, grid.proc_cols});
  } catch (const std::exception& e) {
    try {
      failure = e.what();
    } catch (...) {
    }
    mine.info = failed_record;
    my_arguments.clear();  // matches no earlier agreement
  }
  try {
    // Arguments every process passed before, alike, at one agreement that succeeded: its conclusion stands.
    const mpi::wait_label label(nullptr, "the processes' arguments compared");
    if (const pblas_call<Record>* agreed = agreed_calls<pblas_call<Record>>::find(call.comm, my_arguments))
      return *agreed;
    REDIST_MPI_CHECK(mpi::allgather_yielding(&mine, record_words, MPI_INT64_T, call.all.data(), record_words,
                                             MPI_INT64_T, call.comm));
  } catch (const std::exception& e) {
    blacs::fail_after_checks(call.context, routine, context_info, e.what());
    return std::nullopt;
  }
  for (size_t r = 0; r < call.all.size(); ++r)
    if (call.all[r].info == failed_record) {  // the lowest such process's failure, on every process
      blacs::fail_after_checks(call.context, routine, context_info,
                               r == static_cast<size_t>(call.me)
                                   ? (failure.empty() ? std::string("out of memory") : failure)
                                   : "process " + std::to_string(r) + " of the context failed before the " +
                                         "processes' arguments could be compared");
      return std::nullopt;
    }
  call.grid.position_ranks.assign(static_cast<size_t>(grid.proc_rows * grid.proc_cols), -1);
  for (size_t r = 0; r < call.all.size(); ++r) {
    const Record& x = call.all[r];
    if (x.my_row >= 0 && x.my_row < grid.proc_rows && x.my_col >= 0 && x.my_col < grid.proc_cols)
      call.grid.position_ranks[static_cast<size_t>(x.my_row * grid.proc_cols + x.my_col)] = static_cast<int>(r);
  }

  // Arguments that differ between processes, then PBLAS's checks (LLD is local: the first error over all
  // processes is reported everywhere). Every process sees the same records, so all take the same branches.
  const auto* first_word = reinterpret_cast<const std::int64_t*>(call.all.data());
  call.words.assign(first_word, first_word + call.all.size() * record_words);
  int differing = -1;
  const int disagreement = first_disagreement(
      call.words, record_words, global_arguments, [](int, int) { return true; }, differing);
  int info = disagreement;
  for (const Record& r : call.all) info = first_error(info, static_cast<int>(r.info));
  if (info != 0 && info == disagreement && call.me == 0)
    blacs::report_problem(routine, "process " + std::to_string(differing) + " of the context passed a different " +
                                       "value of argument " + std::to_string(-info) +
                                       " than the others; it must be the same on every process");
  if (info == 0) {
    // A check that cannot run here (out of memory) is this process's error at CTXT's position, so that it still
    // joins the agreement the others are in.
    int my_info = 0;
    try {
      my_info = check(static_cast<const process_grid&>(grid), static_cast<const descriptor&>(call.da));
    } catch (const std::exception& e) {
      blacs::report_problem(routine, e.what());
      my_info = context_info;
    }
    try {
      info = agree_on_first_error(call.comm, my_info);
    } catch (const std::exception& e) {
      blacs::fail_after_checks(call.context, routine, context_info, e.what());
      return std::nullopt;
    }
  }
  if (info != 0) {
    blacs::report_error(call.context, routine, info);
    return std::nullopt;
  }
  agreed_calls<pblas_call<Record>>::remember(call.comm, std::move(my_arguments), call.words, call,
                                             2 * call.words.size());
  return call;
}

// The scalar behind a prefixed twin's `const void*` alpha or beta (one element of the routine's type).
template <class T>
T scalar_at(const void* p) {
  return *static_cast<const T*>(p);
}

}  // namespace redist::scalapack
