# SPDX-License-Identifier: BSD-3-Clause
# Fails when a C or C++ file under FOLDER has a line matching PATTERN; RULE says what to do instead.
#   cmake -DSOURCE_DIR=<project root> -DFOLDER=src -DPATTERN=<regex> -DRULE=<text> -DAT_LEAST=<files> -P check_lines.cmake
# style.src_includes: src/ includes internal headers from src/, its one private include root ("mpi/checked.hpp"),
#   never by a path that climbs out of its folder ("../mpi/checked.hpp"), so that a header can move without every
#   relative path to it changing.
# style.headers_without_measurements: public headers state rules; measurements (a time with its unit, a path into
#   bench/results/) belong in docs/tuning.md and the other docs, where they can be redone without touching the API.
file(GLOB_RECURSE files "${SOURCE_DIR}/${FOLDER}/*.cpp" "${SOURCE_DIR}/${FOLDER}/*.hpp" "${SOURCE_DIR}/${FOLDER}/*.h")
list(LENGTH files count)
if(count LESS AT_LEAST)
  message(FATAL_ERROR "found ${count} files under ${SOURCE_DIR}/${FOLDER}; expected ${AT_LEAST} or more")
endif()
set(found "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "${PATTERN}")
  if(lines)
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
    list(APPEND found "${rel}: ${lines}")
  endif()
endforeach()
if(found)
  string(REPLACE ";" "\n  " found "${found}")
  message(FATAL_ERROR "${RULE}:\n  ${found}")
endif()
message(STATUS "${count} files under ${FOLDER}/, no line matches '${PATTERN}'")
