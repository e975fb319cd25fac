#pragma once
// Max and average pooling of [N,C,H,W] with a square window (kernels/pooling.h).

#include <cstdint>
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

 private:
  int kernel_, stride_, padding_;
  std::vector<int64_t> input_shape_;
  Storage argmax_;  // int32 winning input index of each output, on the input's device
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
