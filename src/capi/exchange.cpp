// SPDX-License-Identifier: BSD-3-Clause
// C entry points of the persistent neighborhood alltoallv: MPI_Info parsing, error codes, the opaque handle.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "error_code.hpp"
#include "handle_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "mpi/watchdog.hpp"
#include "redist/exchange/neighbor.hpp"
#include "redist/names.hpp"
#include "redist/redist.h"

namespace {

// Live requests by handle (handle_registry.hpp): a handle kept past redist_request_free, or any value init never
// returned, is refused with MPI_ERR_REQUEST instead of touching freed memory.
auto& requests() { return redist::capi::registry_of<redist::exchange::neighbor_plan, redist_request>(); }

using redist::exchange::cost_model;
using redist::exchange::exchange_options;
using redist::exchange::neighbor_strategy;

// The value of an info key, or "" when absent; a problem goes to `problem`.
std::string info_value(MPI_Info info, const char* key, std::string& problem) {
  if (info == MPI_INFO_NULL) return {};
  std::string value;
  try {
    if (!redist::mpi::info_get(info, key, value)) return {};
  } catch (const redist::mpi_error& e) {
    problem = std::string("reading info key ") + key + " failed: " + e.what();
    return {};
  }
  return value;
}

// Reads the info keys; a wrong value is a problem text (agreed on by the caller, as every rank must fail).
exchange_options parse_info(MPI_Info info, std::string& problem) {
  exchange_options options;
  const std::string strategy = info_value(info, "redist_strategy", problem);
  if (!strategy.empty()) {
    try {
      options.strategy = redist::parse_name<neighbor_strategy>(strategy);
    } catch (const redist::invalid_argument&) {
      problem = "info redist_strategy = \"" + strategy + "\": expected " + redist::spelled_choices<neighbor_strategy>();
    }
  }
  const std::string region_size = info_value(info, "redist_region_size", problem);
  if (!region_size.empty()) {
    char* end = nullptr;
    const long n = std::strtol(region_size.c_str(), &end, 10);
    if (*end != '\0' || n <= 0 || n > INT32_MAX)
      problem = "info redist_region_size = \"" + region_size + "\": expected a positive integer";
    else
      options.region_size = static_cast<int>(n);
  }
  const std::string model = info_value(info, "redist_cost_model", problem);
  if (model == "defaults") {
    options.model = cost_model{};
  } else if (!model.empty() && model != "calibrate") {
    cost_model m;
    m.source = "user (info redist_cost_model)";
    double* fields[] = {&m.intra_latency,           &m.intra_seconds_per_message, &m.intra_seconds_per_byte,
                        &m.inter_latency,           &m.inter_seconds_per_message, &m.inter_seconds_per_byte,
                        &m.region_seconds_per_byte, &m.copy_seconds_per_byte};
    constexpr size_t count = sizeof(fields) / sizeof(fields[0]);
    const char* at = model.c_str();
    bool good = true;
    for (size_t k = 0; k < count && good; ++k) {
      char* end = nullptr;
      *fields[k] = std::strtod(at, &end);
      good = end != at && *fields[k] >= 0 && (*end == (k + 1 < count ? ',' : '\0'));
      at = end + (k + 1 < count ? 1 : 0);
    }
    if (good)
      options.model = m;
    else
      problem = "info redist_cost_model = \"" + model +
                "\": expected calibrate, defaults or eight non-negative numbers separated by commas";
  }
  return options;
}

// What the watchdog's line says of the communicator a process passed (src/mpi/watchdog.hpp): side by side, the
// lines of the ranks show one that passed a communicator without the others' graph.
struct communicator_summary {
  int topology = MPI_UNDEFINED;  // MPI_Topo_test's
  int sources = 0, destinations = 0;
};
void describe_communicator(const void* summary, char* out, std::size_t size) noexcept {
  const auto& c = *static_cast<const communicator_summary*>(summary);
  if (c.topology == MPI_DIST_GRAPH)
    std::snprintf(out, size, "a communicator with a distributed graph: %d sources, %d destinations here", c.sources,
                  c.destinations);
  else
    std::snprintf(out, size, "a communicator without a distributed graph");
}

// `entry`: the C function, named by the watchdog where a process waits in it (src/mpi/watchdog.hpp).
template <class Init>
int init_request(const char* entry, MPI_Comm comm, MPI_Info info, redist_request* request, Init init) noexcept {
  redist::mpi::wait_label label(entry, nullptr);
  communicator_summary summary;
  if (comm != MPI_COMM_NULL && MPI_Topo_test(comm, &summary.topology) == MPI_SUCCESS &&
      summary.topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    MPI_Dist_graph_neighbors_count(comm, &summary.sources, &summary.destinations, &weighted);
  }
  label.describe(describe_communicator, &summary);
  std::uintptr_t slot = 0;
  try {
    std::unique_ptr<redist::exchange::neighbor_plan> owned;
    exchange_options options;
    {
      // What can fail on one rank alone (the info keys, memory for the handle and its registry slot) is agreed
      // before the collective initialisation, which agrees on its own steps; the slot is filled after it.
      redist::mpi::agreement agreed(comm);
      agreed.attempt([&] {
        if (request == nullptr) throw redist::invalid_argument("request is a null pointer");
        std::string problem;
        options = parse_info(info, problem);
        if (!problem.empty()) throw redist::invalid_argument(problem);
        owned = std::make_unique<redist::exchange::neighbor_plan>();
        slot = requests().reserve();
      });
      agreed.conclude();
    }
    *owned = init(options);
    *request = requests().fill(slot, std::move(owned));
    return MPI_SUCCESS;
  } catch (...) {
    if (slot != 0) requests().release(slot);
    if (request != nullptr) *request = REDIST_REQUEST_NULL;
    return redist::capi::current_error_code();
  }
}

}  // namespace

