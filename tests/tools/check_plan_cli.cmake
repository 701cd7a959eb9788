# SPDX-License-Identifier: BSD-3-Clause
# Runs redist-plan (TOOL) for one CASE and checks its exit status and output (cmake -P).
#   plan:      the docs' example as JSON and a permutation of blocks that relabeling makes local, as JSON and as
#              a table; exit 0
#   usage:     malformed or missing arguments; exit 2 naming the argument, with the usage
#   too_large: 1e11 block rows, and a graph of about 1e12 edges (terabytes each); exit 1 at once with one line
#              naming the memory they would need, while a small plan still exits 0
include(${CMAKE_CURRENT_LIST_DIR}/tool_checks.cmake)

function(expect_field json expected)
  string(JSON value ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error)
    message(FATAL_ERROR "no field ${ARGN} in the output: ${error}\n${json}")
  endif()
  if(NOT value EQUAL expected)
    message(FATAL_ERROR "${ARGN} = '${value}', expected '${expected}'\n${json}")
  endif()
endfunction()

if(CASE STREQUAL "plan")
  run_tool(0 --m 100000 --n 100000 --from bc:5000x5000:10x10:row --to bc:10000x10000:10x10:col --json)
  expect_field("${out}" 100 nranks)
  expect_field("${out}" 400 edges)
  expect_field("${out}" 80000000000 total_volume)
  # Equal blocks on differently numbered grids: a permutation of the ranks, which relabeling undoes entirely.
  run_tool(0 --m 100000 --n 100000 --from bc:1000x1000:10x10:row --to bc:1000x1000:10x10:col --json)
  expect_field("${out}" 100 edges)
  expect_field("${out}" 0 remote_volume_after)
  run_tool(0 --m 100000 --n 100000 --from bc:1000x1000:10x10:row --to bc:1000x1000:10x10:col --op T
             --relabel greedy)
  if(NOT out MATCHES "remote volume reduction: [0-9.]+ %")
    message(FATAL_ERROR "no table with the reduction:\n${out}")
  endif()
elseif(CASE STREQUAL "usage")
  run_tool(2 --m 100 --n 100 --from bc:10x10:2x2 --to bc:10x10:2x2:row)
  if(NOT err MATCHES "--from 'bc:10x10:2x2' is not valid" OR NOT err MATCHES "usage: redist-plan")
    message(FATAL_ERROR "the error does not name --from, or no usage:\n${err}")
  endif()
  run_tool(2 --m 100 --from bc:10x10:2x2:row --to bc:10x10:2x2:row)
  if(NOT err MATCHES "--n is missing")
    message(FATAL_ERROR "the error does not name the missing --n:\n${err}")
  endif()
  run_tool(2 --m 100 --n 100 --from bc:10x10:2x2:row --to bc:10x10:2x2:row --relabel best)
  run_tool(0 --help)
elseif(CASE STREQUAL "too_large")
  # 1e11 single-row blocks: the layouts alone take terabytes.
  run_tool(1 --m 100000000000 --n 1000 --from bc:1x1:64x64:row --to bc:1x1:64x64:col)
  expect_memory_refusal("${out}" "${err}")
  if(NOT err MATCHES "^redist-plan: --m 100000000000 --n 1000 --from bc:1x1:64x64:row --to bc:1x1:64x64:col needs")
    message(FATAL_ERROR "the refusal does not name the sizes:\n${err}")
  endif()
  # Grids of coprime sides: about 1e6 position pairs per dimension, so about 1e12 edges.
  run_tool(1 --m 1000000 --n 1000000 --from bc:1x1:4096x4096:row --to bc:1x1:4093x4099:col --op T)
  expect_memory_refusal("${out}" "${err}")
  run_tool(0 --m 1000 --n 1000 --from bc:10x10:4x4:row --to bc:20x20:4x4:col)
else()
  message(FATAL_ERROR "CASE must be plan, usage or too_large, got '${CASE}'")
endif()
