#include "runtime/core/storage.h"

#include <fmt/format.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

#include "kernels/device_memory.h"

namespace paddle::runtime {
namespace {

constexpr std::align_val_t kHostAlignment{64};
using kernels::CopyKind;

CopyKind copy_kind(const Device& from, const Device& to) {
  if (from.is_cuda() && to.is_cuda()) return CopyKind::kDeviceToDevice;
  return from.is_cuda() ? CopyKind::kDeviceToHost : CopyKind::kHostToDevice;
}

}  // namespace

Storage::Storage(size_t bytes, const Device& device) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  pointer_ = device.is_cuda() ? kernels::cuda_allocate(bytes, device.index) : ::operator new(bytes, kHostAlignment);
}

Storage Storage::borrowed(void* pointer, size_t bytes, const Device& device) {
  Storage block;
  block.pointer_ = pointer;
  block.bytes_ = bytes;
  block.device_ = device;
  block.owned_ = false;
  return block;
}

Storage::~Storage() { release(); }

void Storage::release() noexcept {
  if (pointer_ == nullptr) return;
  if (!owned_) {
    pointer_ = nullptr;
    return;
  }
  if (device_.is_cuda()) kernels::cuda_release(pointer_);
  else ::operator delete(pointer_, kHostAlignment);
  pointer_ = nullptr;
}

Storage::Storage(const Storage& other) : Storage(other.bytes_, other.device_) { copy_from(other); }

Storage& Storage::operator=(const Storage& other) {
  if (this == &other) return *this;
  if (bytes_ != other.bytes_ || !(device_ == other.device_)) *this = Storage(other.bytes_, other.device_);
  copy_from(other);
  return *this;
}

Storage::Storage(Storage&& other) noexcept
    : pointer_(std::exchange(other.pointer_, nullptr)), bytes_(std::exchange(other.bytes_, 0)), device_(other.device_),
      owned_(std::exchange(other.owned_, true)) {}

Storage& Storage::operator=(Storage&& other) noexcept {
  if (this == &other) return *this;
  release();
  pointer_ = std::exchange(other.pointer_, nullptr);
  bytes_ = std::exchange(other.bytes_, 0);
  device_ = other.device_;
  owned_ = std::exchange(other.owned_, true);
  return *this;
}

void Storage::copy_from(const Storage& source) {
  if (source.bytes_ != bytes_)
    throw std::invalid_argument(fmt::format("copy of {} bytes into a block of {}", source.bytes_, bytes_));
  if (bytes_ == 0) return;
  if (!device_.is_cuda() && !source.device_.is_cuda()) std::memcpy(pointer_, source.pointer_, bytes_);
  else kernels::cuda_copy(pointer_, source.pointer_, bytes_, copy_kind(source.device_, device_));
}

void Storage::copy_from_host(const void* source, size_t bytes) {
  if (bytes != bytes_) throw std::invalid_argument(fmt::format("copy of {} bytes into a block of {}", bytes, bytes_));
  if (bytes_ == 0) return;
  if (device_.is_cuda()) kernels::cuda_copy(pointer_, source, bytes_, CopyKind::kHostToDevice);
  else std::memcpy(pointer_, source, bytes_);
}

void Storage::copy_to_host(void* destination, size_t bytes) const {
  if (bytes != bytes_) throw std::invalid_argument(fmt::format("copy of a block of {} bytes into {}", bytes_, bytes));
  if (bytes_ == 0) return;
  if (device_.is_cuda()) kernels::cuda_copy(destination, pointer_, bytes_, CopyKind::kDeviceToHost);
  else std::memcpy(destination, pointer_, bytes_);
}

void Storage::zero() {
  if (bytes_ == 0) return;
  if (device_.is_cuda()) kernels::cuda_zero(pointer_, bytes_);
  else std::memset(pointer_, 0, bytes_);
}

}  // namespace paddle::runtime
