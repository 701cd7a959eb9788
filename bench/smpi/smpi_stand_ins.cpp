// SPDX-License-Identifier: BSD-3-Clause
// Stand-ins for MPI calls that SimGrid's SMPI 3.32 declares but aborts on ("Not yet implemented"), linked into the
// benchmark module only: -Wl,-Bsymbolic-functions binds the statically linked libredist's calls to these rather than
// to libsimgrid's. What redist itself must not depend on was made portable in the library (src/mpi/checked.cpp:
// blocking collectives, MPI_Comm_dup, no MPI_Test of a null request); what is left here is genuinely missing.
//
// Matched probes (the in-place exchange's receives, the watchdog's roll call): a probe, then a receive from the
// probed source and tag. Exact here: SMPI runs every rank's code on one thread without preemption, so nothing can
// receive between the probe and the receive, and MPI's non-overtaking order makes that receive take the probed
// message.
#include <mpi.h>

namespace {
struct probed_message {
  int source, tag;
  MPI_Comm comm;
};

int matched(const MPI_Status& found, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  *message = new probed_message{found.MPI_SOURCE, found.MPI_TAG, comm};
  if (status != MPI_STATUS_IGNORE) *status = found;
  return MPI_SUCCESS;
}
}  // namespace

extern "C" int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  MPI_Status found;
  const int code = MPI_Iprobe(source, tag, comm, flag, &found);
  if (code != MPI_SUCCESS || *flag == 0) return code;
  return matched(found, comm, message, status);
}

extern "C" int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  MPI_Status found;
  const int code = MPI_Probe(source, tag, comm, &found);
  if (code != MPI_SUCCESS) return code;
  return matched(found, comm, message, status);
}

extern "C" int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (*message == MPI_MESSAGE_NULL) return MPI_ERR_REQUEST;
  const auto* probed = static_cast<probed_message*>(*message);
  const int code = MPI_Recv(buf, count, type, probed->source, probed->tag, probed->comm, status);
  delete probed;
  *message = MPI_MESSAGE_NULL;
  return code;
}
