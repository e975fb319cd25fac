#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace paddle::kernels::cpu {
namespace {

// The cells of one channel of [N,C,H,W] as (image, offset) pairs: at(i, p) is the flat index.
struct ChannelCells {
  const BatchNormShape& s;
  int channel;
  size_t plane() const { return static_cast<size_t>(s.height) * s.width; }
  size_t at(int image, size_t p) const { return (static_cast<size_t>(image) * s.channels + channel) * plane() + p; }
};

struct Moments {
  float mean, var;
};

// The batch's mean and (biased) variance of one channel, summed in double.
Moments batch_moments(const ChannelCells& cells, const float* x) {
  const double count = static_cast<double>(cells.s.batch) * static_cast<double>(cells.plane());
  double sum = 0, sq = 0;
  for (int i = 0; i < cells.s.batch; ++i)
    for (size_t p = 0; p < cells.plane(); ++p) {
      const double v = x[cells.at(i, p)];
      sum += v;
      sq += v * v;
    }
  return {static_cast<float>(sum / count),
          static_cast<float>(std::max(0.0, sq / count - (sum / count) * (sum / count)))};
}

void normalize(const ChannelCells& cells, const float* x, float* y, float mean, float inv, float scale, float shift) {
  for (int i = 0; i < cells.s.batch; ++i)
    for (size_t p = 0; p < cells.plane(); ++p) {
      const size_t at = cells.at(i, p);
      const float xhat = (x[at] - mean) * inv;
      y[at] = xhat * scale + shift;
    }
}

}  // namespace

void batch_norm_forward_training(const BatchNormShape& s, const float* x, float* y, const float* scale,
                                 const float* shift, float* running_mean, float* running_var, float* saved_mean,
                                 float* saved_inv_std, float momentum, float epsilon) {
  for (int ch = 0; ch < s.channels; ++ch) {
    const ChannelCells cells{s, ch};
    const Moments m = batch_moments(cells, x);
    running_mean[ch] = momentum * running_mean[ch] + (1 - momentum) * m.mean;
    running_var[ch] = momentum * running_var[ch] + (1 - momentum) * m.var;
    const float inv = 1.0f / std::sqrt(m.var + epsilon);
    saved_mean[ch] = m.mean;
    saved_inv_std[ch] = inv;
    normalize(cells, x, y, m.mean, inv, scale[ch], shift[ch]);
  }
}

void batch_norm_forward_inference(const BatchNormShape& s, const float* x, float* y, const float* scale,
                                  const float* shift, const float* running_mean, const float* running_var,
                                  float epsilon) {
  for (int ch = 0; ch < s.channels; ++ch) {
    const float inv = 1.0f / std::sqrt(running_var[ch] + epsilon);
    normalize(ChannelCells{s, ch}, x, y, running_mean[ch], inv, scale[ch], shift[ch]);
  }
}

// x-hat is recomputed from x and the saved statistics: the same expression as the forward pass,
// so the same floats.
void batch_norm_backward(const BatchNormShape& s, const float* x, const float* dy, const float* scale,
                         const float* saved_mean, const float* saved_inv_std, float* dx, float* dscale, float* dshift,
                         float) {
  const float count = static_cast<float>(static_cast<int64_t>(s.batch) * s.height * s.width);
  for (int ch = 0; ch < s.channels; ++ch) {
    const ChannelCells cells{s, ch};
    const float mean = saved_mean[ch], inv = saved_inv_std[ch];
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int i = 0; i < s.batch; ++i)
      for (size_t p = 0; p < cells.plane(); ++p) {
        const size_t at = cells.at(i, p);
        sum_dy += dy[at];
        sum_dy_xhat += dy[at] * ((x[at] - mean) * inv);
      }
    dscale[ch] += static_cast<float>(sum_dy_xhat);
    dshift[ch] += static_cast<float>(sum_dy);
    const float factor = scale[ch] * inv / count;
    for (int i = 0; i < s.batch; ++i)
      for (size_t p = 0; p < cells.plane(); ++p) {
        const size_t at = cells.at(i, p);
        const float xhat = (x[at] - mean) * inv;
        dx[at] = factor * (count * dy[at] - static_cast<float>(sum_dy) - xhat * static_cast<float>(sum_dy_xhat));
      }
  }
}

}  // namespace paddle::kernels::cpu
