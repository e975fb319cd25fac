#include "kernels/embedding.h"

#include <algorithm>

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

}  // namespace paddle::kernels::cpu
