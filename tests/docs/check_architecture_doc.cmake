# SPDX-License-Identifier: BSD-3-Clause
# A page that names where things live (docs/architecture.md's map of the source tree, CONTRIBUTING.md's recipes):
# every path it quotes (`src/...`, `include/...`, `python/...`, `tools/...`, `tests/...`, `docs/...`, `bench/...`,
# `cmake/...`, `scripts/...`, with a trailing * for a family of files) must exist in the source tree, so that
# moving a file without updating the page fails here.
#   cmake -DSOURCE_DIR=<project root> [-DDOC=CONTRIBUTING.md] -P check_architecture_doc.cmake
if(NOT DOC)
  set(DOC docs/architecture.md)
endif()
file(READ "${SOURCE_DIR}/${DOC}" page)
string(REGEX MATCHALL "(src|include|python|tools|tests|docs|bench|cmake|scripts)/[A-Za-z0-9_./*-]+" quoted "${page}")
list(REMOVE_DUPLICATES quoted)
list(LENGTH quoted count)
if(count LESS 20)
  message(FATAL_ERROR "${DOC} quotes ${count} paths; expected a map of the source tree (20 or more)")
endif()
set(missing "")
foreach(path IN LISTS quoted)
  string(REGEX REPLACE "[.]$" "" path "${path}")  # the end of a sentence
  if(path MATCHES "[*]")
    file(GLOB found "${SOURCE_DIR}/${path}")
  elseif(EXISTS "${SOURCE_DIR}/${path}")
    set(found yes)
  else()
    set(found "")
  endif()
  if(NOT found)
    list(APPEND missing "${path}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "${DOC} names paths that do not exist: ${missing}")
endif()
message(STATUS "${DOC}: ${count} paths, all present")
