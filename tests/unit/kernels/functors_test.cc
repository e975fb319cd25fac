#include "kernels/functors.h"

#include <doctest/doctest.h>

#include <cmath>

namespace kernels = paddle::kernels;

TEST_CASE("relu, its gradient and the residual add-relu") {
  CHECK(kernels::Relu{}(2.5f) == 2.5f);
  CHECK(kernels::Relu{}(-1.0f) == 0.0f);
  CHECK(kernels::Relu{}(NAN) == 0.0f);
  CHECK(kernels::ReluGrad{}(3.0f, 0.25f) == 0.25f);
  CHECK(kernels::ReluGrad{}(0.0f, 0.25f) == 0.0f);
  CHECK(kernels::AddRelu{}(1.5f, -0.5f) == 1.0f);
  CHECK(kernels::AddRelu{}(-1.5f, 0.5f) == 0.0f);
  CHECK_FALSE(std::signbit(kernels::AddRelu{}(-0.0f, 0.0f)));
}

TEST_CASE("the update rules against hand values") {
  CHECK(kernels::decayed(0.5f, 2.0f, 0.25f) == 1.0f);

  float w = 1.0f;
  kernels::SgdStep{0.5f}(w, 0.5f);
  CHECK(w == 0.75f);

  float v = 1.0f;
  w = 1.0f;
  kernels::MomentumStep{0.5f, 0.5f}(w, 1.0f, v);  // v = 0.5 + 1; w = 1 - 0.5 * 1.5
  CHECK(v == 1.5f);
  CHECK(w == 0.25f);

  float m = 0.0f;
  v = 0.0f;
  w = 1.0f;
  kernels::AdamStep{0.5f, 0.5f, 0.75f, 0.0f}(w, 2.0f, m, v);  // m = 1, v = 0.25 * 4 = 1, w = 1 - 0.5 * 1 / 1
  CHECK(m == 1.0f);
  CHECK(v == 1.0f);
  CHECK(w == 0.5f);

  float acc = 5.0f;
  w = 1.0f;
  kernels::AdagradStep{0.5f, 0.0f}(w, 2.0f, acc);  // acc = 9, w = 1 - 0.5 * 2 / 3
  CHECK(acc == 9.0f);
  CHECK(w == doctest::Approx(1.0f - 1.0f / 3.0f));
}

TEST_CASE("pooling windows: count, max with padding, sum") {
  CHECK(kernels::window_count(7, 3, 2, 1) == 4);
  CHECK(kernels::window_count(4, 2, 2, 0) == 2);
  const float plane[] = {1, 5, 2,  //
                         7, 3, 4,  //
                         0, 8, 6};
  const kernels::MaxWindow top_left = kernels::max_window(plane, 3, 3, 2, 2, 1, 0, 0);  // only cell (0,0) is real
  CHECK(top_left.value == 1);
  CHECK(top_left.index == 0);
  const kernels::MaxWindow middle = kernels::max_window(plane, 3, 3, 2, 2, 1, 1, 1);  // cells (1..2, 1..2)
  CHECK(middle.value == 8);
  CHECK(middle.index == 7);
  CHECK(kernels::window_sum(plane, 3, 2, 1, 1, 1) == 3 + 4 + 8 + 6);
}
