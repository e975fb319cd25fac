#pragma once
// Storage: one owned block of memory on a device, host RAM or a CUDA device. It has value
// semantics like std::vector: copying copies the bytes (on the same device), moving hands the
// block over. Host blocks are 64-byte aligned for vectorised kernels.

#include <cstddef>

#include "runtime/core/device.h"

namespace paddle::runtime {

class Storage {
 public:
  Storage() = default;
  Storage(size_t bytes, const Device& device);  // uninitialised
  // The `bytes` at `pointer`, which the caller keeps alive for this block's life: written in place,
  // never freed. A copy of it owns its own bytes.
  static Storage borrowed(void* pointer, size_t bytes, const Device& device);
  ~Storage();
  Storage(const Storage& other);
  Storage& operator=(const Storage& other);
  Storage(Storage&& other) noexcept;
  Storage& operator=(Storage&& other) noexcept;

  void* get() { return pointer_; }
  const void* get() const { return pointer_; }
  size_t bytes() const { return bytes_; }
  const Device& device() const { return device_; }

  // Copies all of `source` (same size, any device) into this block.
  void copy_from(const Storage& source);
  void copy_from_host(const void* source, size_t bytes);
  void copy_to_host(void* destination, size_t bytes) const;
  void zero();

 private:
  void release() noexcept;

  void* pointer_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  bool owned_ = true;
};

}  // namespace paddle::runtime
