// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What a transform or reshape plan was given, as the watchdog's line says it where a wait lasts long (internal;
// src/mpi/watchdog.hpp): the plan's making and execution name their jobs to their wait label, and these format them
// only when a wait is reported.
#include <cstddef>

namespace redist::transform_detail {

// mpi::wait_label::describe_fn for a std::vector<reshape_job>: "1 job: double A 24x24 in 6x6 blocks on a 3x1 grid from
// B 24x24 in 8x8 blocks on a 1x3 grid, axes (1,0)", the first job only where there are several.
void describe_reshape_jobs(const void* jobs, char* out, std::size_t size) noexcept;
// The same for a std::vector<job_description> (make_transform_plan's matrix jobs).
void describe_matrix_jobs(const void* jobs, char* out, std::size_t size) noexcept;

}  // namespace redist::transform_detail
