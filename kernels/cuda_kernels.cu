#include "kernels/cuda_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <string>

namespace paddle::kernels::cuda {
namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(s));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

constexpr int kThreads = 256;
int blocks_for(size_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

__global__ void add_bias_rows_kernel(float* y, const float* bias, int m, int n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < static_cast<size_t>(m) * n) y[i] += bias[i % n];
}

__global__ void bias_grad_rows_kernel(const float* dy, float* db, int m, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= n) return;
  float sum = 0;
  for (int r = 0; r < m; ++r) sum += dy[static_cast<size_t>(r) * n + col];
  db[col] += sum;
}

__global__ void relu_forward_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dx[i] = y[i] > 0 ? dy[i] : 0;
}

__global__ void add_channel_bias_kernel(float* y, const float* bias, int channels, int plane, size_t total) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < total) y[i] += bias[(i / plane) % channels];
}

// One block per channel: a strided sum over the batch's planes, then a tree in shared memory.
__global__ void channel_bias_grad_kernel(const float* dy, float* db, int batch, int channels, int plane) {
  __shared__ float partial[kThreads];
  const int c = blockIdx.x;
  float sum = 0;
  for (int b = 0; b < batch; ++b)
    for (int p = threadIdx.x; p < plane; p += blockDim.x) sum += dy[(static_cast<size_t>(b) * channels + c) * plane + p];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[c] += partial[0];
}

__global__ void max_pool_forward_kernel(const float* x, int planes, int height, int width, int kernel, int stride,
                                        int padding, int ho, int wo, float* y, int32_t* argmax) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<size_t>(planes) * ho * wo) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  const size_t p = i / (static_cast<size_t>(ho) * wo);
  const float* plane = x + p * height * width;
  float best = -INFINITY;
  int best_index = 0;
  for (int ki = 0; ki < kernel; ++ki) {
    const int iy = oy * stride - padding + ki;
    if (iy < 0 || iy >= height) continue;
    for (int kj = 0; kj < kernel; ++kj) {
      const int ix = ox * stride - padding + kj;
      if (ix < 0 || ix >= width) continue;
      const int index = iy * width + ix;
      if (plane[index] > best) {
        best = plane[index];
        best_index = index;
      }
    }
  }
  y[i] = best;
  argmax[i] = best_index;
}

__global__ void max_pool_backward_kernel(const float* dy, const int32_t* argmax, int in_size, int out_size,
                                         size_t total, float* dx) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const size_t p = i / out_size;
  atomicAdd(dx + p * in_size + argmax[i], dy[i]);
}

__global__ void avg_pool_forward_kernel(const float* x, int height, int width, int kernel, int stride, int ho, int wo,
                                        size_t total, float* y) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  const float* plane = x + (i / (static_cast<size_t>(ho) * wo)) * height * width;
  float sum = 0;
  for (int ki = 0; ki < kernel; ++ki)
    for (int kj = 0; kj < kernel; ++kj) sum += plane[(oy * stride + ki) * width + ox * stride + kj];
  y[i] = sum / static_cast<float>(kernel * kernel);
}

__global__ void avg_pool_backward_kernel(const float* dy, int height, int width, int kernel, int stride, int ho,
                                         int wo, size_t total, float* dx) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  float* plane = dx + (i / (static_cast<size_t>(ho) * wo)) * height * width;
  const float g = dy[i] / static_cast<float>(kernel * kernel);
  for (int ki = 0; ki < kernel; ++ki)
    for (int kj = 0; kj < kernel; ++kj) atomicAdd(plane + (oy * stride + ki) * width + ox * stride + kj, g);
}

__global__ void momentum_kernel(float* w, const float* g, float* v, size_t n, float lr, float mu, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  v[i] = mu * v[i] + g[i] + decay * w[i];
  w[i] -= lr * v[i];
}

__global__ void multiply_kernel(const float* a, const float* b, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a[i] * b[i];
}

__global__ void add_relu_kernel(const float* a, const float* b, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = fmaxf(0.0f, a[i] + b[i]);
}

__global__ void add_in_place_kernel(float* y, const float* x, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void embedding_forward_kernel(const float* table, const int64_t* ids, size_t count, int dim,
                                         int64_t vocabulary, float* y, unsigned long long* first_bad) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count * dim) return;
  const size_t row = i / dim;
  const int64_t id = ids[row];
  if (id < 0 || id >= vocabulary) {
    atomicMin(first_bad, static_cast<unsigned long long>(row));
    y[i] = 0;
    return;
  }
  y[i] = table[id * dim + i % dim];
}

