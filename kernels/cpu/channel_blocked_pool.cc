#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/vectorized.h"
#include "kernels/pooling.h"

namespace paddle::kernels::cpu {

// One pass over x: each window's B lanes are compared position by position (the first maximum
// wins, as in the plain kernel), so the inner loop runs across the lanes and vectorises.
PADDLE_VECTORIZED void max_pool_forward_channel_blocked(const float* x, int outer, int block, int height, int width,
                                                        int kernel, float* y, int32_t* winners,
                                                        bool relu_gradient) {
  const int ho = height / kernel, wo = width / kernel;
  const size_t row = static_cast<size_t>(width) * block;
  for (int o = 0; o < outer; ++o) {
    const float* plane = x + static_cast<size_t>(o) * height * row;
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        const size_t out = ((static_cast<size_t>(o) * ho + oy) * wo + ox) * block;
        const float* corner = plane + static_cast<size_t>(oy) * kernel * row + static_cast<size_t>(ox) * kernel * block;
        float* best = y + out;
        int32_t* at = winners + out;
        for (int l = 0; l < block; ++l) best[l] = corner[l], at[l] = 0;
        for (int ky = 0; ky < kernel; ++ky)
          for (int kx = 0; kx < kernel; ++kx) {
            if (ky == 0 && kx == 0) continue;
            const float* cell = corner + ky * row + static_cast<size_t>(kx) * block;
            const int32_t position = ky * kernel + kx;
            for (int l = 0; l < block; ++l) {
              const bool wins = cell[l] > best[l];
              best[l] = wins ? cell[l] : best[l];
              at[l] = wins ? position : at[l];
            }
          }
        if (relu_gradient)
          for (int l = 0; l < block; ++l) at[l] = best[l] > 0.0f ? at[l] : -1;
      }
  }
}

// Writes every element of dx once: the winner of its window takes dy, the rest of the window 0,
// and cells outside every window (the right and bottom edges of an odd plane) 0.
PADDLE_VECTORIZED void max_pool_backward_channel_blocked(const float* dy, const int32_t* winners, int outer, int block,
                                                         int height, int width, int kernel, float* dx) {
  const int ho = height / kernel, wo = width / kernel;
  const size_t row = static_cast<size_t>(width) * block;
  for (int o = 0; o < outer; ++o) {
    float* plane = dx + static_cast<size_t>(o) * height * row;
    for (int oy = 0; oy < ho; ++oy) {
      for (int ox = 0; ox < wo; ++ox) {
        const size_t out = ((static_cast<size_t>(o) * ho + oy) * wo + ox) * block;
        float* corner = plane + static_cast<size_t>(oy) * kernel * row + static_cast<size_t>(ox) * kernel * block;
        for (int ky = 0; ky < kernel; ++ky)
          for (int kx = 0; kx < kernel; ++kx) {
            float* cell = corner + ky * row + static_cast<size_t>(kx) * block;
            const int32_t position = ky * kernel + kx;
            for (int l = 0; l < block; ++l) cell[l] = winners[out + l] == position ? dy[out + l] : 0.0f;
          }
      }
      for (int ky = 0; ky < kernel; ++ky)  // the columns right of the last window
        std::fill(plane + (static_cast<size_t>(oy) * kernel + ky) * row + static_cast<size_t>(wo) * kernel * block,
                  plane + (static_cast<size_t>(oy) * kernel + ky + 1) * row, 0.0f);
    }
    std::fill(plane + static_cast<size_t>(ho) * kernel * row, plane + height * row, 0.0f);  // the rows below
  }
}

}  // namespace paddle::kernels::cpu
