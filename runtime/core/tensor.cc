#include "runtime/core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/half.h"

namespace paddle::runtime {
Tensor::Tensor(std::vector<int64_t> dims, float fill, const Device& device)
    : shape(std::move(dims)),
      storage_(std::make_shared<Storage>(static_cast<size_t>(count(shape)) * sizeof(float), device)) {
  if (!device.is_cuda()) {
    std::fill_n(static_cast<float*>(storage_->get()), numel(), fill);
  } else if (fill == 0.0f) {
    storage_->zero();
  } else {
    std::vector<float> host(static_cast<size_t>(numel()), fill);
    storage_->copy_from_host(host.data(), storage_->bytes());
  }
}

Tensor::Tensor(std::vector<int64_t> dims, DType dtype, const Device& device)
    : shape(std::move(dims)), dtype_(dtype),
      storage_(std::make_shared<Storage>(static_cast<size_t>(count(shape)) * element_size(dtype), device)) {
  storage_->zero();
}

Tensor::Tensor(const Tensor& other)
    : shape(other.shape), dtype_(other.dtype_),
      storage_(other.storage_ ? std::make_shared<Storage>(*other.storage_) : nullptr), layout_(other.layout_) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor Tensor::share() const {
  Tensor t;
  t.shape = shape;
  t.dtype_ = dtype_;
  t.storage_ = storage_;
  t.layout_ = layout_;
  return t;
}

const Storage& Tensor::storage() const {
  static const Storage none;
  return storage_ ? *storage_ : none;
}

Storage& Tensor::writable() {
  if (!storage_) storage_ = std::make_shared<Storage>();
  else if (storage_.use_count() > 1) storage_ = std::make_shared<Storage>(*storage_);
  return *storage_;
}

Tensor Tensor::uninitialized(std::vector<int64_t> dims, const Device& device) {
  Tensor t;
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(count(dims)) * sizeof(float), device);
  t.shape = std::move(dims);
  return t;
}

Tensor Tensor::over(std::vector<int64_t> dims, float* data, const Device& device) {
  Tensor t;
  t.storage_ = std::make_shared<Storage>(Storage::borrowed(data, static_cast<size_t>(count(dims)) * sizeof(float), device));
  t.shape = std::move(dims);
  return t;
}

Tensor Tensor::blocked(std::vector<int64_t> dims, kernels::Layout layout) {
  if (dims.size() != 4) throw std::logic_error(fmt::format("a blocked layout {} for a tensor of rank {}", layout.name(), dims.size()));
  Tensor t;
  t.storage_ = std::make_shared<Storage>(layout.bytes(), Device::cpu());
  t.shape = std::move(dims);
  t.layout_ = std::move(layout);
  return t;
}

Tensor Tensor::from_values(std::vector<int64_t> dims, std::span<const float> values, const Device& device) {
  Tensor t(std::move(dims), DType::kFloat32, Device::cpu());
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::invalid_argument(fmt::format("{} values for a tensor of shape {}", values.size(), t.shape_string()));
  std::copy(values.begin(), values.end(), t.ptr());
  return device.is_cuda() ? t.to(device) : t;
}

Tensor Tensor::from_ids(std::vector<int64_t> dims, std::span<const int64_t> ids, const Device& device) {
  Tensor t(std::move(dims), DType::kInt64, device);
  if (static_cast<int64_t>(ids.size()) != t.numel())
    throw std::invalid_argument(fmt::format("{} ids for a tensor of shape {}", ids.size(), t.shape_string()));
  t.storage_->copy_from_host(ids.data(), ids.size_bytes());
  return t;
}

void Tensor::require(DType dtype, bool host, const char* what) const {
  if (dtype_ != dtype)
    throw std::logic_error(fmt::format("{} of a {} tensor {}", what, dtype_name(dtype_), shape_string()));
  if (host && on_cuda())
    throw std::logic_error(fmt::format("{} on the host of a tensor {}; copy it with to(cpu) first", what, describe()));
  if (host && layout_)
    throw std::logic_error(fmt::format("{} of a tensor {} in oneDNN's blocked layout {}; only its kernels read it", what,
                                       shape_string(), layout_->name()));
}

