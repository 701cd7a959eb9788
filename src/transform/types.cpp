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

}  // namespace redist
