#pragma once
// --elastic_pre_hook: a shell command run before each start of this node's processes (the first
// start and every job-wide restart), as Paddle's elastic launcher runs its pre_hook: to fetch a
// checkpoint, clean a scratch directory, check a device. Its output goes to LOG_DIR/prehook.log.
// A hook that fails is a warning, not the job's end, as in Paddle; a signal ends the wait.

#include <optional>
#include <stop_token>
#include <string>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

// The hook's wait status; nothing when `stop` was requested first (the hook is then killed).
// Throws common::Error when the shell cannot be started or the log file opened.
std::optional<int> run_pre_start_hook(const std::string& command, const std::string& log_file, const EnvMap& env,
                                      const std::stop_token& stop);

}  // namespace paddle::launcher
