// SPDX-License-Identifier: BSD-3-Clause
// Transforms (A = alpha * op(B) + beta * A), plans, batches, plan statistics and target relabeling.
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <map>
#include <optional>

#include "common.hpp"
#include "redist/torus/exchange.hpp"
#include "redist/transform/relabel_targets.hpp"

namespace redist::python {

namespace {

using namespace nb::literals;

element_region parse_region(const std::optional<std::pair<std::string, std::int64_t>>& region) {
  if (!region) return {};
  if (region->first == "upper") return {region_shape::upper, region->second};
  if (region->first == "lower") return {region_shape::lower, region->second};
  if (region->first == "all") return {};
  throw nb::value_error(("region ('" + region->first +
                         "', ...): expected ('upper', diagonal), ('lower', diagonal) or "
                         "None (the whole matrix)")
                            .c_str());
}

// The torus of strategy 'torus_routed', from a dict (see make_transform_plan's docstring). Unknown keys are refused.
void set_torus(transform_options& o, const nb::dict& torus) {
  std::optional<std::string> shape;
  bool mesh = false;
  nb::object mapping;
  torus::routing_options& r = o.torus_routing;
  for (auto [key, value] : torus) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    if (name == "shape")
      shape = cast_argument<std::string>(value, "torus['shape']", "a string such as '4x2'");
    else if (name == "mesh")
      mesh = cast_argument<bool>(value, "torus['mesh']", "a bool");
    else if (name == "mapping")
      mapping = nb::borrow(value);
    else if (name == "mode") {
      const std::string m = cast_argument<std::string>(value, "torus['mode']", "a string");
      r.mode = parse_option<torus::routing_mode>(m, "torus mode");
    } else if (name == "alpha")
      r.alpha = cast_argument<double>(value, "torus['alpha']", "a float");
    else if (name == "beta")
      r.beta = cast_argument<std::int64_t>(value, "torus['beta']", "an int");
    else if (name == "gamma")
      r.gamma = cast_argument<int>(value, "torus['gamma']", "an int");
    else if (name == "delta")
      r.delta = cast_argument<int>(value, "torus['delta']", "an int");
    else if (name == "choice") {
      const std::string c = cast_argument<std::string>(value, "torus['choice']", "a string");
      r.choice = parse_option<torus::intermediate_choice>(c, "torus choice");
    } else if (name == "hardware") {
      const std::string h = cast_argument<std::string>(value, "torus['hardware']", "a string");
      r.hardware = parse_option<torus::hardware_routing>(h, "torus hardware");
    } else if (name == "phases") {
      const std::string p = cast_argument<std::string>(value, "torus['phases']", "a string");
      r.phases = parse_option<torus::phase_schedule>(p, "torus phases");
    } else {
      throw nb::value_error(("torus: unknown key '" + name +
                             "'; expected shape, mesh, mapping, mode, alpha, beta, "
                             "gamma, delta, choice, hardware, phases")
                                .c_str());
    }
  }
  if (!shape) throw nb::value_error("torus: 'shape' is required (e.g. '4x2', '8x4x4')");
  const torus::topology network = torus::topology::parse(*shape, mesh);
  torus::rank_mapping placement = torus::rank_mapping::dimension_ordered(network);
  if (mapping.is_valid() && !mapping.is_none()) {
    if (nb::isinstance<nb::str>(mapping))
      placement = torus::rank_mapping::dimension_ordered(network, nb::cast<std::string>(mapping));
    else if (nb::isinstance<nb::int_>(mapping))
      placement = torus::rank_mapping::random(
          network, cast_argument<std::uint64_t>(mapping, "torus['mapping']", "a non-negative int seed"));
    else
      placement = torus::rank_mapping::user(
          network, cast_argument<std::vector<int>>(mapping, "torus['mapping']",
                                                   "a dimension order string, an int seed or a list of nodes"));
  }
  torus::validate(r);
  o.torus = std::make_shared<const torus::machine>(torus::machine{network, std::move(placement)});
}

transform_options make_options(const std::string& strategy, const std::string& stores, bool check_consistency,
                               int num_threads, const std::optional<nb::dict>& torus, bool one_shot,
                               const std::optional<double>& timeout_seconds) {
  transform_options o;
  o.timeout_seconds = timeout_of(timeout_seconds);
  o.strategy = parse_option<exchange_strategy>(strategy, "strategy");
  o.stores = parse_option<store_policy>(stores, "stores");
  o.check_consistency = check_consistency;
  o.one_shot = one_shot;
  if (num_threads < 0) throw nb::value_error("num_threads must be >= 0 (0: the OpenMP default)");
  o.num_threads = num_threads;
  if (torus) set_torus(o, *torus);
  return o;
}

// Job k's buffers from Python arrays, checked against the job (nothing moves if any is wrong): against its
// matrix layouts for plans from make_transform_plan, else its N-d layouts.
job_buffers buffers_of(const transform_plan& p, std::size_t k, const writable_array& a, const readable_array& b,
                       std::complex<double> alpha, std::complex<double> beta, bool batch) {
  const std::string where = batch ? "job " + std::to_string(k) + ": " : std::string();
  const array_view av = view_of(a), bv = view_of(b);
  const element_type type = p.reshape_jobs()[k].type;
  if (!p.jobs().empty()) {
    check_local_array(av, p.jobs()[k].a, type, (where + "A").c_str());
    check_local_array(bv, p.jobs()[k].b, type, (where + "B").c_str());
  } else {
    check_local_nd_array(av, p.reshape_jobs()[k].a, type, (where + "A").c_str());
    check_local_nd_array(bv, p.reshape_jobs()[k].b, type, (where + "B").c_str());
  }
  check_real_scalars(type, alpha, beta, where, "a transform");
  return job_buffers{av.data, bv.data, alpha, beta};
}

// The one job of a single-job plan; ValueError pointing batch plans to execute_batch.
job_buffers single_job_buffers(const transform_plan& p, const writable_array& a, const readable_array& b,
                               std::complex<double> alpha, std::complex<double> beta) {
  if (p.reshape_jobs().size() != 1)
    throw nb::value_error(("the plan has " + std::to_string(p.reshape_jobs().size()) +
                           " jobs; use execute_batch with one (a, b, alpha, beta) per job")
                              .c_str());
  return buffers_of(p, 0, a, b, alpha, beta, false);
}

// Job k's buffers of a batch call, from (a, b[, alpha[, beta]]) tuples; the arrays go to `keep`.
std::vector<job_buffers> batch_buffers(const transform_plan& p, const std::vector<nb::tuple>& jobs,
                                       std::vector<nb::object>& keep) {
  std::vector<job_buffers> buffers;
  agree_on_arguments(p.communicator(), [&] {
    if (jobs.size() != p.reshape_jobs().size())
      throw nb::value_error(("got " + std::to_string(jobs.size()) + " jobs' buffers, the plan has " +
                             std::to_string(p.reshape_jobs().size()) + " jobs")
                                .c_str());
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const nb::tuple& t = jobs[k];
      if (t.size() < 2 || t.size() > 4)
        throw nb::value_error(("job " + std::to_string(k) + ": expected (a, b[, alpha[, beta]])").c_str());
      writable_array a;
      readable_array b;
      if (!nb::try_cast(t[0], a) || !nb::try_cast(t[1], b))
        throw nb::type_error(
            ("job " + std::to_string(k) + ": a must be a writable NumPy array and b a NumPy array").c_str());
      keep.push_back(t[0]);
      keep.push_back(t[1]);
      const std::string job = "job " + std::to_string(k);
      const std::complex<double> alpha =
          t.size() > 2 ? cast_argument<std::complex<double>>(t[2], job + ": alpha", "a number") : 1.0;
      const std::complex<double> beta =
          t.size() > 3 ? cast_argument<std::complex<double>>(t[3], job + ": beta", "a number") : 0.0;
      buffers.push_back(buffers_of(p, k, a, b, alpha, beta, true));
    }
  });
  return buffers;
}

