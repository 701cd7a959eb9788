// SPDX-License-Identifier: BSD-3-Clause
// Where simulated time goes in redist's collectives: with REDIST_SMPI_PROFILE=1, every collective and
// communicator call the program (and the statically linked libredist, bound here by -Bsymbolic-functions) makes is
// timed on the simulated clock and counted per MPI function; rank 0 prints the totals as one JSON line on stderr at
// MPI_Finalize (=2: also each call of rank 0 as it completes). This is how the plan's O(P) collectives were found (docs/smpi.md).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {
struct tally {
  long long calls = 0;
  double seconds = 0;
};
std::map<std::string, tally>& tallies() {
  static std::map<std::string, tally> t;  // per simulated rank: the module's globals are privatized
  return t;
}
bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("REDIST_SMPI_PROFILE");
    return v != nullptr && (v[0] == '1' || v[0] == '2');
  }();
  return on;
}
bool verbose() {  // REDIST_SMPI_PROFILE=2: every call of rank 0 as it completes
  static const bool on = [] {
    const char* v = std::getenv("REDIST_SMPI_PROFILE");
    return v != nullptr && v[0] == '2';
  }();
  return on;
}
template <class F>
int timed(const char* name, F&& call) {
  if (!enabled()) return call();
  const double t0 = PMPI_Wtime();
  const int code = call();
  const double spent = PMPI_Wtime() - t0;
  tally& t = tallies()[name];
  ++t.calls;
  t.seconds += spent;
  if (verbose()) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "[profile] %s %.1f us at %.1f us\n", name, spent * 1e6, t0 * 1e6);
  }
  return code;
}
}  // namespace

extern "C" {
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  return timed("MPI_Allreduce", [&] { return PMPI_Allreduce(s, r, n, t, o, c); });
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  return timed("MPI_Allgather", [&] { return PMPI_Allgather(s, sn, st, r, rn, rt, c); });
}
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  return timed("MPI_Alltoall", [&] { return PMPI_Alltoall(s, sn, st, r, rn, rt, c); });
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  return timed("MPI_Bcast", [&] { return PMPI_Bcast(b, n, t, root, c); });
}
int MPI_Barrier(MPI_Comm c) {
  return timed("MPI_Barrier", [&] { return PMPI_Barrier(c); });
}
int MPI_Exscan(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  return timed("MPI_Exscan", [&] { return PMPI_Exscan(s, r, n, t, o, c); });
}
int MPI_Gather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  return timed("MPI_Gather", [&] { return PMPI_Gather(s, sn, st, r, rn, rt, root, c); });
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* d) {
  return timed("MPI_Comm_dup", [&] { return PMPI_Comm_dup(c, d); });
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* d) {
  return timed("MPI_Comm_split", [&] { return PMPI_Comm_split(c, color, key, d); });
}
int MPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm* d) {
  return timed("MPI_Comm_create_group", [&] { return PMPI_Comm_create_group(c, g, tag, d); });
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info i, MPI_Comm* d) {
  return timed("MPI_Comm_split_type", [&] { return PMPI_Comm_split_type(c, type, key, i, d); });
}
int MPI_Comm_free(MPI_Comm* c) {
  return timed("MPI_Comm_free", [&] { return PMPI_Comm_free(c); });
}
int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void* base, MPI_Win* w) {
  return timed("MPI_Win_allocate_shared", [&] { return PMPI_Win_allocate_shared(size, unit, info, c, base, w); });
}
int MPI_Finalize() {
  if (enabled()) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::string line = "{\"profile_rank0\": {";
      for (const auto& [name, t] : tallies())
        line += (line.back() == '{' ? "\"" : ", \"") + name + "\": {\"calls\": " + std::to_string(t.calls) +
                ", \"simulated_seconds\": " + std::to_string(t.seconds) + "}";
      std::fprintf(stderr, "%s}}\n", line.c_str());
    }
  }
  return PMPI_Finalize();
}
}
