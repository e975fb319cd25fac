#include "kernels/batch_norm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace kernels = paddle::kernels;

namespace {

const kernels::BatchNormShape kShape{2, 1, 1, 2};  // four values in one channel

std::vector<float> forward(const std::vector<float>& x, float scale, float shift) {
  std::vector<float> y(4);
  float mean = 0, var = 1, saved_mean, saved_inv_std;
  kernels::cpu::batch_norm_forward_training(kShape, x.data(), y.data(), &scale, &shift, &mean, &var, &saved_mean,
                                            &saved_inv_std, 0.5f, 0.0f);
  return y;
}

}  // namespace

TEST_CASE("training normalizes with the batch statistics and moves the running ones") {
  const std::vector<float> x = {1, 3, 1, 3};  // mean 2, biased variance 1
  std::vector<float> y(4);
  float scale = 2, shift = 0.5f, running_mean = 0, running_var = 3, saved_mean = 0, saved_inv_std = 0;
  kernels::batch_norm_forward_training(kernels::Context::host(), kShape, x.data(), y.data(), &scale, &shift,
                                       &running_mean, &running_var, &saved_mean, &saved_inv_std, 0.5f, 0.0f);
  CHECK(y == std::vector<float>{-1.5f, 2.5f, -1.5f, 2.5f});
  CHECK(running_mean == 1.0f);
  CHECK(running_var == 2.0f);
  CHECK(saved_mean == 2.0f);
  CHECK(saved_inv_std == 1.0f);

  kernels::batch_norm_forward_inference(kernels::Context::host(), kShape, x.data(), y.data(), &scale, &shift,
                                        &running_mean, &running_var, 2.0f);  // (x - 1) / sqrt(2 + 2) * 2 + 0.5
  CHECK(y == std::vector<float>{0.5f, 2.5f, 0.5f, 2.5f});
}

TEST_CASE("backward matches finite differences of sum(dy * y)") {
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 0.25f}, dy = {1.0f, -2.0f, 0.5f, 3.0f};
  const float scale = 1.5f, shift = 0.25f;
  std::vector<float> y(4), dx(4);
  float mean = 0, var = 1, saved_mean, saved_inv_std, dscale = 0, dshift = 0;
  kernels::cpu::batch_norm_forward_training(kShape, x.data(), y.data(), &scale, &shift, &mean, &var, &saved_mean,
                                            &saved_inv_std, 0.9f, 0.0f);
  kernels::cpu::batch_norm_backward(kShape, x.data(), dy.data(), &scale, &saved_mean, &saved_inv_std, dx.data(),
                                    &dscale, &dshift, 0.0f);
  CHECK(dshift == doctest::Approx(2.5));
  for (int i = 0; i < 4; ++i) {
    auto loss_at = [&](float delta) {
      auto shifted = x;
      shifted[i] += delta;
      const auto out = forward(shifted, scale, shift);
      double loss = 0;
      for (int j = 0; j < 4; ++j) loss += dy[j] * out[j];
      return loss;
    };
    const double numeric = (loss_at(1e-3f) - loss_at(-1e-3f)) / 2e-3;
    INFO("element " << i);
    CHECK(dx[i] == doctest::Approx(numeric).epsilon(1e-2));
  }
}
