#pragma once
// EchoSelection: which local processes' output the console shows while the job runs, from
// --log_output, and how each line is labelled (--log_output_prefix).
//
//   --log_output=0           the default: the first local trainer or worker, as Paddle's launcher
//   --log_output=all         every local process
//   --log_output=0,3,server0 trainers/workers by global rank, servers (and heterN, a ps-heter
//                            job's heter workers) by index
//
// A label names the process, and its node in a multi-node job: "[trainer 3] ",
// "[node 1 worker 5] ", "[server 0] ".

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

struct EchoSelection {
  bool all = false;
  bool given = false;  // --log_output was set; otherwise the plan's echoed_process()
  std::set<int> ranks;
  std::set<int> servers;
  std::set<int> heters;
  // "auto": labelled when more than one process is shown, or when other nodes' launchers write
  // to the same console (srun and mpirun merge every node's output); "true"/"false".
  std::string prefix = "auto";
  bool shared_console = false;

  // Throws common::UsageError naming --log_output or --log_output_prefix.
  static EchoSelection parse(const std::optional<std::string>& log_output, const std::string& prefix);

  // The local processes of `plan` to show, in the plan's order.
  std::vector<const ProcessSpec*> pick(const LaunchPlan& plan) const;
  // The label of each line of `process` ("" when lines go out as they are).
  std::string label(const LaunchPlan& plan, const ProcessSpec& process, size_t shown) const;
};

}  // namespace paddle::launcher
