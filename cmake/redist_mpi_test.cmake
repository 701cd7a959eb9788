# redist_add_mpi_test(NAME <name> SOURCES <src...> RANKS <n...> [LIBS <lib...>] [TIMEOUT <s>] [ENV <k=v...>])
# Builds one GoogleTest executable linked with the MPI test main (tests/support) and
# registers it once per rank count as <name>.np<N>, run through mpiexec -n N.
# Pass/fail is decided by the results of all ranks (see tests/support/mpi_gtest_main.cpp).
function(redist_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;RANKS;LIBS;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE redist redist_mpi_gtest_main ${T_LIBS})
  foreach(n IN LISTS T_RANKS)
    set(test_name ${T_NAME}.np${n})
    add_test(NAME ${test_name}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${n}
      LABELS "mpi;${T_LABELS}" ENVIRONMENT "OMP_NUM_THREADS=1;${T_ENV}")
  endforeach()
endfunction()
