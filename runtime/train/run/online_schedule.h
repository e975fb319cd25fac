#pragma once
// OnlineSchedule: a CTR workload trained pass after pass on streaming data, day by day, as
// PaddleRec's online trainer does (train_config.h OnlineConfig, online_passes.h). The one
// training loop (training_loop.h) trains each pass as a round; this schedule adds:
//
//   start: every worker verifies the saves to load by their checksums, refusing a damaged one
//     (it and the saves after it count as not made); worker 0 has the servers load the last base
//     and the deltas after it (online_passes.h saves_to_load), and every worker skips the
//     passes they cover
//   before each pass: wait for its data to arrive (ps.online.wait_seconds, saying what it
//     waits for), and load it (its test_fraction tail is held out)
//   after each pass: worker 0 has the servers save a delta to SAVE_DIR/DAY/PASS, beside which
//     it writes the pass's figures (metrics.json's history entry) as figures.json; after a
//     day's last pass they shrink (besides ps.shrink_every_passes) and save the day's base;
//     then a barrier, so no worker pushes the next pass's gradients into a table being saved
//
// Every worker reads SAVE_DIR/donefile.txt to find where to start: on several hosts
// ps.save_dir is a directory they share. A resumed run's history starts with the figures of the
// passes saved, so that it reports the whole run even when no pass is left to train.

#include <vector>

#include "runtime/train/workloads/ctr_workload.h"
#include "runtime/train/config/online_passes.h"
#include "runtime/train/run/schedule.h"
#include "runtime/train/config/train_config.h"

namespace paddle::runtime {

// Used after fleet.init_worker(workload.tables()); start() begins the workload.
class OnlineSchedule : public Schedule {
 public:
  OnlineSchedule(const TrainConfig& config, Fleet& fleet, CtrWorkload& workload);

  size_t round_count() const override { return rounds_.size(); }
  Round round(size_t index) const override { return rounds_.at(index); }
  CheckpointPosition start() override;
  // Throws common::DataError naming the path when the pass's data is not there in time.
  void before_round(const Round& round) override;
  void after_round(const Round& round, const CheckpointPosition& at, bool complete) override;

 private:
  static constexpr const char* kPassFigures = "figures.json";
  // The first pass not saved, once every save to load is verified whole (ps/table/checkpoint.h):
  // a damaged one is refused, and it and the saves after it count as not made. Every worker
  // verifies the same files in the shared save directory, so all start at the same pass.
  size_t first_pass_to_train();
  // The figures of the first `passes` passes, from their delta directories.
  nlohmann::json saved_figures(size_t passes) const;

  const TrainConfig& config_;
  Fleet& fleet_;
  CtrWorkload& workload_;
  std::vector<OnlinePass> passes_;
  std::vector<Round> rounds_;  // one per pass
  std::vector<OnlineSave> saves_;
};

}  // namespace paddle::runtime
