#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "runtime/data/batch_loader.h"
#include "runtime/nn/checkpoint.h"
#include "runtime/data/criteo.h"
#include "kernels/cpu_kernels.h"
#include "runtime/data/data_sources.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/loss.h"
#include "runtime/nn/lr_schedule.h"
#include "runtime/nn/metrics.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/residual.h"
#include "runtime/nn/sequential.h"
#include "runtime/train/train_config.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

namespace {

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t(std::move(shape));
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : t.values()) v = d(rng);
  return t;
}

// Loss = sum(w_i * out_i) with fixed random w: its gradient wrt the output is w.
double probe_loss(Layer& layer, const Tensor& x, const Tensor& weights) {
  Tensor out = layer.forward(x, true);
  double sum = 0;
  auto o = out.values();
  auto w = weights.values();
  for (size_t i = 0; i < o.size(); ++i) sum += static_cast<double>(o[i]) * w[i];
  return sum;
}

// Checks backward() against central differences, for the input and every parameter.
void check_gradients(Layer& layer, Tensor x, double tolerance = 2e-2) {
  std::mt19937 rng(7);
  Tensor out = layer.forward(x, true);
  Tensor weights = random_tensor(out.shape, rng);
  for (Parameter* p : layer.parameters()) p->grad.zero();
  layer.forward(x, true);
  Tensor dx = layer.backward(weights);
  const float eps = 1e-3f;  // small enough that ReLU kinks are rarely straddled
  auto numeric = [&](float& slot) {
    const float saved = slot;
    slot = saved + eps;
    const double up = probe_loss(layer, x, weights);
    slot = saved - eps;
    const double down = probe_loss(layer, x, weights);
    slot = saved;
    return (up - down) / (2 * eps);
  };
  auto xs = x.values();
  for (size_t i = 0; i < xs.size(); i += std::max<size_t>(1, xs.size() / 23)) {
    const double expected = numeric(xs[i]);
    CHECK(dx.values()[i] == doctest::Approx(expected).epsilon(tolerance).scale(1.0));
  }
  for (Parameter* p : layer.parameters()) {
    const Tensor analytic = p->grad;
    auto values = p->value.values();
    for (size_t i = 0; i < values.size(); i += std::max<size_t>(1, values.size() / 17)) {
      const double expected = numeric(values[i]);
      INFO(p->name << "[" << i << "]");
      CHECK(analytic.values()[i] == doctest::Approx(expected).epsilon(tolerance).scale(1.0));
    }
  }
}

}  // namespace

TEST_CASE("gemm matches a hand computation in every transpose combination") {
  const float a[] = {1, 2, 3, 4, 5, 6};     // 2x3
  const float b[] = {1, 0, 2, 1, 0, 3};     // 3x2
  float c[4];
  paddle::kernels::cpu::gemm(false, false, 2, 2, 3, a, b, c, false);
  CHECK(c[0] == 5);   // 1*1 + 2*2 + 3*0
  CHECK(c[1] == 11);  // 1*0 + 2*1 + 3*3
  CHECK(c[3] == 23);  // 4*0 + 5*1 + 6*3
  const float at[] = {1, 4, 2, 5, 3, 6};  // a stored transposed (3x2)
  float c2[4];
  paddle::kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, false);
  CHECK(std::equal(c, c + 4, c2));
  paddle::kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, true);
  CHECK(c2[3] == 46);
}

