#pragma once
// The one training loop of the `train` program, for every model and mode (workload.h):
//
//   the leader records this generation of the run (generations.h)
//   for each epoch from the workload's start:
//     train steps until the epoch ends or max_steps; log every log_every; stop on a NaN loss
//     end the epoch (flush the mode); time it
//     the leader evaluates, logs the test line and saves a checkpoint (when enabled)
//     barrier
//   the leader saves its final artifacts and writes OUTPUT_DIR/metrics.json (report.h)

#include <nlohmann/json.hpp>

#include <chrono>

#include "common/error.h"
#include "runtime/train/generations.h"
#include "runtime/train/progress_log.h"
#include "runtime/train/train_config.h"
#include "runtime/train/workload.h"

namespace paddle::runtime {

// Raised when the loss becomes NaN or infinite; the message is Paddle's.
class NanLossError : public common::Error {
 public:
  static constexpr int kExitCode = 3;
  NanLossError() : common::Error("got NaN loss, training failed.", kExitCode) {}
};

// Trains `workload` for config.epochs (or config.max_steps); returns the report the leader
// wrote, or an empty object on the other workers. `origin` says which generation of the run
// this is and whether it resumes (its history then continues). The report's wall time counts
// from `started` (before the workload loaded its data).
// Every log_every steps a line goes to `metrics` too, and each epoch's figures, when there is one
// (progress_log.h).
nlohmann::json run_training(const TrainConfig& config, Workload& workload, RunOrigin origin = {},
                            std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now(),
                            ProgressLog* metrics = nullptr);

}  // namespace paddle::runtime
