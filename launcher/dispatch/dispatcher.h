#pragma once
// Dispatcher: starts a job on every host of a DispatchPlan over SSH, watches it and stops it:
// Paddle's old cluster_train, as one command that returns the job's status.
//
//  1. Preflight: every host at once, ssh in BatchMode with a connect timeout, runs the remote
//     launcher's --version (and checks rsync, or the workspace). Each failing host is reported
//     with ssh's own reason, and nothing starts anywhere.
//  2. Copy (--job_dispatch_package): rsync over the same ssh to every host at once.
//  3. Start: one ssh session per host runs the node agent (node_agent.h); the environment goes
//     down its stdin, followed by a newline every 2 s so the agent knows the dispatcher lives.
//  4. Watch: node 0's console is echoed live, each line prefixed "[host] "; every node's console
//     is kept in LOG_DIR/dispatch/HOST.log. The job's failures, restarts and root-cause report
//     are the agents' (the multi-node launcher's); node 0 prints the report.
//  5. Stop: SIGINT/SIGTERM close every agent's stdin, and each agent stops its processes (TERM,
//     grace, KILL, by process group); the dispatcher exits 130/143. A SIGKILLed dispatcher or a
//     dropped connection closes or silences the stdin too.
//  6. --fetch_logs: every host's log dir is copied back to LOG_DIR/HOST/, on success or failure.
//
// The exit status is node 0's (the job's), else the first failing host's; 255 when a host
// cannot be reached (ssh's own convention).

#include <chrono>

#include "launcher/console/launch_log.h"
#include "launcher/dispatch/dispatch_plan.h"
#include "launcher/supervise/stop_signals.h"

namespace paddle::launcher {

inline constexpr int kExitHostUnreachable = 255;

// Runs the job; returns the dispatcher's exit status. LOG_DIR/dispatch must exist. Throws common::Error (exit 255 for an
// unreachable host) when preflight or the copy fails, before any agent has started. `signals`
// stop it (5. above).
int dispatch_job(const DispatchPlan& plan, const EnvMap& env, std::chrono::milliseconds grace_period, StopSignals& signals,
                 LaunchLog& log);

}  // namespace paddle::launcher
