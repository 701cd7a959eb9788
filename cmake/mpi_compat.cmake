# SPDX-License-Identifier: BSD-3-Clause
# Which MPI-4 calls the MPI has, found by compiling and linking against it (after find_package(MPI) and the
# `redist` target): an MPI-3.1 library (Open MPI 4.1) lacks the large-count `_c` calls and
# MPI_Info_get_string, and MPI_VERSION alone does not say which calls a library provides. The results become
# compile definitions of redist, read by src/mpi/compat.cpp only (and by in-tree programs through the build
# interface, never by installed users):
#   REDIST_HAVE_MPI_LARGE_COUNT             every `_c` call redist makes
#   REDIST_HAVE_MPI_INFO_GET_STRING         MPI_Info_get_string
#   REDIST_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT MPI's persistent neighborhood collective (the exchange benchmark's baseline)
# REDIST_MPI_FALLBACKS=ON skips the checks, so that the MPI-3.1 equivalents are built and tested on any MPI.
# Also here: REDIST_MPI_BLOCKING_COLLECTIVES and REDIST_MPI_BLOCKING_WAITS (below), read by src/mpi/checked.hpp.
option(REDIST_MPI_FALLBACKS "Use the MPI-3.1 equivalents of MPI-4 calls even where the MPI has them (tests them)" OFF)

# redist (and its users, which include redist's headers) use MPI's C interface only: in C++, mpi.h must not pull
# in the MPI-2 C++ bindings, which Open MPI's header does unless told not to, leaving references to
# libmpi_cxx (not linked: redist links MPI::MPI_C). The same switch for MPICH's header.
target_compile_definitions(redist PUBLIC OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)

include(CheckSymbolExists)
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)
# The checks below compile and link against the MPI found (its imported target where FindMPI made one).
macro(_redist_push_mpi_check_state)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_QUIET ON)
  if(TARGET MPI::MPI_C)
    set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
  else()
    set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
    set(CMAKE_REQUIRED_LIBRARIES ${MPI_C_LIBRARIES})
  endif()
endmacro()

# SimGrid's SMPI (a simulated MPI, bench/smpi/) implements every nonblocking collective by posting all P^2
# messages at once (minutes per plan at 256 simulated ranks) and lacks MPI_Comm_idup: there redist makes its
# collectives blocking (src/mpi/checked.hpp, collectives_block()). Any MPI may choose it; the default follows mpi.h.
_redist_push_mpi_check_state()
check_symbol_exists(SMPI_SHARED_MALLOC "mpi.h" REDIST_MPI_IS_SMPI)
cmake_pop_check_state()
option(REDIST_MPI_BLOCKING_COLLECTIVES
       "Make redist's collectives blocking (no watchdog on them): for MPIs whose nonblocking collectives are naive"
       ${REDIST_MPI_IS_SMPI})
if(REDIST_MPI_BLOCKING_COLLECTIVES)
  target_compile_definitions(redist PUBLIC $<BUILD_INTERFACE:REDIST_MPI_BLOCKING_COLLECTIVES>)
  message(STATUS "redist: blocking collectives (REDIST_MPI_BLOCKING_COLLECTIVES=ON)")
endif()
# SMPI simulates every MPI_Test as a step of the simulation: redist's polled waits (test, yield, test) then cost
# minutes of wall time per exchange at 1024 simulated ranks. Blocking waits (src/mpi/checked.hpp, waits_block())
# end that, and with it the watchdog (REDIST_TIMEOUT has no effect): for simulators, not for production runs.
option(REDIST_MPI_BLOCKING_WAITS
       "Make redist's waits block in MPI (MPI_Wait*, no watchdog, no yielding): for simulated MPIs" ${REDIST_MPI_IS_SMPI})
if(REDIST_MPI_BLOCKING_WAITS)
  target_compile_definitions(redist PUBLIC $<BUILD_INTERFACE:REDIST_MPI_BLOCKING_WAITS>)
  message(STATUS "redist: blocking waits (REDIST_MPI_BLOCKING_WAITS=ON)")
