#pragma once
// Linear: y = x W + b, [N,in] -> [N,out], on the GEMM kernels of kernels/gemm.h.

#include <cstdint>
#include <random>
#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Linear : public Layer {
 public:
  Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name);
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  std::string describe() const override;

 private:
  int64_t in_, out_;
  Parameter weight_;  // [in, out]
  Parameter bias_;    // [out]
  Tensor input_;
};

}  // namespace paddle::runtime
