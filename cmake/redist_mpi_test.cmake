# SPDX-License-Identifier: BSD-3-Clause
# redist_add_mpi_test(NAME <name> SOURCES <src...> RANKS <n...> [NODES <n:k...>] [LIBS <lib...>] [TIMEOUT <s>]
#                     [ENV <k=v...>])
# Builds one GoogleTest executable linked with the MPI test main (tests/support) and
# registers it once per rank count as <name>.np<N>, run through mpiexec -n N, and once per NODES entry
# "N:K" as <name>.np<N>.nodes<K>: N ranks that MPICH splits into K simulated nodes
# (MPIR_CVAR_NUM_CLIQUES=K: MPI_COMM_TYPE_SHARED sees K groups and no shared memory between them).
# Pass/fail is decided by the results of all ranks (see tests/support/mpi_gtest_main.cpp).

# ctest's verdict on skipped GoogleTest tests. A whole program is one ctest entry, and ctest can only call an
# entry passed, failed or skipped: "skipped" for a program that skipped 1 test and passed 19 would hide the
# 19 passes, and SKIP_REGULAR_EXPRESSION wins over a non-zero exit status, so matching GoogleTest's own
# "[  SKIPPED ]" lines would also hide failures (a failed test beside skipped ones, a failure on another rank
# than rank 0, which alone prints the summary). The mains (tests/support/test_main.hpp) therefore print
# "[skip] all N test(s) skipped" only when every test was skipped and nothing failed on any rank (say, tests
# that all need more ranks than the entry gives them): such an entry shows as skipped. A run that passed some
# tests and skipped others stays passed, with a "[skip] N of M test(s) skipped" line in its log (ctest -V).
set(REDIST_GTEST_SKIP_REGEX "\\[skip\\] all [0-9]+ test\\(s\\) skipped")

function(redist_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;RANKS;NODES;LIBS;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE redist redist_mpi_gtest_main redist_test_yield_when_idle ${T_LIBS})
  foreach(n IN LISTS T_RANKS)
    set(test_name ${T_NAME}.np${n})
    add_test(NAME ${test_name}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${n}
      LABELS "mpi;${T_LABELS}" ENVIRONMENT "OMP_NUM_THREADS=1;${T_ENV}"
      SKIP_REGULAR_EXPRESSION "${REDIST_GTEST_SKIP_REGEX}")
  endforeach()
  foreach(entry IN LISTS T_NODES)
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 n)
    list(GET parts 1 k)
    set(test_name ${T_NAME}.np${n}.nodes${k})
    add_test(NAME ${test_name}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${n}
      LABELS "mpi;${T_LABELS}" ENVIRONMENT "OMP_NUM_THREADS=1;MPIR_CVAR_NUM_CLIQUES=${k};${T_ENV}"
      SKIP_REGULAR_EXPRESSION "${REDIST_GTEST_SKIP_REGEX}")
  endforeach()
endfunction()
