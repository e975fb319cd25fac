#include "runtime/nn/layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu_kernels.h"
#include "kernels/cuda_kernels.h"

namespace paddle::runtime {
namespace k = paddle::kernels::cpu;
namespace gpu = paddle::kernels::cuda;

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

void Layer::require_device(const Tensor& x, const char* layer) const {
  if (!(x.device() == device()))
    throw std::invalid_argument(fmt::format("{} on {} got an input {}", layer, device().to_string(), x.describe()));
}

namespace {

void require_rank(const Tensor& x, size_t rank, const char* layer) {
  if (x.shape.size() != rank)
    throw std::invalid_argument(fmt::format("{} expects a rank-{} input, got {}", layer, rank, x.shape_string()));
}

int as_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

// ---- Linear ----

Linear::Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name)
    : in_(in), out_(out), weight_(name + ".w", {in, out}), bias_(name + ".b", {out}) {
  kaiming_uniform(weight_.value, in, rng);
}

Tensor Linear::forward(const Tensor& x, bool) {
  require_rank(x, 2, "Linear");
  require_device(x, "Linear");
  if (x.dim(1) != in_) throw std::invalid_argument(fmt::format("Linear({}) got input {}", in_, x.shape_string()));
  input_ = x;
  const int n = as_int(x.dim(0));
  Tensor y({x.dim(0), out_}, DType::kFloat32, x.device());
  if (on_cuda()) {
    gpu::gemm(cuda(), false, false, n, as_int(out_), as_int(in_), x.ptr(), weight_.value.ptr(), y.ptr(), false);
    gpu::add_bias_rows(cuda(), y.ptr(), bias_.value.ptr(), n, as_int(out_));
  } else {
    k::gemm(false, false, n, as_int(out_), as_int(in_), x.ptr(), weight_.value.ptr(), y.ptr(), false);
    k::add_bias_rows(y.ptr(), bias_.value.ptr(), n, as_int(out_));
  }
  return y;
}

Tensor Linear::backward(const Tensor& dy) {
  const int n = as_int(dy.dim(0));
  Tensor dx({dy.dim(0), in_}, DType::kFloat32, dy.device());
  if (on_cuda()) {
    gpu::gemm(cuda(), true, false, as_int(in_), as_int(out_), n, input_.ptr(), dy.ptr(), weight_.grad.ptr(), true);
    gpu::bias_grad_rows(cuda(), dy.ptr(), bias_.grad.ptr(), n, as_int(out_));
    gpu::gemm(cuda(), false, true, n, as_int(in_), as_int(out_), dy.ptr(), weight_.value.ptr(), dx.ptr(), false);
  } else {
    k::gemm(true, false, as_int(in_), as_int(out_), n, input_.ptr(), dy.ptr(), weight_.grad.ptr(), true);
    k::bias_grad_rows(dy.ptr(), bias_.grad.ptr(), n, as_int(out_));
    k::gemm(false, true, n, as_int(in_), as_int(out_), dy.ptr(), weight_.value.ptr(), dx.ptr(), false);
  }
  return dx;
}

std::string Linear::describe() const { return fmt::format("Linear({}, {})", in_, out_); }

// ---- Conv2D ----

Conv2D::Conv2D(int64_t in_channels, int64_t out_channels, int kernel, int stride, int padding, std::mt19937& rng,
               const std::string& name, bool with_bias)
    : in_channels_(in_channels), out_channels_(out_channels), kernel_(kernel), stride_(stride), padding_(padding),
      with_bias_(with_bias), weight_(name + ".w", {out_channels, in_channels * kernel * kernel}),
      bias_(name + ".b", {out_channels}) {
  kaiming_uniform(weight_.value, in_channels * kernel * kernel, rng);
}

std::vector<Parameter*> Conv2D::parameters() {
  if (with_bias_) return {&weight_, &bias_};
  return {&weight_};
}

Tensor Conv2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "Conv2D");
  require_device(x, "Conv2D");
  if (x.dim(1) != in_channels_)
    throw std::invalid_argument(fmt::format("Conv2D({} channels) got input {}", in_channels_, x.shape_string()));
  input_shape_ = x.shape;
  const k::ConvShape s{as_int(x.dim(1)), as_int(x.dim(2)), as_int(x.dim(3)), kernel_, stride_, padding_};
  const int64_t n = x.dim(0), ho = s.out_height(), wo = s.out_width();
  const int64_t rows = in_channels_ * kernel_ * kernel_, positions = ho * wo;
  Tensor y({n, out_channels_, ho, wo}, DType::kFloat32, x.device());
  if (on_cuda()) {
    input_ = x;
    gpu::conv2d_forward(cuda(), s, as_int(n), as_int(out_channels_), x.ptr(), weight_.value.ptr(), y.ptr());
    if (with_bias_)
      gpu::add_channel_bias(cuda(), y.ptr(), bias_.value.ptr(), as_int(n), as_int(out_channels_), as_int(positions));
    return y;
  }
  columns_.resize(static_cast<size_t>(n * rows * positions));
  const int64_t image_size = x.dim(1) * x.dim(2) * x.dim(3);
  const float* bias = bias_.value.ptr();
  for (int64_t i = 0; i < n; ++i) {
    float* cols = columns_.data() + i * rows * positions;
    k::im2col(x.ptr() + i * image_size, s, cols);
    float* out = y.ptr() + i * out_channels_ * positions;
    k::gemm(false, false, as_int(out_channels_), as_int(positions), as_int(rows), weight_.value.ptr(), cols, out, false);
    if (with_bias_)
      for (int64_t c = 0; c < out_channels_; ++c)
        for (int64_t p = 0; p < positions; ++p) out[c * positions + p] += bias[c];
  }
  return y;
}