TEST_CASE("layer gradients match finite differences") {
  std::mt19937 rng(3);
  SUBCASE("Linear") {
    Linear l(5, 3, rng, "fc");
    check_gradients(l, random_tensor({4, 5}, rng));
  }
  SUBCASE("Conv2D with padding and stride") {
    Conv2D c(2, 3, 3, 2, 1, rng, "conv");
    check_gradients(c, random_tensor({2, 2, 5, 5}, rng));
  }
  SUBCASE("ReLU") {
    ReLU r;
    check_gradients(r, random_tensor({3, 7}, rng));
  }
  SUBCASE("MaxPool2D") {
    MaxPool2D m(2, 2);
    check_gradients(m, random_tensor({2, 2, 4, 4}, rng));
  }
  SUBCASE("AvgPool2D, windowed and global") {
    AvgPool2D a(2, 2);
    check_gradients(a, random_tensor({2, 2, 4, 4}, rng));
    AvgPool2D g(0, 0);
    check_gradients(g, random_tensor({2, 3, 3, 3}, rng));
  }
  SUBCASE("BatchNorm2D") {
    BatchNorm2D bn(3, "bn");
    check_gradients(bn, random_tensor({4, 3, 2, 2}, rng), 5e-2);
  }
  SUBCASE("Residual with a projection shortcut, and with identity") {
    Sequential branch, shortcut;
    branch.add(std::make_unique<Conv2D>(2, 3, 3, 1, 1, rng, "b.conv")).add(std::make_unique<ReLU>());
    shortcut.add(std::make_unique<Conv2D>(2, 3, 1, 1, 0, rng, "s.conv"));
    Residual projected(std::move(branch), std::move(shortcut));
    check_gradients(projected, random_tensor({2, 2, 4, 4}, rng));
    Sequential same;
    same.add(std::make_unique<Conv2D>(3, 3, 3, 1, 1, rng, "i.conv"));
    Residual identity(std::move(same), Sequential());
    check_gradients(identity, random_tensor({1, 3, 4, 4}, rng));
  }
  SUBCASE("MaxPool2D with padding") {
    MaxPool2D m(3, 2, 1);
    check_gradients(m, random_tensor({1, 2, 5, 5}, rng));
  }
  SUBCASE("Embedding") {
    Embedding e(10, 4, rng, "emb");
    const std::vector<int64_t> id_values{1, 2, 9, 0, 2, 5};
    Tensor ids = Tensor::from_ids({2, 3}, id_values);
    Tensor w = random_tensor({2, 12}, rng);
    e.forward(ids, true);
    e.backward(w);
    auto g = e.parameters()[0]->grad.values();
    CHECK(g[2 * 4 + 1] == doctest::Approx(w.values()[1 * 4 + 1] + w.values()[4 * 4 + 1]));
    // ids given as whole floats are the same ids
    e.parameters()[0]->grad.zero();
    e.forward(Tensor::from_values({2, 3}, {1, 2, 9, 0, 2, 5}), true);
    e.backward(w);
    CHECK(e.parameters()[0]->grad.values()[2 * 4 + 1] == doctest::Approx(g[2 * 4 + 1]));
    CHECK_THROWS_AS(e.forward(Tensor({1, 1}, 10.0f), true), std::out_of_range);
    CHECK_THROWS_AS(e.forward(Tensor({1, 1}, 1.5f), true), std::invalid_argument);
  }
}

TEST_CASE("Dropout keeps the expectation and is the identity in evaluation") {
  Dropout d(0.5f, 1);
  Tensor x({1, 10000}, 1.0f);
  Tensor y = d.forward(x, true);
  double sum = 0;
  for (float v : y.values()) sum += v;
  CHECK(sum / 10000 == doctest::Approx(1.0).epsilon(0.05));
  CHECK(d.forward(x, false).to_vector() == x.to_vector());
}

TEST_CASE("softmax cross-entropy and square error") {
  Tensor logits = Tensor::from_values({2, 3}, {0, 0, 0, 10, 0, 0});
  LossResult r = softmax_cross_entropy(logits, {1, 0});
  CHECK(r.loss == doctest::Approx((std::log(3.0) + std::log(1 + 2 * std::exp(-10.0))) / 2).epsilon(1e-5));
  CHECK(r.grad.values()[1] == doctest::Approx((1.0 / 3 - 1) / 2));
  Tensor pred = Tensor::from_values({2, 1}, {1, 3});
  LossResult s = square_error(pred, {0, 1});
  CHECK(s.loss == doctest::Approx(2.5));
  CHECK(s.grad.values()[1] == doctest::Approx(2.0));
}

