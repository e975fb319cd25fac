#pragma once
// Recommender: the two-tower rating model of Paddle's book (recommender_system) for the MovieLens
// samples of runtime/data/movielens.h ([N, 5+G+T] floats holding ids -> [N,1] ratings).
//
//   user tower:  user id, gender, age bucket, occupation: each Embedding then Linear;
//                concatenated, Linear(hidden), Tanh
//   movie tower: movie id Embedding then Linear; the mean of the genre embeddings; the mean of
//                the title-word embeddings (bag of words); concatenated, Linear(hidden), Tanh
//   output:      scale * cos(user, movie), scale 5 for ratings 1..5
//
// One Layer, so DataParallel, checkpoints and optimizers see its parameters like any other's.
// It runs on the CPU or a CUDA device, wherever place() puts it: every op, the column slices of
// its input included, is a kernel twin of kernels/, so its tensors stay on that device.

#include <nlohmann/json.hpp>
#include <random>

#include "runtime/data/movielens.h"
#include "runtime/models/model_config.h"
#include "runtime/models/models.h"
#include "runtime/nn/cosine.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

struct RecommenderConfig {
  MovieLensVocabulary vocabulary;
  int64_t id_dim = 32;        // user and movie id embeddings and their Linear layers
  int64_t category_dim = 16;  // gender, age bucket and occupation embeddings and their Linear layers
  int64_t bag_dim = 32;       // genre and title-word embeddings
  int64_t hidden = 200;       // each tower's output
  float scale = 5.0f;
};

// Ids [N,S] (0 is padding) -> [N,dim], the mean of the embeddings of each row's non-zero ids;
// a row of padding only gives zeros (kernels/embedding.h, bag_mean_*).
class BagOfEmbeddings : public Layer {
 public:
  BagOfEmbeddings(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name)
      : table_(vocabulary, dim, rng, name), dim_(dim) {}
  Tensor forward(const Tensor& ids, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return table_.parameters(); }
  std::string describe() const override { return "BagOfEmbeddings(" + table_.describe() + ")"; }
  void place(Execution& execution) override;

 private:
  Embedding table_;
  int64_t dim_;
  int64_t slots_ = 0;
  Tensor weights_;  // [N,S]: 1/count for a real id, 0 for padding
};

class Recommender : public Layer {
 public:
  Recommender(const RecommenderConfig& config, std::mt19937& rng);
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;
  void place(Execution& execution) override;
  // Its seven embedding tables and the input columns of their ids, for training them as
  // sparse tables on parameter servers; the genre and title bags are padded with id 0.
  std::vector<EmbeddingInput> embedding_inputs() const;
  // Its parameter-server tables without building it: the seven embedding tables, and the dense
  // rest (each field's Linear and the towers' heads), whose sizes the vocabulary does not change.
  static ModelTableShapes table_shapes(const RecommenderShape& shape);

 private:
  RecommenderConfig config_;
  std::vector<Sequential> user_fields_;  // user id, gender, age bucket, occupation
  Sequential user_head_;
  Sequential movie_id_;
  BagOfEmbeddings genres_, titles_;
  Sequential movie_head_;
  CosineSimilarity cosine_;
  std::vector<int64_t> input_shape_;
};

}  // namespace paddle::runtime
