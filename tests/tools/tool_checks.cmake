# SPDX-License-Identifier: BSD-3-Clause
# What the command-line tools' check scripts share (included by check_*.cmake, run with cmake -P).

# Runs TOOL with the arguments; fails unless it exits with expected_status. Sets out and err in the caller.
function(run_tool expected_status)
  execute_process(COMMAND ${TOOL} ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected_status)
    get_filename_component(tool_name "${TOOL}" NAME)
    message(FATAL_ERROR "${tool_name} ${ARGN}: exit status ${status}, expected ${expected_status}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# Sizes the machine cannot hold: refused before any work with nothing on stdout and one line on stderr saying
# how much memory the run would need.
function(expect_memory_refusal out err)
  string(STRIP "${err}" line)
  if(NOT out STREQUAL "" OR line MATCHES "\n" OR NOT line MATCHES "needs about [0-9.]+ GiB of memory"
     OR NOT line MATCHES "GiB\\)$")
    message(FATAL_ERROR "expected one line saying how much memory the sizes need, got:\n${out}${err}")
  endif()
endfunction()