TEST_CASE("top-k accuracy and AUC") {
  Tensor scores = Tensor::from_values({2, 3}, {0.1f, 0.5f, 0.4f, 0.9f, 0.05f, 0.05f});
  CHECK(top_k_correct(scores, {2, 0}, 1) == 1);
  CHECK(top_k_correct(scores, {2, 0}, 2) == 2);
  CHECK(auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == doctest::Approx(0.75));
  CHECK(auc({0.5f, 0.5f}, {0, 1}) == doctest::Approx(0.5));
  CHECK(auc({0.2f, 0.3f}, {1, 1}) == doctest::Approx(0.5));
  CHECK_THROWS_AS(auc({0.2f, std::nanf("")}, {0, 1}), std::invalid_argument);
}

TEST_CASE("optimizers take the documented steps") {
  Parameter p("w", {1});
  auto step = [&](const std::string& type, float grad, float lr, int times) {
    OptimizerConfig c;
    c.type = type;
    auto o = make_optimizer(c);
    p.value.values()[0] = 1.0f;
    for (int i = 0; i < times; ++i) {
      p.grad.values()[0] = grad;
      o->step({&p}, lr);
    }
    return p.value.values()[0];
  };
  CHECK(step("sgd", 2, 0.1f, 1) == doctest::Approx(0.8));
  CHECK(step("momentum", 1, 0.1f, 2) == doctest::Approx(1 - 0.1 - 0.1 * 1.9));
  CHECK(step("adam", 5, 0.1f, 1) == doctest::Approx(0.9).epsilon(1e-4));
  CHECK(step("adagrad", 2, 0.1f, 1) == doctest::Approx(0.9).epsilon(1e-4));
  OptimizerConfig decay;
  decay.type = "momentum";
  decay.weight_decay = 0.5f;
  auto o = make_optimizer(decay);
  p.value.values()[0] = 1.0f;
  p.grad.values()[0] = 0.0f;
  o->step({&p}, 0.1f);
  CHECK(p.value.values()[0] == doctest::Approx(0.95));
  CHECK_THROWS_AS(make_optimizer(OptimizerConfig{"lamb"}), std::invalid_argument);
}

TEST_CASE("learning-rate schedules") {
  LrSchedule c;
  c.base_lr = 0.1f;
  CHECK(c.at(1000) == doctest::Approx(0.1));
  LrSchedule p{"piecewise", 0.1f, {10, 20}, {1.0f, 0.5f, 0.25f}};
  CHECK(p.at(9) == 1.0f);
  CHECK(p.at(10) == 0.5f);
  CHECK(p.at(25) == 0.25f);
  LrSchedule bad{"piecewise", 0.1f, {10}, {1.0f}};
  CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
  LrSchedule cos{"cosine", 0.1f, {}, {}, 10, 4};
  CHECK(cos.at(0) == doctest::Approx(0.1));
  CHECK(cos.at(25) == doctest::Approx(0.05));  // epoch 2 of 4
  CHECK(cos.at(39) == doctest::Approx(0.1 * 0.5 * (std::cos(3.14159265 * 3 / 4) + 1)));
}

TEST_CASE("UCI housing is read, normalised and split as Paddle does") {
  const std::string dir = std::string(PADDLE_SHARED_DATA) + "/uci_housing";
  if (!fs::exists(dir + "/housing.data")) {
    MESSAGE("skipped: no " << dir);
    return;
  }
  TrainTestSplit s = load_uci_housing(dir);
  CHECK(s.train.size() == 404);
  CHECK(s.test.size() == 102);
  CHECK(s.train.targets.front() == doctest::Approx(24.0));
  for (float v : s.train.features) CHECK(std::fabs(v) <= 1.0f);
}

