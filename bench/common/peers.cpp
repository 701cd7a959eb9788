// SPDX-License-Identifier: BSD-3-Clause
#include "peers.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "baseline.hpp"

namespace redist_baseline {

peer_library::peer_library(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error(option_ + " " + path_ + ": cannot load (" + (why ? why : "dlopen failed") + ")");
  }
}

void* peer_library::symbol(std::initializer_list<const char*> names, const void* baseline_own,
                           std::string& found) const {
  std::string tried;
  for (const char* name : names) {
    dlerror();
    void* symbol = dlsym(handle_, name);
    if (symbol == nullptr) {
      tried += tried.empty() ? name : std::string(", ") + name;
      continue;
    }
    if (symbol == baseline_own)
      throw std::runtime_error(option_ + " " + path_ + ": " + name +
                               " is the ScaLAPACK definition this program already links, not the peer's");
    found = name;
    return symbol;
  }
  throw std::runtime_error(option_ + " " + path_ + ": defines none of " + tried);
}

costa_library load_costa(const std::string& path) {
  costa_library costa;
  if (path.empty()) return costa;
  costa.library = peer_library("--costa", path);
  costa.pdgemr2d = reinterpret_cast<costa_library::pdgemr2d_fn>(costa.library.symbol(
      {"costa_pdgemr2d_", "pdgemr2d_"}, reinterpret_cast<const void*>(&pdgemr2d_), costa.pdgemr2d_symbol));
  costa.pdtran = reinterpret_cast<costa_library::pdtran_fn>(
      costa.library.symbol({"costa_pdtran_", "pdtran_"}, reinterpret_cast<const void*>(&pdtran_), costa.pdtran_symbol));
  return costa;
}

}  // namespace redist_baseline