__global__ void embedding_backward_kernel(const int64_t* ids, size_t count, int dim, const float* dy, float* dtable) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count * dim) return;
  atomicAdd(dtable + ids[i / dim] * dim + i % dim, dy[i]);
}

__global__ void sgd_kernel(float* w, const float* g, size_t n, float lr, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) w[i] -= lr * (g[i] + decay * w[i]);
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1,
                            float beta2, float epsilon, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float grad = g[i] + decay * w[i];
  m[i] = beta1 * m[i] + (1 - beta1) * grad;
  v[i] = beta2 * v[i] + (1 - beta2) * grad * grad;
  w[i] -= step_size * m[i] / (sqrtf(v[i]) + epsilon);
}

__global__ void adagrad_kernel(float* w, const float* g, float* acc, size_t n, float lr, float epsilon, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float grad = g[i] + decay * w[i];
  acc[i] += grad * grad;
  w[i] -= lr * grad / (sqrtf(acc[i]) + epsilon);
}

}  // namespace

struct Handles::Impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  bool tf32 = false;
  // The convolution algorithm cuDNN measured fastest, by operation and shape (found once each).
  std::map<std::array<int, 9>, int> conv_algorithms;

  void* ensure_workspace(size_t bytes) {
    if (bytes > workspace_bytes) {
      if (workspace != nullptr) cudaFree(workspace);
      check(cudaMalloc(&workspace, bytes), "cudaMalloc(workspace)");
      workspace_bytes = bytes;
    }
    return workspace;
  }
};

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

void gemm(Handles& h, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cublasSgemm(h.impl().cublas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                    n, m, k, &alpha, b, transpose_b ? k : n, a, transpose_a ? m : k, &beta, c, n),
        "cublasSgemm");
}

void add_bias_rows(Handles& h, float* y, const float* bias, int m, int n) {
  add_bias_rows_kernel<<<blocks_for(static_cast<size_t>(m) * n), kThreads, 0, h.impl().stream>>>(y, bias, m, n);
  check(cudaGetLastError(), "add_bias_rows");
}

void bias_grad_rows(Handles& h, const float* dy, float* db, int m, int n) {
  bias_grad_rows_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(dy, db, m, n);
  check(cudaGetLastError(), "bias_grad_rows");
}

void relu_forward(Handles& h, const float* x, float* y, size_t n) {
  relu_forward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(x, y, n);
  check(cudaGetLastError(), "relu_forward");
}

void relu_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n) {
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, dy, dx, n);
  check(cudaGetLastError(), "relu_backward");
}

