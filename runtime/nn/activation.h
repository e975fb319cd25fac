#pragma once
// ReLU: y = max(0, x) element-wise (kernels/activation.h). It takes blocked inputs (its output
// in the same layout) and can be folded into the convolution before it, which then applies it in
// its own pass (runtime/nn/layer.h); folded, it passes its input on and its gradient back.

#include <optional>
#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class ReLU : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "ReLU"; }

  bool takes_blocked() const override { return on_onednn(); }
  void allow_blocked_output(bool allowed) override { blocked_output_ = allowed; }
  // The layer before applies max(0, .) itself (its fuse_following() says so).
  void fold_into_previous(bool folded) { folded_ = folded; }

 private:
  bool blocked_output_ = false, folded_ = false;
  Tensor output_;                                  // in the input's layout
  std::optional<kernels::Layout> reordered_from_;  // a blocked input's layout, where the output went plain
};

}  // namespace paddle::runtime
