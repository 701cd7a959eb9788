# SPDX-License-Identifier: BSD-3-Clause
# The library's sources include internal headers from src/, its one private include root ("mpi/checked.hpp"),
# never by a path that climbs out of their folder ("../mpi/checked.hpp"): a header can then move without every
# relative path to it changing. Run with -DSOURCE_DIR=<project root>.
file(GLOB_RECURSE files "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp" "${SOURCE_DIR}/src/*.h")
list(LENGTH files count)
if(count LESS 100)
  message(FATAL_ERROR "found ${count} sources under ${SOURCE_DIR}/src; expected the library (100 or more)")
endif()
set(climbing "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[.][.]/")
  if(lines)
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
    list(APPEND climbing "${rel}: ${lines}")
  endif()
endforeach()
if(climbing)
  string(REPLACE ";" "\n  " climbing "${climbing}")
  message(FATAL_ERROR "includes that climb out of their folder (write the path from src/ instead):\n  ${climbing}")
endif()
message(STATUS "${count} sources under src/, none includes by \"../\"")
