#include "launcher/supervise/worker_restart_policy.h"

#include <sys/wait.h>

#include <fmt/format.h>

#include "common/error.h"
#include "launcher/supervise/child_process.h"

namespace paddle::launcher {

WorkerRestartVerdict judge_worker_failure(const std::string& who, int wait_status, int used, int budget,
                                          int restarts_in_job, bool servers_ended) {
  const std::string how = describe_wait_status(wait_status);
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == common::kExitCannotRejoin)
    return {false, fmt::format("{} ended with {}: restarted in place, it cannot take up its part alone (its log "
                               "says why); the job stops as for any failure", who, how)};
  if (servers_ended)
    return {false, fmt::format("{} ended with {} after the servers had ended (every worker had said it was done); "
                               "it is not restarted", who, how)};
  if (used >= budget)
    return {false, fmt::format("{} ended with {} after {} restart(s) in place, all that --ps_worker_restarts={} "
                               "allows; its failure ends the job", who, how, used, budget)};
  return {true, fmt::format("{} ended with {}; restarting it alone: restart {} of {} in place (--ps_worker_restarts), "
                            "{} in this job so far. The servers keep their tables and the other workers go on",
                            who, how, used + 1, budget, restarts_in_job + 1)};
}

}  // namespace paddle::launcher
