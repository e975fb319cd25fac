#pragma once
// The oneDNN halves' tests compare with the plain CPU kernels to within float rounding of a
// differently ordered sum: the largest difference at most 1e-5 of the largest magnitude
// (absolute 1e-5 floor).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace paddle::kernels::testing {

inline void check_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  float scale = 1e-5f;
  for (float v : want) scale = std::max(scale, std::abs(v));
  float worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  INFO(what << ": largest difference " << worst << " against magnitude " << scale);
  CHECK(worst <= 1e-5f * scale);
}

}  // namespace paddle::kernels::testing
