#pragma once
// Conv2D: 2-D convolution of [N,C,H,W] with a square kernel, stride and zero padding, and an
// optional per-channel bias (kernels/conv.h). Under mixed precision (the execution's
// conv_autocast) its three convolutions round their inputs and results to 16 bits and accumulate
// in float32 (kernels/autocast_conv.h); the weights and gradients stay float32.
//
// On oneDNN it is a link of a blocked chain (runtime/nn/layer.h): it takes blocked inputs, keeps
// its output in the layout oneDNN chose where its consumer takes that, and applies its bias and a
// following ReLU in the convolution's own pass (kernels/blocked.h).

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/autocast_gemm.h"
#include "kernels/conv.h"
#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Conv2D : public Layer {
 public:
  Conv2D(int64_t in_channels, int64_t out_channels, int kernel, int stride, int padding, std::mt19937& rng,
         const std::string& name, bool with_bias = true);
  // The floats its parameters hold (filters and the bias), without building it.
  static size_t parameter_count(int64_t in_channels, int64_t out_channels, int kernel, bool with_bias = true) {
    return static_cast<size_t>(in_channels * out_channels * kernel * kernel + (with_bias ? out_channels : 0));
  }
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;
  bool takes_blocked() const override { return on_onednn() && !autocast(); }
  void allow_blocked_output(bool allowed) override { blocked_output_ = allowed; }
  void fuse_following(std::span<Layer* const> following) override;
  void skip_input_gradient(bool skip) override { skip_input_gradient_ = skip; }

 private:
  std::optional<kernels::DType> autocast() const;  // the execution's conv_autocast, if any

  int64_t in_channels_, out_channels_;
  int kernel_, stride_, padding_;
  bool with_bias_;
  Parameter weight_;  // [out, in*k*k]
  Parameter bias_;    // [out]
  Tensor input_;             // for the filter gradient
  kernels::ConvSaved saved_;  // a training forward's columns (CPU), for the filter gradient
  bool blocked_output_ = false;
  bool fused_relu_ = false;   // the next layer is a ReLU this convolution applies
  bool pool_takes_relu_gradient_ = false;  // and a max pooling after it applies the ReLU's gradient
  bool ran_fused_ = false;    // the last forward ran on kernels/blocked.h
  bool skip_input_gradient_ = false;
  Tensor output_;             // that forward's output, for a fused ReLU's gradient
};

}  // namespace paddle::runtime