TEST_CASE("a malformed housing file is named with its line") {
  const fs::path dir = fs::temp_directory_path() / ("housing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "housing.data") << " 1 2 3 4 5 6 7 8 9 10 11 12 13 14\n 1 2 x 4 5 6 7 8 9 10 11 12 13 14\n";
  CHECK_THROWS_WITH_AS(load_uci_housing(dir.string()), doctest::Contains("housing.data:2: 'x' is not a number"), paddle::common::DataError);
  std::ofstream(dir / "housing.data") << " 1 2 3\n";
  CHECK_THROWS_WITH_AS(load_uci_housing(dir.string()), doctest::Contains("housing.data:1: 3 numbers, expected 14"), paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_uci_housing((dir / "none").string()), doctest::Contains("cannot open"), paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_fashion_mnist(dir.string()), doctest::Contains("train-images-idx3-ubyte.gz: cannot open"),
                       paddle::common::DataError);
  fs::remove_all(dir);
}

TEST_CASE("Fashion-MNIST from the Debian package") {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/t10k-images-idx3-ubyte.gz")) return;
  TrainTestSplit s = load_fashion_mnist(dir);
  CHECK(s.train.size() == 60000);
  CHECK(s.test.size() == 10000);
  CHECK(s.test.sample_shape == std::vector<int64_t>{1, 28, 28});
  CHECK(s.test.labels[0] == 9);  // the first test image is an ankle boot
  for (size_t i = 0; i < 784; ++i) CHECK(s.test.features[i] >= -1.0f);
}

TEST_CASE("W ranks with batch B cover exactly the global batches of one rank with batch W*B") {
  Dataset d;
  d.sample_shape = {1};
  for (int i = 0; i < 100; ++i) {
    d.features.push_back(static_cast<float>(i));
    d.targets.push_back(0);
  }
  ShardSpec one{8, 0, 1, 5, true, 2};
  BatchLoader whole(d, one, 3);
  std::vector<float> expected;
  while (auto b = whole.next())
    for (float v : b->inputs.values()) expected.push_back(v);
  CHECK(expected.size() == 96);  // 12 global batches of 8; the last 4 samples dropped
  std::vector<std::vector<float>> per_rank(2);
  for (int r = 0; r < 2; ++r) {
    BatchLoader part(d, ShardSpec{4, r, 2, 5, true, 2}, 3);
    while (auto b = part.next())
      for (float v : b->inputs.values()) per_rank[r].push_back(v);
  }
  std::vector<float> interleaved;
  for (size_t g = 0; g < 12; ++g)
    for (int r = 0; r < 2; ++r)
      interleaved.insert(interleaved.end(), per_rank[r].begin() + static_cast<long>(g * 4),
                         per_rank[r].begin() + static_cast<long>(g * 4 + 4));
  CHECK(interleaved == expected);
  BatchLoader other_epoch(d, one, 4);
  CHECK(other_epoch.next()->inputs.to_vector() != std::vector<float>(expected.begin(), expected.begin() + 8));
}

TEST_CASE("checkpoints round-trip and reject mismatches") {
  const fs::path dir = fs::temp_directory_path() / ("ckpt-" + std::to_string(::getpid()));
  std::mt19937 rng(1);
  Sequential a;
  a.add(std::make_unique<Linear>(3, 2, rng, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  auto opt = make_optimizer(OptimizerConfig{"momentum"});
  for (Parameter* p : a.parameters()) std::ranges::fill(p->grad.values(), 0.5f);
  opt->step(a.parameters(), 0.1f);
  save_checkpoint(dir.string(), {3, 42}, a, *opt);

  std::mt19937 other(99);
  Sequential b;
  b.add(std::make_unique<Linear>(3, 2, other, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  auto opt_b = make_optimizer(OptimizerConfig{"momentum"});
  auto at = load_latest_checkpoint(dir.string(), b, *opt_b);
  REQUIRE(at);
  CHECK(at->epoch == 3);
  CHECK(at->step == 42);
  CHECK(b.parameters()[0]->value.to_vector() == a.parameters()[0]->value.to_vector());
  REQUIRE(opt_b->state().size() == opt->state().size());
  for (auto& [name, t] : opt->state()) CHECK(opt_b->state().at(name).to_vector() == t.to_vector());

  Sequential c;
  c.add(std::make_unique<Linear>(4, 2, other, "fc")).add(std::make_unique<BatchNorm2D>(2, "bn"));
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), c, *opt_b), doctest::Contains("tensor 'fc.w' has 6 values"),
                       CheckpointError);
  fs::resize_file(dir / "checkpoint-3.bin", fs::file_size(dir / "checkpoint-3.bin") - 8);
  CHECK_THROWS_WITH_AS(load_latest_checkpoint(dir.string(), b, *opt_b), doctest::Contains("truncated"), CheckpointError);
  CHECK_FALSE(load_latest_checkpoint((dir / "empty").string(), b, *opt_b));
  fs::remove_all(dir);
}

TEST_CASE("config overrides reach nested keys and reject unknown ones") {
  auto c = load_train_config("", {"optimizer.lr=0.5", "epochs=3", "model=fit_a_line", "cnn.channels=[4,8]"});
  CHECK(c["optimizer"]["lr"] == 0.5);
  CHECK(c["epochs"] == 3);
  CHECK(c["model"] == "fit_a_line");
  CHECK(c["cnn"]["channels"][1] == 8);
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.rate=1"}), doctest::Contains("optimizer.rate: unknown key"),
                       paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"epochs=many"}), doctest::Contains("'many' is not a number"), paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("/nonexistent.json", {}), doctest::Contains("cannot open"), paddle::common::ConfigError);
}

