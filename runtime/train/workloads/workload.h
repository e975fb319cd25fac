#pragma once
// Workload: what the training loop (training_loop.h) drives for one worker: a model, its data,
// and the step object of its mode, which decides how a batch's gradients reach the parameters
// (collective_workload.h averages them over the ranks; ctr_workload.h hands them to a PS step
// of ps_step.h: sync, async or GEO). The loop owns everything the modes share: rounds, steps,
// timing, the log lines, the NaN guard, evaluation, checkpoints and the report.

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/progress_page.h"
#include "runtime/distributed/test_fault.h"
#include "runtime/nn/checkpoint.h"
#include "runtime/train/workloads/worker_progress.h"

namespace paddle::runtime {

// The log lines a workload's users expect, after Paddle's examples:
//   kClassifier  "[Epoch E, batch B] loss: L, acc1: A, acc5: A" every log_every batches of an
//                epoch, "[Epoch E] test_loss: L, test_acc1: A, test_acc5: A" after it;
//   kRegression  "step S, loss: [L]" every log_every steps, "[Epoch E] test_loss: L, test_rmse: R";
//   kClickRate   "TRAIN ---> ROUND loss: L" every log_every steps, "TEST ---> ROUND auc: A loss: L"
//                (with " samples: N" where the evaluation is the job's), ROUND being the schedule's
//                name of it: "pass: E", or an online run's "day: D pass: P" (schedule.h).
enum class LogStyle { kClassifier, kRegression, kClickRate };

struct TopAccuracy {
  double top1 = 0, top5 = 0;
};

struct StepResult {
  double loss = 0;  // this worker's batch
  // Classifiers: the batch's accuracy, computed only for the steps that are logged (it reads
  // the output back from the device).
  std::function<TopAccuracy()> accuracy;
};

// A test-set evaluation (by the leader): the loss and the metrics the task has.
struct Evaluation {
  double loss = 0;
  std::optional<double> acc1, acc5, rmse, baseline_rmse, auc;
  std::optional<double> samples;  // where the evaluation is the job's: the test samples of every worker
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual LogStyle log_style() const = 0;
  // Printed once before training: the model, where it runs, the data.
  virtual std::string describe() const = 0;
  // The report's identity: {"model", "dataset", "device", ...}.
  virtual nlohmann::json identity() const = 0;
  virtual int worker_index() const = 0;
  virtual int worker_num() const = 0;
  // Samples one step trains on over all workers.
  virtual size_t global_batch() const = 0;

  // Where training starts: a resumed run's completed rounds and steps.
  virtual CheckpointPosition start() = 0;
  virtual void begin_round(int64_t round) = 0;
  // Trains on this worker's next batch of the round (`step` counts steps before it, for the
  // learning rate); nothing when the round has no more.
  virtual std::optional<StepResult> train_step(int64_t step) = 0;
  // The mean of a loss over the workers, where the mode has a cheap way to it (collective);
  // otherwise this worker's own.
  virtual double mean_over_workers(double loss) { return loss; }
  // Every worker's `value` in worker order, where the mode has a cheap way to them (collective:
  // one allgather); otherwise this worker's alone. Every worker calls it at the same step.
  virtual std::vector<float> gather_over_workers(float value) { return {value}; }
  // Sends what the mode still holds (async queues, GEO deltas) so the parameters are final.
  virtual void end_round() {}
  // The leader's evaluation on the test set; with evaluates_together(), every worker calls it
  // (each evaluates its share and the shares are summed) and the leader reports the job's.
  virtual Evaluation evaluate() = 0;
  virtual bool evaluates_together() const { return false; }
  // The leader saves a resumable checkpoint after a completed round (when the mode keeps them).
  virtual void save_checkpoint(const CheckpointPosition&) {}
  // The leader writes its final artifacts (final.bin, dense.json) beside the report.
  virtual void save_final(const CheckpointPosition&) {}
  // Lines the workers up after each round, where the mode needs it.
  virtual void barrier() {}
  // Seconds spent so far in communication the step could not hide: waiting for averaged
  // gradients, or pulling and pushing on the parameter servers. For the metrics log.
  virtual double communication_seconds() const { return 0; }
  // The learning rate of `step`, where the workload knows it.
  virtual std::optional<double> learning_rate(int64_t) const { return std::nullopt; }

  // A worker restarted in place (worker_progress.h): the round, batch and step its run takes up
  // at, past the schedule's start; nothing for a run from the start. Asked once, before training.
  virtual std::optional<WorkerMark> resume_at() const { return std::nullopt; }
  // Leaves out the first `n` batches of the round begun last (begin_round): a resumed round's,
  // trained before the restart.
  virtual void skip_batches(int64_t n) {
    if (n != 0) throw std::logic_error("this workload cannot skip batches of a round");
  }
  // Where the run is: `trained` batches of round `round` done, the global step after them, and
  // whether the round's training is over. After every step and at a round's end, for a workload
  // that keeps its progress.
  virtual void mark_progress(int64_t /*round*/, int64_t /*trained*/, int64_t /*step*/, bool /*round_trained*/) {}

  // Where this worker says what it does, for its launcher (common/progress_page.h): the workload
  // marks its data loading, pulls and pushes (the collectives mark themselves); the loop marks
  // steps, evaluations and saves.
  virtual common::ProgressPage& progress() = 0;
  // A test's fault for this worker (runtime/distributed/test_fault.h); none in a real job.
  virtual const TestFault& test_fault() const = 0;
  // The factor past which a worker is a straggler (straggler_window.h); 0: not judged.
  virtual double straggler_factor() const { return 0; }
  // The kernels chosen so far between two that could run, each with why
  // (kernels::Context::kernel_choices); the run prints each once.
  virtual std::vector<std::string> kernel_choices() const { return {}; }
};

}  // namespace paddle::runtime
