#include "kernels/cuda/handles.h"

#include <cstdint>

#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {

Handles::Handles(int device, bool tf32) : impl_(std::make_unique<Impl>()) {
  impl_->tf32 = tf32;
  check(cudaSetDevice(device), "cudaSetDevice");
  // Tensors are allocated stream-ordered from the device's default pool; keep what a step frees
  // cached for the next step instead of returning it to the driver at every synchronisation.
  cudaMemPool_t pool;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
  check(cudaStreamCreate(&impl_->stream), "cudaStreamCreate");
  check(cublasCreate(&impl_->cublas), "cublasCreate");
  check(cublasSetStream(impl_->cublas, impl_->stream), "cublasSetStream");
  check(cublasSetMathMode(impl_->cublas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  check(cudnnCreate(&impl_->cudnn), "cudnnCreate");
  check(cudnnSetStream(impl_->cudnn, impl_->stream), "cudnnSetStream");
}

Handles::~Handles() {
  if (impl_->workspace != nullptr) cudaFree(impl_->workspace);
  if (impl_->cudnn != nullptr) cudnnDestroy(impl_->cudnn);
  if (impl_->cublas != nullptr) cublasDestroy(impl_->cublas);
  if (impl_->stream != nullptr) cudaStreamDestroy(impl_->stream);
}

void Handles::synchronize() { check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize"); }

void Handles::synchronize_device() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

Event::Event() {
  cudaEvent_t e;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  event_ = e;
}

Event::~Event() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

void Event::record(Handles& h) { check(cudaEventRecord(static_cast<cudaEvent_t>(event_), h.impl().stream), "cudaEventRecord"); }

void Event::synchronize() { check(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)), "cudaEventSynchronize"); }

}  // namespace paddle::kernels::cuda
