#pragma once
// The report of a training run, OUTPUT_DIR/metrics.json, written once by the leader through a
// checked atomic write. Keys: the workload's identity ("model", "dataset", "device"), then
// "world_size" (the last generation's), "epochs" (completed), "steps", "generations" (the run's
// history, oldest first, generations.h: [{"generation", "world_size", "from_epoch",
// "from_step"}, ...], one entry when the run did not resume), "train_loss" (the last step's),
// "test_loss", "test_acc", "test_acc5", "test_rmse", "baseline_rmse", "test_auc" (null where
// the task has no such metric), "samples_per_sec" (training steps only) and "wall_seconds"
// (the whole run).

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "runtime/nn/checkpoint.h"
#include "runtime/train/run/generations.h"
#include "runtime/train/workloads/workload.h"

namespace paddle::runtime {

struct RunFigures {
  int world_size = 1;
  CheckpointPosition position;
  std::vector<Generation> generations;
  double train_loss = 0;
  double samples_per_sec = 0;
  double wall_seconds = 0;
  // One object per epoch of the run, those before a resume included (from the checkpoint or the
  // saves): "epoch", "train_loss", "samples_per_sec", "seconds", and the leader's test figures
  // ("test_loss", "test_acc", ...).
  nlohmann::json history = nlohmann::json::array();
};

// The test figures of `evaluation` that the task has, as metrics.json names them.
nlohmann::json evaluation_figures(const Evaluation& evaluation);
// The inverse: the Evaluation a round's figures (a history entry) hold.
Evaluation evaluation_from_figures(const nlohmann::json& figures);

// Writes OUTPUT_DIR/metrics.json and returns what it wrote.
nlohmann::json write_report(const std::string& output_dir, const nlohmann::json& identity, const RunFigures& run,
                            const Evaluation& evaluation);

}  // namespace paddle::runtime