TEST_CASE("raw Criteo: 100 lines of the PaddleRec sample, scaled and hashed") {
  const std::string file = std::string(PADDLE_SHARED_DATA) + "/criteo_sample/part-0";
  if (!fs::exists(file)) {
    MESSAGE("skipped: no " << file);
    return;
  }
  CtrDataset d = load_criteo_raw(file, 1000001);
  CHECK(d.size() == 100);
  double clicks = 0;
  for (float l : d.labels) clicks += l;
  CHECK(clicks == 29);
  CHECK(d.dense.size() == 100 * kCriteoDense);
  CHECK(d.sparse.size() == 100 * kCriteoSlots);
  for (uint64_t k : d.sparse) CHECK(k < 1000001);
  CHECK(d.sparse[0] == slot_hash(14, "05db9164") % 1000001);  // the first line's first category
  CHECK(d.dense[2] == 0.0f);                                    // an empty field
  CHECK(d.dense[0] == doctest::Approx(2.0 / 20));               // (x - min) / (max - min)
  CHECK(d.dense[1] == doctest::Approx((0.0 + 3) / 603));
}

TEST_CASE("PaddleRec slot format: the 80-line sample") {
  const std::string file = std::string(PADDLE_SHARED_DATA) + "/criteo_slot/sample_train.txt";
  if (!fs::exists(file)) {
    MESSAGE("skipped: no " << file);
    return;
  }
  CtrDataset d = load_criteo_slot(file, 1000001);
  CHECK(d.size() == 80);
  double clicks = 0;
  for (float l : d.labels) clicks += l;
  CHECK(clicks == 23);
  CtrDataset test = d.split_off(64);
  CHECK(d.size() == 64);
  CHECK(test.size() == 16);
  CHECK(test.sparse.size() == 16 * kCriteoSlots);
}

TEST_CASE("malformed click data is named with file and line") {
  const fs::path dir = fs::temp_directory_path() / ("ctr-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bad.txt") << "1\t2\t3\n";
  CHECK_THROWS_WITH_AS(load_criteo_raw((dir / "bad.txt").string(), 100), doctest::Contains("bad.txt:1: 3 tab-separated"),
                       paddle::common::DataError);
  std::ofstream(dir / "slot.txt") << "click:1 dense_feature:0.5 1:7\n";
  CHECK_THROWS_WITH_AS(load_criteo_slot((dir / "slot.txt").string(), 100), doctest::Contains("slot.txt:1: 1 click, 1 dense"),
                       paddle::common::DataError);
  CHECK_THROWS_WITH_AS(load_criteo_raw((dir / "none").string(), 100), doctest::Contains("no such file"), paddle::common::DataError);
  fs::remove_all(dir);
}
