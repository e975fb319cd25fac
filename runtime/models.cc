#include "models.h"

#include <fmt/format.h>

#include "layers.h"
#include "train_config.h"

namespace paddle::runtime {

Model build_model(const nlohmann::json& config, const std::vector<int64_t>& sample_shape, int classes,
                  std::mt19937& rng) {
  Model m;
  const std::string name = config.at("model");
  if (name == "fit_a_line") {
    if (sample_shape.size() != 1) throw ConfigError("model fit_a_line needs flat feature vectors");
    m.task = Task::kRegression;
    m.net.add(std::make_unique<Linear>(sample_shape[0], 1, rng, "fc"));
    return m;
  }
  if (name == "cnn") {
    if (sample_shape.size() != 3) throw ConfigError("model cnn needs [C,H,W] images");
    const auto& c = config.at("cnn");
    const int64_t c1 = c.at("channels").at(0), c2 = c.at("channels").at(1), hidden = c.at("hidden");
    int64_t h = sample_shape[1], w = sample_shape[2];
    m.net.add(std::make_unique<Conv2D>(sample_shape[0], c1, 3, 1, 1, rng, "conv1"))
        .add(std::make_unique<ReLU>())
        .add(std::make_unique<MaxPool2D>(2, 2))
        .add(std::make_unique<Conv2D>(c1, c2, 3, 1, 1, rng, "conv2"))
        .add(std::make_unique<ReLU>())
        .add(std::make_unique<MaxPool2D>(2, 2))
        .add(std::make_unique<Flatten>())
        .add(std::make_unique<Linear>(c2 * (h / 4) * (w / 4), hidden, rng, "fc1"))
        .add(std::make_unique<ReLU>())
        .add(std::make_unique<Linear>(hidden, classes, rng, "fc2"));
    return m;
  }
  throw ConfigError(fmt::format("model '{}' is not fit_a_line or cnn", name));
}

}  // namespace paddle::runtime
