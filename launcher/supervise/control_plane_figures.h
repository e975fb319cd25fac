#pragma once
// ControlPlaneFigures: what a launcher can say of the job's control plane, for the job page's
// /metrics (launcher/dashboard/job_metrics.h): how many nodes the job has, the rounds in which
// this launcher could not reach the job's store, and the requests the store hosted here has
// served (none where the store is elsewhere).

#include <cstdint>
#include <optional>

namespace paddle::launcher {

struct ControlPlaneFigures {
  int nodes = 1;
  uint64_t heartbeats_missed = 0;
  std::optional<uint64_t> store_requests;
};

}  // namespace paddle::launcher