Tensor Conv2D::backward(const Tensor& dy) {
  const k::ConvShape s{as_int(input_shape_[1]), as_int(input_shape_[2]), as_int(input_shape_[3]), kernel_, stride_,
                       padding_};
  const int64_t n = input_shape_[0], positions = dy.dim(2) * dy.dim(3);
  const int64_t rows = in_channels_ * kernel_ * kernel_;
  const int64_t image_size = input_shape_[1] * input_shape_[2] * input_shape_[3];
  Tensor dx(input_shape_, DType::kFloat32, dy.device());
  if (on_cuda()) {
    gpu::conv2d_backward_filter(cuda(), s, as_int(n), as_int(out_channels_), input_.ptr(), dy.ptr(), weight_.grad.ptr());
    if (with_bias_)
      gpu::channel_bias_grad(cuda(), dy.ptr(), bias_.grad.ptr(), as_int(n), as_int(out_channels_), as_int(positions));
    gpu::conv2d_backward_data(cuda(), s, as_int(n), as_int(out_channels_), weight_.value.ptr(), dy.ptr(), dx.ptr());
    return dx;
  }
  std::vector<float> dcols(static_cast<size_t>(rows * positions));
  float* bias_grad = bias_.grad.ptr();
  for (int64_t i = 0; i < n; ++i) {
    const float* g = dy.ptr() + i * out_channels_ * positions;
    const float* cols = columns_.data() + i * rows * positions;
    k::gemm(false, true, as_int(out_channels_), as_int(rows), as_int(positions), g, cols, weight_.grad.ptr(), true);
    if (with_bias_)
      for (int64_t c = 0; c < out_channels_; ++c) {
        float sum = 0;
        for (int64_t p = 0; p < positions; ++p) sum += g[c * positions + p];
        bias_grad[c] += sum;
      }
    k::gemm(true, false, as_int(rows), as_int(positions), as_int(out_channels_), weight_.value.ptr(), g, dcols.data(),
            false);
    k::col2im(dcols.data(), s, dx.ptr() + i * image_size);
  }
  return dx;
}

std::string Conv2D::describe() const {
  return fmt::format("Conv2D({}, {}, kernel={}, stride={}, padding={})", in_channels_, out_channels_, kernel_, stride_,
                     padding_);
}

// ---- ReLU ----

Tensor ReLU::forward(const Tensor& x, bool) {
  require_device(x, "ReLU");
  if (on_cuda()) {
    output_ = Tensor(x.shape, DType::kFloat32, x.device());
    gpu::relu_forward(cuda(), x.ptr(), output_.ptr(), static_cast<size_t>(x.numel()));
    return output_;
  }
  output_ = x;
  for (auto& v : output_.values()) v = v > 0 ? v : 0;
  return output_;
}

