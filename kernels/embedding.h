#pragma once
// Embedding rows of a [vocabulary, dim] table, looked up by int64 ids, and their gradient.

#include <cstddef>
#include <cstdint>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
// y[i] = table[ids[i]] for `count` ids. Returns the first id outside the vocabulary, or -1.
int64_t embedding_forward(const float* table, const int64_t* ids, size_t count, int dim, int64_t vocabulary, float* y);
// dtable[ids[i]] += dy[i] (ids repeat).
void embedding_backward(const int64_t* ids, size_t count, int dim, const float* dy, float* dtable);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
// Waits for the device to find out whether an id was out of range.
int64_t embedding_forward(Handles& h, const float* table, const int64_t* ids, size_t count, int dim, int64_t vocabulary,
                          float* y);
// Atomic adds: ids repeat.
void embedding_backward(Handles& h, const int64_t* ids, size_t count, int dim, const float* dy, float* dtable);
}  // namespace cuda
#endif

inline int64_t embedding_forward([[maybe_unused]] const Context& ctx, const float* table, const int64_t* ids,
                                 size_t count, int dim, int64_t vocabulary, float* y) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::embedding_forward(ctx.cuda(), table, ids, count, dim, vocabulary, y);
#endif
  return cpu::embedding_forward(table, ids, count, dim, vocabulary, y);
}

inline void embedding_backward([[maybe_unused]] const Context& ctx, const int64_t* ids, size_t count, int dim,
                               const float* dy, float* dtable) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::embedding_backward(ctx.cuda(), ids, count, dim, dy, dtable);
#endif
  cpu::embedding_backward(ids, count, dim, dy, dtable);
}

}  // namespace paddle::kernels
