// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What a ScaLAPACK-style call was given, as the watchdog's line says it where a wait lasts long (internal;
// src/mpi/watchdog.hpp): the entry point fills one on its stack (pointers and values, no formatting) and names it to
// its wait label; describe_call formats it only when a wait is reported.
#include <cstddef>

namespace redist::scalapack {

struct call_summary {
  struct operand {
    char name = 0;  // 'A', 'B', 'C'; 0: unused
    int i = 0, j = 0;
    const int* desc = nullptr;
  };
  // The routine's character arguments (TRANSA and TRANSB, UPLO and DIAG), by name; a null name: unused.
  const char* letter_names[2] = {nullptr, nullptr};
  const char* letters[2] = {nullptr, nullptr};
  int m = 0, n = 0;
  bool product = false;  // k is the product's inner size
  int k = 0;
  operand operands[3];
  const int* context = nullptr;  // p?gemr2d's and p?trmr2d's ICTXT; null: none
};

// mpi::wait_label::describe_fn for a call_summary: "transa=N transb=N m=352 n=602 k=352; A(1,1) of 736x736 in 32x32
// blocks from process (0,0), context 0; ...".
void describe_call(const void* summary, char* out, std::size_t size) noexcept;

}  // namespace redist::scalapack