endif()

if(REDIST_MPI_FALLBACKS)
  message(STATUS "redist: MPI-4 calls replaced by their MPI-3.1 equivalents (REDIST_MPI_FALLBACKS=ON)")
  return()
endif()

_redist_push_mpi_check_state()

# The results are cached per MPI: switching REDIST_MPI (or the wrappers) in a build tree checks again.
set(_redist_mpi_key "${MPI_C_COMPILER};${MPI_C_LIBRARIES}")
if(NOT "${_redist_mpi_key}" STREQUAL "${_REDIST_MPI_COMPAT_CHECKED_FOR}")
  unset(REDIST_HAVE_MPI_LARGE_COUNT CACHE)
  unset(REDIST_HAVE_MPI_INFO_GET_STRING CACHE)
  unset(REDIST_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT CACHE)
  set(_REDIST_MPI_COMPAT_CHECKED_FOR "${_redist_mpi_key}" CACHE INTERNAL "The MPI the compat checks ran against")
endif()

check_symbol_exists(MPI_Info_get_string "mpi.h" REDIST_HAVE_MPI_INFO_GET_STRING)
check_symbol_exists(MPI_Neighbor_alltoallv_init "mpi.h" REDIST_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT)
# Every large-count call and type redist uses, declared and linked (a partial MPI-4 gets the equivalents).
check_cxx_source_compiles([=[
#include <mpi.h>
int main() {
  void* calls[] = {
    reinterpret_cast<void*>(&MPI_Type_size_c), reinterpret_cast<void*>(&MPI_Type_get_extent_c),
    reinterpret_cast<void*>(&MPI_Type_get_true_extent_c), reinterpret_cast<void*>(&MPI_Type_get_envelope_c),
    reinterpret_cast<void*>(&MPI_Type_get_contents_c), reinterpret_cast<void*>(&MPI_Type_contiguous_c),
    reinterpret_cast<void*>(&MPI_Type_vector_c), reinterpret_cast<void*>(&MPI_Type_create_hvector_c),
    reinterpret_cast<void*>(&MPI_Type_indexed_c), reinterpret_cast<void*>(&MPI_Type_create_hindexed_c),
    reinterpret_cast<void*>(&MPI_Type_create_indexed_block_c),
    reinterpret_cast<void*>(&MPI_Type_create_hindexed_block_c), reinterpret_cast<void*>(&MPI_Type_create_struct_c),
    reinterpret_cast<void*>(&MPI_Type_create_subarray_c), reinterpret_cast<void*>(&MPI_Type_create_darray_c),
    reinterpret_cast<void*>(&MPI_Type_create_resized_c), reinterpret_cast<void*>(&MPI_Send_init_c),
    reinterpret_cast<void*>(&MPI_Recv_init_c), reinterpret_cast<void*>(&MPI_Sendrecv_c),
    reinterpret_cast<void*>(&MPI_Alltoallv_c), reinterpret_cast<void*>(&MPI_Iallgatherv_c),
    reinterpret_cast<void*>(&MPI_Reduce_scatter_c), reinterpret_cast<void*>(&MPI_Put_c)};
  MPI_Count count = 0;
  return calls[0] != nullptr && count == 0 ? 0 : 1;
}
]=] REDIST_HAVE_MPI_LARGE_COUNT)
cmake_pop_check_state()

set(_redist_found "")
foreach(_feature REDIST_HAVE_MPI_LARGE_COUNT REDIST_HAVE_MPI_INFO_GET_STRING REDIST_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT)
  if(${_feature})
    target_compile_definitions(redist PUBLIC $<BUILD_INTERFACE:${_feature}>)
    list(APPEND _redist_found ${_feature})
  endif()
endforeach()
message(STATUS "redist: MPI calls found: ${_redist_found}")
