#include "kernels/autocast_conv.h"

#include <cstddef>

#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/half_cast.h"
#include "kernels/cuda/internal.h"

// The float32 graph is NCHW (filters KCRS); the 16-bit copies cuDNN sees are NHWC (filters KRSC),
// the layout its tensor-core kernels take without transposing, and the cast kernels transpose on
// the way in and out.
namespace paddle::kernels::cuda {
namespace {

cudnnDataType_t cudnn_type(DType half) { return half == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16; }

// An [n][c][plane] float32 tensor's extents.
struct Extents {
  int n, c, plane;
  size_t count() const { return static_cast<size_t>(n) * c * plane; }
};

Extents input_of(const ConvShape& s, int batch) { return {batch, s.channels, s.height * s.width}; }
Extents output_of(const ConvShape& s, int batch, int out_channels) {
  return {batch, out_channels, s.out_height() * s.out_width()};
}
Extents filter_of(const ConvShape& s, int out_channels) { return {out_channels, s.channels, s.kernel * s.kernel}; }

// A 16-bit NHWC buffer for a float32 NCHW tensor of extents e, filled from x when given.
class HalfNhwc {
 public:
  HalfNhwc(DType half, Extents e, cudaStream_t stream, const float* x = nullptr)
      : half_(half), e_(e), stream_(stream), scratch_(e.count(), stream) {
    if (x != nullptr) round_into_nhwc(half, x, scratch_.get(), e.n, e.c, e.plane, stream);
  }
  void* get() { return scratch_.get(); }
  // y (NCHW float32) = this, or y += this.
  void widen_to_nchw(float* y, bool accumulate) {
    widen_from_nhwc(half_, scratch_.get(), y, e_.n, e_.c, e_.plane, accumulate, stream_);
  }

 private:
  DType half_;
  Extents e_;
  cudaStream_t stream_;
  HalfScratch scratch_;
};

}  // namespace

void autocast_conv2d_forward(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                             const float* x, const float* w, float* y) {
  cudaStream_t stream = h.impl().stream;
  HalfNhwc x16(half, input_of(s, batch), stream, x), w16(half, filter_of(s, out_channels), stream, w);
  HalfNhwc y16(half, output_of(s, batch, out_channels), stream);
  cudnn_conv_forward(h, cudnn_type(half), CUDNN_TENSOR_NHWC, s, batch, out_channels, x16.get(), w16.get(), y16.get());
  y16.widen_to_nchw(y, false);
}

void autocast_conv2d_backward_data(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                                   const float* w, const float* dy, float* dx) {
  cudaStream_t stream = h.impl().stream;
  HalfNhwc w16(half, filter_of(s, out_channels), stream, w), dy16(half, output_of(s, batch, out_channels), stream, dy);
  HalfNhwc dx16(half, input_of(s, batch), stream);
  cudnn_conv_backward_data(h, cudnn_type(half), CUDNN_TENSOR_NHWC, s, batch, out_channels, w16.get(), dy16.get(),
                           dx16.get());
  dx16.widen_to_nchw(dx, false);
}

void autocast_conv2d_backward_filter(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                                     const float* x, const float* dy, float* dw) {
  cudaStream_t stream = h.impl().stream;
  HalfNhwc x16(half, input_of(s, batch), stream, x), dy16(half, output_of(s, batch, out_channels), stream, dy);
  // This batch's gradient in 16 bits, then added to the float32 one.
  HalfNhwc dw16(half, filter_of(s, out_channels), stream);
  cudnn_conv_backward_filter(h, cudnn_type(half), CUDNN_TENSOR_NHWC, s, batch, out_channels, x16.get(), dy16.get(),
                             dw16.get(), false);
  dw16.widen_to_nchw(dw, true);
}

}  // namespace paddle::kernels::cuda