namespace {

// cuDNN descriptors for one convolution, released on scope exit.
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ConvDescriptors(const cpu::ConvShape& s, int batch, int out_channels, bool tf32) {
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    check(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, s.channels, s.height, s.width),
          "cudnnSetTensor4dDescriptor(x)");
    check(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, out_channels, s.out_height(),
                                     s.out_width()),
          "cudnnSetTensor4dDescriptor(y)");
    check(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, out_channels, s.channels, s.kernel,
                                     s.kernel),
          "cudnnSetFilter4dDescriptor");
    check(cudnnSetConvolution2dDescriptor(conv, s.padding, s.padding, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    check(cudnnSetConvolutionMathType(conv, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  }
  ~ConvDescriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
};

// The fastest algorithm cuDNN measured that ran and, in strict FP32, uses no tensor-core math
// (results come sorted by time).
template <typename Perf>
int fastest(const Perf* perf, int found, bool tf32, const char* what) {
  for (int i = 0; i < found; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && (tf32 || perf[i].mathType != CUDNN_TENSOR_OP_MATH))
      return static_cast<int>(perf[i].algo);
  throw std::runtime_error(std::string("cuDNN found no usable algorithm in the ") + what);
}

// Workspace offered to the algorithm search: up to 1 GiB, at most half of what is free.
size_t search_workspace_bytes() {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return std::min(size_t{1} << 30, free / 2);
}

enum ConvOperation { kForward, kBackwardData, kBackwardFilter };

// The algorithm for this operation and shape: the fastest that `find` (a cudnnFind*Ex call over
// a workspace) measures the first time, then the cached choice.
template <typename Perf, typename Find>
auto conv_algorithm(Handles& h, ConvOperation op, const cpu::ConvShape& s, int batch, int out_channels,
                    const char* what, Find find) -> decltype(Perf{}.algo) {
  using Algo = decltype(Perf{}.algo);
  const std::array<int, 9> key{op, batch, s.channels, s.height, s.width, out_channels, s.kernel, s.stride, s.padding};
  auto& cache = h.impl().conv_algorithms;
  if (auto it = cache.find(key); it != cache.end()) return static_cast<Algo>(it->second);
  const size_t bytes = search_workspace_bytes();
  Perf perf[8];
  int found = 0;
  check(find(perf, &found, h.impl().ensure_workspace(bytes), bytes), what);
  const int chosen = cache[key] = fastest(perf, found, h.impl().tf32, what);
  return static_cast<Algo>(chosen);
}

}  // namespace

void conv2d_forward(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* x, const float* w,
                    float* y) {
  ConvDescriptors d(s, batch, out_channels, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionFwdAlgoPerf_t>(
      h, kForward, s, batch, out_channels, "convolution forward search", [&](auto* perf, int* found, void* ws, size_t n) {
        return cudnnFindConvolutionForwardAlgorithmEx(h.impl().cudnn, d.x, x, d.w, w, d.conv, d.y, y, 8, found, perf, ws,
                                                      n);
      });
  size_t bytes = 0;
  check(cudnnGetConvolutionForwardWorkspaceSize(h.impl().cudnn, d.x, d.w, d.conv, d.y, algo, &bytes),
        "cudnnGetConvolutionForwardWorkspaceSize");
  const float alpha = 1.0f, beta = 0.0f;
  check(cudnnConvolutionForward(h.impl().cudnn, &alpha, d.x, x, d.w, w, d.conv, algo,
                                h.impl().ensure_workspace(bytes), bytes, &beta, d.y, y),
        "cudnnConvolutionForward");
}

void conv2d_backward_data(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* w,
                          const float* dy, float* dx) {
  ConvDescriptors d(s, batch, out_channels, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
      h, kBackwardData, s, batch, out_channels, "convolution backward-data search",
      [&](auto* perf, int* found, void* ws, size_t n) {
        return cudnnFindConvolutionBackwardDataAlgorithmEx(h.impl().cudnn, d.w, w, d.y, dy, d.conv, d.x, dx, 8, found,
                                                           perf, ws, n);
      });
  size_t bytes = 0;
  check(cudnnGetConvolutionBackwardDataWorkspaceSize(h.impl().cudnn, d.w, d.y, d.conv, d.x, algo, &bytes),
        "cudnnGetConvolutionBackwardDataWorkspaceSize");
  const float alpha = 1.0f, beta = 0.0f;
  check(cudnnConvolutionBackwardData(h.impl().cudnn, &alpha, d.w, w, d.y, dy, d.conv, algo,
                                     h.impl().ensure_workspace(bytes), bytes, &beta, d.x, dx),
        "cudnnConvolutionBackwardData");
}

void conv2d_backward_filter(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* x,
                            const float* dy, float* dw) {
  ConvDescriptors d(s, batch, out_channels, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
      h, kBackwardFilter, s, batch, out_channels, "convolution backward-filter search",
      [&](auto* perf, int* found, void* ws, size_t n) {
        // The trials write a scratch filter: dw accumulates and must survive the search.
        void* scratch = nullptr;
        check(cudaMalloc(&scratch, sizeof(float) * out_channels * s.channels * s.kernel * s.kernel),
              "cudaMalloc(filter search)");
        const cudnnStatus_t status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            h.impl().cudnn, d.x, x, d.y, dy, d.conv, d.w, scratch, 8, found, perf, ws, n);
        cudaFree(scratch);
        return status;
      });
  size_t bytes = 0;
  check(cudnnGetConvolutionBackwardFilterWorkspaceSize(h.impl().cudnn, d.x, d.y, d.conv, d.w, algo, &bytes),
        "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  const float alpha = 1.0f, beta = 1.0f;  // accumulate, as the CPU layer does
  check(cudnnConvolutionBackwardFilter(h.impl().cudnn, &alpha, d.x, x, d.y, dy, d.conv, algo,
                                       h.impl().ensure_workspace(bytes), bytes, &beta, d.w, dw),
        "cudnnConvolutionBackwardFilter");
}

void add_channel_bias(Handles& h, float* y, const float* bias, int batch, int channels, int plane) {
  const size_t total = static_cast<size_t>(batch) * channels * plane;
  add_channel_bias_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(y, bias, channels, plane, total);
  check(cudaGetLastError(), "add_channel_bias");
}

void channel_bias_grad(Handles& h, const float* dy, float* db, int batch, int channels, int plane) {
  channel_bias_grad_kernel<<<channels, kThreads, 0, h.impl().stream>>>(dy, db, batch, channels, plane);
  check(cudaGetLastError(), "channel_bias_grad");
}

void max_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride,
                      int padding, float* y, int32_t* argmax) {
  const int ho = (height + 2 * padding - kernel) / stride + 1, wo = (width + 2 * padding - kernel) / stride + 1;
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  max_pool_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(x, planes, height, width, kernel, stride,
                                                                                 padding, ho, wo, y, argmax);
  check(cudaGetLastError(), "max_pool_forward");
}

void max_pool_backward(Handles& h, const float* dy, const int32_t* argmax, int planes, int in_size, int out_size,
                       float* dx) {
  const size_t total = static_cast<size_t>(planes) * out_size;
  max_pool_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(dy, argmax, in_size, out_size, total, dx);
  check(cudaGetLastError(), "max_pool_backward");
}

void avg_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride, float* y) {
  const int ho = (height - kernel) / stride + 1, wo = (width - kernel) / stride + 1;
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  avg_pool_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(x, height, width, kernel, stride, ho, wo,
                                                                                 total, y);
  check(cudaGetLastError(), "avg_pool_forward");
}

