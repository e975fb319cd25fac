#include "kernels/pooling.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kernels/functors.h"

namespace kernels = paddle::kernels;

TEST_CASE("max pooling with padding records the winners, and backward routes to them") {
  const std::vector<float> x = {1, 5, 2,  //
                                7, 3, 4,  //
                                0, 8, 6};
  std::vector<float> y(4);
  std::vector<int32_t> argmax(4);
  kernels::max_pool_forward(kernels::Context::host(), x.data(), 1, 3, 3, 2, 2, 1, y.data(), argmax.data());
  CHECK(y == std::vector<float>{1, 5, 7, 8});
  CHECK(argmax == std::vector<int32_t>{0, 1, 3, 7});
  std::vector<float> dx(9, 0.0f);
  const std::vector<float> dy = {1, 2, 3, 4};
  kernels::max_pool_backward(kernels::Context::host(), dy.data(), argmax.data(), 1, 9, 4, dx.data());
  CHECK(dx == std::vector<float>{1, 2, 0, 3, 0, 0, 0, 4, 0});
}

TEST_CASE("average pooling and its gradient") {
  const std::vector<float> x = {1, 2, 3, 4,  //
                                5, 6, 7, 8};
  std::vector<float> y(2);
  kernels::cpu::avg_pool_forward(x.data(), 1, 2, 4, 2, 2, y.data());
  CHECK(y == std::vector<float>{3.5f, 5.5f});
  std::vector<float> dx(8, 1.0f);
  const std::vector<float> dy = {4, 8};
  kernels::cpu::avg_pool_backward(dy.data(), 1, 2, 4, 2, 2, dx.data());
  CHECK(dx == std::vector<float>{2, 2, 3, 3, 2, 2, 3, 3});  // accumulated onto the ones
}

TEST_CASE("the 2x2 stride-2 max-pool path picks the same winners as the general window, ties and odd sizes included") {
  const int planes = 3, height = 7, width = 9, ho = 3, wo = 4;
  std::vector<float> x(planes * height * width);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 5);  // many equal maxima
  std::vector<float> y(planes * ho * wo);
  std::vector<int32_t> argmax(y.size());
  kernels::max_pool_forward(kernels::Context::host(), x.data(), planes, height, width, 2, 2, 0, y.data(),
                            argmax.data());
  for (int p = 0; p < planes; ++p)
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        const auto want = kernels::max_window(x.data() + p * height * width, height, width, 2, 2, 0, oy, ox);
        CHECK(y[(p * ho + oy) * wo + ox] == want.value);
        CHECK(argmax[(p * ho + oy) * wo + ox] == want.index);
      }
}

TEST_CASE("channel-blocked max pooling equals the plain kernel: blocks 16, 8 and 4, windows 2 and 3, odd planes, ties, "
          "ReLU's gradient") {
  struct Case {
    int block, kernel, height, width;
  };
  // 16 and 8 with windows 2 and 3 run the fixed-size kernels; 4 and 5x5 the general one.
  for (const Case c : {Case{16, 2, 7, 9}, Case{16, 3, 8, 7}, Case{8, 2, 6, 5}, Case{8, 3, 9, 9}, Case{4, 2, 7, 7},
                       Case{16, 5, 11, 10}})
    for (const bool relu : {false, true}) {
      CAPTURE(c.block);
      CAPTURE(c.kernel);
      CAPTURE(relu);
      const int batch = 2, channels = 2 * c.block, outer = batch * channels / c.block;
      const int ho = c.height / c.kernel, wo = c.width / c.kernel, plane = c.height * c.width;
      const size_t in = static_cast<size_t>(batch) * channels * plane, out = static_cast<size_t>(batch) * channels * ho * wo;
      std::vector<float> x(in), dy(out);
      for (size_t i = 0; i < in; ++i) x[i] = static_cast<float>(static_cast<int>((i * 7919) % 5) - 1);  // ties, and 0s
      for (size_t i = 0; i < out; ++i) dy[i] = static_cast<float>(i % 13) - 6.0f;
      // NCHW index of blocked [o][h][w][lane]: channel (o % (C/B)) * B + lane of image o / (C/B).
      const auto nchw = [&](size_t o, size_t spatial, int lane, size_t plane_size) {
        const size_t image = o / (channels / c.block), channel = (o % (channels / c.block)) * c.block + lane;
        return (image * channels + channel) * plane_size + spatial;
      };
      std::vector<float> xb(in), dyb(out);
      for (size_t o = 0; o < static_cast<size_t>(outer); ++o)
        for (int l = 0; l < c.block; ++l) {
          for (int s = 0; s < plane; ++s) xb[(o * plane + s) * c.block + l] = x[nchw(o, s, l, plane)];
          for (int s = 0; s < ho * wo; ++s) dyb[(o * ho * wo + s) * c.block + l] = dy[nchw(o, s, l, ho * wo)];
        }
      std::vector<float> y(out), yb(out), dx(in, 0.0f), dxb(in, 7.0f);
      std::vector<int32_t> argmax(out), winners(out);
      kernels::cpu::max_pool_forward(x.data(), batch * channels, c.height, c.width, c.kernel, c.kernel, 0, y.data(),
                                     argmax.data());
      kernels::cpu::max_pool_forward_channel_blocked(xb.data(), outer, c.block, c.height, c.width, c.kernel, yb.data(),
                                                     winners.data(), relu);
      std::vector<float> masked = dy;  // ReLU's gradient: a window whose maximum is not above 0 passes none
      if (relu)
        for (size_t i = 0; i < out; ++i) masked[i] = y[i] > 0.0f ? dy[i] : 0.0f;
      kernels::cpu::max_pool_backward(masked.data(), argmax.data(), batch * channels, plane, ho * wo, dx.data());
      kernels::cpu::max_pool_backward_channel_blocked(dyb.data(), winners.data(), outer, c.block, c.height, c.width,
                                                      c.kernel, dxb.data());
      int mismatches = 0;
      for (size_t o = 0; o < static_cast<size_t>(outer); ++o)
        for (int l = 0; l < c.block; ++l) {
          for (int s = 0; s < ho * wo; ++s) {
            const size_t b = (o * ho * wo + s) * c.block + l, p = nchw(o, s, l, ho * wo);
            const int oy = s / wo, ox = s % wo, win = argmax[p] - (oy * c.kernel * c.width + ox * c.kernel);
            const int position = (win / c.width) * c.kernel + win % c.width;
            mismatches += yb[b] != y[p];
            mismatches += winners[b] != (relu && !(y[p] > 0.0f) ? -1 : position);
          }
          for (int s = 0; s < plane; ++s) mismatches += dxb[(o * plane + s) * c.block + l] != dx[nchw(o, s, l, plane)];
        }
      CHECK(mismatches == 0);
    }
}