Tensor ReLU::backward(const Tensor& dy) {
  if (on_cuda()) {
    Tensor dx(dy.shape, DType::kFloat32, dy.device());
    gpu::relu_backward(cuda(), output_.ptr(), dy.ptr(), dx.ptr(), static_cast<size_t>(dy.numel()));
    return dx;
  }
  Tensor dx = dy;
  auto g = dx.values();
  auto y = output_.values();
  for (size_t i = 0; i < g.size(); ++i)
    if (y[i] <= 0) g[i] = 0;
  return dx;
}

// ---- pooling ----

Tensor MaxPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "MaxPool2D");
  require_device(x, "MaxPool2D");
  input_shape_ = x.shape;
  const int h = as_int(x.dim(2)), w = as_int(x.dim(3));
  const int64_t ho = (h + 2 * padding_ - kernel_) / stride_ + 1, wo = (w + 2 * padding_ - kernel_) / stride_ + 1;
  Tensor y({x.dim(0), x.dim(1), ho, wo}, DType::kFloat32, x.device());
  const int planes = as_int(x.dim(0) * x.dim(1));
  if (on_cuda()) {
    const size_t bytes = static_cast<size_t>(y.numel()) * sizeof(int32_t);
    if (device_argmax_.bytes() != bytes) device_argmax_ = Storage(bytes, x.device());
    gpu::max_pool_forward(cuda(), x.ptr(), planes, h, w, kernel_, stride_, padding_, y.ptr(),
                          static_cast<int32_t*>(device_argmax_.get()));
    return y;
  }
  argmax_.resize(static_cast<size_t>(y.numel()));
  k::max_pool_forward(x.ptr(), planes, h, w, kernel_, stride_, padding_, y.ptr(), argmax_.data());
  return y;
}

Tensor MaxPool2D::backward(const Tensor& dy) {
  Tensor dx(input_shape_, DType::kFloat32, dy.device());
  const int planes = as_int(dy.dim(0) * dy.dim(1));
  const int in_size = as_int(input_shape_[2] * input_shape_[3]), out_size = as_int(dy.dim(2) * dy.dim(3));
  if (on_cuda())
    gpu::max_pool_backward(cuda(), dy.ptr(), static_cast<const int32_t*>(device_argmax_.get()), planes, in_size,
                           out_size, dx.ptr());
  else
    k::max_pool_backward(dy.ptr(), argmax_.data(), planes, in_size, out_size, dx.ptr());
  return dx;
}

std::string MaxPool2D::describe() const {
  return fmt::format("MaxPool2D({}, stride={}, padding={})", kernel_, stride_, padding_);
}

Tensor AvgPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "AvgPool2D");
  require_device(x, "AvgPool2D");
  input_shape_ = x.shape;
  const int h = as_int(x.dim(2)), w = as_int(x.dim(3));
  used_kernel_ = kernel_ == 0 ? h : kernel_;
  used_stride_ = kernel_ == 0 ? h : stride_;
  const int64_t ho = (h - used_kernel_) / used_stride_ + 1, wo = (w - used_kernel_) / used_stride_ + 1;
  Tensor y({x.dim(0), x.dim(1), ho, wo}, DType::kFloat32, x.device());
  const int planes = as_int(x.dim(0) * x.dim(1));
  if (on_cuda())
    gpu::avg_pool_forward(cuda(), x.ptr(), planes, h, w, used_kernel_, used_stride_, y.ptr());
  else
    k::avg_pool_forward(x.ptr(), planes, h, w, used_kernel_, used_stride_, y.ptr());
  return y;
}

Tensor AvgPool2D::backward(const Tensor& dy) {
  Tensor dx(input_shape_, DType::kFloat32, dy.device());
  const int planes = as_int(dy.dim(0) * dy.dim(1)), h = as_int(input_shape_[2]), w = as_int(input_shape_[3]);
  if (on_cuda())
    gpu::avg_pool_backward(cuda(), dy.ptr(), planes, h, w, used_kernel_, used_stride_, dx.ptr());
  else
    k::avg_pool_backward(dy.ptr(), planes, h, w, used_kernel_, used_stride_, dx.ptr());
  return dx;
}

std::string AvgPool2D::describe() const {
  return kernel_ == 0 ? "AvgPool2D(global)" : fmt::format("AvgPool2D({}, stride={})", kernel_, stride_);
}

