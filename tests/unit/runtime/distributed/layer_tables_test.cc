#include <doctest/doctest.h>

#include <random>

#include "common/error.h"
#include "runtime/distributed/layer_tables.h"
#include "runtime/models/models.h"
#include "runtime/nn/embedding.h"
#include "runtime/nn/linear.h"
#include "runtime/nn/sequential.h"

using namespace paddle::runtime;

namespace {

// ids [N,2] (0 pads) -> Embedding(10, 3) -> [N,6] -> Linear(6, 1).
Sequential bag_model() {
  std::mt19937 rng(7);
  Sequential net;
  net.add(std::make_unique<Embedding>(10, 3, rng, "emb")).add(std::make_unique<Linear>(6, 1, rng, "fc"));
  return net;
}

}  // namespace

TEST_CASE("a layer's embeddings become sparse tables and the rest one dense vector") {
  Sequential net = bag_model();
  LayerTables tables(net, {{"emb.table", 0, 2, true}});
  CHECK(tables.shapes() == ModelTableShapes{7, {{"emb.table", 3}}});
  const paddle::ps::TableSpecs specs = layer_table_specs(tables.shapes(), 100, paddle::common::OptimizerKind::kAdam, 0.5f);
  REQUIRE(specs.dense.size() == 1);
  CHECK(specs.dense[0].size == 7);  // fc.w 6x1 and fc.b 1
  REQUIRE(specs.sparse.size() == 1);
  CHECK(specs.sparse[0].name == "emb.table");
  CHECK(specs.sparse[0].dim == 3);
  CHECK(specs.sparse[0].seed == 100);
  CHECK(specs.update_rule == paddle::common::OptimizerKind::kAdam);
  CHECK(specs.learning_rate == 0.5f);
  CHECK_THROWS_WITH_AS(LayerTables(net, {{"nope.table", 0, 1, false}}), doctest::Contains("no parameter nope.table"),
                       std::invalid_argument);
}

TEST_CASE("a batch's rows go into the tables in place and its row gradients come back per key") {
  Sequential net = bag_model();
  LayerTables tables(net, {{"emb.table", 0, 2, true}});
  const Tensor ids = Tensor::from_values({2, 2}, std::vector<float>{1, 0, 3, 1});
  const auto keys = tables.keys(ids);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0] == std::vector<uint64_t>{1, 3});  // distinct, in order, padding left out

  PsValues values;
  values.dense = {{1, 1, 1, 1, 1, 1, 0.5f}};
  values.keys = keys;
  values.sparse = {{0.1f, 0.2f, 0.3f, 1, 2, 3}};
  tables.set_values(values);
  CHECK(tables.dense_values() == values.dense[0]);
  net.zero_grad();
  const Tensor out = net.forward(ids, true);
  // Sample 1 is ids 3 and 1, through fc.w of ones and fc.b 0.5.
  CHECK(out.values()[1] == doctest::Approx(0.5f + 1 + 2 + 3 + 0.1f + 0.2f + 0.3f));
  net.backward(Tensor::from_values({2, 1}, std::vector<float>{1, 2}));
  const PsValues grads = tables.gradients(keys);
  CHECK(grads.keys == keys);
  // fc.w is all ones, so each id's row gradient is the sum of the output gradients it fed.
  CHECK(grads.sparse[0] == std::vector<float>{1 + 2, 1 + 2, 1 + 2, 2, 2, 2});
  CHECK(grads.dense[0].back() == doctest::Approx(3));  // fc.b: 1 + 2
  values.keys = {{11}};
  values.sparse = {{0, 0, 0}};
  CHECK_THROWS_WITH_AS(tables.set_values(values), doctest::Contains("id 11 outside the vocabulary of 10"), std::out_of_range);
}

TEST_CASE("every model's tables, counted without building it, are those its built layers hold") {
  const auto built = [](const ModelConfig& config, const DataFacts& facts) {
    std::mt19937 rng(1);
    Model m = build_model(config, facts, rng);
    return LayerTables(m.net, m.embeddings).shapes();
  };
  ModelConfig config;
  DataFacts housing;
  housing.sample_shape = {13};
  config.kind = ModelKind::kFitALine;
  CHECK(model_table_shapes(config, housing) == ModelTableShapes{14, {}});
  CHECK(model_table_shapes(config, housing) == built(config, housing));

  DataFacts images;
  images.sample_shape = {1, 28, 28};
  images.classes = 10;
  config.kind = ModelKind::kCnn;
  CHECK(model_table_shapes(config, images) == built(config, images));
  config.cnn.channels = {4, 8};
  config.cnn.hidden = 32;
  images.sample_shape = {3, 20, 12};  // image_shape's resizing, odd sizes
  CHECK(model_table_shapes(config, images) == built(config, images));

  config.kind = ModelKind::kResnet;
  config.resnet.depth = 14;
  config.resnet.width = 4;
  CHECK(model_table_shapes(config, images) == built(config, images));
  config.resnet.depth = 26;
  CHECK(model_table_shapes(config, images) == built(config, images));

  DataFacts ratings;
  ratings.movielens = MovieLensVocabulary{};
  ratings.movielens->users = 944;
  ratings.movielens->occupations = 21;
  ratings.movielens->movies = 1683;
  ratings.movielens->genres = 19;
  ratings.movielens->words = 2000;
  ratings.movielens->genre_slots = 6;
  ratings.movielens->title_slots = 9;
  ratings.sample_shape = {ratings.movielens->features()};
  config.kind = ModelKind::kRecommender;
  const ModelTableShapes recommender = model_table_shapes(config, ratings);
  CHECK(recommender == built(config, ratings));
  REQUIRE(recommender.sparse.size() == 7);
  CHECK(recommender.sparse[0] == ModelTableShapes::Sparse{"user_id.emb.table", 32});
  ratings.movielens->words = 9000;  // the vocabulary sizes the sparse tables' rows, not their shapes
  CHECK(model_table_shapes(config, ratings) == recommender);

  config.kind = ModelKind::kCnn;
  CHECK_THROWS_WITH_AS(model_table_shapes(config, housing), "model cnn needs [C,H,W] images", paddle::common::ConfigError);
  config.kind = ModelKind::kRecommender;
  CHECK_THROWS_WITH_AS(model_table_shapes(config, housing), doctest::Contains("needs dataset movielens"),
                       paddle::common::ConfigError);
}
