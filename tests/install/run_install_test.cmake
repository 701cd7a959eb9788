# Install test (cmake -P): installs the build tree into a scratch prefix, then builds and runs the
# consumer in tests/install/consumer twice, once through find_package(redist) and once through
# pkg-config with the MPICH compiler wrapper, exactly as a user of an installed redist would.
#
# Inputs (-D): BUILD_DIR (configured and built redist tree), SOURCE_DIR (the consumer project),
# WORK_DIR (scratch; wiped first), MPIEXEC (MPICH launcher). Optional: MPICXX (default mpicxx.mpich),
# RANKS (default 2).
# Any failing step stops the test with a message naming the step and its output.

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install test: ${var} is not set (pass -D${var}=...)")
  endif()
endforeach()
if(NOT MPIEXEC)
  message(FATAL_ERROR "install test: MPIEXEC is empty; no MPI launcher was found when redist was configured")
endif()
if(NOT RANKS)
  set(RANKS 2)
endif()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# run_step(<name> <command...>): runs the command, echoes what it ran, fails the test on a non-zero exit.
# The output is kept in <WORK_DIR>/<name>.log and repeated in the failure message.
function(run_step name)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "[${name}] ${shown}")
  string(MAKE_C_IDENTIFIER "${name}" log_name)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  file(WRITE "${WORK_DIR}/${log_name}.log" "${shown}\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test step '${name}' failed (${rc}):\n  ${shown}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# ---- 1. install -----------------------------------------------------------------------------------
run_step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(expected include/redist/redist.hpp)
  if(NOT EXISTS "${prefix}/${expected}")
    message(FATAL_ERROR "install test step 'install' failed: ${prefix}/${expected} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config_files "${prefix}/*/redistConfig.cmake")
file(GLOB_RECURSE pc_files "${prefix}/*/redist.pc")
if(NOT config_files)
  message(FATAL_ERROR "install test step 'install' failed: no redistConfig.cmake under ${prefix}")
endif()
if(NOT pc_files)
  message(FATAL_ERROR "install test step 'install' failed: no redist.pc under ${prefix}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)

# ---- 2. find_package consumer ------------------------------------------------------------------
# Only the prefix is given: the package config must find MPI and OpenMP on its own.
run_step("configure consumer (find_package)" "${CMAKE_COMMAND}"
  -S "${SOURCE_DIR}" -B "${consumer_build}"
  -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=${prefix}")
run_step("build consumer (find_package)" "${CMAKE_COMMAND}" --build "${consumer_build}")
run_step("run consumer (find_package)" "${MPIEXEC}" -n ${RANKS} "${consumer_build}/redist_consumer")
message(STATUS "${step_output}")

# ---- 3. pkg-config consumer ----------------------------------------------------------------------
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG_EXECUTABLE)
  message(FATAL_ERROR "install test step 'pkg-config' failed: pkg-config is not installed")
endif()
if(NOT MPICXX)
  find_program(MPICXX NAMES mpicxx.mpich)
endif()
if(NOT MPICXX)
  message(FATAL_ERROR "install test step 'pkg-config' failed: the MPICH compiler wrapper mpicxx.mpich was not found")
endif()
run_step("pkg-config --cflags --libs redist" "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${pc_dir}"
  "${PKG_CONFIG_EXECUTABLE}" --cflags --libs redist)
string(STRIP "${step_output}" pc_flags)
# The flags must point into the prefix the library was installed to, not where it was configured for
# (otherwise the build below could silently pick up another installed copy).
string(FIND "${pc_flags}" "${prefix}" prefix_at)
if(prefix_at EQUAL -1)
  message(FATAL_ERROR "install test step 'pkg-config --cflags --libs redist' failed: the flags '${pc_flags}' "
                      "do not point into the install prefix ${prefix}; redist.pc is not relocatable")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run_step("build consumer (pkg-config)" "${MPICXX}" -std=c++17 -O2 "${SOURCE_DIR}/main.cpp" ${pc_flags}
  -o "${WORK_DIR}/redist_consumer_pkgconfig")
run_step("run consumer (pkg-config)" "${MPIEXEC}" -n ${RANKS} "${WORK_DIR}/redist_consumer_pkgconfig")
message(STATUS "${step_output}")
message(STATUS "install test passed")
