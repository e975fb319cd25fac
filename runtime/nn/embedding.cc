#include "runtime/nn/embedding.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "kernels/embedding.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Embedding::Embedding(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name)
    : vocabulary_(vocabulary), dim_(dim), table_(name + ".table", {vocabulary, dim}) {
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  for (auto& v : table_.value.values()) v = dist(rng);
}

namespace {

// Ids as an int64 tensor on `device`: int64 input as it is, float32 input (whole numbers) converted.
Tensor ids_of(const Tensor& input, const Device& device) {
  if (input.dtype() == DType::kInt64) return input.to(device);
  const std::vector<float> floats = input.to_vector();
  std::vector<int64_t> ids(floats.size());
  for (size_t i = 0; i < floats.size(); ++i) {
    if (floats[i] != std::floor(floats[i]))
      throw std::invalid_argument(fmt::format("Embedding: id {} is not a whole number", floats[i]));
    ids[i] = static_cast<int64_t>(floats[i]);
  }
  return Tensor::from_ids(input.shape, ids, device);
}

}  // namespace

Tensor Embedding::forward(const Tensor& input, bool) {
  require_rank(input, 2, "Embedding");
  ids_ = ids_of(input, device());
  Tensor y({input.dim(0), input.dim(1) * dim_}, DType::kFloat32, device());
  const size_t count = static_cast<size_t>(ids_.numel());
  const int64_t bad =
      k::embedding_forward(context(), table_.value.ptr(), ids_.id_ptr(), count, as_int(dim_), vocabulary_, y.ptr());
  if (bad >= 0) throw std::out_of_range(fmt::format("Embedding: id {} outside the vocabulary of {}", bad, vocabulary_));
  return y;
}

Tensor Embedding::backward(const Tensor& dy) {
  const size_t count = static_cast<size_t>(ids_.numel());
  k::embedding_backward(context(), ids_.id_ptr(), count, as_int(dim_), dy.ptr(), table_.grad.ptr());
  return Tensor(ids_.shape, DType::kFloat32, ids_.device());  // ids have no gradient
}

std::string Embedding::describe() const { return fmt::format("Embedding({}, {})", vocabulary_, dim_); }

}  // namespace paddle::runtime
