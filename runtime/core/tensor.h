#pragma once
// Tensor: a dense row-major array with a shape, of float32 (activations, parameters), int64
// (ids, labels) or a 16-bit float (float16, bfloat16: mixed precision), in host memory or on a
// CUDA device. Value semantics: copying copies the elements on the same device; to() copies them
// to another device; share() gives a copy that costs nothing until one of the two is written
// (copy on write), which is how layers keep their activations for the backward pass.
//
// ptr()/id_ptr() give the raw elements wherever they live (for kernels); values()/ids() are
// host-only views and throw for a tensor on a device, so host code never reads device memory
// by mistake. A tensor in a oneDNN blocked layout (kernels/layout.h, made by the layers of a
// blocked conv/ReLU/pool chain) has no host view either, only ptr() for its kernels. A 16-bit tensor has no typed view on the host: to_vector() widens it to float32
// and assign() rounds float32 into it (kernels/half.h), so checkpoints read and write every
// floating-point tensor as float32.

#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/layout.h"
#include "runtime/core/dtype.h"
#include "runtime/core/storage.h"

namespace paddle::runtime {

class Tensor {
 public:
  std::vector<int64_t> shape;  // reshaping is allowed when the element count stays the same

  Tensor() = default;
  Tensor(const Tensor& other);  // copies the elements
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  // float32 filled with `fill`.
  explicit Tensor(std::vector<int64_t> dims, float fill = 0.0f, const Device& device = Device::cpu());
  // Zeros of `dtype`.
  Tensor(std::vector<int64_t> dims, DType dtype, const Device& device);
  // float32 whose elements are left as the allocator gave them: for a kernel's output that the
  // kernel overwrites, which then costs no zero-filling pass.
  static Tensor uninitialized(std::vector<int64_t> dims, const Device& device);
  static Tensor from_values(std::vector<int64_t> dims, std::span<const float> values,
                            const Device& device = Device::cpu());
  static Tensor from_values(std::vector<int64_t> dims, const std::vector<float>& values,
                            const Device& device = Device::cpu()) {
    return from_values(std::move(dims), std::span<const float>(values), device);
  }
  static Tensor from_ids(std::vector<int64_t> dims, std::span<const int64_t> ids, const Device& device = Device::cpu());
  // float32 elements at `data`, which the caller keeps alive for the tensor's life: written in
  // place, never freed (a gradient kept in its allreduce bucket). A copy of the tensor, or a write
  // after share(), moves it to a block of its own, which ptr() then shows.
  static Tensor over(std::vector<int64_t> dims, float* data, const Device& device = Device::cpu());
  // float32 [N,C,H,W] on the host in a oneDNN blocked layout, uninitialised (the kernel that
  // writes it fills the padding too).
  static Tensor blocked(std::vector<int64_t> dims, kernels::Layout layout);

  // These elements without a copy: the two tensors share one block until either is written
  // through a non-const accessor, which copies it first. So a pointer from the non-const ptr()
  // is for writing only until the tensor is next shared.
  Tensor share() const;
  // Null for a plain (row-major) tensor.
  const kernels::Layout* layout() const { return layout_ ? &*layout_ : nullptr; }
  bool is_plain() const { return !layout_.has_value(); }

  static int64_t count(const std::vector<int64_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
  DType dtype() const { return dtype_; }
  const Device& device() const { return storage().device(); }
  bool on_cuda() const { return storage().device().is_cuda(); }
  int64_t numel() const {
    if (!storage_) return 0;
    return layout_ ? count(shape) : static_cast<int64_t>(storage_->bytes() / element_size(dtype_));
  }
  int64_t dim(size_t i) const { return shape.at(i); }

  float* ptr();
  const float* ptr() const;
  int64_t* id_ptr();
  const int64_t* id_ptr() const;
  std::span<float> values();
  std::span<const float> values() const;
  std::span<const int64_t> ids() const;

  // The floating-point elements as a float32 host vector, from any device (16-bit ones widened).
  std::vector<float> to_vector() const;
  // Overwrites the floating-point elements (same count) from float32 host memory, on any device
  // (rounded to nearest even for a 16-bit tensor).
  void assign(std::span<const float> values);
  // A copy as `dtype` (float32, float16 or bfloat16) on the same device, through the host: for
  // checkpoints and tests, not for a training step.
  Tensor cast(DType dtype) const;
  // The raw bytes wherever they live, of any dtype (for kernels taking 16-bit elements).
  void* data() { return writable().get(); }
  const void* data() const { return storage().get(); }
  Tensor to(const Device& device) const;
  void zero() { writable().zero(); }
  std::string shape_string() const;
  std::string describe() const;  // "float32[2,3] on gpu:0"

 private:
  void require(DType dtype, bool host, const char* what) const;
  void require_floating(const char* what) const;
  const Storage& storage() const;  // an empty one before any
  Storage& writable();             // the block, copied first where it is shared

  DType dtype_ = DType::kFloat32;
  // Shared only between share()d tensors. Layers share activations, never parameters or their
  // gradients, which the data-parallel communication thread writes through: the copy-on-write
  // test (use_count) is only sound where one thread holds every copy.
  std::shared_ptr<Storage> storage_;
  std::optional<kernels::Layout> layout_;
};

// `t` itself when it is in host memory, else a host copy of it kept in `copy`.
const Tensor& on_host(const Tensor& t, Tensor& copy);

}  // namespace paddle::runtime
