#pragma once
// FleetWorkload: what every workload of the `train` program shares: its settings and its
// place in the job, which Fleet knows.

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/data/batch_loader.h"
#include "runtime/distributed/fleet.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/workloads/workload.h"

namespace paddle::runtime {

class FleetWorkload : public Workload {
 public:
  int worker_index() const override { return fleet_.worker_index(); }
  int worker_num() const override { return fleet_.worker_num(); }
  size_t global_batch() const override { return config_.batch_size * static_cast<size_t>(worker_num()); }
  common::ProgressPage& progress() override { return fleet_.progress(); }
  const TestFault& test_fault() const override { return fleet_.test_fault(); }
  double straggler_factor() const override { return fleet_.straggler_factor(); }

 protected:
  FleetWorkload(const TrainConfig& config, Fleet& fleet)
      : config_(config), fleet_(fleet), shard_(config.shard(fleet.worker_index(), fleet.worker_num())) {}

  // This worker's steps per epoch over `train_samples`; common::ConfigError when they are
  // fewer than one global batch.
  size_t steps_per_epoch(size_t train_samples) const {
    const size_t steps = BatchLoader::batches_per_epoch(train_samples, shard_);
    if (steps == 0)
      throw common::ConfigError(fmt::format("batch_size: {} training samples are fewer than one global batch of {} x {} workers",
                                            train_samples, config_.batch_size, worker_num()));
    return steps;
  }

  const TrainConfig& config_;
  Fleet& fleet_;
  const ShardSpec shard_;  // how this worker cuts the data
};

}  // namespace paddle::runtime
