// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The machine's prices, one type for every capability that predicts a cost: the neighbor exchange's choice of
// strategy (docs/exchange.md) and the relabeling's latency/bandwidth objective (docs/relabel.md).
#include <string>

namespace redist {

/// The postal model of a phase of messages (Bar-Noy and Kipnis): a rank posts its messages one after another,
/// `seconds_per_message` apart, and they arrive `latency` later, so a phase costs one latency plus a gap per
/// message plus its bytes over the bandwidth; separate figures inside a region (a node, or what the caller calls a
/// region) and between regions. A max-rate limit: all bytes that the ranks of a region send to other regions share
/// `region_seconds_per_byte` (the node's injection). Packing and unpacking cost `copy_seconds_per_byte`;
/// transforming data on receipt (a transpose) `transform_seconds_per_byte`. Seconds. The relabeling prices one
/// package as latency + bytes * seconds_per_byte of its locality (it does not model the gap or the injection).
struct cost_model {
  double intra_latency = 0.5e-6;
  double intra_seconds_per_message = 0.1e-6;
  double intra_seconds_per_byte = 1.0 / 10e9;
  double inter_latency = 2.0e-6;
  double inter_seconds_per_message = 0.5e-6;
  double inter_seconds_per_byte = 1.0 / 5e9;
  double region_seconds_per_byte = 1.0 / 12e9;
  double copy_seconds_per_byte = 1.0 / 5e9;
  double transform_seconds_per_byte = 0.0;
  std::string source = "built-in defaults";  ///< where the figures come from: defaults, calibrated, user
};

}  // namespace redist
