#include "kernels/autocast_conv.h"

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/half.h"

namespace paddle::kernels::cpu {
namespace {

std::vector<float> rounded(DType half, const float* x, size_t n) { return rounded_through_half(half, {x, n}); }

void round_in_place(DType half, float* x, size_t n) { round_through_half(half, std::span<float>(x, n)); }

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

void autocast_conv2d_forward(DType half, const ConvShape& s, int batch, int out_channels, const float* x,
                             const float* w, float* y) {
  const auto x16 = rounded(half, x, input_count(s, batch));
  const auto w16 = rounded(half, w, filter_count(s, out_channels));
  conv2d_forward(s, batch, out_channels, x16.data(), w16.data(), y);
  round_in_place(half, y, output_count(s, batch, out_channels));
}

void autocast_conv2d_backward_data(DType half, const ConvShape& s, int batch, int out_channels, const float* w,
                                   const float* dy, float* dx) {
  const auto w16 = rounded(half, w, filter_count(s, out_channels));
  const auto dy16 = rounded(half, dy, output_count(s, batch, out_channels));
  conv2d_backward_data(s, batch, out_channels, w16.data(), dy16.data(), dx);
  round_in_place(half, dx, input_count(s, batch));
}

void autocast_conv2d_backward_filter(DType half, const ConvShape& s, int batch, int out_channels, const float* x,
                                     const float* dy, float* dw) {
  const auto x16 = rounded(half, x, input_count(s, batch));
  const auto dy16 = rounded(half, dy, output_count(s, batch, out_channels));
  // The 16-bit gradient of this batch alone, then added to the float32 one.
  std::vector<float> batch_dw(filter_count(s, out_channels), 0.0f);
  conv2d_backward_filter(s, batch, out_channels, x16.data(), dy16.data(), batch_dw.data());
  round_through_half(half, batch_dw);
  for (size_t i = 0; i < batch_dw.size(); ++i) dw[i] += batch_dw[i];
}

}  // namespace paddle::kernels::cpu
