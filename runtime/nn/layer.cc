#include "runtime/nn/layer.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "kernels/blocked.h"

namespace paddle::runtime {

void kaiming_uniform(Tensor& t, int64_t fan_in, std::mt19937& rng) {
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in));
  std::uniform_real_distribution<float> dist(-limit, limit);
  for (auto& v : t.values()) v = dist(rng);
}

void Layer::place(Execution& execution) {
  for (Parameter* p : parameters()) {
    p->value = p->value.to(execution.device());
    p->grad = p->grad.to(execution.device());
  }
  for (auto& [name, tensor] : buffers()) *tensor = tensor->to(execution.device());
  execution_ = &execution;
}

bool Layer::on_onednn() const {
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  return context().uses_onednn() && !context().is_cuda();
#else
  return false;
#endif
}

Tensor Layer::to_plain(const Tensor& x) const {
  if (x.is_plain()) return x.share();
  Tensor y = Tensor::uninitialized(x.shape, x.device());
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  kernels::onednn::to_plain(context().onednn(), *x.layout(), x.ptr(), y.ptr());
#else
  throw std::logic_error("a blocked tensor in a build without oneDNN");
#endif
  return y;
}

Tensor Layer::to_layout(const Tensor& x, const kernels::Layout& layout) const {
  if (!x.is_plain()) throw std::logic_error(fmt::format("a tensor in layout {} reordered to {}", x.layout()->name(), layout.name()));
  Tensor y = Tensor::blocked(x.shape, layout);
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  kernels::onednn::from_plain(context().onednn(), layout, x.ptr(), y.ptr());
#else
  throw std::logic_error("a blocked tensor in a build without oneDNN");
#endif
  return y;
}

void Layer::require_device(const Tensor& x, const char* layer) const {
  if (!(x.device() == device()))
    throw std::invalid_argument(fmt::format("{} on {} got an input {}", layer, device().to_string(), x.describe()));
}

void Layer::require_rank(const Tensor& x, size_t rank, const char* layer) {
  if (x.shape.size() != rank)
    throw std::invalid_argument(fmt::format("{} expects a rank-{} input, got {}", layer, rank, x.shape_string()));
}

}  // namespace paddle::runtime
