// The oneDNN halves against the plain CPU halves they replace: the same shapes, the same random
// data, results equal to within float rounding of a differently ordered sum (check_close.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "common/error.h"
#include "kernels/context.h"
#include "kernels/conv.h"
#include "kernels/gemm.h"
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
#include "kernels/onednn/onednn.h"
#endif
#include "check_close.h"
#include "random_vector.h"

namespace kernels = paddle::kernels;
using kernels::testing::check_close;
using kernels::testing::random_vector;

TEST_CASE("PADDLE_CPU_KERNELS picks oneDNN by default, plain on request, and names itself when wrong") {
  CHECK(kernels::cpu_kernels_from(nullptr) == kernels::CpuKernels::kOneDnn);
  CHECK(kernels::cpu_kernels_from("onednn") == kernels::CpuKernels::kOneDnn);
  CHECK(kernels::cpu_kernels_from("plain") == kernels::CpuKernels::kPlain);
  CHECK_THROWS_WITH_AS(kernels::cpu_kernels_from("mkl"), "PADDLE_CPU_KERNELS=mkl is not onednn, onednn:library, onednn:ours or plain",
                       paddle::common::ConfigError);
  CHECK_FALSE(kernels::Context::host().uses_onednn());
  CHECK_FALSE(kernels::Context(kernels::CpuKernels::kPlain).uses_onednn());
}

#ifdef PADDLE_LAUNCH_WITH_ONEDNN

TEST_CASE("oneDNN convolution equals the im2col reference, forward and both gradients, in every shape a model uses") {
  struct Case {
    kernels::ConvShape shape;
    int batch, out_channels;
  };
  const Case cases[] = {
      {{1, 28, 28, 3, 1, 1}, 8, 16},    // the Fashion-MNIST CNN's first layer
      {{16, 14, 14, 3, 1, 1}, 8, 32},   // and its second
      {{3, 17, 15, 7, 2, 3}, 2, 8},     // a ResNet stem on an odd image
      {{8, 9, 9, 1, 2, 0}, 3, 24},      // a strided 1x1 shortcut
      {{5, 6, 7, 3, 2, 1}, 1, 3},       // channels oneDNN cannot block
  };
  const kernels::Context dnn;
  REQUIRE(dnn.uses_onednn());
  unsigned seed = 1;
  for (const Case& c : cases) {
    const kernels::ConvShape& s = c.shape;
    CAPTURE(s.channels);
    CAPTURE(s.kernel);
    const size_t x_size = static_cast<size_t>(c.batch) * s.channels * s.height * s.width;
    const size_t w_size = static_cast<size_t>(c.out_channels) * s.channels * s.kernel * s.kernel;
    const size_t y_size = static_cast<size_t>(c.batch) * c.out_channels * s.out_height() * s.out_width();
    const auto x = random_vector(x_size, seed++), w = random_vector(w_size, seed++), dy = random_vector(y_size, seed++);
    const auto dw0 = random_vector(w_size, seed++);  // both add the filter gradient onto what is there
    std::vector<float> y_ref(y_size), y(y_size, 7.0f), dx_ref(x_size), dx(x_size, 7.0f), dw_ref = dw0, dw = dw0;
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second call runs the cached primitives
      kernels::cpu::conv2d_forward(s, c.batch, c.out_channels, x.data(), w.data(), y_ref.data());
      kernels::conv2d_forward(dnn, s, c.batch, c.out_channels, x.data(), w.data(), y.data());
      check_close(y, y_ref, "forward");
      kernels::cpu::conv2d_backward_data(s, c.batch, c.out_channels, w.data(), dy.data(), dx_ref.data());
      kernels::conv2d_backward_data(dnn, s, c.batch, c.out_channels, w.data(), dy.data(), dx.data());
      check_close(dx, dx_ref, "data gradient");
      kernels::cpu::conv2d_backward_filter(s, c.batch, c.out_channels, x.data(), dy.data(), dw_ref.data());
      kernels::conv2d_backward_filter(dnn, s, c.batch, c.out_channels, x.data(), dy.data(), dw.data());
      check_close(dw, dw_ref, "filter gradient, accumulated");
    }
  }
}

TEST_CASE("oneDNN's sgemm and matmul equal Eigen for every transpose, overwriting and accumulating, and empty sums") {
  const kernels::Context dnn;
  const int m = 13, n = 70, k = 33;
  const auto a = random_vector(m * k, 11), b = random_vector(k * n, 12), c0 = random_vector(m * n, 13);
  kernels::onednn::OneDnn sgemm(kernels::onednn::Pick::kFaster, kernels::onednn::Alternative::kNever),
      matmul(kernels::onednn::Pick::kFaster, kernels::onednn::Alternative::kAlways);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool accumulate : {false, true}) {
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(accumulate);
        std::vector<float> want = c0, by_sgemm = c0, by_matmul = c0;
        kernels::cpu::gemm(ta, tb, m, n, k, a.data(), b.data(), want.data(), accumulate);
        for (int call = 0; call < 8; ++call) {  // raced on these calls: each way's result is right
          std::vector<float> got = c0;
          kernels::gemm(dnn, ta, tb, m, n, k, a.data(), b.data(), got.data(), accumulate);
          check_close(got, want, "gemm");
        }
        kernels::onednn::gemm(sgemm, ta, tb, m, n, k, a.data(), b.data(), by_sgemm.data(), accumulate);
        check_close(by_sgemm, want, "sgemm");
        kernels::onednn::gemm(matmul, ta, tb, m, n, k, a.data(), b.data(), by_matmul.data(), accumulate);
        check_close(by_matmul, want, "matmul");
      }
  CHECK(sgemm.choices().empty());  // told: nothing timed
  CHECK(matmul.choices().empty());
  const std::vector<std::string> timed = dnn.kernel_choices();
  REQUIRE(timed.size() == 8);
  CHECK(timed[0].starts_with("matrix product [13x33] by [33x70]: "));
  CHECK(timed[1].starts_with("matrix product [13x33] by [33x70], added in: "));
  CHECK(timed[7].starts_with("matrix product [33x13] transposed by [70x33] transposed, added in: "));
  for (const std::string& line : timed) {
    CAPTURE(line);
    CHECK((line.find(": sgemm, ") != std::string::npos) != (line.find(": matmul, ") != std::string::npos));
    CHECK(line.ends_with(" us, timed here"));
  }
  std::vector<float> c = c0;
  kernels::gemm(dnn, false, false, m, n, 0, a.data(), b.data(), c.data(), true);
  CHECK(c == c0);
  kernels::gemm(dnn, false, false, m, n, 0, a.data(), b.data(), c.data(), false);
  CHECK(std::all_of(c.begin(), c.end(), [](float v) { return v == 0.0f; }));
}

#endif
