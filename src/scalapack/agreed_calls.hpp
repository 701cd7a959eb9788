// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Calls agreed before (internal): what a full argument agreement of a ScaLAPACK entry point concluded (every
// process's arguments gathered, compared and checked), remembered per context communicator under this process's own
// arguments. When every process passes again arguments it passed at one same earlier agreement that succeeded,
// the call needs none of it again: one allreduce of two words (a hash of every process's arguments at that agreement,
// and its negative) tells that every process found the same one, instead of gathering every argument and agreeing
// on the first error. Anything else (a process with new arguments, or with arguments of another agreement) sends
// every process through the full agreement, so a process passing different arguments is still caught, on every
// call, in bounded time.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpi/checked.hpp"
#include "mpi/comm_attribute.hpp"

namespace redist::scalapack {

struct words_hash {
  std::size_t operator()(const std::vector<std::int64_t>& w) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const std::int64_t x : w) h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

// Result: what the caller needs of an agreement (copied out on a hit); remember()'s `result_words` is its size, for
// the bound on the memory kept.
template <class Result>
class agreed_calls {
 public:
  // The agreed result if every process of `comm` passes arguments (`mine`: this process's, with whatever else
  // decides the result locally, the grid's shape say) that it passed at one same earlier agreement; null otherwise.
  // Collective over comm.
  static const Result* find(MPI_Comm comm, const std::vector<std::int64_t>& mine) {
    const entry* found = nullptr;
    try {
      agreed_calls& calls = on(comm);
      const auto it = calls.by_arguments_.find(mine);
      if (it != calls.by_arguments_.end()) found = &it->second;
    } catch (...) {
      // the state could not be made here (out of memory, MPI refused the attribute): as a new call, so that this
      // process still joins the allreduce the others are in, and everyone goes through the full agreement
    }
    std::int64_t number[2] = {-1, 1};
    if (found != nullptr) number[0] = found->number, number[1] = -found->number;
    REDIST_MPI_CHECK(mpi::allreduce_yielding(MPI_IN_PLACE, number, 2, MPI_INT64_T, MPI_MAX, comm));
    const bool same_everywhere = number[0] >= 0 && number[0] == -number[1];
    return same_everywhere ? &found->result : nullptr;
  }

  // Remembers what a full agreement that succeeded concluded: `all` is every process's arguments as gathered
  // (the same on every process: its hash names the agreement everywhere, whatever each process remembered or
  // forgot). Never throws: what cannot be remembered is agreed in full next time.
  static void remember(MPI_Comm comm, std::vector<std::int64_t> mine, const std::vector<std::int64_t>& all,
                       const Result& result, std::size_t result_words) noexcept {
    try {
      agreed_calls& calls = on(comm);
      const auto number = static_cast<std::int64_t>(words_hash{}(all) >> 1);  // not negative
      if (calls.by_arguments_.size() >= max_entries || calls.words_kept_ + result_words > max_words) {
        calls.by_arguments_.clear();
        calls.words_kept_ = 0;
      }
      const std::size_t words = result_words + mine.size();
      entry& e = calls.by_arguments_[std::move(mine)];
      calls.words_kept_ += words - e.words;  // a key agreed again replaces its entry
      e = entry{number, words, result};
    } catch (...) {
      // out of memory, or MPI refused the attribute: not remembered
    }
  }

 private:
  static constexpr std::size_t max_entries = 256;
  static constexpr std::size_t max_words = std::size_t{1} << 21;  // 16 MiB per communicator and routine kind

  static agreed_calls& on(MPI_Comm comm) {
    static const mpi::comm_attribute<agreed_calls> attribute;
    return attribute.get(comm, [] { return agreed_calls{}; });
  }

  struct entry {
    std::int64_t number = -1;  // the agreement's name: a hash of every process's arguments, not negative
    std::size_t words = 0;     // kept for it (its arguments and result)
    Result result{};
  };
  std::unordered_map<std::vector<std::int64_t>, entry, words_hash> by_arguments_;
  std::size_t words_kept_ = 0;
};

}  // namespace redist::scalapack