void avg_pool_backward(Handles& h, const float* dy, int planes, int height, int width, int kernel, int stride,
                       float* dx) {
  const int ho = (height - kernel) / stride + 1, wo = (width - kernel) / stride + 1;
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  avg_pool_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(dy, height, width, kernel, stride, ho,
                                                                                  wo, total, dx);
  check(cudaGetLastError(), "avg_pool_backward");
}

void momentum_update(Handles& h, float* w, const float* g, float* v, size_t n, float lr, float mu, float decay) {
  momentum_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, v, n, lr, mu, decay);
  check(cudaGetLastError(), "momentum_update");
}

void multiply(Handles& h, const float* a, const float* b, float* y, size_t n) {
  multiply_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(a, b, y, n);
  check(cudaGetLastError(), "multiply");
}

void add_relu(Handles& h, const float* a, const float* b, float* y, size_t n) {
  add_relu_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(a, b, y, n);
  check(cudaGetLastError(), "add_relu");
}

void add_in_place(Handles& h, float* y, const float* x, size_t n) {
  add_in_place_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, x, n);
  check(cudaGetLastError(), "add_in_place");
}

void copy(Handles& h, float* dst, const float* src, size_t n) {
  check(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, h.impl().stream), "copy");
}

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

int64_t embedding_forward(Handles& h, const float* table, const int64_t* ids, size_t count, int dim,
                          int64_t vocabulary, float* y) {
  void* flag = h.impl().ensure_workspace(sizeof(unsigned long long));
  const unsigned long long none = ~0ull;
  check(cudaMemcpyAsync(flag, &none, sizeof none, cudaMemcpyHostToDevice, h.impl().stream), "embedding flag");
  const size_t total = count * static_cast<size_t>(dim);
  embedding_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(
      table, ids, count, dim, vocabulary, y, static_cast<unsigned long long*>(flag));
  check(cudaGetLastError(), "embedding_forward");
  unsigned long long first_bad = none;
  check(cudaMemcpyAsync(&first_bad, flag, sizeof first_bad, cudaMemcpyDeviceToHost, h.impl().stream), "embedding flag");
  h.synchronize();
  if (first_bad == none) return -1;
  int64_t id = 0;
  check(cudaMemcpy(&id, ids + first_bad, sizeof id, cudaMemcpyDeviceToHost), "embedding id");
  return id;
}

void embedding_backward(Handles& h, const int64_t* ids, size_t count, int dim, const float* dy, float* dtable) {
  const size_t total = count * static_cast<size_t>(dim);
  embedding_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(ids, count, dim, dy, dtable);
  check(cudaGetLastError(), "embedding_backward");
}

void sgd_update(Handles& h, float* w, const float* g, size_t n, float lr, float decay) {
  sgd_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, n, lr, decay);
  check(cudaGetLastError(), "sgd_update");
}

void adam_update(Handles& h, float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1,
                 float beta2, float epsilon, float decay) {
  adam_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, m, v, n, step_size, beta1, beta2, epsilon, decay);
  check(cudaGetLastError(), "adam_update");
}

void adagrad_update(Handles& h, float* w, const float* g, float* accumulator, size_t n, float lr, float epsilon,
                    float decay) {
  adagrad_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, accumulator, n, lr, epsilon, decay);
  check(cudaGetLastError(), "adagrad_update");
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
