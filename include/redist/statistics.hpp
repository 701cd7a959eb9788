// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One vocabulary for what a plan or a call moves, shared by every capability (docs/names.md): the transform's
// plan_statistics, the neighbor exchange's exchange_statistics, the in-place alltoallv's report, GEMM's multiply
// and the routed permutations carry these fields under these names, in C++, in Python's dicts and in the JSON of
// the tools and benchmarks.
#include <cstdint>

namespace redist {

/// Per rank and per execution (one cycle of a persistent plan).
struct traffic_statistics {
  std::int64_t bytes_sent = 0;         ///< payload bytes this rank sends to other ranks
  std::int64_t bytes_received = 0;     ///< payload bytes this rank receives from other ranks
  std::int64_t messages_sent = 0;      ///< point-to-point messages to other ranks
  std::int64_t messages_received = 0;  ///< point-to-point messages from other ranks
  std::int64_t bytes_local = 0;        ///< payload bytes delivered to this rank itself, without a message
};

}  // namespace redist
