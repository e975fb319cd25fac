#include "kernels/conv.h"

#include <algorithm>

#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {
namespace {

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

// cuDNN descriptors for one convolution, released on scope exit.
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ConvDescriptors(const ConvShape& s, int batch, int out_channels, bool tf32) {
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
auto conv_algorithm(Handles& h, ConvOperation op, const ConvShape& s, int batch, int out_channels,
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

void conv2d_forward(Handles& h, const ConvShape& s, int batch, int out_channels, const float* x, const float* w,
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

void conv2d_backward_data(Handles& h, const ConvShape& s, int batch, int out_channels, const float* w,
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

void conv2d_backward_filter(Handles& h, const ConvShape& s, int batch, int out_channels, const float* x,
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

}  // namespace paddle::kernels::cuda
