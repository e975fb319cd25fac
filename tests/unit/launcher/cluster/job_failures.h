#pragma once
// The failures the cluster tests report for a node: a process that ended with a status.

#include <string>

#include "launcher/supervise/job_failure.h"

namespace paddle::launcher::testing {

// Trainer `rank` (local 0) of node `ip` ended with exit code `status`.
inline JobFailure process_failed(int rank, const std::string& ip, int status) {
  JobFailure f;
  f.cause = JobFailure::Cause::kProcessFailed;
  f.node_rank = rank;
  f.ip = ip;
  f.what = "trainer " + std::to_string(rank) + " (local 0) ended with exit code " + std::to_string(status);
  f.exit_status = status;
  return f;
}

}  // namespace paddle::launcher::testing