float* Tensor::ptr() {
  require(DType::kFloat32, false, "float32 elements");
  return static_cast<float*>(writable().get());
}
const float* Tensor::ptr() const {
  require(DType::kFloat32, false, "float32 elements");
  return static_cast<const float*>(storage().get());
}
int64_t* Tensor::id_ptr() {
  require(DType::kInt64, false, "int64 elements");
  return static_cast<int64_t*>(writable().get());
}
const int64_t* Tensor::id_ptr() const {
  require(DType::kInt64, false, "int64 elements");
  return static_cast<const int64_t*>(storage().get());
}

std::span<float> Tensor::values() {
  require(DType::kFloat32, true, "values");
  return {static_cast<float*>(writable().get()), static_cast<size_t>(numel())};
}
std::span<const float> Tensor::values() const {
  require(DType::kFloat32, true, "values");
  return {static_cast<const float*>(storage().get()), static_cast<size_t>(numel())};
}
std::span<const int64_t> Tensor::ids() const {
  require(DType::kInt64, true, "ids");
  return {static_cast<const int64_t*>(storage().get()), static_cast<size_t>(numel())};
}

void Tensor::require_floating(const char* what) const {
  if (dtype_ == DType::kInt64) throw std::logic_error(fmt::format("{} of an int64 tensor {}", what, shape_string()));
  if (layout_)
    throw std::logic_error(fmt::format("{} of a tensor {} in oneDNN's blocked layout {}; only its kernels read it", what,
                                       shape_string(), layout_->name()));
}

std::vector<float> Tensor::to_vector() const {
  require_floating("to_vector");
  std::vector<float> host(static_cast<size_t>(numel()));
  if (dtype_ == DType::kFloat32) {
    storage().copy_to_host(host.data(), host.size() * sizeof(float));
  } else {
    std::vector<uint16_t> bits(host.size());
    storage().copy_to_host(bits.data(), bits.size() * sizeof(uint16_t));
    kernels::widen_from_half(dtype_, bits, host);
  }
  return host;
}

void Tensor::assign(std::span<const float> values) {
  require_floating("assign");
  if (static_cast<int64_t>(values.size()) != numel())
    throw std::invalid_argument(fmt::format("{} values for the tensor {}", values.size(), describe()));
  if (dtype_ == DType::kFloat32) {
    writable().copy_from_host(values.data(), values.size_bytes());
  } else {
    std::vector<uint16_t> bits(values.size());
    kernels::narrow_to_half(dtype_, values, bits);
    writable().copy_from_host(bits.data(), bits.size() * sizeof(uint16_t));
  }
}

Tensor Tensor::cast(DType dtype) const {
  require_floating("cast");
  if (dtype == DType::kInt64) throw std::logic_error(fmt::format("cast of {} to int64", describe()));
  Tensor t(shape, dtype, device());
  t.assign(to_vector());
  return t;
}

Tensor Tensor::to(const Device& device) const {
  if (device == this->device()) return *this;
  if (layout_)
    throw std::logic_error(fmt::format("a tensor {} in oneDNN's blocked layout {} moved to {}", shape_string(),
                                       layout_->name(), device.to_string()));
  Tensor t;
  t.shape = shape;
  t.dtype_ = dtype_;
  t.storage_ = std::make_shared<Storage>(storage().bytes(), device);
  t.storage_->copy_from(storage());
  return t;
}

std::string Tensor::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string Tensor::describe() const {
  return fmt::format("{}{} on {}{}", dtype_name(dtype_), shape_string(), device().to_string(),
                     layout_ ? " in layout " + layout_->name() : std::string());
}

const Tensor& on_host(const Tensor& t, Tensor& copy) {
  if (!t.on_cuda()) return t;
  copy = t.to(Device::cpu());
  return copy;
}

}  // namespace paddle::runtime
