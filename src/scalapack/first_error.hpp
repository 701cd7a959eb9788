#pragma once
// Agreement on a ScaLAPACK-style error code (internal).
#include <mpi.h>

namespace redist::scalapack {

// The first error over all processes of comm, ranked as PBLAS ranks them (the smallest argument position;
// a descriptor entry of argument p after a scalar argument p); 0 when no process has one. Collective.
int agree_on_first_error(MPI_Comm comm, int info);

}  // namespace redist::scalapack
