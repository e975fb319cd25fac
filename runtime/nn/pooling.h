#pragma once
// Max and average pooling of [N,C,H,W] with a square window (kernels/pooling.h). Max pooling
// also takes blocked inputs (runtime/nn/layer.h) and pools them in their layout
// (kernels/blocked.h: our channel-blocked kernels, or oneDNN's pooling); its plain inputs go to
// the plain kernels.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class MaxPool2D : public Layer {
 public:
  MaxPool2D(int kernel, int stride, int padding = 0) : kernel_(kernel), stride_(stride), padding_(padding) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;
  bool takes_blocked() const override { return on_onednn(); }
  void allow_blocked_output(bool allowed) override { blocked_output_ = allowed; }
  // The input is a fused ReLU's output (a Conv2D's fuse_following() says so), whose gradient
  // this pooling's backward pass applies; the input then comes blocked.
  void take_relu_gradient(bool take) { relu_gradient_ = take; }

 private:
  int kernel_, stride_, padding_;
  bool blocked_output_ = false, relu_gradient_ = false;
  std::vector<int64_t> input_shape_;
  std::optional<kernels::Layout> input_layout_;  // a blocked input's, pooled by kernels/blocked.h
  Storage argmax_;  // the winners: int32 input index of each output, or kernels/blocked.h's workspace
};

// Average pooling; kernel 0 means global (the whole plane).
class AvgPool2D : public Layer {
 public:
  AvgPool2D(int kernel, int stride) : kernel_(kernel), stride_(stride) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 private:
  int kernel_, stride_;
  std::vector<int64_t> input_shape_;
  int used_kernel_ = 0, used_stride_ = 0;
};

}  // namespace paddle::runtime
