#include "kernels/embedding.h"

#include <doctest/doctest.h>

#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("embedding rows, an id outside the vocabulary, and the gradient of repeated ids") {
  const std::vector<float> table = {0, 1, 10, 11, 20, 21};  // 3 x 2
  const std::vector<int64_t> ids = {2, 0, 2};
  std::vector<float> y(6);
  CHECK(kernels::embedding_forward(kernels::Context::host(), table.data(), ids.data(), 3, 2, 3, y.data()) == -1);
  CHECK(y == std::vector<float>{20, 21, 0, 1, 20, 21});
  const std::vector<int64_t> bad = {1, 3, -1};
  CHECK(kernels::cpu::embedding_forward(table.data(), bad.data(), 3, 2, 3, y.data()) == 3);

  std::vector<float> dtable(6, 0.0f);
  const std::vector<float> dy = {1, 2, 3, 4, 5, 6};
  kernels::embedding_backward(kernels::Context::host(), ids.data(), 3, 2, dy.data(), dtable.data());
  CHECK(dtable == std::vector<float>{3, 4, 0, 0, 6, 8});
}

TEST_CASE("bag mean: each row's mean over its real ids, zeros for a row of padding, and its gradient") {
  // 4 rows of 3 slots, dim 2; embedded[i,s] = (10 i + s, -(10 i + s)), padding slots filled with 99.
  const std::vector<int64_t> ids = {5, 2, 0,  //
                                    0, 0, 0,  //
                                    1, 1, 3,  //
                                    0, 4, 0};
  std::vector<float> embedded(4 * 3 * 2);
  for (int i = 0; i < 4; ++i)
    for (int s = 0; s < 3; ++s) {
      const bool padding = ids[i * 3 + s] == 0;
      embedded[(i * 3 + s) * 2] = padding ? 99.0f : static_cast<float>(10 * i + s);
      embedded[(i * 3 + s) * 2 + 1] = padding ? 99.0f : -static_cast<float>(10 * i + s);
    }
  std::vector<float> weights(12, -1.0f), y(8, -1.0f);
  kernels::bag_mean_forward(kernels::Context::host(), ids.data(), embedded.data(), 4, 3, 2, weights.data(), y.data());
  const float third = 1.0f / 3.0f;
  CHECK(weights == std::vector<float>{0.5f, 0.5f, 0, 0, 0, 0, third, third, third, 0, 1, 0});
  CHECK(y[0] == 0.5f);   // (0 + 1) / 2
  CHECK(y[1] == -0.5f);
  CHECK(y[2] == 0.0f);   // padding only
  CHECK(y[3] == 0.0f);
  CHECK(y[4] == doctest::Approx(21.0));  // (20 + 21 + 22) / 3
  CHECK(y[5] == doctest::Approx(-21.0));
  CHECK(y[6] == 31.0f);  // the one real id, in the middle slot
  CHECK(y[7] == -31.0f);

  const std::vector<float> dy = {2, 4, 6, 8, 3, -3, 1, 7};
  std::vector<float> dembedded(24, -1.0f);
  kernels::bag_mean_backward(kernels::Context::host(), weights.data(), dy.data(), 4, 3, 2, dembedded.data());
  CHECK(dembedded == std::vector<float>{1, 2, 1, 2, 0, 0,           //
                                        0, 0, 0, 0, 0, 0,           //
                                        third * 3, third * -3, third * 3, third * -3, third * 3, third * -3,  //
                                        0, 0, 1, 7, 0, 0});
}
