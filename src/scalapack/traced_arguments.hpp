// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The arguments of a ScaLAPACK-style call as its trace line carries them (internal): what a replay needs to
// make the same call again, with this process's view of each BLACS grid.
#include <complex>
#include <type_traits>

#include "blacs.hpp"
#include "mpi/checked.hpp"
#include "redist/types.hpp"
#include "trace/recorder.hpp"

namespace redist::scalapack {

// A descriptor as the routine reads it: 11 entries for DTYPE 2, 9 for DTYPE 1; for another DTYPE, 9 where the
// routine reads it as DTYPE 1 (`as_type1`: REDIST's p?gemr2d and p?trmr2d, on a context that is not negative), else
// DTYPE and CTXT alone (its length is unknown); null for a null pointer.
inline void trace_descriptor(trace_detail::json_fields& f, const char* name, const int* desc, bool as_type1 = false) {
  const int length = desc == nullptr                  ? 0
                     : desc[0] == block_cyclic_2d_inb ? descriptor_length
                     : desc[0] == block_cyclic_2d     ? descriptor_length_1
                     : as_type1 && desc[1] >= 0       ? descriptor_length_1
                                                      : 2;
  f.integers(name, desc, length);
}

// [NPROW, NPCOL, MYROW, MYCOL] of a context as this process sees it, and the size of its communicator (grid: -1s
// where the context does not hold this process).
inline void trace_grid(trace_detail::json_fields& f, const char* name, int context) {
  std::int64_t grid[5] = {-1, -1, -1, -1, -1};
  if (blacs::holds_me(context)) {
    const process_grid g = blacs::grid_info(context);
    grid[0] = g.proc_rows, grid[1] = g.proc_cols, grid[2] = g.my_row, grid[3] = g.my_col;
    int size = 0;
    if (MPI_Comm_size(blacs::communicator(context), &size) == MPI_SUCCESS) grid[4] = size;
  }
  f.integers(name, grid, 5);
}

template <class T>
void trace_scalar(trace_detail::json_fields& f, const char* name, T value) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    const double parts[2] = {static_cast<double>(value.real()), static_cast<double>(value.imag())};
    f.reals(name, parts, 2);
  } else {
    const double part = static_cast<double>(value);
    f.reals(name, &part, 1);
  }
}

template <class T>
void trace_type(trace_detail::json_fields& f) {
  f.text("type", to_string(element_type_v<T>));
}

}  // namespace redist::scalapack
