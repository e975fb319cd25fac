#pragma once
// ProcessSlot: one process of an attempt as the supervisor keeps it: the plan's spec and, once
// started, the child, its wait status and how it was stopped.

#include <sys/wait.h>

#include <memory>
#include <optional>

#include "launcher/plan/launch_plan.h"
#include "launcher/supervise/child_process.h"

namespace paddle::launcher {

struct ProcessSlot {
  const ProcessSpec* spec;
  std::unique_ptr<ChildProcess> child;
  std::optional<int> status;
  int exit_order = -1;
  int signal_sent = 0;  // by a stop: an end by that signal is not a failure of its own
};

inline bool succeeded(int wait_status) { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

}  // namespace paddle::launcher
