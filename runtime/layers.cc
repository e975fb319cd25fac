#include "layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cpu_kernels.h"

namespace paddle::runtime {
namespace k = paddle::kernels::cpu;

void kaiming_uniform(Tensor& t, int64_t fan_in, std::mt19937& rng) {
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in));
  std::uniform_real_distribution<float> dist(-limit, limit);
  for (auto& v : t.data) v = dist(rng);
}

namespace {

void require_rank(const Tensor& x, size_t rank, const char* layer) {
  if (x.shape.size() != rank)
    throw std::invalid_argument(fmt::format("{} expects a rank-{} input, got {}", layer, rank, x.shape_string()));
}

}  // namespace

// ---- Linear ----

Linear::Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name)
    : in_(in), out_(out), weight_(name + ".w", {in, out}), bias_(name + ".b", {out}) {
  kaiming_uniform(weight_.value, in, rng);
}

Tensor Linear::forward(const Tensor& x, bool) {
  require_rank(x, 2, "Linear");
  if (x.dim(1) != in_) throw std::invalid_argument(fmt::format("Linear({}) got input {}", in_, x.shape_string()));
  input_ = x;
  const int n = static_cast<int>(x.dim(0));
  Tensor y({x.dim(0), out_});
  k::gemm(false, false, n, static_cast<int>(out_), static_cast<int>(in_), x.ptr(), weight_.value.ptr(), y.ptr(), false);
  k::add_bias_rows(y.ptr(), bias_.value.ptr(), n, static_cast<int>(out_));
  return y;
}

Tensor Linear::backward(const Tensor& dy) {
  const int n = static_cast<int>(dy.dim(0));
  k::gemm(true, false, static_cast<int>(in_), static_cast<int>(out_), n, input_.ptr(), dy.ptr(), weight_.grad.ptr(),
          true);
  k::bias_grad_rows(dy.ptr(), bias_.grad.ptr(), n, static_cast<int>(out_));
  Tensor dx({dy.dim(0), in_});
  k::gemm(false, true, n, static_cast<int>(in_), static_cast<int>(out_), dy.ptr(), weight_.value.ptr(), dx.ptr(), false);
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
  if (x.dim(1) != in_channels_)
    throw std::invalid_argument(fmt::format("Conv2D({} channels) got input {}", in_channels_, x.shape_string()));
  input_shape_ = x.shape;
  const k::ConvShape s{static_cast<int>(x.dim(1)), static_cast<int>(x.dim(2)), static_cast<int>(x.dim(3)),
                       kernel_, stride_, padding_};
  const int64_t n = x.dim(0), ho = s.out_height(), wo = s.out_width();
  const int64_t rows = in_channels_ * kernel_ * kernel_, positions = ho * wo;
  columns_.resize(static_cast<size_t>(n * rows * positions));
  Tensor y({n, out_channels_, ho, wo});
  const int64_t image_size = x.dim(1) * x.dim(2) * x.dim(3);
  for (int64_t i = 0; i < n; ++i) {
    float* cols = columns_.data() + i * rows * positions;
    k::im2col(x.ptr() + i * image_size, s, cols);
    float* out = y.ptr() + i * out_channels_ * positions;
    k::gemm(false, false, static_cast<int>(out_channels_), static_cast<int>(positions), static_cast<int>(rows),
            weight_.value.ptr(), cols, out, false);
    if (with_bias_)
      for (int64_t c = 0; c < out_channels_; ++c) {
        const float b = bias_.value.data[c];
        for (int64_t p = 0; p < positions; ++p) out[c * positions + p] += b;
      }
  }
  return y;
}

