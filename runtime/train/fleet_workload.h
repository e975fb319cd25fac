#pragma once
// FleetWorkload: what every workload of the `train` program shares: its settings and its
// place in the job, which Fleet knows.

#include "runtime/distributed/fleet.h"
#include "runtime/train/train_config.h"
#include "runtime/train/workload.h"

namespace paddle::runtime {

class FleetWorkload : public Workload {
 public:
  int worker_index() const override { return fleet_.worker_index(); }
  int worker_num() const override { return fleet_.worker_num(); }
  size_t global_batch() const override { return config_.batch_size * static_cast<size_t>(worker_num()); }

 protected:
  FleetWorkload(const TrainConfig& config, Fleet& fleet) : config_(config), fleet_(fleet) {}

  const TrainConfig& config_;
  Fleet& fleet_;
};

}  // namespace paddle::runtime