// ---- Flatten ----

Tensor Flatten::forward(const Tensor& x, bool) {
  input_shape_ = x.shape;
  Tensor y = x;
  y.shape = {x.dim(0), x.numel() / x.dim(0)};
  return y;
}

Tensor Flatten::backward(const Tensor& dy) {
  Tensor dx = dy;
  dx.shape = input_shape_;
  return dx;
}

// ---- Dropout ----

Tensor Dropout::forward(const Tensor& x, bool training) {
  require_device(x, "Dropout");
  if (!training || p_ <= 0) {
    mask_ = Tensor(x.shape, 1.0f, x.device());
    return x;
  }
  std::bernoulli_distribution keep(1.0 - p_);
  const float scale = 1.0f / (1.0f - p_);
  Tensor mask(x.shape);
  for (auto& m : mask.values()) m = keep(rng_) ? scale : 0.0f;
  mask_ = mask.to(x.device());
  if (on_cuda()) {
    Tensor y(x.shape, DType::kFloat32, x.device());
    gpu::multiply(cuda(), x.ptr(), mask_.ptr(), y.ptr(), static_cast<size_t>(x.numel()));
    return y;
  }
  Tensor y = x;
  auto v = y.values();
  auto m = mask_.values();
  for (size_t i = 0; i < v.size(); ++i) v[i] *= m[i];
  return y;
}

Tensor Dropout::backward(const Tensor& dy) {
  if (on_cuda()) {
    Tensor dx(dy.shape, DType::kFloat32, dy.device());
    gpu::multiply(cuda(), dy.ptr(), mask_.ptr(), dx.ptr(), static_cast<size_t>(dy.numel()));
    return dx;
  }
  Tensor dx = dy;
  auto g = dx.values();
  auto m = mask_.values();
  for (size_t i = 0; i < g.size(); ++i) g[i] *= m[i];
  return dx;
}

std::string Dropout::describe() const { return fmt::format("Dropout({})", p_); }

// ---- BatchNorm2D ----

BatchNorm2D::BatchNorm2D(int64_t channels, const std::string& name, float momentum, float epsilon)
    : name_(name), channels_(channels), momentum_(momentum), epsilon_(epsilon), scale_(name + ".scale", {channels}),
      shift_(name + ".shift", {channels}), running_mean_({channels}), running_var_({channels}, 1.0f) {
  scale_.value = Tensor({channels}, 1.0f);
}

Tensor BatchNorm2D::forward(const Tensor& x, bool training) {
  require_rank(x, 4, "BatchNorm2D");
  require_device(x, "BatchNorm2D");
  if (x.dim(1) != channels_)
    throw std::invalid_argument(fmt::format("BatchNorm2D({}) got input {}", channels_, x.shape_string()));
  if (on_cuda()) {
    const gpu::BatchNormShape s{as_int(x.dim(0)), as_int(x.dim(1)), as_int(x.dim(2)), as_int(x.dim(3))};
    Tensor y(x.shape, DType::kFloat32, x.device());
    if (training) {
      input_ = x;
      saved_mean_ = Tensor({channels_}, DType::kFloat32, x.device());
      saved_inv_std_ = Tensor({channels_}, DType::kFloat32, x.device());
      gpu::batch_norm_forward_training(cuda(), s, x.ptr(), y.ptr(), scale_.value.ptr(), shift_.value.ptr(),
                                       running_mean_.ptr(), running_var_.ptr(), saved_mean_.ptr(),
                                       saved_inv_std_.ptr(), momentum_, epsilon_);
    } else {
      gpu::batch_norm_forward_inference(cuda(), s, x.ptr(), y.ptr(), scale_.value.ptr(), shift_.value.ptr(),
                                        running_mean_.ptr(), running_var_.ptr(), epsilon_);
    }
    return y;
  }
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3), count = n * plane;
  Tensor y(x.shape);
  normalized_ = Tensor(x.shape);
  inv_std_.assign(static_cast<size_t>(c), 0.0f);
  auto in = x.values();
  auto out = y.values();
  auto xhat = normalized_.values();
  auto scale = scale_.value.values(), shift = shift_.value.values();
  auto running_mean = running_mean_.values(), running_var = running_var_.values();
  for (int64_t ch = 0; ch < c; ++ch) {
    float mean, var;
    if (training) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          const double v = in[static_cast<size_t>((i * c + ch) * plane + p)];
          sum += v;
          sq += v * v;
        }
      mean = static_cast<float>(sum / count);
      var = static_cast<float>(std::max(0.0, sq / count - (sum / count) * (sum / count)));
      running_mean[ch] = momentum_ * running_mean[ch] + (1 - momentum_) * mean;
      running_var[ch] = momentum_ * running_var[ch] + (1 - momentum_) * var;
    } else {
      mean = running_mean[ch];
      var = running_var[ch];
    }
    const float inv = 1.0f / std::sqrt(var + epsilon_);
    inv_std_[ch] = inv;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        xhat[at] = (in[at] - mean) * inv;
        out[at] = xhat[at] * scale[ch] + shift[ch];
      }
  }
  return y;
}

