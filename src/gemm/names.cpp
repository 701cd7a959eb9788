// SPDX-License-Identifier: BSD-3-Clause
// The spellings of the gemm options (redist/names.hpp: one spelling per value, the same in C++, C, Python and the
// tools).
#include "redist/names.hpp"
#include "names_table.hpp"
#include "redist/gemm/gemm.hpp"
#include "redist/gemm/schedule.hpp"

namespace redist {

namespace names_detail {

template <>
struct table<gemm_communication> {
  static constexpr const char* option = "gemm communication";
  static constexpr std::array<spelling<gemm_communication>, 4> current{
      {{gemm_communication::automatic, "auto"},
       {gemm_communication::two_sided, "two_sided"},
       {gemm_communication::one_sided, "one_sided"},
       {gemm_communication::shared_memory, "shared_memory"}}};
};

template <>
struct table<gemm_native_order> {
  static constexpr const char* option = "gemm native order";
  static constexpr std::array<spelling<gemm_native_order>, 3> current{{{gemm_native_order::automatic, "auto"},
                                                                       {gemm_native_order::contiguous, "contiguous"},
                                                                       {gemm_native_order::grouped, "grouped"}}};
};

template <>
struct table<gemm_dimension> {
  static constexpr const char* option = "gemm dimension";
  static constexpr std::array<spelling<gemm_dimension>, 3> current{
      {{gemm_dimension::m, "m"}, {gemm_dimension::n, "n"}, {gemm_dimension::k, "k"}}};
};

}  // namespace names_detail

using names_detail::name_in_table;

REDIST_NAMED_ENUM(gemm_communication)
REDIST_NAMED_ENUM(gemm_native_order)
REDIST_NAMED_ENUM(gemm_dimension)

const char* to_string(gemm_communication c) { return name_in_table(c); }
const char* to_string(gemm_native_order o) { return name_in_table(o); }
const char* to_string(gemm_dimension d) { return name_in_table(d); }

}  // namespace redist
