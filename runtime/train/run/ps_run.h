#pragma once
// PsRun: a parameter-server worker's run (or a lone process's, with the tables its own), from
// its start to its end, in named steps. It is the Schedule the one training loop
// (training_loop.h) runs a PsWorkload through, over config.epochs epochs or an online run's
// days x passes (train_config.h OnlineConfig, online_passes.h, PaddleRec's online trainer):
//
//   connect()       connect to the servers (a lone process keeps the tables and loads
//                   ps.init_dir itself); a worker restarted in place by its launcher rejoins the
//                   job's barriers where its dead self left them (worker_progress.h). Before the
//                   loop, and before anything is written: a worker that cannot join leaves no files
//   start()         an online run verifies its saves by their checksums, refusing a damaged one
//                   (it and the saves after it count as not made), and worker 0 has the servers
//                   load the last base and the deltas after it; worker 0 writes the initial dense
//                   values unless the servers loaded them; all wait
//   before_round()  an online pass waits for its data (ps.online.wait_seconds, saying what it
//                   waits for) and loads it (its test_fraction tail held out)
//   (the loop trains the round; the workload's end_round flushes the mode)
//   end_round()     every ps.shrink_every_passes rounds, worker 0 has the servers shrink their
//                   tables, the workers lined up before and after it
//   (the leader evaluates)
//   after_round()   online: worker 0 has the servers save the pass's delta to SAVE_DIR/DAY/PASS,
//                   beside which it writes the pass's figures (figures.json); after a day's last
//                   pass they shrink and save the day's base; then a barrier, so no worker pushes
//                   the next pass into a table being saved
//   finish()        worker 0 has the servers save to ps.save_dir (an online run saved its passes
//                   already); this worker tells the servers it is done
//
// Every worker of an online run reads SAVE_DIR/donefile.txt to find where to start: on several
// hosts ps.save_dir is a directory they share. A resumed online run's history starts with the
// figures of the passes saved, so that it reports the whole run even when no pass is left.

#include <optional>
#include <vector>

#include "common/environment.h"
#include "runtime/distributed/fleet.h"
#include "runtime/train/config/online_passes.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/run/schedule.h"
#include "runtime/train/workloads/ctr_workload.h"
#include "runtime/train/workloads/ps_workload.h"
#include "runtime/train/workloads/worker_progress.h"

namespace paddle::runtime {

class PsRun : public Schedule {
 public:
  // `env` says whether the launcher restarts this worker in place (worker_progress.h).
  PsRun(const TrainConfig& config, const common::Environment& env, Fleet& fleet, PsWorkload& workload);

  // A worker restarted in place whose dead self had finished: says so, and there is nothing to
  // run (the servers may be gone already, once every worker has finished).
  bool finished_before();

  // Throws CannotRejoin (worker_progress.h) for a worker restarted in place that cannot take up
  // its dead self's place.
  void connect();

  size_t round_count() const override { return rounds_.size(); }
  Round round(size_t index) const override { return rounds_.at(index); }
  CheckpointPosition start() override;
  // Throws common::DataError naming the path when an online pass's data is not there in time.
  void before_round(const Round& round) override;
  void end_round(const Round& round) override;
  void after_round(const Round& round, const CheckpointPosition& at, bool complete) override;
  void finish();

 private:
  static constexpr const char* kPassFigures = "figures.json";
  // Where a worker restarted in place takes up (nothing: from the start).
  std::optional<WorkerMark> rejoin();
  // Online: the first pass not saved, once every save to load is verified whole.
  size_t first_pass_to_train();
  // Online: the figures of the first `passes` passes, from their delta directories.
  nlohmann::json saved_figures(size_t passes) const;

  const TrainConfig& config_;
  Fleet& fleet_;
  PsWorkload& workload_;
  CtrWorkload* online_ = nullptr;  // the workload of an online run
  std::optional<WorkerProgress> kept_;
  std::optional<WorkerMark> dead_self_;  // a restarted worker's dead self's last mark, read once
  std::optional<WorkerMark> resume_;     // where connect() found it takes up
  int64_t rounds_ended_ = 0;            // counting those of the run this one resumes
  std::vector<Round> rounds_;
  std::vector<OnlinePass> passes_;  // online: one per round
  std::vector<OnlineSave> saves_;
};

}  // namespace paddle::runtime
