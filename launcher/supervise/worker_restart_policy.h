#pragma once
// Whether a parameter-server worker that failed is restarted alone, in place
// (--ps_worker_restarts), and the launcher's line saying what happens to it. The supervisor asks
// for every worker that fails while the job runs; a verdict against a restart leaves the failure
// to stop the job (or restart it whole, within --max_restarts) as any other.
//
//   it exited 75 (kExitCannotRejoin)   no: restarted in place, it could not take up its part
//   the servers have ended              no: they end once every worker said it was done
//   its restarts are spent              no, naming the count
//   otherwise                           yes: restart used + 1 of the budget

#include <string>

namespace paddle::launcher {

struct WorkerRestartVerdict {
  bool restart = false;
  std::string line;  // a warning when it restarts, else an error
};

// `who` names the worker ("worker 2 (local 2, pid 4242)"); `wait_status` is its end; `used` its
// restarts in place so far, of `budget`; `restarts_in_job` the job's so far, this one not counted.
WorkerRestartVerdict judge_worker_failure(const std::string& who, int wait_status, int used, int budget,
                                          int restarts_in_job, bool servers_ended);

}  // namespace paddle::launcher
