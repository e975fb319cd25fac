#include "kernels/conv.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("a 2x2 diagonal filter over a 3x3 image: forward and both gradients by hand") {
  const kernels::ConvShape s{1, 3, 3, 2, 1, 0};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 0, 0, 1}, dy = {1, 1, 1, 1};
  std::vector<float> y(4), dx(9, 99.0f), dw = {1, 1, 1, 1};
  kernels::conv2d_forward(kernels::Context::host(), s, 1, 1, x.data(), w.data(), y.data());
  CHECK(y == std::vector<float>{6, 8, 12, 14});
  kernels::conv2d_backward_data(kernels::Context::host(), s, 1, 1, w.data(), dy.data(), dx.data());
  CHECK(dx == std::vector<float>{1, 1, 0, 1, 2, 1, 0, 1, 1});  // overwritten
  kernels::conv2d_backward_filter(kernels::Context::host(), s, 1, 1, x.data(), dy.data(), dw.data());
  CHECK(dw == std::vector<float>{13, 17, 25, 29});  // accumulated onto the ones
}

TEST_CASE("strided, padded convolution equals the direct sum") {
  const kernels::ConvShape s{2, 5, 4, 3, 2, 1};
  const int batch = 2, out = 3, ho = s.out_height(), wo = s.out_width();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(batch * 2 * 5 * 4), w(out * 2 * 3 * 3), y(batch * out * ho * wo);
  for (auto& v : x) v = d(rng);
  for (auto& v : w) v = d(rng);
  kernels::cpu::conv2d_forward(s, batch, out, x.data(), w.data(), y.data());
  for (int b = 0; b < batch; ++b)
    for (int o = 0; o < out; ++o)
      for (int oy = 0; oy < ho; ++oy)
        for (int ox = 0; ox < wo; ++ox) {
          double sum = 0;
          for (int c = 0; c < 2; ++c)
            for (int ki = 0; ki < 3; ++ki)
              for (int kj = 0; kj < 3; ++kj) {
                const int iy = oy * 2 - 1 + ki, ix = ox * 2 - 1 + kj;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 4) continue;
                sum += x[((b * 2 + c) * 5 + iy) * 4 + ix] * w[((o * 2 + c) * 3 + ki) * 3 + kj];
              }
          CHECK(y[((b * out + o) * ho + oy) * wo + ox] == doctest::Approx(sum).epsilon(1e-5));
        }
}

TEST_CASE("channel bias and its gradient") {
  std::vector<float> y(2 * 2 * 3, 1.0f);
  const float bias[] = {10, 20};
  kernels::cpu::add_channel_bias(y.data(), bias, 2, 2, 3);
  CHECK(y == std::vector<float>{11, 11, 11, 21, 21, 21, 11, 11, 11, 21, 21, 21});
  std::vector<float> db = {0, 1};
  const std::vector<float> dy = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  kernels::cpu::channel_bias_grad(dy.data(), db.data(), 2, 2, 3);
  CHECK(db == std::vector<float>{1 + 2 + 3 + 7 + 8 + 9, 1 + 4 + 5 + 6 + 10 + 11 + 12});
}
