#pragma once
// Supervisor: starts the plan's processes and watches them until the job ends.
//
//  - Collective: all exit 0 -> 0. PS: when every local worker exits 0 the servers are stopped
//    and the job succeeds; a node with only servers waits for them.
//  - The first failure stops the rest (SIGTERM to each process group, SIGKILL after the grace
//    period), is reported with its role, rank, status, log file and last lines, and its status
//    becomes the launcher's (128 + signal for a signal).
//  - With max_restarts > 0 a failed attempt is stopped and started again, keeping the earlier
//    logs as LOG.attemptK, with PADDLE_RESTART_COUNT set to the attempt number.
//  - SIGINT/SIGTERM stop everything the same way and give 130/143; a second signal kills at once.

#include <chrono>

#include "launcher/environment.h"
#include "launcher/launch_log.h"
#include "launcher/launch_plan.h"

namespace paddle::launcher {

struct SupervisorOptions {
  int max_restarts = 0;
  std::chrono::milliseconds grace_period{5000};
  std::chrono::milliseconds echo_interval{100};
};

// Runs the job; returns the launcher's exit status.
int supervise(const LaunchPlan& plan, const EnvMap& launcher_env, const SupervisorOptions& options, LaunchLog& log);

}  // namespace paddle::launcher
