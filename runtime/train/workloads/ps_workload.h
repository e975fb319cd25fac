#pragma once
// PsWorkload: a workload whose parameters live in parameter-server tables, trained in the
// strategy's PS mode (distributed/ps_step.h). A worker's run goes through it in the named steps
// of runtime/train/run/ps_run.h:
//
//   SomePsWorkload w(config, fleet);   // loads the data, builds the model
//   PsRun run(config, env, fleet, w);
//   run.connect();                     // fleet.init_worker(w.tables())
//   run_training(config, w, run, ...); // its start() calls w.begin(): worker 0 writes the
//   run.finish();                      //   initial dense values; all wait
//
// A resumed run (servers that loaded ps.init_dir) carries on from ps.start_pass, so the
// shuffles, and with them the losses, are those of an uninterrupted run. Worker 0 writes
// OUTPUT_DIR/dense.json, the final dense table 0, for comparing runs.

#include <memory>
#include <optional>
#include <vector>

#include "ps/table_spec.h"
#include "runtime/distributed/ps_step.h"
#include "runtime/train/workloads/fleet_workload.h"
#include "runtime/train/workloads/worker_progress.h"

namespace paddle::runtime {

class PsWorkload : public FleetWorkload {
 public:
  // The tables the servers keep for this model.
  virtual const ps::TableSpecs& tables() const = 0;
  // Worker 0 writes the initial dense values unless `initialize_dense` is false (the servers
  // loaded them); all wait.
  void begin(bool initialize_dense = true);
  // Restarted in place at `at` (worker_progress.h): the servers kept their tables and the other
  // workers are past begin(), so this one neither writes the dense values nor waits for them.
  void begin_in_place(const WorkerMark& at);
  // Records a mark in `progress` after every step from now on (the launcher restarts workers in
  // place); it outlives the workload's training.
  void keep_progress(WorkerProgress& progress) { progress_ = &progress; }

  std::optional<WorkerMark> resume_at() const override { return resume_; }
  void mark_progress(int64_t round, int64_t trained, int64_t step, bool round_trained) override;

 protected:
  // The evaluation of the round marked last: whether this worker's counts are on the servers, and
  // whether worker 0 has zeroed them again (by this run or, restarted in place, its dead self).
  bool evaluation_counted() const { return last_mark_.counted; }
  bool evaluation_zeroed() const { return last_mark_.zeroed; }
  void note_evaluation_counted();
  void note_evaluation_zeroed();

 public:
  // The servers have this worker's STOP_WORKER: a restart in place has nothing left to do.
  void note_finished();

  CheckpointPosition start() override { return {config_.ps.start_pass, 0}; }
  double communication_seconds() const override { return communication_seconds_; }
  std::optional<double> learning_rate(int64_t step) const override { return config_.lr_schedule.at(step); }
  // Flushes the mode: what async and GEO hold back reaches the servers.
  void end_round() override;
  void save_final(const CheckpointPosition& at) override;

 protected:
  using FleetWorkload::FleetWorkload;
  // Dense table 0 as the model starts.
  virtual std::vector<float> initial_dense() = 0;
  // The tables a training step pulls and pushes: tables(), or the first of its dense tables
  // where the rest are not parameters (ctr_workload.h's AUC counts).
  virtual ps::TableSpecs trained_tables() const { return tables(); }

  // step_'s fetch and apply, timed for communication_seconds().
  PsValues fetch(std::vector<std::vector<uint64_t>> keys);
  void apply(PsValues grads);
  void prefetch(const std::vector<std::vector<uint64_t>>& keys);

  std::unique_ptr<PsStep> step_;  // made by begin()

 private:
  double communication_seconds_ = 0;
  WorkerProgress* progress_ = nullptr;
  std::optional<WorkerMark> resume_;
  // The round being marked: its number, and the batch, step and acknowledged steps it began at
  // in this run (a resumed round begins past its start).
  int64_t marked_round_ = -1, round_first_batch_ = 0, round_first_step_ = 0;
  uint64_t round_first_acknowledged_ = 0;
  WorkerMark last_mark_;  // recorded last (a resumed run's: its dead self's, until it marks)
};

}  // namespace paddle::runtime
