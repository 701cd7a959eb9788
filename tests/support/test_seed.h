// SPDX-License-Identifier: BSD-3-Clause
/* The base seed of the plain C test programs (tests/c), as test_seed.hpp and test_main.hpp give it to the
 * GoogleTest programs: REDIST_TEST_SEED (an unsigned decimal integer) when set, else time-based; rank 0's on
 * every rank, printed by rank 0 ("[seed] REDIST_TEST_SEED=<n>"). C99 and MPI. */
#ifndef REDIST_TEST_SEED_H
#define REDIST_TEST_SEED_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* splitmix64's finalizer (test_seed.hpp's mix_seed): nearby inputs give unrelated outputs. */
static inline uint64_t redist_test_mix_seed(uint64_t z) {
  z += 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* The run's base seed, the same on every rank (collective over MPI_COMM_WORLD). A REDIST_TEST_SEED that is not
 * an unsigned 64-bit decimal integer ends the program on every rank, with exit status 2. */
static inline uint64_t redist_test_base_seed(void) {
  int rank = 0;
  uint64_t agreed[2] = {0, 1}; /* the seed, and whether REDIST_TEST_SEED was valid */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    const char* text = getenv("REDIST_TEST_SEED");
    if (text == NULL || *text == '\0') {
      /* time() repeats within a second; the stack's address differs between processes (address randomization) */
      agreed[0] = redist_test_mix_seed((uint64_t)time(NULL) ^ ((uint64_t)clock() << 32) ^ (uint64_t)(uintptr_t)&rank);
    } else {
      for (const char* c = text; *c != '\0' && agreed[1]; ++c) {
        const uint64_t digit = (uint64_t)(*c - '0');
        if (*c < '0' || *c > '9' || agreed[0] > (UINT64_MAX - digit) / 10)
          agreed[1] = 0;
        else
          agreed[0] = agreed[0] * 10 + digit;
      }
    }
    if (agreed[1])
      printf("[seed] REDIST_TEST_SEED=%llu\n", (unsigned long long)agreed[0]);
    else
      fprintf(stderr, "REDIST_TEST_SEED=%s is not an unsigned 64-bit decimal integer\n", text);
    fflush(stdout);
  }
  MPI_Bcast(agreed, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (!agreed[1]) {
    MPI_Finalize();
    exit(2);
  }
  return agreed[0];
}

#endif
