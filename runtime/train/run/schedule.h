#pragma once
// Schedule: the rounds the training loop (training_loop.h) trains, and what happens around
// each. A round is an epoch, or one pass of an online day (ps_run.h); the loop owns everything
// inside a round (steps, log lines, metrics, the NaN guard, max_steps, evaluation) and the run's
// generations and report, the schedule only its rounds and their hooks:
//
//   start()          once, on every worker: resumes what the schedule keeps, says where it starts
//   before_round()   every worker: an online pass waits for its data and loads it
//   (the loop trains the round and the workload flushes its mode)
//   end_round()      every worker, before the evaluation: a PS run's periodic shrink
//   (the loop evaluates and logs the round)
//   after_round()    every worker: the leader saves what the schedule keeps (a checkpoint, a
//                    pass's delta and the day's base); the workers line up where saves need it

#include <cstdint>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/nn/checkpoint.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/workloads/workload.h"

namespace paddle::runtime {

struct Round {
  int64_t index = 0;  // the epoch the workload begins (its shuffle); online, the pass over all days
  std::string name;   // how click-rate log lines name it: "pass: 3", or "day: 20261101 pass: 2"
  nlohmann::json labels = nlohmann::json::object();  // history fields beside "epoch" (online: day, pass)
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // The run's rounds, in order: round(0) to round(round_count() - 1); it trains those from
  // start().rounds on. Made when asked: an epoch schedule may be long.
  virtual size_t round_count() const = 0;
  virtual Round round(size_t index) const = 0;
  // Where the run starts: a resumed run's completed rounds and steps.
  virtual CheckpointPosition start() = 0;
  virtual void before_round(const Round&) {}
  virtual void end_round(const Round&) {}
  // `at` counts the round when `complete`; a round cut short by max_steps is not.
  virtual void after_round(const Round&, const CheckpointPosition& at, bool complete) = 0;
};

// config.epochs epochs of a collective `workload`, resumed from its checkpoint; the leader saves
// one after each completed epoch when config.checkpoint is on. (A PS worker's run is ps_run.h's.)
class EpochSchedule : public Schedule {
 public:
  EpochSchedule(const TrainConfig& config, Workload& workload);

  size_t round_count() const override { return static_cast<size_t>(config_.epochs); }
  Round round(size_t index) const override;
  CheckpointPosition start() override { return workload_.start(); }
  void after_round(const Round&, const CheckpointPosition& at, bool complete) override;

 private:
  const TrainConfig& config_;
  Workload& workload_;
};

}  // namespace paddle::runtime
