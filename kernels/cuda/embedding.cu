#include "kernels/embedding.h"

#include "kernels/cuda/internal.h"

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

}  // namespace paddle::kernels::cuda
