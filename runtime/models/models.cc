#include "runtime/models/models.h"

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/models/recommender.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/residual.h"

namespace paddle::runtime {

namespace {

std::vector<int> blocks_for_depth(int depth) {
  switch (depth) {
    case 14: return {1, 1, 1, 1};
    case 26: return {2, 2, 2, 2};
    case 50: return {3, 4, 6, 3};
    case 101: return {3, 4, 23, 3};
    case 152: return {3, 8, 36, 3};
  }
  throw common::ConfigError(fmt::format("resnet.depth {} is not 14, 26, 50, 101 or 152", depth));
}

std::unique_ptr<Layer> bottleneck(int64_t in, int64_t mid, int stride, std::mt19937& rng, const std::string& name) {
  Sequential branch;
  branch.add(std::make_unique<Conv2D>(in, mid, 1, 1, 0, rng, name + ".conv1", false))
      .add(std::make_unique<BatchNorm2D>(mid, name + ".bn1"))
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<Conv2D>(mid, mid, 3, stride, 1, rng, name + ".conv2", false))
      .add(std::make_unique<BatchNorm2D>(mid, name + ".bn2"))
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<Conv2D>(mid, mid * 4, 1, 1, 0, rng, name + ".conv3", false))
      .add(std::make_unique<BatchNorm2D>(mid * 4, name + ".bn3"));
  Sequential shortcut;
  if (stride != 1 || in != mid * 4)
    shortcut.add(std::make_unique<Conv2D>(in, mid * 4, 1, stride, 0, rng, name + ".short", false))
        .add(std::make_unique<BatchNorm2D>(mid * 4, name + ".short_bn"));
  return std::make_unique<Residual>(std::move(branch), std::move(shortcut));
}

// What the model needs of its data; throws common::ConfigError naming what is missing.
void check_model_data(const ModelConfig& config, const DataFacts& data) {
  switch (config.kind) {
    case ModelKind::kFitALine:
      if (data.sample_shape.size() != 1) throw common::ConfigError("model fit_a_line needs flat feature vectors");
      break;
    case ModelKind::kCnn:
    case ModelKind::kResnet:
      if (data.sample_shape.size() != 3)
        throw common::ConfigError(fmt::format("model {} needs [C,H,W] images", kModelNames.name(config.kind)));
      break;
    case ModelKind::kRecommender:
      if (!data.movielens)
        throw common::ConfigError("model recommender needs dataset movielens, which gives it its vocabulary sizes");
      break;
    case ModelKind::kWideDeep:
      throw common::ConfigError("model wide_deep trains on parameter servers, not as a collective model");
  }
}

Model recommender(const RecommenderShape& shape, const DataFacts& data, std::mt19937& rng) {
  RecommenderConfig rc;
  rc.vocabulary = *data.movielens;
  rc.id_dim = shape.id_dim;
  rc.category_dim = shape.category_dim;
  rc.bag_dim = shape.bag_dim;
  rc.hidden = shape.hidden;
  rc.scale = shape.scale;
  Model m;
  m.task = Task::kRegression;
  auto model = std::make_unique<Recommender>(rc, rng);
  m.embeddings = model->embedding_inputs();
  m.net.add(std::move(model));
  return m;
}

Model layers_for(const ModelConfig& config, const DataFacts& data, std::mt19937& rng) {
  const std::vector<int64_t>& sample_shape = data.sample_shape;
  const int classes = data.classes;
  check_model_data(config, data);
  Model m;
  if (config.kind == ModelKind::kFitALine) {
    m.task = Task::kRegression;
    m.net.add(std::make_unique<Linear>(sample_shape[0], 1, rng, "fc"));
    return m;
  }
  if (config.kind == ModelKind::kCnn) {
    const auto [c1, c2] = config.cnn.channels;
    const int64_t hidden = config.cnn.hidden;
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
  if (config.kind == ModelKind::kResnet) {
    const std::vector<int> blocks = blocks_for_depth(config.resnet.depth);
    const int64_t width = config.resnet.width;
    m.net.add(std::make_unique<Conv2D>(sample_shape[0], width, 7, 2, 3, rng, "conv1", false))
        .add(std::make_unique<BatchNorm2D>(width, "bn1"))
        .add(std::make_unique<ReLU>())
        .add(std::make_unique<MaxPool2D>(3, 2, 1));
    int64_t in = width;
    for (size_t stage = 0; stage < blocks.size(); ++stage) {
      const int64_t mid = width << stage;
      for (int b = 0; b < blocks[stage]; ++b) {
        const int stride = (b == 0 && stage > 0) ? 2 : 1;
        m.net.add(bottleneck(in, mid, stride, rng, fmt::format("res{}{}", stage + 2, static_cast<char>('a' + b))));
        in = mid * 4;
      }
    }
    m.net.add(std::make_unique<AvgPool2D>(0, 0))
        .add(std::make_unique<Flatten>())
        .add(std::make_unique<Linear>(in, classes, rng, "fc"));
    return m;
  }
  return recommender(config.recommender, data, rng);
}

size_t bottleneck_size(int64_t in, int64_t mid, int stride) {
  size_t n = Conv2D::parameter_count(in, mid, 1, false) + BatchNorm2D::parameter_count(mid) +
             Conv2D::parameter_count(mid, mid, 3, false) + BatchNorm2D::parameter_count(mid) +
             Conv2D::parameter_count(mid, mid * 4, 1, false) + BatchNorm2D::parameter_count(mid * 4);
  if (stride != 1 || in != mid * 4)
    n += Conv2D::parameter_count(in, mid * 4, 1, false) + BatchNorm2D::parameter_count(mid * 4);
  return n;
}

}  // namespace

Model build_model(const ModelConfig& config, const DataFacts& data, std::mt19937& rng) {
  Model m = layers_for(config, data, rng);
  m.net.skip_input_gradient(true);  // its input is the data
  return m;
}

ModelTableShapes model_table_shapes(const ModelConfig& config, const DataFacts& data) {
  check_model_data(config, data);
  const std::vector<int64_t>& shape = data.sample_shape;
  ModelTableShapes tables;
  switch (config.kind) {
    case ModelKind::kFitALine: tables.dense = Linear::parameter_count(shape[0], 1); break;
    case ModelKind::kCnn: {
      const auto [c1, c2] = config.cnn.channels;
      tables.dense = Conv2D::parameter_count(shape[0], c1, 3) + Conv2D::parameter_count(c1, c2, 3) +
                     Linear::parameter_count(c2 * (shape[1] / 4) * (shape[2] / 4), config.cnn.hidden) +
                     Linear::parameter_count(config.cnn.hidden, data.classes);
      break;
    }
    case ModelKind::kResnet: {
      const std::vector<int> blocks = blocks_for_depth(config.resnet.depth);
      const int64_t width = config.resnet.width;
      tables.dense = Conv2D::parameter_count(shape[0], width, 7, false) + BatchNorm2D::parameter_count(width);
      int64_t in = width;
      for (size_t stage = 0; stage < blocks.size(); ++stage)
        for (int b = 0; b < blocks[stage]; ++b) {
          const int64_t mid = width << stage;
          tables.dense += bottleneck_size(in, mid, (b == 0 && stage > 0) ? 2 : 1);
          in = mid * 4;
        }
      tables.dense += Linear::parameter_count(in, data.classes);
      break;
    }
    case ModelKind::kRecommender: return Recommender::table_shapes(config.recommender);
    case ModelKind::kWideDeep: break;  // check_model_data refused it
  }
  return tables;
}

}  // namespace paddle::runtime
