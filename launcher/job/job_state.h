#pragma once
// JobState: what the launcher knows of its job while it runs, kept in LOG_DIR/job.json for
// `paddle-launch status` and the job page to read: the job's state, and each local process's
// role, rank, pid, state and files. The supervisor rewrites it (atomically) whenever something
// changes: an attempt starts, a process ends, the job ends.
//
//   {"launcher_pid": 4100, "mode": "collective", "node_rank": 0, "node_count": 1,
//    "command": ["train", "--config", "..."], "started": 1763900000.5,
//    "state": "running" | "succeeded" | "failed" | "stopped", "exit_status": null,
//    "restarts": 0, "worker_restarts": 0, "root_cause": "", "hang": "" (the hang's verdict, while it holds),
//    "processes": [{"role": "trainer", "rank": 0, "local_index": 0, "endpoint": "127.0.0.1:6170",
//                   "pid": 4101, "state": "running" | "restarting" | "succeeded" | "failed" | "stopped",
//                   "ended": "exit code 0", "restarts_in_place": 0, "log_file": "/abs/log/workerlog.0",
//                   "error_file": "...", "metrics_file": "...", "progress_file": "...",
//                   "straggler": 2.4 | null}]}     (absolute paths)

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

struct ProcessState {
  const ProcessSpec* spec = nullptr;
  long pid = -1;
  std::string state = "starting";
  std::string ended;  // how it ended, when it has
  int restarts_in_place = 0;  // a PS worker restarted alone (--ps_worker_restarts)
  // A straggler's busy time per step over the job's median, while it is flagged (straggler_watch.h).
  std::optional<double> straggler;
};

class JobState {
 public:
  JobState(const LaunchPlan& plan, long launcher_pid);

  // A new attempt (0, then one per restart): every process starting again.
  void begin_attempt(int attempt);
  ProcessState& process(size_t index) { return processes_[index]; }
  void finish(const std::string& state, int exit_status, const std::string& root_cause);
  // The PS workers restarted alone so far, over the whole run (across attempts).
  void set_worker_restarts(int total) { worker_restarts_ = total; }
  // A hang's verdict (supervise/hang_report.h), naming the culprit; job.json's "hang".
  // Empty again once every process moves.
  void set_hang(std::string verdict) { hang_ = std::move(verdict); }
  const std::string& hang() const { return hang_; }

  nlohmann::json to_json() const;
  // Writes LOG_DIR/job.json; a failure to write is not the job's failure, so it only returns false.
  // While the job runs the file is replaced whole at each change without waiting for the disk
  // (hundreds of launchers of one machine's job would queue on it); the job's end, which
  // `paddle-launch status` reads afterwards, is written to survive a power loss.
  bool save(common::Durability durability = common::Durability::kReadersOnly) const;
  // What a reader (the status command, the job page) finds in LOG_DIR/job.json: nothing when the
  // file is absent or is not a job state (not written yet, or from something else).
  static std::optional<nlohmann::json> read(const std::string& log_dir);

 private:
  const LaunchPlan& plan_;
  long launcher_pid_;
  double started_;
  int restarts_ = 0;
  int worker_restarts_ = 0;
  std::string hang_;
  std::string state_ = "running";
  std::optional<int> exit_status_;
  std::string root_cause_;
  std::vector<ProcessState> processes_;
};

}  // namespace paddle::launcher
