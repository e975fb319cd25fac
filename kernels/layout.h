#pragma once
// Layout: how a 4-D float activation [N,C,H,W] lies in host memory when it is not plain
// row-major. oneDNN's convolutions run fastest on blocked layouts it picks per CPU and shape
// (nChw16c: 16 channels innermost, the channels padded to a multiple of 16 with zeros), so a
// chain of convolution, ReLU and max pooling keeps its activations in the layout oneDNN chose and
// reorders once where the chain starts and once where it ends (runtime/nn/layer.h says how layers
// agree on that). A tensor without a Layout is plain. Only the ops of kernels/blocked.h take
// blocked tensors, and the element-wise kernels, which may run over the padding too (ReLU).
//
// What a layout is lives in kernels/onednn (a oneDNN memory descriptor); everywhere else it is
// opaque: its size in bytes, padding included, and its name.

#include <cstddef>
#include <memory>
#include <string>

namespace paddle::kernels {

namespace onednn {
struct MemoryDesc;
}

class Layout {
 public:
  Layout(std::shared_ptr<const onednn::MemoryDesc> desc, size_t bytes, std::string name)
      : desc_(std::move(desc)), bytes_(bytes), name_(std::move(name)) {}

  size_t bytes() const { return bytes_; }
  // The dims and the blocking, as "64x16x28x28 nChw16c": equal names mean equal layouts.
  const std::string& name() const { return name_; }
  const onednn::MemoryDesc& desc() const { return *desc_; }
  bool operator==(const Layout& other) const { return name_ == other.name_; }

 private:
  std::shared_ptr<const onednn::MemoryDesc> desc_;
  size_t bytes_;
  std::string name_;
};

}  // namespace paddle::kernels
