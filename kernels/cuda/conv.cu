#include "kernels/conv.h"

#include <algorithm>

#include "kernels/cuda/cudnn_conv.h"
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

// Float32 tensors use tensor cores only with TF32 allowed; 16-bit ones always do.
bool uses_tensor_ops(cudnnDataType_t type, bool tf32) { return type != CUDNN_DATA_FLOAT || tf32; }

// cuDNN descriptors for one convolution on tensors of `type` in `layout`, released on scope exit.
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ConvDescriptors(const ConvShape& s, int batch, int out_channels, cudnnDataType_t type, cudnnTensorFormat_t layout,
                  bool tf32) {
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    check(cudnnSetTensor4dDescriptor(x, layout, type, batch, s.channels, s.height, s.width),
          "cudnnSetTensor4dDescriptor(x)");
    check(cudnnSetTensor4dDescriptor(y, layout, type, batch, out_channels, s.out_height(), s.out_width()),
          "cudnnSetTensor4dDescriptor(y)");
    check(cudnnSetFilter4dDescriptor(w, type, layout, out_channels, s.channels, s.kernel, s.kernel),
          "cudnnSetFilter4dDescriptor");
    check(cudnnSetConvolution2dDescriptor(conv, s.padding, s.padding, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    check(cudnnSetConvolutionMathType(conv, uses_tensor_ops(type, tf32) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
          "cudnnSetConvolutionMathType");
  }
  ~ConvDescriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
};

// The algorithms cuDNN's guide lists as running on tensor cores.
bool tensor_core_algorithm(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool tensor_core_algorithm(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool tensor_core_algorithm(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// The fastest algorithm cuDNN measured that ran (results come sorted by time): in strict FP32
// one without tensor-core math; in 16 bits a tensor-core one where any ran, since on 16-bit
// tensors cuDNN's search picked its CUDA-core kernels (implicit_convolve_sgemm,
// wgrad_alg0_engine) on an H100, which took most of a ResNet-50 step.
template <typename Perf>
int fastest(const Perf* perf, int found, cudnnDataType_t type, bool tf32, const char* what) {
  const auto ran = [&](int i) { return perf[i].status == CUDNN_STATUS_SUCCESS; };
  const auto tensor_op = [&](int i) { return perf[i].mathType == CUDNN_TENSOR_OP_MATH; };
  if (type != CUDNN_DATA_FLOAT)
    for (int i = 0; i < found; ++i)
      if (ran(i) && tensor_op(i) && tensor_core_algorithm(perf[i].algo)) return static_cast<int>(perf[i].algo);
  for (int i = 0; i < found; ++i)
    if (ran(i) && (uses_tensor_ops(type, tf32) || !tensor_op(i))) return static_cast<int>(perf[i].algo);
  throw std::runtime_error(std::string("cuDNN found no usable algorithm in the ") + what);
}

// Workspace offered to the algorithm search: up to 1 GiB, at most half of what is free.
size_t search_workspace_bytes() {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return std::min(size_t{1} << 30, free / 2);
}

enum ConvOperation { kForward, kBackwardData, kBackwardFilter };

// The algorithm for this operation, data type, layout and shape: the fastest that `find` (a
// cudnnFind*Ex call over a workspace) measures the first time, then the cached choice.
template <typename Perf, typename Find>
auto conv_algorithm(Handles& h, ConvOperation op, cudnnDataType_t type, cudnnTensorFormat_t layout,
                    const ConvShape& s, int batch, int out_channels, const char* what, Find find)
    -> decltype(Perf{}.algo) {
  using Algo = decltype(Perf{}.algo);
  const std::array<int, 11> key{op,      type,         layout,   batch,    s.channels, s.height,
                                s.width, out_channels, s.kernel, s.stride, s.padding};
  auto& cache = h.impl().conv_algorithms;
  if (auto it = cache.find(key); it != cache.end()) return static_cast<Algo>(it->second);
  const size_t bytes = search_workspace_bytes();
  Perf perf[16];
  int found = 0;
  check(find(perf, &found, h.impl().ensure_workspace(bytes), bytes), what);
  const int chosen = cache[key] = fastest(perf, found, type, h.impl().tf32, what);
  return static_cast<Algo>(chosen);
}

}  // namespace

void cudnn_conv_forward(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s,
                        int batch, int out_channels, const void* x, const void* w, void* y) {
  ConvDescriptors d(s, batch, out_channels, type, layout, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionFwdAlgoPerf_t>(
      h, kForward, type, layout, s, batch, out_channels, "convolution forward search",
      [&](auto* perf, int* found, void* ws, size_t n) {
        return cudnnFindConvolutionForwardAlgorithmEx(h.impl().cudnn, d.x, x, d.w, w, d.conv, d.y, y, 16, found, perf, ws,
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

void cudnn_conv_backward_data(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s,
                              int batch, int out_channels, const void* w, const void* dy, void* dx) {
  ConvDescriptors d(s, batch, out_channels, type, layout, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
      h, kBackwardData, type, layout, s, batch, out_channels, "convolution backward-data search",
      [&](auto* perf, int* found, void* ws, size_t n) {
        return cudnnFindConvolutionBackwardDataAlgorithmEx(h.impl().cudnn, d.w, w, d.y, dy, d.conv, d.x, dx, 16, found,
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

void cudnn_conv_backward_filter(Handles& h, cudnnDataType_t type, cudnnTensorFormat_t layout, const ConvShape& s,
                                int batch, int out_channels, const void* x, const void* dy, void* dw, bool accumulate) {
  ConvDescriptors d(s, batch, out_channels, type, layout, h.impl().tf32);
  const auto algo = conv_algorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
      h, kBackwardFilter, type, layout, s, batch, out_channels, "convolution backward-filter search",
      [&](auto* perf, int* found, void* ws, size_t n) {
        // The trials write a scratch filter (float32-sized, enough for any type): dw may
        // accumulate and must survive the search.
        void* scratch = nullptr;
        check(cudaMalloc(&scratch, sizeof(float) * out_channels * s.channels * s.kernel * s.kernel),
              "cudaMalloc(filter search)");
        const cudnnStatus_t status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            h.impl().cudnn, d.x, x, d.y, dy, d.conv, d.w, scratch, 16, found, perf, ws, n);
        cudaFree(scratch);
        return status;
      });
  size_t bytes = 0;
  check(cudnnGetConvolutionBackwardFilterWorkspaceSize(h.impl().cudnn, d.x, d.y, d.conv, d.w, algo, &bytes),
        "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cudnnConvolutionBackwardFilter(h.impl().cudnn, &alpha, d.x, x, d.y, dy, d.conv, algo,
                                       h.impl().ensure_workspace(bytes), bytes, &beta, d.w, dw),
        "cudnnConvolutionBackwardFilter");
}

void conv2d_forward(Handles& h, const ConvShape& s, int batch, int out_channels, const float* x, const float* w,
                    float* y) {
  cudnn_conv_forward(h, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s, batch, out_channels, x, w, y);
}

void conv2d_backward_data(Handles& h, const ConvShape& s, int batch, int out_channels, const float* w,
                          const float* dy, float* dx) {
  cudnn_conv_backward_data(h, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s, batch, out_channels, w, dy, dx);
}

void conv2d_backward_filter(Handles& h, const ConvShape& s, int batch, int out_channels, const float* x,
                            const float* dy, float* dw) {
  // dw accumulates, as the CPU layer's does.
  cudnn_conv_backward_filter(h, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s, batch, out_channels, x, dy, dw, true);
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