Tensor BatchNorm2D::backward(const Tensor& dy) {
  if (on_cuda()) {
    const gpu::BatchNormShape s{as_int(dy.dim(0)), as_int(dy.dim(1)), as_int(dy.dim(2)), as_int(dy.dim(3))};
    Tensor dx(dy.shape, DType::kFloat32, dy.device());
    gpu::batch_norm_backward(cuda(), s, input_.ptr(), dy.ptr(), scale_.value.ptr(), saved_mean_.ptr(),
                             saved_inv_std_.ptr(), dx.ptr(), scale_.grad.ptr(), shift_.grad.ptr(), epsilon_);
    return dx;
  }
  const int64_t n = dy.dim(0), c = dy.dim(1), plane = dy.dim(2) * dy.dim(3), count = n * plane;
  Tensor dx(dy.shape);
  auto g = dy.values();
  auto out = dx.values();
  auto xhat = normalized_.values();
  auto scale = scale_.value.values();
  auto dscale = scale_.grad.values(), dshift = shift_.grad.values();
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        sum_dy += g[at];
        sum_dy_xhat += g[at] * xhat[at];
      }
    dscale[ch] += static_cast<float>(sum_dy_xhat);
    dshift[ch] += static_cast<float>(sum_dy);
    const float factor = scale[ch] * inv_std_[ch] / static_cast<float>(count);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        out[at] = factor * (static_cast<float>(count) * g[at] - static_cast<float>(sum_dy) -
                           xhat[at] * static_cast<float>(sum_dy_xhat));
      }
  }
  return dx;
}

std::string BatchNorm2D::describe() const { return fmt::format("BatchNorm2D({})", channels_); }

// ---- Embedding ----

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
  if (on_cuda()) {
    const int64_t bad = gpu::embedding_forward(cuda(), table_.value.ptr(), ids_.id_ptr(), count, as_int(dim_),
                                               vocabulary_, y.ptr());
    if (bad >= 0)
      throw std::out_of_range(fmt::format("Embedding: id {} outside the vocabulary of {}", bad, vocabulary_));
    return y;
  }
  auto ids = ids_.ids();
  for (size_t i = 0; i < count; ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= vocabulary_)
      throw std::out_of_range(fmt::format("Embedding: id {} outside the vocabulary of {}", id, vocabulary_));
    std::copy_n(table_.value.ptr() + id * dim_, dim_, y.ptr() + static_cast<int64_t>(i) * dim_);
  }
  return y;
}

Tensor Embedding::backward(const Tensor& dy) {
  const size_t count = static_cast<size_t>(ids_.numel());
  if (on_cuda()) {
    gpu::embedding_backward(cuda(), ids_.id_ptr(), count, as_int(dim_), dy.ptr(), table_.grad.ptr());
  } else {
    auto ids = ids_.ids();
    for (size_t i = 0; i < count; ++i) {
      float* row = table_.grad.ptr() + ids[i] * dim_;
      const float* g = dy.ptr() + static_cast<int64_t>(i) * dim_;
      for (int64_t d = 0; d < dim_; ++d) row[d] += g[d];
    }
  }
  return Tensor(ids_.shape, DType::kFloat32, ids_.device());  // ids have no gradient
}

std::string Embedding::describe() const { return fmt::format("Embedding({}, {})", vocabulary_, dim_); }

}  // namespace paddle::runtime
