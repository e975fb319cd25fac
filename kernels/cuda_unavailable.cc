// The CUDA kernels in a build without CUDA: no device is ever found, Handles cannot be made, and
// so no other function is reachable; each still throws rather than do nothing.

#include <stdexcept>

#include "kernels/cuda_kernels.h"

namespace paddle::kernels::cuda {
namespace {

[[noreturn]] void unavailable() {
  throw std::runtime_error("this build has no CUDA support (configured without nvcc); use the CPU");
}

}  // namespace

struct Handles::Impl {};
Handles::Handles(int, bool) { unavailable(); }
Handles::~Handles() = default;
void Handles::synchronize() { unavailable(); }
void Handles::synchronize_device() { unavailable(); }
int device_count() { return 0; }

void gemm(Handles&, bool, bool, int, int, int, const float*, const float*, float*, bool) { unavailable(); }
void add_bias_rows(Handles&, float*, const float*, int, int) { unavailable(); }
void bias_grad_rows(Handles&, const float*, float*, int, int) { unavailable(); }
void relu_forward(Handles&, const float*, float*, size_t) { unavailable(); }
void relu_backward(Handles&, const float*, const float*, float*, size_t) { unavailable(); }
void conv2d_forward(Handles&, const cpu::ConvShape&, int, int, const float*, const float*, float*) { unavailable(); }
void conv2d_backward_data(Handles&, const cpu::ConvShape&, int, int, const float*, const float*, float*) {
  unavailable();
}
void conv2d_backward_filter(Handles&, const cpu::ConvShape&, int, int, const float*, const float*, float*) {
  unavailable();
}
void add_channel_bias(Handles&, float*, const float*, int, int, int) { unavailable(); }
void channel_bias_grad(Handles&, const float*, float*, int, int, int) { unavailable(); }
void max_pool_forward(Handles&, const float*, int, int, int, int, int, int, float*, int32_t*) { unavailable(); }
void max_pool_backward(Handles&, const float*, const int32_t*, int, int, int, float*) { unavailable(); }
void avg_pool_forward(Handles&, const float*, int, int, int, int, int, float*) { unavailable(); }
void avg_pool_backward(Handles&, const float*, int, int, int, int, int, float*) { unavailable(); }
void multiply(Handles&, const float*, const float*, float*, size_t) { unavailable(); }
void add_relu(Handles&, const float*, const float*, float*, size_t) { unavailable(); }
void add_in_place(Handles&, float*, const float*, size_t) { unavailable(); }
void copy(Handles&, float*, const float*, size_t) { unavailable(); }
void batch_norm_forward_training(Handles&, const BatchNormShape&, const float*, float*, const float*, const float*,
                                 float*, float*, float*, float*, float, float) {
  unavailable();
}
void batch_norm_forward_inference(Handles&, const BatchNormShape&, const float*, float*, const float*, const float*,
                                  const float*, const float*, float) {
  unavailable();
}
void batch_norm_backward(Handles&, const BatchNormShape&, const float*, const float*, const float*, const float*,
                         const float*, float*, float*, float*, float) {
  unavailable();
}
int64_t embedding_forward(Handles&, const float*, const int64_t*, size_t, int, int64_t, float*) { unavailable(); }
void embedding_backward(Handles&, const int64_t*, size_t, int, const float*, float*) { unavailable(); }
void momentum_update(Handles&, float*, const float*, float*, size_t, float, float, float) { unavailable(); }
void sgd_update(Handles&, float*, const float*, size_t, float, float) { unavailable(); }
void adam_update(Handles&, float*, const float*, float*, float*, size_t, float, float, float, float, float) {
  unavailable();
}
void adagrad_update(Handles&, float*, const float*, float*, size_t, float, float, float) { unavailable(); }

Event::Event() { unavailable(); }
Event::~Event() = default;
void Event::record(Handles&) { unavailable(); }
void Event::synchronize() { unavailable(); }

}  // namespace paddle::kernels::cuda
