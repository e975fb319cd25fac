#include "kernels/embedding.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

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

// One thread per output cell; cell 0 of a row also writes the row's weights.
__global__ void bag_mean_forward_kernel(const int64_t* ids, const float* embedded, size_t rows, int slots, int dim,
                                        float* weights, float* y) {
  size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= rows * dim) return;
  const size_t i = k / dim;
  const int d = static_cast<int>(k % dim);
  const int64_t* row_ids = ids + i * slots;
  const float w = bag_weight(row_ids, slots);
  if (d == 0)
    for (int s = 0; s < slots; ++s) weights[i * slots + s] = row_ids[s] != 0 ? w : 0.0f;
  y[k] = bag_mean_cell(row_ids, embedded + i * slots * dim, slots, dim, d, w);
}

__global__ void bag_mean_backward_kernel(const float* weights, const float* dy, size_t rows, int slots, int dim,
                                         float* dembedded) {
  size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= rows * slots * dim) return;
  const size_t cell = k / dim;  // i * slots + s
  dembedded[k] = weights[cell] * dy[cell / slots * dim + k % dim];
}

}  // namespace

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

void bag_mean_forward(Handles& h, const int64_t* ids, const float* embedded, size_t rows, int slots, int dim,
                      float* weights, float* y) {
  const size_t total = rows * static_cast<size_t>(dim);
  if (total == 0) return;
  bag_mean_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(ids, embedded, rows, slots, dim,
                                                                                weights, y);
  check(cudaGetLastError(), "bag_mean_forward");
}

void bag_mean_backward(Handles& h, const float* weights, const float* dy, size_t rows, int slots, int dim,
                       float* dembedded) {
  const size_t total = rows * static_cast<size_t>(slots) * dim;
  if (total == 0) return;
  bag_mean_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(weights, dy, rows, slots, dim,
                                                                                 dembedded);
  check(cudaGetLastError(), "bag_mean_backward");
}

}  // namespace paddle::kernels::cuda
