#include "redist/transform/types.hpp"

#include "redist/transform/plan.hpp"

namespace redist {

std::size_t element_size(element_type t) {
  switch (t) {
    case element_type::f32: return 4;
    case element_type::f64: return 8;
    case element_type::c32: return 8;
    case element_type::c64: return 16;
    case element_type::i32: return 4;
    case element_type::i64: return 8;
  }
  return 0;
}

const char* to_string(element_type t) {
  switch (t) {
    case element_type::f32: return "float";
    case element_type::f64: return "double";
    case element_type::c32: return "complex<float>";
    case element_type::c64: return "complex<double>";
    case element_type::i32: return "int32";
    case element_type::i64: return "int64";
  }
  return "?";
}

const char* to_string(op o) {
  switch (o) {
    case op::identity: return "identity";
    case op::transpose: return "transpose";
    case op::conj_transpose: return "conj_transpose";
  }
  return "?";
}

const char* to_string(region_shape s) {
  switch (s) {
    case region_shape::all: return "all";
    case region_shape::upper: return "upper";
    case region_shape::lower: return "lower";
  }
  return "?";
}

const char* to_string(exchange_strategy s) {
  switch (s) {
    case exchange_strategy::automatic: return "auto";
    case exchange_strategy::point_to_point: return "point_to_point";
    case exchange_strategy::alltoallv: return "alltoallv";
    case exchange_strategy::shared_memory: return "shared_memory";
    case exchange_strategy::torus_routed: return "torus_routed";
  }
  return "?";
}

const char* to_string(store_policy s) {
  switch (s) {
    case store_policy::automatic: return "auto";
    case store_policy::cached: return "cached";
    case store_policy::streaming: return "streaming";
  }
  return "?";
}

}  // namespace redist
