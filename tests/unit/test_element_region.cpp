// SPDX-License-Identifier: BSD-3-Clause
// element_region: which elements an upper or lower region keeps, and its image under transposition.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "redist/transform/plan.hpp"

using redist::element_region;
using redist::region_shape;

TEST(ElementRegion, AllKeepsEverything) {
  const element_region r{};
  EXPECT_TRUE(r.contains(0, 0));
  EXPECT_TRUE(r.contains(1000, 0));
  EXPECT_TRUE(r.contains(0, 1000));
  EXPECT_EQ(r.transposed().shape, region_shape::all);
}

TEST(ElementRegion, UpperAndLowerAroundTheirDiagonal) {
  const element_region upper{region_shape::upper, 0}, strictly_upper{region_shape::upper, 1};
  const element_region lower{region_shape::lower, 0}, strictly_lower{region_shape::lower, -1};
  EXPECT_TRUE(upper.contains(3, 3));
  EXPECT_TRUE(upper.contains(3, 4));
  EXPECT_FALSE(upper.contains(4, 3));
  EXPECT_FALSE(strictly_upper.contains(3, 3));
  EXPECT_TRUE(strictly_upper.contains(3, 4));
  EXPECT_TRUE(lower.contains(3, 3));
  EXPECT_TRUE(lower.contains(4, 3));
  EXPECT_FALSE(lower.contains(3, 4));
  EXPECT_FALSE(strictly_lower.contains(3, 3));
  EXPECT_TRUE(strictly_lower.contains(4, 3));
  // A shifted diagonal: upper with diagonal -2 keeps two subdiagonals.
  const element_region band{region_shape::upper, -2};
  EXPECT_TRUE(band.contains(5, 3));
  EXPECT_FALSE(band.contains(6, 3));
}

TEST(ElementRegion, TransposedKeepsTheMirroredElements) {
  for (const region_shape shape : {region_shape::upper, region_shape::lower})
    for (std::int64_t d = -3; d <= 3; ++d) {
      const element_region r{shape, d}, t = r.transposed();
      EXPECT_NE(t.shape, shape);
      for (std::int64_t i = 0; i < 7; ++i)
        for (std::int64_t j = 0; j < 7; ++j)
          EXPECT_EQ(r.contains(i, j), t.contains(j, i))
              << redist::to_string(shape) << " " << d << " at " << i << "," << j;
    }
}

TEST(ElementRegion, Names) {
  EXPECT_EQ(std::string(redist::to_string(region_shape::all)), "all");
  EXPECT_EQ(std::string(redist::to_string(region_shape::upper)), "upper");
  EXPECT_EQ(std::string(redist::to_string(region_shape::lower)), "lower");
}
