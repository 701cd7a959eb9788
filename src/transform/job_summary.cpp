// SPDX-License-Identifier: BSD-3-Clause
#include "job_summary.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "redist/transform/plan.hpp"

namespace redist::transform_detail {

namespace {

// "1 job: " or "3 jobs, the first: ".
std::string count_of(std::size_t jobs) {
  return jobs == 1 ? std::string("1 job: ") : std::to_string(jobs) + " jobs, the first: ";
}

void copy_out(const std::string& text, char* out, std::size_t size) noexcept {
  if (size > 0) std::snprintf(out, size, "%s", text.c_str());
}

}  // namespace

void describe_reshape_jobs(const void* jobs, char* out, std::size_t size) noexcept {
  try {
    const auto& all = *static_cast<const std::vector<reshape_job>*>(jobs);
    if (all.empty()) return copy_out("no job", out, size);
    const reshape_job& j = all.front();
    std::string text = count_of(all.size()) + to_string(j.type) + " A " + j.a.describe() + " from B " + j.b.describe();
    if (!j.axes.empty()) {
      text += ", axes (";
      for (std::size_t k = 0; k < j.axes.size(); ++k) text += (k ? "," : "") + std::to_string(j.axes[k]);
      text += ")";
    }
    if (j.conjugate) text += ", conjugated";
    copy_out(text, out, size);
  } catch (const std::exception&) {
    copy_out("(out of memory)", out, size);
  }
}

void describe_matrix_jobs(const void* jobs, char* out, std::size_t size) noexcept {
  try {
    const auto& all = *static_cast<const std::vector<job_description>*>(jobs);
    if (all.empty()) return copy_out("no job", out, size);
    const job_description& j = all.front();
    copy_out(count_of(all.size()) + to_string(j.type) + " A " + j.a.describe() + " = " + to_string(j.operation) +
                 " of B " + j.b.describe(),
             out, size);
  } catch (const std::exception&) {
    copy_out("(out of memory)", out, size);
  }
}

}  // namespace redist::transform_detail
