#pragma once
// CollectiveWorkload: the models trained by data parallelism (fit_a_line, cnn, resnet,
// recommender) on their data set, through Fleet's distributed_model and distributed_optimizer:
// each rank trains on its slice of every global batch, and the gradients are averaged over the
// ranks while backward runs. Rank 0 evaluates, and keeps OUTPUT_DIR/checkpoint-EPOCH.bin,
// OUTPUT_DIR/latest and, at the end, OUTPUT_DIR/final.bin (nn/checkpoint.h).

#include <memory>
#include <optional>

#include "runtime/data/batch_loader.h"
#include "runtime/models/models.h"
#include "runtime/train/workloads/fleet_workload.h"

namespace paddle::runtime {

class CollectiveWorkload : public FleetWorkload {
 public:
  // Loads the data and builds the model; with `resume` (config.resume, or a restarted process)
  // loads OUTPUT_DIR/latest first. Rank 0's parameters and optimizer state reach every rank.
  // Throws common::ConfigError for a model the data does not fit or too few samples.
  CollectiveWorkload(const TrainConfig& config, Fleet& fleet, bool resume);
  std::vector<std::string> kernel_choices() const override { return fleet_.execution().context().kernel_choices(); }
  ~CollectiveWorkload() override;

  LogStyle log_style() const override;
  std::string describe() const override;
  nlohmann::json identity() const override;
  CheckpointPosition start() override { return resumed_; }
  void begin_round(int64_t epoch) override;
  std::optional<StepResult> train_step(int64_t step) override;
  double mean_over_workers(double loss) override;
  std::vector<float> gather_over_workers(float value) override;
  Evaluation evaluate() override;
  void save_checkpoint(const CheckpointPosition& at) override;
  void save_final(const CheckpointPosition& at) override;
  void barrier() override { fleet_.barrier(); }
  double communication_seconds() const override { return parallel_ ? parallel_->communication_seconds() : 0; }
  std::optional<double> learning_rate(int64_t step) const override { return schedule_.at(step); }

 private:
  TrainTestSplit data_;
  Model model_;
  LrSchedule schedule_;
  CheckpointPosition resumed_;
  std::optional<DistributedModel> parallel_;
  std::optional<DistributedOptimizer> optimizer_;
  std::unique_ptr<BatchLoader> loader_;
};

}  // namespace paddle::runtime
