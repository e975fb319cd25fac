#include "kernels/cosine.h"

#include "kernels/functors.h"

namespace paddle::kernels::cpu {

void cosine_forward(const float* a, const float* b, size_t n, int d, float scale, float* y, float* saved) {
  for (size_t i = 0; i < n; ++i) {
    const float* x = a + i * d;
    const float* z = b + i * d;
    double dot = 0, xx = 0, zz = 0;
    for (int j = 0; j < d; ++j) {
      dot += static_cast<double>(x[j]) * z[j];
      xx += static_cast<double>(x[j]) * x[j];
      zz += static_cast<double>(z[j]) * z[j];
    }
    const CosineRow row = cosine_row(dot, xx, zz);
    saved[3 * i] = row.norm_a;
    saved[3 * i + 1] = row.norm_b;
    saved[3 * i + 2] = row.cosine;
    y[i] = scale * row.cosine;
  }
}

void cosine_backward(const float* a, const float* b, const float* saved, const float* dy, size_t n, int d, float scale,
                     float* da, float* db) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dy[i] * scale;
    const float na = saved[3 * i], nb = saved[3 * i + 1], c = saved[3 * i + 2];
    const size_t row = i * d;
    for (int j = 0; j < d; ++j) {
      da[row + j] = cosine_grad(g, a[row + j], b[row + j], na, nb, c);
      db[row + j] = cosine_grad(g, b[row + j], a[row + j], nb, na, c);
    }
  }
}

}  // namespace paddle::kernels::cpu
