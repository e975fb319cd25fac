#include "launcher/supervise/job_restart_policy.h"

#include <fmt/format.h>

namespace paddle::launcher {

JobRestartVerdict judge_job_failure(const JobFailure& root, int used, int budget, bool hang_stops,
                                    const std::string& what_restarts, int generation) {
  const int status = root.exit_status;
  if (root.cause == JobFailure::Cause::kProcessHung && hang_stops)
    return {false, fmt::format("not restarting: the job hung (--on_hang=stop; {}); exit status {}", root.what, status)};
  if (root.stops_job() && used < budget)
    return {false, fmt::format("not restarting: a restart cannot mend this ({}); exit status {}", root.what, status)};
  if (used >= budget)
    return {false, budget > 0 ? fmt::format("giving up after {} restart(s); exit status {}", budget, status) : ""};
  if (root.stops_job()) return {false, ""};
  return {true, fmt::format("restarting {}: restart {} of {} (PADDLE_RESTART_COUNT={})", what_restarts, used + 1, budget,
                            generation)};
}

}  // namespace paddle::launcher
