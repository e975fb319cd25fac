#include "kernels/batch_norm.h"

#include <algorithm>

#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {
namespace {

// The x/y descriptor and the per-channel descriptor of one batch normalization.
// cuDNN refuses an epsilon below CUDNN_BN_MIN_EPSILON (1e-5), and 1e-5f is just below it as a double.
double batch_norm_epsilon(float epsilon) { return std::max<double>(epsilon, CUDNN_BN_MIN_EPSILON); }

struct BatchNormDescriptors {
  cudnnTensorDescriptor_t x = nullptr, channel = nullptr;

  explicit BatchNormDescriptors(const BatchNormShape& s) {
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&channel), "cudnnCreateTensorDescriptor");
    check(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.batch, s.channels, s.height, s.width),
          "cudnnSetTensor4dDescriptor(batch norm x)");
    check(cudnnDeriveBNTensorDescriptor(channel, x, CUDNN_BATCHNORM_SPATIAL), "cudnnDeriveBNTensorDescriptor");
  }
  ~BatchNormDescriptors() {
    cudnnDestroyTensorDescriptor(channel);
    cudnnDestroyTensorDescriptor(x);
  }
};

}  // namespace

void batch_norm_forward_training(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                 const float* shift, float* running_mean, float* running_var, float* saved_mean,
                                 float* saved_inv_std, float momentum, float epsilon) {
  BatchNormDescriptors d(s);
  const float alpha = 1.0f, beta = 0.0f;
  check(cudnnBatchNormalizationForwardTraining(h.impl().cudnn, CUDNN_BATCHNORM_SPATIAL, &alpha, &beta, d.x, x, d.x, y,
                                               d.channel, scale, shift, 1.0 - momentum, running_mean, running_var,
                                               batch_norm_epsilon(epsilon), saved_mean, saved_inv_std),
        "cudnnBatchNormalizationForwardTraining");
}

void batch_norm_forward_inference(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                  const float* shift, const float* running_mean, const float* running_var,
                                  float epsilon) {
  BatchNormDescriptors d(s);
  const float alpha = 1.0f, beta = 0.0f;
  check(cudnnBatchNormalizationForwardInference(h.impl().cudnn, CUDNN_BATCHNORM_SPATIAL, &alpha, &beta, d.x, x, d.x,
                                                y, d.channel, scale, shift, running_mean, running_var,
                                                batch_norm_epsilon(epsilon)),
        "cudnnBatchNormalizationForwardInference");
}

void batch_norm_backward(Handles& h, const BatchNormShape& s, const float* x, const float* dy, const float* scale,
                         const float* saved_mean, const float* saved_inv_std, float* dx, float* dscale, float* dshift,
                         float epsilon) {
  BatchNormDescriptors d(s);
  const float one = 1.0f, zero = 0.0f;
  check(cudnnBatchNormalizationBackward(h.impl().cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &one, d.x, x, d.x,
                                        dy, d.x, dx, d.channel, scale, dscale, dshift, batch_norm_epsilon(epsilon), saved_mean,
                                        saved_inv_std),
        "cudnnBatchNormalizationBackward");
}

}  // namespace paddle::kernels::cuda
