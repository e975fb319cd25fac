#pragma once
// The ops of a convolution -> ReLU -> max-pooling chain whose activations stay in the blocked
// layouts oneDNN picks for this CPU (kernels/layout.h), so that each op does not reorder its
// input in and its output out again:
// - a convolution with its bias and a following ReLU fused into the same pass (oneDNN post-op),
//   whose backward pass takes ReLU's gradient, the bias and filter gradients and the data
//   gradient from the one reordered dy;
// - max pooling on the blocked layout itself, which can take over a fused ReLU's gradient;
// - the reorders into and out of a layout, for where the chain starts and ends.
// Each op takes its input in whatever layout it arrives (a null Layout is plain NCHW), returns
// its output in oneDNN's choice or plain as asked, and returns an input gradient in the input's
// own layout. Parameters and their gradients are always plain. The plain CPU halves (conv.h,
// activation.h, pooling.h) are the reference these are tested against.
//
// oneDNN only: the runtime uses these where Context::uses_onednn().

#include <cstddef>
#include <optional>

#include "kernels/context.h"
#include "kernels/conv.h"
#include "kernels/layout.h"

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
namespace paddle::kernels::onednn {

struct FusedConv {
  ConvShape shape;
  int batch, out_channels;
  bool bias;            // bias[out_channels] added in the convolution's pass
  bool relu;            // and then max(0, .)
  bool blocked_output;  // y in the layout oneDNN chose; plain NCHW otherwise
  bool dy_masked;       // with relu: the max pooling after it already applied ReLU's gradient to dy
};

// The layout of y: oneDNN's choice, or nullopt (plain) when !blocked_output.
std::optional<Layout> fused_conv_output_layout(OneDnn& dnn, const FusedConv& c, const Layout* x_layout);
// y = relu?(conv(x, w) + bias?), overwritten; w is [out, C, k, k] plain.
void fused_conv_forward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* w,
                        const float* bias, float* y);
// From dy (in y's layout) and the forward's y (for ReLU's gradient; unread, and may be null,
// without c.relu or with c.dy_masked): dw += filter gradient and db += bias gradient (when
// c.bias; both skipped where dw is null, and then x is unread), dx = data gradient in x's layout
// (skipped where dx is null, and then w is unread).
void fused_conv_backward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* y,
                         const float* dy, const float* w, float* dw, float* db, float* dx);

struct BlockedMaxPool {
  int batch, channels, height, width;
  int kernel, stride, padding;
  bool blocked_output;  // y in x's layout; plain NCHW otherwise
  // x is a ReLU's output and the backward pass applies ReLU's gradient as well: a window whose
  // maximum is 0 passes no gradient (for max pooling that is the mask at the winner).
  bool relu_gradient;
};

// The layout of y: x's own, or nullopt (plain) when !blocked_output.
std::optional<Layout> max_pool_output_layout(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout);
// What the backward pass needs from the forward (the winning positions), in bytes.
size_t max_pool_workspace_bytes(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout);
void max_pool_forward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* x, float* y,
                      void* workspace);
// dx (in x's layout) = the gradient of dy (in y's layout) through the recorded maxima; overwritten.
void max_pool_backward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* dy,
                       const void* workspace, float* dx);

// y (plain NCHW) = x (in `layout`), and back.
void to_plain(OneDnn& dnn, const Layout& layout, const float* x, float* y);
void from_plain(OneDnn& dnn, const Layout& layout, const float* x, float* y);

}  // namespace paddle::kernels::onednn
#endif
