// SPDX-License-Identifier: BSD-3-Clause
// Execution of transform plans: the buffers' checks agreed over the ranks, then the plan's strategy
// (src/transform/strategies/) moves the messages and applies the tiles.
#include <omp.h>

#include <string>

#include "detail/plan_impl.hpp"
#include "job_summary.hpp"
#include "mpi/agreement.hpp"
#include "redist/error.hpp"
#include "strategies/strategy.hpp"
#include "tile_ops.hpp"
#include "trace/recorder.hpp"

namespace redist {

namespace {

// Problems with the buffers of one execution on this rank (empty when fine).
std::string check_buffers(const transform_plan::impl& p, const std::vector<job_buffers>& buffers) {
  if (buffers.size() != p.reshape_jobs.size())
    return "execute got " + std::to_string(buffers.size()) + " job buffers for a plan of " +
           std::to_string(p.reshape_jobs.size()) + " jobs";
  for (size_t k = 0; k < buffers.size(); ++k) {
    const auto& j = p.reshape_jobs[k];
    const auto& b = buffers[k];
    const std::string where = "job " + std::to_string(k) + ": ";
    if ((j.type == element_type::i32 || j.type == element_type::i64) &&
        (b.alpha != scalar(1.0, 0.0) || b.beta != scalar(0.0, 0.0)))
      return where + "integer elements support plain copies only (alpha = 1, beta = 0)";
    if ((j.type == element_type::f32 || j.type == element_type::f64) && (b.alpha.imag() != 0.0 || b.beta.imag() != 0.0))
      return where + "real elements need real alpha and beta";
    if (b.a == nullptr && j.a.local_elements() > 0)
      return where + "A's buffer is null on a rank that holds " + std::to_string(j.a.local_elements()) +
             " elements of A";
    if (b.b == nullptr && b.alpha != scalar(0.0, 0.0) && j.b.local_elements() > 0)
      return where + "B's buffer is null on a rank that holds " + std::to_string(j.b.local_elements()) +
             " elements of B (only alpha = 0 allows that)";
  }
  return {};
}

// Sets the plan's OpenMP team for the scope, restoring the caller's after it.
class plan_threads {
 public:
  explicit plan_threads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  plan_threads(const plan_threads&) = delete;
  plan_threads& operator=(const plan_threads&) = delete;
  ~plan_threads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

// The private message buffers go back to the cache however the scope ends, unless kept: by the exchange this call
// started, or by one a previous start() left in progress (a call refused because of it must not take them).
struct returned_buffers {
  const transform_plan::impl* plan;
  ~returned_buffers() {
    if (plan != nullptr) plan->return_private_buffers();
  }
};

constexpr const char* already_started = "a start() of this plan is still in progress (call wait() first)";

}  // namespace
void transform_plan::execute(const std::vector<job_buffers>& buffers) const { execute_agreed(buffers, {}); }

void transform_plan::execute_agreed(const std::vector<job_buffers>& buffers, const std::string& problem,
                                    const transform_plan* next) const {
  if (!impl_) throw invalid_argument("execute on an empty transform_plan (build it with make_transform_plan)");
  mpi::wait_label label(impl_->jobs.empty() ? "reshape_plan" : "transform_plan", "execution",
                        impl_->options.timeout_seconds);
  label.describe(transform_detail::describe_reshape_jobs, &impl_->reshape_jobs);
  trace_detail::plan_event traced;
  impl_->execute(buffers, problem, next != nullptr ? next->impl_.get() : nullptr);
  if (traced.active())
    traced.executed(impl_->jobs.empty() ? "reshape_plan" : "transform_plan", to_string(impl_->strategy),
                    impl_->stats.bytes_sent, impl_->stats.messages_sent);
}

void transform_plan::start(const std::vector<job_buffers>& buffers) const { start_agreed(buffers, {}); }

void transform_plan::start_agreed(const std::vector<job_buffers>& buffers, const std::string& problem) const {
  if (!impl_) throw invalid_argument("start on an empty transform_plan (build it with make_transform_plan)");
  mpi::wait_label label(impl_->jobs.empty() ? "reshape_plan" : "transform_plan", "start",
                        impl_->options.timeout_seconds);
  label.describe(transform_detail::describe_reshape_jobs, &impl_->reshape_jobs);
  impl_->start(buffers, problem);
}

void transform_plan::wait() const {
  if (!impl_) throw invalid_argument("wait on an empty transform_plan (build it with make_transform_plan)");
  mpi::wait_label label(impl_->jobs.empty() ? "reshape_plan" : "transform_plan", "wait",
                        impl_->options.timeout_seconds);
  label.describe(transform_detail::describe_reshape_jobs, &impl_->reshape_jobs);
  trace_detail::plan_event traced;
  impl_->wait();
  // Traced as one execution at its wait, timed as start() plus wait() (not the caller's work between them).
  if (traced.active())
    traced.executed(impl_->jobs.empty() ? "reshape_plan" : "transform_plan", to_string(impl_->strategy),
                    impl_->stats.bytes_sent, impl_->stats.messages_sent, impl_->last_execution_seconds);
}

bool transform_plan::in_progress() const { return impl_ && impl_->in_progress; }

detail::started_execution::started_execution(const std::vector<job_buffers>& given, const transform_plan::impl& plan)
    : buffers(given), ops{plan.job_plans, buffers, plan.pack_stores} {}

std::vector<std::uint64_t> transform_plan::impl::agree_on_execution(const std::vector<job_buffers>* buffers,
                                                                    const std::string& problem,
                                                                    const impl* next) const {
  // What the strategy needs agreed (shared_memory: where this rank's B is), published before the first
  // synchronisation.
  std::vector<std::uint64_t> agreed = executor->before_agreement(problem.empty() ? buffers : nullptr);
  if (options.check_consistency) {
    // Agreed over all ranks, so a problem on one rank stops every rank before anything moves. Being a
    // synchronisation of all ranks, it also tells a shared-memory sender that its node peers finished
    // reading the previous execution's data from its window segment, and it carries the strategy's values.
    mpi::agreement agreement(comm.get());
    if (!problem.empty()) agreement.fail(mpi::error_kind::invalid_argument, problem);
    agreement.attempt([&] {
      borrow_private_buffers();
      if (next != nullptr) next->borrow_private_buffers();
    });
    std::vector<std::size_t> slots;
    for (std::uint64_t value : agreed) slots.push_back(agreement.reduce_min(static_cast<std::int64_t>(value)));
    agreement.conclude();
    // Signed minima serve as well: only "are all equal" is read from them.
    for (std::size_t k = 0; k < slots.size(); ++k) agreed[k] = static_cast<std::uint64_t>(agreement.min(slots[k]));
  } else if (!problem.empty()) {
    throw invalid_argument(problem);
  } else {
    // Without the agreement a failed allocation is this rank's alone, as any other local problem in this mode.
    borrow_private_buffers();
    if (next != nullptr) next->borrow_private_buffers();
    executor->reduce_without_agreement(agreed);
  }
  return agreed;
}

void transform_plan::impl::execute(const std::vector<job_buffers>& buffers, const std::string& caller_problem,
                                   const impl* next) const {
  const seconds_since began;
  struct timed {
    const impl& plan;
    const seconds_since& began;
    ~timed() { plan.last_execution_seconds = began.elapsed(); }
  } time_it{*this, began};
  const std::string problem = in_progress              ? already_started
                              : caller_problem.empty() ? check_buffers(*this, buffers)
                                                       : caller_problem;
  const returned_buffers give_back{in_progress ? nullptr : this};
  const std::vector<std::uint64_t> agreed = agree_on_execution(&buffers, problem, next);
  const plan_threads team(threads);
  const mpi::discard_if_thrown exchange(comm);
  executor->execute(detail::tile_ops{job_plans, buffers, pack_stores}, agreed);
}

void transform_plan::impl::start(const std::vector<job_buffers>& buffers, const std::string& caller_problem) const {
  const seconds_since began;
  const std::string problem = in_progress              ? already_started
                              : caller_problem.empty() ? check_buffers(*this, buffers)
                                                       : caller_problem;
  returned_buffers give_back{in_progress ? nullptr : this};
  const std::vector<std::uint64_t> agreed = agree_on_execution(&buffers, problem, nullptr);
  auto execution = std::make_unique<detail::started_execution>(buffers, *this);
  const plan_threads team(threads);
  const mpi::discard_if_thrown exchange(comm);
  execution->pending = executor->start(execution->ops, agreed);
  in_progress = std::move(execution);
  give_back.plan = nullptr;  // until wait()
  last_execution_seconds = began.elapsed();
}

void transform_plan::impl::wait() const {
  if (!in_progress) throw invalid_argument("wait() without a start() in progress on this plan");
  const seconds_since began;
  const std::unique_ptr<detail::started_execution> execution = std::move(in_progress);
  const returned_buffers give_back{this};
  const plan_threads team(threads);
  const mpi::discard_if_thrown exchange(comm);
  if (execution->pending) execution->pending->complete();
  last_execution_seconds += began.elapsed();
}

}  // namespace redist
