// SPDX-License-Identifier: BSD-3-Clause
// Distributed matrix multiply C = alpha * op(A) * op(B) + beta * C on any layouts (the COSMA schedule).
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <complex>
#include <map>

#include "common.hpp"
#include "redist/gemm/gemm.hpp"

namespace redist::python {

namespace {

using namespace nb::literals;

nb::dict gemm_statistics_dict(const gemm_statistics& s) {
  nb::dict d;
  d["schedule"] = nb::module_::import_("json").attr("loads")(s.schedule.to_json());
  d["schedule_summary"] = s.schedule.describe();
  d["idle"] = s.idle;
  d["position"] = nb::make_tuple(s.position_m, s.position_n, s.position_k);
  d["multiply"] = traffic_dict(s.multiply);
  d["transform_in"] = plan_statistics_dict(s.transform_in);
  d["transform_out"] = plan_statistics_dict(s.transform_out);
  d["c_in_place"] = s.c_in_place;
  d["c_elements_in_place"] = s.c_elements_in_place;
  d["native_window_reused"] = s.native_window_reused;
  d["grid_lines_reused"] = s.grid_lines_reused;
  d["communication"] = std::string(to_string(s.communication));
  d["communication_reason"] = s.communication_reason;
  d["relabel_volume_before"] = s.relabel_volume_before;
  d["relabel_volume_after"] = s.relabel_volume_after;
  nb::dict planning, last;
  for (const auto& [name, seconds] : named_parts(s.planning)) planning[name] = seconds;
  for (const auto& [name, seconds] : named_parts(s.last_execution)) last[name] = seconds;
  d["planning"] = planning;
  d["last_execution"] = last;
  return d;
}

// This rank's local arrays of a gemm plan's A, B and C, checked against its layouts and element type.
struct gemm_arrays {
  array_view a, b, c;
};
gemm_arrays checked_arrays(const gemm_plan& p, const writable_array& c, const readable_array& a,
                           const readable_array& b) {
  const gemm_description& d = p.description();
  gemm_arrays out{view_of(a), view_of(b), view_of(c)};
  check_local_array(out.a, d.a, d.type, "A");
  check_local_array(out.b, d.b, d.type, "B");
  check_local_array(out.c, d.c, d.type, "C");
  return out;
}

// The arrays of each plan's start() in progress, alive until its wait() (the transform out writes C after start()
// returns); a plan dropped in between keeps them until a plan at the same address starts (as TransformPlan's).
std::map<const gemm_plan*, std::vector<nb::object>>& gemm_arrays_in_flight() {
  static std::map<const gemm_plan*, std::vector<nb::object>> kept;
  return kept;
}

// The arrays and scalars of one execution, checked and agreed over the plan's ranks.
gemm_arrays agreed_arrays(const gemm_plan& p, const writable_array& c, const readable_array& a, const readable_array& b,
                          std::complex<double> alpha, std::complex<double> beta) {
  gemm_arrays arrays;
  agree_on_arguments(p.communicator(), [&] {
    arrays = checked_arrays(p, c, a, b);
    check_real_scalars(p.description().type, alpha, beta, "", "a multiply");
  });
  return arrays;
}

}  // namespace

void register_gemm(nb::module_& m) {
  nb::class_<gemm_plan>(m, "GemmPlan",
                        "An immutable, reusable plan of C = alpha * op(A) * op(B) + beta * C on given layouts.")
      .def(
          "execute",
          [](const gemm_plan& p, writable_array c, readable_array a, readable_array b, std::complex<double> alpha,
             std::complex<double> beta) {
            const gemm_arrays arrays = agreed_arrays(p, c, a, b, alpha, beta);
            nb::gil_scoped_release release;
            p.execute(arrays.c.data, arrays.a.data, arrays.b.data, alpha, beta);
          },
          "c"_a, "a"_a, "b"_a, "alpha"_a = 1.0, "beta"_a = 0.0,
          "C = alpha * op(A) * op(B) + beta * C with this rank's local arrays of the plan's layouts (used in place; "
          "beta = 0: C is not read). Collective.")
      .def(
          "start",
          [](const gemm_plan& p, writable_array c, readable_array a, readable_array b, std::complex<double> alpha,
             std::complex<double> beta) {
            const gemm_arrays arrays = agreed_arrays(p, c, a, b, alpha, beta);
            {
              nb::gil_scoped_release release;
              p.start(arrays.c.data, arrays.a.data, arrays.b.data, alpha, beta);
            }
            gemm_arrays_in_flight()[&p] = {nb::cast(c), nb::cast(a), nb::cast(b)};
          },
          "c"_a, "a"_a, "b"_a, "alpha"_a = 1.0, "beta"_a = 0.0,
          "Split phase, first half: execute's checks, the multiply, and C's redistribution started; wait() "
          "completes it. Between them touch neither c nor a or b. Collective.")
      .def(
          "wait",
          [](const gemm_plan& p) {
            {
              nb::gil_scoped_release release;
              p.wait();
            }
            gemm_arrays_in_flight().erase(&p);
          },
          "Split phase, second half: completes C's redistribution; c then holds the result.")
      .def_prop_ro("in_progress", &gemm_plan::in_progress, "True between start() and wait() (this rank).")
      .def_prop_ro("a", [](const gemm_plan& p) { return p.description().a; })
      .def_prop_ro("b", [](const gemm_plan& p) { return p.description().b; })
      .def_prop_ro("c", [](const gemm_plan& p) { return p.description().c; })
      .def_prop_ro("op_a", [](const gemm_plan& p) { return std::string(to_string(p.description().op_a)); })
      .def_prop_ro("op_b", [](const gemm_plan& p) { return std::string(to_string(p.description().op_b)); })
      .def_prop_ro("dtype", [](const gemm_plan& p) { return numpy_dtype(p.description().type); })
      .def(
          "statistics", [](const gemm_plan& p) { return gemm_statistics_dict(p.statistics()); },
          "This rank's view of the plan: schedule (grid, rounds, memory, communicated elements, lower bound, as a "
          "dict), schedule_summary, idle, position (m, n, k), multiply (bytes_sent, bytes_received, messages_sent, "
          "messages_received, bytes_local), transform_in, "
          "transform_out (TransformPlan.statistics dicts), c_in_place, c_elements_in_place, native_window_reused, "
          "grid_lines_reused, communication (how panels travel: 'auto' resolved), communication_reason (why), "
          "relabel_volume_before/after, planning and last_execution (seconds per phase).");

  m.def(
      "_gemm_execute_repeatedly",
      [](const gemm_plan& p, writable_array c, readable_array a, readable_array b, int repetitions) {
        gemm_arrays arrays;
        agree_on_arguments(p.communicator(), [&] {
          arrays = checked_arrays(p, c, a, b);
          if (repetitions < 1) throw nb::value_error("_gemm_execute_repeatedly needs repetitions >= 1");
        });
        return mean_seconds_per_call(repetitions,
                                     [&] { p.execute(arrays.c.data, arrays.a.data, arrays.b.data, 1.0, 0.0); });
      },
      "plan"_a, "c"_a, "a"_a, "b"_a, "repetitions"_a,
      "Benchmark helper (bench/python_overhead.py): executes the gemm plan `repetitions` times from C++ (alpha 1, "
      "beta 0), mean seconds per execution on this rank.");

  m.def(
      "make_gemm_plan",
      [](nb::handle comm, const grid_layout& a, const grid_layout& b, const grid_layout& c, const std::string& op_a,
         const std::string& op_b, nb::handle dtype, std::int64_t memory_limit_bytes, std::int64_t rounds,
         const std::string& communication, bool overlap, bool relabel, const std::string& native_order,
         double max_idle_fraction, const std::string& strategy, std::optional<double> timeout_seconds) {
        const MPI_Comm mc = communicator(comm);
        gemm_description description{a, b, c};
        gemm_options options;
        agree_on_arguments(mc, [&] {
          description.op_a = parse_op(op_a);
          description.op_b = parse_op(op_b);
          description.type = element_type_of_dtype(dtype);
          options.memory_limit_bytes = memory_limit_bytes;
          options.rounds = rounds;
          options.communication = parse_option<gemm_communication>(communication, "communication");
          options.overlap = overlap;
          options.relabel = relabel;
          options.native_order = parse_option<gemm_native_order>(native_order, "native_order");
          options.max_idle_fraction = max_idle_fraction;
          options.transform.strategy = parse_option<exchange_strategy>(strategy, "strategy");
          options.timeout_seconds = timeout_of(timeout_seconds);
        });
        nb::gil_scoped_release release;
        return make_gemm_plan(mc, std::move(description), options);
      },
      "comm"_a, "a"_a, "b"_a, "c"_a, "op_a"_a = "N", "op_b"_a = "N", "dtype"_a = nb::none(), nb::kw_only(),
      "memory_limit_bytes"_a = 0, "rounds"_a = 0, "communication"_a = "auto", "overlap"_a = true, "relabel"_a = true,
      "native_order"_a = "auto", "max_idle_fraction"_a = 0.03, "strategy"_a = "auto", "timeout_seconds"_a = nb::none(),
      "Plans C (m x n) = alpha * op(A) * op(B) + beta * C for A, B, C in layouts a, b, c (collective). op_a, "
      "op_b: 'N', 'T', 'C'; dtype float32, float64, complex64 or complex128 (float64 unless given). "
      "memory_limit_bytes: S per rank (0: REDIST_GEMM_MEMORY, else no limit); rounds along k (0: automatic); "
      "communication 'auto', 'two_sided', 'one_sided' or 'shared_memory'; overlap: double buffering; relabel: choose "
      "the ranks of the "
      "grid positions communication-optimally; native_order 'auto', 'contiguous', 'grouped'; strategy: the "
      "transforms' exchange strategy.");
}

}  // namespace redist::python
