#pragma once
// The job page's GET /metrics: what this node's job.json and each process's metrics log say now
// (runtime/train/run/metrics_log.h), and the launcher's control-plane figures, as Prometheus families
// (prometheus_text.h). Every sample is labelled job (--job_id) and node (its rank); a process's
// also role and rank, and a server table's also table:
//
//   paddle_step, paddle_samples_per_second, paddle_loss, paddle_learning_rate,
//   paddle_communication_seconds_per_step          a process's last logged step
//   paddle_process_state{state="running"}          1 for its state, 0 for the others
//   paddle_seconds_since_progress, paddle_step_seconds
//                                                  from its progress page (our runtime's processes)
//   paddle_straggler                               1 while it is flagged a straggler, else 0
//   paddle_job_hung                                1 while a hang's verdict holds, else 0
//   paddle_job_generation, paddle_job_restarts_total
//   paddle_server_table_rows, paddle_server_table_bytes,
//   paddle_server_tier_hit_ratio, paddle_server_tier_disk_reads_per_second
//   paddle_launch_nodes, paddle_launch_heartbeats_missed_total,
//   paddle_launch_store_requests_total             (the master's node only)

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/progress_page.h"
#include "launcher/supervise/control_plane_figures.h"

namespace paddle::launcher {

// `job`: job.json (null before the launcher writes it: only the launcher's families then);
// `last_lines`: each process's last metrics line, in job.json's order (null where it has none);
// `pages`: each process's progress page, in the same order, read at `now_ns` (CLOCK_MONOTONIC).
std::string job_metrics(const std::string& job_id, const nlohmann::json& job, const std::vector<nlohmann::json>& last_lines,
                        const ControlPlaneFigures& launcher,
                        const std::vector<std::optional<common::ProgressReading>>& pages = {}, int64_t now_ns = 0);

}  // namespace paddle::launcher