Tensor Conv2D::backward(const Tensor& dy) {
  const k::ConvShape s{static_cast<int>(input_shape_[1]), static_cast<int>(input_shape_[2]),
                       static_cast<int>(input_shape_[3]), kernel_, stride_, padding_};
  const int64_t n = input_shape_[0], positions = dy.dim(2) * dy.dim(3);
  const int64_t rows = in_channels_ * kernel_ * kernel_;
  const int64_t image_size = input_shape_[1] * input_shape_[2] * input_shape_[3];
  Tensor dx(input_shape_);
  std::vector<float> dcols(static_cast<size_t>(rows * positions));
  for (int64_t i = 0; i < n; ++i) {
    const float* g = dy.ptr() + i * out_channels_ * positions;
    const float* cols = columns_.data() + i * rows * positions;
    k::gemm(false, true, static_cast<int>(out_channels_), static_cast<int>(rows), static_cast<int>(positions), g, cols,
            weight_.grad.ptr(), true);
    if (with_bias_)
      for (int64_t c = 0; c < out_channels_; ++c) {
        float sum = 0;
        for (int64_t p = 0; p < positions; ++p) sum += g[c * positions + p];
        bias_.grad.data[c] += sum;
      }
    k::gemm(true, false, static_cast<int>(rows), static_cast<int>(positions), static_cast<int>(out_channels_),
            weight_.value.ptr(), g, dcols.data(), false);
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
  output_ = x;
  for (auto& v : output_.data) v = v > 0 ? v : 0;
  return output_;
}

Tensor ReLU::backward(const Tensor& dy) {
  Tensor dx = dy;
  for (size_t i = 0; i < dx.data.size(); ++i)
    if (output_.data[i] <= 0) dx.data[i] = 0;
  return dx;
}

// ---- pooling ----

Tensor MaxPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "MaxPool2D");
  input_shape_ = x.shape;
  const int h = static_cast<int>(x.dim(2)), w = static_cast<int>(x.dim(3));
  const int64_t ho = (h + 2 * padding_ - kernel_) / stride_ + 1, wo = (w + 2 * padding_ - kernel_) / stride_ + 1;
  Tensor y({x.dim(0), x.dim(1), ho, wo});
  argmax_.resize(y.data.size());
  k::max_pool_forward(x.ptr(), static_cast<int>(x.dim(0) * x.dim(1)), h, w, kernel_, stride_, padding_, y.ptr(),
                      argmax_.data());
  return y;
}

Tensor MaxPool2D::backward(const Tensor& dy) {
  Tensor dx(input_shape_);
  k::max_pool_backward(dy.ptr(), argmax_.data(), static_cast<int>(dy.dim(0) * dy.dim(1)),
                       static_cast<int>(input_shape_[2] * input_shape_[3]), static_cast<int>(dy.dim(2) * dy.dim(3)),
                       dx.ptr());
  return dx;
}

std::string MaxPool2D::describe() const {
  return fmt::format("MaxPool2D({}, stride={}, padding={})", kernel_, stride_, padding_);
}

Tensor AvgPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "AvgPool2D");
  input_shape_ = x.shape;
  const int h = static_cast<int>(x.dim(2)), w = static_cast<int>(x.dim(3));
  used_kernel_ = kernel_ == 0 ? h : kernel_;
  used_stride_ = kernel_ == 0 ? h : stride_;
  const int64_t ho = (h - used_kernel_) / used_stride_ + 1, wo = (w - used_kernel_) / used_stride_ + 1;
  Tensor y({x.dim(0), x.dim(1), ho, wo});
  k::avg_pool_forward(x.ptr(), static_cast<int>(x.dim(0) * x.dim(1)), h, w, used_kernel_, used_stride_, y.ptr());
  return y;
}

Tensor AvgPool2D::backward(const Tensor& dy) {
  Tensor dx(input_shape_);
  k::avg_pool_backward(dy.ptr(), static_cast<int>(dy.dim(0) * dy.dim(1)), static_cast<int>(input_shape_[2]),
                       static_cast<int>(input_shape_[3]), used_kernel_, used_stride_, dx.ptr());
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
  if (!training || p_ <= 0) {
    mask_.assign(x.data.size(), 1.0f);
    return x;
  }
  std::bernoulli_distribution keep(1.0 - p_);
  const float scale = 1.0f / (1.0f - p_);
  mask_.resize(x.data.size());
  Tensor y = x;
  for (size_t i = 0; i < y.data.size(); ++i) {
    mask_[i] = keep(rng_) ? scale : 0.0f;
    y.data[i] *= mask_[i];
  }
  return y;
}

Tensor Dropout::backward(const Tensor& dy) {
  Tensor dx = dy;
  for (size_t i = 0; i < dx.data.size(); ++i) dx.data[i] *= mask_[i];
  return dx;
}

std::string Dropout::describe() const { return fmt::format("Dropout({})", p_); }

