#pragma once
// Embedding rows of a [vocabulary, dim] table, looked up by int64 ids, and their gradient; and the
// mean of a bag of looked-up rows.
//
// A bag is one row of `slots` ids, 0 for padding, whose looked-up rows `embedded` are
// [rows, slots, dim]. Its mean weighs each real id by 1/count of the real ids in its row
// (kernels/functors.h, bag_weight) and padding by 0; a row of padding only gives zeros.

#include <cstddef>
#include <cstdint>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
// y[i] = table[ids[i]] for `count` ids. Returns the first id outside the vocabulary, or -1.
int64_t embedding_forward(const float* table, const int64_t* ids, size_t count, int dim, int64_t vocabulary, float* y);
// dtable[ids[i]] += dy[i] (ids repeat).
void embedding_backward(const int64_t* ids, size_t count, int dim, const float* dy, float* dtable);
// y[i] = sum over s of weights[i,s] * embedded[i,s], slot by slot; y is [rows, dim], and the
// weights [rows, slots] are kept for the backward.
void bag_mean_forward(const int64_t* ids, const float* embedded, size_t rows, int slots, int dim, float* weights,
                      float* y);
// dembedded[i,s] = weights[i,s] * dy[i], for embedding_backward to scatter into the table.
void bag_mean_backward(const float* weights, const float* dy, size_t rows, int slots, int dim, float* dembedded);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
// Waits for the device to find out whether an id was out of range.
int64_t embedding_forward(Handles& h, const float* table, const int64_t* ids, size_t count, int dim, int64_t vocabulary,
                          float* y);
// Atomic adds: ids repeat.
void embedding_backward(Handles& h, const int64_t* ids, size_t count, int dim, const float* dy, float* dtable);
void bag_mean_forward(Handles& h, const int64_t* ids, const float* embedded, size_t rows, int slots, int dim,
                      float* weights, float* y);
void bag_mean_backward(Handles& h, const float* weights, const float* dy, size_t rows, int slots, int dim,
                       float* dembedded);
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

inline void bag_mean_forward([[maybe_unused]] const Context& ctx, const int64_t* ids, const float* embedded,
                             size_t rows, int slots, int dim, float* weights, float* y) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::bag_mean_forward(ctx.cuda(), ids, embedded, rows, slots, dim, weights, y);
#endif
  cpu::bag_mean_forward(ids, embedded, rows, slots, dim, weights, y);
}

inline void bag_mean_backward([[maybe_unused]] const Context& ctx, const float* weights, const float* dy, size_t rows,
                              int slots, int dim, float* dembedded) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::bag_mean_backward(ctx.cuda(), weights, dy, rows, slots, dim, dembedded);
#endif
  cpu::bag_mean_backward(weights, dy, rows, slots, dim, dembedded);
}

}  // namespace paddle::kernels
