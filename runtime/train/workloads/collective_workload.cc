#include "runtime/train/workloads/collective_workload.h"

#include <fmt/format.h>

#include "runtime/train/workloads/supervised.h"

namespace paddle::runtime {
namespace {

Model make_model(const TrainConfig& config, const DataFacts& facts) {
  std::mt19937 rng(config.seed);
  return build_model(config.model, facts, rng);
}

std::string describe_amp(const AmpOptions& amp) {
  const LossScalingOptions& l = amp.scaling;
  return fmt::format("\nmixed precision: {} O1, matmul (Linear) {}, conv2d {}; {} loss scaling from {}",
                     dtype_name(amp.policy.dtype), amp.policy.runs_in_half("matmul") ? "autocast" : "in float32",
                     amp.policy.runs_in_half("conv2d") ? "autocast" : "in float32",
                     l.use_dynamic_loss_scaling ? "dynamic" : "static", l.init_loss_scaling);
}

}  // namespace

CollectiveWorkload::CollectiveWorkload(const TrainConfig& config, Fleet& fleet, bool resume)
    : FleetWorkload(config, fleet) {
  DataFacts facts;
  data_ = load_supervised_data(config, facts, fleet.environment());
  model_ = make_model(config, facts);
  schedule_ = config.lr_schedule;
  schedule_.steps_per_epoch = static_cast<int64_t>(steps_per_epoch(data_.train.size()));

  auto optimizer = make_optimizer(config.optimizer);
  if (resume) {
    if (auto loaded = load_latest_checkpoint(config.output_dir, model_.net, *optimizer)) {
      resumed_ = loaded->at;
      for (const std::string& damaged : loaded->refused) fmt::print("refusing a damaged checkpoint: {}\n", damaged);
      fmt::print("resumed from {}/{}: {} epoch(s), {} step(s) done\n", config.output_dir,
                 loaded->refused.empty() ? "latest" : loaded->file, resumed_.rounds, resumed_.step);
    }
  }
  if (auto* comm = fleet.context().communicator(); comm && resume) {
    // Ranks on other machines may have no checkpoint of their own: rank 0's position is the job's.
    float at[2] = {static_cast<float>(resumed_.rounds), static_cast<float>(resumed_.step)};
    comm->broadcast(at, 2, 0);
    resumed_.rounds = static_cast<int64_t>(at[0]);
    resumed_.step = static_cast<int64_t>(at[1]);
  }
  // The checkpoint may come from another world size, whose epochs had another number of steps.
  schedule_.resumed_epoch = resumed_.rounds;
  schedule_.resumed_step = resumed_.step;
  parallel_.emplace(fleet.distributed_model(model_.net));
  optimizer_.emplace(fleet.distributed_optimizer(std::move(optimizer), *parallel_));
}

CollectiveWorkload::~CollectiveWorkload() = default;

LogStyle CollectiveWorkload::log_style() const {
  return model_.task == Task::kRegression ? LogStyle::kRegression : LogStyle::kClassifier;
}

std::string CollectiveWorkload::describe() const {
  std::string text;
  if (const DataParallel* dp = parallel_->data_parallel())
    text += fmt::format("data parallel over {} ranks: fused {} gradient tensors into {} bucket(s) of up to {} MB\n",
                        worker_num(), dp->tensor_count(), dp->bucket_count(), config_.bucket_mb);
  const Device device = fleet_.execution().device();
  text += fmt::format("model: {}\ndevice: {}{}\ntrain samples: {}, test samples: {}, {} steps per epoch",
                      model_.net.describe(), device.to_string(),
                      device.is_cuda() ? (config_.tf32 ? " (TF32 allowed)" : " (strict FP32)") : "", data_.train.size(),
                      data_.test.size(), schedule_.steps_per_epoch);
  if (config_.amp.enabled) text += describe_amp(config_.amp.options);
  return text;
}

nlohmann::json CollectiveWorkload::identity() const {
  return {{"model", std::string(kModelNames.name(config_.model.kind))},
          {"dataset", std::string(kDatasetNames.name(config_.data.kind))},
          {"device", fleet_.execution().device().to_string()}};
}

void CollectiveWorkload::begin_round(int64_t epoch) {
  loader_.reset();  // one loader thread at a time
  loader_ = std::make_unique<BatchLoader>(data_.train, shard_, epoch);
}

std::optional<StepResult> CollectiveWorkload::train_step(int64_t step) {
  common::ProgressPage& page = fleet_.progress();
  std::optional<Batch> batch;
  {
    common::ProgressPage::Scope loading(page, common::Phase::kDataLoading);
    fleet_.test_fault().in_data_loading(page.steps());
    batch = loader_->next();
  }
  if (!batch) return std::nullopt;
  optimizer_->clear_grad();
  Tensor out = parallel_->forward(batch->inputs.to(fleet_.execution().device()), true);
  LossResult loss = task_loss(model_.task, out, *batch, optimizer_->loss_scale());
  parallel_->backward(loss.grad);
  optimizer_->step(schedule_.at(step));
  StepResult result;
  result.loss = loss.loss;
  if (model_.task == Task::kClassification) result.accuracy = batch_accuracy(std::move(out), std::move(batch->labels));
  return result;
}

double CollectiveWorkload::mean_over_workers(double loss) { return fleet_.average(static_cast<float>(loss)); }

std::vector<float> CollectiveWorkload::gather_over_workers(float value) {
  collective::Communicator* comm = fleet_.context().communicator();
  if (comm == nullptr) return {value};
  std::vector<float> all(static_cast<size_t>(comm->size()));
  comm->allgather(&value, all.data(), 1);
  return all;
}

Evaluation CollectiveWorkload::evaluate() {
  return evaluate_supervised(model_.net, model_.task, data_, fleet_.execution().device());
}

void CollectiveWorkload::save_checkpoint(const CheckpointPosition& at) {
  runtime::save_checkpoint(config_.output_dir, at, model_.net, optimizer_->inner());
}

void CollectiveWorkload::save_final(const CheckpointPosition& at) {
  runtime::save_checkpoint(config_.output_dir, at, model_.net, optimizer_->inner(), "final.bin", false);
}

}  // namespace paddle::runtime
