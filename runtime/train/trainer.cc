#include "runtime/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/file.h"
#include "runtime/data/batch_loader.h"
#include "runtime/data/data_sources.h"
#include "runtime/data/movielens.h"
#include "runtime/distributed/data_parallel.h"
#include "runtime/models/models.h"
#include "runtime/models/recommender.h"
#include "runtime/nn/checkpoint.h"
#include "runtime/nn/loss.h"
#include "runtime/nn/lr_schedule.h"
#include "runtime/nn/metrics.h"
#include "runtime/nn/optimizer.h"
#include "runtime/train/train_config.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::string expand_home(const std::string& path) {
  if (!path.starts_with("~/")) return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + path.substr(1);
}

// The data set, and what the model must be told about it.
struct TrainingData {
  TrainTestSplit split;
  DataFacts facts;
};

TrainingData load_data(const nlohmann::json& config) {
  const std::string name = config.at("dataset");
  const std::string dir = expand_home(config.at("data_dir"));
  TrainingData data;
  TrainTestSplit& split = data.split;
  if (name == "uci_housing") {
    split = load_uci_housing(dir);
  } else if (name == "fashion_mnist") {
    split = load_fashion_mnist(dir);
  } else if (name == "movielens") {
    MovieLensData movielens = load_movielens(dir, config.at("seed").get<uint32_t>());
    data.facts.movielens = movielens.vocabulary;
    split = std::move(movielens.split);
  } else {
    throw common::ConfigError(fmt::format("dataset '{}' is not uci_housing, fashion_mnist or movielens", name));
  }
  split.train.truncate(config.at("train_samples"));
  split.test.truncate(config.at("test_samples"));
  const auto shape = config.at("image_shape").get<std::vector<int64_t>>();
  if (!shape.empty()) {
    if (shape.size() != 3 || split.train.sample_shape.size() != 3)
      throw common::ConfigError("image_shape must be [C,H,W], for an image data set");
    split.train.output_shape = split.test.output_shape = shape;
  }
  data.facts.sample_shape = split.train.batch_sample_shape();
  data.facts.classes = split.classes;
  return data;
}

// The RMSE of predicting the training targets' mean for every test sample.
double baseline_rmse(const Dataset& train, const Dataset& test) {
  if (train.targets.empty() || test.targets.empty()) return 0;
  double mean = 0;
  for (float t : train.targets) mean += t;
  mean /= static_cast<double>(train.targets.size());
  double sum = 0;
  for (float t : test.targets) sum += (t - mean) * (t - mean);
  return std::sqrt(sum / static_cast<double>(test.targets.size()));
}

struct Evaluation {
  double loss = 0;
  double acc1 = 0;
  double acc5 = 0;
};

Evaluation evaluate(Model& model, const Dataset& test, const Device& device) {
  Evaluation e;
  const size_t batch = 256;
  int64_t correct1 = 0, correct5 = 0;
  double loss_sum = 0;
  for (size_t start = 0; start < test.size(); start += batch) {
    std::vector<size_t> indices;
    for (size_t i = start; i < std::min(test.size(), start + batch); ++i) indices.push_back(i);
    Batch b = test.gather(indices);
    Tensor out = model.net.forward(b.inputs.to(device), false);
    if (model.task == Task::kRegression) {
      loss_sum += square_error(out, b.targets).loss * static_cast<double>(indices.size());
    } else {
      loss_sum += softmax_cross_entropy(out, b.labels).loss * static_cast<double>(indices.size());
      correct1 += top_k_correct(out, b.labels, 1);
      correct5 += top_k_correct(out, b.labels, 5);
    }
  }
  const double n = static_cast<double>(std::max<size_t>(1, test.size()));
  e.loss = loss_sum / n;
  e.acc1 = static_cast<double>(correct1) / n;
  e.acc5 = static_cast<double>(correct5) / n;
  return e;
}

OptimizerConfig optimizer_config(const nlohmann::json& c) {
  OptimizerConfig o;
  o.type = c.at("type");
  o.momentum = c.value("momentum", 0.9f);
  o.weight_decay = c.value("weight_decay", 0.0f);
  return o;
}

