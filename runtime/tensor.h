#pragma once
// Tensor: a dense float32 array with a shape, in host memory, row-major.

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace paddle::runtime {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> dims, float fill = 0.0f)
      : shape(std::move(dims)), data(static_cast<size_t>(count(shape)), fill) {}

  static int64_t count(const std::vector<int64_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim(size_t i) const { return shape.at(i); }
  float* ptr() { return data.data(); }
  const float* ptr() const { return data.data(); }
  void zero() { std::fill(data.begin(), data.end(), 0.0f); }
  std::string shape_string() const {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
  }
};

}  // namespace paddle::runtime