// ---- BatchNorm2D ----

BatchNorm2D::BatchNorm2D(int64_t channels, const std::string& name, float momentum, float epsilon)
    : name_(name), channels_(channels), momentum_(momentum), epsilon_(epsilon), scale_(name + ".scale", {channels}),
      shift_(name + ".shift", {channels}), running_mean_({channels}), running_var_({channels}, 1.0f) {
  std::fill(scale_.value.data.begin(), scale_.value.data.end(), 1.0f);
}

Tensor BatchNorm2D::forward(const Tensor& x, bool training) {
  require_rank(x, 4, "BatchNorm2D");
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3), count = n * plane;
  Tensor y(x.shape);
  normalized_ = Tensor(x.shape);
  inv_std_.assign(static_cast<size_t>(c), 0.0f);
  for (int64_t ch = 0; ch < c; ++ch) {
    float mean, var;
    if (training) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < plane; ++p) {
          const double v = x.data[(i * c + ch) * plane + p];
          sum += v;
          sq += v * v;
        }
      mean = static_cast<float>(sum / count);
      var = static_cast<float>(std::max(0.0, sq / count - (sum / count) * (sum / count)));
      running_mean_.data[ch] = momentum_ * running_mean_.data[ch] + (1 - momentum_) * mean;
      running_var_.data[ch] = momentum_ * running_var_.data[ch] + (1 - momentum_) * var;
    } else {
      mean = running_mean_.data[ch];
      var = running_var_.data[ch];
    }
    const float inv = 1.0f / std::sqrt(var + epsilon_);
    inv_std_[ch] = inv;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        normalized_.data[at] = (x.data[at] - mean) * inv;
        y.data[at] = normalized_.data[at] * scale_.value.data[ch] + shift_.value.data[ch];
      }
  }
  return y;
}

Tensor BatchNorm2D::backward(const Tensor& dy) {
  const int64_t n = dy.dim(0), c = dy.dim(1), plane = dy.dim(2) * dy.dim(3), count = n * plane;
  Tensor dx(dy.shape);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        sum_dy += dy.data[at];
        sum_dy_xhat += dy.data[at] * normalized_.data[at];
      }
    scale_.grad.data[ch] += static_cast<float>(sum_dy_xhat);
    shift_.grad.data[ch] += static_cast<float>(sum_dy);
    const float g = scale_.value.data[ch] * inv_std_[ch] / static_cast<float>(count);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t at = static_cast<size_t>((i * c + ch) * plane + p);
        dx.data[at] = g * (static_cast<float>(count) * dy.data[at] - static_cast<float>(sum_dy) -
                           normalized_.data[at] * static_cast<float>(sum_dy_xhat));
      }
  }
  return dx;
}

std::string BatchNorm2D::describe() const { return fmt::format("BatchNorm2D({})", channels_); }

// ---- Embedding ----

Embedding::Embedding(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name)
    : vocabulary_(vocabulary), dim_(dim), table_(name + ".table", {vocabulary, dim}) {
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  for (auto& v : table_.value.data) v = dist(rng);
}

Tensor Embedding::forward(const Tensor& ids, bool) {
  require_rank(ids, 2, "Embedding");
  ids_ = ids;
  Tensor y({ids.dim(0), ids.dim(1) * dim_});
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const auto id = static_cast<int64_t>(ids.data[i]);
    if (id < 0 || id >= vocabulary_)
      throw std::out_of_range(fmt::format("Embedding: id {} outside the vocabulary of {}", id, vocabulary_));
    std::copy_n(table_.value.ptr() + id * dim_, dim_, y.ptr() + i * dim_);
  }
  return y;
}

Tensor Embedding::backward(const Tensor& dy) {
  for (int64_t i = 0; i < ids_.numel(); ++i) {
    const auto id = static_cast<int64_t>(ids_.data[i]);
    float* row = table_.grad.ptr() + id * dim_;
    const float* g = dy.ptr() + i * dim_;
    for (int64_t d = 0; d < dim_; ++d) row[d] += g[d];
  }
  return Tensor(ids_.shape);  // ids have no gradient
}

std::string Embedding::describe() const { return fmt::format("Embedding({}, {})", vocabulary_, dim_); }

}  // namespace paddle::runtime
