#pragma once
// The layers models are built from. Shapes: Linear [N,in] -> [N,out]; Conv2D, pools, ReLU,
// Dropout, BatchNorm2D on [N,C,H,W]; Flatten [N,...] -> [N,rest]; Embedding ids [N,slots]
// (int64, or float32 holding whole numbers) -> [N,slots*dim]. Every layer runs on the CPU or,
// once placed there, on a CUDA device.

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Linear : public Layer {
 public:
  Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name);
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  std::string describe() const override;

 private:
  int64_t in_, out_;
  Parameter weight_;  // [in, out]
  Parameter bias_;    // [out]
  Tensor input_;
};

class Conv2D : public Layer {
 public:
  Conv2D(int64_t in_channels, int64_t out_channels, int kernel, int stride, int padding, std::mt19937& rng,
         const std::string& name, bool with_bias = true);
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;

 private:
  int64_t in_channels_, out_channels_;
  int kernel_, stride_, padding_;
  bool with_bias_;
  Parameter weight_;  // [out, in*k*k]
  Parameter bias_;    // [out]
  std::vector<int64_t> input_shape_;
  std::vector<float> columns_;  // CPU: im2col of every image of the batch
  Tensor input_;                // CUDA: the input, for the filter gradient
};

class ReLU : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "ReLU"; }

 private:
  Tensor output_;
};

class MaxPool2D : public Layer {
 public:
  MaxPool2D(int kernel, int stride, int padding = 0) : kernel_(kernel), stride_(stride), padding_(padding) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 private:
  int kernel_, stride_, padding_;
  std::vector<int64_t> input_shape_;
  std::vector<int32_t> argmax_;  // CPU
  Storage device_argmax_;        // CUDA
};

// Average pooling; kernel 0 means global (the whole plane).
class AvgPool2D : public Layer {
 public:
  AvgPool2D(int kernel, int stride) : kernel_(kernel), stride_(stride) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 private:
  int kernel_, stride_;
  std::vector<int64_t> input_shape_;
  int used_kernel_ = 0, used_stride_ = 0;
};

class Flatten : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "Flatten"; }

 private:
  std::vector<int64_t> input_shape_;
};

// Inverted dropout: scales kept activations by 1/(1-p) in training, identity in evaluation.
class Dropout : public Layer {
 public:
  Dropout(float p, uint32_t seed) : p_(p), rng_(seed) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 private:
  float p_;
  std::mt19937 rng_;  // masks are drawn on the host on every device, so runs are reproducible
  Tensor mask_;
};

// Batch normalization over N,H,W per channel, with running statistics for evaluation.
class BatchNorm2D : public Layer {
 public:
  BatchNorm2D(int64_t channels, const std::string& name, float momentum = 0.9f, float epsilon = 1e-5f);
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&scale_, &shift_}; }
  std::vector<std::pair<std::string, Tensor*>> buffers() override {
    return {{name_ + ".mean", &running_mean_}, {name_ + ".var", &running_var_}};
  }
  std::string describe() const override;

 private:
  std::string name_;
  int64_t channels_;
  float momentum_, epsilon_;
  Parameter scale_, shift_;
  Tensor running_mean_, running_var_;
  Tensor normalized_;              // CPU
  std::vector<float> inv_std_;     // CPU
  Tensor input_;                   // CUDA
  Tensor saved_mean_, saved_inv_std_;  // CUDA
};

class Embedding : public Layer {
 public:
  Embedding(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name);
  Tensor forward(const Tensor& ids, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&table_}; }
  std::string describe() const override;

 private:
  int64_t vocabulary_, dim_;
  Parameter table_;  // [vocabulary, dim]
  Tensor ids_;       // int64
};

}  // namespace paddle::runtime
