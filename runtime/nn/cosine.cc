#include "runtime/nn/cosine.h"

#include <fmt/format.h>

#include <utility>

#include <stdexcept>

#include "kernels/cosine.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Device CosineSimilarity::device() const { return execution_ != nullptr ? execution_->device() : Device::cpu(); }

const kernels::Context& CosineSimilarity::context() const {
  return execution_ != nullptr ? execution_->context() : kernels::Context::host();
}

Tensor CosineSimilarity::forward(const Tensor& a, const Tensor& b) {
  if (a.shape.size() != 2 || a.shape != b.shape)
    throw std::invalid_argument(fmt::format("CosineSimilarity: inputs {} and {} must be the same [N,D]",
                                            a.shape_string(), b.shape_string()));
  if (!(a.device() == device()) || !(b.device() == device()))
    throw std::invalid_argument(fmt::format("CosineSimilarity on {} got inputs {} and {}", device().to_string(),
                                            a.describe(), b.describe()));
  a_ = a.share();
  b_ = b.share();
  const int64_t n = a.dim(0);
  saved_ = Tensor({n, 3}, DType::kFloat32, device());
  Tensor y({n, 1}, DType::kFloat32, device());
  k::cosine_forward(context(), a.ptr(), b.ptr(), static_cast<size_t>(n), static_cast<int>(a.dim(1)), scale_, y.ptr(),
                    saved_.ptr());
  return y;
}

std::pair<Tensor, Tensor> CosineSimilarity::backward(const Tensor& dy) {
  const int64_t n = a_.dim(0);
  if (dy.numel() != n)
    throw std::invalid_argument(fmt::format("CosineSimilarity: gradient {} for {} rows", dy.shape_string(), n));
  Tensor da(a_.shape, DType::kFloat32, device()), db(b_.shape, DType::kFloat32, device());
  k::cosine_backward(context(), std::as_const(a_).ptr(), std::as_const(b_).ptr(), std::as_const(saved_).ptr(), dy.ptr(), static_cast<size_t>(n),
                     static_cast<int>(a_.dim(1)), scale_, da.ptr(), db.ptr());
  return {da, db};
}

}  // namespace paddle::runtime
