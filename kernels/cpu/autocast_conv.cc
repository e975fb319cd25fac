#include "kernels/autocast_conv.h"

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace paddle::kernels::cpu {
namespace {

float round_to(HalfType half, float x) {
  return half == HalfType::kFloat16 ? static_cast<float>(Eigen::half(x)) : static_cast<float>(Eigen::bfloat16(x));
}

std::vector<float> rounded(HalfType half, const float* x, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = round_to(half, x[i]);
  return out;
}

void round_in_place(HalfType half, float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = round_to(half, x[i]);
}

size_t input_count(const ConvShape& s, int batch) {
  return static_cast<size_t>(batch) * s.channels * s.height * s.width;
}
size_t output_count(const ConvShape& s, int batch, int out_channels) {
  return static_cast<size_t>(batch) * out_channels * s.out_height() * s.out_width();
}
size_t filter_count(const ConvShape& s, int out_channels) {
  return static_cast<size_t>(out_channels) * s.channels * s.kernel * s.kernel;
}

}  // namespace

void autocast_conv2d_forward(HalfType half, const ConvShape& s, int batch, int out_channels, const float* x,
                             const float* w, float* y) {
  const auto x16 = rounded(half, x, input_count(s, batch));
  const auto w16 = rounded(half, w, filter_count(s, out_channels));
  conv2d_forward(s, batch, out_channels, x16.data(), w16.data(), y);
  round_in_place(half, y, output_count(s, batch, out_channels));
}

void autocast_conv2d_backward_data(HalfType half, const ConvShape& s, int batch, int out_channels, const float* w,
                                   const float* dy, float* dx) {
  const auto w16 = rounded(half, w, filter_count(s, out_channels));
  const auto dy16 = rounded(half, dy, output_count(s, batch, out_channels));
  conv2d_backward_data(s, batch, out_channels, w16.data(), dy16.data(), dx);
  round_in_place(half, dx, input_count(s, batch));
}

void autocast_conv2d_backward_filter(HalfType half, const ConvShape& s, int batch, int out_channels, const float* x,
                                     const float* dy, float* dw) {
  const auto x16 = rounded(half, x, input_count(s, batch));
  const auto dy16 = rounded(half, dy, output_count(s, batch, out_channels));
  // The 16-bit gradient of this batch alone, then added to the float32 one.
  std::vector<float> batch_dw(filter_count(s, out_channels), 0.0f);
  conv2d_backward_filter(s, batch, out_channels, x16.data(), dy16.data(), batch_dw.data());
  for (size_t i = 0; i < batch_dw.size(); ++i) dw[i] += round_to(half, batch_dw[i]);
}

}  // namespace paddle::kernels::cpu
