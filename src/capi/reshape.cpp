// SPDX-License-Identifier: BSD-3-Clause
// C entry points of the N-d reshape: per-rank boxes gathered into box layouts, info keys, plan handles, error codes
// (never throw).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "error_code.hpp"
#include "handle_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/compat.hpp"
#include "mpi/watchdog.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/names.hpp"
#include "redist/redist.h"
#include "redist/transform/plan.hpp"

namespace {

using redist::box;
using redist::element_type;
using redist::max_axes;

struct reshape_handle {
  redist::transform_plan plan;
  element_type type;
};

auto& plans() { return redist::capi::registry_of<reshape_handle, redist_reshape_plan>(); }

// The plan of a live handle; throws for any other value.
const reshape_handle& live_plan(redist_reshape_plan plan) {
  const reshape_handle* h = plans().find(plan);
  if (h == nullptr) throw redist::invalid_argument("the reshape plan is null, freed or unknown");
  return *h;
}

constexpr element_type all_types[] = {element_type::f32, element_type::f64, element_type::c32,
                                      element_type::c64, element_type::i32, element_type::i64};

// One value of the plan's type at `p`.
redist::scalar read_scalar(element_type t, const void* p) {
  const auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return redist::to_scalar(v);
  };
  switch (t) {
    case element_type::f32:
      return load(float{});
    case element_type::f64:
      return load(double{});
    case element_type::c32:
      return load(std::complex<float>{});
    case element_type::c64:
      return load(std::complex<double>{});
    case element_type::i32:
      return load(std::int32_t{});
    case element_type::i64:
      return load(std::int64_t{});
  }
  throw redist::invalid_argument("unknown element type");
}

// One execution's buffers: alpha and beta point to one value of the plan's type (null: 1 and 0).
redist::job_buffers buffers_of(const reshape_handle& h, void* out, const void* in, const void* alpha,
                               const void* beta) {
  return {out, in, alpha ? read_scalar(h.type, alpha) : redist::scalar(1.0, 0.0),
          beta ? read_scalar(h.type, beta) : redist::scalar(0.0, 0.0)};
}

std::string info_value(MPI_Info info, const char* key) {
  std::string value;
  if (info != MPI_INFO_NULL) redist::mpi::info_get(info, key, value);
  return value;
}

// The named choice an info key gives (docs/names.md); left as it is when the key is absent.
template <class Choice>
void read_info_choice(MPI_Info info, const char* key, Choice& choice) {
  const std::string value = info_value(info, key);
  if (value.empty()) return;
  try {
    choice = redist::parse_name<Choice>(value);
  } catch (const redist::invalid_argument&) {
    throw redist::invalid_argument(std::string("info ") + key + " = \"" + value + "\": expected " +
                                   redist::spelled_choices<Choice>());
  }
}

}  // namespace

