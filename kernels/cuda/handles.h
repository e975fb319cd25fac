#pragma once
// The cuBLAS and cuDNN handles and the stream the CUDA halves of the kernels run on, and events
// in that stream. Built only with CUDA (PADDLE_LAUNCH_WITH_CUDA); a kernels::Context owns one.

#include <memory>

namespace paddle::kernels::cuda {

// With tf32, GEMMs and convolutions may use TF32 tensor cores (10-bit mantissa products, FP32
// accumulation); without, they are strict FP32 like the CPU halves. Errors throw
// std::runtime_error naming the CUDA call.
class Handles {
 public:
  explicit Handles(int device = 0, bool tf32 = false);
  ~Handles();
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  void synchronize();         // this stream's work
  void synchronize_device();  // all work on the device, copies on the default stream included

  struct Impl;  // kernels/cuda/internal.h
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Number of CUDA devices; 0 without a driver or device.
int device_count();

// A point in the handles' stream that another thread can wait for (a bucket of gradients
// complete, say).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(Handles& h);
  void synchronize();

 private:
  void* event_ = nullptr;
};

}  // namespace paddle::kernels::cuda
