// SPDX-License-Identifier: BSD-3-Clause
// make_reshape_plan from each rank's own boxes (the FFT libraries' calling model): the boxes are gathered into two
// box layouts of one index space, then planned as any reshape.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "detail/plan_impl.hpp"
#include "field_hash.hpp"
#include "mpi/agreement.hpp"
#include "mpi/checked.hpp"
#include "redist/error.hpp"
#include "redist/layout/nd_builders.hpp"
#include "redist/transform/plan.hpp"
#include "redist/transform/relabel_targets.hpp"

namespace redist {
namespace {

// What one rank passed, as gathered (int64 words): n_in, n_out, the lengths of its two orders, the two orders
// (max_axes words each), then its boxes, inputs first, each lo then hi (ndim words each), padded to the most boxes
// any rank passed.
constexpr std::size_t header_words = 4 + 2 * static_cast<std::size_t>(max_axes);

struct passed {
  std::vector<box> inputs, outputs;
  std::vector<int> input_order, output_order;  // as passed (empty: C order)
};

std::string text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + ")";
}

// The number of axes the boxes and orders passed here imply (0: none passed); throws when they disagree.
int local_axes(const std::vector<box>& inputs, const std::vector<box>& outputs, const box_reshape_options& o) {
  int ndim = 0;
  const auto agree = [&ndim](std::size_t n, const std::string& what) {
    if (ndim == 0) ndim = static_cast<int>(n);
    if (static_cast<int>(n) != ndim)
      throw invalid_argument(what + " has " + std::to_string(n) + " axes, expected " + std::to_string(ndim) +
                             " as the arguments before it");
  };
  for (const auto* boxes : {&inputs, &outputs})
    for (std::size_t i = 0; i < boxes->size(); ++i) {
      const box& b = (*boxes)[i];
      const std::string what =
          std::string(boxes == &inputs ? "my_input_boxes" : "my_output_boxes") + "[" + std::to_string(i) + "]";
      if (b.lo.size() != b.hi.size())
        throw invalid_argument(what + ": lo has " + std::to_string(b.lo.size()) + " entries and hi " +
                               std::to_string(b.hi.size()) + ", expected one per axis in both");
      agree(b.lo.size(), what);
      for (std::size_t k = 0; k < b.lo.size(); ++k)
        if (b.lo[k] > b.hi[k])
          throw invalid_argument(what + ": axis " + std::to_string(k) + " has lo = " + std::to_string(b.lo[k]) +
                                 " > hi = " + std::to_string(b.hi[k]));
    }
  // An empty order or axes is the default, of any number of axes.
  if (!o.input_order.empty()) agree(o.input_order.size(), "input_order");
  if (!o.output_order.empty()) agree(o.output_order.size(), "output_order");
  if (!o.axes.empty()) agree(o.axes.size(), "axes");
  if (ndim > max_axes)
    throw invalid_argument("boxes of " + std::to_string(ndim) + " axes; at most " + std::to_string(max_axes));
  return ndim;
}

// `p` (empty: `fallback`) if it is a permutation of 0..ndim-1; throws naming `what`.
std::vector<int> permutation(const std::vector<int>& p, int ndim, const std::vector<int>& fallback,
                             const std::string& what) {
  if (p.empty()) return fallback;
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int k = 0; k < ndim; ++k)
    if (static_cast<int>(sorted.size()) != ndim || sorted[static_cast<std::size_t>(k)] != k)
      throw invalid_argument(what + " must be a permutation of 0.." + std::to_string(ndim - 1) + ", got " +
                             text(std::vector<std::int64_t>(p.begin(), p.end())));
  return p;
}

// Rank r's record, decoded.
passed decode(const std::int64_t* w, int ndim) {
  passed r;
  const auto n_in = static_cast<std::size_t>(w[0]), n_out = static_cast<std::size_t>(w[1]);
  r.input_order.assign(w + 4, w + 4 + w[2]);
  r.output_order.assign(w + 4 + max_axes, w + 4 + max_axes + w[3]);
  const std::int64_t* b = w + header_words;
  for (std::size_t i = 0; i < n_in + n_out; ++i, b += 2 * ndim)
    (i < n_in ? r.inputs : r.outputs).push_back(box{{b, b + ndim}, {b + ndim, b + 2 * ndim}});
  return r;
}

// The bounding box [lo, hi) of the non-empty boxes of every rank; nullopt-like (empty vectors) when there are none.
box bounds(const std::vector<std::vector<box>>& of_rank, int ndim) {
  box all;
  for (const auto& boxes : of_rank)
    for (const box& b : boxes) {
      if (b.empty()) continue;
      if (all.lo.empty()) {
        all = b;
        continue;
      }
      for (std::size_t k = 0; k < static_cast<std::size_t>(ndim); ++k) {
        all.lo[k] = std::min(all.lo[k], b.lo[k]);
        all.hi[k] = std::max(all.hi[k], b.hi[k]);
      }
    }
  return all;
}