extern "C" int redist_neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                              redist_request* request) {
  return init_request("redist_neighbor_alltoallv_init", comm, info, request, [&](const exchange_options& options) {
    const redist::exchange::neighbor_buffers b{sendbuf, sendcounts, sdispls, sendtype,
                                               recvbuf, recvcounts, rdispls, recvtype};
    return redist::exchange::neighbor_alltoallv_init(b, comm, options);
  });
}

extern "C" int redist_neighbor_alltoallv_init_lists(int indegree, const int sources[], int outdegree,
                                                    const int destinations[], const void* sendbuf,
                                                    const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                                    void* recvbuf, const int recvcounts[], const int rdispls[],
                                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                    redist_request* request) {
  const auto lists = [&](const exchange_options& options) {
    // A bad degree or list becomes an empty side plus a problem the engine's agreement reports.
    std::vector<int> in, out;
    redist::exchange::neighbor_buffers b{sendbuf, sendcounts, sdispls, sendtype,
                                         recvbuf, recvcounts, rdispls, recvtype};
    if (indegree < 0 || (indegree > 0 && sources == nullptr))
      b.recv_entries = -2;
    else
      in.assign(sources, sources + indegree);
    if (outdegree < 0 || (outdegree > 0 && destinations == nullptr))
      b.send_entries = -2;
    else
      out.assign(destinations, destinations + outdegree);
    return redist::exchange::neighbor_alltoallv_init(in, out, b, comm, options);
  };
  return init_request("redist_neighbor_alltoallv_init_lists", comm, info, request, lists);
}

extern "C" int redist_neighbor_alltoallv_init_ext(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                                  const int64_t global_send_indices[], MPI_Datatype sendtype,
                                                  void* recvbuf, const int recvcounts[], const int rdispls[],
                                                  const int64_t global_recv_indices[], MPI_Datatype recvtype,
                                                  MPI_Comm comm, MPI_Info info, redist_request* request) {
  return init_request("redist_neighbor_alltoallv_init_ext", comm, info, request, [&](const exchange_options& options) {
    redist::exchange::neighbor_buffers b{sendbuf, sendcounts, sdispls, sendtype,
                                         recvbuf, recvcounts, rdispls, recvtype};
    b.global_ids = true;
    b.send_ids = global_send_indices;
    b.recv_ids = global_recv_indices;
    return redist::exchange::neighbor_alltoallv_init(b, comm, options);
  });
}

