/* redist: the one C header for every C entry point of the project. */
#ifndef REDIST_REDIST_H
#define REDIST_REDIST_H

#include <mpi.h>
#include <stdint.h>

#include "redist/version.hpp"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library the program runs with (may differ from the header's REDIST_VERSION_*). */
void redist_version(int* major, int* minor, int* patch);

#ifdef __cplusplus
}
#endif

#endif /* REDIST_REDIST_H */