// The boxes moved to an origin at zero; an empty box as all zeros, wherever it was (box_layout wants lo >= 0).
std::vector<std::vector<box>> shifted(const std::vector<std::vector<box>>& of_rank,
                                      const std::vector<std::int64_t>& origin) {
  std::vector<std::vector<box>> out(of_rank.size());
  for (std::size_t r = 0; r < of_rank.size(); ++r)
    for (const box& b : of_rank[r]) {
      box s{std::vector<std::int64_t>(origin.size(), 0), std::vector<std::int64_t>(origin.size(), 0)};
      if (!b.empty())
        for (std::size_t k = 0; k < origin.size(); ++k) {
          s.lo[k] = b.lo[k] - origin[k];
          s.hi[k] = b.hi[k] - origin[k];
        }
      out[r].push_back(std::move(s));
    }
  return out;
}

// The order blocks travel in: the storage order most ranks pass (of those, the lowest rank's), so that most ranks
// pack and unpack contiguous runs; ranks that store otherwise copy with strides.
std::vector<int> packing_order(const std::vector<std::vector<int>>& orders) {
  std::map<std::vector<int>, int> ranks_passing;
  for (const auto& o : orders) ++ranks_passing[o];
  std::vector<int> best = orders.front();
  for (const auto& o : orders)
    if (ranks_passing[o] > ranks_passing[best]) best = o;
  return best;
}

}  // namespace

