#pragma once
// Linear: y = x W + b, [N,in] -> [N,out], on the GEMM kernels of kernels/gemm.h; under mixed
// precision (the execution's matmul_autocast) its three GEMMs, forward and backward, round their
// operands to 16 bits and accumulate in float32 (kernels/autocast_gemm.h).

#include <cstdint>
#include <random>
#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Linear : public Layer {
 public:
  Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name);
  // The floats its parameters hold (weight and bias), without building it.
  static size_t parameter_count(int64_t in, int64_t out) { return static_cast<size_t>(in * out + out); }
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  std::string describe() const override;

  void skip_input_gradient(bool skip) override { skip_input_gradient_ = skip; }

 private:
  // C[m,n] (+)= op(A) op(B), autocast when the execution says so.
  void matmul(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
              bool accumulate) const;

  int64_t in_, out_;
  Parameter weight_;  // [in, out]
  Parameter bias_;    // [out]
  Tensor input_;
  bool skip_input_gradient_ = false;
};

}  // namespace paddle::runtime
