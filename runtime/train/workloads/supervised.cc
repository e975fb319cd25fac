#include "runtime/train/workloads/supervised.h"

#include <fmt/format.h>

#include <cmath>

#include "common/error.h"
#include "runtime/data/data_sources.h"
#include "runtime/data/movielens.h"
#include "runtime/nn/metrics.h"

namespace paddle::runtime {
namespace {

std::string expand_home(const std::string& path, const common::Environment& env) {
  if (!path.starts_with("~/")) return path;
  return common::get_env(env, "HOME").value_or("") + path.substr(1);
}

double baseline_rmse(const Dataset& train, const Dataset& test) {
  if (train.targets.empty() || test.targets.empty()) return 0;
  double mean = 0;
  for (float t : train.targets) mean += t;
  mean /= static_cast<double>(train.targets.size());
  double sum = 0;
  for (float t : test.targets) sum += (t - mean) * (t - mean);
  return std::sqrt(sum / static_cast<double>(test.targets.size()));
}

common::ConfigError click_data(const TrainConfig& config) {
  return common::ConfigError(fmt::format("dataset {} is click data for model wide_deep, not for model {}",
                                         kDatasetNames.name(config.data.kind), kModelNames.name(config.model.kind)));
}

// The shape the model sees of samples of `shape`: config's image_shape where it resizes images.
std::vector<int64_t> model_sample_shape(const TrainConfig& config, const std::vector<int64_t>& shape) {
  if (config.data.image_shape.empty()) return shape;
  if (shape.size() != 3) throw common::ConfigError("image_shape: the data set has no images");
  return config.data.image_shape;
}

}  // namespace

DataFacts supervised_data_facts(const TrainConfig& config, const common::Environment& env) {
  const std::string dir = expand_home(config.data.dir, env);
  DataFacts facts;
  switch (config.data.kind) {
    case DatasetKind::kUciHousing: facts.sample_shape = {kUciHousingFeatures}; break;
    case DatasetKind::kFashionMnist:
      facts.sample_shape = fashion_mnist_image_shape(dir);
      facts.classes = kFashionMnistClasses;
      break;
    case DatasetKind::kMovieLens:
      facts.movielens = movielens_vocabulary(dir);
      facts.sample_shape = {facts.movielens->features()};
      break;
    default: throw click_data(config);
  }
  facts.sample_shape = model_sample_shape(config, facts.sample_shape);
  return facts;
}

TrainTestSplit load_supervised_data(const TrainConfig& config, DataFacts& facts, const common::Environment& env) {
  const std::string dir = expand_home(config.data.dir, env);
  TrainTestSplit split;
  switch (config.data.kind) {
    case DatasetKind::kUciHousing: split = load_uci_housing(dir); break;
    case DatasetKind::kFashionMnist: split = load_fashion_mnist(dir); break;
    case DatasetKind::kMovieLens: {
      MovieLensData movielens = load_movielens(dir, config.seed);
      facts.movielens = movielens.vocabulary;
      split = std::move(movielens.split);
      break;
    }
    default: throw click_data(config);
  }
  split.train.truncate(config.data.train_samples);
  split.test.truncate(config.data.test_samples);
  if (!config.data.image_shape.empty())
    split.train.output_shape = split.test.output_shape = model_sample_shape(config, split.train.sample_shape);
  facts.sample_shape = split.train.batch_sample_shape();
  facts.classes = split.classes;
  return split;
}

LossResult task_loss(Task task, const Tensor& out, const Batch& batch, float grad_scale) {
  return task == Task::kRegression ? square_error(out, batch.targets, grad_scale)
                                   : softmax_cross_entropy(out, batch.labels, grad_scale);
}

std::function<TopAccuracy()> batch_accuracy(Tensor out, std::vector<int64_t> labels) {
  return [out = std::move(out), labels = std::move(labels)] {
    const double n = static_cast<double>(labels.size());
    return TopAccuracy{static_cast<double>(top_k_correct(out, labels, 1)) / n,
                       static_cast<double>(top_k_correct(out, labels, 5)) / n};
  };
}

Evaluation evaluate_supervised(Sequential& net, Task task, const TrainTestSplit& data, const Device& device,
                               const std::function<void(const Batch&)>& prepare) {
  const Dataset& test = data.test;
  const bool regression = task == Task::kRegression;
  const size_t batch = 256;
  int64_t correct1 = 0, correct5 = 0;
  double loss_sum = 0;
  for (size_t start = 0; start < test.size(); start += batch) {
    std::vector<size_t> indices;
    for (size_t i = start; i < std::min(test.size(), start + batch); ++i) indices.push_back(i);
    Batch b = test.gather(indices);
    if (prepare) prepare(b);
    Tensor out = net.forward(b.inputs.to(device), false);
    loss_sum += task_loss(task, out, b).loss * static_cast<double>(indices.size());
    if (!regression) {
      correct1 += top_k_correct(out, b.labels, 1);
      correct5 += top_k_correct(out, b.labels, 5);
    }
  }
  const double n = static_cast<double>(std::max<size_t>(1, test.size()));
  Evaluation e;
  e.loss = loss_sum / n;
  if (regression) {
    // square_error is the mean of squared differences, so its root is the RMSE in target units.
    e.rmse = std::sqrt(e.loss);
    e.baseline_rmse = baseline_rmse(data.train, test);
  } else {
    e.acc1 = static_cast<double>(correct1) / n;
    e.acc5 = static_cast<double>(correct5) / n;
  }
  return e;
}

}  // namespace paddle::runtime
