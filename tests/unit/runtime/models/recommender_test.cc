#include "runtime/models/recommender.h"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "runtime/nn/tanh.h"
#include "tests/unit/runtime/models/recommender_fixture.h"
#include "tests/unit/runtime/nn/gradient_check.h"

using namespace paddle::runtime;
using paddle::runtime::testing::check_gradients;
using paddle::runtime::testing::random_tensor;
using paddle::runtime::testing::recommender_ids;
using paddle::runtime::testing::small_recommender_config;

namespace {

// The recommender on fixed ids: check_gradients perturbs its input, which must stay whole ids,
// so this wrapper ignores the (dummy) input and checks only the parameters' gradients.
class OnFixedIds : public Layer {
 public:
  OnFixedIds(Recommender& model, Tensor ids) : model_(model), ids_(std::move(ids)) {}
  Tensor forward(const Tensor& x, bool training) override {
    shape_ = x.shape;
    return model_.forward(ids_, training);
  }
  Tensor backward(const Tensor& dy) override {
    model_.backward(dy);
    return Tensor(shape_);
  }
  std::vector<Parameter*> parameters() override { return model_.parameters(); }
  std::string describe() const override { return model_.describe(); }

 private:
  Recommender& model_;
  Tensor ids_;
  std::vector<int64_t> shape_;
};

}  // namespace

TEST_CASE("Tanh: values and gradient") {
  Tanh tanh;
  Tensor y = tanh.forward(Tensor::from_values({1, 3}, std::vector<float>{-1, 0, 2}), true);
  CHECK(y.values()[0] == doctest::Approx(std::tanh(-1.0)));
  CHECK(y.values()[1] == 0.0f);
  CHECK(y.values()[2] == doctest::Approx(std::tanh(2.0)));
  std::mt19937 rng(1);
  check_gradients(tanh, random_tensor({3, 7}, rng));
}

TEST_CASE("CosineSimilarity: scaled cosine of the rows") {
  CosineSimilarity cosine(5.0f);
  Tensor a = Tensor::from_values({3, 2}, std::vector<float>{1, 0, 1, 1, 2, 0});
  Tensor b = Tensor::from_values({3, 2}, std::vector<float>{3, 0, -1, -1, 0, 4});
  Tensor y = cosine.forward(a, b);
  CHECK(y.shape == std::vector<int64_t>{3, 1});
  CHECK(y.values()[0] == doctest::Approx(5.0));
  CHECK(y.values()[1] == doctest::Approx(-5.0));
  CHECK(y.values()[2] == doctest::Approx(0.0));
  auto [da, db] = cosine.backward(Tensor({3, 1}, 1.0f));
  // Row 2: d cos / d a = b / (|a||b|) = (0, 4) / 8; d cos / d b = a / (|a||b|) = (2, 0) / 8; times 5.
  CHECK(da.values()[4] == doctest::Approx(0.0));
  CHECK(da.values()[5] == doctest::Approx(2.5));
  CHECK(db.values()[4] == doctest::Approx(1.25));
  CHECK(db.values()[5] == doctest::Approx(0.0));
}

TEST_CASE("BagOfEmbeddings averages the embeddings of the ids that are not padding") {
  std::mt19937 rng(3);
  BagOfEmbeddings bag(4, 2, rng, "bag");
  Tensor& table = bag.parameters()[0]->value;
  table.assign(std::vector<float>{9, 9, 1, 2, 3, 4, 5, 6});
  Tensor y = bag.forward(Tensor::from_values({3, 3}, std::vector<float>{1, 3, 0, 2, 0, 0, 0, 0, 0}), true);
  CHECK(y.to_vector() == std::vector<float>{3, 4, 3, 4, 0, 0});
  bag.backward(Tensor::from_values({3, 2}, std::vector<float>{1, 1, 1, 1, 1, 1}));
  CHECK(bag.parameters()[0]->grad.to_vector() == std::vector<float>{0, 0, 0.5f, 0.5f, 1, 1, 0.5f, 0.5f});
}

TEST_CASE("Recommender: shapes, parameters and prediction range") {
  std::mt19937 rng(5);
  Recommender model(small_recommender_config(), rng);
  Tensor y = model.forward(recommender_ids(), false);
  CHECK(y.shape == std::vector<int64_t>{4, 1});
  for (float v : y.values()) CHECK(std::fabs(v) <= 5.0f);
  const auto params = model.parameters();
  CHECK(params.size() == 21);  // 4 user fields x 3, user head 2, movie id 3, genres 1, title 1, movie head 2
  std::set<std::string> names;
  for (Parameter* p : params) names.insert(p->name);
  CHECK(names.size() == params.size());
  CHECK(names.count("user_id.emb.table") == 1);
  CHECK(names.count("movie.fc.w") == 1);
  CHECK(model.backward(Tensor({4, 1}, 1.0f)).shape == std::vector<int64_t>{4, 10});
  CHECK_THROWS_AS(model.forward(Tensor({4, 9}), false), std::invalid_argument);
  CHECK(model.describe().find("Recommender(users 5, movies 6") == 0);
}

TEST_CASE("Recommender: backward matches central differences for every parameter") {
  std::mt19937 rng(11);
  Recommender model(small_recommender_config(), rng);
  OnFixedIds layer(model, recommender_ids());
  check_gradients(layer, Tensor({1, 1}));
}
