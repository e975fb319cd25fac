#pragma once
// The models `train` can build, by name: "fit_a_line" (one Linear layer, as Paddle's example)
// and "cnn" (two conv-ReLU-pool stages and two Linear layers, for 28x28 images).

#include <nlohmann/json.hpp>
#include <random>

#include "sequential.h"

namespace paddle::runtime {

enum class Task { kRegression, kClassification };

struct Model {
  Sequential net;
  Task task = Task::kClassification;
};

// Throws ConfigError naming an unknown model or a bad setting.
Model build_model(const nlohmann::json& config, const std::vector<int64_t>& sample_shape, int classes,
                  std::mt19937& rng);

}  // namespace paddle::runtime
