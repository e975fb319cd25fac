#include <doctest/doctest.h>

#include <random>

#include "runtime/distributed/layer_tables.h"
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
  const paddle::ps::TableSpecs specs = tables.specs(100, paddle::common::OptimizerKind::kAdam, 0.5f);
  REQUIRE(specs.dense.size() == 1);
  CHECK(specs.dense[0].size == 7);  // fc.w 6x1 and fc.b 1
  REQUIRE(specs.sparse.size() == 1);
  CHECK(specs.sparse[0].name == "emb.table");
  CHECK(specs.sparse[0].dim == 3);
  CHECK(specs.sparse[0].seed == 100);
  CHECK(specs.update_rule == paddle::common::OptimizerKind::kAdam);
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
