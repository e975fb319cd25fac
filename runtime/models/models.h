#pragma once
// The models `train` can build, by name: "fit_a_line" (one Linear layer, as Paddle's example),
// "cnn" (two conv-ReLU-pool stages and two Linear layers, for 28x28 images), "resnet"
// (bottleneck ResNet as in Paddle's image-classification example; resnet.depth 50 is ResNet-50,
// 14 and 26 are shallow variants for CPU tests; resnet.width is the first stage's channels) and
// "recommender" (the two-tower MovieLens model of Paddle's book, models/recommender.h).

#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <vector>

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

// What a model's parameter-server tables hold (distributed/layer_tables.h lays a built model's
// parameters out so): each embedding table a sparse table of its row width, in the order of
// Model::embeddings, and every other parameter in one dense vector.
struct ModelTableShapes {
  struct Sparse {
    std::string table;  // the embedding's parameter ("user_id.emb.table")
    size_t dim = 0;
    bool operator==(const Sparse&) const = default;
  };
  size_t dense = 0;  // floats
  std::vector<Sparse> sparse;
  bool operator==(const ModelTableShapes&) const = default;
};

// The tables of the model build_model(config, data, ...) builds, counted from the settings and
// the facts without building it: what a parameter server is told. Throws as build_model does.
ModelTableShapes model_table_shapes(const ModelConfig& config, const DataFacts& data);

}  // namespace paddle::runtime
