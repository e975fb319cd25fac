#include "kernels/conv.h"

#include "kernels/blocked.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

// A plain convolution is the fused one with nothing fused: plain x and y, no bias, no ReLU.
FusedConv plain(const ConvShape& s, int batch, int out_channels) {
  return FusedConv{s, batch, out_channels, false, false, false, false};
}

}  // namespace

void conv2d_forward(OneDnn& dnn, const ConvShape& s, int batch, int out_channels, const float* x, const float* w,
                    float* y) {
  fused_conv_forward(dnn, plain(s, batch, out_channels), nullptr, x, w, nullptr, y);
}

void conv2d_backward_data(OneDnn& dnn, const ConvShape& s, int batch, int out_channels, const float* w,
                          const float* dy, float* dx) {
  fused_conv_backward(dnn, plain(s, batch, out_channels), nullptr, nullptr, nullptr, dy, w, nullptr, nullptr, dx);
}

void conv2d_backward_filter(OneDnn& dnn, const ConvShape& s, int batch, int out_channels, const float* x,
                            const float* dy, float* dw) {
  fused_conv_backward(dnn, plain(s, batch, out_channels), nullptr, x, nullptr, dy, nullptr, dw, nullptr, nullptr);
}

}  // namespace paddle::kernels::onednn
