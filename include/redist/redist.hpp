#pragma once
// redist: communication-optimal data movement between MPI processes. Umbrella header.
#include "redist/error.hpp"
#include "redist/layout/builders.hpp"
#include "redist/layout/grid_layout.hpp"
#include "redist/relabel/graph.hpp"
#include "redist/relabel/relabel.hpp"
#include "redist/scalapack/descriptor.hpp"
#include "redist/transform/node_buffer.hpp"
#include "redist/transform/plan.hpp"
#include "redist/transform/relabel_targets.hpp"
#include "redist/transform/types.hpp"
#include "redist/version.hpp"
