#pragma once
// ProcessSlot: one process of an attempt as the supervisor keeps it: the plan's spec and, once
// started, the child, its wait status and how it was stopped. A stop (stop_policy.h) signals it
// through its process group and remembers the signal.

#include <sys/wait.h>

#include <csignal>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "launcher/plan/launch_plan.h"
#include "launcher/supervise/child_process.h"
#include "launcher/supervise/process_signs.h"
#include "launcher/supervise/stop_policy.h"

namespace paddle::launcher {

struct ProcessSlot : StoppableProcess {
  explicit ProcessSlot(const ProcessSpec* spec) : spec(spec) {}

  const ProcessSpec* spec;
  std::unique_ptr<ChildProcess> child;
  std::optional<int> status;
  int exit_order = -1;
  int signal_sent = 0;  // by a stop: an end by that signal is not a failure of its own
  int restarts_in_place = 0;  // a PS worker's, within --ps_worker_restarts

  bool running() const override { return child && !child->exited(); }
  void signal_group(int sig) override {
    child->signal_group(sig);
    signal_sent = sig;
  }
  std::string name() const override {
    return fmt::format("{} {} (local {}, pid {})", role_name(spec->role), spec->rank, spec->local_index,
                       child ? child->pid() : -1);
  }
  std::string state() const override { return child ? describe_live_state(child->pid()) : ""; }
  void abandon() override {
    if (child) child->abandon(W_EXITCODE(0, SIGKILL));
  }
};

inline bool succeeded(int wait_status) { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

}  // namespace paddle::launcher
