// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Peer libraries as run-time baselines (--costa, --cosma): their ScaLAPACK-API libraries, built by hand outside
// the repository and never a build dependency, dlopen()ed with RTLD_LOCAL. That keeps their symbols out of the
// global scope, so even a peer library exporting ScaLAPACK's own names (libcosta_scalapack.so, libcosma_pxgemm.so)
// cannot interpose the ScaLAPACK routines a benchmark calls as its baseline, while dlsym() on the handle finds the
// peer's own definitions first. Their BLACS calls resolve against the libscalapack already loaded (the peer must
// be built against the same one). Handles are never closed: peers keep MPI state until MPI_Finalize.
#include <initializer_list>
#include <string>

namespace redist_baseline {

class peer_library {
 public:
  peer_library() = default;
  // Loads `path`; `option` (e.g. "--costa") names the library in errors. Throws std::runtime_error.
  peer_library(std::string option, std::string path);
  bool loaded() const noexcept { return handle_ != nullptr; }
  const std::string& path() const noexcept { return path_; }
  // The first of `names` the library defines, its name in `found`; throws naming the path and the symbols when
  // there is none, and when the definition is `baseline_own` (the ScaLAPACK routine this program already links:
  // a ScaLAPACK library passed as a peer would time ScaLAPACK twice).
  void* symbol(std::initializer_list<const char*> names, const void* baseline_own, std::string& found) const;

 private:
  std::string option_, path_;
  void* handle_ = nullptr;
};

// COSTA (github eth-cscs/COSTA): costa_pdgemr2d_ / costa_pdtran_ from libcosta_prefixed_scalapack.so, or its own
// pdgemr2d_ / pdtran_ from libcosta_scalapack.so. COSTA's pdtran takes alpha non-const.
struct costa_library {
  using pdgemr2d_fn = void (*)(const int*, const int*, const double*, const int*, const int*, const int*, double*,
                               const int*, const int*, const int*, const int*);
  using pdtran_fn = void (*)(const int*, const int*, double*, const double*, const int*, const int*, const int*,
                             const double*, double*, const int*, const int*, const int*);
  peer_library library;
  pdgemr2d_fn pdgemr2d = nullptr;
  pdtran_fn pdtran = nullptr;
  std::string pdgemr2d_symbol, pdtran_symbol;
  bool loaded() const noexcept { return library.loaded(); }
  const std::string& path() const noexcept { return library.path(); }
};
// Empty path: nothing loaded.
costa_library load_costa(const std::string& path);

}  // namespace redist_baseline
