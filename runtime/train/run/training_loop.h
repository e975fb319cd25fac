#pragma once
// The one training loop of the `train` program, for every model, mode and schedule (workload.h,
// schedule.h: epochs, or a PS run's epochs or online days x passes, ps_run.h):
//
//   the schedule says where the run starts; the leader records this generation (generations.h)
//   for each round from there:
//     the schedule's before_round (an online pass waits for its data)
//     train steps until the round ends or max_steps; log every log_every; stop on a NaN loss
//     end the round (flush the mode; the schedule's end_round: a PS run's shrink); time it
//     the leader evaluates (every worker, where the workload evaluates together) and logs it
//     the schedule's after_round (a checkpoint, or an online pass's saves); barrier
//   the leader saves its final artifacts and writes OUTPUT_DIR/metrics.json (report.h)

#include <nlohmann/json.hpp>

#include <chrono>

#include "common/error.h"
#include "runtime/train/run/generations.h"
#include "runtime/train/run/progress_log.h"
#include "runtime/train/run/schedule.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/workloads/workload.h"

namespace paddle::runtime {

// Raised when the loss becomes NaN or infinite; the message is Paddle's.
class NanLossError : public common::Error {
 public:
  static constexpr int kExitCode = 3;
  NanLossError() : common::Error("got NaN loss, training failed.", kExitCode) {}
};

// Trains `workload` through `schedule`'s rounds (or until config.max_steps); returns the report
// the leader wrote, or an empty object on the other workers. `origin` says which generation of
// the run this is and whether it resumes (its history then continues; a schedule that starts
// past its first round resumes too). The report's wall time counts from `started` (before the
// workload loaded its data). Every log_every steps a line goes to `metrics` too, and each
// round's figures, when there is one (progress_log.h).
nlohmann::json run_training(const TrainConfig& config, Workload& workload, Schedule& schedule, RunOrigin origin,
                            std::chrono::steady_clock::time_point started, ProgressLog* metrics);

// The same over config.epochs epochs (schedule.h EpochSchedule).
nlohmann::json run_training(const TrainConfig& config, Workload& workload, RunOrigin origin = {},
                            std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now(),
                            ProgressLog* metrics = nullptr);

}  // namespace paddle::runtime
