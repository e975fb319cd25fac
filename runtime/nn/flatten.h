#pragma once
// Flatten: [N,...] -> [N,rest], a reshape that moves no data.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Flatten : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "Flatten"; }

 private:
  std::vector<int64_t> input_shape_;
};

}  // namespace paddle::runtime
