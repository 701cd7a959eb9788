// SPDX-License-Identifier: BSD-3-Clause
// A drop-in preloaded into (or linked with) a program built against another MPI brings a second MPI library
// into the process: each rank then crashes or aborts somewhere inside MPI_Init with a message that names
// neither library. Refuse at load time instead, saying which libraries meet and what to do.
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The ABI an MPI library's name stands for, "" for other libraries: MPICH's libmpich.so.12 and the MPICH-ABI
// libmpi.so.12 (Intel MPI, MVAPICH) are one ABI; Open MPI's libmpi.so.40 is another.
std::string mpi_abi(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const std::string name = slash ? slash + 1 : path;
  for (const char* stem : {"libmpich.so.", "libmpi.so."}) {
    const std::size_t n = std::strlen(stem);
    if (name.compare(0, n, stem) != 0) continue;
    const std::string major =
        name.substr(n, name.find('.', n) == std::string::npos ? std::string::npos : name.find('.', n) - n);
    if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos) return "";
    return "libmpi.so." + major;
  }
  return "";
}

struct loaded_mpi {
  std::vector<std::string> abis, paths;
};

int note_library(dl_phdr_info* info, std::size_t, void* data) {
  auto& seen = *static_cast<loaded_mpi*>(data);
  const std::string abi = info->dlpi_name ? mpi_abi(info->dlpi_name) : "";
  if (abi.empty()) return 0;
  for (const std::string& a : seen.abis)
    if (a == abi) return 0;
  seen.abis.push_back(abi);
  seen.paths.push_back(info->dlpi_name);
  return 0;
}

__attribute__((constructor)) void refuse_a_second_mpi() {
  loaded_mpi seen;
  dl_iterate_phdr(note_library, &seen);
  if (seen.abis.size() < 2) return;
  std::string libraries;
  for (const std::string& p : seen.paths) libraries += (libraries.empty() ? "" : " and ") + p;
  std::fprintf(stderr,
               "libredist_scalapack: this process loads two MPI libraries, %s; they cannot work together. This "
               "drop-in was built for %s: preload or link a redist built for the program's own MPI (cmake "
               "-DREDIST_MPI=mpich or -DREDIST_MPI=openmpi).\n",
               libraries.c_str(), REDIST_DROPIN_MPI_LIBRARY);
  std::fflush(stderr);
  _exit(1);
}

}  // namespace