void broadcast_optimizer_state(Optimizer& optimizer, collective::Communicator* comm) {
  if (comm == nullptr) return;
  for (auto& [name, t] : optimizer.state()) comm->broadcast(t.ptr(), static_cast<size_t>(t.numel()), 0);
}

// config.device "cpu" keeps the model on the host; "auto" takes the context's device (the GPU
// of this rank with the NCCL backend).
Device training_device(const nlohmann::json& config, const DistributedContext& ctx) {
  const std::string wanted = config.at("device");
  if (wanted == "cpu") return Device::cpu();
  if (wanted != "auto") throw common::ConfigError(fmt::format("device '{}' is not auto or cpu", wanted));
  return ctx.device();
}

}  // namespace

nlohmann::json train(const nlohmann::json& config, DistributedContext& ctx, int restart_count) {
  const int rank = ctx.rank(), world = ctx.world();
  const bool leader = rank == 0;
  const auto started = Clock::now();
  TrainingData loaded = load_data(config);
  TrainTestSplit& data = loaded.split;

  std::mt19937 rng(config.at("seed").get<uint32_t>());
  Model model = build_model(config, loaded.facts, rng);
  auto optimizer = make_optimizer(optimizer_config(config.at("optimizer")));
  const std::string output_dir = config.at("output_dir");

  const ShardSpec spec = shard_spec(config, rank, world);
  const size_t steps_per_epoch = BatchLoader::batches_per_epoch(data.train.size(), spec);
  if (steps_per_epoch == 0)
    throw common::ConfigError(fmt::format("{} training samples are fewer than one global batch of {} x {} ranks",
                                  data.train.size(), spec.batch_size, world));

  LrSchedule schedule;
  const auto& lr_config = config.at("lr_schedule");
  schedule.type = lr_config.at("type");
  schedule.base_lr = config.at("optimizer").at("lr");
  schedule.boundaries = lr_config.at("boundaries").get<std::vector<int64_t>>();
  schedule.values = lr_config.at("values").get<std::vector<float>>();
  schedule.steps_per_epoch = static_cast<int64_t>(steps_per_epoch);
  schedule.epochs = config.at("epochs");
  schedule.validate();

  CheckpointPosition position;
  if (config.at("resume").get<bool>() || restart_count > 0) {
    if (auto at = load_latest_checkpoint(output_dir, model.net, *optimizer)) {
      position = *at;
      fmt::print("resumed from {}/latest: {} epoch(s), {} step(s) done\n", output_dir, at->epoch, at->step);
    }
  }
  const Device device = training_device(config, ctx);
  Execution execution(device, config.at("tf32").get<bool>());
  model.net.place(execution);
  optimizer->place(execution);
  std::unique_ptr<DataParallel> parallel;
  if (auto* comm = ctx.communicator()) {
    const size_t bucket_bytes = static_cast<size_t>(config.at("bucket_mb").get<double>() * (1 << 20));
    parallel = std::make_unique<DataParallel>(model.net, *comm, bucket_bytes, &execution);
    parallel->broadcast_parameters();
    broadcast_optimizer_state(*optimizer, comm);
    fmt::print("data parallel over {} ranks: fused {} gradient tensors into {} bucket(s) of up to {} MB\n", world,
               parallel->tensor_count(), parallel->bucket_count(), config.at("bucket_mb").get<double>());
  }
  fmt::print("model: {}\ndevice: {}{}\ntrain samples: {}, test samples: {}, {} steps per epoch\n",
             model.net.describe(), device.to_string(),
             device.is_cuda() ? (config.at("tf32").get<bool>() ? " (TF32 allowed)" : " (strict FP32)") : "",
             data.train.size(), data.test.size(), steps_per_epoch);
  std::fflush(stdout);

  const int64_t epochs = config.at("epochs");
  const int64_t max_steps = config.at("max_steps");
  const int64_t log_every = std::max<int64_t>(1, config.at("log_every").get<int64_t>());
  auto params = model.net.parameters();
  double last_loss = 0;
  int64_t trained_samples = 0;
  double train_seconds = 0;
  Evaluation eval;
  bool stop = false;
  for (int64_t epoch = position.epoch; epoch < epochs && !stop; ++epoch) {
    const auto epoch_start = Clock::now();
    BatchLoader loader(data.train, spec, epoch);
    int64_t batch_index = 0;
    while (auto batch = loader.next()) {
      model.net.zero_grad();
      Tensor out = model.net.forward(batch->inputs.to(device), true);
      LossResult loss = model.task == Task::kRegression ? square_error(out, batch->targets)
                                                        : softmax_cross_entropy(out, batch->labels);
      model.net.backward(loss.grad);
      if (parallel) parallel->finish_step();
      optimizer->step(params, schedule.at(position.step));
      ++position.step;
      last_loss = ctx.average(loss.loss);
      if (!std::isfinite(last_loss)) throw NanLossError();
      const bool log_now = model.task == Task::kRegression ? position.step % log_every == 0 : batch_index % log_every == 0;
      if (log_now) {
        if (model.task == Task::kRegression) {
          fmt::print("step {}, loss: [{:.6f}]\n", position.step, last_loss);
        } else {
          const double n = static_cast<double>(batch->size());
          fmt::print("[Epoch {}, batch {}] loss: {:.5f}, acc1: {:.5f}, acc5: {:.5f}\n", epoch, batch_index, last_loss,
                     static_cast<double>(top_k_correct(out, batch->labels, 1)) / n,
                     static_cast<double>(top_k_correct(out, batch->labels, 5)) / n);
        }
        std::fflush(stdout);
      }
      ++batch_index;
      trained_samples += static_cast<int64_t>(spec.batch_size) * world;
      if (max_steps > 0 && position.step >= max_steps) {
        stop = true;
        break;
      }
    }
    train_seconds += std::chrono::duration<double>(Clock::now() - epoch_start).count();
    if (!stop) position.epoch = epoch + 1;
    if (leader) {
      eval = evaluate(model, data.test, device);
      if (model.task == Task::kRegression)
        fmt::print("[Epoch {}] test_loss: {:.6f}, test_rmse: {:.6f}\n", epoch, eval.loss, std::sqrt(eval.loss));
      else
        fmt::print("[Epoch {}] test_loss: {:.5f}, test_acc1: {:.5f}, test_acc5: {:.5f}\n", epoch, eval.loss, eval.acc1,
                   eval.acc5);
      if (!stop && config.at("checkpoint").get<bool>()) save_checkpoint(output_dir, position, model.net, *optimizer);
      std::fflush(stdout);
    }
    ctx.barrier();
  }

  nlohmann::json metrics;
  if (leader) {
    if (position.epoch == 0 && !stop) eval = evaluate(model, data.test, device);
    save_checkpoint(output_dir, position, model.net, *optimizer, "final.bin", false);
    const bool regression = model.task == Task::kRegression;
    metrics = {{"model", config.at("model")},
               {"dataset", config.at("dataset")},
               {"world_size", world},
               {"device", device.to_string()},
               {"epochs", position.epoch},
               {"steps", position.step},
               {"train_loss", last_loss},
               {"test_loss", eval.loss},
               {"test_acc", regression ? nlohmann::json(nullptr) : nlohmann::json(eval.acc1)},
               {"test_acc5", regression ? nlohmann::json(nullptr) : nlohmann::json(eval.acc5)},
               // square_error is the mean of squared differences, so its root is the RMSE in target units.
               {"test_rmse", regression ? nlohmann::json(std::sqrt(eval.loss)) : nlohmann::json(nullptr)},
               {"baseline_rmse", regression ? nlohmann::json(baseline_rmse(data.train, data.test)) : nlohmann::json(nullptr)},
               {"samples_per_sec", train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0},
               {"wall_seconds", std::chrono::duration<double>(Clock::now() - started).count()}};
    common::write_file_atomically(std::filesystem::path(output_dir) / "metrics.json", metrics.dump(2) + "\n");
    fmt::print("metrics: {}\n", metrics.dump());
  }
  ctx.barrier();
  return metrics;
}

}  // namespace paddle::runtime
