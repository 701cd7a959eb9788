// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The one way the library keeps state per communicator: a value attached to the communicator as an attribute,
// made by every rank in the same call and deleted with the communicator. A duplicate does not inherit it (the
// keyval's copy function is the null one), so a library communicator starts empty.
#include <mpi.h>

#include <memory>

#include "checked.hpp"

namespace redist::mpi {

template <class T>
class comm_attribute {
 public:
  comm_attribute() {
    REDIST_MPI_CHECK_LOCAL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &release, &keyval_, nullptr));
  }
  comm_attribute(const comm_attribute&) = delete;
  comm_attribute& operator=(const comm_attribute&) = delete;

  // The value cached on comm, or null.
  T* find(MPI_Comm comm) const {
    void* value = nullptr;
    int found = 0;
    REDIST_MPI_CHECK_LOCAL(MPI_Comm_get_attr(comm, keyval_, &value, &found));
    return found ? static_cast<T*>(value) : nullptr;
  }

  // The value cached on comm, made by make() on the first call. make is usually collective: every rank must make
  // the same calls on the same communicator, so that all find the value or all make it.
  template <class Make>
  T& get(MPI_Comm comm, Make&& make) const {
    if (T* cached = find(comm)) return *cached;
    auto made = std::make_unique<T>(make());
    REDIST_MPI_CHECK_LOCAL(MPI_Comm_set_attr(comm, keyval_, made.get()));
    return *made.release();  // owned by the attribute from here
  }

  // Drops the value cached on comm, if any (local): for a value made in a step whose agreement failed, which
  // some ranks cached and others did not; every rank forgets, and the next call makes it again everywhere.
  void forget(MPI_Comm comm) const {
    if (find(comm) != nullptr) REDIST_MPI_CHECK_LOCAL(MPI_Comm_delete_attr(comm, keyval_));
  }

 private:
  static int release(MPI_Comm, int, void* value, void*) {
    delete static_cast<T*>(value);
    return MPI_SUCCESS;
  }
  int keyval_ = MPI_KEYVAL_INVALID;
};

// For values that hold MPI objects which must go before MPI shuts down (shared windows, cached plans): a keyval
// whose attributes `on_free` deletes when their communicator is freed, and `at_finalize`, run once at the start of
// MPI_Finalize (an attribute of MPI_COMM_SELF, deleted before MPI shuts anything down), for what is still cached.
int new_comm_keyval_with_finalize(MPI_Comm_delete_attr_function* on_free, MPI_Comm_delete_attr_function* at_finalize);

}  // namespace redist::mpi
