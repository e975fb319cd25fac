#pragma once
// PsWorkload: a workload whose parameters live in parameter-server tables, trained in the
// strategy's PS mode (distributed/ps_step.h). The order of a worker's calls:
//
//   SomePsWorkload w(config, fleet);   // loads the data, builds the model
//   fleet.init_worker(w.tables());
//   w.begin();                         // worker 0 writes the initial dense values; all wait
//   run_training(config, w);
//
// A resumed run (servers that loaded ps.init_dir) carries on from ps.start_pass, so the
// shuffles, and with them the losses, are those of an uninterrupted run. Worker 0 writes
// OUTPUT_DIR/dense.json, the final dense table 0, for comparing runs. With
// ps.shrink_every_passes, the servers shrink their tables after every that many passes.

#include <memory>
#include <optional>
#include <vector>

#include "ps/table_spec.h"
#include "runtime/distributed/ps_step.h"
#include "runtime/train/fleet_workload.h"

namespace paddle::runtime {

class PsWorkload : public FleetWorkload {
 public:
  // The tables the servers keep for this model.
  virtual const ps::TableSpecs& tables() const = 0;
  // Worker 0 writes the initial dense values unless `initialize_dense` is false (the servers
  // loaded them); all wait. `passes_done`: the passes the tables have seen (default
  // ps.start_pass), which ps.shrink_every_passes counts on from.
  void begin(bool initialize_dense = true, std::optional<int64_t> passes_done = std::nullopt);

  CheckpointPosition start() override { return {config_.ps.start_pass, 0}; }
  double communication_seconds() const override { return communication_seconds_; }
  std::optional<double> learning_rate(int64_t step) const override { return config_.lr_schedule.at(step); }
  // Flushes the mode; every ps.shrink_every_passes passes, worker 0 then has the servers shrink
  // their tables, the workers lined up before and after it.
  void end_epoch() override;
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
  int64_t passes_ended_ = 0;       // counting those of the run this one resumes

 private:
  double communication_seconds_ = 0;
};

}  // namespace paddle::runtime