extern "C" int redist_neighbor_query(redist_request request, const char** strategy, const char** reason) {
  try {
    const redist::exchange::neighbor_plan* plan = requests().find(request);
    if (plan == nullptr) return MPI_ERR_REQUEST;
    const auto& s = plan->statistics();
    if (strategy != nullptr) *strategy = redist::exchange::to_string(s.strategy);
    if (reason != nullptr) *reason = s.reason.c_str();
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

extern "C" int redist_start(redist_request* request) {
  try {
    redist::exchange::neighbor_plan* plan = request == nullptr ? nullptr : requests().find(*request);
    if (plan == nullptr) return MPI_ERR_REQUEST;
    plan->start();
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

extern "C" int redist_wait(redist_request* request) {
  try {
    redist::exchange::neighbor_plan* plan = request == nullptr ? nullptr : requests().find(*request);
    if (plan == nullptr) return MPI_ERR_REQUEST;
    plan->wait();
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

extern "C" int redist_request_free(redist_request* request) {
  if (request == nullptr) return MPI_ERR_REQUEST;
  if (*request == REDIST_REQUEST_NULL) return MPI_SUCCESS;
  int code = MPI_SUCCESS;
  try {
    redist::exchange::neighbor_plan* plan = requests().find(*request);
    if (plan == nullptr) return MPI_ERR_REQUEST;
    if (plan->active()) plan->wait();
  } catch (...) {
    code = redist::capi::current_error_code();
  }
  requests().take(*request);  // destroyed here
  *request = REDIST_REQUEST_NULL;
  return code;
}

extern "C" int redist_neighbor_plan_create(MPI_Comm comm, const redist_neighbor_description* description, MPI_Info info,
                                           redist_neighbor_plan* plan) {
  return init_request("redist_neighbor_plan_create", comm, info, plan, [&](const exchange_options& options) {
    // A null description becomes a problem the engine's agreement reports on every rank.
    const redist_neighbor_description none{};
    const redist_neighbor_description& d = description != nullptr ? *description : none;
    redist::exchange::neighbor_description made;
    made.buffers = {d.sendbuf, d.sendcounts, d.sdispls, d.sendtype, d.recvbuf, d.recvcounts, d.rdispls, d.recvtype};
    if (description == nullptr) made.buffers.send_entries = -2;
    if (d.global_send_indices != nullptr || d.global_recv_indices != nullptr) {
      made.buffers.global_ids = true;
      made.buffers.send_ids = d.global_send_indices;
      made.buffers.recv_ids = d.global_recv_indices;
    }
    made.edges_of_graph_communicator = d.edges_of_graph_communicator != 0;
    if (d.indegree < 0 || (d.indegree > 0 && d.sources == nullptr))
      made.buffers.recv_entries = -2;
    else if (d.indegree > 0)
      made.sources.assign(d.sources, d.sources + d.indegree);
    if (d.outdegree < 0 || (d.outdegree > 0 && d.destinations == nullptr))
      made.buffers.send_entries = -2;
    else if (d.outdegree > 0)
      made.destinations.assign(d.destinations, d.destinations + d.outdegree);
    return redist::exchange::make_neighbor_plan(comm, made, options);
  });
}

extern "C" int redist_neighbor_plan_execute(redist_neighbor_plan plan) {
  const int started = redist_start(&plan);
  return started == MPI_SUCCESS ? redist_wait(&plan) : started;
}

extern "C" int redist_neighbor_plan_start(redist_neighbor_plan plan) { return redist_start(&plan); }

extern "C" int redist_neighbor_plan_wait(redist_neighbor_plan plan) { return redist_wait(&plan); }

extern "C" int redist_neighbor_plan_free(redist_neighbor_plan* plan) { return redist_request_free(plan); }
