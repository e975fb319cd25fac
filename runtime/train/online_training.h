#pragma once
// Online training: a CTR workload trained pass after pass on streaming data, day by day, as
// PaddleRec's online trainer does (train_config.h OnlineConfig, online_passes.h).
//
//   on start, worker 0 has the servers load the last base and the deltas after it
//   (online_passes.h saves_to_load), and every worker skips the passes they cover
//   for each pass left:
//     wait for the pass's data to arrive (ps.online.wait_seconds, saying what it waits for),
//     load it (its test_fraction tail is held out), train one epoch on it
//     every worker evaluates its share: the AUC and log loss of the job (ctr_workload.h)
//     every ps.shrink_every_passes passes the servers shrink (ps_workload.h end_epoch)
//     worker 0: the servers save a delta to SAVE_DIR/DAY/PASS; after a day's last pass they
//       shrink (on top of the above) and save the day's base
//     barrier: no worker pushes the next pass's gradients into a table being saved
//   worker 0 writes OUTPUT_DIR/metrics.json, one history entry per pass
//
// Every worker reads SAVE_DIR/donefile.txt to find where to start: on several hosts
// ps.save_dir is a directory they share.

#include <chrono>

#include <nlohmann/json.hpp>

#include "runtime/train/ctr_workload.h"
#include "runtime/train/progress_log.h"
#include "runtime/train/train_config.h"

namespace paddle::runtime {

// Trains `workload` (after fleet.init_worker(workload.tables())) through config.ps.online;
// returns the report worker 0 wrote, or an empty object on the other workers.
nlohmann::json run_online_training(const TrainConfig& config, Fleet& fleet, CtrWorkload& workload,
                                   std::chrono::steady_clock::time_point started, ProgressLog* metrics = nullptr);

}  // namespace paddle::runtime
