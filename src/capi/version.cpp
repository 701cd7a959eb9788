// SPDX-License-Identifier: BSD-3-Clause
#include "redist/redist.h"

extern "C" void redist_version(int* major, int* minor, int* patch) {
  if (major) *major = REDIST_VERSION_MAJOR;
  if (minor) *minor = REDIST_VERSION_MINOR;
  if (patch) *patch = REDIST_VERSION_PATCH;
}
