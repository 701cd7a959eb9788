// SPDX-License-Identifier: BSD-3-Clause
// Irregular exchanges: persistent neighborhood alltoallv plans (locality-aware aggregation, de-duplication)
// and the in-place variable-size alltoallv, on NumPy arrays used in place.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <optional>

#include "common.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/exchange/neighbor.hpp"

namespace redist::python {

namespace {

using namespace nb::literals;
using exchange::inplace_algorithm;
using exchange::neighbor_strategy;

// The cost model's figures by name, so that a dict from calibrate_cost_model can be passed back.
struct cost_field {
  const char* name;
  double exchange::cost_model::*member;
};
constexpr cost_field cost_fields[] = {
    {"intra_latency", &exchange::cost_model::intra_latency},
    {"intra_seconds_per_message", &exchange::cost_model::intra_seconds_per_message},
    {"intra_seconds_per_byte", &exchange::cost_model::intra_seconds_per_byte},
    {"inter_latency", &exchange::cost_model::inter_latency},
    {"inter_seconds_per_message", &exchange::cost_model::inter_seconds_per_message},
    {"inter_seconds_per_byte", &exchange::cost_model::inter_seconds_per_byte},
    {"region_seconds_per_byte", &exchange::cost_model::region_seconds_per_byte},
    {"copy_seconds_per_byte", &exchange::cost_model::copy_seconds_per_byte},
};

nb::dict cost_model_dict(const exchange::cost_model& model) {
  nb::dict d;
  for (const cost_field& f : cost_fields) d[f.name] = model.*f.member;
  d["source"] = model.source;
  return d;
}

// Unknown keys are refused (a misspelt figure would otherwise be silently left at its default).
exchange::cost_model cost_model_of(const nb::dict& d) {
  exchange::cost_model model;
  model.source = "user";
  for (auto [key, value] : d) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    if (name == "source") {
      model.source = cast_argument<std::string>(value, "cost_model['source']", "a string");
      continue;
    }
    bool known = false;
    for (const cost_field& f : cost_fields)
      if (name == f.name) {
        model.*f.member = cast_argument<double>(value, "cost_model['" + name + "']", "a float");
        known = true;
      }
    if (!known)
      throw nb::value_error(("cost_model: unknown figure '" + name +
                             "'; expected the keys calibrate_cost_model "
                             "returns (intra_latency, ..., copy_seconds_per_byte, source)")
                                .c_str());
  }
  return model;
}

exchange::exchange_options exchange_options_of(const std::string& strategy, int region_size,
                                               std::optional<int> region_id, const std::optional<nb::dict>& cost_model,
                                               const std::optional<double>& timeout_seconds) {
  exchange::exchange_options o;
  o.timeout_seconds = timeout_of(timeout_seconds);
  o.strategy = parse_option<neighbor_strategy>(strategy, "strategy");
  if (region_size < 0) throw nb::value_error("region_size must be >= 0 (0: regions are nodes)");
  o.region_size = region_size;
  o.region_id = region_id;
  if (cost_model) o.model = cost_model_of(*cost_model);
  return o;
}

// Counts and displacements arrive as Python ints; MPI's are int.
std::vector<int> int_vector(const std::vector<std::int64_t>& values, const char* name) {
  std::vector<int> out;
  out.reserve(values.size());
  for (std::int64_t v : values) {
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      throw nb::value_error(
          (std::string(name) + ": " + std::to_string(v) + " does not fit MPI's int counts and displacements").c_str());
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<std::int64_t> ids_of(const nb::handle& ids, const char* name) {
  readable_array a;
  if (!nb::try_cast(ids, a)) throw nb::type_error((std::string(name) + ": expected a NumPy array of int64").c_str());
  const array_view v = view_of(a);
  const flat_buffer f = flat_buffer_of(v, name);
  if (f.type != element_type::i64)
    throw nb::type_error((std::string(name) + ": global ids must be int64, got " + dtype_name(f.type)).c_str());
  const auto* first = static_cast<const std::int64_t*>(f.data);
  return std::vector<std::int64_t>(first, first + f.elements);
}

// The Python object of a neighborhood exchange: the C++ plan and the arrays it reads and writes, which the plan
// uses by address and which therefore live as long as it does.
struct neighbor_exchange {
  exchange::neighbor_plan plan;
  nb::object send, recv;
};

nb::dict neighbor_statistics_dict(const exchange::exchange_statistics& s) {
  nb::dict d = traffic_dict(s);
  d["strategy"] = std::string(exchange::to_string(s.strategy));
  d["reason"] = s.reason;
  d["regions"] = s.regions;
  d["inter_region_messages"] = s.inter_region_messages;
  d["inter_region_bytes"] = s.inter_region_bytes;
  d["intra_region_messages"] = s.intra_region_messages;
  d["intra_region_bytes"] = s.intra_region_bytes;
  nb::dict estimates;
  for (const exchange::strategy_estimate& e : s.estimates) estimates[exchange::to_string(e.strategy)] = e.seconds;
  d["estimates"] = estimates;
  return d;
}

// recvcounts becomes a NumPy array that owns the report's vector (no copy, no call into NumPy's Python API:
// this dict is built on every call).
nb::dict inplace_report_dict(exchange::inplace_report&& r) {
  nb::dict d = traffic_dict(r);
  d["algorithm"] = std::string(exchange::to_string(r.algorithm));
  d["reason"] = std::move(r.reason);
  auto* counts = new std::vector<std::int64_t>(std::move(r.recvcounts));
  nb::capsule owner(counts, [](void* p) noexcept { delete static_cast<std::vector<std::int64_t>*>(p); });
  d["recvcounts"] = nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(counts->data(), {counts->size()}, owner);
  d["received_elements"] = r.received_elements;
  d["work_bytes"] = r.work_bytes;
  d["metadata_bytes"] = r.metadata_bytes;
  return d;
}

exchange::inplace_options inplace_options_of(const std::string& algorithm, std::int64_t work_bytes,
                                             double pairwise_guard, const std::optional<double>& timeout_seconds) {
  exchange::inplace_options o;
  o.timeout_seconds = timeout_of(timeout_seconds);
  o.algorithm = parse_option<inplace_algorithm>(algorithm, "algorithm");
  o.work_bytes = work_bytes;
  o.pairwise_guard = pairwise_guard;
  return o;
}

void check_count_length(std::size_t length, MPI_Comm comm, const char* name) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (length != static_cast<std::size_t>(size))
    throw nb::value_error((std::string(name) + " has " + std::to_string(length) + " entries; expected one per rank (" +
                           std::to_string(size) + ")")
                              .c_str());
}

void check_alltoall_length(const flat_buffer& b, std::int64_t count, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (count < 0 || b.elements < count * size)
    throw nb::value_error(("buf has " + std::to_string(b.elements) + " elements; count " + std::to_string(count) +
                           " on " + std::to_string(size) + " ranks needs " + std::to_string(count * size) +
                           " (count >= 0)")
                              .c_str());
}

// The MPI_IN_PLACE form's counts and displacements as MPI's ints, every block inside buf.
void check_symmetric_areas(const flat_buffer& b, const std::vector<std::int64_t>& counts,
                           const std::vector<std::int64_t>& displs, MPI_Comm comm, std::vector<int>& count32,
                           std::vector<int>& displ32) {
  check_count_length(counts.size(), comm, "counts");
  check_count_length(displs.size(), comm, "displs");
  count32 = int_vector(counts, "counts");
  displ32 = int_vector(displs, "displs");
  for (std::size_t j = 0; j < counts.size(); ++j)
    if (counts[j] > 0 && (displs[j] < 0 || displs[j] + counts[j] > b.elements))
      throw nb::value_error(("block " + std::to_string(j) + " (displs " + std::to_string(displs[j]) + ", counts " +
                             std::to_string(counts[j]) + ") lies outside buf's " + std::to_string(b.elements) +
                             " elements")
                                .c_str());
}

// The Python object of an in-place plan: the C++ plan and the dtype and length of the arrays it is executed on,
// taken from the array given at planning (the plan itself holds no array: each execution gets its own).
struct inplace_plan_object {
  exchange::inplace_plan plan;
  element_type type = element_type::f64;
  std::int64_t elements = 0;
};

// Checks at execution are this rank's alone (ValueError, no collective): a plan is executed without re-checking.
void* plan_buffer(const inplace_plan_object& o, writable_array& buf) {
  const flat_buffer b = flat_buffer_of(view_of(buf), "buf");
  if (b.type != o.type)
    throw nb::value_error(
        ("buf is " + std::string(dtype_name(b.type)) + "; the plan was made for " + dtype_name(o.type)).c_str());
  if (b.elements != o.elements)
    throw nb::value_error(
        ("buf has " + std::to_string(b.elements) + " elements; the plan was made for " + std::to_string(o.elements))
            .c_str());
  return b.data;
}

// The common part of the plan makers: the template array's checks agreed with `more`, then `make` (collective).
template <class More, class Make>
inplace_plan_object make_plan_object(nb::handle comm, readable_array& buf, More&& more, Make&& make) {
  const MPI_Comm c = communicator(comm);
  inplace_plan_object o;
  agree_on_arguments(c, [&] {
    const flat_buffer b = flat_buffer_of(view_of(buf), "buf");
    o.type = b.type;
    o.elements = b.elements;
    more(c, b);
  });
  nb::gil_scoped_release release;
  o.plan = make(c, mpi_datatype(o.type), o.elements);
  return o;
}

}  // namespace

void register_exchange(nb::module_& m) {
  nb::class_<neighbor_exchange>(m, "NeighborPlan",
                                "A persistent neighborhood alltoallv bound to its send and receive arrays: run it "
                                "with start() and wait() (or execute()) as often as needed.")
      .def(
          "start",
          [](neighbor_exchange& e) {
            nb::gil_scoped_release release;
            e.plan.start();
          },
          "Starts one exchange (every rank of the communicator calls it); the send array must not change until "
          "wait() returns.")
      .def(
          "wait",
          [](neighbor_exchange& e) {
            nb::gil_scoped_release release;
            e.plan.wait();
          },
          "Completes the exchange started last: the receive array then holds the data.")
      .def(
          "execute",
          [](neighbor_exchange& e) {
            nb::gil_scoped_release release;
            e.plan.execute();
          },
          "One whole exchange: start() then wait().")
      .def_prop_ro(
          "active", [](const neighbor_exchange& e) { return e.plan.active(); }, "True between start() and wait().")
      .def_prop_ro(
          "send", [](const neighbor_exchange& e) { return e.send; }, "The send array.")
      .def_prop_ro(
          "recv", [](const neighbor_exchange& e) { return e.recv; }, "The receive array.")
      .def(
          "statistics", [](const neighbor_exchange& e) { return neighbor_statistics_dict(e.plan.statistics()); },
          "Per rank, what one exchange sends: strategy (the one used), reason, regions, inter_region_messages, "
          "inter_region_bytes, intra_region_messages, intra_region_bytes, estimates (automatic: predicted "
          "seconds per candidate strategy).");

  const auto make_neighbor = [](nb::handle comm, nb::object send, const std::vector<std::int64_t>& sendcounts,
                                const std::vector<std::int64_t>& sdispls, nb::object recv,
                                const std::vector<std::int64_t>& recvcounts, const std::vector<std::int64_t>& rdispls,
                                std::optional<std::vector<int>> sources, std::optional<std::vector<int>> destinations,
                                nb::handle send_ids, nb::handle recv_ids, const std::string& strategy, int region_size,
                                std::optional<int> region_id, std::optional<nb::dict> cost_model,
                                std::optional<double> timeout_seconds) {
    const MPI_Comm c = communicator(comm);
    std::vector<std::int64_t> sids, rids;
    exchange::neighbor_buffers buffers;
    exchange::exchange_options options;
    agree_on_arguments(c, [&] {
      readable_array send_array;
      writable_array recv_array;
      if (!nb::try_cast(send, send_array)) throw nb::type_error("send: expected a NumPy array");
      if (!nb::try_cast(recv, recv_array)) throw nb::type_error("recv: expected a writable NumPy array");
      const flat_buffer s = flat_buffer_of(view_of(send_array), "send");
      const flat_buffer r = flat_buffer_of(view_of(recv_array), "recv");
      if (s.type != r.type)
        throw nb::type_error(("send is " + std::string(dtype_name(s.type)) + " and recv " + dtype_name(r.type) +
                              "; the exchange moves one dtype")
                                 .c_str());
      if (sources.has_value() != destinations.has_value())
        throw nb::value_error(
            "pass both sources and destinations (an ordinary communicator) or neither (a "
            "distributed-graph communicator)");
      if (!sources) {
        // Checked here as well as in the library, because the form is chosen per rank: a rank that passes
        // no lists on a communicator without a graph must fail with the others, not alone after them.
        int topology = MPI_UNDEFINED;
        REDIST_MPI_CHECK(MPI_Topo_test(c, &topology));
        if (topology != MPI_DIST_GRAPH)
          throw redist::invalid_topology(
              "neighbor_alltoallv_init: comm is not a distributed-graph communicator "
              "(MPI.Comm.Create_dist_graph_adjacent); pass sources= and "
              "destinations= for any other communicator");
      }
      if (send_ids.is_none() != recv_ids.is_none())
        throw nb::value_error("pass both send_ids and recv_ids (global ids) or neither");
      // 64-bit counts and displacements (MPI-4's large-count form): an edge may move 2^31 elements or more.
      buffers.sendbuf = s.data;
      buffers.sendcounts = sendcounts.data();
      buffers.sdispls = sdispls.data();
      buffers.sendtype = mpi_datatype(s.type);
      buffers.recvbuf = r.data;
      buffers.recvcounts = recvcounts.data();
      buffers.rdispls = rdispls.data();
      buffers.recvtype = buffers.sendtype;
      buffers.send_capacity = s.elements;
      buffers.recv_capacity = r.elements;
      buffers.send_entries = sendcounts.size() == sdispls.size() ? static_cast<std::int64_t>(sendcounts.size()) : -2;
      buffers.recv_entries = recvcounts.size() == rdispls.size() ? static_cast<std::int64_t>(recvcounts.size()) : -2;
      if (!send_ids.is_none()) {
        sids = ids_of(send_ids, "send_ids");
        rids = ids_of(recv_ids, "recv_ids");
        buffers = exchange::with_global_ids(buffers, sids, rids);
      }
      options = exchange_options_of(strategy, region_size, region_id, cost_model, timeout_seconds);
    });
    neighbor_exchange e;
    {
      nb::gil_scoped_release release;
      e.plan = sources ? exchange::neighbor_alltoallv_init(*sources, *destinations, buffers, c, options)
                       : exchange::neighbor_alltoallv_init(buffers, c, options);
    }
    e.send = std::move(send);
    e.recv = std::move(recv);
    return e;
  };
  static const char* const neighbor_doc =
      "Plans a persistent neighborhood alltoallv (collective). Edge i of the send side moves sendcounts[i] "
      "elements from send[sdispls[i]:], edge i of the receive side writes recvcounts[i] elements to "
      "recv[rdispls[i]:] (flat element offsets into the contiguous arrays, one dtype). comm is a "
      "distributed-graph communicator (its destinations and sources are the edges), or any communicator with "
      "sources= and destinations= (one rank per edge). send_ids/recv_ids (int64, one per element) enable "
      "strategy='dedup'. strategy: 'auto', 'standard', 'aggregate', 'dedup'; regions are nodes unless "
      "region_size or region_id says otherwise; cost_model: figures for 'auto' (calibrate_cost_model's dict).";
  // make_neighbor_plan: the plan shape of every capability (comm first); neighbor_alltoallv_init: its MPI-shaped
  // alias.
  for (const char* name : {"make_neighbor_plan", "neighbor_alltoallv_init"})
    m.def(name, make_neighbor, "comm"_a, "send"_a, "sendcounts"_a, "sdispls"_a, "recv"_a, "recvcounts"_a, "rdispls"_a,
          nb::kw_only(), "sources"_a = nb::none(), "destinations"_a = nb::none(), "send_ids"_a = nb::none(),
          "recv_ids"_a = nb::none(), "strategy"_a = "auto", "region_size"_a = 0, "region_id"_a = nb::none(),
          "cost_model"_a = nb::none(), "timeout_seconds"_a = nb::none(), neighbor_doc);

  m.def(
      "_run_repeatedly",
      [](neighbor_exchange& e, int repetitions) {
        if (repetitions < 1) throw nb::value_error("_run_repeatedly needs repetitions >= 1");
        return mean_seconds_per_call(repetitions, [&] {
          e.plan.start();
          e.plan.wait();
        });
      },
      "plan"_a, "repetitions"_a,
      "Benchmark helper (bench/python_overhead.py): runs the neighborhood plan `repetitions` times from C++ and "
      "returns the mean seconds per run on this rank.");

  m.def(
      "_alltoallv_inplace_repeatedly",
      [](nb::handle comm, writable_array buf, const std::vector<std::int64_t>& sendcounts, int repetitions) {
        const MPI_Comm c = communicator(comm);
        flat_buffer b;
        agree_on_arguments(c, [&] {
          b = flat_buffer_of(view_of(buf), "buf");
          check_count_length(sendcounts.size(), c, "sendcounts");
          if (repetitions < 1) throw nb::value_error("_alltoallv_inplace_repeatedly needs repetitions >= 1");
        });
        return mean_seconds_per_call(repetitions, [&] {
          exchange::alltoallv_inplace(b.data, b.elements, sendcounts.data(), nullptr, mpi_datatype(b.type), c);
        });
      },
      "comm"_a, "buf"_a, "sendcounts"_a, "repetitions"_a,
      "Benchmark helper (bench/python_overhead.py): alltoallv_inplace `repetitions` times from C++ (symmetric "
      "counts keep the calls valid), mean seconds per call on this rank.");

  m.def(
      "calibrate_cost_model",
      [](nb::handle comm, int region_size, std::optional<int> region_id) {
        const MPI_Comm c = communicator(comm);
        exchange::exchange_options regions;
        agree_on_arguments(
            c, [&] { regions = exchange_options_of("auto", region_size, region_id, std::nullopt, std::nullopt); });
        exchange::cost_model model;
        {
          nb::gil_scoped_release release;
          model = exchange::calibrate_cost_model(c, regions);
        }
        return cost_model_dict(model);
      },
      "comm"_a, nb::kw_only(), "region_size"_a = 0, "region_id"_a = nb::none(),
      "Measures the neighborhood exchange's cost model inside and between regions (collective, a few ms); the "
      "dict can be passed as cost_model= to neighbor_alltoallv_init.");

  nb::class_<inplace_plan_object>(m, "InplacePlan",
                                  "An in-place alltoallv planned once (checked, agreed, algorithm chosen, work buffer "
                                  "allocated): execute(buf) moves the data of each new buffer.")
      .def(
          "execute",
          [](const inplace_plan_object& o, writable_array buf) {
            void* data = plan_buffer(o, buf);
            exchange::inplace_report report;
            {
              nb::gil_scoped_release release;
              report = o.plan.execute(data);
            }
            return inplace_report_dict(std::move(report));
          },
          "buf"_a,
          "Runs the exchange on buf (collective; every rank calls it): buf must have the dtype and the number of "
          "elements of the array the plan was made with (checked on this rank only: ValueError). Returns the "
          "report dict of alltoallv_inplace with this call's counters.")
      .def(
          "start",
          [](const inplace_plan_object& o, writable_array buf) {
            void* data = plan_buffer(o, buf);
            nb::gil_scoped_release release;
            o.plan.start(data);
          },
          "buf"_a,
          "The plan shape's split phase: the in-place algorithms step through rounds with a bounded work buffer, so "
          "start() runs the whole exchange (as execute) and wait() only returns.")
      .def(
          "wait", [](const inplace_plan_object& o) { o.plan.wait(); }, "Completes start() (nothing left to do).")
      .def_prop_ro(
          "in_progress", [](const inplace_plan_object& o) { return o.plan.in_progress(); },
          "True between start() and wait() (this rank).")
      .def(
          "statistics",
          [](const inplace_plan_object& o) {
            return inplace_report_dict(exchange::inplace_report(o.plan.statistics()));
          },
          "The report dict of this rank's latest execution, with its counters (before the first: report).")
      .def_prop_ro(
          "report",
          [](const inplace_plan_object& o) { return inplace_report_dict(exchange::inplace_report(o.plan.report())); },
          "What execute() does: algorithm, reason, recvcounts, received_elements, work_bytes (the counters, per "
          "execution, are 0 here).")
      .def_prop_ro(
          "dtype", [](const inplace_plan_object& o) { return numpy_dtype(o.type); }, "The dtype execute() expects.")
      .def_prop_ro(
          "size", [](const inplace_plan_object& o) { return o.elements; }, "The number of elements execute() expects.");

  m.def(
      "make_inplace_plan",
      [](nb::handle comm, readable_array buf, const std::vector<std::int64_t>& sendcounts,
         std::optional<std::vector<std::int64_t>> recvcounts, const std::string& algorithm, std::int64_t work_bytes,
         double pairwise_guard, std::optional<double> timeout_seconds) {
        exchange::inplace_options options;
        return make_plan_object(
            comm, buf,
            [&](MPI_Comm c, const flat_buffer&) {
              check_count_length(sendcounts.size(), c, "sendcounts");
              if (recvcounts) check_count_length(recvcounts->size(), c, "recvcounts");
              options = inplace_options_of(algorithm, work_bytes, pairwise_guard, timeout_seconds);
            },
            [&](MPI_Comm c, MPI_Datatype type, std::int64_t capacity) {
              return exchange::make_inplace_plan(c, capacity, sendcounts.data(),
                                                 recvcounts ? recvcounts->data() : nullptr, type, options);
            });
      },
      "comm"_a, "buf"_a, "sendcounts"_a, "recvcounts"_a = nb::none(), nb::kw_only(), "algorithm"_a = "auto",
      "work_bytes"_a = std::int64_t{4} << 20, "pairwise_guard"_a = 4.0, "timeout_seconds"_a = nb::none(),
      "Plans alltoallv_inplace once (collective; the same arguments, errors raised on every rank): buf gives the "
      "dtype and the capacity (its length) of the arrays the plan is executed on; it is not kept. "
      "plan.execute(buf) then moves the data without re-checking.");

  m.def(
      "make_alltoall_inplace_plan",
      [](nb::handle comm, readable_array buf, std::int64_t count, const std::string& algorithm, std::int64_t work_bytes,
         double pairwise_guard, std::optional<double> timeout_seconds) {
        exchange::inplace_options options;
        return make_plan_object(
            comm, buf,
            [&](MPI_Comm c, const flat_buffer& b) {
              check_alltoall_length(b, count, c);
              options = inplace_options_of(algorithm, work_bytes, pairwise_guard, timeout_seconds);
            },
            [&](MPI_Comm c, MPI_Datatype type, std::int64_t) {
              return exchange::make_alltoall_inplace_plan(c, count, type, options);
            });
      },
      "comm"_a, "buf"_a, "count"_a, nb::kw_only(), "algorithm"_a = "auto", "work_bytes"_a = std::int64_t{4} << 20,
      "pairwise_guard"_a = 4.0, "timeout_seconds"_a = nb::none(),
      "Plans alltoall_inplace once (collective); buf gives the dtype and length.");

  m.def(
      "make_inplace_plan_symmetric",
      [](nb::handle comm, readable_array buf, const std::vector<std::int64_t>& counts,
         const std::vector<std::int64_t>& displs, std::int64_t work_bytes) {
        std::vector<int> count32, displ32;
        return make_plan_object(
            comm, buf,
            [&](MPI_Comm c, const flat_buffer& b) { check_symmetric_areas(b, counts, displs, c, count32, displ32); },
            [&](MPI_Comm c, MPI_Datatype type, std::int64_t) {
              return exchange::make_inplace_plan_symmetric(c, count32.data(), displ32.data(), type, work_bytes);
            });
      },
      "comm"_a, "buf"_a, "counts"_a, "displs"_a, nb::kw_only(), "work_bytes"_a = std::int64_t{4} << 20,
      "Plans alltoallv_inplace_symmetric once (collective); buf gives the dtype and length.");

  m.def(
      "alltoallv_inplace",
      [](nb::handle comm, writable_array buf, const std::vector<std::int64_t>& sendcounts,
         std::optional<std::vector<std::int64_t>> recvcounts, const std::string& algorithm, std::int64_t work_bytes,
         double pairwise_guard, std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        flat_buffer b;
        exchange::inplace_options options;
        agree_on_arguments(c, [&] {
          b = flat_buffer_of(view_of(buf), "buf");
          check_count_length(sendcounts.size(), c, "sendcounts");
          if (recvcounts) check_count_length(recvcounts->size(), c, "recvcounts");
          options = inplace_options_of(algorithm, work_bytes, pairwise_guard, timeout_seconds);
        });
        exchange::inplace_report report;
        {
          nb::gil_scoped_release release;
          report =
              exchange::alltoallv_inplace(b.data, b.elements, sendcounts.data(),
                                          recvcounts ? recvcounts->data() : nullptr, mpi_datatype(b.type), c, options);
        }
        return inplace_report_dict(std::move(report));
      },
      "comm"_a, "buf"_a, "sendcounts"_a, "recvcounts"_a = nb::none(), nb::kw_only(), "algorithm"_a = "auto",
      "work_bytes"_a = std::int64_t{4} << 20, "pairwise_guard"_a = 4.0, "timeout_seconds"_a = nb::none(),
      "Variable-size all-to-all in place (collective): on entry buf holds the blocks for ranks 0..P-1 one after "
      "another (sendcounts[j] elements for rank j), on exit the blocks from ranks 0..P-1 (report['recvcounts']). "
      "buf (contiguous, any supported dtype) must hold max(sum sent, sum received) elements; extra memory is "
      "O(P) plus one work buffer of work_bytes. algorithm: 'auto', 'chunked', 'pairwise', 'bitonic'. Returns a "
      "dict: algorithm, reason, recvcounts, received_elements, bytes_sent, bytes_received, messages_sent, "
      "messages_received, bytes_local, work_bytes, metadata_bytes. Checks with collectives on every call: for "
      "repeated exchanges of the same counts, make_inplace_plan.");

  m.def(
      "alltoall_inplace",
      [](nb::handle comm, writable_array buf, std::int64_t count, const std::string& algorithm, std::int64_t work_bytes,
         double pairwise_guard, std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        flat_buffer b;
        exchange::inplace_options options;
        agree_on_arguments(c, [&] {
          b = flat_buffer_of(view_of(buf), "buf");
          check_alltoall_length(b, count, c);
          options = inplace_options_of(algorithm, work_bytes, pairwise_guard, timeout_seconds);
        });
        exchange::inplace_report report;
        {
          nb::gil_scoped_release release;
          report = exchange::alltoall_inplace(b.data, count, mpi_datatype(b.type), c, options);
        }
        return inplace_report_dict(std::move(report));
      },
      "comm"_a, "buf"_a, "count"_a, nb::kw_only(), "algorithm"_a = "auto", "work_bytes"_a = std::int64_t{4} << 20,
      "pairwise_guard"_a = 4.0, "timeout_seconds"_a = nb::none(),
      "Fixed-size all-to-all in place: count elements to and from every rank, buf holding P * count.");

  m.def(
      "alltoallv_inplace_symmetric",
      [](nb::handle comm, writable_array buf, const std::vector<std::int64_t>& counts,
         const std::vector<std::int64_t>& displs, std::int64_t work_bytes) {
        const MPI_Comm c = communicator(comm);
        flat_buffer b;
        std::vector<int> count32, displ32;
        agree_on_arguments(c, [&] {
          b = flat_buffer_of(view_of(buf), "buf");
          check_symmetric_areas(b, counts, displs, c, count32, displ32);
        });
        exchange::inplace_report report;
        {
          nb::gil_scoped_release release;
          report = exchange::alltoallv_inplace_symmetric(b.data, count32.data(), displ32.data(), mpi_datatype(b.type),
                                                         c, work_bytes);
        }
        return inplace_report_dict(std::move(report));
      },
      "comm"_a, "buf"_a, "counts"_a, "displs"_a, nb::kw_only(), "work_bytes"_a = std::int64_t{4} << 20,
      "MPI_Alltoallv(MPI_IN_PLACE, ...) semantics: buf[displs[j]:displs[j]+counts[j]] is replaced by what rank j "
      "holds at its displs[i] (counts symmetric: rank i's counts[j] == rank j's counts[i]); elements outside "
      "the blocks stay untouched.");
}

}  // namespace redist::python