// The arrays of each plan's start() in progress, kept alive until its wait(): the exchange writes into A and reads
// B after start() returns. A plan dropped between the two completes its exchange in its destructor; its entry
// then stays (holding the arrays, so that exchange never writes into freed memory) until a plan at the same
// address starts.
std::map<const transform_plan*, std::vector<nb::object>>& arrays_in_flight() {
  static std::map<const transform_plan*, std::vector<nb::object>> kept;
  return kept;
}

void start_keeping(const transform_plan& p, const std::vector<job_buffers>& buffers, std::vector<nb::object> arrays) {
  {
    nb::gil_scoped_release release;
    p.start(buffers);
  }
  arrays_in_flight()[&p] = std::move(arrays);
}

// single_job_buffers, checked and agreed over the plan's ranks.
job_buffers agreed_single_job_buffers(const transform_plan& p, const writable_array& a, const readable_array& b,
                                      std::complex<double> alpha, std::complex<double> beta) {
  job_buffers buffers;
  agree_on_arguments(p.communicator(), [&] { buffers = single_job_buffers(p, a, b, alpha, beta); });
  return buffers;
}

nb::dict relabeling_dict(const relabel::relabeling& r) {
  nb::dict stats;
  stats["remote_volume_before"] = r.remote_volume_before;
  stats["remote_volume_after"] = r.remote_volume_after;
  stats["messages_before"] = r.messages_before;
  stats["messages_after"] = r.messages_after;
  stats["max_rank_volume_before"] = r.max_rank_volume_before;
  stats["max_rank_volume_after"] = r.max_rank_volume_after;
  stats["reduction_percent"] = r.reduction_percent();
  return stats;
}

}  // namespace

