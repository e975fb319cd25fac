#pragma once
// Uniform(-1, 1) test data for the kernels, the same for a given seed: shared by the unit tests
// and the CUDA-against-CPU test.

#include <random>
#include <vector>

namespace paddle::kernels::testing {

inline std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace paddle::kernels::testing
