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
