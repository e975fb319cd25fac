#pragma once
// `paddle-launch status [LOG_DIR]`: a table of a job's processes from LOG_DIR/job.json (the
// launcher's, job_state.h) and the last line of each one's metrics log: state, pid, restarts,
// step, loss, samples/s and the seconds since its last line. On a terminal it redraws in place
// every second until the job ends; otherwise it prints once. Works for a running job and for a
// finished one (its last state).

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace paddle::launcher {

// The table for the job state `job` (job.json's content), as it is at `now` (Unix seconds).
std::string status_table(const nlohmann::json& job, double now);

// Runs the command; returns its exit status: 0, or 2 (common::UsageError) when LOG_DIR holds
// no job.json.
int run_status_command(int argc, const char* const argv[]);

}  // namespace paddle::launcher
