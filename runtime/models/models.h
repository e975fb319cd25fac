#pragma once
// The models `train` can build, by name: "fit_a_line" (one Linear layer, as Paddle's example),
// "cnn" (two conv-ReLU-pool stages and two Linear layers, for 28x28 images), "resnet"
// (bottleneck ResNet as in Paddle's image-classification example; resnet.depth 50 is ResNet-50,
// 14 and 26 are shallow variants for CPU tests; resnet.width is the first stage's channels) and
// "recommender" (the two-tower MovieLens model of Paddle's book, models/recommender.h).

#include <optional>
#include <random>

#include "runtime/data/movielens.h"
#include "runtime/models/model_config.h"
#include "runtime/nn/embedding.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

enum class Task { kRegression, kClassification };

struct Model {
  Sequential net;
  Task task = Task::kClassification;
  // Its embedding tables and their input columns: sparse tables in parameter-server mode.
  std::vector<EmbeddingInput> embeddings;
};

// What a model is told about its data set, which the data set's reader knows.
struct DataFacts {
  std::vector<int64_t> sample_shape;            // one sample as the model sees it
  int classes = 0;                              // classification; 0 for regression
  std::optional<MovieLensVocabulary> movielens;  // the recommender's vocabulary sizes
};

// Its net's first layer computes no gradient of the data where it can skip it (a convolution or
// a linear layer then returns an empty tensor from backward). Throws
// common::ConfigError naming a bad setting or data the model can't take.
Model build_model(const ModelConfig& config, const DataFacts& data, std::mt19937& rng);

}  // namespace paddle::runtime
