# SPDX-License-Identifier: BSD-3-Clause
# Public headers state rules; measurements (times, result files) belong in docs/tuning.md and the other docs, where
# they can be redone without touching the API. Fails on a time with a unit ("6-7 ms", "0.9 s") or a path into
# bench/results/ in include/. Run with -DSOURCE_DIR=<project root>.
file(GLOB_RECURSE headers "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/include/*.h")
list(LENGTH headers count)
if(count LESS 20)
  message(FATAL_ERROR "found ${count} headers under ${SOURCE_DIR}/include; expected the public API (20 or more)")
endif()
set(found "")
foreach(h IN LISTS headers)
  file(STRINGS "${h}" lines REGEX "bench/results|[0-9] ?(ms|us|ns)([^A-Za-z0-9_]|$)|[0-9] s([^A-Za-z0-9_]|$)")
  if(lines)
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${h}")
    list(APPEND found "${rel}: ${lines}")
  endif()
endforeach()
if(found)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "measurements in public headers (move them to docs/tuning.md and link it):\n  ${found}")
endif()
message(STATUS "${count} public headers, no measurements in them")