extern "C" {

int redist_reshape_plan_create(MPI_Comm comm, int ndim, const int64_t in_lo[], const int64_t in_hi[],
                               const int in_order[], const int64_t out_lo[], const int64_t out_hi[],
                               const int out_order[], const int axes[], MPI_Datatype type, MPI_Info info,
                               redist_reshape_plan* plan) {
  const redist::mpi::wait_label label("redist_reshape_plan_create", nullptr);
  std::uintptr_t slot = 0;  // the handle's registry slot, once reserved
  try {
    // The arguments translated, agreed: a NULL array on one rank must not leave the others planning. The handle's
    // registry slot is reserved here too (memory, which can fail on one rank alone).
    box input, output;
    redist::box_reshape_options options;
    element_type etype = element_type::f64;
    std::unique_ptr<reshape_handle> made;
    {
      redist::mpi::agreement agreed(comm);
      agreed.attempt([&] {
        if (plan == nullptr) throw redist::invalid_argument("plan is a null pointer");
        if (ndim < 1 || ndim > max_axes)
          throw redist::invalid_argument("ndim = " + std::to_string(ndim) + ", expected 1 to " +
                                         std::to_string(max_axes));
        const std::int64_t* arrays[] = {in_lo, in_hi, out_lo, out_hi};
        const char* names[] = {"in_lo", "in_hi", "out_lo", "out_hi"};
        for (int f = 0; f < 4; ++f)
          if (arrays[f] == nullptr) throw redist::invalid_argument(std::string(names[f]) + " is a null pointer");
        input = box{{in_lo, in_lo + ndim}, {in_hi, in_hi + ndim}};
        output = box{{out_lo, out_lo + ndim}, {out_hi, out_hi + ndim}};
        if (in_order != nullptr) options.input_order.assign(in_order, in_order + ndim);
        if (out_order != nullptr) options.output_order.assign(out_order, out_order + ndim);
        if (axes != nullptr) options.axes.assign(axes, axes + ndim);
        const auto t = std::find_if(std::begin(all_types), std::end(all_types),
                                    [type](element_type e) { return redist::mpi_datatype(e) == type; });
        if (t == std::end(all_types))
          throw redist::invalid_datatype(
              "type is not one of MPI_FLOAT, MPI_DOUBLE, MPI_C_FLOAT_COMPLEX, "
              "MPI_C_DOUBLE_COMPLEX, MPI_INT32_T, MPI_INT64_T");
        etype = *t;
        read_info_choice(info, "redist_strategy", options.transform.strategy);
        read_info_choice(info, "redist_stores", options.transform.stores);
        const std::string relabeling = info_value(info, "redist_relabel");
        if (relabeling != "" && relabeling != "none" && relabeling != "exact")
          throw redist::invalid_argument("info redist_relabel = \"" + relabeling + "\": expected none or exact");
        options.relabel = relabeling == "exact";
        made = std::make_unique<reshape_handle>();
        slot = plans().reserve();
      });
      agreed.conclude();
    }
    made->type = etype;
    made->plan = redist::make_reshape_plan(comm, {input}, {output}, etype, options);
    *plan = plans().fill(slot, std::move(made));
    return MPI_SUCCESS;
  } catch (...) {
    if (slot != 0) plans().release(slot);
    if (plan != nullptr) *plan = REDIST_RESHAPE_PLAN_NULL;
    return redist::capi::current_error_code();
  }
}

int redist_reshape_plan_execute(redist_reshape_plan plan, void* out, const void* in, const void* alpha,
                                const void* beta) {
  try {
    const reshape_handle& h = live_plan(plan);
    // The engine agrees on the buffers (null ones, alpha and beta the type cannot take) before anything moves.
    h.plan.execute({buffers_of(h, out, in, alpha, beta)});
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_reshape_plan_start(redist_reshape_plan plan, void* out, const void* in, const void* alpha,
                              const void* beta) {
  try {
    const reshape_handle& h = live_plan(plan);
    h.plan.start({buffers_of(h, out, in, alpha, beta)});
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_reshape_plan_wait(redist_reshape_plan plan) {
  try {
    live_plan(plan).plan.wait();
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_reshape_output_box(redist_reshape_plan plan, int64_t lo[], int64_t hi[], int* passed_by) {
  try {
    const reshape_handle& h = live_plan(plan);
    if (lo == nullptr || hi == nullptr) throw redist::invalid_argument("lo or hi is a null pointer");
    const box& held = h.plan.output_boxes_held().front();  // one box per rank through this door
    std::copy(held.lo.begin(), held.lo.end(), lo);
    std::copy(held.hi.begin(), held.hi.end(), hi);
    if (passed_by != nullptr) *passed_by = h.plan.output_boxes_passed_by();
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

int redist_reshape_plan_free(redist_reshape_plan* plan) {
  try {
    if (plan == nullptr) throw redist::invalid_argument("redist_reshape_plan_free: plan is a null pointer");
    if (*plan == REDIST_RESHAPE_PLAN_NULL) return MPI_SUCCESS;
    const bool known = plans().take(*plan) != nullptr;
    *plan = REDIST_RESHAPE_PLAN_NULL;
    if (!known) throw redist::invalid_argument("redist_reshape_plan_free: the plan is freed or unknown");
    return MPI_SUCCESS;
  } catch (...) {
    return redist::capi::current_error_code();
  }
}

}  // extern "C"
