// SPDX-License-Identifier: BSD-3-Clause
// C entry points of the N-d reshape: per-rank boxes gathered into box layouts, info keys, plan handles, error codes
// (never throw).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "error_code.hpp"
#include "handle_registry.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "mpi/compat.hpp"
#include "mpi/watchdog.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/names.hpp"
#include "redist/redist.h"
#include "redist/transform/plan.hpp"
#include "redist/transform/relabel_targets.hpp"

namespace {

using redist::box;
using redist::element_type;
using redist::max_axes;

struct reshape_handle {
  redist::transform_plan plan;
  element_type type;
  std::vector<std::int64_t> held_lo, held_hi;  // the output box this rank holds, caller's coordinates
  int passed_by;
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

// A permutation of 0..n-1 from a C array (NULL: `fallback`); throws naming `what`.
std::vector<int> permutation(const int* p, int n, const std::vector<int>& fallback, const char* what) {
  if (p == nullptr) return fallback;
  std::vector<int> v(p, p + n), sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int k = 0; k < n; ++k)
    if (sorted[static_cast<size_t>(k)] != k)
      throw redist::invalid_argument(std::string(what) + " must be a permutation of 0.." + std::to_string(n - 1) +
                                     "; axis " + std::to_string(sorted[static_cast<size_t>(k)]) +
                                     " is out of range or repeated");
  return v;
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

std::string text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + ")";
}

// What each rank passed, gathered: in_lo, in_hi, out_lo, out_hi, in_order, out_order, max_axes entries each.
constexpr int fields = 6;
using record = std::vector<std::int64_t>;

// Whether the box at l (lo; hi max_axes further) is non-empty.
bool non_empty(const std::int64_t* l, int ndim) {
  return std::equal(l, l + ndim, l + max_axes, [](std::int64_t a, std::int64_t b) { return a < b; });
}

// The bounding box of the non-empty boxes of `field` (lo, then hi) over all ranks; zeros when all are empty.
std::vector<std::int64_t> bounds(const std::vector<record>& all, int field, int ndim) {
  std::vector<std::int64_t> lo(static_cast<size_t>(ndim), 0), hi = lo;
  bool any = false;
  for (const record& r : all) {
    const std::int64_t* l = &r[static_cast<size_t>(field * max_axes)];
    const std::int64_t* h = l + max_axes;
    if (non_empty(l, ndim)) {
      for (int k = 0; k < ndim; ++k) {
        lo[static_cast<size_t>(k)] = any ? std::min(lo[static_cast<size_t>(k)], l[k]) : l[k];
        hi[static_cast<size_t>(k)] = any ? std::max(hi[static_cast<size_t>(k)], h[k]) : h[k];
      }
      any = true;
    }
  }
  lo.insert(lo.end(), hi.begin(), hi.end());
  return lo;
}

// Rank r's box of `field` in [0, shape) coordinates (origin subtracted); an empty box as all zeros, wherever it was.
box local_box(const record& r, int field, int ndim, const std::vector<std::int64_t>& origin) {
  box b{std::vector<std::int64_t>(static_cast<size_t>(ndim), 0),
        std::vector<std::int64_t>(static_cast<size_t>(ndim), 0)};
  const std::int64_t* l = &r[static_cast<size_t>(field * max_axes)];
  if (!non_empty(l, ndim)) return b;
  for (int k = 0; k < ndim; ++k) {
    b.lo[static_cast<size_t>(k)] = l[k] - origin[static_cast<size_t>(k)];
    b.hi[static_cast<size_t>(k)] = l[k + max_axes] - origin[static_cast<size_t>(k)];
  }
  return b;
}

// Rank r's order of `field` (4: in_order, 5: out_order).
std::vector<int> order_of(const record& r, int field, int ndim) {
  const std::int64_t* o = &r[static_cast<size_t>(field * max_axes)];
  return std::vector<int>(o, o + ndim);
}

// The order blocks of `field` travel in: the storage order most ranks pass (of those, the lowest rank's), so
// that most ranks pack and unpack contiguous runs; ranks that store otherwise copy with strides.
std::vector<int> packing_order(const std::vector<record>& all, int field, int ndim) {
  std::map<std::vector<int>, int> ranks_passing;
  for (const record& r : all) ++ranks_passing[order_of(r, field, ndim)];
  std::vector<int> best = order_of(all[0], field, ndim);
  for (const record& r : all) {
    std::vector<int> o = order_of(r, field, ndim);
    if (ranks_passing[o] > ranks_passing[best]) best = std::move(o);
  }
  return best;
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
    using redist::mpi::error_kind;
    const int nranks = redist::mpi::size(comm), me = redist::mpi::rank(comm);
    // Local checks, agreed: every rank returns the same code before anything is gathered. What can fail on one
    // rank alone (memory) is acquired inside the agreed steps, up to the handle's registry slot.
    record mine(static_cast<size_t>(fields * max_axes), 0);
    std::vector<record> all;
    std::vector<std::int64_t> flat;
    std::vector<int> axis_map;
    element_type etype = element_type::f64;
    redist::transform_options options;
    bool relabel = false;
    {
      redist::mpi::agreement agreed(comm);
      std::uint64_t hash = 14695981039346656037ull;
      const auto mix = [&hash](std::int64_t v) { hash = (hash ^ static_cast<std::uint64_t>(v)) * 1099511628211ull; };
      agreed.attempt([&] {
        if (plan == nullptr) throw redist::invalid_argument("plan is a null pointer");
        if (ndim < 1 || ndim > max_axes)
          throw redist::invalid_argument("ndim = " + std::to_string(ndim) + ", expected 1 to " +
                                         std::to_string(max_axes));
        const std::int64_t* arrays[] = {in_lo, in_hi, out_lo, out_hi};
        const char* names[] = {"in_lo", "in_hi", "out_lo", "out_hi"};
        for (int f = 0; f < 4; ++f) {
          if (arrays[f] == nullptr) throw redist::invalid_argument(std::string(names[f]) + " is a null pointer");
          std::copy(arrays[f], arrays[f] + ndim, &mine[static_cast<size_t>(f * max_axes)]);
        }
        for (int f = 0; f < 4; f += 2)
          for (int k = 0; k < ndim; ++k)
            if (arrays[f][k] > arrays[f + 1][k])
              throw redist::invalid_argument(std::string(f ? "output" : "input") + " box: axis " + std::to_string(k) +
                                             " has lo = " + std::to_string(arrays[f][k]) +
                                             " > hi = " + std::to_string(arrays[f + 1][k]));
        const std::vector<int> c = redist::c_order(ndim);
        const std::vector<int> orders[] = {permutation(in_order, ndim, c, "in_order"),
                                           permutation(out_order, ndim, c, "out_order")};
        for (int f = 0; f < 2; ++f)
          std::copy(orders[f].begin(), orders[f].end(), &mine[static_cast<size_t>((4 + f) * max_axes)]);
        std::vector<int> identity(static_cast<size_t>(ndim));
        for (int k = 0; k < ndim; ++k) identity[static_cast<size_t>(k)] = k;
        axis_map = permutation(axes, ndim, identity, "axes");
        const auto t = std::find_if(std::begin(all_types), std::end(all_types),
                                    [type](element_type e) { return redist::mpi_datatype(e) == type; });
        if (t == std::end(all_types))
          throw redist::invalid_datatype(
              "type is not one of MPI_FLOAT, MPI_DOUBLE, MPI_C_FLOAT_COMPLEX, "
              "MPI_C_DOUBLE_COMPLEX, MPI_INT32_T, MPI_INT64_T");
        etype = *t;
        read_info_choice(info, "redist_strategy", options.strategy);
        read_info_choice(info, "redist_stores", options.stores);
        const std::string relabeling = info_value(info, "redist_relabel");
        if (relabeling != "" && relabeling != "none" && relabeling != "exact")
          throw redist::invalid_argument("info redist_relabel = \"" + relabeling + "\": expected none or exact");
        relabel = relabeling == "exact";
        // The arguments every rank must pass alike (the boxes are checked once gathered; orders are each rank's own).
        mix(ndim);
        for (int a : axis_map) mix(a);
        mix(static_cast<std::int64_t>(etype));
        mix(static_cast<std::int64_t>(options.strategy));
        mix(static_cast<std::int64_t>(options.stores));
        mix(relabel);
        all.assign(static_cast<size_t>(nranks), record(mine.size()));
        flat.resize(mine.size() * static_cast<size_t>(nranks));
      });
      agreed.require_same(hash,
                          "ranks passed different ndim, axes, type or info values to redist_reshape_plan_create; "
                          "every rank must pass the same");
      agreed.conclude();
    }

    REDIST_MPI_CHECK(redist::mpi::allgather_yielding(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T,
                                                     flat.data(), static_cast<int>(mine.size()), MPI_INT64_T, comm));
    for (size_t r = 0; r < all.size(); ++r)
      std::copy(flat.begin() + static_cast<std::ptrdiff_t>(r * mine.size()),
                flat.begin() + static_cast<std::ptrdiff_t>((r + 1) * mine.size()), all[r].begin());

    // Every rank sees the same gathered data and so fails alike; agreed all the same (a rank may run out of memory).
    redist::reshape_job job;
    job.axes = axis_map;
    job.type = etype;
    std::vector<box> out_boxes;  // from the output space's origin
    std::unique_ptr<reshape_handle> made;
    {
      redist::mpi::agreement agreed(comm);
      agreed.attempt([&] {
        const auto in_bounds = bounds(all, 0, ndim), out_bounds = bounds(all, 2, ndim);
        const std::vector<std::int64_t> in_origin(in_bounds.begin(), in_bounds.begin() + ndim);
        const std::vector<std::int64_t> in_end(in_bounds.begin() + ndim, in_bounds.end());
        std::vector<std::int64_t> expected(static_cast<size_t>(2 * ndim));
        for (int k = 0; k < ndim; ++k) {
          expected[static_cast<size_t>(k)] = in_origin[static_cast<size_t>(axis_map[static_cast<size_t>(k)])];
          expected[static_cast<size_t>(ndim + k)] = in_end[static_cast<size_t>(axis_map[static_cast<size_t>(k)])];
        }
        if (out_bounds != expected)
          throw redist::invalid_argument("the output boxes span [" +
                                         text({out_bounds.begin(), out_bounds.begin() + ndim}) + ", " +
                                         text({out_bounds.begin() + ndim, out_bounds.end()}) +
                                         "), expected the input's space [" + text(in_origin) + ", " + text(in_end) +
                                         ") permuted by axes: [" + text({expected.begin(), expected.begin() + ndim}) +
                                         ", " + text({expected.begin() + ndim, expected.end()}) + ")");
        const std::vector<std::int64_t> out_origin(expected.begin(), expected.begin() + ndim);
        std::vector<box> in_boxes;
        for (const record& r : all) {
          in_boxes.push_back(local_box(r, 0, ndim, in_origin));
          out_boxes.push_back(local_box(r, 2, ndim, out_origin));
        }
        // box_layout's errors (overlap, gap) say which side they are about.
        const auto layout = [&](const std::vector<box>& boxes, int order_field, const char* side) {
          try {
            return redist::box_layout(boxes, me, order_of(all[static_cast<size_t>(me)], order_field, ndim),
                                      packing_order(all, order_field, ndim));
          } catch (...) {
            redist::mpi::failure f = redist::mpi::current_failure();
            f.message = side + f.message;
            redist::mpi::raise(f);
          }
        };
        job.b = layout(in_boxes, 4, "input boxes: ");
        job.a = layout(out_boxes, 5, "output boxes: ");
        made = std::make_unique<reshape_handle>();
        made->held_lo.resize(static_cast<size_t>(ndim));
        made->held_hi.resize(static_cast<size_t>(ndim));
        slot = plans().reserve();
      });
      agreed.conclude();
    }

    made->type = etype;
    made->passed_by = me;
    if (relabel) {
      // The output box passed by rank r is held by rank new_rank_of[r]. A is rebuilt from the moved boxes rather
      // than taken from relabel_reshape_targets: relabeled() stores explicit (non-product) boxes block by block,
      // and the caller's array must stay dense in the box it holds.
      const auto new_rank_of = redist::relabel_reshape_targets(comm, {job}).result.new_rank_of;
      made->passed_by = static_cast<int>(std::find(new_rank_of.begin(), new_rank_of.end(), me) - new_rank_of.begin());
      redist::mpi::agreement agreed(comm);
      agreed.attempt([&] {
        std::vector<box> moved(out_boxes.size());
        for (size_t r = 0; r < moved.size(); ++r) moved[static_cast<size_t>(new_rank_of[r])] = out_boxes[r];
        job.a = redist::box_layout(moved, me, order_of(all[static_cast<size_t>(me)], 5, ndim), job.a.packing_order());
      });
      agreed.conclude();
    }
    // In the caller's coordinates, an empty box as it was passed.
    const std::int64_t* held = &all[static_cast<size_t>(made->passed_by)][static_cast<size_t>(2 * max_axes)];
    std::copy(held, held + ndim, made->held_lo.begin());
    std::copy(held + max_axes, held + max_axes + ndim, made->held_hi.begin());
    made->plan = redist::make_reshape_plan(comm, {std::move(job)}, options);
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
    std::copy(h.held_lo.begin(), h.held_lo.end(), lo);
    std::copy(h.held_hi.begin(), h.held_hi.end(), hi);
    if (passed_by != nullptr) *passed_by = h.passed_by;
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
