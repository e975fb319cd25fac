#pragma once
// Device memory: allocation on a CUDA device and copies between host and device memory, for
// tensor storage. Allocations are stream-ordered on the default stream (cached by CUDA's memory
// pool, so a training step's temporaries cost no device synchronisation), and copies are ordered
// after every kernel already queued on the device. A build without CUDA throws on every call
// (kernels/device_memory_none.cc).

#include <cstddef>

namespace paddle::kernels {

void* cuda_allocate(size_t bytes, int device);
void cuda_release(void* pointer) noexcept;

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };
// Returns once `dst` can be read (host) or once the copy is queued in order (device).
void cuda_copy(void* dst, const void* src, size_t bytes, CopyKind kind);
void cuda_zero(void* pointer, size_t bytes);

}  // namespace paddle::kernels
