// SPDX-License-Identifier: BSD-3-Clause
// C entry points of the in-place alltoallv: options, the report, plan handles, error codes (never throw).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "error_code.hpp"
#include "handle_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"

namespace {

using redist::exchange::inplace_algorithm;
using redist::exchange::inplace_plan;
using redist::exchange::inplace_report;

static_assert(static_cast<int>(inplace_algorithm::automatic) == REDIST_INPLACE_AUTO &&
                  static_cast<int>(inplace_algorithm::chunked) == REDIST_INPLACE_CHUNKED &&
                  static_cast<int>(inplace_algorithm::pairwise) == REDIST_INPLACE_PAIRWISE &&
                  static_cast<int>(inplace_algorithm::bitonic) == REDIST_INPLACE_BITONIC,
              "the C and C++ algorithm values are the same numbers");

void fill(redist_inplace_report* out, const inplace_report& r) {
  if (out == nullptr) return;
  out->algorithm = static_cast<redist_inplace_algorithm>(static_cast<int>(r.algorithm));
  const std::size_t n = std::min(r.reason.size(), sizeof(out->reason) - 1);
  std::memcpy(out->reason, r.reason.data(), n);
  out->reason[n] = '\0';
  out->received_elements = r.received_elements;
  out->bytes_sent = r.bytes_sent;
  out->messages_sent = r.messages_sent;
  out->bytes_local = r.bytes_local;
  out->work_bytes = r.work_bytes;
  out->metadata_bytes = r.metadata_bytes;
}

redist::exchange::inplace_options options_of(const redist_inplace_options* opts) {
  redist::exchange::inplace_options options;
  if (opts == nullptr) return options;
  // A C caller may store any int there: read it as an int (a C++ load of an out-of-range value of the
  // unscoped enum is undefined); an unknown value goes through and validation reports it on every rank.
  static_assert(sizeof(opts->algorithm) == sizeof(int), "redist_inplace_algorithm is int-sized");
  int algorithm = 0;
  std::memcpy(&algorithm, &opts->algorithm, sizeof algorithm);
  options.algorithm = static_cast<inplace_algorithm>(algorithm);
  if (opts->work_bytes != 0) options.work_bytes = opts->work_bytes;
  if (opts->pairwise_guard != 0) options.pairwise_guard = opts->pairwise_guard;
  return options;
}

void fill_outputs(const redist_inplace_options* opts, const inplace_report& r) {
  if (opts == nullptr) return;
  fill(opts->report, r);
  if (opts->recvcounts_out != nullptr) std::copy(r.recvcounts.begin(), r.recvcounts.end(), opts->recvcounts_out);
}

// Live plans by handle (handle_registry.hpp), as the neighbor exchange's redist_request handles
// (src/capi/exchange.cpp).
auto& plans() { return redist::capi::registry_of<inplace_plan, redist_inplace_plan>(); }

}  // namespace

extern "C" {

int redist_alltoallv_inplace(void* buf, int64_t capacity, const int64_t sendcounts[], const int64_t recvcounts[],
                             MPI_Datatype type, MPI_Comm comm, const redist_inplace_options* opts) {
  try {
    const inplace_report r =
        redist::exchange::alltoallv_inplace(buf, capacity, sendcounts, recvcounts, type, comm, options_of(opts));
    fill_outputs(opts, r);
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_inplace_plan_create(MPI_Comm comm, int64_t capacity, const int64_t sendcounts[], const int64_t recvcounts[],
                               MPI_Datatype type, const redist_inplace_options* opts, redist_inplace_plan* plan) {
  try {
    // Agreed like every argument, so that a rank passing no place for the handle fails with the others.
    redist::mpi::agree_on(comm, redist::mpi::error_kind::invalid_argument,
                          plan == nullptr ? "plan is a null pointer" : "");
    auto made = std::make_unique<inplace_plan>(
        redist::exchange::make_inplace_plan(comm, capacity, sendcounts, recvcounts, type, options_of(opts)));
    fill_outputs(opts, made->report());
    *plan = plans().add(std::move(made));
    return MPI_SUCCESS;
  } catch (...) {
    if (plan != nullptr) *plan = REDIST_INPLACE_PLAN_NULL;
    return redist::capi::current_error_code();
  }
}

int redist_inplace_plan_execute(redist_inplace_plan plan, void* buf, redist_inplace_report* report) {
  try {
    const inplace_plan* p = plans().find(plan);
    if (p == nullptr) return MPI_ERR_ARG;
    fill(report, p->execute(buf));
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_inplace_plan_start(redist_inplace_plan plan, void* buf) {
  try {
    const inplace_plan* p = plans().find(plan);
    if (p == nullptr) return MPI_ERR_ARG;
    p->start(buf);
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_inplace_plan_wait(redist_inplace_plan plan, redist_inplace_report* report) {
  try {
    const inplace_plan* p = plans().find(plan);
    if (p == nullptr) return MPI_ERR_ARG;
    p->wait();
    fill(report, p->statistics());
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_inplace_plan_free(redist_inplace_plan* plan) {
  if (plan == nullptr) return MPI_ERR_ARG;
  if (*plan == REDIST_INPLACE_PLAN_NULL) return MPI_SUCCESS;
  const bool known = plans().take(*plan) != nullptr;
  *plan = REDIST_INPLACE_PLAN_NULL;
  return known ? MPI_SUCCESS : MPI_ERR_ARG;
}

int redist_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (sendbuf != MPI_IN_PLACE)
    return MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  try {
    redist::exchange::alltoallv_inplace_symmetric(recvbuf, recvcounts, rdispls, recvtype, comm);
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  if (sendbuf != MPI_IN_PLACE) return MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  try {
    redist::exchange::alltoall_inplace(recvbuf, recvcount, recvtype, comm);
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

}  // extern "C"