void register_transform(nb::module_& m) {
  nb::class_<job_description>(m, "Job", "One transform of a batch: A's and B's layouts, op and element type.")
      .def(
          "__init__",
          [](job_description* self, const grid_layout& a, const grid_layout& b, const std::string& operation,
             nb::handle dtype, std::optional<std::pair<std::string, std::int64_t>> region) {
            new (self) job_description{a, b, parse_op(operation), element_type_of_dtype(dtype), parse_region(region)};
          },
          "a"_a, "b"_a, "op"_a = "N", "dtype"_a = nb::none(), "region"_a = nb::none(),
          "A = alpha * op(B) + beta * A for A in layout a and B in layout b; op 'N', 'T' or 'C'; dtype float64 "
          "unless given; region None (all of A), ('upper', d) or ('lower', d) (A's elements with j - i >= d, "
          "resp. <= d).")
      .def_ro("a", &job_description::a)
      .def_ro("b", &job_description::b)
      .def_prop_ro("op", [](const job_description& j) { return std::string(to_string(j.operation)); })
      .def_prop_ro("dtype", [](const job_description& j) { return numpy_dtype(j.type); });

  nb::class_<reshape_job>(m, "ReshapeJob",
                          "One N-d transform of a batch: A = alpha * permute(B, axes) + beta * A, for A in layout a "
                          "and B in layout b.")
      .def(
          "__init__",
          [](reshape_job* self, const nd_layout& a, const nd_layout& b, std::optional<std::vector<int>> axes,
             nb::handle dtype, bool conjugate, std::optional<std::pair<std::string, std::int64_t>> region) {
            new (self) reshape_job{
                a, b, axes.value_or(std::vector<int>{}), conjugate, element_type_of_dtype(dtype), parse_region(region)};
          },
          "a"_a, "b"_a, "axes"_a = nb::none(), "dtype"_a = nb::none(), nb::kw_only(), "conjugate"_a = false,
          "region"_a = nb::none(),
          "Axis i of A is axis axes[i] of B (None: the same axes); B conjugated when `conjugate` (complex dtypes); "
          "dtype float64 unless given; region as for Job (2-D only).")
      .def_ro("a", &reshape_job::a)
      .def_ro("b", &reshape_job::b)
      .def_prop_ro(
          "axes",
          [](const reshape_job& j) {
            if (!j.axes.empty()) return j.axes;
            std::vector<int> identity(static_cast<std::size_t>(j.a.ndim()));
            for (std::size_t k = 0; k < identity.size(); ++k) identity[k] = static_cast<int>(k);
            return identity;
          },
          "Axis i of A is axis axes[i] of B.")
      .def_ro("conjugate", &reshape_job::conjugate)
      .def_prop_ro("dtype", [](const reshape_job& j) { return numpy_dtype(j.type); });

  nb::class_<transform_plan>(m, "TransformPlan",
                             "An immutable, reusable transform plan (collective to build, cheap to execute).")
      .def(
          "execute",
          [](const transform_plan& p, writable_array a, readable_array b, std::complex<double> alpha,
             std::complex<double> beta) {
            const job_buffers buffers = agreed_single_job_buffers(p, a, b, alpha, beta);
            nb::gil_scoped_release release;
            p.execute(std::vector<job_buffers>{buffers});
          },
          "a"_a, "b"_a, "alpha"_a = 1.0, "beta"_a = 0.0,
          "A = alpha * op(B) + beta * A with this rank's local arrays (no copies: they must match the layouts). "
          "Collective.")
      .def(
          "execute_batch",
          [](const transform_plan& p, const std::vector<nb::tuple>& jobs) {
            std::vector<nb::object> keep;  // the arrays, alive until the transform is done
            const std::vector<job_buffers> buffers = batch_buffers(p, jobs, keep);
            nb::gil_scoped_release release;
            p.execute(buffers);
          },
          "jobs"_a,
          "Executes every job of a batch plan in one communication round: one (a, b[, alpha[, beta]]) "
          "per job, in planning order. Collective.")
      .def(
          "start",
          [](const transform_plan& p, writable_array a, readable_array b, std::complex<double> alpha,
             std::complex<double> beta) {
            const job_buffers buffers = agreed_single_job_buffers(p, a, b, alpha, beta);
            start_keeping(p, {buffers}, {nb::cast(a), nb::cast(b)});
          },
          "a"_a, "b"_a, "alpha"_a = 1.0, "beta"_a = 0.0,
          "Split phase, first half: checks and agrees like execute, posts the communication and returns; wait() "
          "completes it. Between them compute freely, but neither write b nor touch a. Collective.")
      .def(
          "start_batch",
          [](const transform_plan& p, const std::vector<nb::tuple>& jobs) {
            std::vector<nb::object> keep;
            const std::vector<job_buffers> buffers = batch_buffers(p, jobs, keep);
            start_keeping(p, buffers, std::move(keep));
          },
          "jobs"_a, "start() for a batch plan: one (a, b[, alpha[, beta]]) per job, in planning order. Collective.")
      .def(
          "wait",
          [](const transform_plan& p) {
            {
              nb::gil_scoped_release release;
              p.wait();
            }
            arrays_in_flight().erase(&p);
          },
          "Split phase, second half: completes the exchange start() posted; a then holds the result.")
      .def_prop_ro("in_progress", &transform_plan::in_progress, "True between start() and wait() (this rank).")
      .def(
          "inverse",
          [](const transform_plan& p) {
            // Nothing to check, but a rank whose call nanobind refused (redist/__init__.py) joins this agreement.
            agree_on_arguments(p.communicator(), [] {});
            nb::gil_scoped_release release;
            return p.inverse();
          },
          "The plan of the way back (B = op(A) for every job). Collective.")
      .def_prop_ro("jobs", &transform_plan::jobs, "The matrix jobs (empty for plans of N-d jobs).")
      .def_prop_ro("reshape_jobs", &transform_plan::reshape_jobs,
                   "Every job as an N-d ReshapeJob (a matrix job is the case d = 2).")
      .def_prop_ro("strategy", [](const transform_plan& p) { return std::string(to_string(p.strategy())); })
      .def_prop_ro(
          "output_boxes_held", [](const transform_plan& p) { return box_list(p.output_boxes_held()); },
          "A plan from make_reshape_plan(comm, my_input_boxes, my_output_boxes, ...): the output boxes this rank "
          "holds, as passed (another rank's when relabeled); other plans: [].")
      .def_prop_ro("output_boxes_passed_by", &transform_plan::output_boxes_passed_by,
                   "The rank that passed output_boxes_held (this rank unless relabeled).")
      .def(
          "statistics", [](const transform_plan& p) { return plan_statistics_dict(p.statistics()); },
          "What the plan moves from this rank per execution: bytes_sent, bytes_received, bytes_local, "
          "messages_sent, messages_received, ..., reason (one line: why the plan's strategy).");

  m.def(
      "_execute_repeatedly",
      [](const transform_plan& p, writable_array a, readable_array b, int repetitions) {
        job_buffers buffers;
        agree_on_arguments(p.communicator(), [&] {
          if (repetitions < 1) throw nb::value_error("_execute_repeatedly needs repetitions >= 1");
          buffers = single_job_buffers(p, a, b, 1.0, 0.0);
        });
        const std::vector<job_buffers> all{buffers};
        return mean_seconds_per_call(repetitions, [&] { p.execute(all); });
      },
      "plan"_a, "a"_a, "b"_a, "repetitions"_a,
      "Benchmark helper (bench/python_overhead.py): executes the plan `repetitions` times from C++, without the "
      "Python call path, and returns the mean seconds per execution on this rank.");

  m.def(
      "make_transform_plan",
      [](nb::handle comm, const grid_layout& a, const grid_layout& b, const std::string& operation, nb::handle dtype,
         std::optional<std::pair<std::string, std::int64_t>> region, const std::string& strategy,
         const std::string& stores, bool check_consistency, int num_threads, std::optional<nb::dict> torus,
         bool one_shot, std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        std::vector<job_description> jobs;
        transform_options options;
        agree_on_arguments(c, [&] {
          jobs.push_back(
              job_description{a, b, parse_op(operation), element_type_of_dtype(dtype), parse_region(region)});
          options = make_options(strategy, stores, check_consistency, num_threads, torus, one_shot, timeout_seconds);
        });
        nb::gil_scoped_release release;
        return redist::make_transform_plan(c, std::move(jobs), options);
      },
      "comm"_a, "a"_a, "b"_a, "op"_a = "N", "dtype"_a = nb::none(), nb::kw_only(), "region"_a = nb::none(),
      "strategy"_a = "auto", "stores"_a = "auto", "check_consistency"_a = true, "num_threads"_a = 0,
      "torus"_a = nb::none(), "one_shot"_a = false, "timeout_seconds"_a = nb::none(),
      "Plans A = alpha * op(B) + beta * A from layout b to layout a (collective over the mpi4py communicator). "
      "strategy: 'auto', 'point_to_point', 'alltoallv', 'shared_memory', or 'torus_routed' (a transpose of "
      "block-cyclic layouts with equal blocks on one P x Q grid of all ranks, moved in the multi-phase "
      "schedule's rounds, each routed on the torus described by torus=: a dict with 'shape' ('4x2', '8x4x4'; "
      "one node per rank) and optionally 'mesh' (no wrap-around), 'mapping' (dimension order string like 'XY', "
      "an int seed for a random placement, or node_of_rank), 'mode' ('sdr', 'direct', 'auto'), 'alpha', "
      "'beta', 'gamma', 'delta', 'choice', 'hardware', 'phases' ('sequential' or 'concurrent') (docs/torus.md)). "
      "one_shot: the plan runs once, so 'auto' "
      "weighs set-up against one execution (point_to_point below 12 MiB sent per rank, 32 MiB where a host runs "
      "more ranks than CPUs; transform() sets it). stores: 'auto' (non-temporal stores where a job writes more "
      "than the cache holds), 'cached' or 'streaming' (docs/transform.md, store policy). timeout_seconds: this "
      "plan's own watchdog timeout for its making and executions, in place of the process's (set_timeout, "
      "REDIST_TIMEOUT; None: the process's; 0: never; docs/errors.md).");

  m.def(
      "make_batch_transform_plan",
      [](nb::handle comm, std::vector<job_description> jobs, const std::string& strategy, const std::string& stores,
         bool check_consistency, int num_threads, std::optional<nb::dict> torus, bool one_shot,
         std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        transform_options options;
        agree_on_arguments(c, [&] {
          options = make_options(strategy, stores, check_consistency, num_threads, torus, one_shot, timeout_seconds);
        });
        nb::gil_scoped_release release;
        return redist::make_transform_plan(c, std::move(jobs), options);
      },
      "comm"_a, "jobs"_a, nb::kw_only(), "strategy"_a = "auto", "stores"_a = "auto", "check_consistency"_a = true,
      "num_threads"_a = 0, "torus"_a = nb::none(), "one_shot"_a = false, "timeout_seconds"_a = nb::none(),
      "Plans a batch of Jobs moved in one communication round (collective).");

  m.def(
      "make_reshape_plan",
      [](nb::handle comm, const nd_layout& a, const nd_layout& b, std::optional<std::vector<int>> axes,
         nb::handle dtype, bool conjugate, std::optional<std::pair<std::string, std::int64_t>> region,
         const std::string& strategy, const std::string& stores, bool check_consistency, int num_threads,
         std::optional<nb::dict> torus, bool one_shot, std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        std::vector<reshape_job> jobs;
        transform_options options;
        agree_on_arguments(c, [&] {
          jobs.push_back(reshape_job{a, b, axes.value_or(std::vector<int>{}), conjugate, element_type_of_dtype(dtype),
                                     parse_region(region)});
          options = make_options(strategy, stores, check_consistency, num_threads, torus, one_shot, timeout_seconds);
        });
        nb::gil_scoped_release release;
        return redist::make_reshape_plan(c, std::move(jobs), options);
      },
      "comm"_a, "a"_a, "b"_a, "axes"_a = nb::none(), "dtype"_a = nb::none(), nb::kw_only(), "conjugate"_a = false,
      "region"_a = nb::none(), "strategy"_a = "auto", "stores"_a = "auto", "check_consistency"_a = true,
      "num_threads"_a = 0, "torus"_a = nb::none(), "one_shot"_a = false, "timeout_seconds"_a = nb::none(),
      "Plans A = alpha * permute(B, axes) + beta * A from N-d layout b to N-d layout a (collective over the mpi4py "
      "communicator): axis i of A is axis axes[i] of B (None: the same axes), B conjugated when `conjugate`. "
      "Options as for make_transform_plan; execute with this rank's local arrays (NdLayout.empty, "
      "NdLayout.local_view).");

  m.def(
      "make_reshape_plan",
      [](nb::handle comm, nb::handle my_input_boxes, nb::handle my_output_boxes, nb::handle dtype,
         std::optional<std::vector<int>> axes, nb::handle input_order, nb::handle output_order, bool conjugate,
         bool relabel, const std::string& strategy, const std::string& stores, bool check_consistency, int num_threads,
         std::optional<nb::dict> torus, bool one_shot, std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        std::vector<box> inputs, outputs;
        element_type type = element_type::f64;
        box_reshape_options options;
        agree_on_arguments(c, [&] {
          inputs = boxes_of(my_input_boxes, "my_input_boxes");
          outputs = boxes_of(my_output_boxes, "my_output_boxes");
          type = element_type_of_dtype(dtype);
          int ndim = 0;  // 'C' and 'F' need it; a rank without boxes stores nothing, any order will do
          for (const auto* boxes : {&inputs, &outputs})
            for (const box& b : *boxes) ndim = static_cast<int>(b.lo.size());
          options.axes = axes.value_or(std::vector<int>{});
          options.input_order = parse_axis_order(input_order, ndim);
          options.output_order = parse_axis_order(output_order, ndim);
          options.conjugate = conjugate;
          options.relabel = relabel;
          options.transform =
              make_options(strategy, stores, check_consistency, num_threads, torus, one_shot, timeout_seconds);
        });
        nb::gil_scoped_release release;
        return redist::make_reshape_plan(c, inputs, outputs, type, options);
      },
      "comm"_a, "my_input_boxes"_a, "my_output_boxes"_a, "dtype"_a, nb::kw_only(), "axes"_a = nb::none(),
      "input_order"_a = nb::none(), "output_order"_a = nb::none(), "conjugate"_a = false, "relabel"_a = false,
      "strategy"_a = "auto", "stores"_a = "auto", "check_consistency"_a = true, "num_threads"_a = 0,
      "torus"_a = nb::none(), "one_shot"_a = false, "timeout_seconds"_a = nb::none(),
      "Plans the reshape from each rank's own boxes, FFT libraries' calling model (collective): my_input_boxes and "
      "my_output_boxes are this rank's boxes of B and of A, each a box (lo, hi) or a list of boxes (possibly "
      "none), in global coordinates of any origin; together the input boxes tile one index space, the output boxes "
      "that space permuted by axes. Local arrays hold a rank's boxes one after another, each dense in "
      "input_order / output_order (None or 'C', 'F', or the axes fastest first). relabel=True: this rank may hold "
      "another rank's output boxes (plan.output_boxes_held, plan.output_boxes_passed_by).");

  m.def(
      "make_batch_reshape_plan",
      [](nb::handle comm, std::vector<reshape_job> jobs, const std::string& strategy, const std::string& stores,
         bool check_consistency, int num_threads, std::optional<nb::dict> torus, bool one_shot,
         std::optional<double> timeout_seconds) {
        const MPI_Comm c = communicator(comm);
        transform_options options;
        agree_on_arguments(c, [&] {
          options = make_options(strategy, stores, check_consistency, num_threads, torus, one_shot, timeout_seconds);
        });
        nb::gil_scoped_release release;
        return redist::make_reshape_plan(c, std::move(jobs), options);
      },
      "comm"_a, "jobs"_a, nb::kw_only(), "strategy"_a = "auto", "stores"_a = "auto", "check_consistency"_a = true,
      "num_threads"_a = 0, "torus"_a = nb::none(), "one_shot"_a = false, "timeout_seconds"_a = nb::none(),
      "Plans a batch of ReshapeJobs moved in one communication round (collective).");

  m.def(
      "relabel_reshape_targets",
      [](nb::handle comm, const std::vector<reshape_job>& jobs, const std::string& solver_name) {
        const MPI_Comm c = communicator(comm);
        relabel::solver s = relabel::solver::exact;
        agree_on_arguments(c, [&] { s = parse_option<relabel::solver>(solver_name, "solver"); });
        relabeled_reshape_targets r;
        {
          nb::gil_scoped_release release;
          r = relabel_reshape_targets(c, jobs, {}, s);
        }
        return nb::make_tuple(r.a_layouts, r.result.new_rank_of, relabeling_dict(r.result));
      },
      "comm"_a, "jobs"_a, "solver"_a = "exact",
      "relabel_targets for ReshapeJobs (collective): returns (new A NdLayouts, new_rank_of, statistics).");

  m.def(
      "relabel_targets",
      [](nb::handle comm, const std::vector<job_description>& jobs, const std::string& solver_name) {
        const MPI_Comm c = communicator(comm);
        relabel::solver s = relabel::solver::exact;
        agree_on_arguments(c, [&] { s = parse_option<relabel::solver>(solver_name, "solver"); });
        relabeled_targets r;
        {
          nb::gil_scoped_release release;
          r = relabel_targets(c, jobs, {}, s);
        }
        return nb::make_tuple(r.a_layouts, r.result.new_rank_of, relabeling_dict(r.result));
      },
      "comm"_a, "jobs"_a, "solver"_a = "exact",
      "Communication-optimal relabeling of the jobs' target layouts (collective): returns (new A layouts, "
      "new_rank_of, statistics). Store A according to the new layouts, or keep the old ones.");
}

}  // namespace redist::python