transform_plan make_reshape_plan(MPI_Comm comm, const std::vector<box>& my_input_boxes,
                                 const std::vector<box>& my_output_boxes, element_type type,
                                 const box_reshape_options& options) {
  const int nranks = mpi::size(comm), me = mpi::rank(comm);
  // Local checks, agreed before anything is gathered; the riders size the gathered records.
  int ndim = 0;
  std::size_t max_in = 0, max_out = 0;
  {
    mpi::agreement agreed(comm);
    int my_ndim = 0;
    agreed.attempt([&] {
      my_ndim = local_axes(my_input_boxes, my_output_boxes, options);
      permutation(options.input_order, my_ndim, {}, "input_order");
      permutation(options.output_order, my_ndim, {}, "output_order");
      permutation(options.axes, my_ndim, {}, "axes");
      mpi_datatype(type);  // throws for a value outside the enum
    });
    // strategy and stores again (the reshape plan agrees on its options too) so that the C door's info values
    // must match, as its documentation says.
    const std::uint64_t hash = field_hash()
                                   .add_all(options.axes, type, options.conjugate, options.relabel,
                                            options.transform.strategy, options.transform.stores)
                                   .value();
    agreed.require_same(hash,
                        "ranks passed different element types, axes, conjugate, relabel, strategy or stores to "
                        "make_reshape_plan; every rank must pass the same");
    const std::size_t most_axes = agreed.reduce_max(my_ndim);
    const std::size_t fewest_axes =
        agreed.reduce_min(my_ndim == 0 ? std::numeric_limits<std::int64_t>::max() : my_ndim);
    const std::size_t most_inputs = agreed.reduce_max(static_cast<std::int64_t>(my_input_boxes.size()));
    const std::size_t most_outputs = agreed.reduce_max(static_cast<std::int64_t>(my_output_boxes.size()));
    agreed.conclude();
    // Known to every rank alike: thrown alike.
    if (agreed.max(most_axes) == 0)
      throw invalid_argument("make_reshape_plan: no rank passed a box; expected boxes tiling the array");
    if (agreed.min(fewest_axes) != agreed.max(most_axes))
      throw invalid_argument("ranks passed boxes of " + std::to_string(agreed.min(fewest_axes)) + " and of " +
                             std::to_string(agreed.max(most_axes)) +
                             " axes; expected the same number of axes on every rank");
    ndim = static_cast<int>(agreed.max(most_axes));
    max_in = static_cast<std::size_t>(agreed.max(most_inputs));
    max_out = static_cast<std::size_t>(agreed.max(most_outputs));
  }
  const std::size_t words = header_words + (max_in + max_out) * 2 * static_cast<std::size_t>(ndim);
  if (words > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw invalid_argument("make_reshape_plan: " + std::to_string(max_in + max_out) +
                           " boxes on one rank; expected fewer than 2^31 words of them");

  std::vector<std::int64_t> mine;
  std::vector<std::int64_t> flat;
  {
    mpi::agreement agreed(comm);  // memory
    agreed.attempt([&] {
      mine.assign(words, 0);
      mine[0] = static_cast<std::int64_t>(my_input_boxes.size());
      mine[1] = static_cast<std::int64_t>(my_output_boxes.size());
      mine[2] = static_cast<std::int64_t>(options.input_order.size());
      mine[3] = static_cast<std::int64_t>(options.output_order.size());
      std::copy(options.input_order.begin(), options.input_order.end(), mine.begin() + 4);
      std::copy(options.output_order.begin(), options.output_order.end(), mine.begin() + 4 + max_axes);
      auto w = mine.begin() + static_cast<std::ptrdiff_t>(header_words);
      for (const auto* boxes : {&my_input_boxes, &my_output_boxes})
        for (const box& b : *boxes) {
          w = std::copy(b.lo.begin(), b.lo.end(), w);
          w = std::copy(b.hi.begin(), b.hi.end(), w);
        }
      flat.resize(words * static_cast<std::size_t>(nranks));
    });
    agreed.conclude();
  }
  REDIST_MPI_CHECK(mpi::allgather_yielding(mine.data(), static_cast<int>(words), MPI_INT64_T, flat.data(),
                                           static_cast<int>(words), MPI_INT64_T, comm));

  // Every rank sees the same gathered data and so fails alike, except for its own orders; agreed all the same.
  reshape_job job;
  job.type = type;
  job.conjugate = options.conjugate;
  std::vector<std::vector<box>> inputs_of(static_cast<std::size_t>(nranks)), outputs_of = inputs_of;
  std::vector<std::vector<box>> shifted_outputs;
  std::vector<int> my_output_order;
  {
    mpi::agreement agreed(comm);
    agreed.attempt([&] {
      std::vector<int> identity(static_cast<std::size_t>(ndim));
      for (int k = 0; k < ndim; ++k) identity[static_cast<std::size_t>(k)] = k;
      job.axes = permutation(options.axes, ndim, identity, "axes");
      const std::vector<int> c = c_order(ndim);
      std::vector<std::vector<int>> input_orders, output_orders;
      for (int r = 0; r < nranks; ++r) {
        passed p = decode(&flat[static_cast<std::size_t>(r) * words], ndim);
        input_orders.push_back(permutation(p.input_order, ndim, c, "input_order"));
        output_orders.push_back(permutation(p.output_order, ndim, c, "output_order"));
        inputs_of[static_cast<std::size_t>(r)] = std::move(p.inputs);
        outputs_of[static_cast<std::size_t>(r)] = std::move(p.outputs);
      }
      const box in_bounds = bounds(inputs_of, ndim), out_bounds = bounds(outputs_of, ndim);
      if (in_bounds.lo.empty()) throw invalid_argument("every input box is empty; expected boxes tiling the array");
      box expected{std::vector<std::int64_t>(static_cast<std::size_t>(ndim)),
                   std::vector<std::int64_t>(static_cast<std::size_t>(ndim))};
      for (std::size_t k = 0; k < static_cast<std::size_t>(ndim); ++k) {
        expected.lo[k] = in_bounds.lo[static_cast<std::size_t>(job.axes[k])];
        expected.hi[k] = in_bounds.hi[static_cast<std::size_t>(job.axes[k])];
      }
      if (!(out_bounds == expected))
        throw invalid_argument("the output boxes span [" + text(out_bounds.lo) + ", " + text(out_bounds.hi) +
                               "), expected the input's space [" + text(in_bounds.lo) + ", " + text(in_bounds.hi) +
                               ") permuted by axes: [" + text(expected.lo) + ", " + text(expected.hi) + ")");
      // box_layout's errors (overlap, gap) say which side they are about.
      const auto layout = [&](const std::vector<std::vector<box>>& boxes, const std::vector<std::vector<int>>& orders,
                              const char* side) {
        try {
          return box_layout(boxes, me, orders[static_cast<std::size_t>(me)], packing_order(orders));
        } catch (...) {
          mpi::failure f = mpi::current_failure();
          f.message = side + f.message;
          mpi::raise(f);
        }
      };
      job.b = layout(shifted(inputs_of, in_bounds.lo), input_orders, "input boxes: ");
      shifted_outputs = shifted(outputs_of, expected.lo);
      job.a = layout(shifted_outputs, output_orders, "output boxes: ");
      my_output_order = output_orders[static_cast<std::size_t>(me)];
    });
    agreed.conclude();
  }

  int passed_by = me;
  if (options.relabel) {
    // The output boxes passed by rank r are held by rank new_rank_of[r]. A is rebuilt from the moved boxes rather
    // than taken from relabel_reshape_targets: relabeled() stores explicit (non-product) boxes block by block, and
    // the caller's array must stay dense in the boxes it holds.
    const auto new_rank_of = relabel_reshape_targets(comm, {job}).result.new_rank_of;
    passed_by = static_cast<int>(std::find(new_rank_of.begin(), new_rank_of.end(), me) - new_rank_of.begin());
    mpi::agreement agreed(comm);
    agreed.attempt([&] {
      std::vector<std::vector<box>> moved(shifted_outputs.size());
      for (std::size_t r = 0; r < moved.size(); ++r)
        moved[static_cast<std::size_t>(new_rank_of[r])] = shifted_outputs[r];
      job.a = box_layout(moved, me, my_output_order, job.a.packing_order());
    });
    agreed.conclude();
  }
  transform_plan plan = make_reshape_plan(comm, std::vector<reshape_job>{std::move(job)}, options.transform);
  plan.impl_->output_boxes_held = std::move(outputs_of[static_cast<std::size_t>(passed_by)]);
  plan.impl_->output_boxes_passed_by = passed_by;
  return plan;
}

}  // namespace redist
