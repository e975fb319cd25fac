#include "kernels/autocast_conv.h"

#include <doctest/doctest.h>

#include <vector>

#include "kernels/conv.h"

namespace kernels = paddle::kernels;
using kernels::DType;

TEST_CASE("autocast convolution of 16-bit values with 16-bit results equals the float32 convolution") {
  // Inputs in {-1, -1/2, 0, 1/2, 1}: every sum of 18 products is a multiple of 1/4 below 18, which
  // float16 and bfloat16 hold exactly.
  const kernels::ConvShape s{2, 5, 5, 3, 2, 1};
  const int batch = 2, out = 3, positions = s.out_height() * s.out_width();
  std::vector<float> x(batch * 2 * 25), w(out * 18), dy(batch * out * positions);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 5) - 2) / 2;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 3 % 5) - 2) / 2;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(static_cast<int>(i * 11 % 5) - 2) / 2;
  std::vector<float> y32(dy.size()), dx32(x.size()), dw32(w.size(), 1.0f);
  kernels::cpu::conv2d_forward(s, batch, out, x.data(), w.data(), y32.data());
  kernels::cpu::conv2d_backward_data(s, batch, out, w.data(), dy.data(), dx32.data());
  kernels::cpu::conv2d_backward_filter(s, batch, out, x.data(), dy.data(), dw32.data());
  const auto& host = kernels::Context::host();
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size(), 1.0f);
    kernels::autocast_conv2d_forward(host, half, s, batch, out, x.data(), w.data(), y.data());
    kernels::autocast_conv2d_backward_data(host, half, s, batch, out, w.data(), dy.data(), dx.data());
    kernels::autocast_conv2d_backward_filter(host, half, s, batch, out, x.data(), dy.data(), dw.data());
    CHECK(y == y32);
    CHECK(dx == dx32);
    CHECK(dw == dw32);  // accumulated onto the ones
  }
}

TEST_CASE("autocast convolution rounds its inputs and its result to the 16-bit type") {
  const kernels::ConvShape one{1, 1, 1, 1, 1, 0};  // a 1x1 image, a 1x1 filter: y = x * w
  float y16 = 0, yb16 = 0;
  const float x = 100.1f, unit = 1;
  kernels::cpu::autocast_conv2d_forward(DType::kFloat16, one, 1, 1, &x, &unit, &y16);
  kernels::cpu::autocast_conv2d_forward(DType::kBFloat16, one, 1, 1, &x, &unit, &yb16);
  CHECK(y16 == 100.125f);  // 100.1 to 11 significant bits
  CHECK(yb16 == 100.0f);   // and to 8
  // 1 + 2^-10 is a float16 value; its square 1 + 2^-9 + 2^-20 is not, and the result is rounded.
  const float a = 1 + 1.0f / 1024;
  float y = 0, y32 = 0;
  kernels::cpu::autocast_conv2d_forward(DType::kFloat16, one, 1, 1, &a, &a, &y);
  kernels::cpu::conv2d_forward(one, 1, 1, &a, &a, &y32);
  CHECK(y == 1 + 1.0f / 512);
  CHECK(y32 == a * a);
  CHECK(y != y32);
}
