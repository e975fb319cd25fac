#pragma once
// The models `train` can build, by name: "fit_a_line" (one Linear layer, as Paddle's example),
// "cnn" (two conv-ReLU-pool stages and two Linear layers, for 28x28 images) and "resnet"
// (bottleneck ResNet as in Paddle's image-classification example; resnet.depth 50 is ResNet-50,
// 14 and 26 are shallow variants for CPU tests; resnet.width is the first stage's channels).

#include <nlohmann/json.hpp>
#include <random>

#include "runtime/nn/sequential.h"

namespace paddle::runtime {

enum class Task { kRegression, kClassification };

struct Model {
  Sequential net;
  Task task = Task::kClassification;
};

// Throws common::ConfigError naming an unknown model or a bad setting.
Model build_model(const nlohmann::json& config, const std::vector<int64_t>& sample_shape, int classes,
                  std::mt19937& rng);

}  // namespace paddle::runtime
