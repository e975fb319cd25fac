#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/vectorized.h"
#include "kernels/pooling.h"

namespace paddle::kernels::cpu {
namespace {

// The common shapes (a block of 16 or 8 lanes, 2x2 or 3x3 windows) with their sizes known: a
// block of lanes is one GCC vector (one register on AVX-512 for 16, on AVX2 for 8; split where
// the CPU has narrower ones), so a window's maxima and winners stay in registers and the compare
// and select are vector instructions (the general loop below left them scalar). Inlined into
// each PADDLE_VECTORIZED clone, so each is compiled for its CPU.
template <int B>
struct Lanes {
  typedef float F __attribute__((vector_size(sizeof(float) * B)));
  typedef int32_t I __attribute__((vector_size(sizeof(int32_t) * B)));
  static F load(const float* p) {
    F v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static I load(const int32_t* p) {
    I v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  template <class V, class T>
  static void store(T* p, V v) {
    std::memcpy(p, &v, sizeof v);
  }
};

template <int B, int K>
[[gnu::always_inline]] inline void forward_fixed(const float* x, int outer, int height, int width, float* y,
                                                 int32_t* winners, bool relu_gradient) {
  using L = Lanes<B>;
  using F = typename L::F;
  using I = typename L::I;
  const int ho = height / K, wo = width / K;
  const size_t row = static_cast<size_t>(width) * B;
  for (int o = 0; o < outer; ++o) {
    const float* plane = x + static_cast<size_t>(o) * height * row;
    const size_t first = static_cast<size_t>(o) * ho * wo * B;
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        const float* corner = plane + static_cast<size_t>(oy) * K * row + static_cast<size_t>(ox) * K * B;
        F best = L::load(corner);
        I at = I{} + 0;
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx) {
            if (ky == 0 && kx == 0) continue;
            const F cell = L::load(corner + ky * row + static_cast<size_t>(kx) * B);
            const I wins = cell > best;
            best = wins ? cell : best;
            at = wins ? I{} + (ky * K + kx) : at;
          }
        if (relu_gradient) at = best > F{} ? at : I{} - 1;
        const size_t out = first + (static_cast<size_t>(oy) * wo + ox) * B;
        L::store(y + out, best);
        L::store(winners + out, at);
      }
  }
}

template <int B, int K>
[[gnu::always_inline]] inline void backward_fixed(const float* dy, const int32_t* winners, int outer, int height,
                                                  int width, float* dx) {
  using L = Lanes<B>;
  using F = typename L::F;
  using I = typename L::I;
  const int ho = height / K, wo = width / K;
  const size_t row = static_cast<size_t>(width) * B;
  for (int o = 0; o < outer; ++o) {
    float* plane = dx + static_cast<size_t>(o) * height * row;
    const size_t first = static_cast<size_t>(o) * ho * wo * B;
    for (int oy = 0; oy < ho; ++oy) {
      for (int ox = 0; ox < wo; ++ox) {
        const size_t out = first + (static_cast<size_t>(oy) * wo + ox) * B;
        const I at = L::load(winners + out);
        const F g = L::load(dy + out);
        float* corner = plane + static_cast<size_t>(oy) * K * row + static_cast<size_t>(ox) * K * B;
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx)
            L::store(corner + ky * row + static_cast<size_t>(kx) * B, at == I{} + (ky * K + kx) ? g : F{});
      }
      for (int ky = 0; ky < K; ++ky)  // the columns right of the last window
        std::fill(plane + (static_cast<size_t>(oy) * K + ky) * row + static_cast<size_t>(wo) * K * B,
                  plane + (static_cast<size_t>(oy) * K + ky + 1) * row, 0.0f);
    }
    std::fill(plane + static_cast<size_t>(ho) * K * row, plane + height * row, 0.0f);  // the rows below
  }
}

}  // namespace

// One pass over x: each window's B lanes are compared position by position (the first maximum
// wins, as in the plain kernel), so the inner loop runs across the lanes and vectorises.
PADDLE_VECTORIZED void max_pool_forward_channel_blocked(const float* x, int outer, int block, int height, int width,
                                                        int kernel, float* y, int32_t* winners,
                                                        bool relu_gradient) {
  if (block == 16 && kernel == 2) return forward_fixed<16, 2>(x, outer, height, width, y, winners, relu_gradient);
  if (block == 16 && kernel == 3) return forward_fixed<16, 3>(x, outer, height, width, y, winners, relu_gradient);
  if (block == 8 && kernel == 2) return forward_fixed<8, 2>(x, outer, height, width, y, winners, relu_gradient);
  if (block == 8 && kernel == 3) return forward_fixed<8, 3>(x, outer, height, width, y, winners, relu_gradient);
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
  if (block == 16 && kernel == 2) return backward_fixed<16, 2>(dy, winners, outer, height, width, dx);
  if (block == 16 && kernel == 3) return backward_fixed<16, 3>(dy, winners, outer, height, width, dx);
  if (block == 8 && kernel == 2) return backward_fixed<8, 2>(dy, winners, outer, height, width, dx);
  if (block == 8 && kernel == 3) return backward_fixed<8, 3>(dy, winners, outer, height, width, dx);
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
