#include "kernels/embedding.h"

#include <algorithm>

#include "kernels/functors.h"

namespace paddle::kernels::cpu {

int64_t embedding_forward(const float* table, const int64_t* ids, size_t count, int dim, int64_t vocabulary, float* y) {
  for (size_t i = 0; i < count; ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= vocabulary) return id;
    std::copy_n(table + id * dim, dim, y + i * dim);
  }
  return -1;
}

void embedding_backward(const int64_t* ids, size_t count, int dim, const float* dy, float* dtable) {
  for (size_t i = 0; i < count; ++i) {
    float* row = dtable + ids[i] * dim;
    const float* g = dy + i * dim;
    for (int d = 0; d < dim; ++d) row[d] += g[d];
  }
}

void bag_mean_forward(const int64_t* ids, const float* embedded, size_t rows, int slots, int dim, float* weights,
                      float* y) {
  for (size_t i = 0; i < rows; ++i) {
    const int64_t* row_ids = ids + i * slots;
    const float w = bag_weight(row_ids, slots);
    for (int s = 0; s < slots; ++s) weights[i * slots + s] = row_ids[s] != 0 ? w : 0.0f;
    const float* row_embedded = embedded + i * slots * dim;
    for (int d = 0; d < dim; ++d) y[i * dim + d] = bag_mean_cell(row_ids, row_embedded, slots, dim, d, w);
  }
}

void bag_mean_backward(const float* weights, const float* dy, size_t rows, int slots, int dim, float* dembedded) {
  for (size_t i = 0; i < rows; ++i)
    for (int s = 0; s < slots; ++s) {
      const float w = weights[i * slots + s];
      float* row = dembedded + (i * slots + s) * dim;
      for (int d = 0; d < dim; ++d) row[d] = w * dy[i * dim + d];
    }
}

}  // namespace paddle::kernels::cpu
