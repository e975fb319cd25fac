#include "launcher/plan/exec_limits.h"

#include <fmt/format.h>

#include "common/error.h"

namespace paddle::launcher {

void check_exec_limits(const LaunchPlan& plan) {
  for (const auto& process : plan.processes)
    for (const auto& [name, value] : process.env) {
      const size_t size = name.size() + 1 + value.size() + 1;
      if (size <= kMaxEnvironmentString) continue;
      throw common::UsageError(fmt::format(
          "{}: {} bytes for {} {} (local {}), past the {} Linux allows one environment variable "
          "(MAX_ARG_STRLEN): exec would fail with E2BIG, as it would under Paddle's launcher",
          name, size, role_name(process.role), process.rank, process.local_index, kMaxEnvironmentString));
    }
}

}  // namespace paddle::launcher
