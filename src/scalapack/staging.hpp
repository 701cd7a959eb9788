// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Operands that share memory with the output (internal): ScaLAPACK's interfaces let a caller pass the same
// local array as input and output (A and C of p?tran, A or B and C of p?gemm, A and B of p?gemr2d). The engine
// reads inputs while it writes the output, so an input whose local array overlaps the output's on this process
// is read from a private copy instead: the result is what it would be with distinct arrays.
#include <cstdint>
#include <vector>

#include "redist/scalapack/descriptor.hpp"

namespace redist::scalapack {

// Elements of this process's local array of a matrix: LLD times its local columns (0 off the grid or for a
// replicated column source, whose extent the engine never reaches).
inline std::int64_t local_array_elements(const descriptor& d, const process_grid& g) {
  if (!g.contains_me() || d.csrc < 0 || d.inb < 1 || d.nb < 1) return 0;
  return d.lld * numroc(d.n, d.inb, d.nb, g.my_col, d.csrc, g.proc_cols);
}

// `input` itself, or a copy of its `input_elements` elements in `copy` when they overlap the output's.
template <class T>
const T* unaliased(const T* input, std::int64_t input_elements, const T* output, std::int64_t output_elements,
                   std::vector<T>& copy) {
  if (input == nullptr || output == nullptr || input_elements <= 0 || output_elements <= 0) return input;
  const auto in_begin = reinterpret_cast<std::uintptr_t>(input);
  const auto out_begin = reinterpret_cast<std::uintptr_t>(output);
  const auto in_end = in_begin + static_cast<std::uintptr_t>(input_elements) * sizeof(T);
  const auto out_end = out_begin + static_cast<std::uintptr_t>(output_elements) * sizeof(T);
  if (in_end <= out_begin || out_end <= in_begin) return input;
  copy.assign(input, input + input_elements);
  return copy.data();
}

}  // namespace redist::scalapack
